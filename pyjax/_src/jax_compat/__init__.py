"""`jax._src` under the alias (pyjax.alias_jax): the private JAX modules that libraries
written for JAX import, each served by a module here that re-exports pyjax's own
equivalent. pyjax's `_src` layout is its own; this package is the one place that maps
JAX's private names onto it. tests/ecosystem/test_jax_compat.py lists each name with the library
that needs it."""
