"""Gather and scatter: XLA's general indexed read and indexed update, with their dimension
numbers, out-of-bounds modes and every rule. Imports core, interpreters, the NumPy
executor (scatter_apply's update function) and the other lax families."""
from __future__ import annotations

import enum
import operator
from typing import NamedTuple

import numpy as np

from pyjax._src import dtypes, errors
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import NO_TRANSPOSE, RuleFactory, Tracer, define_primitive
from pyjax._src.interpreters import ad, batching, jet
from pyjax._src.interpreters.ad import Zero
from pyjax._src.lax import builders as b
from pyjax._src.lax import sharding_rules
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import structural as st
from pyjax._src.shape_poly import is_symbolic_dim
from pyjax._src.util import prod


class GatherDimensionNumbers(NamedTuple):
    """How a gather's operand, start indices and output dimensions relate.

    offset_dims: output dimensions that hold the slice dimensions (sorted).
    collapsed_slice_dims: operand dimensions sliced with size 1 and dropped (sorted).
    start_index_map: for each entry of an index vector, the operand dimension it starts.
    operand_batching_dims / start_indices_batching_dims: operand dimensions indexed by the
    position along the paired dimension of the start indices (batched gathers)."""
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter's operand, indices and updates dimensions relate.

    update_window_dims: updates dimensions that hold the window (sorted).
    inserted_window_dims: operand dimensions the window has size 1 in (sorted).
    scatter_dims_to_operand_dims: for each entry of an index vector, its operand dimension.
    operand_batching_dims / scatter_indices_batching_dims: as in GatherDimensionNumbers."""
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """What happens to out-of-bounds indices.

    CLIP: indices are clamped so the whole window is in bounds.
    FILL_OR_DROP: a gathered window that is partly out of bounds is filled with
      `fill_value`; a scattered window that is partly out of bounds is dropped.
    PROMISE_IN_BOUNDS: the caller promises indices are in bounds; in practice gathers
      clamp and scatters drop, and gradients are wrong for out-of-bounds indices."""
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f'Unknown gather mode "{s}"; expected one of "clip", "fill", '
                         '"drop", "promise_in_bounds" or a GatherScatterMode.')


CLIP = GatherScatterMode.CLIP
FILL_OR_DROP = GatherScatterMode.FILL_OR_DROP
PROMISE_IN_BOUNDS = GatherScatterMode.PROMISE_IN_BOUNDS


def _int_tuple(dims):
    return tuple(operator.index(d) for d in dims)


def _canonical_dnums(cls, dnums):
    if not isinstance(dnums, cls):
        raise TypeError(f"dimension_numbers must be a lax.{cls.__name__}, got "
                        f"{type(dnums).__name__}: {dnums!r}")
    return cls(*map(_int_tuple, dnums))


# --- shape checks shared by gather and scatter ------------------------------------------
# They follow XLA's shape inference (the order of its checks and its wording), as JAX's
# do, so that a malformed dimension_numbers gets the message a JAX user knows.

def _check_sorted(op, label, dims):
    if list(dims) != sorted(dims):
        raise TypeError(f"{label} in {op} op must be sorted; got {dims}")


def _check_unique(op, label, dims):
    if len(set(dims)) != len(dims):
        raise TypeError(f"{label} in {op} op must not repeat; got: {dims}.")


def _check_in_range(op, label, dims, rank):
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(f"Invalid {label} set in {op} op; valid range is [0, {rank}); "
                            f"got: {d}.")


def _check_disjoint(op, label1, dims1, label2, dims2):
    if set(dims1) & set(dims2):
        raise TypeError(f"{label1} and {label2} in {op} op must be disjoint; got: {dims1} "
                        f"and {dims2}.")


def _check_indices(op, indices):
    if indices.dtype.kind not in "iu":
        # ValueError, as in JAX
        raise ValueError(f"{op}: indices must have an integer type, got {indices.dtype}.")
    if indices.ndim < 1:
        raise TypeError(f"{op}: indices must have rank >= 1 (the last dimension holds the "
                        f"index vectors), got shape {indices.shape}.")


def _check_batching(op, operand, indices, removed_label, removed, index_map_label,
                    index_map, op_batch, idx_batch_label, idx_batch):
    """The checks of the operand and indices batching dimensions, common to both ops."""
    title = op.capitalize()
    _check_unique(op, "operand_batching_dims", op_batch)
    _check_sorted(op, "operand_batching_dims", op_batch)
    _check_in_range(op, "operand_batching_dims", op_batch, operand.ndim)
    _check_disjoint(op, removed_label, removed, "operand_batching_dims", op_batch)
    _check_disjoint(op, index_map_label, index_map, "operand_batching_dims", op_batch)
    _check_unique(op, idx_batch_label, idx_batch)
    _check_in_range(op, idx_batch_label, idx_batch, indices.ndim)
    if indices.ndim - 1 in idx_batch:
        raise TypeError(f"{title} op cannot have the index vector dimension as a batching "
                        f"dimension; got {idx_batch}.")
    if len(op_batch) != len(idx_batch):
        raise TypeError(f"{title} op requires equal numbers of operand_batching_dims and "
                        f"{idx_batch_label}, got {op_batch} and {idx_batch}.")
    operand_batch = tuple(operand.shape[i] for i in op_batch)
    indices_batch = tuple(indices.shape[i] for i in idx_batch)
    if operand_batch != indices_batch:
        raise TypeError(f"{title} op requires operand batching dimensions and indices "
                        f"batching dimensions to have the same shape, got {operand_batch} "
                        f"and {indices_batch}.")
    return operand_batch


def _window_dims(ndim, removed, op_batch):
    """Operand dimensions that the window (the offset/update window dims) spans."""
    return [d for d in range(ndim) if d not in removed and d not in op_batch]


def _check_gather_shapes(operand, indices, d, slice_sizes):
    _check_indices("gather", indices)
    index_vector_size = indices.shape[-1]
    out_rank = len(d.offset_dims) + indices.ndim - 1
    _check_sorted("gather", "offset_dims", d.offset_dims)
    _check_unique("gather", "offset_dims", d.offset_dims)
    for i, dim in enumerate(d.offset_dims):
        if not 0 <= dim < out_rank:
            raise TypeError(f"Offset dimension {i} in gather op is out of bounds; got {dim}, "
                            f"but should have been in [0, {out_rank})")
    if len(d.start_index_map) != index_vector_size:
        raise TypeError(f"Gather op has {len(d.start_index_map)} elements in start_index_map "
                        f"and the bound of dimension index_vector_dim={indices.ndim - 1} of "
                        f"indices is {index_vector_size}. These two numbers must be equal.")
    for i, dim in enumerate(d.start_index_map):
        if not 0 <= dim < operand.ndim:
            raise TypeError(f"Invalid start_index_map; domain is [0, {operand.ndim}), got: "
                            f"{i}->{dim}.")
    _check_unique("gather", "start_index_map", d.start_index_map)
    _check_sorted("gather", "collapsed_slice_dims", d.collapsed_slice_dims)
    _check_in_range("gather", "collapsed_slice_dims", d.collapsed_slice_dims, operand.ndim)
    _check_unique("gather", "collapsed_slice_dims", d.collapsed_slice_dims)
    _check_batching("gather", operand, indices, "collapsed_slice_dims",
                    d.collapsed_slice_dims, "start_index_map", d.start_index_map,
                    d.operand_batching_dims, "start_indices_batching_dims",
                    d.start_indices_batching_dims)
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"Gather op must have one slice size for every input dimension; "
                        f"got: len(slice_sizes)={len(slice_sizes)}, "
                        f"input_shape.rank={operand.ndim}")
    if len(slice_sizes) != (len(d.offset_dims) + len(d.collapsed_slice_dims)
                            + len(d.operand_batching_dims)):
        raise TypeError(
            f"All components of the offset index in a gather op must either be a offset "
            f"dimension or explicitly collapsed/batching; got len(slice_sizes)="
            f"{len(slice_sizes)}, output_slice_sizes={d.offset_dims}, collapsed_slice_dims="
            f"{d.collapsed_slice_dims}, operand_batching_dims={d.operand_batching_dims}.")
    if indices.size:
        for i, (size, bound) in enumerate(zip(slice_sizes, operand.shape)):
            if not 0 <= size <= bound:
                raise TypeError(f"Slice size at index {i} in gather op is out of range, "
                                f"must be within [0, {bound} + 1), got {size}.")
    for i, dim in enumerate(d.collapsed_slice_dims):
        if slice_sizes[dim] != 1:
            raise TypeError(f"Gather op can only collapse slice dims with bound 1, but bound "
                            f"is {slice_sizes[dim]} for index {dim} at position {i}.")
    for i, dim in enumerate(d.operand_batching_dims):
        if slice_sizes[dim] > 1:
            raise TypeError(f"Gather op can only have operand batching dims with bound 0/1, "
                            f"but bound is {slice_sizes[dim]} for index {dim} at position "
                            f"{i}.")


def _check_scatter_shapes(operand, indices, updates, d):
    _check_indices("scatter", indices)
    index_vector_dim = indices.ndim - 1
    updates_rank = index_vector_dim + len(d.update_window_dims)
    if updates.ndim != updates_rank:
        raise TypeError(f"Updates tensor must be of rank {updates_rank}; got {updates.ndim}.")
    for label, dims, rank in (("update_window_dims", d.update_window_dims, updates.ndim),
                              ("inserted_window_dims", d.inserted_window_dims, operand.ndim)):
        _check_sorted("scatter", label, dims)
        _check_unique("scatter", label, dims)
        _check_in_range("scatter", label, dims, rank)
    operand_batch = _check_batching(
        "scatter", operand, indices, "inserted_window_dims", d.inserted_window_dims,
        "scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims,
        d.operand_batching_dims, "scatter_indices_batching_dims",
        d.scatter_indices_batching_dims)
    # The updates dimensions outside the window follow the indices dimensions in order.
    updates_scatter_dims = [i for i in range(updates.ndim) if i not in d.update_window_dims]
    updates_batch = tuple(updates.shape[updates_scatter_dims[i]]
                          for i in d.scatter_indices_batching_dims)
    if operand_batch != updates_batch:
        raise TypeError(f"Scatter op requires operand batching dimensions and updates "
                        f"batching dimensions to have the same shape, got {operand_batch} "
                        f"and {updates_batch}.")
    window_size = (len(d.update_window_dims) + len(d.inserted_window_dims)
                   + len(d.operand_batching_dims))
    if window_size != operand.ndim:
        raise TypeError(f"Scatter op has window of size {window_size}; doesn't match operand "
                        f"of rank {operand.ndim}.")
    index_map = d.scatter_dims_to_operand_dims
    if len(index_map) != indices.shape[-1]:
        raise TypeError(f"Scatter op has {len(index_map)} elements in "
                        f"scatter_dims_to_operand_dims and the bound of dimension "
                        f"index_vector_dim={index_vector_dim} of indices is "
                        f"{indices.shape[-1]}. These two numbers must be equal")
    for i, dim in enumerate(index_map):
        if not 0 <= dim < operand.ndim:
            raise TypeError(f"Invalid scatter_dims_to_operand_dims mapping; domain is "
                            f"[0, {operand.ndim}), got: {i}->{dim}.")
    _check_unique("scatter", "scatter_dims_to_operand_dims", index_map)
    window = _window_dims(operand.ndim, d.inserted_window_dims, d.operand_batching_dims)
    for od, ud in zip(window, d.update_window_dims):
        if updates.shape[ud] > operand.shape[od]:
            raise TypeError(f"Bounds of the window dimensions of updates must not exceed the "
                            f"bounds of the corresponding dimensions of operand. For "
                            f"dimension {ud}, updates bound is {updates.shape[ud]}, operand "
                            f"bound is {operand.shape[od]}.")
    for ud, bound in zip(updates_scatter_dims, indices.shape[:-1]):
        if updates.shape[ud] != bound:
            raise TypeError(f"Bounds of the scatter dimensions of updates must be the same "
                            f"as the bounds of the corresponding dimensions of scatter "
                            f"indices. For scatter dimension {ud}, updates bound is "
                            f"{updates.shape[ud]}, indices bound is {bound}.")


# --- NumPy implementation helpers -------------------------------------------------------

def _window_starts(shape, indices, index_map, op_batch, idx_batch):
    """(B, ndim) window start positions, one row per index vector."""
    batch_shape = indices.shape[:-1]
    count = prod(batch_shape)
    flat = np.asarray(indices).reshape(count, indices.shape[-1]).astype(np.int64)
    starts = np.zeros((count, len(shape)), np.int64)
    for k, d in enumerate(index_map):
        starts[:, d] = flat[:, k]
    if op_batch:
        coords = np.indices(batch_shape).reshape(len(batch_shape), count)
        for od, idd in zip(op_batch, idx_batch):
            starts[:, od] = coords[idd]
    return starts


def _flat_positions(shape, starts, window):
    """(B, W) positions in the flattened operand of every window element."""
    offsets = np.stack(np.unravel_index(np.arange(prod(window)), window), -1) if window \
        else np.zeros((1, 0), np.int64)
    strides = np.array([prod(shape[i + 1:]) for i in range(len(shape))], np.int64)
    return (starts[:, None, :] + offsets[None]) @ strides


def default_fill_value(dtype):
    """NaN for inexact dtypes, the most negative signed, the largest unsigned, True."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtype == np.bool_:
        return True
    return dtypes.iinfo(dtype).min if dtype.kind == "i" else dtypes.iinfo(dtype).max


# --- gather -----------------------------------------------------------------------------

def _gather_abstract_eval(operand, indices, *, dimension_numbers, fill_value,
                          indices_are_sorted, mode, slice_sizes, unique_indices):
    d = dimension_numbers
    _check_gather_shapes(operand, indices, d, slice_sizes)
    window = _window_dims(operand.ndim, d.collapsed_slice_dims, d.operand_batching_dims)
    batch_shape = indices.shape[:-1]
    out_rank = len(batch_shape) + len(window)
    offsets, batches = iter(slice_sizes[i] for i in window), iter(batch_shape)
    shape = [next(offsets) if i in d.offset_dims else next(batches) for i in range(out_rank)]
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _gather_impl(operand, indices, *, dimension_numbers, fill_value, indices_are_sorted,
                 mode, slice_sizes, unique_indices):
    d = dimension_numbers
    starts = _window_starts(operand.shape, indices, d.start_index_map,
                            d.operand_batching_dims, d.start_indices_batching_dims)
    limits = np.array(operand.shape, np.int64) - np.array(slice_sizes, np.int64)
    in_bounds = np.all((starts >= 0) & (starts <= limits), axis=1)
    starts = np.clip(starts, 0, limits)
    values = operand.reshape(-1)[_flat_positions(operand.shape, starts, slice_sizes)]
    if mode is FILL_OR_DROP:
        fill = default_fill_value(operand.dtype) if fill_value is None else fill_value
        values = np.where(in_bounds[:, None], values, np.array(fill).astype(operand.dtype))
    window = _window_dims(operand.ndim, d.collapsed_slice_dims, d.operand_batching_dims)
    batch_shape = indices.shape[:-1]
    values = values.reshape(batch_shape + tuple(slice_sizes[i] for i in window))
    out_rank = values.ndim
    batch_axes = iter(range(len(batch_shape)))
    perm = [len(batch_shape) + d.offset_dims.index(p) if p in d.offset_dims
            else next(batch_axes) for p in range(out_rank)]
    return np.transpose(values, perm)


def _gather_jvp(primals, tangents, **params):
    operand, indices = primals
    out = gather_p.bind(operand, indices, **params)
    t = tangents[0]
    if type(t) is Zero:
        return out, Zero(ad.tangent_aval(get_aval(out)))
    if params["mode"] is FILL_OR_DROP:
        params = dict(params, fill_value=0)
    return out, gather_p.bind(t, indices, **params)


def _gather_jet(primals, series, **params):
    """Each term gathered as the tangent is: an out-of-bounds window (FILL_OR_DROP) holds
    a constant fill, whose series is zero (JAX's jet rule fills the terms too)."""
    operand, indices = primals
    term_params = dict(params, fill_value=0) if params["mode"] is FILL_OR_DROP else params
    return (gather_p.bind(operand, indices, **params),
            [gather_p.bind(t, indices, **term_params) for t in series[0]])


def _gather_transpose(ct, operand, indices, *, dimension_numbers, fill_value,
                      indices_are_sorted, mode, slice_sizes, unique_indices):
    if ad.is_undefined_primal(indices):
        raise ValueError("gather is not linear in its indices")
    # zeros of the cotangent's dtype, as JAX: a custom_vjp bwd rule may hand a float
    # input a cotangent of another float dtype
    zeros = st.zeros_like_aval(operand.aval.update(dtype=get_aval(ct).dtype))
    d = dimension_numbers
    dnums = ScatterDimensionNumbers(
        update_window_dims=d.offset_dims, inserted_window_dims=d.collapsed_slice_dims,
        scatter_dims_to_operand_dims=d.start_index_map,
        operand_batching_dims=d.operand_batching_dims,
        scatter_indices_batching_dims=d.start_indices_batching_dims)
    return [scatter_add_p.bind(zeros, indices, ct, dimension_numbers=dnums,
                               indices_are_sorted=indices_are_sorted, mode=mode,
                               unique_indices=unique_indices), None]


def _gather_params(dnums, slice_sizes, mode=PROMISE_IN_BOUNDS, fill_value=None):
    return {"dimension_numbers": dnums, "fill_value": fill_value,
            "indices_are_sorted": False, "mode": mode, "slice_sizes": slice_sizes,
            "unique_indices": False}


def _gather_samples():
    x = b.random_values((5, 4), np.float32)
    rows = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                  start_index_map=(0,))
    window = GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                    start_index_map=(0, 1))
    batched = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,),
                                     start_index_map=(1,), operand_batching_dims=(0,),
                                     start_indices_batching_dims=(0,))
    return [
        b.Sample([x, np.array([[3], [0], [3]], np.int32)], _gather_params(rows, (1, 4))),
        b.Sample([x, np.array([[1, 2], [3, 0]], np.int32)],
                 _gather_params(window, (2, 2), CLIP)),
        b.Sample([x, np.array([[4, 1], [9, 0], [-1, 2]], np.int32)],
                 _gather_params(window, (2, 3), FILL_OR_DROP)),
        b.Sample([x, np.array([[4, 3], [0, 7]], np.int32)],
                 _gather_params(window, (1, 2), FILL_OR_DROP, 0.5)),
        b.Sample([x, np.array([[[1], [3]], [[0], [0]], [[2], [1]], [[3], [3]], [[0], [2]]],
                              np.int32)], _gather_params(batched, (1, 1))),
    ]


def _shift(dims):
    return tuple(d + 1 for d in dims)


def _gather_batch(args, dims, *, dimension_numbers, slice_sizes, indices_are_sorted,
                  **params):
    """The batch goes in front of the output: as one more window dimension (operand
    batched), one more index batch dimension (indices batched), or a batching-dimension
    pair (both)."""
    (operand, indices), (od, idd) = args, dims
    d = dimension_numbers
    size = batching.axis_size_of(args, dims)
    if idd is None:
        operand = batching.moveaxis(operand, od, 0)
        dnums = GatherDimensionNumbers(
            (0,) + _shift(d.offset_dims), _shift(d.collapsed_slice_dims),
            _shift(d.start_index_map), _shift(d.operand_batching_dims),
            d.start_indices_batching_dims)
        slice_sizes = (size,) + slice_sizes
    elif od is None:
        indices = batching.moveaxis(indices, idd, 0)
        dnums = d._replace(offset_dims=_shift(d.offset_dims),
                           start_indices_batching_dims=_shift(d.start_indices_batching_dims))
    elif size == 0:   # batching dims need slice size 1, which a size-0 dim cannot have
        return batching.empty_batch(gather_p, args, dims, dict(
            params, dimension_numbers=d, slice_sizes=slice_sizes,
            indices_are_sorted=indices_are_sorted))
    else:
        operand = batching.moveaxis(operand, od, 0)
        indices = batching.moveaxis(indices, idd, 0)
        dnums = GatherDimensionNumbers(
            _shift(d.offset_dims), _shift(d.collapsed_slice_dims), _shift(d.start_index_map),
            (0,) + _shift(d.operand_batching_dims),
            (0,) + _shift(d.start_indices_batching_dims))
        slice_sizes = (1,) + slice_sizes
    params = dict(params, dimension_numbers=dnums, slice_sizes=slice_sizes,
                  indices_are_sorted=indices_are_sorted and idd is None)
    return gather_p.bind(operand, indices, **dict(sorted(params.items()))), 0   # JAX's order


def _dims_attr(kind, fields, index_vector_dim):
    parts = [f"{name} = [{', '.join(map(str, dims))}]" for name, dims in fields if dims]
    parts.append(f"index_vector_dim = {index_vector_dim}")
    return f"#stablehlo.{kind}<{', '.join(parts)}>"


def _bool_attr(value):
    return "true" if value else "false"


def _index_bound(ctx, indices, upper):
    """`upper` (one bound per index vector entry) broadcast to the indices' shape."""
    aval = indices.aval
    if any(map(is_symbolic_dim, upper)):   # computed from the shapes (jax.export)
        bound = ctx.convert(ctx.shape_value(upper), aval.dtype)
    else:
        bound = ctx.constant(np.array(upper, aval.dtype),
                             ShapedArray((len(upper),), aval.dtype))
    return ctx.op("stablehlo.broadcast_in_dim", [bound], aval.strip_weak_type(),
                  {"broadcast_dimensions": hlo.i64_array([aval.ndim - 1])})


def _gather_lower(ctx, operand, indices, *, dimension_numbers, fill_value,
                  indices_are_sorted, mode, slice_sizes, unique_indices):
    """stablehlo.gather clamps windows into bounds; "fill" masks the windows that start
    out of bounds with the fill value."""
    d = dimension_numbers
    out_aval = ctx.avals_out[0]
    dnums = _dims_attr("gather", [
        ("offset_dims", d.offset_dims), ("collapsed_slice_dims", d.collapsed_slice_dims),
        ("operand_batching_dims", d.operand_batching_dims),
        ("start_indices_batching_dims", d.start_indices_batching_dims),
        ("start_index_map", d.start_index_map)], indices.aval.ndim - 1)
    out = ctx.op("stablehlo.gather", [operand, indices], out_aval,
                 {"dimension_numbers": dnums,
                  "indices_are_sorted": _bool_attr(indices_are_sorted),
                  "slice_sizes": hlo.i64_array(slice_sizes)})
    if mode is not FILL_OR_DROP or not d.start_index_map:
        return out
    upper = [operand.aval.shape[i] - slice_sizes[i] for i in d.start_index_map]
    zero = ctx.full(0, indices.aval.shape, indices.aval.dtype)
    ok = ctx.binary("stablehlo.and", ctx.compare(indices, zero, "GE"),
                    ctx.compare(indices, _index_bound(ctx, indices, upper), "LE"))
    ok = hlo.reduce(ctx, ok, (indices.aval.ndim - 1,), "stablehlo.and")
    batch_positions = [p for p in range(out_aval.ndim) if p not in d.offset_dims]
    mask = ctx.op("stablehlo.broadcast_in_dim", [ok], ShapedArray(out_aval.shape, np.bool_),
                  {"broadcast_dimensions": hlo.i64_array(batch_positions)})
    fill = default_fill_value(out_aval.dtype) if fill_value is None else fill_value
    return ctx.select(mask, out, ctx.full(fill, out_aval.shape, out_aval.dtype))


gather_p = define_primitive(
    "gather", impl=_gather_impl, abstract_eval=sharding_rules.typed(
        _gather_abstract_eval, sharding_rules.gather, sharding_rules.gather_ur),
    jvp=_gather_jvp, jet=_gather_jet,
    transpose=_gather_transpose, batch=_gather_batch, lower=_gather_lower,
    samples=lambda: _gather_samples())


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's Gather: the slices of `operand` of size `slice_sizes` that start at the index
    vectors in the last dimension of `start_indices`, arranged as `dimension_numbers`
    says. mode: "clip", "fill" (the default; `fill_value` for out-of-bounds windows) or
    "promise_in_bounds"."""
    dnums = _canonical_dnums(GatherDimensionNumbers, dimension_numbers)
    mode = GatherScatterMode.from_any(mode)
    if mode is not FILL_OR_DROP or fill_value is None:
        fill_value = None
    else:
        if isinstance(fill_value, Tracer):
            raise errors.ConcretizationTypeError(
                fill_value, "The error arose in lax.gather: fill_value must be concrete.\n")
        fill_value = np.asarray(fill_value).item()
    return gather_p.bind(operand, start_indices, dimension_numbers=dnums,
                         fill_value=fill_value, indices_are_sorted=bool(indices_are_sorted),
                         mode=mode, slice_sizes=_int_tuple(slice_sizes),
                         unique_indices=bool(unique_indices))


# --- scatter ----------------------------------------------------------------------------

def scatter_window(operand_shape, updates_shape, dnums):
    """The window size in every operand dimension: 1 in inserted and batching dims."""
    sizes = iter(updates_shape[i] for i in dnums.update_window_dims)
    window = _window_dims(len(operand_shape), dnums.inserted_window_dims,
                          dnums.operand_batching_dims)
    return tuple(next(sizes) if i in window else 1 for i in range(len(operand_shape)))


def inverse_gather_dnums(dnums):
    """The gather that reads what a scatter with `dnums` writes."""
    return GatherDimensionNumbers(
        offset_dims=dnums.update_window_dims, collapsed_slice_dims=dnums.inserted_window_dims,
        start_index_map=dnums.scatter_dims_to_operand_dims,
        operand_batching_dims=dnums.operand_batching_dims,
        start_indices_batching_dims=dnums.scatter_indices_batching_dims)


# The arithmetic scatters combine with JAX's lax.add/sub/mul, which refuse booleans.
_ARITHMETIC_COMBINES = {"scatter_add": "add", "scatter_sub": "sub", "scatter_mul": "mul"}


def _scatter_abstract_eval(name):
    combine = _ARITHMETIC_COMBINES.get(name)

    def abstract_eval(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
                      mode, unique_indices, update_jaxpr=None):
        d = dimension_numbers
        if combine is not None and operand.dtype == np.bool_:
            raise TypeError(f"{combine} does not accept dtype bool at position 0. Accepted "
                            "dtypes at position 0 are subtypes of integer, floating, "
                            "complexfloating.")
        b.same_dtypes(name, [operand, updates])
        _check_scatter_shapes(operand, indices, updates, d)
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type)
    return abstract_eval


def _scatter_impl(combine):
    def impl(operand, indices, updates, *, dimension_numbers, indices_are_sorted, mode,
             unique_indices, update_jaxpr=None):
        d = dimension_numbers
        window = scatter_window(operand.shape, updates.shape, d)
        starts = _window_starts(operand.shape, indices, d.scatter_dims_to_operand_dims,
                                d.operand_batching_dims, d.scatter_indices_batching_dims)
        limits = np.array(operand.shape, np.int64) - np.array(window, np.int64)
        scatter_axes = [i for i in range(updates.ndim) if i not in d.update_window_dims]
        values = np.transpose(updates, scatter_axes + list(d.update_window_dims))
        values = values.reshape(len(starts), prod(window))
        if mode is CLIP:
            starts = np.clip(starts, 0, limits)
        else:   # out-of-bounds windows are dropped (XLA's behaviour)
            keep = np.all((starts >= 0) & (starts <= limits), axis=1)
            starts, values = starts[keep], values[keep]
        positions = _flat_positions(operand.shape, starts, window)
        # C order: reshape(-1) must be a view (a copy of a broadcast keeps odd strides).
        out = np.array(operand, copy=True, order="C")
        combine(out.reshape(-1), positions.reshape(-1), values.reshape(-1), update_jaxpr)
        return out
    return impl


def _replace(flat, positions, values, update_jaxpr):
    if update_jaxpr is None:
        flat[positions] = values
        return
    from pyjax._src.backends.numpy_backend import execute_closed_jaxpr
    for p, v in zip(positions, values):   # applied once per update, in order, as XLA does
        flat[p] = execute_closed_jaxpr(update_jaxpr, [np.asarray(flat[p]),
                                                      np.asarray(v)])[0]


def _ufunc_at(ufunc):
    def combine(flat, positions, values, update_jaxpr):
        with np.errstate(all="ignore"):
            ufunc.at(flat, positions, values)
    return combine


def _zeros(aval, dtype=None):
    """Zeros like `aval` (in `dtype`), split as its type."""
    return st.zeros_like_aval(aval.update(dtype=dtype or aval.dtype))


def _tangent_zero(out):
    return Zero(ad.tangent_aval(get_aval(out)))


def _inverse_gather(x, indices, dnums, updates_shape, mode, fill_value=None):
    """Reads x at the positions a scatter with `dnums` writes each update element to."""
    slice_sizes = scatter_window(get_aval(x).shape, updates_shape, dnums)
    return gather_p.bind(x, indices, dimension_numbers=inverse_gather_dnums(dnums),
                         fill_value=fill_value, indices_are_sorted=False,
                         mode=CLIP if mode is CLIP else FILL_OR_DROP,
                         slice_sizes=slice_sizes, unique_indices=False)


def _additive_scatter_jvp(prim):
    """scatter-add and scatter-sub are linear in (operand, updates) together."""
    def jvp(primals, tangents, **params):
        operand, indices, updates = primals
        t_operand, _, t_updates = tangents
        out = prim.bind(operand, indices, updates, **params)
        if type(t_operand) is Zero and type(t_updates) is Zero:
            return out, _tangent_zero(out)
        return out, prim.bind(ad.instantiate_zeros(t_operand), indices,
                              ad.instantiate_zeros(t_updates), **params)
    return jvp


def _additive_scatter_transpose(name, negate_updates):
    """The operand's cotangent passes through; each update's is read back from where the
    update went (negated for scatter-sub)."""
    def transpose(ct, operand, indices, updates, *, dimension_numbers, indices_are_sorted,
                  mode, unique_indices):
        if ad.is_undefined_primal(indices):
            raise ValueError(f"{name} is not linear in its indices")
        updates_ct = None
        if ad.is_undefined_primal(updates):
            updates_ct = _inverse_gather(ct, indices, dimension_numbers, updates.aval.shape,
                                         mode, fill_value=0)
            if negate_updates:
                updates_ct = ew.neg(updates_ct)
        return [ct if ad.is_undefined_primal(operand) else None, None, updates_ct]
    return transpose


def _subtract_at(flat, positions, values, update_jaxpr):
    # Booleans subtract as XLA does: exclusive or.
    ufunc = np.logical_xor if flat.dtype == np.bool_ else np.subtract
    with np.errstate(all="ignore"):
        ufunc.at(flat, positions, values)


def _scatter_mul_jvp(primals, tangents, **params):
    """d out = scatter_mul(t_operand) + operand * scatter_add(t_u * (product of the other
    updates landing on u's element)); the product is exact when updates hold zeros."""
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    if type(t_operand) is Zero and type(t_updates) is Zero:
        return out, _tangent_zero(out)
    tangent = Zero(ad.tangent_aval(get_aval(out)))
    if type(t_operand) is not Zero:
        tangent = scatter_mul_p.bind(t_operand, indices, updates, **params)
    if type(t_updates) is not Zero:
        op_aval, upd_aval = get_aval(operand), get_aval(updates)
        dnums, mode = params["dimension_numbers"], params["mode"]
        is_zero = ew.eq(updates, ew.zeros_like(updates))
        ones = ew._ones_like(updates)
        nonzero = ew.select(is_zero, ones, updates)
        nonzero_product = scatter_mul_p.bind(st.full(op_aval.shape, np.ones((), op_aval.dtype)),
                                             indices, nonzero, **params)
        zero_count = scatter_add_p.bind(_zeros(op_aval, np.int32), indices,
                                        ew.convert_element_type(is_zero, np.int32), **params)
        product_here = _inverse_gather(nonzero_product, indices, dnums, upd_aval.shape, mode,
                                       fill_value=0)
        zeros_here = _inverse_gather(zero_count, indices, dnums, upd_aval.shape, mode,
                                     fill_value=0)
        zero = ew.zeros_like(updates)
        others_if_zero = ew.select(ew.eq(zeros_here, np.int32(1)), product_here, zero)
        others_if_nonzero = ew.select(ew.eq(zeros_here, np.int32(0)),
                                      ew.div(product_here, nonzero), zero)
        others = ew.select(is_zero, others_if_zero, others_if_nonzero)
        spread = scatter_add_p.bind(_zeros(op_aval), indices, ew.mul(t_updates, others),
                                    **params)
        tangent = ad.add_tangents(tangent, ew.mul(operand, spread))
    return out, tangent


def _scatter_mul_transpose(ct, operand, indices, updates, *, dimension_numbers,
                           indices_are_sorted, mode, unique_indices):
    if ad.is_undefined_primal(updates) or ad.is_undefined_primal(indices):
        raise ValueError("scatter-mul is linear only in its operand")
    return [scatter_mul_p.bind(ct, indices, updates, dimension_numbers=dimension_numbers,
                               indices_are_sorted=indices_are_sorted, mode=mode,
                               unique_indices=unique_indices), None, None]


def _scatter_extremal_jvp(prim):
    def jvp(primals, tangents, **params):
        """The tangent of the winner; ties (operand and updates equal to the result)
        share it evenly, as max and min do."""
        operand, indices, updates = primals
        t_operand, _, t_updates = tangents
        out = prim.bind(operand, indices, updates, **params)
        op_aval = get_aval(operand)
        if (type(t_operand) is Zero and type(t_updates) is Zero) or \
                not dtypes.is_inexact(op_aval.dtype):
            return out, _tangent_zero(out)
        t_operand, t_updates = ad.instantiate_zeros(t_operand), ad.instantiate_zeros(t_updates)
        dnums, mode = params["dimension_numbers"], params["mode"]
        result_here = _inverse_gather(out, indices, dnums, get_aval(updates).shape, mode)
        update_wins = ew.eq(updates, result_here)
        operand_wins = ew.eq(operand, out)
        ones, zeros = ew._ones_like(out), ew.zeros_like(out)
        winners = ew.add(scatter_add_p.bind(zeros, indices,
                                            ew.convert_element_type(update_wins, op_aval.dtype),
                                            **params),
                         ew.select(operand_wins, ones, zeros))
        winners = ew.select(ew.eq(winners, zeros), ones, winners)
        upd_zeros = ew.zeros_like(updates)
        total = ew.add(ew.select(operand_wins, t_operand, zeros),
                       scatter_add_p.bind(zeros, indices,
                                          ew.select(update_wins, t_updates, upd_zeros),
                                          **params))
        return out, ew.div(total, winners)
    return jvp


def _scatter_jvp(primals, tangents, *, dimension_numbers, indices_are_sorted, mode,
                 unique_indices, update_jaxpr):
    """With unique indices the tangent is scattered like the primal. Otherwise each update
    gets an id, a scatter of the ids finds the update that wins each element, and primal
    and tangent are both rebuilt from scatter-adds of the winners only."""
    params = dict(dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted,
                  mode=mode, unique_indices=unique_indices, update_jaxpr=update_jaxpr)
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    op_aval, upd_aval = get_aval(operand), get_aval(updates)
    if (type(t_operand) is Zero and type(t_updates) is Zero) or \
            not dtypes.is_inexact(op_aval.dtype):
        out = scatter_p.bind(operand, indices, updates, **params)
        return out, _tangent_zero(out)
    if update_jaxpr is not None:
        raise NotImplementedError(
            "Differentiation of lax.scatter_apply (and `.at[].apply`) is not supported; "
            "write the update with `.at[].set(f(x[idx]))` to differentiate it.")
    t_operand, t_updates = ad.instantiate_zeros(t_operand), ad.instantiate_zeros(t_updates)
    if unique_indices:
        return (scatter_p.bind(operand, indices, updates, **params),
                scatter_p.bind(t_operand, indices, t_updates, **params))
    add_params = dict(params)
    del add_params["update_jaxpr"]
    ids_shape = [1 if i in dimension_numbers.update_window_dims else s
                 for i, s in enumerate(upd_aval.shape)]
    ids = st.reshape(ew.add(st.iota(np.int32, prod(ids_shape)), np.int32(1)), ids_shape)
    ids = st.broadcast_in_dim(ids, upd_aval.shape, tuple(range(upd_aval.ndim)))
    scattered_ids = scatter_p.bind(_zeros(op_aval, np.int32), indices, ids, **params)
    winning_ids = _inverse_gather(scattered_ids, indices, dimension_numbers, upd_aval.shape,
                                  mode, fill_value=0)
    operand_kept = ew.eq(scattered_ids, np.int32(0))
    update_wins = ew.eq(ids, winning_ids)
    op_zeros, upd_zeros = _zeros(op_aval), ew.zeros_like(updates)

    def combine(x, u):
        kept = ew.select(operand_kept, x, op_zeros)
        return ew.add(kept, scatter_add_p.bind(op_zeros, indices,
                                               ew.select(update_wins, u, upd_zeros),
                                               **add_params))
    return combine(operand, updates), combine(t_operand, t_updates)


def _scatter_transpose(ct, operand, indices, updates, *, dimension_numbers,
                       indices_are_sorted, mode, unique_indices, update_jaxpr):
    if not unique_indices:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    if update_jaxpr is not None or ad.is_undefined_primal(indices):
        raise ValueError("scatter is linear only in its operand and updates")
    upd_aval = updates.aval if ad.is_undefined_primal(updates) else get_aval(updates)
    operand_ct = updates_ct = None
    if ad.is_undefined_primal(operand):
        operand_ct = scatter_p.bind(ct, indices, _zeros(upd_aval),
                                    dimension_numbers=dimension_numbers,
                                    indices_are_sorted=indices_are_sorted, mode=mode,
                                    unique_indices=unique_indices, update_jaxpr=None)
    if ad.is_undefined_primal(updates):
        updates_ct = _inverse_gather(ct, indices, dimension_numbers, upd_aval.shape, mode,
                                     fill_value=0)
    return [operand_ct, None, updates_ct]


def _scatter_params(dnums, mode=FILL_OR_DROP, unique=False, **extra):
    return dict(dimension_numbers=dnums, indices_are_sorted=False, mode=mode,
                unique_indices=unique, **extra)


def _scatter_samples(replace=False):
    extra = {"update_jaxpr": None} if replace else {}
    x = b.random_values((5, 4), np.float32)
    rows = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                   scatter_dims_to_operand_dims=(0,))
    window = ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0, 1))
    batched = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(1,),
                                      scatter_dims_to_operand_dims=(1,),
                                      operand_batching_dims=(0,),
                                      scatter_indices_batching_dims=(0,))
    samples = [
        b.Sample([x, np.array([[3], [0], [3]], np.int32),
                  b.random_values((3, 4), np.float32, (0.5, 2.0), seed=1)],
                 _scatter_params(rows, **extra)),
        b.Sample([x, np.array([[1, 2], [4, 3], [-1, 0]], np.int32),
                  b.random_values((3, 2, 2), np.float32, (0.5, 2.0), seed=2)],
                 _scatter_params(window, CLIP, **extra)),
        b.Sample([x, np.array([[1, 2], [4, 3], [-1, 0]], np.int32),
                  b.random_values((3, 2, 2), np.float32, (0.5, 2.0), seed=3)],
                 _scatter_params(window, FILL_OR_DROP, **extra)),
        b.Sample([x, np.array([[[1], [3]], [[0], [0]], [[2], [1]], [[3], [3]], [[0], [2]]],
                              np.int32),
                  b.random_values((5, 2), np.float32, (0.5, 2.0), seed=4)],
                 _scatter_params(batched, **extra)),
        b.Sample([x, np.array([[0], [2]], np.int32),
                  b.random_values((2, 4), np.float32, (0.5, 2.0), seed=5)],
                 _scatter_params(rows, PROMISE_IN_BOUNDS, True, **extra)),
    ]
    return samples


def _scatter_batch(prim):
    """Operand and updates get the batch in front; unbatched indices make it one more
    window dimension, batched indices a batching-dimension pair."""
    def rule(args, dims, *, dimension_numbers, indices_are_sorted, **params):
        (operand, indices, updates), (od, idd, ud) = args, dims
        d = dimension_numbers
        size = batching.axis_size_of(args, dims)
        operand = batching.bdim_at_front(operand, od, size)
        updates = batching.bdim_at_front(updates, ud, size)
        if idd is None:
            dnums = ScatterDimensionNumbers(
                (0,) + _shift(d.update_window_dims), _shift(d.inserted_window_dims),
                _shift(d.scatter_dims_to_operand_dims), _shift(d.operand_batching_dims),
                d.scatter_indices_batching_dims)
        else:
            indices = batching.moveaxis(indices, idd, 0)
            dnums = ScatterDimensionNumbers(
                _shift(d.update_window_dims), _shift(d.inserted_window_dims),
                _shift(d.scatter_dims_to_operand_dims),
                (0,) + _shift(d.operand_batching_dims),
                (0,) + _shift(d.scatter_indices_batching_dims))
        return prim.bind(operand, indices, updates, dimension_numbers=dnums,
                         indices_are_sorted=indices_are_sorted and idd is None,
                         **params), 0
    return rule


def _scatter_lower(combine):
    """stablehlo.scatter skips windows that do not fit (drop); "clip" clamps the
    indices first."""
    def lower(ctx, operand, indices, updates, *, dimension_numbers, indices_are_sorted,
              mode, unique_indices, update_jaxpr=None):
        d = dimension_numbers
        if mode is CLIP and d.scatter_dims_to_operand_dims:
            window = scatter_window(operand.aval.shape, updates.aval.shape, d)
            upper = [operand.aval.shape[i] - window[i] for i in d.scatter_dims_to_operand_dims]
            zero = ctx.full(0, indices.aval.shape, indices.aval.dtype)
            indices = ctx.op("stablehlo.clamp", [zero, indices,
                                                 _index_bound(ctx, indices, upper)],
                             indices.aval)
        scalar = ShapedArray((), operand.aval.dtype)
        region = ctx.region([scalar, scalar],
                            lambda c, x, u: combine(c, x, u, update_jaxpr))
        dnums = _dims_attr("scatter", [
            ("update_window_dims", d.update_window_dims),
            ("inserted_window_dims", d.inserted_window_dims),
            ("input_batching_dims", d.operand_batching_dims),
            ("scatter_indices_batching_dims", d.scatter_indices_batching_dims),
            ("scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims)],
            indices.aval.ndim - 1)
        return ctx.op("stablehlo.scatter", [operand, indices, updates], ctx.avals_out[0],
                      {"indices_are_sorted": _bool_attr(indices_are_sorted),
                       "scatter_dimension_numbers": dnums,
                       "unique_indices": _bool_attr(unique_indices)}, regions=[region])
    return lower


def _combine_replace(ctx, x, u, update_jaxpr):
    return u if update_jaxpr is None else ctx.lower_jaxpr(update_jaxpr, [x, u])[0]


def _combine_with(op_name, bool_op_name):
    def combine(ctx, x, u, update_jaxpr):
        if x.aval.dtype == np.bool_:
            return ctx.binary(bool_op_name, x, u)
        if op_name in ("stablehlo.maximum", "stablehlo.minimum"):
            return hlo.max_min_body(ctx, x, u, op_name)
        return ctx.binary(op_name, x, u)
    return combine


def _define_scatter(name, combine, lower_combine, *, jvp, transpose, replace=False,
                    jet_rule=None):
    """A scatter primitive: `combine` (NumPy) and `lower_combine` (StableHLO) merge each
    update into the operand; shape rules, vmap and samples are shared by the family."""
    return define_primitive(
        name, impl=_scatter_impl(combine),
        abstract_eval=sharding_rules.typed(_scatter_abstract_eval(name.replace("-", "_")),
                                           sharding_rules.same),   # split as the operand
        lower=_scatter_lower(lower_combine), jvp=jvp, transpose=transpose, jet=jet_rule,
        batch=RuleFactory(_scatter_batch), samples=lambda: _scatter_samples(replace=replace))


scatter_add_p = _define_scatter(
    "scatter-add", _ufunc_at(np.add), _combine_with("stablehlo.add", "stablehlo.or"),
    jvp=RuleFactory(_additive_scatter_jvp), jet_rule=jet.linear_in(0, 2),
    transpose=_additive_scatter_transpose("scatter-add", negate_updates=False))
scatter_sub_p = _define_scatter(
    "scatter-sub", _subtract_at, _combine_with("stablehlo.subtract", "stablehlo.xor"),
    jvp=RuleFactory(_additive_scatter_jvp),
    transpose=_additive_scatter_transpose("scatter-sub", negate_updates=True))
scatter_mul_p = _define_scatter(
    "scatter-mul", _ufunc_at(np.multiply), _combine_with("stablehlo.multiply", "stablehlo.and"),
    jvp=_scatter_mul_jvp, transpose=_scatter_mul_transpose)
scatter_min_p = _define_scatter(
    "scatter-min", _ufunc_at(np.minimum), _combine_with("stablehlo.minimum", "stablehlo.and"),
    jvp=RuleFactory(_scatter_extremal_jvp), transpose=NO_TRANSPOSE)
scatter_max_p = _define_scatter(
    "scatter-max", _ufunc_at(np.maximum), _combine_with("stablehlo.maximum", "stablehlo.or"),
    jvp=RuleFactory(_scatter_extremal_jvp), transpose=NO_TRANSPOSE)
scatter_p = _define_scatter("scatter", _replace, _combine_replace, jvp=_scatter_jvp,
                            transpose=_scatter_transpose, replace=True)


def _scatter_wrapper(prim, name):
    def wrapper(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
        params = dict(dimension_numbers=_canonical_dnums(ScatterDimensionNumbers,
                                                         dimension_numbers),
                      indices_are_sorted=bool(indices_are_sorted),
                      mode=GatherScatterMode.from_any(mode),
                      unique_indices=bool(unique_indices))
        if prim is scatter_p:
            params["update_jaxpr"] = None
        return prim.bind(operand, scatter_indices, updates, **params)
    wrapper.__name__ = name
    return wrapper


scatter = _scatter_wrapper(scatter_p, "scatter")
scatter.__doc__ = """XLA's Scatter where updates replace operand elements (if several
updates hit one element, one of them wins). mode: "fill"/"drop" (default: out-of-bounds
windows are dropped), "clip" or "promise_in_bounds"."""
scatter_add = _scatter_wrapper(scatter_add_p, "scatter_add")
scatter_add.__doc__ = "XLA's Scatter combining updates with the operand by addition."
scatter_sub = _scatter_wrapper(scatter_sub_p, "scatter_sub")
scatter_sub.__doc__ = "XLA's Scatter subtracting updates from the operand."
scatter_mul = _scatter_wrapper(scatter_mul_p, "scatter_mul")
scatter_mul.__doc__ = "XLA's Scatter combining updates with the operand by multiplication."
scatter_min = _scatter_wrapper(scatter_min_p, "scatter_min")
scatter_min.__doc__ = "XLA's Scatter combining updates with the operand by minimum."
scatter_max = _scatter_wrapper(scatter_max_p, "scatter_max")
scatter_max.__doc__ = "XLA's Scatter combining updates with the operand by maximum."


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """Applies the scalar function `func` to the operand elements that the windows of
    shape `update_shape` at `scatter_indices` cover (once per window covering them)."""
    from pyjax._src.interpreters import partial_eval as pe
    aval = get_aval(operand)
    scalar = ShapedArray((), aval.dtype)

    def update(x, _):
        return [ew.convert_element_type(func(x), aval.dtype)]

    closed, hoisted = pe.trace_to_closed_jaxpr(update, [scalar, scalar],
                                               pe.debug_info_of(func))
    if hoisted:
        raise TypeError("lax.scatter_apply: `func` closes over traced values; it must be "
                        "a function of its argument and constants only.")
    out_aval = closed.jaxpr.outvars[0].aval
    if out_aval.shape:
        raise TypeError(f"lax.scatter_apply: `func` must map a scalar to a scalar, got "
                        f"shape {out_aval.shape}.")
    unused = st.full(_int_tuple(update_shape), np.zeros((), aval.dtype))
    return scatter_p.bind(
        operand, scatter_indices, unused,
        dimension_numbers=_canonical_dnums(ScatterDimensionNumbers, dimension_numbers),
        indices_are_sorted=bool(indices_are_sorted), mode=GatherScatterMode.from_any(mode),
        unique_indices=bool(unique_indices), update_jaxpr=closed)
