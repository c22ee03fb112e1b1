"""Public jax.experimental.sparse.ad: sparse-aware autodiff. Re-exports only."""
from pyjax._src.sparse.ad import (  # noqa: F401
    flatten_fun_for_sparse_ad, grad, is_sparse, jacfwd, jacobian, jacrev, value_and_grad,
)
