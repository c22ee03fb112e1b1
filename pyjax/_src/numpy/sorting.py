"""jax.numpy's sorting and order statistics: sort/argsort/lexsort, partition, searchsorted
and digitize, unique (with `size=` for use under jit), and quantile/percentile/median with
their NaN-ignoring forms. Built on lax.sort; imports lax, the other jnp modules, dtypes."""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from pyjax._src import dtypes, errors
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import slicing
from pyjax._src.lax import sorting as lax_sort
from pyjax._src.lax import structural as st
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs
from pyjax._src.numpy import util
from pyjax._src.util import canonicalize_axes, canonicalize_axis
from pyjax._src.lax.sharding_constraint import takes_out_sharding


def _array(name, a):
    util.check_arraylike(name, a)
    return lnp.asarray(a)


def _index_dtype():
    return dtypes.default_int_dtype()


def _search_index_dtype(n):
    """JAX's dtype of searchsorted's indices into n elements: int32 when they fit (with
    x64 too), else int64, which without x64 warns and is truncated: then too small."""
    if n <= np.iinfo(np.int32).max:
        return np.dtype(np.int32)
    dtype = dtypes.check_user_dtype(np.int64, "searchsorted")
    if n > np.iinfo(dtype).max:
        raise OverflowError(f"Python integer {n} out of bounds for {dtype}: searchsorted "
                            f"into {n} elements needs int64 indices (set jax_enable_x64).")
    return dtype


def _iota(shape, axis, dtype=None):
    return st.broadcasted_iota(dtype or _index_dtype(), shape, axis)


def _unsupported_order(name, order):
    if order is not None:
        raise NotImplementedError(f"'order' argument to {name} is not supported.")


# --- sort, argsort, lexsort ---------------------------------------------------------------

def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """A sorted copy of a along axis (None: flattened). NaNs sort to the end (to the front
    when descending); complex values sort by real, then imaginary part."""
    arr = _array("sort", a)
    _unsupported_order("sort", order)
    arr, axis = lnp.axis_or_flattened(arr, axis)
    out = lax_sort.sort(arr, dimension=axis, is_stable=stable)
    return st.rev(out, (axis,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False,
            dtype=None):
    """Indices (of `dtype`, by default the default int) that sort a along axis. Stable by
    default: equal elements keep their order, also when descending."""
    arr = _array("argsort", a)
    _unsupported_order("argsort", order)
    index_dtype = _index_dtype() if dtype is None else dtypes.check_user_dtype(dtype,
                                                                                 "argsort")
    arr, axis = lnp.axis_or_flattened(arr, axis)
    if descending:    # sort the reversed axis ascending, then undo both reversals
        arr = st.rev(arr, (axis,))
    _, indices = lax_sort.sort_key_val(arr, _iota(arr.shape, axis, index_dtype), axis,
                                       is_stable=stable)
    if descending:
        last = np.array(arr.shape[axis] - 1, indices.dtype)
        indices = st.rev(ew.sub(last, indices), (axis,))
    return indices


def lexsort(keys, axis=-1):
    """Indices that sort by several keys: the last key is the primary one."""
    keys = tuple(keys) if not hasattr(keys, "aval") and not isinstance(keys, np.ndarray) \
        else tuple(keys[i] for i in range(len(keys)))
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    arrays = [_array("lexsort", k) for k in keys]
    if len({k.shape for k in arrays}) != 1:
        raise ValueError("all keys need to be the same shape")
    if arrays[0].ndim == 0:
        return lnp.asarray(0, dtype=_index_dtype())
    axis = canonicalize_axis(axis, arrays[0].ndim)
    iota = _iota(arrays[0].shape, axis)
    return lax_sort.sort(arrays[::-1] + [iota], dimension=axis, num_keys=len(arrays))[-1]


def sort_complex(a):
    """a sorted along its last axis, as complex numbers."""
    arr = sort(a)
    dtype = dtypes.result_type(arr, np.complex64)
    return lnp.asarray(arr, dtype)


# --- partition ------------------------------------------------------------------------------

def _partition_args(name, a, kth, axis):
    arr = _array(name, a)
    if dtypes.is_complex(arr.dtype):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    axis = canonicalize_axis(axis, arr.ndim)
    n, kth = arr.shape[axis], operator.index(kth)
    if not -n <= kth < n:
        raise ValueError(f"jnp.{name}: kth={kth} is out of bounds for axis {axis} of size {n}")
    kth = kth % n
    return lnp.moveaxis(arr, axis, -1), kth, axis


def partition(a, kth, axis=-1):
    """a rearranged along axis so that position kth holds the value a sorted copy would:
    the kth + 1 smallest first, in ascending order, then the rest in descending order."""
    arr, kth, axis = _partition_args("partition", a, kth, axis)
    ordered = sort(arr, -1)
    last = arr.ndim - 1
    bottom = slicing.slice_in_dim(ordered, 0, kth + 1, axis=last)
    top = st.rev(slicing.slice_in_dim(ordered, kth + 1, arr.shape[-1], axis=last), (last,))
    return lnp.moveaxis(st.concatenate([bottom, top], last), -1, axis)


def argpartition(a, kth, axis=-1):
    """Indices that partition a: those of the kth + 1 smallest values (ascending), then the
    remaining indices in increasing order."""
    arr, kth, axis = _partition_args("argpartition", a, kth, axis)
    order = argsort(arr, -1)
    last = arr.ndim - 1
    bottom = slicing.slice_in_dim(order, 0, kth + 1, axis=last)
    rest = lax_sort.sort(slicing.slice_in_dim(order, kth + 1, arr.shape[-1], axis=last),
                         dimension=last)
    return lnp.moveaxis(st.concatenate([bottom, rest], last), -1, axis)


# --- searchsorted, digitize -------------------------------------------------------------------

def _lt(x, y):
    """x < y in sort's order: NaNs after everything, complex by (real, imag)."""
    if dtypes.is_complex(get_aval(x).dtype):
        xr, yr, xi, yi = ufuncs.real(x), ufuncs.real(y), ufuncs.imag(x), ufuncs.imag(y)
        return ufuncs.logical_or(_lt(xr, yr), ufuncs.logical_and(_eq(xr, yr), _lt(xi, yi)))
    less = ufuncs.less(x, y)
    if dtypes.is_float(get_aval(x).dtype):
        nan_y_only = ufuncs.logical_and(ufuncs.isnan(y), ufuncs.logical_not(ufuncs.isnan(x)))
        less = ufuncs.logical_or(less, nan_y_only)
    return less


def _eq(x, y):
    """x == y, with NaNs equal to each other."""
    same = ufuncs.equal(x, y)
    if dtypes.is_inexact(get_aval(x).dtype):
        same = ufuncs.logical_or(same, ufuncs.logical_and(ufuncs.isnan(x), ufuncs.isnan(y)))
    return same


def _goes_right(side, probe, query):
    """Whether query belongs after probe: probe < query (left) or probe <= query."""
    return _lt(probe, query) if side == "left" else ufuncs.logical_not(_lt(query, probe))


def _search_compare_all(a, v, side, dtype):
    hits = _goes_right(side, a, lnp.expand_dims(v, -1))
    return red.sum(hits, axis=-1, dtype=dtype)


def _search_scan(a, v, side, dtype, unrolled):
    from pyjax._src.lax.control_flow import fori_loop
    from pyjax._src.numpy.indexing import take
    n = a.shape[0]
    lo = lnp.zeros(v.shape, dtype)
    hi = lnp.full(v.shape, n, dtype)

    def step(_, bounds):
        lo, hi = bounds
        mid = ufuncs.floor_divide(ufuncs.add(lo, hi), 2)
        active = ufuncs.less(lo, hi)
        right = _goes_right(side, take(a, ufuncs.minimum(mid, n - 1)), v)
        lo = lnp.where(ufuncs.logical_and(active, right), ufuncs.add(mid, 1), lo)
        hi = lnp.where(ufuncs.logical_and(active, ufuncs.logical_not(right)), mid, hi)
        return lo, hi

    steps = int(n).bit_length()      # ceil(log2(n + 1)) halvings of n + 1 answers
    if unrolled:
        bounds = (lo, hi)
        for i in range(steps):
            bounds = step(i, bounds)
        return bounds[0]
    return fori_loop(0, steps, step, (lo, hi))[0]


def _inverse_permutation(perm, dtype):
    """p^-1 for a permutation along the last axis, by sorting an iota along it."""
    shape = get_aval(perm).shape
    return lax_sort.sort((perm, _iota(shape, len(shape) - 1, dtype)), num_keys=1)[1]


def _search_sort(a, v, side, dtype):
    """Ranks from one sort of a and v together: a query's position there, minus its
    rank among the queries, counts the elements of a before it."""
    n = a.shape[0]
    flat = lnp.ravel(v)
    m = flat.shape[0]
    both = st.concatenate([flat, a] if side == "left" else [a, flat], 0)
    iota = _iota((n + m,), 0, dtype)
    position = _inverse_permutation(lax_sort.sort_key_val(both, iota)[1], dtype)
    start = 0 if side == "left" else n
    query_position = slicing.slice_in_dim(position, start, start + m)
    query_rank = _inverse_permutation(lax_sort.sort_key_val(flat, _iota((m,), 0, dtype))[1],
                                      dtype)
    return lnp.reshape(ufuncs.subtract(query_position, query_rank), v.shape)


_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Where v's elements would go into the sorted 1-D array a to keep it sorted: before
    equal elements (side='left') or after them ('right'). `method` picks the algorithm
    ('scan': binary search, 'scan_unrolled', 'sort', 'compare_all'); all agree."""
    util.check_arraylike("searchsorted", a, v)
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one "
                         "of ['left', 'right'].")
    if method not in _SEARCH_METHODS:
        raise ValueError(f"{method!r} is an invalid value for keyword 'method'. Expected "
                         f"one of {list(_SEARCH_METHODS)}.")
    a, v = lnp.asarray(a), lnp.asarray(v)
    if a.ndim != 1:
        raise ValueError(f"a should be 1-dimensional, got shape {a.shape}")
    if sorter is not None:
        from pyjax._src.numpy.indexing import take
        a = take(a, sorter)
    a, v = util.promote_dtypes(a, v)
    dtype = _search_index_dtype(a.shape[0])
    if a.shape[0] == 0:
        return lnp.zeros(v.shape, dtype)
    if method == "compare_all":
        return _search_compare_all(a, v, side, dtype)
    if method == "sort":
        return _search_sort(a, v, side, dtype)
    return _search_scan(a, v, side, dtype, unrolled=method == "scan_unrolled")


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin each x falls in (bins increasing or decreasing)."""
    util.check_arraylike("digitize", x, bins)
    x, bins = lnp.asarray(x), lnp.asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array, got shape "
                         f"{bins.shape}")
    if bins.shape[0] == 0:
        return lnp.zeros(x.shape, _index_dtype())
    side = "left" if right else "right"
    method = method or "scan"
    rising = searchsorted(bins, x, side=side, method=method)
    falling = ufuncs.subtract(bins.shape[0], searchsorted(lnp.flip(bins), x, side=side,
                                                          method=method))
    increasing = ufuncs.greater_equal(bins[-1], bins[0])
    return lnp.where(increasing, rising, falling)


# --- unique -----------------------------------------------------------------------------------

class _UniqueAll(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class _UniqueCounts(NamedTuple):
    values: object
    counts: object


class _UniqueInverse(NamedTuple):
    values: object
    inverse_indices: object


def _concrete_or_error(arr, name):
    if isinstance(arr, Tracer) and arr.to_concrete_value() is None:
        raise errors.ConcretizationTypeError(
            arr, f"The error arose in jnp.{name}: the size of its result depends on the "
                 f"values of its input. Pass a static `size=` argument (and optionally "
                 f"`fill_value=`) to use jnp.{name} inside jit and other transformations.\n")


def _differs(x, y, equal_nan):
    return ufuncs.logical_not(_eq(x, y)) if equal_nan else ufuncs.not_equal(x, y)


def _take_first(x, count, fill):
    """The first `count` entries of x along axis 0 (padded with `fill` past x's end)."""
    n = get_aval(x).shape[0]
    if count <= n:
        return slicing.slice_in_dim(x, 0, count)
    pad = [(0, count - n, 0)] + [(0, 0, 0)] * (get_aval(x).ndim - 1)
    return st.pad(x, np.array(fill, get_aval(x).dtype) if not isinstance(fill, Tracer)
                  else fill, pad)


def _unique(arr, return_index, return_inverse, return_counts, axis, equal_nan, size,
            fill_value, name, return_true_size=False):
    """jnp.unique's computation; with `return_true_size` (JAX's keyword of its private
    _unique, which jax.experimental.sparse uses) the number of unique values, before
    `size` cuts or pads them, comes last."""
    if size is None:
        _concrete_or_error(arr, name)
    else:
        size = operator.index(size)
        if size < 0:
            raise ValueError(f"jnp.{name}: size must be non-negative, got {size}")
    if axis is None:
        rows, tail, axis_out = lnp.reshape(arr, (-1, 1)), (), None
    else:
        axis_out = canonicalize_axis(axis, arr.ndim)
        moved = lnp.moveaxis(arr, axis_out, 0)
        tail = moved.shape[1:]
        rows = lnp.reshape(moved, (moved.shape[0], int(np.prod(tail))))
    if dtypes.is_complex(rows.dtype):
        # as JAX: a complex value with a NaN part is NaN (nan+0j), so that all of them
        # sort together and count as one
        rows = lnp.where(ufuncs.isnan(rows), np.array(np.nan, rows.dtype), rows)
    n, width = rows.shape
    index_dtype = _index_dtype()
    iota = _iota((n,), 0, index_dtype)
    columns = [rows[:, j] for j in range(width)]
    if n and width:
        ordered = lax_sort.sort(columns + [iota], dimension=0, num_keys=width)
        columns, perm = list(ordered[:-1]), ordered[-1]
        changes = [_differs(slicing.slice_in_dim(c, 1, n), slicing.slice_in_dim(c, 0, n - 1),
                            equal_nan) for c in columns]
        change = changes[0]
        for c in changes[1:]:
            change = ufuncs.logical_or(change, c)
        first = st.concatenate([lnp.ones((1,), bool), change], 0)
    else:
        perm, first = iota, (lnp.ones((n,), bool) if n else lnp.zeros((0,), bool))
        if n and not width:    # rows of zero width are all equal
            first = ufuncs.equal(iota, 0)
    count = red.sum(first, dtype=index_dtype)
    if size is None:
        size = int(count)
    # Move the first occurrences to the front, in order (a stable sort on "is repeat").
    repeat = ew.convert_element_type(ufuncs.logical_not(first), np.int32)
    compact = lax_sort.sort([repeat] + columns + [perm, iota], dimension=0, num_keys=1)[1:]
    valid = ufuncs.less(_iota((size,), 0, index_dtype), count)
    if not n and size and fill_value is None:
        raise ValueError(f"jnp.{name}: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    if fill_value is not None:   # it broadcasts against the (size, *tail) result
        fills = lnp.reshape(lnp.broadcast_to(lnp.asarray(fill_value, arr.dtype),
                                             (size,) + tail), (size, width))
    values = []
    for j, c in enumerate(compact[:width]):
        taken = _take_first(c, size, 0)
        default = slicing.index_in_dim(c, 0, keepdims=False) if n else \
            np.zeros((), get_aval(c).dtype)
        fill = default if fill_value is None else fills[:, j].astype(get_aval(c).dtype)
        values.append(lnp.where(valid, taken, fill))
    if width:
        values = lnp.stack(values, axis=1) if values else lnp.zeros((size, 0), arr.dtype)
    else:
        values = lnp.zeros((size, 0), arr.dtype)
    values = lnp.reshape(values, (size,) + tail)
    if axis_out is not None:
        values = lnp.moveaxis(values, 0, axis_out)
    outs = [values]
    if return_index:
        first_index = _take_first(compact[width], size, 0)
        if n:
            outs.append(lnp.where(valid, first_index, slicing.index_in_dim(perm, 0, False)))
        else:
            outs.append(first_index)
    if return_inverse:
        group = ufuncs.subtract(red.cumsum(first, dtype=index_dtype), 1)
        inverse = lax_sort.sort((perm, group), num_keys=1)[1] if n else group
        outs.append(lnp.reshape(inverse, arr.shape) if axis is None else inverse)
    if return_counts:
        starts = _take_first(compact[width + 1], size + 1, n)   # one more: where the
        following = slicing.slice_in_dim(starts, 1, size + 1)    # last group ends
        starts = slicing.slice_in_dim(starts, 0, size)
        nxt = ufuncs.add(_iota((size,), 0, index_dtype), 1)
        following = lnp.where(ufuncs.less(nxt, count), following, n)
        outs.append(lnp.where(valid, ufuncs.subtract(following, starts), 0))
    if return_true_size:
        outs.append(count)
    return outs[0] if len(outs) == 1 else tuple(outs)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted unique elements of ar (or unique slices along axis), optionally with
    first-occurrence indices, the inverse mapping and counts. Under jit pass a static
    `size=`: the result is cut or padded to it (padding with fill_value, by default the
    smallest value; padded indices repeat the first, padded counts are 0)."""
    arr = _array("unique", ar)
    return _unique(arr, return_index, return_inverse, return_counts, axis, equal_nan, size,
                   fill_value, "unique")


def unique_values(x, /, *, size=None, fill_value=None):
    return _unique(_array("unique_values", x), False, False, False, None, True, size,
                   fill_value, "unique_values")


def unique_counts(x, /, *, size=None, fill_value=None):
    return _UniqueCounts(*_unique(_array("unique_counts", x), False, False, True, None,
                                  True, size, fill_value, "unique_counts"))


def unique_inverse(x, /, *, size=None, fill_value=None):
    return _UniqueInverse(*_unique(_array("unique_inverse", x), False, True, False, None,
                                   True, size, fill_value, "unique_inverse"))


def unique_all(x, /, *, size=None, fill_value=None):
    return _UniqueAll(*_unique(_array("unique_all", x), True, True, True, None, True, size,
                               fill_value, "unique_all"))


# --- quantiles ------------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _check_q_range(q, name, scale):
    value = q.to_concrete_value() if isinstance(q, Tracer) else np.asarray(q)
    if value is not None and np.size(value) and (np.any(value < 0) or np.any(value > scale)):
        what = "Percentiles" if scale == 100 else "Quantiles"
        raise ValueError(f"jnp.{name}: {what} must be in the range [0, {scale}]")


def _quantile_weights(name, a, weights, axis, method):
    """weights broadcast to a's shape: they have a's shape, or that of the reduced axes."""
    util.check_arraylike(name, weights)
    weights = lnp.asarray(weights)
    if dtypes.is_complex(weights.dtype):
        raise ValueError(f"jnp.{name}: weights cannot be complex.")
    if method != "inverted_cdf":
        raise NotImplementedError(f"jnp.{name}: method={method!r} does not support weights; "
                                  "only method='inverted_cdf' does.")
    if weights.shape == a.shape:
        return weights
    if axis is None:
        raise ValueError(f"jnp.{name}: the weights' shape {weights.shape} must match a's "
                         f"shape {a.shape} when axis is None.")
    axes = canonicalize_axes(axis, a.ndim)
    if weights.shape != tuple(a.shape[d] for d in axes):
        raise ValueError(f"jnp.{name}: the weights' shape {weights.shape} must match a's "
                         f"shape {a.shape} or that of the reduction axes "
                         f"{tuple(a.shape[d] for d in axes)}.")
    return st.broadcast_in_dim(weights, a.shape, axes)


def _reduced_last(x, axis):
    """x with the axes to reduce moved last and merged into one."""
    if axis is None:
        return lnp.ravel(x)
    axes = canonicalize_axes(axis, x.ndim)
    rest = [d for d in range(x.ndim) if d not in axes]
    x_t = lnp.transpose(x, rest + list(axes))
    return lnp.reshape(x_t, tuple(x.shape[d] for d in rest)
                       + (math.prod(x.shape[d] for d in axes),))


def _quantile(a, q, axis, method, keepdims, squash_nans, name, scale=1, weights=None):
    util.check_arraylike(name, a, q)
    if method not in _METHODS:
        raise ValueError(f"jnp.{name}: method={method!r} is not supported; use one of "
                         f"{list(_METHODS)}")
    a, q = lnp.asarray(a), lnp.asarray(q)
    if dtypes.is_complex(a.dtype) or dtypes.is_complex(q.dtype):
        raise ValueError(f"jnp.{name} does not support complex input")
    if q.ndim > 1:
        raise ValueError(f"jnp.{name}: q must have rank <= 1, got shape {q.shape}")
    _check_q_range(q, name, scale)
    # As in JAX, a's dtype (made inexact) decides: q takes it, and the result is strong.
    inexact = dtypes.to_inexact_dtype(a.dtype)
    if weights is not None:
        weights = _quantile_weights(name, a, weights, axis, method)
        inexact = dtypes.result_type(inexact, dtypes.to_inexact_dtype(weights.dtype))
    a = util.convert(a, inexact)
    q = util.convert(q, a.dtype)
    if scale != 1:
        q = ufuncs.divide(q, np.array(scale, q.dtype))
    if axis is None:
        kept_shape = (1,) * max(a.ndim, 1)
    else:
        axes = canonicalize_axes(axis, a.ndim)
        kept_shape = tuple(1 if d in axes else a.shape[d] for d in range(a.ndim))
    x = _reduced_last(a, axis)
    n = x.shape[-1]
    lanes = x.shape[:-1]
    nans = ufuncs.isnan(x)
    if squash_nans:
        count = red.sum(ufuncs.logical_not(nans), axis=-1, dtype=a.dtype)
    else:
        count = lnp.full(lanes, n, a.dtype)
    q_shape = q.shape
    out_shape = q_shape + lanes
    empty = ufuncs.equal(count, 0)
    if not squash_nans:
        empty = ufuncs.logical_or(empty, red.any(nans, axis=-1))
    if n == 0:
        result = lnp.full(out_shape, np.nan, a.dtype)
    elif method == "inverted_cdf":
        result, bad_weights = _inverted_cdf(x, q, count, _weights_like(x, weights, axis))
        empty = ufuncs.logical_or(empty, bad_weights)
    else:
        result = _interpolated_quantile(sort(x, -1), q, count, method)
    result = lnp.where(empty, np.nan, result)
    if keepdims:
        result = lnp.reshape(result, q_shape + kept_shape)
    return result


def _weights_like(x, weights, axis):
    """The weights laid out like x (reduced axes last); ones when there are none."""
    if weights is None:
        return lnp.ones(x.shape, x.dtype)
    return util.convert(_reduced_last(weights, axis), x.dtype)


def _take_last(x, index, q_shape):
    """x[..., index] per lane, for index of shape q_shape + lanes."""
    from pyjax._src.numpy.indexing import take_along_axis
    spread = lnp.broadcast_to(x, q_shape + x.shape)
    index = lnp.expand_dims(lnp.asarray(index, _index_dtype()), -1)
    return lnp.squeeze(take_along_axis(spread, index, axis=-1), -1)


def _interpolated_quantile(ordered, q, count, method):
    """The quantiles of sorted lanes (NaNs last, `count` values each) by interpolating
    between the two order statistics around position q * (count - 1)."""
    n = ordered.shape[-1]
    qb = lnp.reshape(q, q.shape + (1,) * (ordered.ndim - 1))
    pos = ufuncs.multiply(qb, ufuncs.subtract(count, 1))   # shape q_shape + lanes
    low = lnp.clip(ufuncs.floor(pos), 0, n - 1)
    high = lnp.clip(ufuncs.ceil(pos), 0, n - 1)
    frac = ufuncs.subtract(pos, ufuncs.floor(pos))
    if method == "nearest":   # halfway goes down, as in JAX
        low = high = lnp.where(ufuncs.less_equal(frac, 0.5), low, high)
    elif method == "lower":
        high = low
    elif method == "higher":
        low = high
    low_value, high_value = _take_last(ordered, low, q.shape), _take_last(ordered, high,
                                                                          q.shape)
    if method == "midpoint":
        result = ufuncs.multiply(ufuncs.add(low_value, high_value), 0.5)
    elif method == "linear":
        result = ufuncs.add(ufuncs.multiply(low_value, ufuncs.subtract(1, frac)),
                            ufuncs.multiply(high_value, frac))
    else:
        result = low_value
    return lnp.where(ufuncs.equal(low, high), low_value, result)


def _inverted_cdf(x, q, count, weights):
    """The weighted quantiles of the lanes of x: the first value, in sorted order, whose
    cumulative weight reaches q times the total. NaN values weigh nothing; a negative or
    NaN weight makes the lane's result NaN (returned as the mask `bad_weights`)."""
    ordered, weights = lax_sort.sort_key_val(x, weights, x.ndim - 1)
    bad = ufuncs.logical_or(ufuncs.less(weights, 0), ufuncs.isnan(weights))
    clean = lnp.where(ufuncs.logical_or(bad, ufuncs.isnan(ordered)), 0, weights)
    cumulative = red.cumsum(clean, axis=-1)
    qb = lnp.reshape(q, q.shape + (1,) * (x.ndim - 1))
    target = ufuncs.multiply(qb, cumulative[..., -1])       # shape q_shape + lanes
    below = ufuncs.less(cumulative, lnp.expand_dims(target, -1))
    index = red.sum(below, axis=-1, dtype=_index_dtype())
    last = lnp.asarray(ufuncs.subtract(count, 1), _index_dtype())
    index = ufuncs.maximum(0, ufuncs.minimum(index, last))
    return _take_last(ordered, index, q.shape), red.any(bad, axis=-1)


def _no_out(name, out, overwrite_input):
    if out is not None or overwrite_input:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or "
                         "out != None")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The q-th quantiles (q in [0, 1]) of a along axis; the result has q's dimensions
    first. A NaN in a slice makes its quantiles NaN. `weights` (a's shape, or that of the
    reduced axes) need method='inverted_cdf'."""
    _no_out("quantile", out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, False, "quantile", weights=weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """quantile ignoring NaNs (all-NaN slices give NaN)."""
    _no_out("nanquantile", out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, True, "nanquantile", weights=weights)


@takes_out_sharding
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """The q-th percentiles (q in [0, 100]) of a along axis."""
    _no_out("percentile", out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, False, "percentile", scale=100,
                     weights=weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """percentile ignoring NaNs."""
    _no_out("nanpercentile", out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, True, "nanpercentile", scale=100,
                     weights=weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along axis (the mean of the two middle values for even counts)."""
    _no_out("median", out, overwrite_input)
    return _quantile(a, 0.5, axis, "midpoint", keepdims, False, "median")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """median ignoring NaNs."""
    _no_out("nanmedian", out, overwrite_input)
    return _quantile(a, 0.5, axis, "midpoint", keepdims, True, "nanmedian")


__all__ = ["sort", "argsort", "lexsort", "sort_complex", "partition", "argpartition",
           "searchsorted", "digitize", "unique", "unique_values", "unique_counts",
           "unique_inverse", "unique_all", "quantile", "nanquantile", "percentile",
           "nanpercentile", "median", "nanmedian"]
