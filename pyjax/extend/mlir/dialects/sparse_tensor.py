"""Public jax.extend.mlir.dialects.sparse_tensor: jaxlib's bindings of the
sparse_tensor dialect."""
from pyjax._src.backends.mlir_bindings import public_names as _public_names

globals().update(_public_names("dialects.sparse_tensor"))
