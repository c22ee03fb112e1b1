"""make_jaxpr and eval_shape: tracing a function to see its jaxpr or output shapes
without running it. ShapeDtypeStruct stands in for an array argument."""
from __future__ import annotations

import contextlib

import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src import layout as layout_mod
from pyjax._src import sharding as sharding_mod
from pyjax._src.core import hijax
from pyjax._src.core.avals import (ShapedArray, get_aval, is_valid_jax_type,
                                   register_described_type, registered_type_of)
from pyjax._src.core.tokens import AbstractToken
from pyjax._src.interpreters import batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.util import canonicalize_shape, wraps
from pyjax._src.traceback_util import api_boundary


class ShapeDtypeStruct:
    """A shape and dtype with no data: an abstract argument for eval_shape, trace, lower."""

    __slots__ = ("shape", "dtype", "weak_type", "_sharding", "_layout", "manual_axis_type")

    def __init__(self, shape, dtype, sharding=None, weak_type=False, *,
                 manual_axis_type=None):
        if dtype is None:   # np.dtype(None) would silently be float64
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        self._layout = None   # a device-local Layout, from a Format given as `sharding`
        if isinstance(sharding, layout_mod.Format):
            if isinstance(sharding.layout, layout_mod.AutoLayout):
                raise TypeError("`Layout.AUTO` cannot be used in place of a device-local "
                                "layout in a `ShapeDtypeStruct`. Got "
                                f"{sharding!r}")
            self._layout, sharding = sharding.layout, sharding.sharding
        self.shape = tuple(shape)
        self.dtype = dtype if isinstance(dtype, dtypes.ExtendedDType) else np.dtype(dtype)
        self.weak_type = weak_type
        spec = sharding.spec if isinstance(sharding, sharding_mod.NamedSharding) else \
            sharding
        if isinstance(spec, sharding_mod.PartitionSpec) and len(spec) > len(self.shape):
            scalar = " For scalars the PartitionSpec should be P()" if not self.shape else ""
            raise ValueError(f"PartitionSpec {spec} is only valid for values of rank at "
                             f"least {len(spec)}, but was applied to a value of rank "
                             f"{len(self.shape)}.{scalar}")
        self._sharding = sharding
        # Inside shard_map: the manual axes the described value varies along (its vma).
        self.manual_axis_type = manual_axis_type

    @property
    def sharding(self):
        """The sharding given; a bare PartitionSpec names the mesh of the context where
        it is read (jax.set_mesh)."""
        if not isinstance(self._sharding, sharding_mod.PartitionSpec):
            return self._sharding
        mesh = sharding_mod.current_mesh()
        if mesh is None:
            raise TypeError("When specifying PartitionSpec to `ShapeDtypeStruct`, the "
                            "context mesh cannot be empty. Please use `jax.set_mesh` to "
                            "set the mesh context.")
        return sharding_mod.NamedSharding(mesh, self._sharding)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))

    @property
    def format(self):
        """The layout and sharding described, as a jax.layout.Format."""
        return layout_mod.Format(self._layout, self.sharding)

    def update(self, **changes):
        """A copy with some of shape, dtype, sharding (or a Format), weak_type replaced."""
        given = changes.get("sharding")
        if self._layout is not None and isinstance(given, sharding_mod.Sharding):
            raise ValueError(f"You are updating ShapeDtypeStruct with a {type(given)} when "
                             f"the original ShapeDtypeStruct had a concrete layout "
                             f"{self.format}. This might lead to bugs. If you want to do "
                             "this, create a new ShapeDtypeStruct via the constructor.")
        kept = self._sharding if self._layout is None else \
            layout_mod.Format(self._layout, self._sharding)
        fields = {"shape": self.shape, "dtype": self.dtype, "sharding": kept,
                  "weak_type": self.weak_type, "manual_axis_type": self.manual_axis_type}
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"ShapeDtypeStruct.update: unknown fields {sorted(unknown)}.")
        fields.update(changes)
        return ShapeDtypeStruct(**fields)

    @classmethod
    def like(cls, x):
        """The shape, dtype (and sharding, weak type) of the array-like x."""
        aval = abstractify(x)
        in_type = None if aval.sharding.mesh.empty else aval.sharding
        # As JAX: an uncommitted array's place is not part of what it is like; a
        # tracer (which has no .sharding) gives the sharding in its type.
        sharding = getattr(x, "sharding", in_type) if getattr(x, "_committed", True) \
            else None
        return cls(aval.shape, aval.dtype, sharding=sharding, weak_type=aval.weak_type)

    @classmethod
    def of_result(cls, aval):
        """What tracing says of a result of type `aval`: its shape, dtype, weak type and,
        where its type splits it over a mesh with Explicit axes, that sharding (as JAX's
        eval_shape and out_info)."""
        typed = aval._sharding
        sharding = typed if typed is not None and typed.mesh.explicit_axes else None
        mat = aval.mat
        return cls(aval.shape, aval.dtype, sharding=sharding, weak_type=aval.weak_type,
                   manual_axis_type=mat if mat.varying or mat.unreduced or mat.reduced
                   else None)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        sharding = "" if self._sharding is None else f", sharding={self._sharding}"
        layout = "" if self._layout is None else f", format={self._layout}"
        weak = ", weak_type=True" if self.weak_type else ""
        mat = "" if self.manual_axis_type is None else \
            f", manual_axis_type={self.manual_axis_type}"
        return (f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sharding}"
                f"{layout}{weak}{mat})")

    def _key(self):
        return (self.shape, self.dtype, self._sharding, self._layout, self.weak_type,
                self.manual_axis_type)

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


def abstractify(x):
    """The aval of an argument that may be a ShapeDtypeStruct or anything array-like."""
    if isinstance(x, ShapeDtypeStruct):
        shape = canonicalize_shape(x.shape, f"argument {x}")
        aval = ShapedArray(shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type,
                           manual_axis_type=x.manual_axis_type)
        # split over Explicit mesh axes, the array it describes has them in its type
        return aval if x._sharding is None else sharding_mod.typed_aval(aval, x.sharding)
    if isinstance(x, ShapedArray):   # an aval stands for itself (as in JAX's lower)
        return x
    try:
        return get_aval(x)
    except TypeError:
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise
    # anything else with a shape and a dtype stands for an array of them, as in JAX
    # (eval_shape, make_jaxpr, linear_transpose and lower take duck-typed arguments)
    return ShapedArray(canonicalize_shape(x.shape, f"argument {x!s:.100}"),
                       dtypes.canonicalize_dtype(x.dtype), bool(getattr(x, "weak_type", False)))


register_described_type(ShapeDtypeStruct, abstractify)   # jax.typeof's answer


def _is_extended(x):
    return isinstance(x, ShapeDtypeStruct) and isinstance(x.dtype, dtypes.ExtendedDType)


def _as_physical(sds):
    """A ShapeDtypeStruct of keys as a key array over its data's ShapeDtypeStruct."""
    dtype = sds.dtype
    return dtype.from_physical(ShapeDtypeStruct(sds.shape + tuple(dtype.physical_shape),
                                                dtype.physical_dtype))


def _as_struct(x):
    """eval_shape's output leaf: key arrays (over data structs) as structs of keys."""
    return ShapeDtypeStruct(x.shape, x.dtype) \
        if isinstance(getattr(x, "dtype", None), dtypes.ExtendedDType) else x


def invalid_output_error(debug_info, out):
    """JAX's error for a traced function whose output `out` holds a value that is not a
    JAX type (naming the first such leaf by its path), or None."""
    for path, leaf in tree_util.tree_flatten_with_path(out)[0]:
        if not is_valid_jax_type(leaf):
            return TypeError(
                f"function {debug_info.describe()} traced for jit returned a value of type "
                f"{type(leaf)} at output component {tree_util.keystr(path)}, which is not "
                "a valid JAX type")
    return None


def _trace_flat(fun, args, kwargs, static_argnums=()):
    if not callable(fun):
        raise TypeError(f"expected a callable to trace, got {fun!r} of type "
                        f"{type(fun).__name__}")
    static_argnums = {static_argnums} if isinstance(static_argnums, int) else \
        set(static_argnums)
    bad = [i for i in static_argnums if not -len(args) <= i < len(args)]
    if bad:
        raise ValueError(f"static_argnums {sorted(static_argnums)} is out of range for the "
                         f"{len(args)} positional arguments passed.")
    static_argnums = {i % len(args) for i in static_argnums}
    dyn_args = [a for i, a in enumerate(args) if i not in static_argnums]
    leaves, in_tree = tree_util.flatten((dyn_args, kwargs))
    if any(_is_extended(x) for x in leaves):   # keys: traced as key arrays of their data
        leaves, in_tree = tree_util.flatten(tree_util.tree_unflatten(
            in_tree, [_as_physical(x) if _is_extended(x) else x for x in leaves]))
    in_avals = [abstractify(x) for x in leaves]
    hi = None
    if any(a.is_high for a in in_avals):   # hijax values: traced as their contents
        hi = hijax.LoweredArgs(hijax.key_avals(leaves, in_avals))
        in_avals = hi.lo_avals
    traced = {}   # not on flat_fun: a closure that refers to itself is a reference cycle

    def flat_fun(*tracers):
        if hi is not None:   # the function sees hi values raised from them
            tracers = hi.raise_args(tracers)
        call_args, call_kwargs = tree_util.tree_unflatten(in_tree, tracers)
        it = iter(call_args)
        full = [args[i] if i in static_argnums else next(it) for i in range(len(args))]
        out = fun(*full, **call_kwargs)
        out_leaves, traced["out_tree"] = tree_util.flatten(out)
        traced["out_types"] = [registered_type_of(leaf) for leaf in out_leaves]
        if any(traced["out_types"]):   # hijax results leave as their arrays
            out_leaves = hijax.lower_results(out_leaves, traced["out_types"])
        if not all(map(is_valid_jax_type, out_leaves)):
            raise invalid_output_error(debug, out)
        return out_leaves

    debug = pe.debug_info_of(fun)
    # refs the function closes over show as constants; what it writes into them is
    # not stored (nothing runs)
    jaxpr, consts = pe.refs_as_consts(*pe.trace_to_jaxpr(
        flat_fun, in_avals, debug, capture_refs=True))
    return jaxpr, consts, traced["out_tree"], traced["out_types"]


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False,
               abstracted_axes=None):
    """Returns a function that traces `fun` on example arguments and gives its jaxpr."""

    @wraps(fun)
    @api_boundary
    def make_jaxpr_f(*args, **kwargs):
        with contextlib.ExitStack() as stack:   # axis_env: names collectives may use
            for name, size in axis_env or ():
                stack.enter_context(batching.extend_axis_env(name, size))
            jaxpr, consts, out_tree, out_types = _trace_flat(fun, args, kwargs,
                                                             static_argnums)
        closed = _closed(jaxpr, consts)
        if return_shape:
            shapes = _result_types(jaxpr.out_avals, out_types, lambda a: ShapeDtypeStruct(
                a.shape, a.dtype, weak_type=a.weak_type))
            return closed, tree_util.tree_unflatten(out_tree, shapes)
        return closed
    make_jaxpr_f.__module__ = "jax"   # as JAX names it
    if hasattr(fun, "__qualname__"):
        make_jaxpr_f.__qualname__ = f"make_jaxpr({fun.__qualname__})"
    if hasattr(fun, "__name__"):
        make_jaxpr_f.__name__ = f"make_jaxpr({fun.__name__})"
    return make_jaxpr_f


def _closed(jaxpr, consts):
    from pyjax._src.core.jaxpr import ClosedJaxpr
    return ClosedJaxpr(jaxpr, consts)


@api_boundary
def eval_shape(fun, *args, **kwargs):
    """The output shapes and dtypes of fun(*args), computed by tracing only."""
    jaxpr, _, out_tree, out_types = _trace_flat(fun, args, kwargs)
    results = _result_types(jaxpr.out_avals, out_types, lambda a: (
        a if type(a) is AbstractToken   # a token has no shape: JAX gives its aval
        else ShapeDtypeStruct.of_result(a)))
    return tree_util.user_tree_map(_as_struct, tree_util.tree_unflatten(out_tree, results))


def _result_types(out_avals, out_types, describe):
    """A traced function's result leaves described: `describe(aval)` of an array, the
    type of a hijax result (which the jaxpr returns as its arrays), as JAX gives it."""
    out_avals = iter(out_avals)
    results = []
    for ty in out_types:
        if ty is None:
            results.append(describe(next(out_avals)))
        else:
            results.append(ty)
            for _ in ty.lo_ty():
                next(out_avals)
    return results
