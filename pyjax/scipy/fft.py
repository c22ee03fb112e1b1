"""Public jax.scipy.fft. Re-exports only; the code lives in pyjax._src.scipy.fft."""
from pyjax._src.scipy.fft import dct, dctn, idct, idctn  # noqa: F401
