"""Public jax.scipy.interpolate. Re-exports only; the code lives in
pyjax._src.scipy.interpolate."""
from pyjax._src.scipy.interpolate import RegularGridInterpolator  # noqa: F401
