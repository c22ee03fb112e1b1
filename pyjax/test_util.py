"""Public jax.test_util: numerical derivative checks. Re-exports only."""
from pyjax._src.test_util import check_grads, check_jvp, check_vjp  # noqa: F401
