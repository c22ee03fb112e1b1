"""Public jax.extend.mlir.passmanager: jaxlib's jaxlib.mlir.passmanager (every public name)."""
from pyjax._src.backends.mlir_bindings import public_names as _public_names

globals().update(_public_names("passmanager"))
