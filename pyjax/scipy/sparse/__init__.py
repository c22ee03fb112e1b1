"""Public jax.scipy.sparse: only its linalg submodule, the iterative solvers."""
from pyjax.scipy.sparse import linalg  # noqa: F401
