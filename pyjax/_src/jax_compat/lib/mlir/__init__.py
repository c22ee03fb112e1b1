"""jax._src.lib.mlir: MLIR's Python bindings (jaxlib's `ir` and `passmanager`, and the
`dialects` module), which lowering rules import (JAX's "How JAX primitives work" page:
`from jax._src.lib.mlir.dialects import hlo`)."""
from pyjax._src.backends.mlir_bindings import bindings as _bindings
from pyjax._src.jax_compat.lib.mlir import dialects  # noqa: F401

ir = _bindings("ir")
passmanager = _bindings("passmanager")
