"""Public jax.experimental: io_callback. Re-exports only."""
from pyjax._src.lax.callbacks import io_callback  # noqa: F401
