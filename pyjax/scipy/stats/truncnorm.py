"""Public jax.scipy.stats.truncnorm. Re-exports only; the code lives in
pyjax._src.scipy.stats_families."""
from pyjax._src.scipy.stats_families import (  # noqa: F401
    truncnorm_logpdf as logpdf, truncnorm_pdf as pdf, truncnorm_cdf as cdf,
    truncnorm_logcdf as logcdf, truncnorm_sf as sf, truncnorm_logsf as logsf,
)
