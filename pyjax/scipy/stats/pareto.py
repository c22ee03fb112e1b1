"""Public jax.scipy.stats.pareto. Re-exports only; the code lives in
pyjax._src.scipy.stats_families."""
from pyjax._src.scipy.stats_families import (  # noqa: F401
    pareto_logpdf as logpdf, pareto_pdf as pdf, pareto_cdf as cdf,
    pareto_logcdf as logcdf, pareto_sf as sf, pareto_logsf as logsf, pareto_ppf as ppf,
)
