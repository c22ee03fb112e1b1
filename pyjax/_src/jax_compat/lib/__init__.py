"""jax._src.lib: the package through which JAX reaches jaxlib; served here for its `mlir`
package (MLIR's Python bindings, which lowering rules import)."""
