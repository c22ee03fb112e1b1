"""jax.ops: segment reductions. Row i of `data` goes to segment `segment_ids[i]`; each
segment combines its rows (sum, product, max or min) with XLA's Scatter, starting from the
operation's identity. Ids outside [0, num_segments) - negative ones included - are
dropped (mode "clip" clamps them instead)."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src import dtypes, errors
from pyjax._src.api.vmap import vmap
from pyjax._src.array import Array
from pyjax._src.backends.stablehlo import reduction_identity
from pyjax._src.lax import indexing as lax_indexing
from pyjax._src.lax import reductions
from pyjax._src.lax.sharding_constraint import apply_out_sharding
from pyjax._src.sharding import canonical_sharding
from pyjax._src.numpy import lax_numpy
from pyjax._src.numpy.array_manipulation import pad

_SCATTERS = {"sum": (lax_indexing.scatter_add, "stablehlo.add", reductions.reduce_sum),
             "prod": (lax_indexing.scatter_mul, "stablehlo.multiply", reductions.reduce_prod),
             "max": (lax_indexing.scatter_max, "stablehlo.maximum", reductions.reduce_max),
             "min": (lax_indexing.scatter_min, "stablehlo.minimum", reductions.reduce_min)}


def _num_segments(segment_ids, num_segments, name):
    if num_segments is not None:
        try:
            return operator.index(num_segments)
        except TypeError:
            raise TypeError(f"{name}: num_segments must be a Python int (it fixes the shape "
                            f"of the result), got {num_segments!r:.100}") from None
    if not isinstance(segment_ids, Array):
        concrete = segment_ids.to_concrete_value()
        if concrete is None:
            raise errors.ConcretizationTypeError(
                segment_ids, f"The error arose in jax.ops.{name}: without num_segments, "
                "the number of segments depends on the values of segment_ids. Pass a "
                "static num_segments= to use it inside jit and other transformations.\n")
        segment_ids = concrete
    return int(np.max(np.asarray(segment_ids), initial=-1)) + 1


def _segment(kind, name, data, segment_ids, num_segments, indices_are_sorted,
             unique_indices, bucket_size, mode):
    data, segment_ids = lax_numpy.asarray(data), lax_numpy.asarray(segment_ids)
    if not dtypes.issubdtype(segment_ids.dtype, np.integer):
        raise TypeError(f"{name}: segment_ids must be integers, got {segment_ids.dtype}")
    # data is rows of shape `window`, one per id (or one broadcast to all of them)
    window = data.shape[1:]
    try:
        data = lax_numpy.broadcast_to(data, segment_ids.shape + window)
    except ValueError:
        raise ValueError(f"{name}: data of shape {data.shape} does not have one row per "
                         f"segment id: segment_ids has shape {segment_ids.shape}") from None
    num_segments = _num_segments(segment_ids, num_segments, name)
    data = data.reshape((-1,) + window)
    segment_ids = segment_ids.reshape(-1)
    scatter, identity_op, reduce = _SCATTERS[kind]
    dnums = lax_indexing.ScatterDimensionNumbers(
        update_window_dims=tuple(range(1, data.ndim)), inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,))

    identity = reduction_identity(identity_op, data.dtype)

    def combine(rows, ids):
        start = lax_numpy.full((num_segments,) + window, identity, rows.dtype)
        return scatter(start, ids[:, None], rows, dnums, mode=mode or "drop",
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)

    count = segment_ids.shape[0]
    if bucket_size is None or bucket_size >= count:
        return combine(data, segment_ids)
    # Rows go in buckets of bucket_size, each combined on its own (one batched scatter)
    # and the buckets then combined: sums and products of many rows lose less precision.
    # Padding rows hold the identity, so they change nothing wherever they land.
    buckets = -(-count // bucket_size)
    padding = buckets * bucket_size - count
    ids = pad(segment_ids, (0, padding), constant_values=num_segments)
    rows = pad(data, [(0, padding)] + [(0, 0)] * len(window), constant_values=identity)
    per_bucket = vmap(combine)(rows.reshape((buckets, bucket_size) + window),
                               ids.reshape(buckets, bucket_size))
    return reduce(per_bucket, axes=(0,))


def _make(kind, verb):
    name = f"segment_{kind}"

    def segment_op(data, segment_ids, num_segments=None, indices_are_sorted=False,
                   unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
        if out_sharding is not None:
            target = canonical_sharding(out_sharding, name)
            if kind != "sum" and target.spec.unreduced:
                raise NotImplementedError(f"unreduced for {kind} is not yet supported.")
            if bucket_size is not None:
                raise NotImplementedError(f"{name} with both bucket_size and out_sharding")
        out = _segment(kind, name, data, segment_ids, num_segments, indices_are_sorted,
                       unique_indices, bucket_size, mode)
        return apply_out_sharding(out, out_sharding, name)
    segment_op.__name__ = segment_op.__qualname__ = name
    segment_op.__doc__ = (f"The {verb} of the rows of `data` in each segment: out[s] combines "
                          "data[i] for every i with segment_ids[i] == s (empty segments "
                          "hold the identity). num_segments (a Python int) fixes the "
                          "result's length; without it, max(segment_ids) + 1 (not under "
                          "jit). Ids out of range are dropped, or clamped with mode='clip'. "
                          "out_sharding: how the result is laid out.")
    return segment_op


segment_sum = _make("sum", "sum")
segment_prod = _make("prod", "product")
segment_max = _make("max", "maximum")
segment_min = _make("min", "minimum")
