"""Public jax.scipy.stats.t. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    t_logpdf as logpdf, t_pdf as pdf,
)
