"""Public jax.experimental.random: the stateful PRNG. Re-exports only."""
from pyjax._src.random.stateful_rng import StatefulPRNG, stateful_rng  # noqa: F401
