"""jax._src.interpreters: the package of JAX's interpreters; served for `mlir`."""
