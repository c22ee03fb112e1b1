"""jax._src.dispatch: waiting until the side effects of dispatched computations are done."""
from pyjax._src.lax.callbacks import effects_barrier as wait_for_tokens  # noqa: F401
