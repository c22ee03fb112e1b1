"""Public jax.extend.mlir.dialects: the MLIR dialects of jaxlib's bindings, one module each."""
