"""Public jax.experimental.sparse.linalg: spsolve and LOBPCG. Re-exports only (with the
two jitted forms JAX's own tests call)."""
from pyjax._src.sparse.linalg import (  # noqa: F401
    _lobpcg_standard_callable, _lobpcg_standard_matrix, lobpcg_standard, spsolve, spsolve_p,
)
