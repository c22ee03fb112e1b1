"""jaxlib's MLIR Python bindings, which lowering rules written against JAX's
`jax.interpreters.mlir` build ops with (`hlo.AddOp(x, y)`, `mlir.ir_constant(...)`). pyjax
prints StableHLO as text itself: such a rule runs here on the block arguments of a fresh
func.func, and the function comes back as MLIR text whose ops the printer emits inline
(FunctionContext.inline_function). Also the
MLIR context with the StableHLO dialects that xla.py parses modules in, and JAX's helpers
that make MLIR types, constants and attributes. With xla.py and xla_runtime.py, the only
importer of jaxlib; loaded by xla.py."""
from __future__ import annotations

import importlib
import threading
from typing import Any

import numpy as np

from jaxlib import _jax  # type: ignore[attr-defined]
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, func, sdy, stablehlo

from pyjax._src import dtypes
from pyjax._src.backends.stablehlo import LoweringError, element_type, tensor_type
from pyjax._src.core.tokens import AbstractToken

_lock = threading.Lock()
_contexts: list = []


def context():
    """The MLIR context (made once) with the dialects of the modules pyjax prints."""
    if not _contexts:
        with _lock:
            if not _contexts:
                _contexts.append(_new_context())
    return _contexts[0]


def _new_context():
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    sdy.register_dialect(ctx)   # partitioned modules (shard_map, shardings) use Shardy
    return ctx


def parse(text):
    """An MLIR module parsed from its text."""
    with context():
        return ir.Module.parse(text)


def bindings(name: str):
    """The bindings module jaxlib.mlir.<name> ('ir', 'passmanager', 'dialects.func',
    ...), which JAX's jax.extend.mlir and jax._src.lib.mlir serve."""
    return importlib.import_module(f"jaxlib.mlir.{name}")


def public_names(name: str) -> dict:
    """The names `from jaxlib.mlir.<name> import *` gives."""
    module = bindings(name)
    names = getattr(module, "__all__", None) or [n for n in vars(module)
                                                 if not n.startswith("_")]
    return {n: getattr(module, n) for n in names}


# jaxlib's functions on whole modules (jax.extend.mlir's)
deserialize_portable_artifact = _jax.mlir.deserialize_portable_artifact
serialize_portable_artifact = _jax.mlir.serialize_portable_artifact
refine_polymorphic_shapes = _jax.mlir.refine_polymorphic_shapes
hlo_to_stablehlo = _jax.mlir.hlo_to_stablehlo


def function_text(in_avals, out_avals, build, location: str):
    """The function of the types `in_avals` -> `out_avals` whose ops `build(module,
    insertion_point, arguments)` emits with the bindings and whose results (a sequence,
    or one value) it returns, every op at the location named `location`: (the function
    in MLIR's generic form, the texts of the other functions its module defines).
    ValueError, with MLIR's verifier's message, if the ops are not valid."""
    with context(), ir.Location.name(location):
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            fn = _private_function("main", [ir.Type.parse(tensor_type(a)) for a in in_avals],
                                   [ir.Type.parse(tensor_type(a)) for a in out_avals])
            block = fn.add_entry_block()
            with ir.InsertionPoint(block) as ip:
                outs = build(module, ip, list(block.arguments))
                func.ReturnOp([outs] if isinstance(outs, ir.Value) else list(outs))
        try:
            module.operation.verify()
        except ir.MLIRError as err:
            details = "\n\t".join(str(d) for d in err.error_diagnostics)
            raise ValueError(f"Cannot lower jaxpr with verifier errors:\n\t{details}") \
                from None
        body = fn.operation.get_asm(print_generic_op_form=True, enable_debug_info=True,
                                    use_local_scope=True)
        # the functions the rule defined (a declaration names one pyjax prints itself)
        others = [str(op.get_asm(enable_debug_info=False)) for op in module.body.operations
                  if op != fn and op.regions and op.regions[0].blocks]
        return str(body), others


def _private_function(symbol, in_types, out_types) -> Any:
    # (func.FuncOp: the dialect's own class, whose keywords the generated stubs lack)
    return func.FuncOp(symbol, ir.FunctionType.get(in_types, out_types),  # type: ignore
                       visibility="private")


def create_op(name, operands, result_avals, attrs):
    """The results of the op `name` on `operands`, created at the current insertion
    point, its attributes given as text (as pyjax's printer writes them)."""
    op = ir.Operation.create(
        name, results=[ir.Type.parse(tensor_type(a)) for a in result_avals],
        operands=list(operands),
        attributes={k: ir.Attribute.parse(v) for k, v in (attrs or {}).items()})
    return list(op.results)


def call_declared(module, symbol, args, out_avals):
    """A func.call, at the current insertion point, of the private function `symbol`
    that pyjax's printer holds, declared in `module` (function_text leaves declarations
    out); its results."""
    out_types = [ir.Type.parse(tensor_type(a)) for a in out_avals]
    if symbol not in ir.SymbolTable(module.operation):
        with ir.InsertionPoint.at_block_begin(module.body):
            _private_function(symbol, [a.type for a in args], out_types)
    return list(func.CallOp(out_types, ir.FlatSymbolRefAttr.get(symbol), list(args)).results)


# --- JAX's helpers (jax.interpreters.mlir) ----------------------------------------------

def dtype_to_ir_type(dtype):
    """The MLIR element type of a dtype (i1, ui8, f32, complex<f32>, ...)."""
    if not isinstance(dtype, (np.dtype, np.generic, type)):
        raise TypeError(f"No dtype_to_ir_type handler for dtype: {dtype!r}")
    try:
        text = element_type(np.dtype(dtype))
    except LoweringError:
        raise TypeError(f"No dtype_to_ir_type handler for dtype: {dtype}") from None
    return ir.Type.parse(text)


def aval_to_ir_type(module_context, aval):
    """The MLIR type of an aval (a ranked tensor, or the StableHLO token type)."""
    del module_context   # JAX's: caches the types; MLIR uniques them
    if isinstance(aval, AbstractToken):
        return stablehlo.TokenType.get()
    return ir.RankedTensorType.get(aval.shape, dtype_to_ir_type(aval.dtype))


def ir_constant(val, *, const_lowering=None, aval=None):
    """A stablehlo.constant of a NumPy value (or a Python scalar of the scalar `aval`)."""
    if isinstance(val, (bool, int, float, complex)):
        if aval is None or aval.shape != ():
            raise TypeError(f"ir_constant of the Python scalar {val!r} needs the scalar "
                            f"aval of its type (aval=...), got {aval}")
        val = np.array(val, aval.dtype)
    if not isinstance(val, (np.ndarray, np.generic)):
        raise TypeError(f"No constant handler for type: {type(val)}")
    x = np.zeros(val.shape, np.bool_) if val.dtype == dtypes.float0 else val
    attr = ir.DenseElementsAttr.get(np.ascontiguousarray(x), type=dtype_to_ir_type(x.dtype),
                                    shape=x.shape)
    return stablehlo.constant(attr)


def ir_constants(val, *, const_lowering=None, aval=None):
    """ir_constant's value as a tuple (JAX's, for values of several IR values)."""
    return (ir_constant(val, aval=aval),)


def ir_attribute(val):
    """An MLIR attribute of a Python value: a string, a bool, a Python or NumPy scalar
    (Python ints and floats as i64 and f64), a NumPy array or dtype, a dict, a list or
    tuple of such values, or an attribute (JAX's handlers)."""
    if isinstance(val, ir.Attribute):
        return val
    if isinstance(val, (str, bytes)):
        return ir.StringAttr.get(val)
    if isinstance(val, (bool, int, float, complex)):
        val = np.array(val, {bool: np.bool_, int: np.int64, float: np.float64,
                             complex: np.complex128}[type(val)])
    if isinstance(val, (np.ndarray, np.generic)) and val.ndim == 0:
        mlir_type = dtype_to_ir_type(val.dtype)
        if isinstance(mlir_type, ir.IntegerType):
            return ir.IntegerAttr.get(mlir_type, int(val))
        if isinstance(mlir_type, ir.FloatType):
            return ir.FloatAttr.get(mlir_type, float(val))
        raise TypeError(f"Unsupported scalar attribute type: {type(val)}")
    if isinstance(val, np.ndarray):
        return ir.DenseElementsAttr.get(np.ascontiguousarray(val),
                                        type=dtype_to_ir_type(val.dtype), shape=val.shape)
    if isinstance(val, np.dtype):
        return ir.TypeAttr.get(dtype_to_ir_type(val))
    if isinstance(val, dict):
        return ir.DictAttr.get({k: ir_attribute(v) for k, v in val.items()})
    if isinstance(val, (list, tuple)):
        return ir.ArrayAttr.get([ir_attribute(v) for v in val])
    raise TypeError(f"No attribute handler defined for type: {type(val)}")


def make_ir_context():
    """A new MLIR context with the dialects of JAX's modules (JAX's make_ir_context)."""
    return _new_context()


def dense_int_elements(values):
    return ir.DenseIntElementsAttr.get(np.asarray(values, np.int64))


def dense_int_array(values):
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def i32_attr(i):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), i)


def i64_attr(i):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)


def _layouts_attr(layouts):
    return ir.ArrayAttr.get([
        ir.DenseIntElementsAttr.get(np.atleast_1d(np.asarray(layout, np.int64)),
                                    type=ir.IndexType.get()) for layout in layouts])


def custom_call(call_target_name, *, result_types, operands, backend_config="",
                has_side_effect=False, result_shapes=None, called_computations=(),
                api_version=2, operand_output_aliases=None, operand_layouts=None,
                result_layouts=None, extra_attributes=None):
    """JAX's `mlir.custom_call`: a stablehlo.custom_call op of the target (its results'
    types given; layouts minor-to-major; a dict backend_config goes, as JAX puts it, in
    mhlo.backend_config with api_version 1). Returns the op."""
    operands = list(operands)
    if isinstance(backend_config, dict):
        api_version, config = 1, ir.StringAttr.get("")
    elif isinstance(backend_config, (str, bytes)) or backend_config is None:
        config = ir.StringAttr.get(backend_config or "")
    else:
        raise ValueError(f"custom_call backend_config unexpected type: {backend_config}")
    attributes = {
        "call_target_name": ir.StringAttr.get(call_target_name),
        "has_side_effect": ir.BoolAttr.get(has_side_effect),
        "backend_config": config, "api_version": i32_attr(api_version),
        "called_computations": ir.ArrayAttr.get(
            [ir.FlatSymbolRefAttr.get(name) for name in called_computations])}
    if operand_output_aliases is not None:
        attributes["output_operand_aliases"] = ir.ArrayAttr.get([
            stablehlo.OutputOperandAlias.get(
                output_tuple_indices=[out] if len(result_types) > 1 else [],
                operand_index=operand, operand_tuple_indices=[])
            for operand, out in operand_output_aliases.items()])
    attributes.update(extra_attributes or {})
    if result_shapes is not None:   # dynamic result shapes, as operands after the others
        attributes["indices_of_shape_operands"] = ir.DenseIntElementsAttr.get(
            np.arange(len(operands), len(operands) + len(result_shapes), dtype=np.int64))
        if operand_layouts is not None:
            operand_layouts = [*operand_layouts, *[(0,)] * len(result_shapes)]
        operands += list(result_shapes)
    if operand_layouts is not None:
        attributes["operand_layouts"] = _layouts_attr(operand_layouts)
    if result_layouts is not None:
        if len(result_layouts) != len(result_types):
            raise ValueError(f"custom_call: {len(result_layouts)} result layouts for "
                             f"{len(result_types)} results")
        attributes["result_layouts"] = _layouts_attr(result_layouts)
    op = stablehlo.CustomCallOp.build_generic(results=list(result_types), operands=operands,
                                              attributes=attributes)
    if isinstance(backend_config, dict):
        op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(backend_config)
    return op
