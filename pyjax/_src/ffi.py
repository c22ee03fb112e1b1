"""jax.ffi: calls of XLA FFI handlers (compiled C/C++ functions registered with XLA) from
JAX programs. `ffi_call(target, result_shape_dtypes, ...)(*args, **attributes)` binds the
`ffi_call` primitive, which lowers to a stablehlo.custom_call of the target (API version
4: keyword arguments become its backend_config dictionary), as JAX 0.10.2 does; under
vmap it follows `vmap_method`; it has no derivative. Handlers are registered with jaxlib
(register_ffi_target); pyjax's NumPy executor cannot run them. Imports lax and api."""
from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from pyjax._src.api.jit import jit
from pyjax._src.backends import devices, dispatch, stablehlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.tokens import AbstractToken, abstract_token
from pyjax._src.core.trace import NO_TRANSPOSE, define_primitive, no_samples
from pyjax._src.interpreters import batching
from pyjax._src.lax import structural
from pyjax._src.lax.callbacks import Effect
from pyjax._src.lax.control_flow.scan import scan
from pyjax._src.layout import Layout
from pyjax._src.random.keys import PRNGKeyArray

_VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None]


# --- registering handlers -------------------------------------------------------------------

def register_ffi_target(name: str, fn: Any, platform: str = "cpu", api_version: int = 1,
                        **kwargs: Any) -> None:
    """Registers the handler `fn` (a PyCapsule, or a dict of them by FFI stage) as the
    custom-call target `name` on `platform` (api_version 1: the typed FFI; 0: the older
    custom-call API). Extra keywords go to jaxlib's register_custom_call_target."""
    _runtime("jax.ffi.register_ffi_target").register_custom_call_target(
        name, fn, platform, api_version, **kwargs)


def _runtime(what):
    runtime = devices.xla_runtime()
    if runtime is None:
        raise NotImplementedError(f"{what} needs the XLA executor (PYJAX_EXECUTOR=numpy runs "
                                  "no FFI handlers)")
    return runtime


def register_ffi_type(name: str, type_registration: dict, platform: str = "cpu") -> None:
    """Registers a user type of FFI handlers: `type_registration` holds its type_id (a
    PyCapsule of the XLA_FFI_TypeId) and optionally type_info."""
    _runtime("jax.ffi.register_ffi_type").register_custom_type(name, type_registration,
                                                                platform)


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Lets XLA's partitioner split calls of the target `name` along their leading
    (batch) dimension."""
    _runtime("jax.ffi.register_ffi_target_as_batch_partitionable"
             ).register_custom_call_as_batch_partitionable(name)


def register_ffi_type_id(name: str, obj: Any, platform: str = "cpu") -> None:
    """Refused, as by JAX 0.10.2: jaxlib no longer registers FFI type ids."""
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def pycapsule(funcptr):
    """A PyCapsule holding the address of a ctypes function pointer (to register a
    function of a compiled library as an FFI target)."""
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    builder = ctypes.pythonapi.PyCapsule_New
    builder.restype = ctypes.py_object
    builder.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    return builder(funcptr, None, destructor(0))


def include_dir() -> str:
    """The folder of the C++ headers jaxlib ships (xla/ffi/api/ffi.h, ...), to build FFI
    handlers against."""
    spec = importlib.util.find_spec("jaxlib")   # found without importing jaxlib
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("Cannot determine jaxlib directory: jaxlib is not installed")
    return os.path.join(list(spec.submodule_search_locations)[0], "include")


# --- layouts and attributes -----------------------------------------------------------------

def _physical_shape(aval):
    if isinstance(aval, AbstractToken):
        return ()
    physical = getattr(aval.dtype, "physical_shape", None)   # extended dtypes: key data
    return tuple(aval.shape) + (tuple(physical) if physical is not None else ())


def _minor_to_major(aval, layout=None):
    """A layout in the minor-to-major order of the custom-call API (None: row-major)."""
    if layout is None:
        return tuple(reversed(range(len(_physical_shape(aval)))))
    if isinstance(layout, Layout):
        if layout.tiling is not None:
            raise ValueError("The FFI does not support layouts with tiling")
        return tuple(layout.major_to_minor[::-1])
    return tuple(layout)


def _layouts_for_call(avals, layouts):
    """ffi_call's layouts (major-to-minor, or Layout objects) in minor-to-major order."""
    return tuple(_minor_to_major(aval, layout if layout is None or isinstance(layout, Layout)
                                 else tuple(layout)[::-1])
                 for aval, layout in zip(avals, layouts))


class FrozenDict:
    """A dict attribute of an ffi_call, hashable so that it can be a primitive param."""

    def __init__(self, d):
        self._d = dict(d)

    def __hash__(self):
        return hash(tuple(sorted(self._d.items())))

    def __eq__(self, other):
        return isinstance(other, FrozenDict) and self._d == other._d

    def __repr__(self):
        return f"FrozenDict({self._d!r})"


class HashableArray:
    """A NumPy array attribute of an ffi_call, hashed and compared by value."""

    def __init__(self, val):
        self.val = np.array(val, copy=True)
        self.val.setflags(write=False)

    def __hash__(self):
        return hash((self.val.shape, self.val.dtype, self.val.tobytes()))

    def __eq__(self, other):
        return (isinstance(other, HashableArray) and self.val.shape == other.val.shape
                and self.val.dtype == other.val.dtype and bool((self.val == other.val).all()))

    def __repr__(self):
        return f"HashableArray({self.val!r})"


def _hashable_attributes(kwargs):
    out = []
    for k, v in sorted(kwargs.items()):
        if isinstance(v, np.ndarray):
            out.append((k, HashableArray(v)))
        elif isinstance(v, dict):
            out.append((k, FrozenDict(v)))
        else:
            try:
                hash(v)
            except TypeError as e:
                raise TypeError(f"Non-hashable keyword argument to ffi_call {k}: {v}") from e
            out.append((k, v))
    return tuple(out)


def _attribute_text(value):
    """An attribute of the custom call's backend_config as MLIR text (Python ints are
    i64 and floats f64; NumPy scalars and arrays keep their dtype), as JAX's
    mlir.ir_attribute writes them."""
    if isinstance(value, FrozenDict):
        value = value._d
    if isinstance(value, HashableArray):
        value = value.val
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_attribute_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        value = np.float64(value)
    if isinstance(value, np.ndarray):
        return stablehlo.dense_attr(value, ShapedArray(value.shape, value.dtype))
    if isinstance(value, np.generic):
        return (f"{stablehlo._scalar_text(value, value.dtype)} : "
                f"{stablehlo.element_type(value.dtype)}")
    raise TypeError(f"ffi_call: attribute of type {type(value).__name__} cannot be passed to "
                    "an FFI handler (use a number, bool, string, NumPy array or dict)")


def _layout_text(layout):
    return (f"dense<[{', '.join(map(str, layout))}]> : tensor<{len(layout)}xindex>"
            if layout else "dense<> : tensor<0xindex>")


# --- lowering -------------------------------------------------------------------------------

def build_ffi_lowering_function(call_target_name: str, *, operand_layouts=None,
                                result_layouts=None, backend_config=None,
                                skip_ffi_layout_processing: bool = False, **lowering_args):
    """The custom call of `call_target_name` as a function (ctx, *operands, **attributes)
    -> its results, for a lowering rule. Layouts are minor-to-major (None: row-major);
    keyword arguments of the call become backend_config attributes (API version 4)."""
    def lower(ctx, *operands, **params):
        api_version = lowering_args.get("api_version", 4)
        attrs = {"call_target_name": stablehlo._quote(call_target_name),
                 "api_version": f"{api_version} : i32"}
        if lowering_args.get("has_side_effect"):
            attrs["has_side_effect"] = "true"
        if api_version >= 4:
            if backend_config is not None and not isinstance(backend_config, dict):
                raise ValueError("When api_version > 4, backend_config must be a dictionary.")
            config = dict(backend_config or {}, **params)
            # JAX's form: the dictionary goes in mhlo.backend_config, which XLA reads
            # from an op of api_version 1 (the dialect wants a string backend_config)
            attrs["api_version"] = "1 : i32"
            attrs["backend_config"] = '""'
            attrs["mhlo.backend_config"] = "{" + ", ".join(
                f"{k} = {_attribute_text(v)}" for k, v in config.items()) + "}"
        else:
            if params:
                raise ValueError("The use of ffi_call attributes requires a custom call API "
                                 f"version of at least 4; got api_version={api_version}.")
            attrs["backend_config"] = stablehlo._quote(backend_config or "")
        if not skip_ffi_layout_processing:
            ins = (map(_minor_to_major, ctx.avals_in) if operand_layouts is None else
                   (_minor_to_major(*a) for a in zip(ctx.avals_in, operand_layouts)))
            outs = (map(_minor_to_major, ctx.avals_out) if result_layouts is None else
                    (_minor_to_major(*a) for a in zip(ctx.avals_out, result_layouts)))
            attrs["operand_layouts"] = "[" + ", ".join(map(_layout_text, ins)) + "]"
            attrs["result_layouts"] = "[" + ", ".join(map(_layout_text, outs)) + "]"
        aliases = lowering_args.get("operand_output_aliases")
        if aliases:
            many = len(ctx.avals_out) > 1
            attrs["output_operand_aliases"] = "[" + ", ".join(
                f"#stablehlo.output_operand_alias<output_tuple_indices = "
                f"[{o if many else ''}], operand_index = {i}, operand_tuple_indices = []>"
                for i, o in aliases.items()) + "]"
        return ctx.op("stablehlo.custom_call", list(operands), list(ctx.avals_out), attrs)
    return lower


def ffi_lowering(call_target_name: str, *, operand_layouts=None, result_layouts=None,
                 backend_config=None, skip_ffi_layout_processing: bool = False,
                 **lowering_args):
    """A lowering rule (for jax.interpreters.mlir.register_lowering) calling the FFI
    target `call_target_name`; see build_ffi_lowering_function."""
    return build_ffi_lowering_function(
        call_target_name, operand_layouts=operand_layouts, result_layouts=result_layouts,
        backend_config=backend_config, skip_ffi_layout_processing=skip_ffi_layout_processing,
        **lowering_args)


# --- the primitive --------------------------------------------------------------------------

class FfiEffect(Effect):
    name = "FFI"


_ffi_effect = FfiEffect()


def _result_avals(results):
    avals = []
    for idx, result in enumerate(results):
        if result is abstract_token:
            avals.append(result)
        elif not hasattr(result, "shape") or not hasattr(result, "dtype"):
            raise ValueError("All elements of result_shape_dtypes must have 'shape' and "
                             f"'dtype' attributes. Got {result} at position {idx}.")
        else:
            avals.append(ShapedArray(tuple(result.shape), np.dtype(result.dtype)))
    return tuple(avals)


def _same_type(a, b):
    if isinstance(a, AbstractToken) and isinstance(b, AbstractToken):
        return True
    return (getattr(a, "shape", ()) == getattr(b, "shape", ())
            and getattr(a, "dtype", ()) == getattr(b, "dtype", ()))


def ffi_call(target_name: str, result_shape_dtypes, *, has_side_effect: bool = False,
             vmap_method: str | None = None, input_layouts=None, output_layouts=None,
             input_output_aliases: dict[int, int] | None = None,
             custom_call_api_version: int = 4, legacy_backend_config: str | None = None):
    """A function calling the FFI target `target_name` on its positional (array)
    arguments, whose keyword arguments are passed to the handler as attributes. Its
    results have the shapes and dtypes of `result_shape_dtypes` (one, or a sequence).
    vmap follows `vmap_method` (as jax.pure_callback's); layouts are major-to-minor."""
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {_VMAP_METHODS}, "
                         f"but got: {vmap_method}")
    multiple_results = isinstance(result_shape_dtypes, Sequence)
    if multiple_results:
        result_avals = _result_avals(result_shape_dtypes)
        out_layouts = output_layouts
    else:
        result_avals = _result_avals([result_shape_dtypes])
        out_layouts = (output_layouts,)
    if custom_call_api_version >= 4 and legacy_backend_config is not None:
        raise ValueError("The use of the legacy_backend_config parameter requires "
                         f"custom_call_api_version < 4; got {custom_call_api_version}.")

    def wrapped(*args, **kwargs):
        # a typed key reaches the handler as its key data (JAX lowers it so too)
        args = tuple(x._base if isinstance(x, PRNGKeyArray) else x for x in args)
        in_avals = [get_aval(x) for x in args]
        if input_layouts is None:
            static_in = tuple(map(_minor_to_major, in_avals))
        else:
            if len(input_layouts) != len(in_avals):
                raise ValueError(f"The number of input arguments ({len(in_avals)}) must equal "
                                 f"the number of input layouts ({len(input_layouts)}).")
            static_in = _layouts_for_call(in_avals, input_layouts)
        if out_layouts is None:
            static_out = tuple(map(_minor_to_major, result_avals))
        else:
            if len(out_layouts) != len(result_avals):
                raise ValueError(f"The number of outputs ({len(result_avals)}) must equal the "
                                 f"number of output layouts ({len(out_layouts)}).")
            static_out = _layouts_for_call(result_avals, out_layouts)
        aliases = []
        for i, o in sorted((input_output_aliases or {}).items()):
            i, o = int(i), int(o)
            where = f"input_output_aliases contains the mapping '{i}:{o}'"
            if i >= len(args):
                raise ValueError(f"{where} with input index {i} outside the range "
                                 f"[0, {len(args)}).")
            if o >= len(result_avals):
                raise ValueError(f"{where} with output index {o} outside the range "
                                 f"[0, {len(result_avals)}).")
            if not _same_type(in_avals[i], result_avals[o]):
                raise ValueError(f"{where} referring to an input with abstract value "
                                 f"{in_avals[i]} and an output with a different abstract "
                                 f"value {result_avals[o]}.")
            if static_in[i] != static_out[o]:
                raise ValueError(f"{where} referring to an input with layout {static_in[i]} "
                                 "and an output with a different layout "
                                 f"{static_out[o]}.")
            aliases.append((i, o))
        results = ffi_call_p.bind(
            *args, result_avals=result_avals, vmap_method=vmap_method,
            target_name=target_name, has_side_effect=has_side_effect,
            input_layouts=static_in, output_layouts=static_out,
            input_output_aliases=tuple(aliases),
            custom_call_api_version=custom_call_api_version,
            legacy_backend_config=legacy_backend_config,
            attributes=_hashable_attributes(kwargs))
        if not multiple_results:
            return results[0]
        return tuple(results) if isinstance(result_shape_dtypes, tuple) else results

    return wrapped


def _abstract_eval(*avals, result_avals, **params):
    return list(result_avals)


def _effects(**params):
    return frozenset({_ffi_effect}) if params["has_side_effect"] else frozenset()


def _eager(*args, **params):
    """Outside jit an FFI call runs as its own XLA program, as in JAX (the NumPy executor
    cannot run an XLA FFI handler)."""
    dispatch.required_xla_backend(f"jax.ffi.ffi_call of {params['target_name']!r}")
    return jit(functools.partial(ffi_call_p.bind, **params))(*args)


def _impl(*args, **params):
    """On host values (an eager loop's body): the call's own XLA program."""
    return [np.asarray(out) for out in _eager(*args, **params)]


def _jvp(primals, tangents, *, target_name, **params):
    raise ValueError(f"The FFI call to `{target_name}` cannot be differentiated. You can use "
                     "`jax.custom_jvp` or `jax.custom_jvp` to add support.")


def _batch(args, dims, *, vmap_method, result_avals, **params):
    size = next(get_aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    args = [a if d is None else batching.moveaxis(a, d, 0) for a, d in zip(args, dims)]
    batched_avals = tuple(ShapedArray((size, *a.shape), a.dtype) for a in result_avals)

    def shifted(layouts):
        return tuple(None if layout is None else tuple(n + 1 for n in layout) + (0,)
                     for layout in layouts)

    if vmap_method not in ("sequential", "sequential_unrolled"):
        params["output_layouts"] = shifted(params["output_layouts"])
    if vmap_method == "legacy_vectorized":
        params["input_layouts"] = tuple(
            layout if d is None else shifted([layout])[0]
            for layout, d in zip(params["input_layouts"], dims))
        outs = ffi_call_p.bind(*args, vmap_method=vmap_method, result_avals=batched_avals,
                               **params)
    elif vmap_method in ("expand_dims", "broadcast_all"):
        n = size if vmap_method == "broadcast_all" else 1
        args = [structural.broadcast(a, (n,)) if d is None else a for a, d in zip(args, dims)]
        params["input_layouts"] = shifted(params["input_layouts"])
        outs = ffi_call_p.bind(*args, vmap_method=vmap_method, result_avals=batched_avals,
                               **params)
    elif vmap_method in ("sequential", "sequential_unrolled"):
        batched = [d is not None for d in dims]

        def body(_, xs):
            it = iter(xs)
            merged = [next(it) if b else a for a, b in zip(args, batched)]
            return (), ffi_call_p.bind(*merged, vmap_method=vmap_method,
                                       result_avals=result_avals, **params)

        _, outs = scan(body, (), [a for a, b in zip(args, batched) if b],
                       unroll=vmap_method == "sequential_unrolled")
    else:
        raise NotImplementedError(
            "vmap is only supported for the ffi_call primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")
    return list(outs), [0] * len(outs)


def _lower(ctx, *operands, target_name, has_side_effect, input_layouts, output_layouts,
           input_output_aliases, custom_call_api_version, legacy_backend_config, attributes,
           **params):
    attrs = {k: v for k, v in attributes}
    rule = build_ffi_lowering_function(
        target_name, has_side_effect=has_side_effect, operand_layouts=input_layouts,
        result_layouts=output_layouts, operand_output_aliases=dict(input_output_aliases),
        api_version=custom_call_api_version, backend_config=legacy_backend_config)
    return rule(ctx, *operands, **attrs)


ffi_call_p = define_primitive(
    "ffi_call", multiple_results=True, impl=_impl, eager=_eager,
    abstract_eval=_abstract_eval, effects=_effects, jvp=_jvp, transpose=NO_TRANSPOSE,
    batch=_batch, lower=_lower,
    samples=no_samples("an FFI call needs a handler compiled and registered with XLA"))

