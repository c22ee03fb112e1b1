"""jax._src.lax: the package of JAX's lax modules."""
