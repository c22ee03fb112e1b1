"""jax.numpy (level 7): the NumPy API on immutable arrays, built only from lax, api,
dtypes and tree_util."""
