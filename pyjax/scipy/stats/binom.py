"""Public jax.scipy.stats.binom. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    binom_logpmf as logpmf, binom_pmf as pmf,
)
