"""Public jax.interpreters.mlir: lowering rules of extension primitives. pyjax prints
StableHLO itself: a lowering is a function of jax operations (`lower_fun`), or a rule in
JAX's form written with MLIR's Python bindings (`ir`, and jaxlib's dialects), whose ops
join the printed module as a function. Re-exports only; the bindings' names load jaxlib
on first access."""
from pyjax._src.extend.primitives import (  # noqa: F401
    emit_python_callback, lower_fun, register_lowering)

_BINDINGS = ("aval_to_ir_type", "dense_int_array", "dtype_to_ir_type", "i32_attr",
             "i64_attr", "ir_constant")


def __getattr__(name):
    if name == "ir" or name in _BINDINGS:
        from pyjax._src.backends import mlir_bindings
        return mlir_bindings.bindings("ir") if name == "ir" else getattr(mlir_bindings, name)
    raise AttributeError(f"module 'jax.interpreters.mlir' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), "ir", *_BINDINGS])
