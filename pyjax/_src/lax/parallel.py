"""Collectives over named axes: psum, pmax, pmin, pmean, all_gather, axis_index. A name is
bound by vmap(axis_name=...) (whose batch rules below reduce or gather over the batch) or
by pmap (whose XLA program runs them as cross-replica collectives: the `lower` rules).
Imports core, interpreters, backends.stablehlo, tree_util and the lax families."""
from __future__ import annotations

import functools
import operator

import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import NO_TRANSPOSE, RuleFactory, define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters.ad import Zero
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as red
from pyjax._src.lax import slicing
from pyjax._src.lax import structural as st
from pyjax._src.sharding import PartitionSpec


def _names(axis_name):
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for name in names:
        batching.axis_env_size(name)    # NameError when no vmap/pmap binds it
    return names


def _single_name(axis_name, what):
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(f"{what} over several axes at once ({axis_name}) is not "
                                  "supported; nest the calls, one axis each.")
    return names[0]


def _unbound_impl(*args, **params):
    """Reached only when no transformation handled the collective."""
    raise batching.unbound_axis_error(batching.axis_names_of(params)[0])


def _scaled(x, n):
    """x * n in x's own dtype and weak type."""
    aval = get_aval(x)
    if aval.weak_type:
        factor = {"f": float, "c": complex}.get(aval.dtype.kind, int)(n)
    else:
        factor = np.array(n, aval.dtype)
    return ew.mul(x, factor)


# --- psum, pmax, pmin -------------------------------------------------------------------

def _reduction_batch(reduce, unmapped):
    """The batch rule of a collective reduction: `reduce` over the vmapped axis named in
    `axes`, `unmapped(x, size)` for operands not batched along it."""
    def make(prim):
        return functools.partial(_reduce_over_axis, prim, reduce, unmapped)
    return RuleFactory(make, declares={"batch_needs_axis": True})


def _reduce_over_axis(prim, reduce, unmapped, axis, args, dims, *, axes,
                      axis_index_groups):
    if axis.name not in axes:   # an enclosing transformation's axis: the batch stays
        return prim.bind(*args, axes=axes, axis_index_groups=axis_index_groups), list(dims)
    no_grouped_vmap(axis_index_groups)
    outs = [unmapped(x, axis.size) if d is None else reduce(x, (d,))
            for x, d in zip(args, dims)]
    rest = tuple(n for n in axes if n != axis.name)
    if rest:
        outs = prim.bind(*outs, axes=rest, axis_index_groups=None)
    return outs, [None] * len(outs)


def no_grouped_vmap(axis_index_groups):
    """vmap runs no collective over subgroups of its axis (as in JAX)."""
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap collectives. "
                                  "Please open a feature request!")


def _psum_jvp(primals, tangents, **params):
    out = psum_p.bind(*primals, **params)
    nonzero = [t for t in tangents if type(t) is not Zero]
    summed = iter(psum_p.bind(*nonzero, **params))
    return out, [t if type(t) is Zero else next(summed) for t in tangents]


def _psum_transpose(cts, *args, **params):
    # As in JAX under vmap and pmap: the transpose of psum is psum.
    linear = [ad.is_undefined_primal(a) for a in args]
    cts = [ad.instantiate_zeros(ct) for ct, lin in zip(cts, linear) if lin]
    summed = iter(psum_p.bind(*cts, **params))
    return [next(summed) if lin else None for lin in linear]


def _chooser_jvp(prim):
    """The tangent of the members holding the extreme, averaged over ties."""
    def jvp(primals, tangents, **params):
        outs = prim.bind(*primals, **params)
        tangent_outs = []
        for x, t, out in zip(primals, tangents, outs):
            if type(t) is Zero:
                tangent_outs.append(Zero(ad.tangent_aval(get_aval(out))))
                continue
            wins = ew.convert_element_type(ew.eq(x, out), get_aval(t).dtype)
            (count,) = psum_p.bind(wins, **params)   # apart: primal work, not tangent
            (total,) = psum_p.bind(ew.mul(t, wins), **params)
            tangent_outs.append(ew.div(total, count))
        return outs, tangent_outs
    return jvp


def _same_avals(*avals, axes, axis_index_groups):
    return list(avals)


# --- lowerings: cross-replica collectives over the replicas of the pmap being compiled ---

def _all_reduce_lowering(op_name):
    def body(c, a, b):
        if op_name == "stablehlo.add":
            return c.binary(op_name, a, b)
        return hlo.max_min_body(c, a, b, op_name)

    def lower(ctx, *xs, axes, axis_index_groups):
        outs = []
        for x in xs:
            if op_name != "stablehlo.add" and dtypes.is_complex(x.aval.dtype):
                outs.append(_gathered_max_min(ctx, x, axes, axis_index_groups, op_name))
                continue
            scalar = ShapedArray((), x.aval.dtype)
            outs.append(ctx.op("stablehlo.all_reduce", [x], x.aval.strip_weak_type(),
                               ctx.module.collective_attrs(axes,
                                                           index_groups=axis_index_groups),
                               regions=[ctx.region([scalar, scalar], body)]))
        return outs
    lower.__name__ = f"lower_all_reduce_{op_name.split('.')[-1]}"
    return lower


def _gathered_max_min(ctx, x, axes, axis_index_groups, op_name):
    """Complex pmax/pmin (XLA's all_reduce takes no complex ordering): gather the group's
    values along a new dimension, then reduce it locally."""
    if axis_index_groups is not None and len({len(g) for g in axis_index_groups}) > 1:
        raise hlo.LoweringError("complex pmax/pmin over axis_index_groups of different "
                                "sizes is not supported.")
    size = len(axis_index_groups[0]) if axis_index_groups is not None else \
        int(np.prod([ctx.module.axis_position(name)[1] for name in axes]))
    slab = ctx.reshape(x, (1,) + x.aval.shape)
    gathered = ctx.op("stablehlo.all_gather", [slab],
                      x.aval.update(shape=(size,) + x.aval.shape, weak_type=False),
                      {"all_gather_dim": hlo.i64_attr(0),
                       **ctx.module.collective_attrs(axes, index_groups=axis_index_groups)})
    return hlo.reduce(ctx, gathered, (0,), op_name)


# Collectives' impl needs a binding transformation: they have no eager samples.
psum_p = define_primitive("psum", multiple_results=True, impl=_unbound_impl,
                          abstract_eval=_same_avals, jvp=_psum_jvp,
                          transpose=_psum_transpose,
                          batch=_reduction_batch(red.reduce_sum, _scaled),
                          lower=_all_reduce_lowering("stablehlo.add"), is_collective=True)
pmax_p = define_primitive("pmax", multiple_results=True, impl=_unbound_impl,
                          abstract_eval=_same_avals, jvp=RuleFactory(_chooser_jvp),
                          transpose=NO_TRANSPOSE,
                          batch=_reduction_batch(red.reduce_max, lambda x, n: x),
                          lower=_all_reduce_lowering("stablehlo.maximum"), is_collective=True)
pmin_p = define_primitive("pmin", multiple_results=True, impl=_unbound_impl,
                          abstract_eval=_same_avals, jvp=RuleFactory(_chooser_jvp),
                          transpose=NO_TRANSPOSE,
                          batch=_reduction_batch(red.reduce_min, lambda x, n: x),
                          lower=_all_reduce_lowering("stablehlo.minimum"), is_collective=True)


def _reduce_leaves(prim, x, axis_name, axis_index_groups):
    names = _names(axis_name)
    groups = index_groups(axis_index_groups, names, prim.name, same_sizes=False)
    leaves, tree = tree_util.tree_flatten(x)
    if not leaves:
        return x
    leaves = [ew.convert_element_type(v, np.int32) if get_aval(v).dtype == np.bool_ else v
              for v in leaves]
    return tree_util.tree_unflatten(
        tree, prim.bind(*leaves, axes=names, axis_index_groups=groups))


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of x (a pytree) over the members of the named axis (or axes); every member
    gets the total. Inside vmap the members are the batch elements. With
    axis_index_groups (lists of indices along the axis, each index in one list), the sum
    is over the member's own group."""
    return _reduce_leaves(psum_p, x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of x (a pytree) over the members of the named axis (or axes)."""
    return _reduce_leaves(pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of x (a pytree) over the members of the named axis (or axes)."""
    return _reduce_leaves(pmin_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of x (a pytree) over the members of the named axis (or axes); integer
    inputs give floats, as x / n does in jnp."""
    n = psum(1, axis_name, axis_index_groups=axis_index_groups)
    summed = _reduce_leaves(psum_p, x, axis_name, axis_index_groups)

    def mean(v):
        dtype = get_aval(v).dtype
        if not dtypes.is_inexact(dtype):
            dtype = dtypes.default_float_dtype()
            v = ew.convert_element_type(v, dtype)
        return ew.div(v, ew.convert_element_type(n, dtype))
    return tree_util.tree_map(mean, summed)


def index_groups(axis_index_groups, names, what, same_sizes=True):
    """axis_index_groups as a tuple of tuples of ints (None stays None), checked: over
    one axis, every index of it in exactly one group (and, where `same_sizes`, groups
    of one size: the collective's result shape depends on it)."""
    if axis_index_groups is None:
        return None
    if len(names) != 1:
        raise NotImplementedError(f"{what} with axis_index_groups over several axes at once "
                                  f"({names}) is not supported; use one axis name.")
    try:
        groups = tuple(tuple(operator.index(i) for i in g) for g in axis_index_groups)
    except TypeError:
        raise TypeError(f"{what}: axis_index_groups must be a list of lists of integer "
                        f"indices, got {axis_index_groups!r}.") from None
    size = batching.axis_env_size(names[0])
    if not groups or sorted(i for g in groups for i in g) != list(range(size)):
        raise ValueError(f"{what}: axis_index_groups {[list(g) for g in groups]} must cover "
                         f"every index of axis {names[0]!r} (size {size}) exactly once.")
    if same_sizes and len({len(g) for g in groups}) > 1:
        raise ValueError(f"{what}: axis_index_groups must all be the same size, got sizes "
                         f"{[len(g) for g in groups]}.")
    return groups


# --- all_gather -------------------------------------------------------------------------

def _all_gather_abstract_eval(x, *, axis_name, axis_size, all_gather_dimension, tiled,
                              axis_index_groups):
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _all_gather_batch(axis, args, dims, *, axis_name, axis_size, all_gather_dimension,
                      tiled, axis_index_groups):
    (x,), (d,) = args, dims
    params = dict(axis_name=axis_name, axis_size=axis_size, tiled=tiled,
                  axis_index_groups=axis_index_groups)
    if axis_name != axis.name:   # an enclosing axis: gather around our batch dim
        if d is None:
            return all_gather_p.bind(x, all_gather_dimension=all_gather_dimension,
                                     **params), None
        return all_gather_p.bind(batching.moveaxis(x, d, 0),
                                 all_gather_dimension=all_gather_dimension + 1,
                                 **params), 0
    no_grouped_vmap(axis_index_groups)
    # Every member gets the stack of all members' values: the batch, unbatched.
    out = batching.move_or_broadcast(x, d, all_gather_dimension, axis.size)
    if tiled:
        shape = list(get_aval(out).shape)
        shape[all_gather_dimension:all_gather_dimension + 2] = [
            shape[all_gather_dimension] * shape[all_gather_dimension + 1]]
        out = st.reshape(out, shape)
    return out, None


def _all_gather_transpose(ct, x, *, axis_name, axis_size, all_gather_dimension, tiled,
                          axis_index_groups):
    # Sum the cotangents of the group's members, then keep this member's slice (its
    # position in its group: a psum_scatter).
    (summed,) = psum_p.bind(ct, axes=(axis_name,), axis_index_groups=axis_index_groups)
    index = axis_index_p.bind(axis_name=axis_name)
    if axis_index_groups is not None:
        position = np.zeros(sum(map(len, axis_index_groups)), np.int32)
        for group in axis_index_groups:
            position[list(group)] = np.arange(len(group))
        index = slicing.dynamic_index_in_dim(position, index, 0, keepdims=False,
                                             allow_negative_indices=False)
    if tiled:
        n = x.aval.shape[all_gather_dimension]
        return [slicing.dynamic_slice_in_dim(summed, ew.mul(index, np.int32(n)), n,
                                             all_gather_dimension,
                                             allow_negative_indices=False)]
    return [slicing.dynamic_index_in_dim(summed, index, all_gather_dimension,
                                         keepdims=False, allow_negative_indices=False)]


def _all_gather_lower(ctx, x, *, axis_name, axis_size, all_gather_dimension, tiled,
                      axis_index_groups):
    if not tiled:   # gather size-1 slabs along a new dimension
        shape = list(x.aval.shape)
        shape.insert(all_gather_dimension, 1)
        x = ctx.reshape(x, shape)
    return ctx.op("stablehlo.all_gather", [x], ctx.avals_out[0].strip_weak_type(),
                  {"all_gather_dim": hlo.i64_attr(all_gather_dimension),
                   **ctx.module.collective_attrs((axis_name,),
                                                 index_groups=axis_index_groups)})


all_gather_p = define_primitive(
    "all_gather", impl=_unbound_impl, abstract_eval=_all_gather_abstract_eval,
    jvp=ad.linear_jvp, transpose=_all_gather_transpose, batch=_all_gather_batch,
    lower=_all_gather_lower, is_collective=True, batch_needs_axis=True)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Every member gets the values of all members of the named axis, stacked along a new
    dimension `axis` (or concatenated along `axis` when tiled)."""
    name = _single_name(axis_name, "all_gather")
    groups = index_groups(axis_index_groups, (name,), "all_gather")
    size = batching.axis_env_size(name) if groups is None else len(groups[0])

    def gather(v):
        ndim = get_aval(v).ndim
        bound = ndim if tiled else ndim + 1
        if not -bound <= axis < bound:
            raise ValueError(f"all_gather axis {axis} is out of bounds for an operand of "
                             f"rank {ndim} (tiled={tiled}).")
        if tiled and ndim == 0:
            raise ValueError("all_gather with tiled=True needs operands of rank >= 1.")
        return all_gather_p.bind(v, axis_name=name, axis_size=size,
                                 all_gather_dimension=axis % bound, tiled=bool(tiled),
                                 axis_index_groups=groups)
    return tree_util.tree_map(gather, x)


# --- axis_index -------------------------------------------------------------------------

def _axis_index_batch(axis, args, dims, *, axis_name):
    if axis_name != axis.name:
        return axis_index_p.bind(axis_name=axis_name), None
    return st.iota(np.int32, axis.size), 0


def _axis_index_lower(ctx, *, axis_name):
    mesh, manual = ctx.module.mesh, ctx.module.manual_axes
    if mesh is not None and manual and len(manual) < len(mesh.axis_names):
        # Inside a shard_map whose other axes stay automatic, partition ids are not the
        # device's own: read it where every axis is manual (as JAX does).
        rest = [n for n in mesh.axis_names if n not in manual]
        index = ShapedArray((), np.int32)
        return ctx.manual_computation(
            rest, [], [], [], [index], [PartitionSpec()],
            lambda inner: [_axis_index_lower(inner, axis_name=axis_name)])[0]
    stride, size = ctx.module.axis_position(axis_name)
    # Replicas number a pmap's members; partitions a shard_map's (a partitioned module).
    partitioned = ctx.module.mesh is not None
    replica = ctx.op("stablehlo.partition_id" if partitioned else "stablehlo.replica_id",
                     [], ShapedArray((), np.uint32))
    index = ctx.convert(replica, np.int32)
    if stride != 1:
        index = ctx.binary("stablehlo.divide", index, ctx.full(stride, (), np.int32))
    total = ctx.module.mesh.size if partitioned else ctx.module.num_replicas
    if size * stride != total:
        index = ctx.binary("stablehlo.remainder", index, ctx.full(size, (), np.int32))
    return index


axis_index_p = define_primitive(
    "axis_index", impl=_unbound_impl,
    abstract_eval=lambda *, axis_name: ShapedArray((), np.int32), jvp=ad.zero_jvp,
    transpose=NO_TRANSPOSE, batch=_axis_index_batch, lower=_axis_index_lower,
    is_collective=True, batch_needs_axis=True)


def axis_index(axis_name):
    """This member's position (int32) along the named axis; for a tuple of axes, its
    position in their product, the first axis outermost (as JAX numbers it)."""
    names = _names(axis_name)
    index = None
    for name in names:
        position = axis_index_p.bind(axis_name=name)
        index = position if index is None else ew.add(
            ew.mul(index, np.int32(batching.axis_env_size(name))), position)
    return index if index is not None else np.int32(0)


collective_primitives = (psum_p, pmax_p, pmin_p, all_gather_p, axis_index_p)


_PCAST_TARGETS = ("varying", "reduced", "unreduced")


def pcast(x, axis_name, *, to: str):
    """Casts x (a pytree) to vary along the manual axes `axis_name` (to="varying"), as
    shard_map's typing of varying values asks. The values are unchanged: pyjax does not
    type which manual axes a value varies along, so the cast only checks that the axes
    are bound. "reduced"/"unreduced" (sharding-in-types casts) are not supported."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    if not axis_name:
        return x
    if to not in _PCAST_TARGETS:
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                         f"{set(_PCAST_TARGETS)}")
    _names(axis_name)
    if to != "varying":
        raise NotImplementedError(f"lax.pcast(to={to!r}): pyjax does not type reduced or "
                                  "unreduced values (sharding in types).")
    return x
