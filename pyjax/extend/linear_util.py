"""Public jax.extend.linear_util: wrapped functions (wrap_init, WrappedFun). Re-exports only."""
from pyjax._src.extend.linear_util import Store, WrappedFun, wrap_init  # noqa: F401
