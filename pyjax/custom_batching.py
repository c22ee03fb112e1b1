"""Public jax.custom_batching. Re-exports only; the code lives in
pyjax._src.api.custom_batching."""
from pyjax._src.api.custom_batching import custom_vmap, sequential_vmap  # noqa: F401
