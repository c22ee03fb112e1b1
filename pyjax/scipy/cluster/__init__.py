"""Public jax.scipy.cluster. Re-exports only."""
from pyjax.scipy.cluster import vq  # noqa: F401
