"""Public jax.extend.mlir.dialects.memref: jaxlib's bindings of MLIR's memref dialect."""
from pyjax._src.backends.mlir_bindings import public_names as _public_names

globals().update(_public_names("dialects.memref"))
