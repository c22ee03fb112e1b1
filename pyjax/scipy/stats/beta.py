"""Public jax.scipy.stats.beta. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    beta_logpdf as logpdf, beta_pdf as pdf, beta_cdf as cdf, beta_logcdf as logcdf,
    beta_sf as sf, beta_logsf as logsf,
)
