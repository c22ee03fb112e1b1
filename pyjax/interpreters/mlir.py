"""Public jax.interpreters.mlir: lowering rules of extension primitives. pyjax prints
StableHLO itself, so a lowering is a function of jax operations (`lower_fun`). Re-exports
only."""
from pyjax._src.extend.primitives import lower_fun, register_lowering  # noqa: F401
