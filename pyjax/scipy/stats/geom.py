"""Public jax.scipy.stats.geom. Re-exports only; the code lives in
pyjax._src.scipy.stats."""
from pyjax._src.scipy.stats import (  # noqa: F401
    geom_logpmf as logpmf, geom_pmf as pmf,
)
