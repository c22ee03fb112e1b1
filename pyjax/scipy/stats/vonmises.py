"""Public jax.scipy.stats.vonmises. Re-exports only; the code lives in
pyjax._src.scipy.stats_families."""
from pyjax._src.scipy.stats_families import (  # noqa: F401
    vonmises_logpdf as logpdf, vonmises_pdf as pdf,
)
