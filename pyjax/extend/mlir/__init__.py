"""Public jax.extend.mlir: MLIR's Python bindings (jaxlib's), the `ir`, `passmanager` and
`dialects` modules lowering rules build ops with, and jaxlib's functions on whole
modules. Re-exports only; importing it loads jaxlib."""
from pyjax._src.backends.mlir_bindings import (  # noqa: F401
    deserialize_portable_artifact, hlo_to_stablehlo, refine_polymorphic_shapes,
    serialize_portable_artifact)
