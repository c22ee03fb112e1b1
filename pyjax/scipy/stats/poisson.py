"""Public jax.scipy.stats.poisson. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    poisson_logpmf as logpmf, poisson_pmf as pmf, poisson_cdf as cdf,
    poisson_entropy as entropy,
)
