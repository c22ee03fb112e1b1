"""jax.example_libraries: the small functional optimizer (optimizers) and neural-network
layer (stax) libraries that JAX ships as examples."""
