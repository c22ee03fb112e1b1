"""Public jax.scipy.stats.dirichlet. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    dirichlet_logpdf as logpdf, dirichlet_pdf as pdf,
)
