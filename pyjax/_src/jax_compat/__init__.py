"""`jax._src` under the alias (pyjax.alias_jax): the private JAX modules that libraries
written for JAX import, each served by a module here that re-exports pyjax's own
equivalent. pyjax's `_src` layout is its own; this package is the one place that maps
JAX's private names onto it. tests/ecosystem/test_jax_compat.py lists each name with the library
that needs it."""
import importlib
import importlib.util


def __getattr__(name):
    # JAX imports its `_src` modules eagerly, so libraries reach them as attributes
    # (`jax._src.xla_bridge._backends`); here each loads on first access.
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'jax._src' has no attribute {name!r} (jax is aliased to "
                         "pyjax, which does not serve it)")
