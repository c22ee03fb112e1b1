"""jax._src.interpreters.mlir: JAX's lowering module, which lowering rules import for its
public names (jax.interpreters.mlir's) and for `custom_call` (JAX's "Exporting and
serializing" page builds a primitive's lowering with it)."""
from pyjax._src.backends.mlir_bindings import (  # noqa: F401
    aval_to_ir_type, custom_call, dense_int_array, dense_int_elements, dtype_to_ir_type,
    i32_attr, i64_attr, ir_attribute, ir_constant, ir_constants, make_ir_context)
from pyjax._src.backends.mlir_bindings import bindings as _bindings
from pyjax._src.extend.primitives import (  # noqa: F401
    LoweringRuleContext, ModuleContext, emit_python_callback, lower_fun, register_lowering)

ir = _bindings("ir")
hlo = _bindings("dialects.stablehlo")
Value = ir.Value
token_type = hlo.TokenType.get
