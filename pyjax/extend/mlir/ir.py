"""Public jax.extend.mlir.ir: jaxlib's jaxlib.mlir.ir (every public name)."""
from pyjax._src.backends.mlir_bindings import public_names as _public_names

globals().update(_public_names("ir"))
