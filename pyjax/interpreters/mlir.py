"""Public jax.interpreters.mlir: lowering rules of extension primitives. pyjax prints
StableHLO itself: a lowering is a function of jax operations (`lower_fun`), or a rule in
JAX's form written with MLIR's Python bindings (`ir`, and jaxlib's dialects), whose ops
join the printed module. Re-exports only; the bindings' names load jaxlib on first
access."""
from pyjax._src.extend.primitives import (  # noqa: F401
    LoweringRuleContext, ModuleContext, emit_python_callback, lower_fun, register_lowering)

_BINDINGS = ("aval_to_ir_type", "dense_int_array", "dense_int_elements", "dtype_to_ir_type",
             "i32_attr", "i64_attr", "ir_attribute", "ir_constant", "ir_constants",
             "make_ir_context")


def __getattr__(name):
    if name not in ("ir", "Value", "token_type", *_BINDINGS):
        raise AttributeError(f"module 'jax.interpreters.mlir' has no attribute {name!r}")
    from pyjax._src.backends import mlir_bindings
    if name in ("ir", "Value"):
        ir = mlir_bindings.bindings("ir")
        return ir if name == "ir" else ir.Value
    if name == "token_type":
        return mlir_bindings.bindings("dialects.stablehlo").TokenType.get
    return getattr(mlir_bindings, name)


def __dir__():
    return sorted([*globals(), "ir", "Value", "token_type", *_BINDINGS])
