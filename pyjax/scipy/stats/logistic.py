"""Public jax.scipy.stats.logistic. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    logistic_logpdf as logpdf, logistic_pdf as pdf, logistic_cdf as cdf, logistic_sf as sf,
    logistic_ppf as ppf, logistic_isf as isf,
)
