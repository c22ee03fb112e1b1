"""Public jax.experimental.sparse: the BCOO sparse matrix, its product with dense arrays,
and LOBPCG (`linalg`). Re-exports only."""
from pyjax._src.sparse.bcoo import BCOO, bcoo_dot_general  # noqa: F401
from pyjax.experimental.sparse import bcoo, linalg  # noqa: F401
