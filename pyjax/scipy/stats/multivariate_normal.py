"""Public jax.scipy.stats.multivariate_normal. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    multivariate_normal_logpdf as logpdf, multivariate_normal_pdf as pdf,
)
