"""Reshaping ops built on the structural family: split, tile, stack and unstack (their
primitives with all their rules), and the lax functions JAX builds from structural
primitives: broadcast_like, collapse, full_like,
broadcast_to_rank, broadcast_shapes, empty, index_take. Imports core, interpreters,
backends.stablehlo and the lax families."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src import dtypes
from pyjax._src.array import Array
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, get_aval, is_valid_jax_type
from pyjax._src.core.trace import Tracer, define_primitive
from pyjax._src.interpreters import ad, batching, jet
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.interpreters.ad import Zero
from pyjax._src.lax import builders as b
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as red
from pyjax._src.lax import sharding_rules
from pyjax._src.lax.sharding_constraint import apply_out_sharding
from pyjax._src.lax import structural as st
from pyjax._src.lax import transfers
from pyjax._src.shape_poly import is_symbolic_dim
from pyjax._src.util import canonicalize_axis


# --- split ------------------------------------------------------------------------------

def _split_abstract_eval(x, *, sizes, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"lax.split: axis {axis} is out of bounds for an operand of rank "
                         f"{x.ndim}.")
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if sum(sizes) != x.shape[axis]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of "
                         f"the operand shape {list(x.shape)}")
    # Pieces along an unsplit dimension keep x's type sharding (partial sums, reduced
    # values included).
    kept = x._sharding if x._sharding is not None and \
        sharding_rules.entries(x)[axis] is None else None
    return [x.update(shape=x.shape[:axis] + (s,) + x.shape[axis + 1:], sharding=kept)
            for s in sizes]


def _split_impl(x, *, sizes, axis):
    return np.split(x, np.cumsum(sizes[:-1]).astype(int), axis) if sizes else []


def _split_jvp(primals, tangents, *, sizes, axis):
    (x,), (t,) = primals, tangents
    outs = split_p.bind(x, sizes=sizes, axis=axis)
    if type(t) is Zero:
        return outs, [Zero(ad.tangent_aval(get_aval(o))) for o in outs]
    return outs, split_p.bind(t, sizes=sizes, axis=axis)


def _split_transpose(cts, x, *, sizes, axis):
    pieces = [ad.instantiate_zeros(ct) for ct in cts]
    if not pieces:
        return [st.zeros_like_aval(x.aval)]
    return [st.concatenate(pieces, axis)]


def _split_batch(args, dims, *, sizes, axis):
    (x,), (d,) = args, dims
    outs = split_p.bind(x, sizes=sizes, axis=axis + (d <= axis))
    return outs, [d] * len(outs)


def _split_lower(ctx, x, *, sizes, axis):
    starts = np.cumsum((0,) + tuple(sizes))
    return [ctx.slice_in_dim(x, int(lo), int(hi), axis)
            for lo, hi in zip(starts[:-1], starts[1:])]


split_p = define_primitive(
    "split", multiple_results=True, impl=_split_impl, abstract_eval=_split_abstract_eval,
    jvp=_split_jvp, jet=jet.linear_rule, transpose=_split_transpose, batch=_split_batch,
    lower=_split_lower,
    samples=lambda: [
        b.Sample([b.random_values((4, 6), np.float32)], {"sizes": (1, 2, 3), "axis": 1}),
        b.Sample([b.random_values((4, 3), np.int32)], {"sizes": (3, 1), "axis": 0})],
        is_linear=True)


def split(operand, sizes, axis=0):
    """Splits operand along `axis` into pieces of the given sizes (which must add up to
    that dimension); returns a list of arrays."""
    aval = get_aval(operand)
    sizes = tuple(operator.index(s) for s in sizes)
    return split_p.bind(operand, sizes=sizes, axis=canonicalize_axis(axis, aval.ndim))


# --- tile -------------------------------------------------------------------------------

def _tile_abstract_eval(x, *, reps):
    if len(reps) != x.ndim:
        raise ValueError(f"lax.tile: reps {reps} must have one entry per operand dimension "
                         f"(the operand has shape {x.shape}); use jnp.tile for NumPy's "
                         "rules on differing lengths.")
    if any(r < 0 for r in reps):
        raise ValueError(f"lax.tile: reps must be nonnegative, got {reps}.")
    return x.update(shape=tuple(d * r for d, r in zip(x.shape, reps)))


def _interleaved(shape, reps):
    """The shape (r0, d0, r1, d1, ...) the tiled array is a reshape of."""
    return tuple(v for pair in zip(reps, shape) for v in pair)


def _tile_transpose(ct, x, *, reps):
    shape = x.aval.shape
    blocks = st.reshape(ct, _interleaved(shape, reps))
    return [red.reduce_sum(blocks, tuple(range(0, 2 * len(shape), 2)))]


def _tile_batch(args, dims, *, reps):
    (x,), (d,) = args, dims
    reps = reps[:d] + (1,) + reps[d:]
    return tile_p.bind(x, reps=reps), d


def _tile_lower(ctx, x, *, reps):
    shape = x.aval.shape
    wide = x.aval.update(shape=_interleaved(shape, reps))
    spread = ctx.op("stablehlo.broadcast_in_dim", [x], wide.strip_weak_type(),
                    {"broadcast_dimensions": hlo.i64_array(range(1, 2 * len(shape), 2))})
    return ctx.reshape(spread, ctx.avals_out[0].shape)


tile_p = define_primitive(
    "tile", impl=lambda x, *, reps: np.tile(x, reps), abstract_eval=_tile_abstract_eval,
    jvp=ad.linear_jvp, transpose=_tile_transpose, batch=_tile_batch, lower=_tile_lower,
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32)], {"reps": (2, 3)}),
             b.Sample([b.random_values((3,), np.int32)], {"reps": (2,)}),
             b.Sample([b.random_values((2, 1), np.float32)], {"reps": (1, 0)})])


def tile(operand, reps):
    """Repeats operand reps[i] times along each dimension i (len(reps) == operand.ndim)."""
    return tile_p.bind(operand, reps=tuple(operator.index(r) for r in reps))


# --- stack and unstack -------------------------------------------------------------------

def _stack_abstract_eval(*xs, axis):
    if not xs:
        raise ValueError("lax.stack requires at least one operand.")
    if len({x.shape for x in xs}) != 1:
        raise ValueError("lax.stack: all input arrays must have the same shape, got "
                         f"{', '.join(str(x.shape) for x in xs)}.")
    b.same_dtypes("stack", xs)
    shape = xs[0].shape
    return xs[0].update(shape=shape[:axis] + (len(xs),) + shape[axis:],
                        weak_type=all(x.weak_type for x in xs))


def _stack_transpose(ct, *xs, axis):
    pieces = unstack_p.bind(ad.instantiate_zeros(ct), axis=axis)
    return [p if ad.is_undefined_primal(x) else None for p, x in zip(pieces, xs)]


def _stack_batch(args, dims, *, axis):
    size = batching.axis_size_of(args, dims)
    xs = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    return stack_p.bind(*xs, axis=axis + 1), 0


def _stack_lower(ctx, *xs, axis):
    out = ctx.avals_out[0]
    piece = out.shape[:axis] + (1,) + out.shape[axis + 1:]
    return ctx.concatenate([ctx.reshape(x, piece) for x in xs], axis)


stack_p = define_primitive(
    "stack", impl=lambda *xs, axis: np.stack(xs, axis), abstract_eval=_stack_abstract_eval,
    jvp=ad.linear_jvp, transpose=_stack_transpose, batch=_stack_batch, lower=_stack_lower,
    samples=lambda: [
        b.Sample([b.random_values((2, 3), np.float32, seed=i) for i in range(3)],
                 {"axis": 1}),
        b.Sample([b.random_values((4,), np.int32, seed=i) for i in range(2)], {"axis": 0})])


def _unstack_abstract_eval(x, *, axis):
    if not 0 <= axis < x.ndim:
        raise ValueError(f"lax.unstack: axis {axis} is out of bounds for an operand of "
                         f"rank {x.ndim}.")
    return [x.update(shape=x.shape[:axis] + x.shape[axis + 1:])] * x.shape[axis]


def _unstack_jvp(primals, tangents, *, axis):
    (x,), (t,) = primals, tangents
    outs = unstack_p.bind(x, axis=axis)
    if type(t) is Zero:
        return outs, [Zero(ad.tangent_aval(get_aval(o))) for o in outs]
    return outs, unstack_p.bind(t, axis=axis)


def _unstack_transpose(cts, x, *, axis):
    if not cts:
        return [st.zeros_like_aval(x.aval)]
    return [stack_p.bind(*map(ad.instantiate_zeros, cts), axis=axis)]


def _unstack_batch(args, dims, *, axis):
    (x,), (d,) = args, dims
    outs = unstack_p.bind(x, axis=axis + (d <= axis))
    return outs, [d - (d > axis)] * len(outs)


def _unstack_lower(ctx, x, *, axis):
    shape = ctx.avals_out[0].shape if ctx.avals_out else ()
    return [ctx.reshape(ctx.slice_in_dim(x, i, i + 1, axis), shape)
            for i in range(x.aval.shape[axis])]


unstack_p = define_primitive(
    "unstack", multiple_results=True, impl=lambda x, *, axis: list(np.moveaxis(x, axis, 0)),
    abstract_eval=_unstack_abstract_eval, jvp=_unstack_jvp, jet=jet.linear_rule,
    transpose=_unstack_transpose,
    batch=_unstack_batch, lower=_unstack_lower, is_linear=True,
    samples=lambda: [b.Sample([b.random_values((3, 2), np.float32)], {"axis": 0}),
                     b.Sample([b.random_values((2, 3, 2), np.int32)], {"axis": 1})])


def stack(operands, axis=0):
    """Joins arrays of one shape and dtype along a new dimension `axis`."""
    operands = list(operands)
    if not operands:
        raise ValueError("lax.stack requires at least one operand.")
    axis = canonicalize_axis(axis, get_aval(operands[0]).ndim + 1)
    return stack_p.bind(*operands, axis=axis)


def unstack(x, axis=0):
    """The slices of x along `axis`, as a tuple of arrays of one dimension less."""
    aval = get_aval(x)
    if aval.ndim == 0:
        raise ValueError("lax.unstack requires an operand of rank >= 1.")
    return tuple(unstack_p.bind(x, axis=canonicalize_axis(axis, aval.ndim)))


def broadcast_like(arr, like_arr):
    """arr broadcast (NumPy-style, trailing dimensions aligned) to the shape of like_arr,
    split as like_arr's type is (over Explicit mesh axes)."""
    aval, like = get_aval(arr), get_aval(like_arr)
    shape, like_shape = aval.shape, like.shape
    lead = len(like_shape) - len(shape)
    split = lambda a: a._sharding.spec.partitions if a._sharding is not None \
        else (None,) * a.ndim   # noqa: E731
    if len(shape) > len(like_shape) or any(
            d not in (1, n) for d, n in zip(shape[::-1], like_shape[::-1])) or any(
            s is not None and s != t for s, t in zip(split(aval), split(like)[lead:])):
        typ = lambda a: f"{a.dtype.name}[{a._dims()}]"  # noqa: E731
        raise ValueError(f"Incompatible types for broadcasting: input type={typ(aval)} and "
                         f"requested type={typ(like.update(dtype=aval.dtype))}")
    out = st.broadcast_in_dim(arr, like_shape, tuple(range(lead, len(like_shape))))
    if like._sharding is None or not like._sharding.mesh.explicit_axes:
        return out
    return apply_out_sharding(out, like._sharding, "broadcast_like")


def collapse(operand, start_dimension, stop_dimension=None):
    """Merges dimensions start_dimension..stop_dimension-1 (Python slice rules) into one."""
    shape = get_aval(operand).shape
    lo, hi, step = slice(start_dimension, stop_dimension).indices(len(shape))
    if step != 1 or hi < lo:
        raise ValueError(f"lax.collapse: invalid dimension range [{start_dimension}, "
                         f"{stop_dimension}) for an operand of rank {len(shape)}.")
    size = int(np.prod(shape[lo:hi], dtype=np.int64))
    return st.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of `shape` filled with fill_value (a scalar), laid out as `sharding`
    when one is given (outside jit; inside, as JAX, it is ignored)."""
    out = st.full(shape, fill_value, dtype)
    return out if sharding is None or isinstance(out, Tracer) else \
        transfers.place(out, sharding)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array shaped like x (or `shape`) filled with fill_value, in x's dtype unless
    `dtype` is given; weak-typed when x is and no dtype is given. Placed as `sharding`
    says, or (as JAX) as a committed, not weak-typed x is when the shape is x's or x is
    replicated. x may be anything with a shape and a dtype (a ShapeDtypeStruct)."""
    aval = get_aval(x) if is_valid_jax_type(x) else ShapedArray(
        x.shape, x.dtype, manual_axis_type=getattr(x, "manual_axis_type", None))
    out_dtype = aval.dtype if dtype is None else dtypes.canonicalize_dtype(dtype)
    out_shape = aval.shape if shape is None else tuple(shape)
    weak = dtype is None and aval.weak_type
    if (sharding is None and type(x) is Array and x.committed and not weak
            and (out_shape == aval.shape or x.sharding.is_fully_replicated)):
        sharding = x.sharding
    out = full(out_shape, fill_value, out_dtype, sharding=sharding)
    if weak:
        out = ew.convert_element_type_p.bind(out, new_dtype=out_dtype, weak_type=True)
    return vary_like(out, aval)


def vary_like(out, aval):
    """`out` made from `aval`'s shape (full_like and the like): inside shard_map it
    varies along the manual axes x does, as JAX types it."""
    return pe.vary_like(out, aval)


def broadcast_to_rank(x, rank):
    """x with leading size-1 dimensions added up to `rank` (unchanged if already there)."""
    ndim = get_aval(x).ndim
    if ndim == rank:
        return x
    if ndim > rank:
        raise ValueError(f"lax.broadcast_to_rank: the operand has rank {ndim}, more than "
                         f"the requested rank {rank}.")
    return st.broadcast(x, (1,) * (rank - ndim))


def broadcast_shapes(*shapes):
    """The NumPy-style broadcast of shapes (trailing alignment; size-1 dims stretch)."""
    try:
        shapes = [tuple(d if is_symbolic_dim(d) else operator.index(d) for d in s)
                  for s in shapes]
    except TypeError:
        bad = next((s for s in shapes if not hasattr(s, "__iter__")
                    or not all(hasattr(d, "__index__") for d in s)), shapes)
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {bad}.") from None
    for s in shapes:
        if any(not is_symbolic_dim(d) and d < 0 for d in s):
            raise TypeError(f"Only non-negative indices are allowed when broadcasting "
                            f"static shapes, but got shape {s}.")
    if not shapes:
        return ()
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + s for s in shapes]
    out = []
    for i, dims in enumerate(zip(*padded)):
        sizes = set(dims) - {1}
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes} "
                             f"(dimension {i} has sizes {sorted(sizes, key=str)}).")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` (an int or a sequence) and `dtype` whose contents are
    unspecified (zeros here)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return st.full(shape, 0, dtypes.canonicalize_dtype(dtype))


def index_take(src, idxs, axes):
    """src indexed by the 1-D integer arrays `idxs` along `axes` (negative indices count
    from the end): the result's leading dimension runs over the index arrays' shared
    length, src's other axes follow."""
    from pyjax._src.lax import indexing
    axes = tuple(operator.index(a) for a in axes)
    if len(idxs) != len(axes):
        raise ValueError(f"lax.index_take: {len(idxs)} index arrays for {len(axes)} axes.")
    src_aval = get_aval(src)
    axes = tuple(canonicalize_axis(a, src_aval.ndim) for a in axes)
    cols = [st.reshape(i, (get_aval(i).size, 1)) for i in idxs]
    indices = st.concatenate(cols, 1) if len(cols) > 1 else cols[0]
    bounds = np.array([[src_aval.shape[a] for a in axes]], get_aval(indices).dtype)
    indices = ew.rem(ew.add(ew.rem(indices, bounds), bounds), bounds)   # wrap negatives
    slice_sizes = tuple(1 if d in axes else s for d, s in enumerate(src_aval.shape))
    offset_dims = tuple(range(1, src_aval.ndim - len(axes) + 1))
    dnums = indexing.GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=axes,
                                            start_index_map=axes)
    return indexing.gather(src, indices, dnums, slice_sizes)


__all__ = ["split_p", "split", "tile_p", "tile", "stack_p", "stack", "unstack_p", "unstack",
           "broadcast_like", "collapse", "full_like",
           "broadcast_to_rank", "broadcast_shapes", "empty", "index_take"]
