"""Public jax.experimental.sparse.api: todense, empty and eye. Re-exports only."""
from pyjax._src.sparse.api import empty, eye, todense, todense_p  # noqa: F401
