"""Prints a closed jaxpr as a StableHLO module (MLIR text) for XLA. Each primitive lowers
itself through its `lower` rule; this module holds the printer and the shared helpers.
Imports core, dtypes and numpy only (never jaxlib).

Lowering API (stable: control flow and every primitive family build on it)
---------------------------------------------------------------------------
A rule is ``lower(ctx, *operands, **params) -> Value | list[Value]`` (a list exactly when
the primitive has multiple results). Each operand is a ``Value``: ``.name`` is its SSA
name ("%3", "%5#1"), ``.aval`` its ShapedArray, ``.type`` its MLIR type
("tensor<2x3xf32>"). ``ctx.avals_in`` / ``ctx.avals_out`` are the equation's avals.

``ctx`` (a FunctionContext) emits ops in MLIR's generic form:

* ``ctx.op(name, operands, result, attrs=None, regions=())`` emits one op; ``result`` is
  one aval (returns one Value) or a list of avals (returns a list). ``attrs`` maps
  attribute names to attribute text; ``i64_array([1, 2])`` gives ``array<i64: 1, 2>``.
* ``ctx.region(arg_avals, body)`` builds a region for ``regions=``: ``body(ctx, *args)``
  returns the Values that the region yields (``stablehlo.return``).
* ``ctx.constant(value, aval=None)``, ``ctx.full(value, shape, dtype)``,
  ``ctx.broadcast(x, shape)``, ``ctx.convert(x, dtype)``, ``ctx.compare(x, y, "LT")``,
  ``ctx.select(p, t, f)``, ``ctx.binary(name, x, y)``, ``ctx.unary(name, x)``,
  ``ctx.reshape(x, shape)``, ``ctx.slice(x, starts, limits)``,
  ``ctx.slice_in_dim(x, start, limit, axis)``, ``ctx.concatenate(xs, dim)``: the common
  small things (binary/compare broadcast a rank-0 operand to the other's shape).
* ``ctx.lower_jaxpr(closed, args, scope=())`` lowers a (closed) jaxpr inline and
  returns its outputs, its equations' names under ``scope`` (e.g. ``("while", "body")``);
  ``ctx.call(closed, args, name)`` lowers it once as a private ``func.func`` and emits a
  ``func.call``.
* Every op carries a location naming it as JAX does: the name stack (the jitted
  function, ``jax.named_scope`` names and transformations, and the scopes of the enclosing
  control flow, e.g. ``jit(f)/jvp(foo)/while/body``) and the primitive's name; XLA's
  metadata (``op_name``) shows it in HLO text with ``debug_info=True``.
* ``ctx.module`` is the ModuleContext (module name, num_replicas, and host_callbacks:
  Python callables that custom calls to XLA's CPU callback target address by index;
  modules with callbacks are compiled without the caches). For a pmap, ``axis_env`` holds
  the named axes that its replicas form; collectives read ``ctx.module.replica_groups(
  names)`` and ``ctx.module.axis_position(name)`` (stride and size of a named axis).

For example a while loop is ``ctx.op("stablehlo.while", carry, [v.aval for v in carry],
regions=[ctx.region(avals, cond_body), ctx.region(avals, body)])``.
"""
from __future__ import annotations

import heapq
import itertools
import math
import operator
import re
import warnings
from typing import NamedTuple

import ml_dtypes
import numpy as np

from pyjax._src import config, dtypes, monitoring
from pyjax._src import layout as layout_mod
from pyjax._src import shape_poly
from pyjax._src.shape_poly import is_symbolic_dim
from pyjax._src import sharding as sharding_mod
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core import source_info
from pyjax._src.core.jaxpr import ClosedJaxpr, DropVar, Literal
from pyjax._src.core.tokens import AbstractToken


class LoweringError(NotImplementedError):
    """A jaxpr cannot be printed as StableHLO (a primitive without a lowering)."""


# --- types and attributes -----------------------------------------------------------------

_ELEMENT_TYPES = {
    dtypes.bool_: "i1", dtypes.int8: "i8", dtypes.int16: "i16", dtypes.int32: "i32",
    dtypes.int64: "i64", dtypes.uint8: "ui8", dtypes.uint16: "ui16", dtypes.uint32: "ui32",
    dtypes.uint64: "ui64", dtypes.float16: "f16", dtypes.bfloat16: "bf16",
    dtypes.float32: "f32", dtypes.float64: "f64", dtypes.complex64: "complex<f32>",
    dtypes.complex128: "complex<f64>", dtypes.float0: "i1",
}
for _name, _mlir in (("float8_e4m3fn", "f8E4M3FN"), ("float8_e5m2", "f8E5M2"),
                     ("float8_e4m3fnuz", "f8E4M3FNUZ"), ("float8_e5m2fnuz", "f8E5M2FNUZ"),
                     ("float8_e4m3b11fnuz", "f8E4M3B11FNUZ"), ("float8_e4m3", "f8E4M3"),
                     ("float8_e3m4", "f8E3M4"), ("float8_e8m0fnu", "f8E8M0FNU"),
                     ("float4_e2m1fn", "f4E2M1FN"), ("int4", "i4"), ("uint4", "ui4"),
                     ("int2", "i2"), ("uint2", "ui2")):
    if hasattr(ml_dtypes, _name):
        _ELEMENT_TYPES[np.dtype(getattr(ml_dtypes, _name))] = _mlir

_tensor_types: dict[tuple, str] = {}


def element_type(dtype):
    try:
        return _ELEMENT_TYPES[np.dtype(dtype)]
    except KeyError:
        raise LoweringError(f"dtype {dtype} has no StableHLO element type") from None


def tensor_type(aval):
    """MLIR type of an aval: tensor<2x3xf32>, tensor<i1> for a scalar bool, and
    !stablehlo.token for a token."""
    if type(aval) is AbstractToken:
        return "!stablehlo.token"
    key = (aval.shape, aval.dtype)
    text = _tensor_types.get(key)
    if text is None:
        if any(map(is_symbolic_dim, aval.shape)):    # a dynamic dimension: ?
            dims = "".join("?x" if is_symbolic_dim(d) else f"{d}x" for d in aval.shape)
            return f"tensor<{dims}{element_type(aval.dtype)}>"
        _check_addressable(aval)
        dims = "".join(f"{d}x" for d in aval.shape)
        text = _tensor_types[key] = f"tensor<{dims}{element_type(aval.dtype)}>"
    return text


# XLA sizes buffers in int64 bytes and aborts the process on a larger one.
_MAX_BUFFER_BYTES = 2**63 - 1


def _check_addressable(aval):
    nbytes = math.prod(aval.shape) * dtypes.itemsize_bits(aval.dtype) // 8
    if nbytes > _MAX_BUFFER_BYTES:
        raise ValueError(
            f"The program needs an array of shape {tuple(aval.shape)} and dtype "
            f"{np.dtype(aval.dtype).name}: {nbytes} bytes, more than XLA can address "
            f"(2**63 - 1 bytes). Check the shapes the function builds (e.g. an outer "
            f"product or broadcast of large arrays).")


def i64_array(values):
    """A dense i64 array attribute: array<i64: 1, 2>."""
    values = [int(v) for v in values]
    return f"array<i64: {', '.join(map(str, values))}>" if values else "array<i64>"


def i64_attr(value):
    return f"{int(value)} : i64"


def _float_text(value, dtype):
    """A float as an MLIR literal: decimal when finite (exact), else its bit pattern."""
    value = np.asarray(value, dtype)
    if np.isfinite(value) and dtype.itemsize >= 2:
        text = repr(float(value))
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    bits = value.view(f"u{dtype.itemsize}")
    return f"0x{int(bits):0{2 * dtype.itemsize}X}"


def _scalar_text(value, dtype):
    if dtype == np.bool_ or dtype == dtypes.float0:
        return "true" if bool(value) else "false"
    if dtype.kind in "iu":
        return str(int(value))
    if dtype.kind == "c":
        part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        return f"({_float_text(value.real, part)}, {_float_text(value.imag, part)})"
    return _float_text(value, dtype)


def dense_attr(value, aval):
    """dense<...> : tensor<...> for a numpy value; splats print one element, other arrays
    their raw little-endian bytes."""
    value = np.asarray(value)
    if aval.dtype == dtypes.float0:
        value = np.zeros(aval.shape, np.bool_)
    elif value.dtype != aval.dtype:
        value = value.astype(aval.dtype)
    flat = value.reshape(-1)
    if flat.size == 0:
        raise LoweringError("dense_attr of an empty array; use ctx.constant")
    if (flat == flat[0]).all() or (value.dtype.kind in "fc" and np.isnan(flat).all()):
        body = _scalar_text(flat[0], value.dtype)
    elif value.dtype == np.bool_:
        body = '"0x' + flat.astype(np.uint8).tobytes().hex().upper() + '"'
    else:
        body = '"0x' + np.ascontiguousarray(flat).astype(
            value.dtype.newbyteorder("<")).tobytes().hex().upper() + '"'
    return f"dense<{body}> : {tensor_type(aval)}"


def comparison_type(dtype):
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return "FLOAT"
    return "SIGNED" if dtype.kind == "i" else "UNSIGNED"


# --- values, regions, contexts ----------------------------------------------------------

class Value:
    """An SSA value of the module being printed."""

    __slots__ = ("name", "aval")

    def __init__(self, name, aval):
        self.name, self.aval = name, aval

    @property
    def type(self):
        return tensor_type(self.aval)

    def __repr__(self):
        return f"Value({self.name}: {self.type})"


class Region:
    """A region's printed lines, ready to be attached to an op."""

    __slots__ = ("lines",)

    def __init__(self, lines):
        self.lines = lines


# The backend_config of an InspectSharding custom call until compiling fills in the key
INSPECT_SHARDING_SLOT = "pyjax.inspect_sharding.{}"


class ModuleContext:
    """Module-wide state: its name, replica count, the named axes its replicas form, and
    the private functions printed."""

    def __init__(self, name, num_replicas=1, axis_env=(), mesh=None):
        self.name = name
        self.num_replicas = num_replicas
        self.mesh = mesh              # the mesh of an SPMD-partitioned module, or None
        # ((axis name, size), ...), outermost first: replica ids number the axes' index
        # tuples in row-major order (a single pmap: one axis, replica id = index). In a
        # partitioned module the mesh axes number the partitions (shard_map's bodies).
        self.axis_env = tuple(axis_env) if mesh is None else \
            tuple(zip(mesh.axis_names, mesh.axis_sizes))
        self.manual_axes = ()         # mesh axes manual where lowering is (shard_map bodies)
        self.extra_meshes = {}        # Shardy mesh name -> its value, besides @mesh
        self._channels = itertools.count(1)
        self._sharding_groups = itertools.count()
        self.functions = []          # lists of (text, origin) lines, main first
        self._names = set()
        self._lowered = {}           # id(closed jaxpr) -> (closed, function name)
        self.host_callbacks = []     # Python callables of the module's custom calls
        # whether a function of the module has dynamic (symbolic) dimensions: compiling
        # then refines them from @main's static shapes (an inlined shape-polymorphic
        # export), or cannot compile at all (@main's own are symbolic: jax.export's)
        self.dynamic_shapes = False
        # a shape-polymorphic @main: each dimension variable's value as an expression
        # of the synthetic variables (name -> (argument index, dimension)) that stand
        # for its arguments' dimension sizes; the values, while @main is lowered
        self.dim_solution, self.dim_sources = {}, {}
        self.dim_values = {}
        # jax.debug.inspect_array_sharding's (callback, rank, placeholder or None)
        self.sharding_inspections = []

    def inspect_sharding(self, callback, ndim):
        """Registers a callback to call with the sharding of a value of rank `ndim` when
        the module compiles. Returns None on one device (the callback gets that device's
        sharding), else the backend_config placeholder of the value's InspectSharding
        custom call, which compiling replaces with the key of XLA's partitioner callback."""
        partitioned = self.mesh is not None and self.mesh.size > 1
        placeholder = INSPECT_SHARDING_SLOT.format(len(self.sharding_inspections)) \
            if partitioned else None
        self.sharding_inspections.append((callback, ndim, placeholder))
        return placeholder

    def axis_position(self, name):
        """(stride, size) of axis `name` in the replica numbering."""
        stride = 1
        for bound, size in reversed(self.axis_env):
            if bound == name:
                return stride, size
            stride *= size
        raise LoweringError(
            f"a collective refers to axis {name!r}, which no pmap being compiled here "
            f"binds (axes of this module: {[n for n, _ in self.axis_env] or 'none'}). "
            "Collectives inside jit need an enclosing pmap or vmap with that axis_name.")

    def declare_mesh(self, name, value):
        """Declares a module-level Shardy mesh `name` (e.g. "<[]>") and returns it."""
        self.extra_meshes[name] = value
        return name

    def mesh_name(self, mesh, what):
        """The Shardy mesh symbol a sharding over `mesh` (a Mesh or AbstractMesh) names:
        @mesh for the module's own axes, else one declared for its axes over the same
        devices (as JAX names each mesh of a program, e.g. one that use_abstract_mesh
        renamed or reshaped). LoweringError, naming `what`, for other devices."""
        own = self.mesh
        if own is None or mesh.size != own.size or (
                isinstance(mesh, sharding_mod.Mesh)
                and mesh._flat_devices != own._flat_devices):
            raise LoweringError(
                f"{what} in a program partitioned over {own}: every sharding in one jit "
                "must use the same devices in the same order.")
        if mesh.shape_tuple == own.shape_tuple:
            return "mesh"
        value = sharding_mod.shardy_mesh(mesh)
        named = {v: k for k, v in self.extra_meshes.items()}
        return named.get(value) or self.declare_mesh(f"mesh_{len(self.extra_meshes)}",
                                                     value)

    def replica_group_ids(self, names, index_groups=None):
        """The replica groups of a collective over the axes `names` as an integer array
        (one row per group, ordered by the index along those axes, the first name
        outermost): replicas that differ only in their index along those axes.
        `index_groups` (lax's axis_index_groups: lists of indices along the axes) splits
        each row into those subgroups; shorter subgroups are padded with -1, as XLA reads
        uneven groups."""
        axis_names = [n for n, _ in self.axis_env]
        for name in names:
            self.axis_position(name)
        sizes = [size for _, size in self.axis_env]
        ids = np.arange(int(np.prod(sizes, dtype=np.int64))).reshape(sizes)
        inner = [axis_names.index(n) for n in names]
        outer = [i for i in range(len(sizes)) if i not in inner]
        rows = ids.transpose(outer + inner).reshape(-1, int(np.prod(
            [sizes[i] for i in inner], dtype=np.int64)))
        if index_groups is None:
            return rows
        width = max(len(g) for g in index_groups)
        return np.array([[row[i] for i in g] + [-1] * (width - len(g))
                         for row in rows for g in index_groups], np.int64)

    def collective_attrs(self, names, global_ids=True, index_groups=None):
        """A collective's attributes: its replica groups over the axes `names` (split by
        `index_groups`, see replica_group_ids); in a partitioned module also a channel
        (its groups then hold partition ids; ops that take it say so with
        use_global_device_ids)."""
        attrs = {"replica_groups": self.replica_groups(names, index_groups)}
        attrs.update(self.channel_attrs())
        if self.mesh is not None and global_ids:
            attrs["use_global_device_ids"] = "unit"
        return attrs

    def channel_attrs(self):
        """In a partitioned module, a fresh channel: collectives then run between
        partitions (without one, between replicas)."""
        if self.mesh is None:
            return {}
        return {"channel_handle":
                f"#stablehlo.channel_handle<handle = {next(self._channels)}, type = 1>"}

    def replica_groups(self, names, index_groups=None):
        """replica_group_ids(names, index_groups) as a dense i64 attribute."""
        groups = self.replica_group_ids(names, index_groups)
        rows = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
        return f"dense<[{rows}]> : tensor<{groups.shape[0]}x{groups.shape[1]}xi64>"

    def inline_module(self, text, name):
        """Adds the functions of the MLIR module `text` as private functions, each symbol
        renamed to one unused here (its @main named after `name`); a Shardy mesh equal to
        this module's becomes @mesh, another one a mesh of its own. Returns @main's new
        name."""
        lines = text.rstrip().splitlines()[1:-1]   # inside `module @... {` ... `}`
        renames = {}
        for line in lines:
            found = _SYMBOL_DEF.match(line)
            if found is None:
                continue
            kind, symbol = found.group(1), found.group(2)
            if kind == "sdy.mesh":
                value = line.split("=", 1)[1].strip()
                own = self.mesh is not None and sharding_mod.shardy_mesh(self.mesh) == value
                renames[symbol] = "mesh" if own else next(
                    (k for k, v in self.extra_meshes.items() if v == value), None) or \
                    self.declare_mesh(self.unique_name(f"mesh_{symbol}"), value)
            else:
                renames[symbol] = self.unique_name(name if symbol == "main" else symbol)

        def rename(match):
            return "@" + renames.get(match.group(1), match.group(1))
        body = []
        for line in lines:
            found = _SYMBOL_DEF.match(line)
            if found is not None and found.group(1) == "sdy.mesh":
                continue
            line = _SYMBOL_USE.sub(rename, line)
            if found is not None:
                line = _DONATION_ATTR.sub("", line.replace(" public @", " private @"))
                line = _EMPTY_ATTRS.sub(">", line)
            body.append((line, None))
        self.functions.append(body)
        return renames["main"]

    def sharding_group_id(self):
        """A new id for a Shardy sharding group (values laid out alike) of this module."""
        return next(self._sharding_groups)

    def unique_name(self, base):
        base = sanitize_symbol(base)
        name, i = base, 0
        while name in self._names:
            i += 1
            name = f"{base}_{i}"
        self._names.add(name)
        return name


def _attr_text(attrs, metadata=None):
    """An op's attribute dictionary; XLA metadata becomes its mhlo.frontend_attributes."""
    items = [f"{k} = {v}" for k, v in (attrs or {}).items()]
    if metadata:
        items.append(f"mhlo.frontend_attributes = {frontend_attributes(metadata)}")
    return (" {" + ", ".join(items) + "}") if items else ""


def _attr_string(value):
    """How XLA metadata values print: bools as true/false, the rest as str()."""
    return str(value).lower() if isinstance(value, bool) else str(value)


_BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")


def _quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def frontend_attributes(metadata):
    """The mhlo.frontend_attributes dictionary for XLA metadata {name: value}, sorted by
    name as MLIR prints dictionaries."""
    entries = sorted((str(k), _attr_string(v)) for k, v in metadata.items())
    return "{" + ", ".join(f"{k if _BARE_NAME.match(k) else _quote(k)} = {_quote(v)}"
                           for k, v in entries) + "}"


class FunctionContext:
    """Emits the ops of one function body (or of a region inside it)."""

    def __init__(self, module, indent="    ", counter=None, name_stack=""):
        self.module = module
        self.indent = indent
        self.lines = []
        self._counter = itertools.count() if counter is None else counter
        self.avals_in, self.avals_out = (), ()
        self.origin = None           # the equation being lowered, for error messages
        # the name stack of the equation being lowered ('jit(f)/foo'), and the location
        # of the ops it emits (' loc("jit(f)/foo/sin")'), as JAX names them
        self.name_stack = name_stack
        self._scope, self._eqn_stack = name_stack, source_info.EMPTY_NAME_STACK
        self._loc = _location(name_stack) if name_stack else ""
        # result name -> (line index, text before the attributes, attributes, text after,
        # XLA metadata), so that tag_defining_op can add metadata to the op defining a value
        self._defs = {}

    def fresh(self):
        return f"%{next(self._counter)}"

    def emit(self, text):
        self.lines.append((self.indent + text, self.origin))

    # -- ops --
    def op(self, name, operands, result, attrs=None, regions=()):
        single = isinstance(result, (ShapedArray, AbstractToken))
        if name in _DYNAMIC_FORMS and single and any(map(is_symbolic_dim, result.shape)):
            # a result of symbolic shape: the dynamic op, given its shape as a value
            return self.op(_DYNAMIC_FORMS[name], [*operands, self.shape_value(result.shape)],
                           result, attrs)
        outs = [result] if single else list(result)
        res = self.fresh() if outs else ""
        if len(outs) == 1:
            values = [Value(res, outs[0])]
            lhs = f"{res} = "
        else:
            values = [Value(f"{res}#{i}", a) for i, a in enumerate(outs)]
            lhs = f"{res}:{len(outs)} = " if outs else ""
        args = ", ".join(v.name for v in operands)
        metadata = self.origin.ctx.xla_metadata if self.origin is not None \
            and name != "stablehlo.return" else None
        in_types = ", ".join(v.type for v in operands)
        out_types = tensor_type(outs[0]) if len(outs) == 1 else \
            "(" + ", ".join(tensor_type(a) for a in outs) + ")"
        signature = f" : ({in_types}) -> {out_types}"
        if not regions:
            self._emit_op(res, f'{lhs}"{name}"({args})', attrs, signature, metadata)
        else:
            self.emit(f'{lhs}"{name}"({args}) ({{')
            for i, region in enumerate(regions):
                if i:
                    self.emit("}, {")
                self.lines.extend(region.lines)
            self._emit_op(res, "})", attrs, signature, metadata)
        return values[0] if single else values

    def _emit_op(self, result, head, attrs, tail, metadata):
        tail += self._loc
        if result:
            self._defs[result] = (len(self.lines), head, attrs, tail, metadata)
        self.emit(head + _attr_text(attrs, metadata) + tail)

    def tag_defining_op(self, value, metadata):
        """Adds `metadata` to the frontend attributes of the op in this function body
        that defines `value` (attributes it has already win); a block argument or a value
        of an enclosing body is left as is."""
        entry = self._defs.get(value.name.split("#")[0])
        if entry is None or not metadata:
            return
        index, head, attrs, tail, existing = entry
        merged = {**metadata, **(existing or {})}
        self._defs[value.name.split("#")[0]] = (index, head, attrs, tail, merged)
        self.lines[index] = (self.indent + head + _attr_text(attrs, merged) + tail,
                             self.lines[index][1])

    def region(self, arg_avals, body, terminator="stablehlo.return"):
        """A region whose block takes `arg_avals`; body(ctx, *args) returns the yields."""
        inner = FunctionContext(self.module, self.indent + "  ", self._counter)
        inner.origin, inner.name_stack, inner._loc = self.origin, self.name_stack, self._loc
        inner._scope, inner._eqn_stack = self._scope, self._eqn_stack
        args = [Value(inner.fresh(), a) for a in arg_avals]
        if args:
            params = ", ".join(f"{v.name}: {v.type}" for v in args)
            inner.lines.append((self.indent + f"^bb0({params}):", self.origin))
        outs = body(inner, *args)
        outs = [outs] if isinstance(outs, Value) else list(outs)
        inner.op(terminator, outs, [])
        return Region(inner.lines)

    def manual_computation(self, axes, operands, in_specs, block_avals, out_avals,
                           out_specs, body):
        """Shardy's sdy.manual_computation: the mesh axes `axes` become manual (besides
        those already manual here). Operands and results are split over them as the
        PartitionSpecs say; body(ctx, *blocks) returns the per-device results, lowered
        with those axes manual (collectives and axis_index read it)."""
        mesh = self.module.mesh
        before = self.module.manual_axes
        if math.prod(mesh.shape[a] for a in axes) == 1:
            # blocks are whole values: the body is lowered in place, as JAX does (a
            # manual computation on one partition leaves custom calls XLA cannot run)
            self.module.manual_axes = before + tuple(axes)
            try:   # (typed as the body's blocks: rules read their manual axis types)
                return body(self, *[Value(x.name, a) for x, a in zip(operands, block_avals)])
            finally:
                self.module.manual_axes = before
        # Where some axes stay automatic, the partitioner may split blocks over them.
        partial = len(self.module.manual_axes) + len(axes) < len(mesh.axis_names)

        def per_value(specs, avals):
            texts = [sharding_mod.NamedSharding(mesh, s).to_shardy(a.ndim, open_dims=partial)
                     [len("#sdy.sharding"):] for s, a in zip(specs, avals)]
            return f"#sdy.sharding_per_value<[{', '.join(texts)}]>"

        names = ", ".join(f'"{n}"' for n in axes)
        attrs = {"in_shardings": per_value(in_specs, [x.aval for x in operands]),
                 "out_shardings": per_value(out_specs, out_avals),
                 "manual_axes": f"#sdy<manual_axes{{{names}}}>"}
        self.module.manual_axes = before + tuple(axes)
        try:
            region = self.region(block_avals, body, terminator="sdy.return")
        finally:
            self.module.manual_axes = before
        return self.op("sdy.manual_computation", list(operands),
                       [a.strip_weak_type() for a in out_avals], attrs, regions=[region])

    # -- symbolic dimensions --
    def dim_value(self, d):
        """The value of dimension `d` (an int or a symbolic dimension) as a tensor<i32>,
        computed from @main's argument shapes."""
        try:
            return shape_poly.evaluate_dim(d, self.module.dim_values, _DimOps(self))
        except shape_poly.UnexpectedDimVar:
            raise NotImplementedError(
                f"Lowering an op whose shape has the symbolic dimension '{d}' inside a "
                f"function other than the exported @main (origin: {self.origin}) is not "
                "supported by pyjax's shape polymorphism") from None

    def shape_value(self, shape):
        """`shape` as a tensor<Nxi32>, the shape operand of dynamic ops."""
        one = ShapedArray((1,), np.int32)
        return self.concatenate([self.op("stablehlo.reshape", [self.dim_value(d)], one)
                                 for d in shape], 0)

    # -- small helpers --
    def constant(self, value, aval=None):
        if aval is None:
            value = np.asarray(value)
            aval = ShapedArray(value.shape, value.dtype)
        if any(map(is_symbolic_dim, aval.shape)):   # a splat of dynamic shape
            splat = np.asarray(value).reshape(-1)[:1].reshape(())
            return self.broadcast(self.constant(splat, ShapedArray((), aval.dtype)),
                                  aval.strip_weak_type().shape)
        if aval.size == 0:   # no literal form needed: broadcast a scalar
            zero = self.constant(np.zeros((), aval.dtype), ShapedArray((), aval.dtype))
            return self.op("stablehlo.broadcast_in_dim", [zero], aval.strip_weak_type(),
                           {"broadcast_dimensions": i64_array(())})
        return self.op("stablehlo.constant", [], aval.strip_weak_type(),
                       {"value": dense_attr(value, aval)})

    def full(self, value, shape, dtype):
        """A splat constant of `shape`."""
        dtype = np.dtype(dtype)
        if any(map(is_symbolic_dim, shape)):
            return self.constant(np.full((), value, dtype), ShapedArray(shape, dtype))
        return self.constant(np.full(shape, value, dtype), ShapedArray(shape, dtype))

    def unary(self, name, x, out_dtype=None):
        aval = x.aval if out_dtype is None else x.aval.update(dtype=out_dtype)
        return self.op(name, [x], aval)

    @staticmethod
    def _elementwise_shape(x, y):
        """lax's rule: equal ranks whose dims agree or are 1, or a rank-0 operand."""
        xs, ys = x.aval.shape, y.aval.shape
        return (tuple(a if b == 1 else b for a, b in zip(xs, ys)) if len(xs) == len(ys)
                else (xs if xs else ys))

    def binary(self, name, x, y, out_dtype=None):
        shape = self._elementwise_shape(x, y)
        x, y = self.broadcast(x, shape), self.broadcast(y, shape)
        aval = x.aval if out_dtype is None else x.aval.update(dtype=out_dtype)
        return self.op(name, [x, y], aval)

    def typed_broadcast(self, x, shape):
        """An operand of an elementwise op broadcast to its result's shape, constrained
        to the split of the result's type (as JAX does) in a partitioned module when it
        is typed otherwise (and is not a partial sum or reduced)."""
        out = self.broadcast(x, shape)
        if self.module.mesh is None or self.module.manual_axes \
                or len(self.avals_out) != 1 or self.avals_out[0].shape != out.aval.shape:
            return out
        typed = x.aval._sharding
        if out is x and (typed == self.avals_out[0]._sharding or (typed is not None and (
                typed.spec.unreduced or typed.spec.reduced))):
            return out
        return self._constrain_to_type(out, self.avals_out[0])

    def broadcast(self, x, shape):
        """x broadcast to `shape` (x is rank 0 or has the same rank with 1s to stretch)."""
        shape = tuple(shape)
        if x.aval.shape == shape:
            return x
        dims = range(x.aval.ndim) if x.aval.ndim else ()
        return self.op("stablehlo.broadcast_in_dim", [x], x.aval.update(shape=shape),
                       {"broadcast_dimensions": i64_array(dims)})

    def convert(self, x, dtype):
        dtype = np.dtype(dtype)
        if x.aval.dtype == dtype:
            return x
        if dtypes.is_complex(x.aval.dtype) and not dtypes.is_complex(dtype):
            x = self.unary("stablehlo.real", x, dtypes.real_dtype(x.aval.dtype))
            if x.aval.dtype == dtype:
                return x
        if dtype == np.bool_:
            return self.compare(x, self.full(0, (), x.aval.dtype), "NE")
        return self.unary("stablehlo.convert", x, dtype)

    def compare(self, x, y, direction, total_order=False):
        """x <direction> y; total_order orders floats as IEEE totalOrder does (-0 < +0,
        NaNs by sign and payload) instead of by value."""
        shape = self._elementwise_shape(x, y)
        x, y = self.broadcast(x, shape), self.broadcast(y, shape)
        kind = comparison_type(x.aval.dtype)
        if total_order and kind == "FLOAT":
            kind = "TOTALORDER"
        attrs = {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                 "compare_type": f"#stablehlo<comparison_type {kind}>"}
        return self.op("stablehlo.compare", [x, y], ShapedArray(shape, np.bool_), attrs)

    def select(self, pred, on_true, on_false):
        return self.op("stablehlo.select", [pred, on_true, on_false], on_true.aval)

    def slice(self, x, starts, limits, strides=None):
        strides = strides or (1,) * x.aval.ndim
        shape = tuple((hi - lo + s - 1) // s for lo, hi, s in zip(starts, limits, strides))
        return self.op("stablehlo.slice", [x], x.aval.update(shape=shape),
                       {"start_indices": i64_array(starts), "limit_indices": i64_array(limits),
                        "strides": i64_array(strides)})

    def slice_in_dim(self, x, start, limit, axis):
        starts, limits = [0] * x.aval.ndim, list(x.aval.shape)
        starts[axis], limits[axis] = start, limit
        return self.slice(x, starts, limits)

    def concatenate(self, xs, dimension):
        if len(xs) == 1:
            return xs[0]
        shape = list(xs[0].aval.shape)
        shape[dimension] = sum(x.aval.shape[dimension] for x in xs)
        return self.op("stablehlo.concatenate", list(xs), xs[0].aval.update(shape=shape),
                       {"dimension": i64_attr(dimension)})

    def reshape(self, x, shape):
        shape = tuple(shape)
        if x.aval.shape == shape:
            return x
        return self.op("stablehlo.reshape", [x], x.aval.update(shape=shape))

    # -- sub-jaxprs --
    def lower_jaxpr(self, closed, args, scope=()):
        """Lowers a ClosedJaxpr (or a Jaxpr without constvars) inline; returns outputs.
        Its equations are named under this equation's name stack and `scope`."""
        jaxpr, consts = (closed.jaxpr, closed.consts) if isinstance(closed, ClosedJaxpr) \
            else (closed, ())
        env = {}
        for v, c in zip(jaxpr.constvars, consts):
            env[v] = c if isinstance(c, Value) else self.constant(np.asarray(c), v.aval)
        if len(args) != len(jaxpr.invars):
            raise LoweringError(f"jaxpr takes {len(jaxpr.invars)} arguments, "
                                f"got {len(args)}")
        env.update(zip(jaxpr.invars, args))
        saved = (self.avals_in, self.avals_out, self.origin, self.name_stack, self._loc,
                 self._scope, self._eqn_stack)
        # an equation's transformations wrap its own scopes, not the enclosing ones
        # ('jit(f)/jvp()/cond' + 'vmap(bar)'), as JAX names them
        self._scope = _join_names(self.name_stack, *scope)
        try:
            for eqn in jaxpr.eqns:
                self._eqn_stack = eqn.source_info[3] if eqn.source_info and len(
                    eqn.source_info) > 3 else source_info.EMPTY_NAME_STACK
                self.name_stack = _join_names(self._scope, str(self._eqn_stack))
                self._loc = _location(_join_names(self.name_stack, eqn.primitive.name))
                ins = [self._literal(x) if type(x) is Literal else env[x] for x in eqn.invars]
                outs = self._lower_eqn(eqn, ins)
                for v, out in zip(eqn.outvars, outs):
                    if type(v) is not DropVar:
                        env[v] = out
        finally:
            (self.avals_in, self.avals_out, self.origin, self.name_stack, self._loc,
             self._scope, self._eqn_stack) = saved
        return [self._literal(v) if type(v) is Literal else env[v] for v in jaxpr.outvars]

    def _literal(self, lit):
        return self.constant(np.asarray(lit.val, lit.aval.dtype), lit.aval)

    def _lower_eqn(self, eqn, ins):
        prim = eqn.primitive
        rule = prim.lower
        if not rule:
            advice = ("Run it outside jit, or select the NumPy executor with "
                      "jax.config.update('pyjax_executor', 'numpy').")
            message = getattr(rule, "message", None)
            if message is not None:   # nobody wrote one: JAX's error, as JAX words it
                raise NotImplementedError(
                    f"{message} (register one with jax.interpreters.mlir."
                    f"register_lowering and mlir.lower_fun). {advice}")
            reason = getattr(rule, "reason", "no rule was written for this primitive")
            raise LoweringError(
                f"Primitive '{prim.name}' cannot be compiled with XLA: {reason}. {advice}")
        self.avals_in = [v.aval for v in ins]
        self.avals_out = [v.aval for v in eqn.outvars]
        self.origin = eqn
        outs = rule(self, *ins, **eqn.params)
        outs = list(outs) if prim.multiple_results else [outs]
        if len(outs) != len(eqn.outvars) or any(
                not isinstance(o, Value) or not o.aval.same_type(v.aval)
                for o, v in zip(outs, eqn.outvars)):
            raise LoweringError(
                f"lowering of '{prim.name}' returned {outs}, expected values of types "
                f"{[v.aval.str_short(True) for v in eqn.outvars]}")
        if not (prim.is_higher_order or prim.lowers_own_sharding):
            outs = self.constrained_to_types(outs, [v.aval for v in eqn.outvars])
        return outs

    def constrained_to_types(self, values, avals):
        """`values` each constrained to the split its type `avals` says, in a module
        partitioned by XLA (as JAX lowers every typed result: ops', and cond's and
        while's)."""
        if self.module.mesh is None:
            return values
        return [self._constrain_to_type(v, a) for v, a in zip(values, avals)]

    def _constrain_to_type(self, value, aval):
        """A value whose type is split over the mesh's Explicit axes is constrained to
        that split (as JAX does), so XLA's partitioner lays it out as the type says."""
        typed = aval._sharding
        if typed is None or not typed.mesh.explicit_axes \
                or typed.mesh.size != self.module.mesh.size:
            return value   # (a type over Auto axes leaves the layout to XLA)
        name = self.module.mesh_name(typed.mesh, f"a value of type {aval.str_short(True)}")
        attr = typed.to_shardy(aval.ndim, mesh_name=name, as_type=True)
        return self.op("sdy.sharding_constraint", [value], value.aval, {"sharding": attr})

    def function(self, closed, name, dim_vars=()):
        """The symbol of `closed` lowered as a private function named after `name`
        (printed once per jaxpr per module); with `dim_vars`, it takes the values of
        those dimension variables first (JAX's jax.global_constant arguments)."""
        key = (id(closed), dim_vars)
        fname = self.module._lowered.get(key, (None, None))[1]
        if fname is None:
            fname = self.module.unique_name(name)
            self.module._lowered[key] = (closed, fname)
            _lower_function(self.module, fname, closed.jaxpr, closed.consts, "private",
                            dim_vars=dim_vars)
        return fname

    def private_function(self, name, in_avals, body):
        """The symbol of a new private function named after `name`, taking `in_avals`,
        whose ops `body(ctx, *args)` emits and whose result (a Value or a list of them)
        it returns, its ops named as this equation's: a host callback's function, a
        custom call's called computation."""
        fname = self.module.unique_name(name)
        ctx = FunctionContext(self.module, name_stack=self.name_stack)
        ctx.origin = self.origin
        slot = len(self.module.functions)
        self.module.functions.append(None)        # filled in below, in order
        args = [Value(f"%arg{i}", a) for i, a in enumerate(in_avals)]
        outs = body(ctx, *args)
        outs = [outs] if isinstance(outs, Value) else list(outs)
        self.module.functions[slot] = _function_lines(ctx, fname, "private", args, outs)
        return fname

    def call(self, closed, args, name, call_metadata=None, op_name=None):
        """Calls `closed` as a private function (printed once per jaxpr per module; its
        ops are named from the function's start); the call op carries the equation's
        XLA metadata and `call_metadata`, and is named `op_name` under the name stack
        (the primitive's name if None) as a scope the equation's transformations wrap
        ('jvp(jit(f))', as JAX names a jit's call). In a shape-polymorphic module the
        dimension variables are passed first."""
        dim_vars = tuple(sorted(self.module.dim_values))
        fname = self.function(closed, name, dim_vars)
        metadata = self.origin.ctx.xla_metadata if self.origin is not None else None
        if call_metadata:
            metadata = {**(metadata or {}), **call_metadata}
        args = [*[self.module.dim_values[v] for v in dim_vars], *args]
        if op_name is None:
            return self._call_symbol(fname, args, closed.out_avals, metadata)
        stack = source_info.NameStack((*self._eqn_stack, op_name))
        saved, self._loc = self._loc, _location(_join_names(self._scope, str(stack)))
        try:
            return self._call_symbol(fname, args, closed.out_avals, metadata)
        finally:
            self._loc = saved

    def call_module(self, text, args, out_avals, name):
        """Calls the public @main of another module, given as MLIR text (as jaxlib prints
        it): its functions (and Shardy meshes) join this module as private symbols,
        renamed apart from this module's, and @main's donation attributes are dropped
        (the caller owns its buffers)."""
        fname = self.module.inline_module(text, name)
        return self._call_symbol(fname, args, out_avals, None)

    @property
    def op_location(self):
        """The name of the location that the equation being lowered gives its ops
        ('jit(f)/sin'), as JAX names them."""
        return _join_names(self.name_stack, self.origin.primitive.name if self.origin
                           is not None else "")

    def inline_function(self, body, functions, args, out_avals):
        """Emits here the ops of a function printed by MLIR (`body`: the func.func in
        MLIR's generic form, as mlir_bindings.function_text prints it) on the Values
        `args`, and adds the functions it calls (`functions`: their texts in MLIR's
        form) to the module, renamed apart from its symbols. Returns the Values it
        returns, of `out_avals`."""
        renames = {}
        for text in functions:
            symbol = _SYMBOL_DEF.match(text).group(2)
            renames[symbol] = self.module.unique_name(symbol)
        names = {f"%arg{i}": v.name for i, v in enumerate(args)}

        def rename(match):
            if match.group(1) is not None:   # a symbol
                return "@" + renames.get(match.group(1), match.group(1))
            name = match.group(2)
            if name not in names:
                names[name] = self.fresh()
            return names[name]

        def renamed(line):   # values and symbols renamed outside string literals
            parts = _STRING_LITERAL.split(line)
            parts[::2] = [_VALUE_OR_SYMBOL.sub(rename, p) for p in parts[::2]]
            return "".join(parts)
        lines = body.splitlines()[1:-1]        # inside `"func.func"() ... ({` ... `})`
        if lines and lines[0].startswith("^bb0"):
            lines = lines[1:]                  # the arguments: `args`
        returned = _RETURN.match(lines[-1].strip())
        for line in lines[:-1]:
            self.emit(renamed(line[2:]))
        results = renamed(returned.group(1)).split(", ") if returned.group(1) else []
        for text in functions:
            self.module.functions.append(
                [(_SYMBOL_USE.sub(lambda m: "@" + renames.get(m.group(1), m.group(1)),
                                  line), None) for line in text.splitlines()])
        return [Value(n, a) for n, a in zip(results, out_avals)]

    def _call_symbol(self, fname, args, out_avals, metadata):
        res = self.fresh()
        arg_text = ", ".join(v.name for v in args)
        in_types = ", ".join(v.type for v in args)
        out_types = ", ".join(tensor_type(a) for a in out_avals)
        lhs = f"{res} = " if len(out_avals) == 1 else f"{res}:{len(out_avals)} = " \
            if out_avals else ""
        self._emit_op(res if out_avals else "", f"{lhs}func.call @{fname}({arg_text})",
                      {}, f" : ({in_types}) -> ({out_types})", metadata)
        if len(out_avals) == 1:
            return [Value(res, out_avals[0])]
        return [Value(f"{res}#{i}", a) for i, a in enumerate(out_avals)]


_DYNAMIC_FORMS = {"stablehlo.broadcast_in_dim": "stablehlo.dynamic_broadcast_in_dim",
                  "stablehlo.iota": "stablehlo.dynamic_iota",
                  "stablehlo.reshape": "stablehlo.dynamic_reshape"}


class _DimOps:
    """Arithmetic on dimension values (tensor<i32>) for shape_poly.evaluate_dim: floordiv
    and mod round towards -inf, as Python's."""

    def __init__(self, ctx):
        self.ctx = ctx

    def constant(self, k):
        return self.ctx.constant(np.int32(k))

    def _op(self, name, a, b):
        return self.ctx.op(name, [a, b], a.aval)

    def add(self, a, b):
        return self._op("stablehlo.add", a, b)

    def mul(self, a, b):
        return self._op("stablehlo.multiply", a, b)

    def max(self, a, b):
        return self._op("stablehlo.maximum", a, b)

    def min(self, a, b):
        return self._op("stablehlo.minimum", a, b)

    def _adjust(self, a, b):
        """Whether the truncated remainder of a / b is nonzero and of b's other sign."""
        ctx, zero = self.ctx, self.constant(0)
        r = self._op("stablehlo.remainder", a, b)
        signs_differ = ctx.compare(ctx.compare(r, zero, "LT"), ctx.compare(b, zero, "LT"),
                                   "NE")
        return r, self._op("stablehlo.and", ctx.compare(r, zero, "NE"), signs_differ)

    def floordiv(self, a, b):
        q = self._op("stablehlo.divide", a, b)
        _, fix = self._adjust(a, b)
        return self.ctx.select(fix, self._op("stablehlo.subtract", q, self.constant(1)), q)

    def mod(self, a, b):
        r, fix = self._adjust(a, b)
        return self.ctx.select(fix, self._op("stablehlo.add", r, b), r)


# --- functions and modules --------------------------------------------------------------

def _join_names(*names):
    """Name-stack parts joined as JAX prints them ('jit(f)/foo/sin'), empty ones left
    out."""
    return "/".join(n for n in names if n)


def _location(name):
    """The location an op named `name` carries (MLIR's name location)."""
    return f" loc({_quote(name)})"


def _with_text_position(line, lineno):
    """An op's line whose name location gets the op's place in the module text as its
    child ('loc("jit(f)/sin"("-":3:5))', where MLIR's parser places an op without a
    location), so that XLA's errors still give the line of the failing op."""
    if not line.endswith('")') or ' loc("' not in line:
        return line
    column = len(line) - len(line.lstrip()) + 1
    return f'{line[:-1]}("-":{lineno}:{column}))'


def sanitize_symbol(name):
    out = "".join(c if c.isalnum() or c in "_." else "_" for c in str(name))
    return out if out and not out[0].isdigit() else f"_{out}"


def _lower_function(module, name, jaxpr, consts, visibility, const_args=False,
                    arg_attrs=None, result_attrs=None, name_stack="", dim_vars=()):
    """Prints one func.func. With const_args the constvars become leading arguments;
    before them, the values of the dimension variables `dim_vars`. Its ops are named
    under `name_stack`."""
    ctx = FunctionContext(module, name_stack=name_stack)
    header_slot = len(module.functions)
    module.functions.append(None)        # keeps main first; filled in below
    params = list(jaxpr.constvars) + list(jaxpr.invars) if const_args else jaxpr.invars
    dim_args = [Value(f"%arg{i}", ShapedArray((), np.int32)) for i in range(len(dim_vars))]
    arg_values = [Value(f"%arg{len(dim_vars) + i}", v.aval) for i, v in enumerate(params)]
    outer_dim_values = module.dim_values
    module.dim_values = _dim_values(ctx, arg_values) if name == "main" and \
        visibility == "public" else dict(zip(dim_vars, dim_args))
    dim_attrs = [f'jax.global_constant = "{v}"' for v in dim_vars]
    try:
        _lower_body(module, ctx, header_slot, name, jaxpr, consts, visibility, const_args,
                    arg_values, arg_attrs, result_attrs, list(zip(dim_args, dim_attrs)))
    finally:
        module.dim_values = outer_dim_values


def _dim_values(ctx, arg_values):
    """The values of @main's dimension variables, computed from its arguments' sizes."""
    module = ctx.module
    if not module.dim_solution:
        return {}
    sizes = {}
    for name, (i, d) in module.dim_sources.items():
        sizes[name] = ctx.op("stablehlo.get_dimension_size", [arg_values[i]],
                             ShapedArray((), np.int32), {"dimension": i64_attr(d)})
    ops = _DimOps(ctx)
    return {var: shape_poly.evaluate_dim(e, sizes, ops)
            for var, e in module.dim_solution.items()}


def _lower_body(module, ctx, header_slot, name, jaxpr, consts, visibility, const_args,
                arg_values, arg_attrs, result_attrs, dim_args):
    if const_args:
        n = len(jaxpr.constvars)
        outs = ctx.lower_jaxpr(ClosedJaxpr(jaxpr, arg_values[:n]), arg_values[n:])
    else:
        outs = ctx.lower_jaxpr(ClosedJaxpr(jaxpr, consts), arg_values)
    module.functions[header_slot] = _function_lines(
        ctx, name, visibility, arg_values, outs, arg_attrs, result_attrs, dim_args)


def _function_lines(ctx, name, visibility, arg_values, outs, arg_attrs=None,
                    result_attrs=None, dim_args=()):
    """The lines of a func.func whose body `ctx` printed, returning `outs`."""
    arg_attrs = arg_attrs or {}
    args_text = ", ".join(
        [f"{v.name}: {v.type} {{{attr}}}" for v, attr in dim_args]
        + [f"{v.name}: {v.type}" + (f" {{{arg_attrs[i]}}}" if i in arg_attrs else "")
           for i, v in enumerate(arg_values)])
    out_types = ", ".join(v.type for v in outs)
    result_attrs = result_attrs or {}
    results_text = ", ".join(v.type + (f" {{{result_attrs[i]}}}" if i in result_attrs else "")
                             for i, v in enumerate(outs))
    lines = [(f"  func.func {visibility} @{name}({args_text}) -> ({results_text}) {{", None)]
    lines += ctx.lines
    if outs:
        ret = ", ".join(v.name for v in outs)
        lines.append((f"    return {ret} : {out_types}", None))
    else:
        lines.append(("    return", None))
    lines.append(("  }", None))
    return _renumber(lines)


_SSA_NUMBER = re.compile(r"%(\d+)")
# a module-level symbol of jaxlib's printed text, a use of one, and the donation attributes
_SYMBOL_DEF = re.compile(r"^\s*(func\.func|sdy\.mesh)\s+(?:(?:public|private)\s+)?@([\w.$]+)")
_SYMBOL_USE = re.compile(r"@([\w.$]+)")
# in a function printed by MLIR: its string literals, a symbol or value name, its return
_STRING_LITERAL = re.compile(r'("(?:[^"\\]|\\.)*")')
_VALUE_OR_SYMBOL = re.compile(r"@([\w.$]+)|(%(?:arg)?\d+)")
_RETURN = re.compile(r'"func\.return"\((.*?)\)')
_EMPTY_ATTRS = re.compile(r"> \{\}(?=[,)])")   # what dropping the donation leaves
_DONATION_ATTR = re.compile(r"(tf\.aliasing_output = \d+ : i32|jax\.buffer_donor = true)"
                            r"(, )?")


def _renumber(lines):
    """Renames %N values in order of first appearance (an op's result is named before
    the regions it holds, which were printed first)."""
    names = {}

    def rename(match):
        return "%" + names.setdefault(match.group(1), str(len(names)))
    return [(_SSA_NUMBER.sub(rename, text), origin) for text, origin in lines]


class LoweredModule:
    """The printed module and what running it needs: the argument layout (constants
    first), input-output aliases from donation, and each line's source equation."""

    def __init__(self, text, origins, const_avals, in_avals, out_avals, donation,
                 host_callbacks=(), sharding_inspections=(), mesh=None,
                 dynamic_shapes=False):
        self.text, self.origins = text, origins
        self.dynamic_shapes = dynamic_shapes   # see ModuleContext.dynamic_shapes
        self.const_avals, self.in_avals, self.out_avals = const_avals, in_avals, out_avals
        self.donation = donation   # a Donation
        # Python functions that custom calls to XLA's CPU callback target invoke, by index
        self.host_callbacks = list(host_callbacks)
        # (callback, rank, placeholder) to call with shardings as it compiles (see
        # ModuleContext.inspect_sharding), and the mesh it is partitioned over
        self.sharding_inspections = list(sharding_inspections)
        self.mesh = mesh

    def describe_line(self, lineno):
        """The text of line `lineno` (1-based) and the equation it came from."""
        if not 1 <= lineno <= len(self.origins):
            return None
        text = self.text.splitlines()[lineno - 1].strip()
        eqn = self.origins[lineno - 1]
        if eqn is None:
            return text
        where = eqn.source_info
        place = f" at {where[0]}:{where[1]}" if where else ""
        return f"{text}\n  (lowered from the '{eqn.primitive.name}' equation{place})"


class Donation(NamedTuple):
    """What becomes of a computation's donated inputs (by input index), as JAX decides:
    `aliases` maps an input to the output of its shape and dtype that reuses its buffer;
    `donors` are given to XLA to reuse as it can (an output of as many elements, or any
    output in a program partitioned with results XLA places); both are consumed by a
    run. `unusable` are the avals of the donations nothing can use (they stay alive)."""
    aliases: dict
    donors: tuple
    unusable: list

    @property
    def consumed(self) -> tuple:
        """The inputs whose buffers a run takes over (deleted after it), in order."""
        return tuple(sorted((*self.aliases, *self.donors)))


def donation_aliases(in_avals, donated, out_avals, donate_rest=False) -> Donation:
    """Pairs each donated input with the first unclaimed output of the same shape and
    dtype, then each one left with the first unclaimed output of as many elements (with
    `donate_rest`, every one left is given to XLA)."""
    free = list(range(len(out_avals)))
    aliases, left = {}, []
    for i, (aval, d) in enumerate(zip(in_avals, donated)):
        if not d:
            continue
        match = next((k for k in free if out_avals[k].same_type(aval)), None)
        if match is None:
            left.append(i)
        else:
            free.remove(match)
            aliases[i] = match
    donors, unusable = [], []
    for i in left:
        size = math.prod(in_avals[i].shape)
        match = next((k for k in free if math.prod(out_avals[k].shape) == size), None)
        if match is not None:
            free.remove(match)
        if match is not None or donate_rest:
            donors.append(i)
        else:
            unusable.append(in_avals[i])
    return Donation(aliases, tuple(donors), unusable)


def layout_str(aval):
    """XLA's short form of a buffer: f32[2,3]{1,0}."""
    dims = ",".join(str(d) for d in reversed(range(aval.ndim)))
    return f"{aval.str_short(True)}{{{dims}}}"


def _left_open(sharding):
    """Whether a result with this sharding (None, or one with P.UNCONSTRAINED
    dimensions) is laid out as XLA's partitioner chooses (no attribute, as in JAX)."""
    return sharding is None or (isinstance(sharding, sharding_mod.NamedSharding) and
                                sharding_mod.UNCONSTRAINED in sharding.spec.partitions)


def _pprint_bytes(num_bytes):
    """65536 -> '65.54KB', as JAX prints sizes."""
    if num_bytes <= 0:
        return "0.00B"
    prefixes = ("", "K", "M", "G", "T")
    exponent = min(math.floor(math.log(num_bytes, 1000)), len(prefixes) - 1)
    return f"{num_bytes / 1000 ** exponent:.2f}{prefixes[exponent]}B"


def check_jaxpr_constants(closed):
    """JAX's warning for a jaxpr being lowered whose captured constants add up to at least
    jax_captured_constants_warn_bytes, with a report of where the largest are used when
    jax_captured_constants_report_frames is set."""
    threshold = config.captured_constants_warn_bytes.value
    if threshold == -1:
        return
    sizes = [getattr(c, "nbytes", 0) for c in closed.consts]
    if sum(sizes) < threshold:
        return
    message = ("A large amount of constants were captured during lowering "
               f"({_pprint_bytes(sum(sizes))} total). If this is intentional, disable this "
               "warning by setting JAX_CAPTURED_CONSTANTS_WARN_BYTES=-1. ")
    if not config.captured_constants_report_frames.value:
        message += ("To obtain a report of where these constants were encountered, set "
                    "JAX_CAPTURED_CONSTANTS_REPORT_FRAMES=-1.")
    else:
        message += ("The subsequent report may be disabled by setting "
                    "JAX_CAPTURED_CONSTANTS_REPORT_FRAMES=0.\n\n"
                    f"Largest {min(5, len(sizes))} allocation(s):\n")
        largest = heapq.nlargest(5, zip(sizes, closed.jaxpr.constvars, closed.consts),
                                 key=operator.itemgetter(0))
        for size, var, const in largest:
            message += (f"  Constant {type(const)}, {var.aval.str_short()}, "
                        f"{_pprint_bytes(size)} captured at:\n")
            for eqn in closed.jaxpr.eqns:
                if any(v is var for v in eqn.invars):
                    message += f"    {source_info.describe(eqn.source_info)}\n\n"
    warnings.warn(message, UserWarning, stacklevel=2)


def lower_module(closed, name="main", donated_invars=(), num_replicas=1, axis_env=(),
                 mesh=None, in_shardings=(), out_shardings=(), result_names=(),
                 const_args=True, platform_index=False, in_layouts=None, out_layouts=None):
    """Prints `closed` as a module whose @main takes (constants..., arguments...).
    `axis_env` names the axes the replicas form (pmap: ((axis_name, num_replicas),)).
    With a `mesh`, the module is partitioned over its devices by XLA's SPMD partitioner
    (Shardy): `in_shardings`/`out_shardings` (a NamedSharding or None per argument and
    result; None leaves the choice to the partitioner) become sdy.sharding attributes.
    `result_names` (one per result, e.g. "result['a']") become jax.result_info
    attributes, as JAX prints them in jit(f).lower(...).as_text().
    `in_layouts`/`out_layouts` (None, or per argument and result a Layout, Layout.AUTO
    or None for the default) become mhlo.layout_mode attributes, which XLA lays the
    program's parameters and results out by.
    With `const_args=False` the constants are printed inside and @main takes only the
    arguments (a module that stands alone, as jax.export writes); with `platform_index`
    its first argument is JAX's platform index of a multi-platform module.
    Recorded as JAX's jax.monitoring event for lowering."""
    check_jaxpr_constants(closed)
    prefix = "pmap" if axis_env else "jit"
    with monitoring.timed_event(monitoring.JAXPR_TO_MLIR_MODULE_EVENT, f"{prefix}({name})"):
        return _lower_module(closed, prefix, name, donated_invars, num_replicas, axis_env,
                             mesh, in_shardings, out_shardings, result_names, const_args,
                             platform_index, in_layouts or (), out_layouts or ())


def _lower_module(closed, prefix, name, donated_invars, num_replicas, axis_env, mesh,
                  in_shardings, out_shardings, result_names, const_args, platform_index,
                  in_layouts, out_layouts):
    jaxpr = closed.jaxpr
    module = ModuleContext(sanitize_symbol(f"{prefix}_{name}"), num_replicas, axis_env,
                           mesh)
    module._names.add("main")
    in_avals = [v.aval for v in jaxpr.invars]
    out_avals = [v.aval for v in jaxpr.outvars]
    nconsts = len(jaxpr.constvars) if const_args else 0
    module.dim_solution, module.dim_sources = shape_poly.solve_symbolically(
        [(f"args[{i}]", getattr(a, "shape", ())) for i, a in enumerate(in_avals)],
        offset=nconsts)
    donated = tuple(donated_invars) or (False,) * len(in_avals)
    # partitioned with results XLA places: XLA may reuse any donated buffer (as JAX)
    donate_rest = mesh is not None and mesh.size > 1 and (
        len(out_shardings) < len(out_avals) or any(map(_left_open, out_shardings)))
    donation = donation_aliases(in_avals, donated, out_avals, donate_rest)
    arg_attrs = {nconsts + i: [f"tf.aliasing_output = {k} : i32"]
                 for i, k in donation.aliases.items()}
    for i in donation.donors:
        arg_attrs[nconsts + i] = ["jax.buffer_donor = true"]
    if platform_index:
        arg_attrs[nconsts] = ['jax.global_constant = "_platform_index"']
    result_attrs = {i: [f"jax.result_info = {_quote(n)}"]
                    for i, n in enumerate(result_names)}

    def attribute(sharding, ndim):   # a sharding over another mesh names its own, as JAX
        name = module.mesh_name(sharding.mesh, f"sharding {sharding}")
        return f"sdy.sharding = {sharding.to_shardy(ndim, mesh_name=name)}"

    for i, s in enumerate(in_shardings):
        if s is not None:
            arg_attrs.setdefault(nconsts + i, []).append(attribute(s, in_avals[i].ndim))
    for i, s in enumerate(out_shardings):
        if not _left_open(s):
            result_attrs.setdefault(i, []).append(attribute(s, out_avals[i].ndim))
    for attrs, layouts, offset in ((arg_attrs, in_layouts, nconsts), (result_attrs,
                                                                      out_layouts, 0)):
        for i, layout in enumerate(layouts):
            mode = layout_mod.layout_mode(layout)
            if mode is not None:
                attrs.setdefault(offset + i, []).append(f"mhlo.layout_mode = {_quote(mode)}")
    _lower_function(module, "main", jaxpr, () if const_args else closed.consts, "public",
                    const_args=const_args, name_stack=f"{prefix}({name})",
                    arg_attrs={i: ", ".join(a) for i, a in arg_attrs.items()},
                    result_attrs={i: ", ".join(a) for i, a in result_attrs.items()})
    partitions = mesh.size if mesh is not None else 1
    polymorphic = any(is_symbolic_dim(d) for a in in_avals + out_avals
                      for d in getattr(a, "shape", ()))
    head = (f"module @{module.name} attributes {{"
            + ("jax.uses_shape_polymorphism = true, " if polymorphic else "")
            + f"mhlo.num_partitions = {partitions} : i32, "
            f"mhlo.num_replicas = {num_replicas} : i32}} {{")
    lines = [(head, None)]
    if mesh is not None:
        lines.append((f"  sdy.mesh @mesh = {sharding_mod.shardy_mesh(mesh)}", None))
    lines += [(f"  sdy.mesh @{name} = {value}", None)
              for name, value in module.extra_meshes.items()]
    for function in module.functions:
        lines += function
    lines.append(("}", None))
    text = "\n".join(_with_text_position(line, i) for i, (line, _) in enumerate(lines, 1)) \
        + "\n"
    return LoweredModule(text, [o for _, o in lines],
                         [v.aval for v in jaxpr.constvars] if const_args else [],
                         in_avals, out_avals, donation, module.host_callbacks,
                         module.sharding_inspections, mesh,
                         dynamic_shapes=module.dynamic_shapes or polymorphic)


# --- generic lowerings used by the builders -----------------------------------------------

def elementwise_lowering(op_name):
    """The lowering of an elementwise primitive that is one StableHLO/CHLO op; rank-0
    operands are broadcast to the result shape."""
    def lower(ctx, *xs, **params):
        out = ctx.avals_out[0]
        xs = [ctx.typed_broadcast(x, out.shape) for x in xs]
        return ctx.op(op_name, xs, out.strip_weak_type())
    lower.__name__ = f"lower_{op_name.split('.')[-1]}"
    return lower


def compare_lowering(direction, total_order=False):
    """stablehlo.compare; complex orderings compare (real, imag) lexicographically."""
    def lower(ctx, x, y):
        shape = ctx.avals_out[0].shape    # size-1 dims of either operand stretch
        x, y = ctx.typed_broadcast(x, shape), ctx.typed_broadcast(y, shape)
        if dtypes.is_complex(x.aval.dtype) and direction not in ("EQ", "NE"):
            return complex_order(ctx, x, y, direction)
        return ctx.compare(x, y, direction, total_order)
    lower.__name__ = f"lower_compare_{direction.lower()}{'_to' if total_order else ''}"
    return lower


def complex_order(ctx, x, y, direction):
    """x <direction> y for complex operands, ordered by real part, then imaginary."""
    part = dtypes.real_dtype(x.aval.dtype)
    xr, yr = ctx.unary("stablehlo.real", x, part), ctx.unary("stablehlo.real", y, part)
    xi, yi = ctx.unary("stablehlo.imag", x, part), ctx.unary("stablehlo.imag", y, part)
    strict = direction[0] + "T"
    real_strict = ctx.compare(xr, yr, strict)
    real_eq = ctx.compare(xr, yr, "EQ")
    imag = ctx.compare(xi, yi, direction)
    return ctx.binary("stablehlo.or", real_strict, ctx.binary("stablehlo.and", real_eq, imag))


def max_min_body(ctx, x, y, op_name):
    """max/min of two values; for complex, the lexicographic choice NumPy makes."""
    if dtypes.is_complex(x.aval.dtype):
        pick_x = complex_order(ctx, x, y, "GT" if op_name == "stablehlo.maximum" else "LT")
        nan = ctx.compare(x, x, "NE")
        return ctx.select(ctx.binary("stablehlo.or", pick_x, nan), ctx.broadcast(
            x, pick_x.aval.shape), ctx.broadcast(y, pick_x.aval.shape))
    return ctx.binary(op_name, x, y)


def reduction_identity(op_name, dtype):
    dtype = np.dtype(dtype)
    if op_name in ("stablehlo.add", "stablehlo.or", "stablehlo.xor"):
        return np.zeros((), dtype)
    if op_name == "stablehlo.multiply":
        return np.ones((), dtype)
    if op_name == "stablehlo.and":
        return np.array(True if dtype == np.bool_ else -1).astype(dtype)
    big = op_name == "stablehlo.minimum"
    if dtype == np.bool_:
        return np.array(big)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array(info.max if big else info.min, dtype)
    value = np.inf if big else -np.inf
    if dtype.kind == "c":
        return np.array(complex(value, value), dtype)
    if not np.isinf(np.array(value, dtype)):   # no infinities (float8_e4m3fn, ...)
        value = dtypes.finfo(dtype).max if big else dtypes.finfo(dtype).min
    return np.array(value, dtype)


def reduce(ctx, x, axes, op_name, out_aval=None):
    """stablehlo.reduce of x over `axes` with a binary StableHLO op as the reducer."""
    if not axes:
        return x
    scalar = ShapedArray((), x.aval.dtype)
    init = ctx.constant(reduction_identity(op_name, x.aval.dtype), scalar)
    shape = tuple(d for i, d in enumerate(x.aval.shape) if i not in axes)

    def body(c, a, b):
        if op_name in ("stablehlo.maximum", "stablehlo.minimum"):
            return max_min_body(c, a, b, op_name)
        return c.binary(op_name, a, b)
    region = ctx.region([scalar, scalar], body)
    return ctx.op("stablehlo.reduce", [x, init], x.aval.update(shape=shape, weak_type=False),
                  {"dimensions": i64_array(axes)}, regions=[region])


def reduce_lowering(op_name):
    def lower(ctx, x, axes):
        return reduce(ctx, x, axes, op_name)
    lower.__name__ = f"lower_reduce_{op_name.split('.')[-1]}"
    return lower
