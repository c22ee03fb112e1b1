"""Sparse arrays (jax.experimental.sparse): BCOO, built only from jnp and tree_util."""
