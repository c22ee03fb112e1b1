"""Public jax.experimental: io_callback, cur_qdd (a mutable hijax value's quasi-dynamic
data), and the checkify submodule. Re-exports only."""
from pyjax._src.core.hijax import cur_qdd  # noqa: F401
from pyjax._src.lax.callbacks import io_callback  # noqa: F401
from pyjax.experimental import checkify  # noqa: F401
