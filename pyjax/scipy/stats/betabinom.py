"""Public jax.scipy.stats.betabinom. Re-exports only; the code lives in
pyjax._src.scipy.stats_families."""
from pyjax._src.scipy.stats_families import (  # noqa: F401
    betabinom_logpmf as logpmf, betabinom_pmf as pmf,
)
