"""Public jax.scipy: special functions, probability distributions, signal processing,
discrete cosine transforms, image interpolation, integration, dense and sparse linear
algebra (and, imported on its own as in JAX, optimize). Re-exports only; the code lives
in pyjax._src.scipy."""
from pyjax.scipy import special, stats  # noqa: F401
from pyjax.scipy import cluster, fft, integrate, interpolate, linalg, ndimage, signal  # noqa: F401
from pyjax.scipy import sparse  # noqa: F401
