"""Batching (vmap): BatchTracer values carry one batch dimension (or none: `not_mapped`),
and each primitive's `batch` rule moves and merges batch dimensions. Imports core and
partial_eval; the few lax primitives the helpers need are found by name in the registry.

Rule conventions, for the primitive rooms:
- `batch(args, dims, **params) -> (out, out_dim)`; `(outs, out_dims)` for primitives with
  multiple results. `args` are values of the enclosing computation (the rule runs with the
  parent trace current, so it binds lax ops normally); `dims[i]` is where args[i] carries
  the batch, or `not_mapped`. Called only when some operand is batched: otherwise the
  primitive is bound on the parent unchanged.
- A primitive defined with `batch_needs_axis=True` has a rule `f(axis, args, dims,
  **params)` that also needs the vmap's `AxisData(name, size)`; it is called even when no
  operand is batched. Collectives
  (lax.psum...) and higher-order primitives (jit, cond, scan, while) use it.
- `batch_jaxpr(closed, axis, in_batched, instantiate)` -> (ClosedJaxpr
  taking and returning the batch at dim 0 on batched values, out_batched list[bool]):
  what higher-order rules apply to their sub-jaxprs. `instantiate` (bool or per-output)
  forces outputs to be batched. Results are cached per (jaxpr, arguments).
- Rule helpers: `moveaxis`, `bdim_at_front`, `move_or_broadcast`, `broadcast_batched`,
  `expand_axis`, `axis_size_of`, `empty_batch`, `subtrace` (runs a user function, e.g. a
  custom_jvp rule, on batched values). Rule factories: `elementwise_rule` (lax
  broadcasting), `same_shape_rule` (elementwise, operands of one shape), `reduction_rule`,
  `no_operands_rule`, `call_rule` (jit-like primitives).
- Named axes: `extend_axis_env(name, size)` (vmap and pmap bind a name while tracing),
  `axis_env_size(name)` (NameError when unbound), `jaxpr_uses_axis(closed, name)`.
  Collective primitives are defined with `is_collective=True` and name their axes in the param
  `axes` (a tuple) or `axis_name`.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, NamedTuple

import numpy as np

from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import (RuleFactory, Trace, Tracer, registered_primitives,
                                   set_current_trace, trace_context)
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.util import WeakCache

not_mapped = None


class AxisData(NamedTuple):
    name: object      # the axis_name given to vmap, or None
    size: int
    spmd_name: tuple | None = None   # vmap's spmd_axis_name: mesh axes the batch spans
    # How the mapped arguments split the batch over Explicit mesh axes (JAX's
    # explicit_mesh_axis), as a NamedSharding of rank 1; None where they do not.
    batch_sharding: Any = None

    @property
    def batch_entry(self):
        """The spec entry of the batch dimension (None: not split)."""
        s = self.batch_sharding
        return None if s is None else s.spec.partitions[0]


# --- named axes -------------------------------------------------------------------------

class _AxisEnv(threading.local):
    def __init__(self):
        self.frames = []     # [(name, size)], innermost last
        # per vmap being traced: (the Explicit mesh axes its batch is split over, those
        # of its spmd_axis_name)
        self.mesh_axes = []


_axis_env = _AxisEnv()


@contextlib.contextmanager
def map_over_mesh_axes(explicit, spmd):
    """While a vmap traces its function: its batch is split over the Explicit mesh axes
    `explicit` (a shard_map inside makes only the others manual, as JAX's
    explicit_mesh_axis_names) or over those of its spmd_axis_name `spmd` (which a
    shard_map inside may not name)."""
    _axis_env.mesh_axes.append((tuple(explicit), tuple(spmd or ())))
    try:
        yield
    finally:
        _axis_env.mesh_axes.pop()


def mapped_mesh_axes() -> frozenset:
    """The Explicit mesh axes the vmaps being traced in this thread map over."""
    return frozenset(n for names, _ in _axis_env.mesh_axes for n in names)


def spmd_mesh_axes() -> frozenset:
    """The mesh axes named by the spmd_axis_name of the vmaps being traced."""
    return frozenset(n for _, names in _axis_env.mesh_axes for n in names)


@contextlib.contextmanager
def extend_axis_env(name, size):
    """Binds axis `name` (of `size`) while a transformation traces its function."""
    if name is None:
        yield
        return
    _axis_env.frames.append((name, size))
    try:
        yield
    finally:
        _axis_env.frames.pop()


def bound_axes():
    """The axes bound now, outermost first: ((name, size), ...). What a function traced
    under them stages depends on them (lax.axis_size, collectives), so jit keys its
    traces on them."""
    return tuple(_axis_env.frames)


def axis_env_size(name, api="the collective"):
    """The size of the innermost axis called `name`; NameError when nothing binds it
    (`api` names the caller in the message)."""
    for bound, size in reversed(_axis_env.frames):
        if bound == name:
            return size
    raise unbound_axis_error(name, api)


def is_bound(name):
    """Whether a vmap, pmap or shard_map being traced binds the axis `name`."""
    return any(bound == name for bound, _ in _axis_env.frames)


def in_binding_order(names):
    """The bound axis names `names`, outermost binding first."""
    bound = [n for n, _ in _axis_env.frames]
    return tuple(sorted(names, key=bound.index))


def unbound_axis_error(name, api="the collective"):
    bound = [n for n, _ in _axis_env.frames]
    return NameError(
        f"Found an unbound axis name: {name}. To fix this, please call {api} under "
        f"`jax.shard_map` (or an enclosing vmap/pmap with axis_name={name!r}); names "
        f"bound here: {bound or 'none'}.")


def axis_names_of(params):
    """The axis names a collective's params refer to (`axes` or `axis_name`)."""
    names = params.get("axes", params.get("axis_name", ()))
    return names if isinstance(names, tuple) else (names,)


_uses_axis_cache = WeakCache()


def jaxpr_uses_axis(closed, name):
    """Whether any equation of `closed` (or of its sub-jaxprs) names axis `name`."""
    if name is None:
        return False
    jaxpr = closed.jaxpr if isinstance(closed, jx.ClosedJaxpr) else closed
    return _uses_axis_cache.get(jaxpr, name, lambda: any(
        (e.primitive.is_collective and name in axis_names_of(e.params))
        or any(jaxpr_uses_axis(s, name) for s in jx.sub_jaxprs(e)) for e in jaxpr.eqns))


class _RuleAxis(threading.local):
    axis: AxisData | None = None   # the vmap whose batch rule (or result) is being built


_rule_axis = _RuleAxis()


@contextlib.contextmanager
def rule_axis(axis):
    """While building values of vmap `axis` outside its trace (its results, a batched
    jaxpr's outputs), the helpers below split new batch dimensions as its arguments."""
    saved, _rule_axis.axis = _rule_axis.axis, axis
    try:
        yield
    finally:
        _rule_axis.axis = saved


def current_axis():
    """The AxisData of the vmap whose batch rule runs in this thread, or None."""
    return _rule_axis.axis


# --- the trace --------------------------------------------------------------------------

class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim", "_aval")

    def __init__(self, trace, val, batch_dim):
        self._trace, self.val, self.batch_dim, self._aval = trace, val, batch_dim, None

    @property
    def aval(self):
        if self._aval is None:
            aval = get_aval(self.val)
            self._aval = aval if self.batch_dim is None else mapped_aval(aval, self.batch_dim)
        return self._aval

    def __repr__(self):   # as JAX's: one example's type and the batched value's
        return f"VmapTracer(aval={self.aval}, batched={get_aval(self.val)})"

    def _contents(self):
        return [("val", self.val), ("batch_dim", self.batch_dim)]

    def to_concrete_value(self):
        if self.batch_dim is not None:
            return None
        if isinstance(self.val, Tracer):
            return self.val.to_concrete_value()
        return np.asarray(self.val, self.aval.dtype)

    def _origin_description(self):
        if self.batch_dim is None:
            return ""
        return (f"This BatchTracer with object id {id(self)} is batched by vmap (it holds "
                f"one value per example, batch dimension {self.batch_dim}), so it cannot be "
                "turned into one Python value.")


class BatchTrace(Trace):
    """Runs each primitive's batch rule on values that carry a batch dimension."""

    requires_low = False   # a hijax primitive applies its batch rule here

    def __init__(self, axis: AxisData, parent=None):
        super().__init__(parent)
        self.axis = axis

    def lift(self, x):
        return BatchTracer(self, x, not_mapped)

    def to_batch_info(self, x):
        """(value, batch_dim) of anything met in this trace. Tracers of another trace of the
        same vmap (its AxisData: a `subtrace` running a user's rule) are its own too, as
        JAX's traces of one tag: a rule may close over the vmap's values."""
        if type(x) is BatchTracer and (x._trace is self or x._trace.axis is self.axis):
            return x.val, x.batch_dim
        if isinstance(x, Tracer):
            self.own_or_lift(x)   # rejects tracers of dead or unrelated traces
        return x, not_mapped

    def wrap(self, val, dim):
        return val if dim is not_mapped else BatchTracer(self, val, dim)

    def process_primitive(self, prim, args, params):
        vals, dims = [], []
        for x in args:
            v, d = self.to_batch_info(x)
            vals.append(v)
            dims.append(d)
        needs_axis = prim.batch_needs_axis
        with set_current_trace(self.parent):
            if not needs_axis and all(d is not_mapped for d in dims):
                return prim.bind(*vals, **params)
            rule = prim.rule("batch")
            saved, _rule_axis.axis = _rule_axis.axis, self.axis
            try:
                if needs_axis:
                    out, out_dims = rule(self.axis, vals, dims, **params)
                else:
                    out, out_dims = rule(vals, dims, **params)
            finally:
                _rule_axis.axis = saved
        if prim.multiple_results:
            return [self.wrap(o, d) for o, d in zip(out, out_dims)]
        return self.wrap(out, out_dims)

    def __repr__(self):
        return f"BatchTrace(axis_name={self.axis.name!r}, size={self.axis.size})"


@contextlib.contextmanager
def subtrace(axis):
    """A new BatchTrace of `axis` as the current trace, for rules that run user functions
    (custom derivative rules) on batched values: wrap inputs with `trace.wrap`, read
    results back with `trace.to_batch_info` after the block."""
    trace = BatchTrace(axis)
    try:
        with extend_axis_env(axis.name, axis.size), set_current_trace(trace):
            yield trace
    finally:
        trace.end()


# --- helpers for rules ------------------------------------------------------------------

_prims: dict[str, Any] = {}


def _lax(name):
    prim = _prims.get(name)
    if prim is None:
        prim = _prims[name] = registered_primitives()[name]
    return prim


def axis_size_of(args, dims):
    """The batch size, read from the first batched operand."""
    for x, d in zip(args, dims):
        if d is not not_mapped:
            return get_aval(x).shape[d]
    raise ValueError("axis_size_of: no operand is batched")


def moveaxis(x, src, dst):
    """x with its axis `src` moved to position `dst` (a transpose; no-op if equal)."""
    if src == dst:
        return x
    perm = [i for i in range(get_aval(x).ndim) if i != src]
    perm.insert(dst, src)
    return _lax("transpose").bind(x, permutation=tuple(perm))


def mapped_aval(aval, dim):
    """The aval of one example of a value of `aval` batched at `dim`: that dimension
    (and its entry in the sharding) dropped."""
    shape = aval.shape[:dim] + aval.shape[dim + 1:]
    s = aval._sharding
    if s is None:
        return aval.update(shape=shape)
    parts = list(s.spec.padded(aval.ndim).partitions)
    del parts[dim]
    return aval.update(shape=shape, sharding=type(s)(s.mesh, s.spec.update(partitions=parts)))


def unmapped_aval(aval, dim, axis):
    """The aval of a batch of vmap `axis` (at `dim`) of values of `aval`: the batch
    dimension split as the vmap's mapped arguments split it."""
    shape = aval.shape[:dim] + (axis.size,) + aval.shape[dim:]
    return aval.update(shape=shape, sharding=batched_sharding(aval._sharding, dim, axis,
                                                              aval.ndim))


def batched_sharding(sharding, dim, axis=None, ndim=None):
    """`sharding` (a NamedSharding naming per-example dimensions, or None) with the
    batch dimension of vmap `axis` (default: the one whose rule runs) inserted at `dim`,
    split as the vmap's mapped arguments split it."""
    axis = axis or _rule_axis.axis
    split = axis.batch_sharding if axis is not None else None
    if sharding is None:
        if split is None:
            return None
        sharding = type(split)(split.mesh, type(split.spec)())
    spec = sharding.spec
    parts = list(spec.padded(len(spec) if ndim is None else ndim).partitions)
    parts.insert(dim, None if split is None else split.spec.partitions[0])
    return type(sharding)(sharding.mesh, spec.update(partitions=parts))


def _broadcast_in_dim(x, shape, dims, batch_at=None):
    """x broadcast to `shape`; `batch_at`: the new dimension that is the batch of the
    vmap whose rule runs (split as its mapped arguments)."""
    if get_aval(x).shape == tuple(shape) and dims == tuple(range(len(shape))):
        return x
    sharding = None
    split = _rule_axis.axis.batch_sharding if _rule_axis.axis is not None else None
    if batch_at is not None and split is not None:
        aval = get_aval(x)
        s = aval._sharding
        parts = iter(s.spec.padded(aval.ndim).partitions if s is not None else ())
        entries = [next(parts, None) if i in dims else None for i in range(len(shape))]
        entries[batch_at] = split.spec.partitions[0]
        # over the axis types use_abstract_mesh sets (auto_axes leaves the batch to XLA)
        context = trace_context().eqn_ctx.abstract_mesh
        mesh = context if context is not None and \
            context.shape_tuple == split.mesh.shape_tuple else split.mesh
        sharding = type(split)(mesh, type(split.spec)(*entries))
    return _lax("broadcast_in_dim").bind(x, shape=tuple(shape), broadcast_dimensions=dims,
                                         sharding=sharding)


def expand_axis(x, dst):
    """x with a new axis of size 1 at `dst` (a reshape: nothing is materialised)."""
    shape = list(get_aval(x).shape)
    shape.insert(dst, 1)
    return _lax("reshape").bind(x, new_sizes=tuple(shape), dimensions=None)


def move_or_broadcast(x, bdim, dst, size):
    """x with its batch at `dst`: moved there, or broadcast to `size` if not mapped."""
    if bdim is not not_mapped:
        return moveaxis(x, bdim, dst)
    shape = list(get_aval(x).shape)
    shape.insert(dst, size)
    return _broadcast_in_dim(x, shape, tuple(i for i in range(len(shape)) if i != dst), dst)


def bdim_at_front(x, bdim, size):
    return move_or_broadcast(x, bdim, 0, size)


def broadcast_batched(x, bdim, size, shape, dst=0):
    """x, whose per-example shape is `shape` or broadcasts to it (rank 0 or size-1 dims),
    as a full array of per-example `shape` with the batch of `size` at `dst`."""
    out_shape = list(shape)
    out_shape.insert(dst, size)
    rest = tuple(i for i in range(len(out_shape)) if i != dst)
    if bdim is not_mapped:
        return _broadcast_in_dim(x, out_shape, rest if get_aval(x).ndim else (), dst)
    x = moveaxis(x, bdim, dst)
    dims = tuple(range(len(out_shape))) if get_aval(x).ndim > 1 else (dst,)
    return _broadcast_in_dim(x, out_shape, dims)


def empty_batch(prim, args, dims, params):
    """What `prim` gives for a batch of zero examples (batch at 0), without running it:
    some shape rules (gather's batching dims) cannot express a size-0 batch."""
    avals = []
    for x, d in zip(args, dims):
        aval = get_aval(x)
        avals.append(aval if d is not_mapped else
                     aval.update(shape=aval.shape[:d] + aval.shape[d + 1:]))
    out = prim.abstract_eval(*avals, **params)
    outs = [_broadcast_in_dim(np.zeros((), a.dtype), (0,) + a.shape, ())
            for a in (out if prim.multiple_results else [out])]
    return (outs, [0] * len(outs)) if prim.multiple_results else (outs[0], 0)


def _make_elementwise(prim):
    def rule(args, dims, **params):
        size = axis_size_of(args, dims)
        ranks = [get_aval(x).ndim - (d is not not_mapped) for x, d in zip(args, dims)]
        rank = max(ranks)
        # Keep the batch where a full-rank operand has it, so that one needs no transpose.
        at = next((d for d, r in zip(dims, ranks) if d is not not_mapped and r == rank), 0)
        operands = []
        for x, d, r in zip(args, dims, ranks):
            if d is not_mapped:    # rank-0 operands broadcast; others get a size-1 axis
                operands.append(x if r == 0 else expand_axis(x, at))
            elif r == rank:
                operands.append(moveaxis(x, d, at))
            else:                  # a batched scalar among arrays: (size,) -> 1s around
                shape = [1] * (rank + 1)
                shape[at] = size
                operands.append(_lax("reshape").bind(x, new_sizes=tuple(shape),
                                                     dimensions=None))
        return prim.bind(*operands, **params), at
    return rule


def _make_same_shape(prim):
    def rule(args, dims, **params):
        size = axis_size_of(args, dims)
        at = next(d for d in dims if d is not not_mapped)
        return prim.bind(*[move_or_broadcast(x, d, at, size) for x, d in zip(args, dims)],
                         **params), at
    return rule


def _make_reduction(prim):
    def rule(args, dims, axes, **params):
        (x,), (d,) = args, dims
        physical = tuple(a + (a >= d) for a in axes)
        return prim.bind(x, axes=physical, **params), d - sum(a < d for a in axes)
    return rule


def _make_no_operands(prim):
    def rule(args, dims, **params):
        return prim.bind(**params), not_mapped
    return rule


def _make_call(prim):
    def rule(axis, args, dims, *, jaxpr, **params):
        in_batched = [d is not not_mapped for d in dims]
        if not any(in_batched) and not jaxpr_uses_axis(jaxpr, axis.name):
            return prim.bind(*args, jaxpr=jaxpr, **params), [not_mapped] * len(jaxpr.out_avals)
        args = [x if d is not_mapped else moveaxis(x, d, 0) for x, d in zip(args, dims)]
        batched, out_batched = batch_jaxpr(jaxpr, axis, in_batched, False)
        return (prim.bind(*args, jaxpr=batched, **params),
                [0 if b else not_mapped for b in out_batched])
    return rule


# Elementwise primitives under lax's broadcasting (equal ranks, rank 0, size-1 dims).
elementwise_rule = RuleFactory(_make_elementwise)
# Elementwise primitives whose operands must have one shape (no broadcasting at all).
same_shape_rule = RuleFactory(_make_same_shape)
# Reductions of one operand over the `axes` param; the result keeps the other params.
reduction_rule = RuleFactory(_make_reduction)
# Primitives without operands (iota): never batched, bound as they are.
no_operands_rule = RuleFactory(_make_no_operands)
# Call-like primitives (jit, checkpoint): param `jaxpr` maps operands to results one to
# one; other params pass through unchanged.
call_rule = RuleFactory(_make_call, declares={"batch_needs_axis": True})


# --- batching a jaxpr -------------------------------------------------------------------

_batched_jaxprs = WeakCache()


def batch_jaxpr(closed, axis, in_batched, instantiate, axis_name=None):
    """`closed` batched over vmap `axis` (an AxisData, or just the batch size, with
    `axis_name`): inputs flagged in `in_batched` (and the outputs in the returned
    out_batched) carry the batch at dim 0. `instantiate` (a bool or one per output)
    forces outputs to be batched even when they do not depend on the batch. Returns
    (ClosedJaxpr, out_batched)."""
    if not isinstance(axis, AxisData):
        axis = AxisData(axis_name, axis)
    n_out = len(closed.jaxpr.outvars)
    instantiate = ((bool(instantiate),) * n_out if isinstance(instantiate, bool)
                   else tuple(bool(i) for i in instantiate))
    in_batched = tuple(bool(b) for b in in_batched)
    key = (axis, in_batched, instantiate)
    return _batched_jaxprs.get(
        closed, key, lambda: _batch_jaxpr(closed, axis, in_batched, instantiate))


def _batch_jaxpr(closed, axis, in_batched, instantiate):
    out_batched = []

    def batched_fun(*args):
        with subtrace(axis) as trace:
            outs = jx.eval_jaxpr(closed.jaxpr, closed.consts,
                                 *[trace.wrap(x, 0 if b else not_mapped)
                                   for x, b in zip(args, in_batched)])
        infos = [trace.to_batch_info(o) for o in outs]
        results = []
        with rule_axis(axis):
            for (val, dim), inst in zip(infos, instantiate):
                out_batched.append(dim is not not_mapped or inst)
                results.append(val if dim is not_mapped and not inst
                               else bdim_at_front(val, dim, axis.size))
        return results

    in_avals = [unmapped_aval(a, 0, axis) if b else a
                for a, b in zip(closed.in_avals, in_batched)]
    jaxpr, consts = pe.trace_to_jaxpr(batched_fun, in_avals, closed.jaxpr.debug_info)
    new, hoisted = pe.close_over_concrete(jaxpr, consts)
    if hoisted:
        raise ValueError("batch_jaxpr: the jaxpr closed over traced values; pass them in "
                         "as arguments instead")
    return new, out_batched


# --- vmappable containers ---------------------------------------------------------------
# Types that vmap maps as a whole (JAX's register_vmappable: sparse arrays, whose batch
# dimensions are axes of their buffers), registered at import and read-only after.
_vmappables: dict[type, tuple[Any, Any]] = {}


def register_vmappable(data_type, to_elt, from_elt):
    """vmap maps `data_type` values along one of their own axes: `to_elt(cont, size, x,
    axis)` builds the per-element value, calling `cont(array, axis)` on the buffers it maps
    (axis None: not mapped); `from_elt(cont, size, elt, axis)` rebuilds the batched value,
    calling `cont(size, buffer, axis)` to move a buffer's batch to `axis`."""
    _vmappables[data_type] = (to_elt, from_elt)


def is_vmappable(x):
    return type(x) in _vmappables


def to_elt(trace, x, axis):
    """x (mapped along `axis`) as the per-element value inside the vmap of `trace`."""
    def cont(value, ax):
        return value if ax is None else BatchTracer(trace, value, ax)
    if is_vmappable(x):
        return _vmappables[type(x)][0](cont, trace.axis.size, x, axis)
    return cont(x, axis)


def from_elt(trace, elt, axis):
    """The batched value of the per-element result `elt`, its batch at `axis` (called with
    the parent trace current)."""
    size = trace.axis.size

    def cont(size, value, ax):
        with rule_axis(trace.axis):
            return move_or_broadcast(*trace.to_batch_info(value), ax, size)
    return _vmappables[type(elt)][1](cont, size, elt, axis)


__all__ = ["BatchTrace", "BatchTracer", "AxisData", "not_mapped",
           "batch_jaxpr", "mapped_aval", "unmapped_aval", "batched_sharding",
           "rule_axis", "current_axis", "moveaxis", "bdim_at_front", "move_or_broadcast",
           "broadcast_batched", "expand_axis", "axis_size_of", "empty_batch",
           "elementwise_rule", "same_shape_rule", "reduction_rule", "no_operands_rule", "call_rule",
           "subtrace", "extend_axis_env", "axis_env_size",
           "jaxpr_uses_axis", "unbound_axis_error", "register_vmappable", "is_vmappable",
           "to_elt", "from_elt"]
