"""Public jax.scipy.stats.chi2. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    chi2_logpdf as logpdf, chi2_pdf as pdf, chi2_cdf as cdf, chi2_logcdf as logcdf,
    chi2_sf as sf, chi2_logsf as logsf,
)
