"""jax.distributed: several processes as one program."""
from pyjax._src.backends.distributed import initialize, is_initialized, shutdown  # noqa: F401
