"""Sorting: sort (several operands ordered by the first num_keys, lexicographically, NaNs
last) and top_k, with their rules, and the lax wrappers sort, sort_key_val, top_k and
approx_max_k/approx_min_k (approx_top_k_p). Imports core, interpreters, backends.stablehlo
and lax families."""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax._src import dtypes
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import NO_TRANSPOSE, define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters.ad import Zero
from pyjax._src.lax import builders as b
from pyjax._src.lax import dot
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import sharding_rules
from pyjax._src.lax import structural as st
from pyjax._src.util import canonicalize_axis

# --- sort ---------------------------------------------------------------------------------


def _sort_abstract_eval(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise TypeError("sort requires at least one operand")
    shapes = {x.shape for x in operands}
    if len(shapes) != 1:
        raise TypeError(f"sort operands must have the same shape, got "
                        f"{[x.shape for x in operands]}")
    ndim = operands[0].ndim
    if ndim == 0 or not 0 <= dimension < ndim:
        raise TypeError(f"sort dimension {dimension} is out of range for operands of shape "
                        f"{operands[0].shape}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort num_keys={num_keys} must be between 1 and the number of "
                         f"operands ({len(operands)})")
    return list(operands)


def _key_columns(x):
    """NumPy arrays whose lexicographic order is sort's order for x: -0.0 equals 0.0,
    NaNs come last (numpy's sorts do the rest), complex compares (real, imag)."""
    if dtypes.is_complex(x.dtype):
        return _key_columns(x.real) + _key_columns(x.imag)
    if dtypes.is_float(x.dtype):
        x = x.astype(np.promote_types(x.dtype, np.float32)) if not x.dtype.isbuiltin \
            or x.dtype.itemsize < 4 else x
        return [np.where(x == 0, np.zeros((), x.dtype), x)]
    return [x]


def _sort_impl(*operands, dimension, is_stable, num_keys):
    moved = [np.moveaxis(x, dimension, -1) for x in operands]
    keys = [col for x in moved[:num_keys] for col in _key_columns(x)]
    order = np.lexsort(keys[::-1], axis=-1)    # stable; lexsort's last key is primary
    return [np.moveaxis(np.take_along_axis(x, order, -1), -1, dimension) for x in moved]


def _iota_like(x, dimension):
    return st.broadcasted_iota(np.int32, get_aval(x).shape, dimension)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    """Tangents follow their operands' permutation. The permutation comes from sorting an
    iota along; applying it to tangents is a sort by its inverse (no gather needed), which
    is linear in the tangents and transposes to a sort by the permutation."""
    iota = _iota_like(primals[0], dimension)
    outs = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                       num_keys=num_keys)
    primal_out, perm = outs[:-1], outs[-1]
    live = [i for i, t in enumerate(tangents)
            if type(t) is not Zero and dtypes.is_inexact(get_aval(t).dtype)]
    tangents_out = [Zero(ad.tangent_aval(get_aval(o))) for o in primal_out]
    if live:
        inverse = sort_p.bind(perm, iota, dimension=dimension, is_stable=True,
                              num_keys=1)[1]
        moved = sort_p.bind(inverse, *[tangents[i] for i in live], dimension=dimension,
                            is_stable=True, num_keys=1)[1:]
        for i, t in zip(live, moved):
            tangents_out[i] = t
    return primal_out, tangents_out


def _sort_transpose(cts, *operands, dimension, is_stable, num_keys):
    keys = operands[:num_keys]
    if any(ad.is_undefined_primal(k) for k in keys):
        raise ValueError("sort is not linear in its keys; only the operands sorted along "
                         "with them can be transposed")
    iota = _iota_like(keys[0], dimension)
    perm = sort_p.bind(*keys, iota, dimension=dimension, is_stable=is_stable,
                       num_keys=num_keys)[-1]
    linear = [i for i, x in enumerate(operands) if ad.is_undefined_primal(x)]
    cts_in = [ad.instantiate_zeros(cts[i]) if type(cts[i]) is Zero else cts[i]
              for i in linear]
    back = sort_p.bind(perm, *cts_in, dimension=dimension, is_stable=True, num_keys=1)[1:]
    out = [None] * len(operands)
    for i, ct in zip(linear, back):
        out[i] = ct
    return out


def _sort_batch(args, dims, *, dimension, is_stable, num_keys):
    size = batching.axis_size_of(args, dims)
    args = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    outs = sort_p.bind(*args, dimension=dimension + 1, is_stable=is_stable,
                       num_keys=num_keys)
    return outs, [0] * len(outs)


def _total_order_lt(ctx, a, b):
    """a < b in sort's order for scalars: NaNs last (all equal), -0.0 == 0.0. Returns
    (lt, eq) predicates."""
    dtype = a.aval.dtype
    if dtypes.is_complex(dtype):
        part = dtypes.real_dtype(dtype)
        re = [ctx.unary("stablehlo.real", v, part) for v in (a, b)]
        im = [ctx.unary("stablehlo.imag", v, part) for v in (a, b)]
        lt_re, eq_re = _total_order_lt(ctx, *re)
        lt_im, eq_im = _total_order_lt(ctx, *im)
        return (ctx.binary("stablehlo.or", lt_re, ctx.binary("stablehlo.and", eq_re, lt_im)),
                ctx.binary("stablehlo.and", eq_re, eq_im))
    lt, eq = ctx.compare(a, b, "LT"), ctx.compare(a, b, "EQ")
    if dtypes.is_float(dtype):
        a_nan, b_nan = ctx.compare(a, a, "NE"), ctx.compare(b, b, "NE")
        not_a_nan = ctx.unary("stablehlo.not", a_nan)
        lt = ctx.binary("stablehlo.or", lt, ctx.binary("stablehlo.and", b_nan, not_a_nan))
        eq = ctx.binary("stablehlo.or", eq, ctx.binary("stablehlo.and", a_nan, b_nan))
    return lt, eq


def _sort_lower(ctx, *operands, dimension, is_stable, num_keys):
    scalars = [ShapedArray((), x.aval.dtype) for x in operands]

    def comparator(c, *pairs):
        result = None
        for k in reversed(range(num_keys)):   # lexicographic, built from the last key
            lt, eq = _total_order_lt(c, pairs[2 * k], pairs[2 * k + 1])
            result = lt if result is None else c.binary(
                "stablehlo.or", lt, c.binary("stablehlo.and", eq, result))
        return result

    region = ctx.region([s for s in scalars for _ in (0, 1)], comparator)
    return ctx.op("stablehlo.sort", list(operands), [a.strip_weak_type() for a in
                                                     ctx.avals_out],
                  {"dimension": hlo.i64_attr(dimension),
                   "is_stable": "true" if is_stable else "false"}, regions=[region])


def _sort_samples():
    f = np.float32
    x = b.random_values((3, 5), f)
    with_nans = np.array([[1.0, np.nan, -0.0, 0.0, -np.inf, 2.0, np.nan, 1.0]], f)
    keys = np.array([2, 1, 2, 1, 0, 2], np.int32)
    return [
        b.Sample([x], {"dimension": 1, "is_stable": True, "num_keys": 1}),
        b.Sample([x, b.random_values((3, 5), f, seed=1)],
                 {"dimension": 0, "is_stable": True, "num_keys": 1}),
        b.Sample([with_nans, np.arange(8, dtype=np.int32).reshape(1, 8)],
                 {"dimension": 1, "is_stable": True, "num_keys": 1}),
        b.Sample([keys, np.array([3, 1, 2, 2, 5, 1], np.int32),
                  b.random_values((6,), f, seed=2)],
                 {"dimension": 0, "is_stable": True, "num_keys": 2}),
        b.Sample([b.random_values((4,), np.complex64)],
                 {"dimension": 0, "is_stable": True, "num_keys": 1}),
    ]


sort_p = define_primitive(
    "sort", multiple_results=True, impl=_sort_impl, abstract_eval=_sort_abstract_eval,
    jvp=_sort_jvp, transpose=_sort_transpose, batch=_sort_batch, lower=_sort_lower,
    samples=lambda: _sort_samples())


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sorts along `dimension`. operand is an array or a sequence of same-shape arrays,
    ordered together by the first num_keys of them (lexicographically); NaNs sort last."""
    single = not isinstance(operand, (tuple, list))
    operands = [operand] if single else list(operand)
    if not operands:
        raise TypeError("lax.sort requires at least one operand")
    ndim = get_aval(operands[0]).ndim
    dimension = canonicalize_axis(dimension, ndim, "dimension")
    outs = sort_p.bind(*operands, dimension=dimension, is_stable=bool(is_stable),
                       num_keys=operator.index(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts keys along `dimension` and permutes values the same way."""
    k, v = sort((keys, values), dimension, is_stable, num_keys=1)
    return k, v


# --- top_k --------------------------------------------------------------------------------

def _top_k_abstract_eval(operand, *, k, axis):
    if dtypes.is_complex(operand.dtype):
        raise ValueError("top_k is not compatible with complex inputs.")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if operand.ndim == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got a scalar")
    if not 0 <= axis < operand.ndim:
        raise ValueError(f"axis argument out of range: axis={axis} for "
                         f"operand.shape={operand.shape}")
    shape = list(operand.shape)
    if shape[axis] < k:
        raise ValueError(f"k argument to top_k must be no larger than size along axis; got "
                         f"k={k} with shape={shape} and axis={axis}")
    int32_max = np.iinfo(np.int32).max
    if shape[axis] > int32_max + 1:
        raise ValueError(f"top_k returns int32 indices, which will overflow for array "
                         f"dimensions larger than the maximum int32 ({int32_max}). Got "
                         f"operand.shape={operand.shape}")
    b.check_dtype("top_k", operand.dtype, (b.FLOAT,) + b.INT)
    shape[axis] = k
    return [ShapedArray(shape, operand.dtype, operand.weak_type),
            ShapedArray(shape, np.dtype(np.int32))]


def _total_order_key(x):
    """Integers ordered as XLA's total order of x: -NaN < -inf < ... < -0.0 < 0.0 < ...
    < inf < NaN (the order top_k uses)."""
    if not dtypes.is_float(x.dtype):
        return x
    bits = np.ascontiguousarray(x).view(f"i{x.dtype.itemsize}")
    return np.where(bits < 0, bits ^ np.iinfo(bits.dtype).max, bits)


def _descending_order(x):
    """Indices of x's last axis from largest to smallest in total order, ties in index
    order: a stable ascending sort of the reversed axis, mapped back and reversed."""
    n = x.shape[-1]
    ascending = np.argsort(_total_order_key(x[..., ::-1]), axis=-1, kind="stable")
    return (n - 1 - ascending)[..., ::-1]


def _top_k_impl(operand, *, k, axis):
    last = np.moveaxis(operand, axis, -1)
    order = _descending_order(last)[..., :k]
    values = np.take_along_axis(last, order, -1)
    return [np.moveaxis(values, -1, axis), np.moveaxis(order.astype(np.int32), -1, axis)]


def _pick_along_last(t, indices):
    """t[..., indices] along the last axis as a one-hot contraction: linear in t, so it
    differentiates and transposes as a dot_general."""
    t_aval = get_aval(t)
    n, nb = t_aval.shape[-1], t_aval.ndim - 1
    hits = ew.eq(st.expand_dims(indices, (nb + 1,)),
                 st.broadcasted_iota(np.int32, get_aval(indices).shape + (n,), nb + 1))
    one_hot = ew.convert_element_type(hits, t_aval.dtype)
    batch = tuple(range(nb))
    return dot.dot_general(one_hot, t, (((nb + 1,), (nb,)), (batch, batch)))


def _pick_along(t, indices, axis):
    """t's entries at `indices` along `axis` (linear in t)."""
    last = get_aval(t).ndim - 1
    picked = _pick_along_last(batching.moveaxis(t, axis, last),
                              batching.moveaxis(indices, axis, last))
    return batching.moveaxis(picked, last, axis)


def _top_k_jvp(primals, tangents, *, k, axis):
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, axis=axis, k=k)
    if type(t) is Zero:
        t_out = Zero(ad.tangent_aval(get_aval(values)))
    else:
        t_out = _pick_along(t, indices, axis)
    return [values, indices], [t_out, Zero(ad.tangent_aval(get_aval(indices)))]


def _top_k_batch(args, dims, *, k, axis):
    (x,), (d,) = args, dims
    axis = axis + 1 if d <= axis else axis
    return top_k_p.bind(x, axis=axis, k=k), [d, d]


def _top_k_lower(ctx, x, *, k, axis):
    values, indices = ctx.avals_out
    return _lower_top_k_along(ctx, x, axis, values.strip_weak_type(), indices)


def _lower_top_k_along(ctx, x, axis, values, indices):
    """chlo.top_k works on the last axis: swap `axis` there and back."""
    last = x.aval.ndim - 1
    perm = list(range(last + 1))
    perm[axis], perm[last] = last, axis
    if axis != last:
        x = _swap_lower(ctx, x, perm)
    shape = tuple(values.shape[p] for p in perm)
    outs = ctx.op("chlo.top_k", [x], [values.update(shape=shape), indices.update(shape=shape)],
                  {"k": hlo.i64_attr(shape[-1])})
    return outs if axis == last else [_swap_lower(ctx, o, perm) for o in outs]


top_k_p = define_primitive(
    "top_k", multiple_results=True, impl=_top_k_impl,
    abstract_eval=sharding_rules.typed(_top_k_abstract_eval, sharding_rules.top_k),
    jvp=_top_k_jvp, transpose=NO_TRANSPOSE, batch=_top_k_batch, lower=_top_k_lower,
    samples=lambda: [b.Sample([b.random_values((3, 6), np.float32)], {"k": 3, "axis": 1}),
             b.Sample([np.array([3, 1, 3, 2, 1], np.int32)], {"k": 4, "axis": 0}),
             b.Sample([b.random_values((2, 2, 4), np.float32, seed=1)], {"k": 1, "axis": 2}),
             b.Sample([b.random_values((4, 3, 2), np.float32, seed=2)], {"k": 2, "axis": 0}),
             b.Sample([np.array([1.0, np.nan, -0.0, 0.0, -np.inf, 2.0, np.nan, 1.0], np.float32)],
                      {"k": 8, "axis": 0})])


def top_k(operand, k, *, axis=-1):
    """The k largest entries along `axis` (the last by default), in descending order
    (equal values in index order), and their indices."""
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"top_k: k must be a static integer, got {k!r}") from None
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    axis = canonicalize_axis(axis, get_aval(operand).ndim)
    values, indices = top_k_p.bind(operand, axis=axis, k=k)
    return values, indices


# --- approx_top_k -------------------------------------------------------------------------

def _approx_output_size(n, rank, k, recall_target, aggregate_to_topk, input_size_override):
    """XLA's ApproxTopKReductionOutputSize: how many candidates along the reduced
    dimension the approximate (TPU) algorithm keeps; pyjax returns that many of the
    best, in order."""
    if aggregate_to_topk:
        return k
    tiling = 1024 if rank == 1 else 128
    if n <= tiling or recall_target >= 1.0:
        return n
    logical = input_size_override if input_size_override >= 0 else n
    windows = min(max(int((1.0 - k) / math.log(recall_target)), tiling), logical)
    log2_reduction = (logical // windows).bit_length() - 1
    if log2_reduction <= 0:
        return n
    log2_reduction = min(log2_reduction, (-(-n // tiling) - 1).bit_length())
    block = tiling << log2_reduction
    return (-(-n // block) * block) >> log2_reduction


def _approx_top_k_abstract_eval(x, *, k, reduction_dimension, recall_target, is_max_k,
                                reduction_input_size_override, aggregate_to_topk):
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if x.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {x.shape}")
    n = x.shape[reduction_dimension]
    if n < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim {n}, got {k}")
    if not dtypes.is_float(x.dtype):
        raise ValueError("operand must be a floating type")
    size = _approx_output_size(n, x.ndim, k, recall_target, aggregate_to_topk,
                               reduction_input_size_override)
    shape = x.shape[:reduction_dimension] + (size,) + x.shape[reduction_dimension + 1:]
    return [x.update(shape=shape), ShapedArray(shape, np.int32)]


def _approx_top_k_impl(x, *, k, reduction_dimension, is_max_k, **params):
    size = _approx_top_k_abstract_eval(get_aval(x), k=k, reduction_dimension=reduction_dimension,
                                       is_max_k=is_max_k, **params)[1].shape[reduction_dimension]
    values, indices = _top_k_impl(x if is_max_k else -x, k=size, axis=reduction_dimension)
    return [values if is_max_k else -values, indices]


def _approx_top_k_jvp(primals, tangents, *, reduction_dimension, **params):
    (x,), (t,) = primals, tangents
    values, indices = approx_top_k_p.bind(x, reduction_dimension=reduction_dimension, **params)
    if type(t) is Zero:
        t_out = Zero(ad.tangent_aval(get_aval(values)))
    else:
        t_out = _pick_along(t, indices, reduction_dimension)
    return [values, indices], [t_out, Zero(ad.tangent_aval(get_aval(indices)))]


def _approx_top_k_batch(args, dims, *, reduction_dimension, **params):
    (x,), (d,) = args, dims
    outs = approx_top_k_p.bind(x, reduction_dimension=reduction_dimension
                               + (d <= reduction_dimension), **params)
    return outs, [d, d]


def _approx_top_k_lower(ctx, x, *, reduction_dimension, is_max_k, **params):
    """The exact answer (as XLA's CPU/GPU fallback gives): top_k over the reduced
    dimension (of -x for the smallest)."""
    values, indices = ctx.avals_out
    if not is_max_k:
        x = ctx.unary("stablehlo.negate", x, x.aval.dtype)
    best, where = _lower_top_k_along(ctx, x, reduction_dimension, values.strip_weak_type(),
                                     indices)
    if not is_max_k:
        best = ctx.unary("stablehlo.negate", best, best.aval.dtype)
    return [best, where]


def _swap_lower(ctx, x, perm):
    """x with two dimensions swapped (perm is its own inverse)."""
    shape = tuple(x.aval.shape[p] for p in perm)
    return ctx.op("stablehlo.transpose", [x], x.aval.update(shape=shape),
                  {"permutation": hlo.i64_array(perm)})


approx_top_k_p = define_primitive(
    "approx_top_k", multiple_results=True, impl=_approx_top_k_impl,
    abstract_eval=_approx_top_k_abstract_eval, jvp=_approx_top_k_jvp, transpose=NO_TRANSPOSE,
    batch=_approx_top_k_batch, lower=_approx_top_k_lower,
    samples=lambda: [
        b.Sample([b.random_values((3, 6), np.float32)], dict(
            k=2, reduction_dimension=1, recall_target=0.95, is_max_k=True,
            reduction_input_size_override=-1, aggregate_to_topk=True)),
        b.Sample([b.random_values((5, 2), np.float32, seed=1)], dict(
            k=3, reduction_dimension=0, recall_target=0.95, is_max_k=False,
            reduction_input_size_override=-1, aggregate_to_topk=True))])


def _approx_k(operand, k, reduction_dimension, recall_target, is_max_k,
              reduction_input_size_override, aggregate_to_topk):
    ndim = get_aval(operand).ndim
    dimension = canonicalize_axis(reduction_dimension, ndim, "reduction_dimension") \
        if ndim else reduction_dimension
    return tuple(approx_top_k_p.bind(
        operand, k=operator.index(k), reduction_dimension=dimension,
        recall_target=float(recall_target), is_max_k=is_max_k,
        reduction_input_size_override=operator.index(reduction_input_size_override),
        aggregate_to_topk=bool(aggregate_to_topk)))


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k largest entries along reduction_dimension and their indices. Computed
    exactly (recall 1, as XLA's CPU fallback does), which meets any recall_target; with
    aggregate_to_topk=False, as many of the best as TPU's approximate pass would keep."""
    return _approx_k(operand, k, reduction_dimension, recall_target, True,
                     reduction_input_size_override, aggregate_to_topk)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The k smallest entries along reduction_dimension, computed exactly."""
    return _approx_k(operand, k, reduction_dimension, recall_target, False,
                     reduction_input_size_override, aggregate_to_topk)


__all__ = ["sort_p", "top_k_p", "approx_top_k_p", "sort", "sort_key_val", "top_k", "approx_max_k",
           "approx_min_k"]
