"""jax._src.lib: the package through which JAX reaches jaxlib; served here for its `mlir`
package (MLIR's Python bindings, which lowering rules import) and `xla_client` (jaxlib's,
which Autodidax puts its arguments on devices with)."""


def __getattr__(name):
    if name == "xla_client":
        from pyjax._src.backends import xla
        return xla.xc
    raise AttributeError(f"module 'jax._src.lib' has no attribute {name!r} (jax is aliased "
                         "to pyjax, which does not serve it)")
