"""Public jax.extend.mlir.dialects.mpmd: jaxlib's bindings of MLIR's mpmd dialect."""
from pyjax._src.backends.mlir_bindings import public_names as _public_names

globals().update(_public_names("dialects.mpmd"))
