"""Public jax.scipy.stats.uniform. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    uniform_logpdf as logpdf, uniform_pdf as pdf, uniform_cdf as cdf, uniform_ppf as ppf,
)
