"""Public jax.scipy.ndimage. Re-exports only; the code lives in pyjax._src.scipy.ndimage."""
from pyjax._src.scipy.ndimage import map_coordinates  # noqa: F401
