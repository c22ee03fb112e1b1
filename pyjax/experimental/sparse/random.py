"""Public jax.experimental.sparse.random: random_bcoo. Re-exports only."""
from pyjax._src.sparse.random import random_bcoo  # noqa: F401
