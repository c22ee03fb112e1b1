"""Public jax.scipy.spatial (imported on its own, as in JAX). Re-exports only."""
from pyjax.scipy.spatial import transform  # noqa: F401
