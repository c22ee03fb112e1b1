"""Public jax.scipy.stats.nbinom. Re-exports only; the code lives in
pyjax._src.scipy.stats_families."""
from pyjax._src.scipy.stats_families import (  # noqa: F401
    nbinom_logpmf as logpmf, nbinom_pmf as pmf,
)
