"""Public jax.experimental: io_callback, and the checkify submodule. Re-exports only."""
from pyjax._src.lax.callbacks import io_callback  # noqa: F401
from pyjax.experimental import checkify  # noqa: F401
