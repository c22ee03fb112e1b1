"""Public jax.scipy.stats.multinomial. Re-exports only; the code lives in
pyjax._src.scipy.stats_families."""
from pyjax._src.scipy.stats_families import (  # noqa: F401
    multinomial_logpmf as logpmf, multinomial_pmf as pmf,
)
