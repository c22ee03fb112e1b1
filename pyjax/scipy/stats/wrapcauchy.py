"""Public jax.scipy.stats.wrapcauchy. Re-exports only; the code lives in
pyjax._src.scipy.stats_families."""
from pyjax._src.scipy.stats_families import (  # noqa: F401
    wrapcauchy_logpdf as logpdf, wrapcauchy_pdf as pdf,
)
