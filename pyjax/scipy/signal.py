"""Public jax.scipy.signal. Re-exports only; the code lives in pyjax._src.scipy.signal
and pyjax._src.scipy.spectral."""
from pyjax._src.scipy.signal import (  # noqa: F401
    convolve, convolve2d, correlate, correlate2d, detrend, fftconvolve,
)
from pyjax._src.scipy.spectral import csd, istft, stft, welch  # noqa: F401
