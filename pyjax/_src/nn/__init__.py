"""jax.nn (level 7): activation functions and friends built from jax.numpy and lax."""
