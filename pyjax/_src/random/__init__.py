"""jax.random (level 7): counter-based PRNG keys and samplers built on the threefry2x32
primitive of lax.random_bits."""
