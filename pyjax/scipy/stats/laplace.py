"""Public jax.scipy.stats.laplace. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    laplace_logpdf as logpdf, laplace_pdf as pdf, laplace_cdf as cdf,
)
