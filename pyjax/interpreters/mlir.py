"""Public jax.interpreters.mlir: lowering rules of extension primitives. pyjax prints
StableHLO itself, so a lowering is a function of jax operations (`lower_fun`), or a rule in
JAX's form whose only MLIR operation is `emit_python_callback`. Re-exports only."""
from pyjax._src.extend.primitives import (  # noqa: F401
    emit_python_callback, lower_fun, register_lowering)
