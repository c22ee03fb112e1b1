"""The collectives that exchange data between members of named axes (rather than reduce
it): ppermute (ppermute_p), all_to_all (all_to_all_p) and
psum_scatter (reduce_scatter_p) with all their rules, and pshuffle, pswapaxes, pbroadcast
and axis_size built from them. Under vmap the batch rules move data along the batch; under
pmap the lowerings are XLA's cross-replica collective_permute, all_to_all and
reduce_scatter. Imports core, interpreters, backends.stablehlo, tree_util and lax."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src import tree_util
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive, no_samples
from pyjax._src.interpreters import ad, batching
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import indexing
from pyjax._src.lax import parallel
from pyjax._src.lax import reductions as red
from pyjax._src.lax import structural as st
from pyjax._src.util import canonicalize_axis

_COLLECTIVE = no_samples("a collective runs only under vmap/pmap binding its axis; "
                         "tests/lax/test_lax_ops.py checks it under both")


def _unbound_impl(x, *, axis_name, **params):
    raise batching.unbound_axis_error(axis_name)


def _front(x, d, size):
    """x with its batch (the members of the named axis) at dimension 0."""
    return batching.bdim_at_front(x, d, size)


def _shifted_rule(prim, dims_params):
    """The batch rule for an axis other than the collective's own: the batch moves to the
    front and the collective's dimension params shift by one."""
    def rule(x, d, size, params):
        x = _front(x, d, size)
        shifted = {k: (v + 1 if k in dims_params else v) for k, v in params.items()}
        return prim.bind(x, **shifted), 0
    return rule


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


def _ppermute_abstract_eval(x, *, axis_name, perm):
    return x


def _ppermute_batch(axis, args, dims, *, axis_name, perm):
    (x,), (d,) = args, dims
    if axis.name != axis_name:
        if d is None:
            return ppermute_p.bind(x, axis_name=axis_name, perm=perm), None
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    size = axis.size
    x = _front(x, d, size)
    # Member `dest` gets the value of member `source`; members nobody sends to get zeros.
    source_of = np.zeros(size, np.int32)
    received = np.zeros(size, np.bool_)
    for source, dest in perm:
        source_of[dest], received[dest] = source, True
    taken = _take_rows(x, source_of)
    aval = get_aval(x)
    mask = st.broadcast_in_dim(received, aval.shape, (0,))
    return ew.select(mask, taken, st.full(aval.shape, 0, aval.dtype)), 0


def _take_rows(x, rows):
    """x[rows] along dimension 0 for a constant integer array `rows`."""
    aval = get_aval(x)
    if not aval.shape[0]:
        return x
    dnums = indexing.GatherDimensionNumbers(offset_dims=tuple(range(1, aval.ndim)),
                                            collapsed_slice_dims=(0,), start_index_map=(0,))
    return indexing.gather(x, rows.reshape(-1, 1), dnums, (1,) + aval.shape[1:],
                           mode="promise_in_bounds")


def _ppermute_lower(ctx, x, *, axis_name, perm):
    groups = ctx.module.replica_group_ids((axis_name,))
    pairs = np.array([[g[s], g[t]] for g in groups for s, t in perm], np.int64).reshape(-1, 2)
    attrs = {"source_target_pairs": hlo.dense_attr(pairs, ShapedArray(pairs.shape, np.int64))
             if pairs.size else "dense<> : tensor<0x2xi64>", **ctx.module.channel_attrs()}
    return ctx.op("stablehlo.collective_permute", [x], x.aval.strip_weak_type(), attrs)


ppermute_p = define_primitive(
    "ppermute", impl=_unbound_impl, abstract_eval=_ppermute_abstract_eval, jvp=ad.linear_jvp,
    transpose=lambda ct, x, *, axis_name, perm: [ppermute_p.bind(
        ct, axis_name=axis_name, perm=tuple((t, s) for s, t in perm))],
    batch=_ppermute_batch, lower=_ppermute_lower, samples=_COLLECTIVE,
    is_collective=True, batch_needs_axis=True)


def _single_name(axis_name, what):
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    if len(names) != 1:
        raise NotImplementedError(f"{what} over several axes at once ({axis_name}) is not "
                                  "supported; apply it once per axis.")
    batching.axis_env_size(names[0])   # NameError when nothing binds it
    return names[0]


def ppermute(x, axis_name, perm):
    """Sends each member's x (a pytree) to another member of the named axis: `perm` lists
    (source, destination) index pairs; members that no pair sends to get zeros."""
    name = _single_name(axis_name, "ppermute")
    try:
        perm = tuple((operator.index(s), operator.index(t)) for s, t in perm)
    except (TypeError, ValueError):
        raise TypeError(f"ppermute: perm must be a sequence of (source, destination) integer "
                        f"pairs, got {perm!r}.") from None
    _check_perm(perm, batching.axis_env_size(name), name)
    return tree_util.tree_map(lambda v: ppermute_p.bind(v, axis_name=name, perm=perm), x)


def pshuffle(x, axis_name, perm):
    """Member i gets the value of member perm[i] (perm is a permutation of the indices)."""
    name = _single_name(axis_name, "pshuffle")
    perm = [operator.index(p) for p in perm]
    if sorted(perm) != list(range(batching.axis_env_size(name))):
        raise ValueError(f"`perm` does not represent a permutation: {perm} (pshuffle over "
                         f"axis {name!r} of size {batching.axis_env_size(name)}).")
    return ppermute(x, name, list(zip(perm, range(len(perm)))))


# --- all_to_all ---------------------------------------------------------------------------

def _all_to_all_abstract_eval(x, *, axis_name, split_axis, concat_axis, axis_size,
                              axis_index_groups):
    if x.shape[split_axis] % axis_size:
        raise ValueError(f"all_to_all: dimension {split_axis} (size {x.shape[split_axis]}) "
                         f"must divide evenly among the {axis_size} members of axis "
                         f"{axis_name!r}.")
    shape = list(x.shape)
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return x.update(shape=tuple(shape))


def _all_to_all_batch(axis, args, dims, *, axis_name, split_axis, concat_axis, axis_size,
                      axis_index_groups):
    (x,), (d,) = args, dims
    params = dict(axis_name=axis_name, split_axis=split_axis, concat_axis=concat_axis,
                  axis_size=axis_size, axis_index_groups=axis_index_groups)
    if axis.name != axis_name:
        if d is None:
            return all_to_all_p.bind(x, **params), None
        return _shifted_rule(all_to_all_p, ("split_axis", "concat_axis"))(
            x, d, axis.size, params)
    parallel.no_grouped_vmap(axis_index_groups)
    n = axis.size
    x = _front(x, d, n)
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
    return st.reshape(moved, (n,) + tuple(out_shape)), 0


def _all_to_all_lower(ctx, x, *, axis_name, split_axis, concat_axis, axis_size,
                      axis_index_groups):
    return ctx.op("stablehlo.all_to_all", [x], ctx.avals_out[0].strip_weak_type(),
                  {"split_dimension": hlo.i64_attr(split_axis),
                   "concat_dimension": hlo.i64_attr(concat_axis),
                   "split_count": hlo.i64_attr(axis_size),
                   **ctx.module.collective_attrs((axis_name,), global_ids=False,
                                                 index_groups=axis_index_groups)})


all_to_all_p = define_primitive(
    "all_to_all", impl=_unbound_impl, abstract_eval=_all_to_all_abstract_eval,
    jvp=ad.linear_jvp,
    transpose=lambda ct, x, *, split_axis, concat_axis, **p: [all_to_all_p.bind(
        ct, split_axis=concat_axis, concat_axis=split_axis, **p)],
    batch=_all_to_all_batch, lower=_all_to_all_lower, samples=_COLLECTIVE,
    is_collective=True, batch_needs_axis=True)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Splits x (a pytree) along split_axis into one chunk per member of the named axis,
    sends chunk j to member j, and joins what each member receives along concat_axis.
    Untiled, split_axis must have the axis's size; it disappears and the members' chunks
    form a new dimension at concat_axis. Tiled, the chunks are concatenated."""
    name = _single_name(axis_name, "all_to_all")
    groups = parallel.index_groups(axis_index_groups, (name,), "all_to_all")
    n = batching.axis_env_size(name) if groups is None else len(groups[0])

    def one(v):
        ndim = get_aval(v).ndim
        split = canonicalize_axis(split_axis, ndim, "split_axis")
        size = get_aval(v).shape[split]
        if tiled:
            concat = canonicalize_axis(concat_axis, ndim, "concat_axis")
            if size % n:
                raise ValueError(f"all_to_all: the split axis {split} has size {size}, "
                                 f"which the {n} members of axis {name!r} cannot share "
                                 "evenly.")
            return all_to_all_p.bind(v, axis_name=name, split_axis=split,
                                     concat_axis=concat, axis_size=n,
                                     axis_index_groups=groups)
        concat = canonicalize_axis(concat_axis, ndim, "concat_axis")
        if size != n:
            raise ValueError(f"all_to_all requires the size of the mapped axis {name!r} "
                             f"({n}) to equal x.shape[split_axis] ({size}); pass "
                             "tiled=True to split a longer axis into chunks.")
        if split < concat:
            concat += 1   # concat_axis counts positions after split_axis is removed
            v = st.expand_dims(v, (concat,))
        elif concat < split:
            v = st.expand_dims(v, (concat,))
            split += 1
        out = all_to_all_p.bind(v, axis_name=name, split_axis=split, concat_axis=concat,
                                axis_size=n, axis_index_groups=groups)
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
                             f"{axis_size} members of axis {axis_name!r}.")
        shape[scatter_dimension] //= axis_size
    else:
        if shape[scatter_dimension] != axis_size:
            raise ValueError(f"psum_scatter: dimension {scatter_dimension} has size "
                             f"{shape[scatter_dimension]}, but untiled it must equal the "
                             f"size {axis_size} of axis {axis_name!r}; pass tiled=True to "
                             "scatter chunks of a longer dimension.")
        del shape[scatter_dimension]
    return x.update(shape=tuple(shape))


def _reduce_scatter_batch(axis, args, dims, *, axis_name, scatter_dimension, axis_size,
                          tiled, axis_index_groups):
    (x,), (d,) = args, dims
    params = dict(axis_name=axis_name, scatter_dimension=scatter_dimension,
                  axis_size=axis_size, tiled=tiled, axis_index_groups=axis_index_groups)
    if axis.name != axis_name:
        if d is None:
            return reduce_scatter_p.bind(x, **params), None
        return _shifted_rule(reduce_scatter_p, ("scatter_dimension",))(
            x, d, axis.size, params)
    parallel.no_grouped_vmap(axis_index_groups)
    n = axis.size
    total = red.reduce_sum(x, (d,)) if d is not None else parallel._scaled(x, n)
    shape = get_aval(total).shape
    if tiled:
        chunk = shape[scatter_dimension] // n
        total = st.reshape(total, shape[:scatter_dimension] + (n, chunk)
                           + shape[scatter_dimension + 1:])
    return batching.moveaxis(total, scatter_dimension, 0), 0


def _reduce_scatter_lower(ctx, x, *, axis_name, scatter_dimension, axis_size, tiled,
                          axis_index_groups):
    out = ctx.avals_out[0].strip_weak_type()
    tiled_shape = list(x.aval.shape)
    tiled_shape[scatter_dimension] //= axis_size
    scalar = ShapedArray((), x.aval.dtype)
    region = ctx.region([scalar, scalar], lambda c, a, b: c.binary("stablehlo.add", a, b))
    result = ctx.op("stablehlo.reduce_scatter", [x], out.update(shape=tuple(tiled_shape)),
                    {"scatter_dimension": hlo.i64_attr(scatter_dimension),
                     **ctx.module.collective_attrs((axis_name,),
                                                   index_groups=axis_index_groups)},
                    regions=[region])
    return ctx.reshape(result, out.shape)


def _reduce_scatter_transpose(ct, x, *, axis_name, scatter_dimension, axis_size, tiled,
                              axis_index_groups):
    return [parallel.all_gather_p.bind(ct, axis_name=axis_name, axis_size=axis_size,
                                       all_gather_dimension=scatter_dimension,
                                       tiled=tiled, axis_index_groups=axis_index_groups)]


reduce_scatter_p = define_primitive(
    "reduce_scatter", impl=_unbound_impl, abstract_eval=_reduce_scatter_abstract_eval,
    jvp=ad.linear_jvp, transpose=_reduce_scatter_transpose, batch=_reduce_scatter_batch,
    lower=_reduce_scatter_lower, samples=_COLLECTIVE, is_collective=True, batch_needs_axis=True)
psum_scatter_p = reduce_scatter_p


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None,
                 tiled=False):
    """Sums x (a pytree) over the members of the named axis and gives member i only the
    i-th chunk of the sum along scatter_dimension: untiled that dimension must have the
    axis's size and disappears; tiled it is split into equal chunks."""
    name = _single_name(axis_name, "psum_scatter")
    groups = parallel.index_groups(axis_index_groups, (name,), "psum_scatter")
    n = batching.axis_env_size(name) if groups is None else len(groups[0])

    def one(v):
        if get_aval(v).dtype == np.bool_:
            v = ew.convert_element_type(v, np.int32)
        dim = canonicalize_axis(scatter_dimension, get_aval(v).ndim, "scatter_dimension")
        params = dict(axis_name=name, scatter_dimension=dim, axis_size=n, tiled=bool(tiled),
                      axis_index_groups=groups)
        _reduce_scatter_abstract_eval(get_aval(v), **params)   # batch rules do not check
        return reduce_scatter_p.bind(v, **params)
    return tree_util.tree_map(one, x)


# --- built from the others ---------------------------------------------------------------------

def pbroadcast(x, axis_name, source):
    """Every member of the named axis gets the value of member `source`."""
    name = _single_name(axis_name, "pbroadcast")
    size = batching.axis_env_size(name)
    source = operator.index(source)
    if not 0 <= source < size:
        raise ValueError(f"pbroadcast: source {source} is outside axis {name!r} of size "
                         f"{size}.")
    is_source = ew.eq(parallel.axis_index(name), np.int32(source))

    def one(v):
        aval = get_aval(v)
        mask = st.broadcast_in_dim(is_source, aval.shape, ())
        kept = ew.select(mask, v, st.full(aval.shape, 0, aval.dtype))
        return parallel.psum(kept, name)
    return tree_util.tree_map(one, x)


def axis_size(axis_name):
    """The number of members of the named axis (the product of sizes for a tuple of
    names), as a Python int."""
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    return int(np.prod([batching.axis_env_size(n) for n in names], dtype=np.int64))


__all__ = ["ppermute_p", "ppermute", "pshuffle", "all_to_all_p", "all_to_all", "pswapaxes",
           "reduce_scatter_p", "psum_scatter_p", "psum_scatter", "pbroadcast", "axis_size",
]
