"""Public jax.scipy.stats.bernoulli. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    bernoulli_logpmf as logpmf, bernoulli_pmf as pmf, bernoulli_cdf as cdf,
    bernoulli_ppf as ppf,
)
