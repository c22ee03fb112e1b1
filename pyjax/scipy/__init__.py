"""Public jax.scipy: special functions and probability distributions. Re-exports only;
the code lives in pyjax._src.scipy."""
from pyjax.scipy import special, stats  # noqa: F401
