"""Public jax.scipy.stats.gennorm. Re-exports only; the code lives in
pyjax._src.scipy.stats_families."""
from pyjax._src.scipy.stats_families import (  # noqa: F401
    gennorm_logpdf as logpdf, gennorm_pdf as pdf, gennorm_cdf as cdf,
)
