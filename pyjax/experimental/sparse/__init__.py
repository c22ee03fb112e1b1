"""Public jax.experimental.sparse: the BCOO sparse matrix. Re-exports only."""
from pyjax._src.sparse.bcoo import BCOO  # noqa: F401
