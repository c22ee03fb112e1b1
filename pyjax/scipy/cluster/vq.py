"""Public jax.scipy.cluster.vq. Re-exports only; the code lives in pyjax._src.scipy."""
from pyjax._src.scipy.cluster import vq  # noqa: F401
