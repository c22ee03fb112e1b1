"""Public jax.flatten_util. Re-exports only; the code lives in pyjax._src.flatten_util."""
from pyjax._src.flatten_util import ravel_pytree  # noqa: F401
