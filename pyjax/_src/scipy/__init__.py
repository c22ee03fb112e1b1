"""jax.scipy (level 7): special functions and probability distributions built from lax
and jax.numpy."""
