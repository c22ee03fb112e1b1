"""Public jax.scipy.stats.gamma. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    gamma_logpdf as logpdf, gamma_pdf as pdf, gamma_cdf as cdf, gamma_logcdf as logcdf,
    gamma_sf as sf, gamma_logsf as logsf,
)
