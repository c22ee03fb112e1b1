"""Public jax.scipy.stats.expon. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    expon_logpdf as logpdf, expon_pdf as pdf, expon_cdf as cdf, expon_logcdf as logcdf,
    expon_sf as sf, expon_logsf as logsf, expon_ppf as ppf,
)
