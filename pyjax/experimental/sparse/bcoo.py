"""Public jax.experimental.sparse.bcoo: the BCOO matrix and its product with dense
arrays. Re-exports only."""
from pyjax._src.sparse.bcoo import BCOO, bcoo_dot_general  # noqa: F401
