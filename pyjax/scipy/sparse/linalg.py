"""Public jax.scipy.sparse.linalg. Re-exports only; the code lives in
pyjax._src.scipy.sparse_linalg."""
from pyjax._src.scipy.sparse_linalg import bicgstab, cg, gmres  # noqa: F401
