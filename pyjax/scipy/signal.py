"""Public jax.scipy.signal. Re-exports only; the code lives in pyjax._src.scipy.signal."""
from pyjax._src.scipy.signal import (  # noqa: F401
    convolve, convolve2d, correlate, correlate2d, detrend, fftconvolve,
)
