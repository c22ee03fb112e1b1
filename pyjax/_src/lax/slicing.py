"""Static and dynamic slicing: slice, dynamic_slice, dynamic_update_slice and their
in-dim helpers. Dynamic start indices are clamped so the slice fits, as in XLA.
(gather and scatter live in the indexing family.)"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from pyjax._src import dtypes
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import ad, batching, jet
from pyjax._src.interpreters.ad import Zero, linear_jvp
from pyjax._src.lax import builders as b
from pyjax._src.lax import sharding_rules
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import indexing
from pyjax._src.lax import structural as st
from pyjax._src.shape_poly import is_symbolic_dim
from pyjax._src.util import canonicalize_axis


# --- slice ------------------------------------------------------------------------------

def _slice_abstract_eval(x, start_indices, limit_indices, strides):
    if not len(start_indices) == len(limit_indices) == x.ndim:
        raise TypeError(f"slice start_indices {start_indices} and limit_indices "
                        f"{limit_indices} need one entry per dimension of {x.shape}")
    strides = strides or (1,) * x.ndim
    if len(strides) != x.ndim or any(s < 1 for s in strides):
        raise TypeError(f"slice strides {strides} must be positive, one per dimension of "
                        f"{x.shape}")
    shape = []
    for d, lo, hi, s in zip(x.shape, start_indices, limit_indices, strides):
        if not 0 <= lo <= hi <= d:
            raise TypeError(f"slice indices {start_indices}:{limit_indices}:{strides} are "
                            f"out of bounds for shape {x.shape}")
        shape.append((hi - lo + s - 1) // s)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _slice_impl(x, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    return x[tuple(builtins.slice(lo, hi, s) for lo, hi, s in
                   zip(start_indices, limit_indices, strides))]


def _slice_transpose(ct, x, start_indices, limit_indices, strides):
    shape = x.aval.shape
    strides = strides or (1,) * len(shape)
    ct_shape = get_aval(ct).shape
    config = []
    for d, lo, s, n in zip(shape, start_indices, strides, ct_shape):
        real_hi = lo + (n - 1) * s + 1 if n else lo
        config.append((lo, d - real_hi, s - 1))
    return [st.pad(ct, np.zeros((), get_aval(ct).dtype), config)]


def _slice_batch(args, dims, start_indices, limit_indices, strides):
    (x,), (d,) = args, dims
    insert = lambda t, v: t[:d] + (v,) + t[d:]   # noqa: E731
    return slice_p.bind(x, start_indices=insert(start_indices, 0),
                        limit_indices=insert(limit_indices, get_aval(x).shape[d]),
                        strides=None if strides is None else insert(strides, 1)), d


def _slice_lower(ctx, x, start_indices, limit_indices, strides):
    if any(map(is_symbolic_dim, start_indices + limit_indices)):
        # bounds of symbolic dimensions (jax.export): computed from @main's arguments
        return ctx.op("stablehlo.real_dynamic_slice",
                      [x, ctx.shape_value(start_indices), ctx.shape_value(limit_indices),
                       ctx.shape_value(strides)], ctx.avals_out[0])
    return ctx.op("stablehlo.slice", [x], ctx.avals_out[0],
                  {"start_indices": hlo.i64_array(start_indices),
                   "limit_indices": hlo.i64_array(limit_indices),
                   "strides": hlo.i64_array(strides)})


slice_p = define_primitive(
    "slice", impl=_slice_impl, abstract_eval=sharding_rules.typed(
        _slice_abstract_eval, sharding_rules.sliced("slicing"),
        sharding_rules.operand_ur), jvp=linear_jvp,
    transpose=_slice_transpose, batch=_slice_batch,
    lower=lambda ctx, x, start_indices, limit_indices, strides: _slice_lower(
        ctx, x, start_indices, limit_indices, strides or (1,) * x.aval.ndim),
    samples=lambda: [b.Sample([b.random_values((4, 5), np.float32)],
                      {"start_indices": (1, 0), "limit_indices": (3, 5), "strides": None}),
             b.Sample([b.random_values((6,), np.float32)],
                      {"start_indices": (1,), "limit_indices": (6,), "strides": (2,)})])


def _extended_dtype(x):
    """The extended dtype of a typed key array `x`, else None: lax's slicing functions
    act on such an array's physical data, whose trailing dimensions (one key's data)
    they take whole."""
    dtype = getattr(x, "dtype", None)
    return dtype if isinstance(dtype, dtypes.ExtendedDType) else None


def slice(operand, start_indices, limit_indices, strides=None):
    keys = _extended_dtype(operand)
    if keys is not None:
        n = len(keys.physical_shape)
        return keys.from_physical(slice(
            keys.to_physical(operand), (*start_indices, *(0,) * n),
            (*limit_indices, *keys.physical_shape),
            None if strides is None else (*strides, *(1,) * n)))
    start = tuple(i if is_symbolic_dim(i) else operator.index(i) for i in start_indices)
    limit = tuple(i if is_symbolic_dim(i) else operator.index(i) for i in limit_indices)
    strides = None if strides is None or all(s == 1 for s in strides) else \
        tuple(operator.index(s) for s in strides)
    return slice_p.bind(operand, start_indices=start, limit_indices=limit, strides=strides)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    aval = get_aval(operand)
    axis = canonicalize_axis(axis, aval.ndim)
    size = aval.shape[axis]
    start, limit, _ = builtins.slice(start_index, limit_index).indices(size)
    starts = [0] * aval.ndim
    limits = list(aval.shape)
    strides = [1] * aval.ndim
    starts[axis], limits[axis], strides[axis] = start, max(limit, start), stride
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    aval = get_aval(operand)
    axis = canonicalize_axis(axis, aval.ndim)
    index = operator.index(index)
    size = aval.shape[axis]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    if index < 0:
        index += size
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else st.squeeze(out, (axis,))


# --- dynamic_slice ----------------------------------------------------------------------

def _check_indices(name, x, indices):
    if len(indices) != x.ndim:
        raise ValueError(f"{name}: the length of the start indices must match the number "
                         f"of operand dimensions: got {len(indices)} for shape {x.shape}")
    for i in indices:
        if i.shape or i.dtype.kind not in "iu":
            raise TypeError(f"{name} start indices must be integer scalars, got {i}")
    if any(i.dtype != indices[0].dtype for i in indices):
        raise TypeError(f"index arguments to {name} must be integers of the same type, got: "
                        + ", ".join(i.dtype.name for i in indices))


def _dynamic_slice_abstract_eval(x, *indices, slice_sizes):
    _check_indices("dynamic_slice", x, indices)
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= d for s, d in
                                          zip(slice_sizes, x.shape)):
        raise TypeError(f"dynamic_slice slice_sizes {slice_sizes} must fit in the operand "
                        f"shape {x.shape}")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


def clamped_starts(shape, indices, sizes):
    return tuple(int(np.clip(int(i), 0, d - s)) for i, d, s in zip(indices, shape, sizes))


def _dynamic_slice_impl(x, *indices, slice_sizes):
    starts = clamped_starts(x.shape, indices, slice_sizes)
    return x[tuple(builtins.slice(s, s + n) for s, n in zip(starts, slice_sizes))]


def _dynamic_slice_jvp(primals, tangents, slice_sizes):
    x, *indices = primals
    out = dynamic_slice_p.bind(x, *indices, slice_sizes=slice_sizes)
    if type(tangents[0]) is Zero:
        return out, Zero(ad.tangent_aval(get_aval(out)))
    return out, dynamic_slice_p.bind(tangents[0], *indices, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *indices, slice_sizes):
    zeros = st.zeros_like_aval(x.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


def _zero_index(indices):
    """A start index 0 of the dtype of the others (the primitives take one index dtype)."""
    if not indices:
        return np.int32(0)
    return 0 if type(indices[0]) is int else np.zeros((), get_aval(indices[0]).dtype)


def _batched_starts(indices, dims, size):
    """The start indices as one (batch, ndim) int32 array: gather/scatter index vectors."""
    columns = [batching.bdim_at_front(ew.convert_element_type(i, np.int32), d, size)
               for i, d in zip(indices, dims)]
    return st.concatenate([st.reshape(c, (size, 1)) for c in columns], 1)


def _dynamic_slice_batch(args, dims, slice_sizes):
    (x, *indices), (xd, *index_dims) = args, dims
    size = batching.axis_size_of(args, dims)
    if all(d is None for d in index_dims):
        return dynamic_slice_p.bind(x, *indices[:xd], _zero_index(indices), *indices[xd:],
                                    slice_sizes=slice_sizes[:xd] + (size,) +
                                    slice_sizes[xd:]), xd
    if size == 0:
        return batching.empty_batch(dynamic_slice_p, args, dims,
                                    {"slice_sizes": slice_sizes})
    # Per-example starts: a gather whose batching dims pair examples; CLIP clamps the
    # windows into bounds exactly as dynamic_slice does.
    x = batching.bdim_at_front(x, xd, size)
    n = len(slice_sizes)
    dnums = indexing.GatherDimensionNumbers(
        offset_dims=tuple(range(1, n + 1)), collapsed_slice_dims=(),
        start_index_map=tuple(range(1, n + 1)), operand_batching_dims=(0,),
        start_indices_batching_dims=(0,))
    return indexing.gather_p.bind(
        x, _batched_starts(indices, index_dims, size), dimension_numbers=dnums,
        fill_value=None, indices_are_sorted=False, mode=indexing.CLIP,
        slice_sizes=(1,) + tuple(slice_sizes), unique_indices=False), 0


def _dynamic_slice_lower(ctx, x, indices, slice_sizes):
    if not any(map(is_symbolic_dim, slice_sizes)):
        return ctx.op("stablehlo.dynamic_slice", [x, *indices], ctx.avals_out[0],
                      {"slice_sizes": hlo.i64_array(slice_sizes)})
    # sizes of symbolic dimensions (jax.export): a real_dynamic_slice, which does not
    # clamp, so the starts are clamped here (as JAX lowers it)
    one = ShapedArray((1,), np.int32)
    starts = ctx.concatenate([ctx.reshape(ctx.convert(i, np.int32), one.shape)
                              for i in indices], 0)
    sizes = ctx.shape_value(slice_sizes)
    highest = ctx.binary("stablehlo.subtract", ctx.shape_value(x.aval.shape), sizes)
    starts = ctx.op("stablehlo.clamp", [ctx.full(0, starts.aval.shape, np.int32), starts,
                                        highest], starts.aval)
    return ctx.op("stablehlo.real_dynamic_slice",
                  [x, starts, ctx.binary("stablehlo.add", starts, sizes),
                   ctx.full(1, starts.aval.shape, np.int32)], ctx.avals_out[0])


dynamic_slice_p = define_primitive(
    "dynamic_slice", impl=_dynamic_slice_impl, abstract_eval=sharding_rules.typed(
        _dynamic_slice_abstract_eval, sharding_rules.sliced("dynamic_slice"),
        sharding_rules.nary_ur("dynamic_slice")),
    jvp=_dynamic_slice_jvp, transpose=_dynamic_slice_transpose, batch=_dynamic_slice_batch,
    jet=jet.linear_in(0),
    lower=lambda ctx, x, *indices, slice_sizes: _dynamic_slice_lower(ctx, x, indices,
                                                                    slice_sizes),
    samples=lambda: [b.Sample([b.random_values((4, 5), np.float32), np.int32(1), np.int32(2)],
                      {"slice_sizes": (2, 3)}),
             b.Sample([b.random_values((4, 5), np.float32), np.int32(3), np.int32(-1)],
                      {"slice_sizes": (2, 2)})])


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """operand[start:start+size] per dimension. A negative start counts from the end of its
    dimension (unless allow_negative_indices, one bool or one per dimension, is False);
    starts are then clamped to keep the slice in bounds."""
    starts = _start_indices("dynamic_slice", operand, start_indices, allow_negative_indices)
    return clamped_dynamic_slice(operand, starts, slice_sizes)


def clamped_dynamic_slice(operand, start_indices, slice_sizes):
    """dynamic_slice with the starts taken as they are (negative ones clamp to 0), for
    callers that have already normalised their indices."""
    keys = _extended_dtype(operand)
    if keys is not None:
        n = len(keys.physical_shape)
        return keys.from_physical(clamped_dynamic_slice(
            keys.to_physical(operand), (*start_indices, *[_zero_index(start_indices)] * n),
            (*slice_sizes, *keys.physical_shape)))
    sizes = tuple(s if is_symbolic_dim(s) else operator.index(s) for s in slice_sizes)
    return dynamic_slice_p.bind(operand, *_index_scalars(start_indices), slice_sizes=sizes)


def _start_indices(name, operand, indices, allow_negative):
    """The start indices as scalars of their own integer dtype (a Python int of the default
    one, as in JAX), a negative one moved up by its dimension's size where allowed (an
    unsigned one cannot be negative)."""
    indices = [np.asarray(i, dtypes.default_int_dtype()) if type(i) is int else i
               for i in indices]
    shape = get_aval(operand).shape
    allows = [allow_negative] * len(indices) if isinstance(allow_negative, (bool, np.bool_)) \
        else list(allow_negative)
    if len(allows) != len(indices) or len(indices) != len(shape):
        if len(allows) != len(indices):
            raise ValueError(f"{name}: allow_negative_indices has {len(allows)} entries for "
                             f"{len(indices)} start indices; pass one bool or one per index.")
        return indices   # the primitive reports the wrong number of indices
    index_dtypes = [get_aval(i).dtype for i in indices]
    if any(d.kind not in "iu" or d != index_dtypes[0] for d in index_dtypes):
        raise TypeError(f"index arguments to {name} must be integers of the same type, got: "
                        + ", ".join(d.name for d in index_dtypes))
    out = []
    for i, size, allow in zip(indices, shape, allows):
        dtype = get_aval(i).dtype
        if dtype.kind != "i":   # unsigned (or not an integer: the primitive says so)
            out.append(i)
        elif isinstance(i, (np.integer, np.ndarray)):
            if i < 0 and not allow:
                raise ValueError(f"{name}: start index {i} is negative for a dimension of size "
                                 f"{size} while allow_negative_indices is False; pass a start "
                                 f"in [0, {size}) or allow negative indices.")
            out.append(np.asarray(i + size if i < 0 else i, dtype))
        elif allow:   # traced: chosen at run time
            out.append(ew.select_n(ew.lt(i, np.zeros((), dtype)), i,
                                   ew.add(i, st.dim_as_value(size, dtype))))
        else:
            out.append(i)
    return out


def _index_scalars(indices):
    """The start indices as they are where they share an integer dtype (the primitives
    take one), else as int32."""
    index_dtypes = [get_aval(i).dtype for i in indices]
    for d in index_dtypes:
        if d.kind not in "iu":
            raise TypeError(f"start indices must be integers, got {d}")
    if all(d == index_dtypes[0] for d in index_dtypes):
        return list(indices)
    return [i if d == np.int32 else ew.convert_element_type(i, np.int32)
            for i, d in zip(indices, index_dtypes)]


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    aval = get_aval(operand)
    axis = canonicalize_axis(axis, aval.ndim)
    starts = [_zero_index([start_index])] * aval.ndim   # of start_index's dtype, as in JAX
    starts[axis] = start_index
    sizes = list(aval.shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes,
                         allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    axis = canonicalize_axis(axis, get_aval(operand).ndim)
    return out if keepdims else st.squeeze(out, (axis,))


# --- dynamic_update_slice ---------------------------------------------------------------

def _dus_abstract_eval(x, update, *indices):
    _check_indices("dynamic_update_slice", x, indices)
    b.same_dtypes("dynamic_update_slice", [x, update])
    if update.ndim != x.ndim or any(u > d for u, d in zip(update.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice update shape {update.shape} must fit in the "
                        f"operand shape {x.shape}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _dus_impl(x, update, *indices):
    starts = clamped_starts(x.shape, indices, update.shape)
    out = np.array(x, copy=True)
    out[tuple(builtins.slice(s, s + n)
              for s, n in zip(starts, update.shape))] = update
    return out


def _dus_jvp(primals, tangents):
    x, update, *indices = primals
    tx, tu = tangents[0], tangents[1]
    out = dynamic_update_slice_p.bind(x, update, *indices)
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero(ad.tangent_aval(get_aval(out)))
    return out, dynamic_update_slice_p.bind(ad.instantiate_zeros(tx),
                                            ad.instantiate_zeros(tu), *indices)


def _dus_transpose(ct, x, update, *indices):
    update_aval = update.aval if ad.is_undefined_primal(update) else get_aval(update)
    ct_x = ct_update = None
    if ad.is_undefined_primal(x):
        zeros = st.zeros_like_aval(update_aval)
        ct_x = dynamic_update_slice_p.bind(ct, zeros, *indices)
    if ad.is_undefined_primal(update):
        ct_update = dynamic_slice_p.bind(ct, *indices, slice_sizes=update_aval.shape)
    return [ct_x, ct_update] + [None] * len(indices)


def _dus_batch(args, dims):
    (x, update, *indices), (xd, ud, *index_dims) = args, dims
    size = batching.axis_size_of(args, dims)
    x = batching.bdim_at_front(x, xd, size)
    update = batching.bdim_at_front(update, ud, size)
    if all(d is None for d in index_dims):
        return dynamic_update_slice_p.bind(x, update, _zero_index(indices), *indices), 0
    # Per-example starts: a scatter pairing examples through batching dims (CLIP clamps).
    n = get_aval(x).ndim - 1
    dnums = indexing.ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, n + 1)), inserted_window_dims=(),
        scatter_dims_to_operand_dims=tuple(range(1, n + 1)), operand_batching_dims=(0,),
        scatter_indices_batching_dims=(0,))
    return indexing.scatter_p.bind(
        x, _batched_starts(indices, index_dims, size), update, dimension_numbers=dnums,
        indices_are_sorted=False, mode=indexing.CLIP, unique_indices=True,
        update_jaxpr=None), 0


dynamic_update_slice_p = define_primitive(
    "dynamic_update_slice", impl=_dus_impl, abstract_eval=sharding_rules.typed(
        _dus_abstract_eval, sharding_rules.same,
        sharding_rules.same_ur), jvp=_dus_jvp,
    transpose=_dus_transpose, batch=_dus_batch, jet=jet.linear_in(0, 1),
    lower=lambda ctx, x, update, *indices: ctx.op(
        "stablehlo.dynamic_update_slice", [x, update, *indices], ctx.avals_out[0]),
    samples=lambda: [b.Sample([b.random_values((4, 5), np.float32),
                       b.random_values((2, 2), np.float32, seed=1), np.int32(1),
                       np.int32(4)])])


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """operand with update written at the starts (negative ones as in dynamic_slice)."""
    starts = _start_indices("dynamic_update_slice", operand, start_indices,
                            allow_negative_indices)
    keys = _extended_dtype(operand)
    if keys is not None:
        if _extended_dtype(update) != keys:
            raise TypeError(f"dynamic_update_slice requires an update of the operand's dtype "
                            f"{keys}, got {getattr(update, 'dtype', type(update))}.")
        n = len(keys.physical_shape)
        return keys.from_physical(dynamic_update_slice(
            keys.to_physical(operand), keys.to_physical(update),
            (*starts, *[_zero_index(starts)] * n)))
    return dynamic_update_slice_p.bind(operand, update, *_index_scalars(starts))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    aval = get_aval(operand)
    axis = canonicalize_axis(axis, aval.ndim)
    starts = [_zero_index([start_index])] * aval.ndim   # of start_index's dtype, as in JAX
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *,
                                allow_negative_indices=True):
    aval = get_aval(operand)
    axis = canonicalize_axis(axis, aval.ndim)
    if get_aval(update).ndim == aval.ndim - 1:
        update = st.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)
