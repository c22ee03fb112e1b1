"""Public jax.scipy.stats.wrapcauchy. Re-exports only; the code lives in
pyjax._src.scipy.stats_more."""
from pyjax._src.scipy.stats_more import (  # noqa: F401
    wrapcauchy_logpdf as logpdf, wrapcauchy_pdf as pdf,
)
