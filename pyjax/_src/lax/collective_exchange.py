"""The collectives that exchange data between members of named axes (rather than reduce
it): ppermute (ppermute_p), all_gather (all_gather_p), all_to_all (all_to_all_p) and
psum_scatter (reduce_scatter_p) with all their rules, and pshuffle, pswapaxes, pbroadcast
and axis_size built from them. Each runs over one named axis or several at once (their
members numbered with the first name outermost), optionally within axis_index_groups.
Under vmap the batch rules move data along the batch; under pmap and shard_map the
lowerings are XLA's collective_permute, all_gather, all_to_all and reduce_scatter.
Imports core, interpreters, backends.stablehlo, tree_util and lax."""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from pyjax._src import sharding as sharding_mod
from pyjax._src import tree_util
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import RuleFactory, define_primitive, no_samples
from pyjax._src.interpreters import ad, batching
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import indexing
from pyjax._src.lax import parallel
from pyjax._src.lax import reductions as red
from pyjax._src.lax import slicing
from pyjax._src.lax import structural as st
from pyjax._src.util import canonicalize_axis

_COLLECTIVE = no_samples("a collective runs only under vmap/pmap binding its axis; "
                         "tests/lax/test_lax_ops.py checks it under both")


def _unbound_impl(x, *, axis_name, **params):
    raise batching.unbound_axis_error(axis_name[0])


def _group_size(names, groups, api):
    size = math.prod(batching.axis_env_size(n, api) for n in names)
    return size, parallel.index_groups(groups, names, api)


# --- batching: every member's value at once ----------------------------------------------

def _take_rows(x, rows):
    """x[rows] along dimension 0 for a constant integer array `rows`."""
    aval = get_aval(x)
    if not aval.shape[0]:
        return x
    rows = np.asarray(rows, np.int32)
    dnums = indexing.GatherDimensionNumbers(offset_dims=tuple(range(1, aval.ndim)),
                                            collapsed_slice_dims=(0,), start_index_map=(0,))
    return indexing.gather(x, rows.reshape(-1, 1), dnums, (1,) + aval.shape[1:],
                           mode="promise_in_bounds")


def _within_groups(members, n, groups, stacked):
    """`stacked` (members along dimension 0 in, (results, per_member) out) applied to
    each group of members on its own; the results per member, in member order."""
    if groups is None:
        return stacked(members, n)
    outs = []
    for group in groups:
        out, per_member = stacked(_take_rows(members, group), len(group))
        if not per_member:   # the group's members share one result
            aval = get_aval(out)
            out = st.broadcast_in_dim(out, (len(group),) + aval.shape,
                                      tuple(range(1, aval.ndim + 1)))
        outs.append(out)
    order = np.argsort(np.concatenate([np.asarray(g) for g in groups]))
    return _take_rows(st.concatenate(outs, 0), order), True


def _members_batch(axis, x, d, params, stacked):
    """The batch rule of an exchange collective over the axes `axis_name`, which include
    the vmapped `axis`: the values of the other axes' members are gathered, so every
    member's x is at hand, stacked along dimension 0 in member order; `stacked` computes
    all members' results from them, and each member keeps its own."""
    names = params["axis_name"]
    rest = [n for n in names if n != axis.name]
    x = batching.bdim_at_front(x, d, axis.size)
    for name in reversed(rest):   # -> (*rest, axis, ...)
        x = all_gather_p.bind(x, axis_name=(name,), axis_size=batching.axis_env_size(name),
                              all_gather_dimension=0, tiled=False, axis_index_groups=None)
    held = rest + [axis.name]
    sizes = [batching.axis_env_size(n) if n != axis.name else axis.size for n in names]
    block = get_aval(x).shape[len(held):]
    x = st.transpose(x, tuple(held.index(n) for n in names)
                     + tuple(range(len(held), len(held) + len(block))))
    out, per_member = _within_groups(st.reshape(x, (math.prod(sizes),) + block),
                                     math.prod(sizes), params.get("axis_index_groups"), stacked)
    if not per_member:
        return out, None
    out_block = get_aval(out).shape[1:]
    out = st.reshape(out, tuple(sizes) + out_block)
    out = st.transpose(out, tuple(names.index(n) for n in held)
                       + tuple(range(len(names), len(names) + len(out_block))))
    for name in rest:   # keep this member's own row along each other axis
        out = slicing.dynamic_index_in_dim(out, parallel.axis_index_p.bind(axis_name=name),
                                           0, keepdims=False, allow_negative_indices=False)
    return out, 0


def _exchange_batch(stacked, dim_params=()):
    """The batch rule of an exchange collective: over its own axes, `_members_batch` with
    `stacked(x, n, **params)`; for an enclosing transformation's axis, the batch moves to
    the front and the dimension params `dim_params` shift by one."""
    return RuleFactory(lambda prim: functools.partial(_exchange_batch_rule, prim, stacked,
                                                      dim_params),
                       declares={"batch_needs_axis": True})


def _exchange_batch_rule(prim, stacked, dim_params, axis, args, dims, **params):
    (x,), (d,) = args, dims
    if axis.name in params["axis_name"]:
        return _members_batch(axis, x, d, params, lambda v, n: stacked(v, n, **params))
    if d is None:
        return prim.bind(x, **params), None
    x = batching.bdim_at_front(x, d, axis.size)
    return prim.bind(x, **{k: v + 1 if k in dim_params else v
                           for k, v in params.items()}), 0


def _collective_attrs(ctx, params, global_ids=True):
    return ctx.module.collective_attrs(params["axis_name"], global_ids,
                                       params.get("axis_index_groups"))


# --- ppermute -----------------------------------------------------------------------------

def _check_perm(perm, size, name):
    sources = [s for s, _ in perm]
    dests = [d for _, d in perm]
    if len(set(sources)) != len(sources) or len(set(dests)) != len(dests):
        raise ValueError(f"ppermute: perm {list(perm)} must not repeat a source or a "
                         "destination (it maps sources to destinations one to one).")
    bad = [i for i in sources + dests if not 0 <= i < size]
    if bad:
        raise ValueError(f"ppermute: perm {list(perm)} names member(s) {sorted(set(bad))} "
                         f"outside axis {name!r} of size {size}.")


def _ppermute_stacked(x, n, *, axis_name, perm, axis_index_groups=None):
    # Member `dest` gets the value of member `source`; members nobody sends to get zeros.
    source_of = np.zeros(n, np.int32)
    received = np.zeros(n, np.bool_)
    for source, dest in perm:
        source_of[dest], received[dest] = source, True
    aval = get_aval(x)
    mask = st.broadcast_in_dim(received, aval.shape, (0,))
    return ew.select(mask, _take_rows(x, source_of), st.full(aval.shape, 0, aval.dtype)), True


def _ppermute_lower(ctx, x, *, axis_name, perm):
    groups = ctx.module.replica_group_ids(axis_name)
    pairs = np.array([[g[s], g[t]] for g in groups for s, t in perm], np.int64).reshape(-1, 2)
    attrs = {"source_target_pairs": hlo.dense_attr(pairs, ShapedArray(pairs.shape, np.int64))
             if pairs.size else "dense<> : tensor<0x2xi64>", **ctx.module.channel_attrs()}
    return ctx.op("stablehlo.collective_permute", [x], x.aval.strip_weak_type(), attrs)


ppermute_p = define_primitive(
    "ppermute", impl=_unbound_impl, abstract_eval=lambda x, **_: x, jvp=ad.linear_jvp,
    transpose=lambda ct, x, *, axis_name, perm: [ppermute_p.bind(
        ct, axis_name=axis_name, perm=tuple((t, s) for s, t in perm))],
    batch=_exchange_batch(_ppermute_stacked), lower=_ppermute_lower,
    samples=_COLLECTIVE, is_collective=True)


def ppermute(x, axis_name, perm):
    """Sends each member's x (a pytree) to another member of the named axis (or axes):
    `perm` lists (source, destination) index pairs; members that no pair sends to get
    zeros."""
    # Members are numbered over the axes in the order they are bound (for a mesh, its
    # axis order), whatever order axis_name lists them in: JAX's device order.
    names = batching.in_binding_order(parallel.axis_names(axis_name, "ppermute"))
    try:
        perm = tuple((operator.index(s), operator.index(t)) for s, t in perm)
    except (TypeError, ValueError):
        raise TypeError(f"ppermute: perm must be a sequence of (source, destination) integer "
                        f"pairs, got {perm!r}.") from None
    _check_perm(perm, _group_size(names, None, "ppermute")[0], axis_name)
    return tree_util.tree_map(lambda v: ppermute_p.bind(
        parallel.vary_along(v, names), axis_name=names, perm=perm), x)


def pshuffle(x, axis_name, perm):
    """Member i gets the value of member perm[i] (perm is a permutation of the indices)."""
    size = _group_size(parallel.axis_names(axis_name, "pshuffle"), None, "pshuffle")[0]
    perm = [operator.index(p) for p in perm]
    if sorted(perm) != list(range(size)):
        raise ValueError(f"`perm` does not represent a permutation: {perm} (pshuffle over "
                         f"axis {axis_name!r} of size {size}).")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


# --- all_gather ---------------------------------------------------------------------------

def _all_gather_abstract_eval(x, *, axis_name, axis_size, all_gather_dimension, tiled,
                              axis_index_groups):
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return x.update(shape=tuple(shape))


def _all_gather_stacked(x, n, *, all_gather_dimension, tiled, **_):
    """Every member gets the stack of all members' values (one result they share)."""
    out = batching.moveaxis(x, 0, all_gather_dimension)
    if tiled:
        shape = list(get_aval(out).shape)
        shape[all_gather_dimension:all_gather_dimension + 2] = [
            shape[all_gather_dimension] * shape[all_gather_dimension + 1]]
        out = st.reshape(out, shape)
    return out, False


def _all_gather_lower(ctx, x, **params):
    if not params["tiled"]:   # gather size-1 slabs along a new dimension
        shape = list(x.aval.shape)
        shape.insert(params["all_gather_dimension"], 1)
        x = ctx.reshape(x, shape)
    return ctx.op("stablehlo.all_gather", [x], ctx.avals_out[0].strip_weak_type(),
                  {"all_gather_dim": hlo.i64_attr(params["all_gather_dimension"]),
                   **_collective_attrs(ctx, params)})


def _all_gather_invariant_abstract_eval(x, **params):
    """all_gather(to='invarying'): the same values, typed (inside shard_map) as agreeing
    along the gathered axes."""
    out = _all_gather_abstract_eval(x, **params)
    return out.update(mat=out.mat.update(
        varying=[n for n in out.mat.varying_order if n not in params["axis_name"]]))


def _all_gather_invariant_transpose(ct, x, *, all_gather_dimension, axis_name, axis_size,
                                    tiled, axis_index_groups):
    """The gathered value is the same on every member, and so is its cotangent: each
    member's share is its own slice of it (as JAX's)."""
    ct = ad.instantiate_zeros(ct)
    size = get_aval(ct).shape[all_gather_dimension] // axis_size
    start = ew.mul(parallel.axis_index(axis_name), np.int32(size))
    out = slicing.dynamic_slice_in_dim(ct, start, size, all_gather_dimension)
    return [out if tiled else st.squeeze(out, (all_gather_dimension,))]


def _define_all_gather(name, abstract_eval, transpose):
    return define_primitive(
        name, impl=_unbound_impl, abstract_eval=abstract_eval, jvp=ad.linear_jvp,
        transpose=transpose,
        batch=_exchange_batch(_all_gather_stacked, ("all_gather_dimension",)),
        lower=_all_gather_lower, samples=_COLLECTIVE, is_collective=True)


def _all_gather_reduced_abstract_eval(x, **params):
    """all_gather(to='reduced') in a typed body: the gathered value, reduced along the
    axes (its cotangents are partial sums)."""
    moved = parallel.moved_along("all_gather_reduced", "varying", "reduced")
    return moved(_all_gather_abstract_eval(x, **params), axes=params["axis_name"])


all_gather_p = _define_all_gather(
    "all_gather", _all_gather_abstract_eval,
    # Every member's slice of the summed cotangents: psum_scatter.
    lambda ct, x, *, all_gather_dimension, **p: [reduce_scatter_p.bind(
        ct, scatter_dimension=all_gather_dimension, **p)])
all_gather_invariant_p = _define_all_gather("all_gather_invariant",
                                            _all_gather_invariant_abstract_eval,
                                            _all_gather_invariant_transpose)
# Its cotangent is a partial sum: each member's slice of it, summed over the members.
all_gather_reduced_p = _define_all_gather(
    "all_gather_reduced", _all_gather_reduced_abstract_eval,
    lambda ct, x, *, all_gather_dimension, **p: [unreduced_reduce_scatter_p.bind(
        ad.instantiate_zeros(ct), scatter_dimension=all_gather_dimension, **p)])

_GATHER_TARGETS = ("varying", "reduced", "invarying")


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False,
               to="varying"):
    """Every member gets the values of all members of the named axis (or axes, or of its
    axis_index_group), stacked along a new dimension `axis` (or concatenated along
    `axis` when tiled). Inside shard_map (check_vma) the result is typed as varying
    along the axes (to="varying") or not ("invarying"; "reduced", whose reduced typing
    pyjax does not have, likewise); the values are the same either way."""
    if to not in _GATHER_TARGETS:
        raise ValueError(f"all_gather: `to` must be one of {_GATHER_TARGETS}, got {to!r}.")
    names = parallel.axis_names(axis_name, "all_gather")
    if to != "varying" and axis_index_groups is not None:
        raise NotImplementedError(f"all_gather(to={to!r}) takes no axis_index_groups (as "
                                  "in JAX); gather to='varying' within groups.")
    size, groups = _group_size(names, axis_index_groups, "all_gather")
    if groups is not None:
        size = len(groups[0])

    def gather(v):
        ndim = get_aval(v).ndim
        bound = ndim if tiled else ndim + 1
        if not -bound <= axis < bound:
            raise ValueError(f"all_gather axis {axis} is out of bounds for an operand of "
                             f"rank {ndim} (tiled={tiled}).")
        if tiled and ndim == 0:
            raise ValueError("all_gather with tiled=True needs operands of rank >= 1.")
        prim = all_gather_p if to == "varying" else all_gather_invariant_p
        if to == "reduced" and all(n in sharding_mod.vma_axes() for n in names):
            prim = all_gather_reduced_p   # typed as reduced (else as invarying)
        return prim.bind(parallel.vary_along(v, names), axis_name=names, axis_size=size,
                         all_gather_dimension=axis % bound, tiled=bool(tiled),
                         axis_index_groups=groups)
    return tree_util.tree_map(gather, x)


# --- all_to_all ---------------------------------------------------------------------------

def _all_to_all_abstract_eval(x, *, axis_name, split_axis, concat_axis, axis_size,
                              axis_index_groups):
    if x.shape[split_axis] % axis_size:
        raise ValueError(f"all_to_all: dimension {split_axis} (size {x.shape[split_axis]}) "
                         f"must divide evenly among the {axis_size} members of axes "
                         f"{axis_name}.")
    shape = list(x.shape)
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return x.update(shape=tuple(shape))


def _all_to_all_stacked(x, n, *, split_axis, concat_axis, **_):
    shape = get_aval(x).shape[1:]
    chunk = shape[split_axis] // n
    # (source, ..., destination chunk, rest of the split dim, ...)
    parts = st.reshape(x, (n,) + shape[:split_axis] + (n, chunk) + shape[split_axis + 1:])
    piece = list(shape)
    piece[split_axis] = chunk
    position = [1 + t + (t >= split_axis) for t in range(len(piece))]
    perm = [1 + split_axis]
    for t in range(len(piece)):
        perm += [0, position[t]] if t == concat_axis else [position[t]]
    moved = st.transpose(parts, tuple(perm))
    out_shape = list(piece)
    out_shape[concat_axis] *= n
    return st.reshape(moved, (n,) + tuple(out_shape)), True


def _all_to_all_lower(ctx, x, **params):
    return ctx.op("stablehlo.all_to_all", [x], ctx.avals_out[0].strip_weak_type(),
                  {"split_dimension": hlo.i64_attr(params["split_axis"]),
                   "concat_dimension": hlo.i64_attr(params["concat_axis"]),
                   "split_count": hlo.i64_attr(params["axis_size"]),
                   **_collective_attrs(ctx, params, global_ids=False)})


all_to_all_p = define_primitive(
    "all_to_all", impl=_unbound_impl, abstract_eval=_all_to_all_abstract_eval,
    jvp=ad.linear_jvp,
    transpose=lambda ct, x, *, split_axis, concat_axis, **p: [all_to_all_p.bind(
        ct, split_axis=concat_axis, concat_axis=split_axis, **p)],
    batch=_exchange_batch(_all_to_all_stacked, ("split_axis", "concat_axis")),
    lower=_all_to_all_lower, samples=_COLLECTIVE, is_collective=True)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Splits x (a pytree) along split_axis into one chunk per member of the named axis
    (or axes, or of its axis_index_group), sends chunk j to member j, and joins what each
    member receives along concat_axis. Untiled, split_axis must have the group's size;
    it disappears and the members' chunks form a new dimension at concat_axis. Tiled,
    the chunks are concatenated."""
    names = parallel.axis_names(axis_name, "all_to_all")
    n, groups = _group_size(names, axis_index_groups, "all_to_all")
    if groups is not None:
        n = len(groups[0])
    params = dict(axis_name=names, axis_size=n, axis_index_groups=groups)

    def one(v):
        v = parallel.vary_along(v, names)
        ndim = get_aval(v).ndim
        split = canonicalize_axis(split_axis, ndim, "split_axis")
        concat = canonicalize_axis(concat_axis, ndim, "concat_axis")
        size = get_aval(v).shape[split]
        if tiled:
            if size % n:
                raise ValueError(f"all_to_all: the split axis {split} has size {size}, "
                                 f"which the {n} members of axis {axis_name!r} cannot "
                                 "share evenly.")
            return all_to_all_p.bind(v, split_axis=split, concat_axis=concat, **params)
        if size != n:
            raise ValueError(f"all_to_all requires the size of the mapped axis "
                             f"{axis_name!r} ({n}) to equal x.shape[split_axis] ({size}); "
                             "pass tiled=True to split a longer axis into chunks.")
        if split < concat:
            concat += 1   # concat_axis counts positions after split_axis is removed
            v = st.expand_dims(v, (concat,))
        elif concat < split:
            v = st.expand_dims(v, (concat,))
            split += 1
        out = all_to_all_p.bind(v, split_axis=split, concat_axis=concat, **params)
        return out if split == concat else st.squeeze(out, (split,))
    return tree_util.tree_map(one, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the named axis with positional axis `axis` (whose size must match)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


# --- psum_scatter ---------------------------------------------------------------------------

def _reduce_scatter_abstract_eval(x, *, axis_name, scatter_dimension, axis_size, tiled,
                                  axis_index_groups):
    shape = list(x.shape)
    if tiled:
        if shape[scatter_dimension] % axis_size:
            raise ValueError(f"psum_scatter: dimension {scatter_dimension} (size "
                             f"{shape[scatter_dimension]}) must divide evenly among the "
                             f"{axis_size} members of axes {axis_name}.")
        shape[scatter_dimension] //= axis_size
    else:
        if shape[scatter_dimension] != axis_size:
            raise ValueError(f"psum_scatter: dimension {scatter_dimension} has size "
                             f"{shape[scatter_dimension]}, but untiled it must equal the "
                             f"size {axis_size} of axes {axis_name}; pass tiled=True to "
                             "scatter chunks of a longer dimension.")
        del shape[scatter_dimension]
    return x.update(shape=tuple(shape))


def _reduce_scatter_stacked(x, n, *, scatter_dimension, tiled, **_):
    total = red.reduce_sum(x, (0,))
    shape = get_aval(total).shape
    if tiled:
        chunk = shape[scatter_dimension] // n
        total = st.reshape(total, shape[:scatter_dimension] + (n, chunk)
                           + shape[scatter_dimension + 1:])
    return batching.moveaxis(total, scatter_dimension, 0), True


def _reduce_scatter_lower(ctx, x, **params):
    dim = params["scatter_dimension"]
    out = ctx.avals_out[0].strip_weak_type()
    tiled_shape = list(x.aval.shape)
    tiled_shape[dim] //= params["axis_size"]
    scalar = ShapedArray((), x.aval.dtype)
    region = ctx.region([scalar, scalar], lambda c, a, b: c.binary("stablehlo.add", a, b))
    result = ctx.op("stablehlo.reduce_scatter", [x], out.update(shape=tuple(tiled_shape)),
                    {"scatter_dimension": hlo.i64_attr(dim), **_collective_attrs(ctx, params)},
                    regions=[region])
    return ctx.reshape(result, out.shape)


def _define_reduce_scatter(name, abstract_eval, gather):
    return define_primitive(
        name, impl=_unbound_impl, abstract_eval=abstract_eval, jvp=ad.linear_jvp,
        transpose=lambda ct, x, *, scatter_dimension, **p: [gather().bind(
            ad.instantiate_zeros(ct), all_gather_dimension=scatter_dimension, **p)],
        batch=_exchange_batch(_reduce_scatter_stacked, ("scatter_dimension",)),
        lower=_reduce_scatter_lower, samples=_COLLECTIVE, is_collective=True)


def _unreduced_reduce_scatter_abstract_eval(x, **params):
    """psum_scatter of partial sums in a typed body: each member's block of the sum."""
    moved = parallel.moved_along("unreduced_reduce_scatter", "unreduced", "varying")
    return moved(_reduce_scatter_abstract_eval(x, **params), axes=params["axis_name"])


reduce_scatter_p = _define_reduce_scatter("reduce_scatter", _reduce_scatter_abstract_eval,
                                          lambda: all_gather_p)
psum_scatter_p = reduce_scatter_p
unreduced_reduce_scatter_p = _define_reduce_scatter(
    "unreduced_reduce_scatter", _unreduced_reduce_scatter_abstract_eval,
    lambda: all_gather_reduced_p)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None,
                 tiled=False):
    """Sums x (a pytree) over the members of the named axis (or axes, or of its
    axis_index_group) and gives the i-th member only the i-th chunk of the sum along
    scatter_dimension: untiled that dimension must have the group's size and
    disappears; tiled it is split into equal chunks."""
    names = parallel.axis_names(axis_name, "psum_scatter")
    n, groups = _group_size(names, axis_index_groups, "psum_scatter")
    if groups is not None:
        n = len(groups[0])

    def one(v):
        if get_aval(v).dtype == np.bool_:
            v = ew.convert_element_type(v, np.int32)
        prim = reduce_scatter_p
        if all(n in sharding_mod.vma_axes() for n in names) and parallel.state_along(
                get_aval(v), names, "jax.lax.psum_scatter") == "unreduced":
            prim = unreduced_reduce_scatter_p   # partial sums: no cast to varying first
        else:
            v = parallel.vary_along(v, names)
        dim = canonicalize_axis(scatter_dimension, get_aval(v).ndim, "scatter_dimension")
        params = dict(axis_name=names, scatter_dimension=dim, axis_size=n, tiled=bool(tiled),
                      axis_index_groups=groups)
        _reduce_scatter_abstract_eval(get_aval(v), **params)   # batch rules do not check
        return prim.bind(v, **params)
    return tree_util.tree_map(one, x)


# --- built from the others ---------------------------------------------------------------------

def pbroadcast(x, axis_name, source):
    """Every member of the named axis (or axes) gets the value of member `source`."""
    names = parallel.axis_names(axis_name, "pbroadcast")
    size = _group_size(names, None, "pbroadcast")[0]
    source = operator.index(source)
    if not 0 <= source < size:
        raise ValueError(f"pbroadcast: source {source} is outside axis {axis_name!r} of "
                         f"size {size}.")
    is_source = ew.eq(parallel.axis_index(names), np.int32(source))

    def one(v):
        aval = get_aval(v)
        mask = st.broadcast_in_dim(is_source, aval.shape, ())
        kept = ew.select(mask, v, st.full(aval.shape, 0, aval.dtype))
        return parallel.psum(kept, names)
    return tree_util.tree_map(one, x)


def axis_size(axis_name):
    """The number of members of the named axis (the product of sizes for a tuple of
    names), as a Python int."""
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    return int(np.prod([batching.axis_env_size(n) for n in names], dtype=np.int64))


__all__ = ["ppermute_p", "ppermute", "pshuffle", "all_gather_p", "all_gather_invariant_p",
           "all_gather", "all_to_all_p",
           "all_to_all", "pswapaxes", "reduce_scatter_p", "psum_scatter_p", "psum_scatter",
           "pbroadcast", "axis_size"]
