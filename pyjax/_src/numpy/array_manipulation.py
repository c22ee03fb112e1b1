"""jax.numpy's array manipulation: triangles and diagonals, pad (every mode),
roll/rot90/tile/repeat, grids, append/insert/delete, compress/choose/piecewise, tensordot
and kron. As in JAX, arrays are immutable, shapes are static and `size=` stands in for
data-dependent shapes. Imports lax, the other jnp modules and dtypes."""
from __future__ import annotations

import builtins
import functools
import operator

import numpy as np

from pyjax._src import dtypes, errors
from pyjax._src.api.jit import jit
from pyjax._src.array import Array
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import dot as ldot
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import slicing as sl
from pyjax._src.lax import structural as st
from pyjax._src.numpy import indexing
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy.lax_numpy import ndim as _ndim, shape as _shape
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import sorting
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import (check_arraylike, convert, ensure_array, ensure_arraylike,
                                   extended_dtype, jax_array_protocol, promote_dtypes,
                                   promote_dtypes_numeric)
from pyjax._src.util import canonicalize_axes, canonicalize_axis, canonicalize_shape
from pyjax._src.lax.sharding_constraint import takes_out_sharding


def concrete(x, name, arg, why=None):
    """x as a NumPy value, or ConcretizationTypeError when it is traced: `arg` of
    jnp.`name` decides the shape of the result (or `why` says what else needs it), so it
    must be static."""
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(x, why or (
                f"The error arose in jnp.{name}: argument '{arg}' must be concrete "
                "because it decides the shape of the result. Pass a NumPy value or a "
                f"static argument, or use the size= argument where jnp.{name} has one.\n"))
        return np.asarray(value)
    if isinstance(x, Array):
        return np.asarray(x._value)
    if isinstance(x, (list, tuple)):
        return np.asarray([concrete(v, name, arg) for v in x])
    return np.asarray(x)


# --- triangles and diagonals ------------------------------------------------------------

def tri(N, M=None, k=0, dtype=None):
    """Ones at and below the k-th diagonal of an N x M matrix, zeros elsewhere."""
    N, M = canonicalize_shape((N, N if M is None else M), "jnp.tri")
    dtype = dtypes.canonicalize_dtype(dtype) if dtype is not None else \
        dtypes.default_float_dtype()
    rows = st.broadcasted_iota(np.int32, (N, M), 0)
    cols = st.broadcasted_iota(np.int32, (N, M), 1)
    return ensure_array(convert(ew.ge(ew.add(rows, lnp.diagonal_offset(k, (N, M))), cols),
                                dtype))


def _triangle(name, m, k, lower):
    check_arraylike(name, m)
    m = lnp.asarray(m)
    if _ndim(m) < 2:
        raise ValueError(f"jnp.{name} requires an array of at least two dimensions, got "
                         f"shape {_shape(m)}")
    n_rows, n_cols = _shape(m)[-2:]
    mask = tri(n_rows, n_cols, k if lower else k - 1, dtype=np.bool_)
    if not lower:
        mask = uf.logical_not(mask)
    return lnp.where(mask, m, lnp.zeros((), _dtype(m)))


def _dtype(x):
    return get_aval(x).dtype


def tril(m, k=0):
    """m with the entries above its k-th diagonal set to zero (last two axes)."""
    return _triangle("tril", m, k, True)


def triu(m, k=0):
    """m with the entries below its k-th diagonal set to zero (last two axes)."""
    return _triangle("triu", m, k, False)


def _indices_result(rows, cols):
    return Array(rows.astype(dtypes.default_int_dtype())), \
        Array(cols.astype(dtypes.default_int_dtype()))


def tril_indices(n, k=0, m=None):
    return _indices_result(*np.tril_indices(operator.index(n), operator.index(k),
                                            None if m is None else operator.index(m)))


def triu_indices(n, k=0, m=None):
    return _indices_result(*np.triu_indices(operator.index(n), operator.index(k),
                                            None if m is None else operator.index(m)))


def tril_indices_from(arr, k=0):
    shape = _shape(arr)
    if len(shape) != 2:
        raise ValueError("jnp.tril_indices_from requires a 2-dimensional array")
    return tril_indices(shape[0], k, shape[1])


def triu_indices_from(arr, k=0):
    shape = _shape(arr)
    if len(shape) != 2:
        raise ValueError("jnp.triu_indices_from requires a 2-dimensional array")
    return triu_indices(shape[0], k, shape[1])


def mask_indices(n, mask_func, k=0, *, size=None):
    """Indices where mask_func(ones((n, n)), k) is nonzero (computed on the host)."""
    mask = np.asarray(mask_func(np.ones((n, n), np.int32), k)) != 0
    return _indices_result(*np.nonzero(mask))


def diag_indices(n, ndim=2):
    idx = Array(np.arange(operator.index(n), dtype=dtypes.default_int_dtype()))
    return (idx,) * operator.index(ndim)


def diag_indices_from(arr):
    shape = _shape(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError("jnp.diag_indices_from requires an array of at least 2 dimensions "
                         f"with all sizes equal, got shape {shape}")
    return diag_indices(shape[0], len(shape))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The offset diagonal of the 2-D slices over axis1 and axis2, as a new last axis."""
    check_arraylike("diagonal", a)
    a = lnp.asarray(a)
    n = _ndim(a)
    axis1, axis2 = canonicalize_axis(axis1, n), canonicalize_axis(axis2, n)
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 can not be same: the diagonal needs two distinct "
                         f"axes, got {axis1} twice.")
    a = lnp.moveaxis(a, (axis1, axis2), (-2, -1))
    rows, cols = _shape(a)[-2:]
    offset = operator.index(offset)
    length = builtins.max(0, builtins.min(rows + builtins.min(offset, 0),
                                          cols - builtins.max(offset, 0)))
    r = np.arange(length) - builtins.min(offset, 0)
    c = np.arange(length) + builtins.max(offset, 0)
    return a[..., r, c]


def diag(v, k=0):
    """The k-th diagonal of a 2-D array, or a 2-D array with 1-D v on its k-th diagonal."""
    check_arraylike("diag", v)
    v = lnp.asarray(v)
    k = operator.index(k)
    if _ndim(v) == 1:
        length = _shape(v)[0]
        n = length + builtins.abs(k)
        rows = np.arange(length) + builtins.max(-k, 0)
        cols = np.arange(length) + builtins.max(k, 0)
        return lnp.zeros((n, n), _dtype(v)).at[rows, cols].set(v)
    if _ndim(v) == 2:
        return diagonal(v, k)
    raise ValueError(f"jnp.diag takes a 1-D or 2-D array, got shape {_shape(v)}")


def diagflat(v, k=0):
    return diag(lnp.ravel(v), k)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """A copy of a with its main diagonal set to val (cycled). JAX arrays are immutable:
    pass inplace=False."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, so jnp.fill_diagonal must be "
                                  "called with inplace=False; it returns the new array.")
    check_arraylike("fill_diagonal", a, val)
    a = lnp.asarray(a)
    shape = _shape(a)
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = builtins.min(shape)
    if len(shape) == 2 and wrap and shape[0] > shape[1]:
        flat_idx = np.arange(0, shape[0] * shape[1], shape[1] + 1)
    else:
        step = int(np.sum(np.cumprod((1,) + shape[:0:-1])))
        flat_idx = np.arange(n) * step
    val = lnp.ravel(lnp.asarray(val, _dtype(a)))
    count = len(flat_idx)
    values = val[np.arange(count) % _shape(val)[0]] if _shape(val)[0] else val
    flat = lnp.ravel(a).at[flat_idx].set(values)
    return lnp.reshape(flat, shape)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum of the offset diagonal over axis1 and axis2."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    return red.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# --- pad --------------------------------------------------------------------------------

def _pad_widths(pad_width, ndim):
    widths = concrete(pad_width, "pad", "pad_width")
    if widths.dtype.kind not in "iu":
        raise TypeError(f"jnp.pad: pad_width must be integers, got {widths.dtype}")
    try:
        widths = np.broadcast_to(widths, (ndim, 2)) if widths.size else \
            np.zeros((ndim, 2), int)
    except ValueError:
        raise ValueError(f"jnp.pad: pad_width with nd={ndim} has unsupported shape "
                         f"{widths.shape}. Valid shapes are ({ndim}, 2), (1, 2), (2,), (1,), "
                         "or ().") from None
    if (widths < 0).any():
        raise ValueError("jnp.pad: pad_width must be non-negative")
    return [(int(lo), int(hi)) for lo, hi in widths]


def _per_axis(values, ndim, name, dtype=None):
    """constant_values/end_values broadcast to (ndim, 2) Python-side pairs of scalars."""
    if isinstance(values, (Array, Tracer)) and get_aval(values).ndim == 0:
        return [(values, values)] * ndim
    arr = values if isinstance(values, (Array, Tracer)) else np.asarray(values)
    if np.ndim(arr) == 0:
        return [(arr, arr)] * ndim
    arr = lnp.broadcast_to(lnp.asarray(arr), (ndim, 2))
    return [(arr[i, 0], arr[i, 1]) for i in range(ndim)]


def _pad_axis_constant(x, axis, lo, hi, lo_val, hi_val):
    parts = []
    shape = list(_shape(x))
    split = _split_of(x)   # the padding is split as x is, so that the parts join
    if lo:
        shape[axis] = lo
        parts.append(lnp.full(tuple(shape), lnp.asarray(lo_val, _dtype(x)),
                              out_sharding=split))
    parts.append(x)
    if hi:
        shape[axis] = hi
        parts.append(lnp.full(tuple(shape), lnp.asarray(hi_val, _dtype(x)),
                              out_sharding=split))
    return lnp.concatenate(parts, axis) if len(parts) > 1 else x


def _split_of(x):
    """x's sharding where its type splits it over Explicit mesh axes (its layout for an
    Array, its type under a trace), else None."""
    typed = get_aval(x)._sharding
    if typed is None or not typed.mesh.explicit_axes:
        return None
    return x.sharding if type(x) is Array else typed


def _take_axis(x, idx, axis):
    index = [slice(None)] * _ndim(x)
    index[axis] = np.asarray(idx, np.int64)
    return x[tuple(index)]


def _pad_reflect(x, axis, lo, hi, symmetric, reflect_type):
    n = _shape(x)[axis]
    if n == 0:
        raise ValueError(f"jnp.pad: can't pad an empty axis {axis} in mode "
                         f"{'symmetric' if symmetric else 'reflect'}")
    if reflect_type == "odd":
        return _odd_reflect(x, axis, lo, hi, symmetric)
    if reflect_type != "even":
        raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got "
                         f"{reflect_type!r}")
    positions = np.arange(-lo, n + hi)
    if n == 1:
        return _take_axis(x, np.zeros_like(positions), axis)
    period = 2 * n if symmetric else 2 * (n - 1)
    p = np.mod(positions, period)
    src = np.where(p < n, p, period - 1 - p if symmetric else period - p)
    return _take_axis(x, src, axis)


def _odd_reflect(x, axis, lo, hi, symmetric):
    """Odd reflection (2 * edge - mirror), added one chunk of at most the original length
    at a time from the current edges, as NumPy's pad does."""
    n = _shape(x)[axis]
    span = builtins.max(n if symmetric else n - 1, 1)
    start = 0 if symmetric else 1
    out = x
    while lo or hi:
        size = _shape(out)[axis]
        take_lo, take_hi = builtins.min(lo, span), builtins.min(hi, span)
        parts = []
        if take_lo:
            edge = _take_axis(out, [0], axis)
            mirrored = _take_axis(out, np.arange(start + take_lo - 1, start - 1, -1), axis)
            parts.append(2 * edge - mirrored)
        parts.append(out)
        if take_hi:
            edge = _take_axis(out, [size - 1], axis)
            stop = size - start
            mirrored = _take_axis(out, np.arange(stop - 1, stop - take_hi - 1, -1), axis)
            parts.append(2 * edge - mirrored)
        out = lnp.concatenate(parts, axis)
        lo, hi = lo - take_lo, hi - take_hi
    return out


def _pad_stat(x, axis, lo, hi, stat_length, func):
    n = _shape(x)[axis]
    if n == 0:
        raise ValueError(f"jnp.pad: can't compute statistics of the empty axis {axis}")
    lo_len, hi_len = stat_length
    lo_len = n if lo_len is None else builtins.max(1, builtins.min(int(lo_len), n))
    hi_len = n if hi_len is None else builtins.max(1, builtins.min(int(hi_len), n))
    lo_val = func(_take_axis(x, np.arange(lo_len), axis), axis=axis, keepdims=True)
    hi_val = func(_take_axis(x, np.arange(n - hi_len, n), axis), axis=axis, keepdims=True)
    if dtypes.is_int(_dtype(x)) or _dtype(x) == np.bool_:
        lo_val, hi_val = uf.round(lo_val), uf.round(hi_val)
    lo_val, hi_val = lnp.asarray(lo_val, _dtype(x)), lnp.asarray(hi_val, _dtype(x))
    reps_lo = [1] * _ndim(x)
    reps_lo[axis] = lo
    reps_hi = [1] * _ndim(x)
    reps_hi[axis] = hi
    return lnp.concatenate([tile(lo_val, reps_lo), x, tile(hi_val, reps_hi)], axis)


def _pad_linear_ramp(x, axis, lo, hi, end_lo, end_hi):
    """Ramps from the edge values to end values (integer results are floored, as
    jnp.linspace does for integer dtypes)."""
    n = _shape(x)[axis]
    dtype = _dtype(x)
    compute = dtypes.to_inexact_dtype(dtype)
    shape = [1] * _ndim(x)

    def ramp(edge, end, frac):
        shape[axis] = len(frac)
        weights = lnp.asarray(frac.reshape(shape), compute)
        return end + (edge - end) * weights
    parts = []
    if lo:
        edge = convert(_take_axis(x, [0], axis), compute)
        parts.append(ramp(edge, lnp.asarray(end_lo, compute), np.arange(lo) / lo))
    parts.append(convert(x, compute))
    if hi:
        edge = convert(_take_axis(x, [n - 1], axis), compute)
        parts.append(ramp(edge, lnp.asarray(end_hi, compute), np.arange(hi - 1, -1, -1) / hi))
    out = lnp.concatenate(parts, axis)
    if not dtypes.is_inexact(dtype):
        out = uf.floor(out)
    return lnp.asarray(out, dtype)


_PAD_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum",
              "reflect", "symmetric", "wrap", "empty")


def pad(array, pad_width, mode="constant", **kwargs):
    """Pads an array, like numpy.pad: pad_width is static; `mode` is one of NumPy's
    names or a function f(vector, pad_width, iaxis, kwargs) applied along each axis."""
    check_arraylike("pad", array)
    x = lnp.asarray(array)
    ndim = _ndim(x)
    widths = _pad_widths(pad_width, ndim)
    if callable(mode):
        return _pad_with_function(x, widths, mode, kwargs)
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    allowed = {"constant": {"constant_values"}, "linear_ramp": {"end_values"},
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
               "maximum": {"stat_length"}, "minimum": {"stat_length"},
               "mean": {"stat_length"}, "median": {"stat_length"}}.get(mode, set())
    unexpected = set(kwargs) - allowed
    if unexpected:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': "
                         f"{sorted(unexpected)}")
    if mode in ("constant", "empty"):
        values = _per_axis(kwargs.get("constant_values", 0), ndim, "constant_values")
        for axis, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, values)):
            x = _pad_axis_constant(x, axis, lo, hi, vlo, vhi)
        return x
    if mode == "linear_ramp":
        ends = _per_axis(kwargs.get("end_values", 0), ndim, "end_values")
        for axis, ((lo, hi), (elo, ehi)) in enumerate(zip(widths, ends)):
            if lo or hi:
                x = _pad_linear_ramp(x, axis, lo, hi, elo, ehi)
        return x
    if mode in ("maximum", "minimum", "mean", "median"):
        if mode == "median":
            func = sorting.median
        else:
            func = {"maximum": red.max, "minimum": red.min, "mean": red.mean}[mode]
        stat = kwargs.get("stat_length")
        stats = [(None, None)] * ndim if stat is None else [
            tuple(int(v) for v in pair) for pair in
            np.broadcast_to(concrete(stat, "pad", "stat_length"), (ndim, 2))]
        for axis, ((lo, hi), s) in enumerate(zip(widths, stats)):
            if lo or hi:
                x = _pad_stat(x, axis, lo, hi, s, func)
        return x
    for axis, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        n = _shape(x)[axis]
        if mode == "edge":
            if n == 0:
                raise ValueError("jnp.pad: can't extend the empty axis in mode 'edge'")
            src = np.clip(np.arange(-lo, n + hi), 0, n - 1)
            x = _take_axis(x, src, axis)
        elif mode == "wrap":
            if n == 0:
                raise ValueError("jnp.pad: can't wrap an empty axis")
            x = _take_axis(x, np.mod(np.arange(-lo, n + hi), n), axis)
        else:
            x = _pad_reflect(x, axis, lo, hi, mode == "symmetric",
                             kwargs.get("reflect_type", "even"))
    return x


def _pad_with_function(x, widths, func, kwargs):
    for axis, (lo, hi) in enumerate(widths):
        x = _pad_axis_constant(x, axis, lo, hi, 0, 0)
        moved = lnp.moveaxis(x, axis, -1)
        flat = lnp.reshape(moved, (-1, _shape(moved)[-1]))
        rows = [lnp.asarray(func(flat[i], (lo, hi), axis, kwargs))
                for i in range(_shape(flat)[0])]
        if rows:
            flat = lnp.stack(rows)
        x = lnp.moveaxis(lnp.reshape(flat, _shape(moved)), -1, axis)
    return x


# --- rolling, rotating, tiling, repeating -------------------------------------------------

def roll(a, shift, axis=None):
    """Elements shifted along axis (cyclically); shift and axis are scalars or 1-D and
    broadcast against each other, and the shift may be traced."""
    check_arraylike("roll", a)
    a, shift = lnp.asarray(a), jax_array_protocol(shift)
    if axis is None:
        return lnp.reshape(roll(lnp.ravel(a), shift, 0), _shape(a))
    axes = np.array([canonicalize_axis(ax, _ndim(a)) for ax in np.atleast_1d(axis)])
    if isinstance(shift, Tracer) and shift.to_concrete_value() is None:
        shifts = lnp.asarray(shift)
        shape = np.broadcast_shapes(_shape(shifts), axes.shape)
        if len(shape) != 1:
            raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D "
                             "arrays")
        shifts = lnp.broadcast_to(shifts, shape)
        for i, ax in enumerate(np.broadcast_to(axes, shape)):
            a = _roll_one(a, shifts[i], int(ax))
        return a
    shifts = np.atleast_1d(concrete(shift, "roll", "shift"))
    if shifts.ndim > 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    for ax, s in zip(*np.broadcast_arrays(axes, shifts)):
        a = _roll_one(a, int(s), int(ax))
    return a


def _roll_one(a, shift, axis):
    n = _shape(a)[axis]
    if n == 0:
        return a
    if isinstance(shift, Tracer) and shift.to_concrete_value() is None:
        doubled = lnp.concatenate([a, a], axis)
        start = uf.remainder(-lnp.asarray(shift, np.int32), np.int32(n))
        return ensure_array(sl.dynamic_slice_in_dim(doubled, start, n, axis,
                                                     allow_negative_indices=False))
    s = int(concrete(shift, "roll", "shift")) % n
    if s == 0:
        return a
    return lnp.concatenate([sl.slice_in_dim(a, n - s, n, axis=axis),
                            sl.slice_in_dim(a, 0, n - s, axis=axis)], axis)


def rollaxis(a, axis, start=0):
    n = _ndim(a)
    axis = canonicalize_axis(axis, n)
    if not -n <= start <= n:
        raise ValueError(f"start={start} must satisfy {-n} <= start <= {n}")
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    return lnp.moveaxis(a, axis, start)


def rot90(m, k=1, axes=(0, 1)):
    """m rotated by 90 degrees k times in the plane of `axes`."""
    check_arraylike("rot90", m)
    m = lnp.asarray(m)
    if _ndim(m) < 2:
        raise ValueError("rot90 requires its first argument to have ndim at least two, but "
                         f"got first argument of shape {_shape(m)}, which has ndim "
                         f"{_ndim(m)}")
    ax1, ax2 = (canonicalize_axis(ax, _ndim(m)) for ax in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return lnp.flip(lnp.flip(m, ax1), ax2)
    perm = list(range(_ndim(m)))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return lnp.transpose(lnp.flip(m, ax2), perm)
    return lnp.flip(lnp.transpose(m, perm), ax2)


def tile(A, reps):
    """A repeated reps times along each axis (reps is static)."""
    reps = (operator.index(reps),) if np.ndim(reps) == 0 else \
        tuple(operator.index(r) for r in reps)
    keys_dtype = extended_dtype(A)
    if keys_dtype is not None:   # tile the key data, never across one key's words
        nd = builtins.max(len(reps), A.ndim)
        data = lnp.reshape(keys_dtype.to_physical(A), (1,) * (nd - A.ndim) + A.shape
                           + keys_dtype.physical_shape)
        reps = (1,) * (nd - len(reps)) + reps + (1,) * len(keys_dtype.physical_shape)
        return keys_dtype.from_physical(tile(data, reps))
    check_arraylike("tile", A)
    A = lnp.asarray(A)
    nd = builtins.max(len(reps), _ndim(A))
    reps = (1,) * (nd - len(reps)) + tuple(reps)
    shape = (1,) * (nd - _ndim(A)) + _shape(A)
    A = lnp.reshape(A, shape)
    expanded = []
    for r, d in zip(reps, shape):
        expanded += [r, d]
    dims = tuple(range(1, 2 * nd, 2))
    out = st.broadcast_in_dim(A, tuple(expanded), dims)
    return ensure_array(st.reshape(out, tuple(r * d for r, d in zip(reps, shape))))


@takes_out_sharding
def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Each element repeated; array `repeats` must be concrete unless total_repeat_length
    gives the static output length (as in JAX)."""
    check_arraylike("repeat", a)
    a = lnp.asarray(a)
    a, axis = lnp.axis_or_flattened(a, axis)
    n = _shape(a)[axis]
    traced = isinstance(repeats, Tracer) and repeats.to_concrete_value() is None
    if not traced:
        reps = concrete(repeats, "repeat", "repeats")
        if reps.dtype.kind not in "iub":
            raise TypeError(f"jnp.repeat: repeats must be integers, got {repeats!r} of "
                            f"dtype {reps.dtype}.")
        reps = reps.astype(np.int64)
        if np.ndim(reps) == 0 or reps.size == 1:
            r = int(reps.reshape(-1)[0]) if reps.size else 0
            moved = lnp.moveaxis(a, axis, -1)
            shape = _shape(moved)
            out = st.broadcast_in_dim(moved, shape + (r,), tuple(range(len(shape))))
            out = lnp.reshape(out, shape[:-1] + (shape[-1] * r,))
            out = lnp.moveaxis(out, -1, axis)
        else:
            if reps.shape != (n,):
                raise ValueError(f"jnp.repeat: repeats of shape {reps.shape} do not match "
                                 f"axis {axis} of length {n}")
            out = _take_axis(a, np.repeat(np.arange(n), reps), axis)
        if total_repeat_length is not None:
            length = _shape(out)[axis]
            if length >= total_repeat_length:
                out = sl.slice_in_dim(out, 0, total_repeat_length, axis=axis)
            else:
                last = _take_axis(out if length else a, [length - 1 if length else n - 1],
                                  axis)
                out = lnp.concatenate([out, repeat(last, total_repeat_length - length,
                                                   axis)], axis)
        return ensure_array(out)
    if total_repeat_length is None:
        raise errors.ConcretizationTypeError(
            repeats, "The error arose in jnp.repeat: traced repeats need the static "
            "total_repeat_length argument, which fixes the output size.\n")
    reps = lnp.broadcast_to(lnp.asarray(repeats, np.int32), (n,))
    ends = red.cumsum(reps)
    positions = lnp.arange(total_repeat_length, dtype=np.int32)
    idx = red.sum(lnp.asarray(positions[:, None] >= ends[None, :], np.int32), axis=1)
    idx = lnp.clip(idx, 0, n - 1)
    index = [slice(None)] * _ndim(a)
    index[axis] = idx
    return a[tuple(index)]


# --- grids ----------------------------------------------------------------------------------

def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors ('xy' or 'ij' indexing)."""
    check_arraylike("meshgrid", *xi)
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing!r}")
    args = [lnp.asarray(x) for x in xi]
    if builtins.any(_ndim(x) != 1 for x in args):
        raise ValueError("Arguments to jax.numpy.meshgrid must be 1D, got shapes "
                         f"{[_shape(x) for x in args]}")
    shape = tuple(_shape(x)[0] for x in args)
    out = []
    for i, x in enumerate(args):
        s = [1] * len(args)
        s[i] = shape[i]
        r = lnp.reshape(x, tuple(s))
        out.append(r if sparse else lnp.broadcast_to(r, shape))
    if indexing == "xy" and len(args) >= 2:   # the first two axes are (y, x)
        out = [lnp.swapaxes(o, 0, 1) for o in out]
    return out


def indices(dimensions, dtype=None, sparse=False):
    dimensions = tuple(operator.index(d) for d in dimensions)
    dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_int_dtype())
    out = []
    for i, d in enumerate(dimensions):
        shape = [1] * len(dimensions)
        shape[i] = d
        r = lnp.reshape(lnp.arange(d, dtype=dtype), tuple(shape))
        out.append(r if sparse else lnp.broadcast_to(r, dimensions))
    return tuple(out) if sparse else (lnp.stack(out) if out else
                                      lnp.zeros((0,), dtype))


def ix_(*args):
    """Open meshes from 1-D sequences, for indexing the cross product."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = lnp.asarray(a)
        if _ndim(a) != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if _dtype(a) == np.bool_:
            a = lnp.asarray(np.nonzero(concrete(a, "ix_", "args"))[0])
        shape = [1] * n
        shape[i] = _shape(a)[0]
        out.append(lnp.reshape(a, tuple(shape)))
    return tuple(out)


# --- append, insert, delete, resize ---------------------------------------------------------

def append(arr, values, axis=None):
    if axis is None:
        return lnp.concatenate([lnp.ravel(arr), lnp.ravel(values)], 0)
    return lnp.concatenate([lnp.asarray(arr), lnp.asarray(values)], axis)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """A copy of arr without the entries at obj (an int, slice, integer or boolean array)
    along axis. obj must be concrete, unless it is integer and assume_unique_indices
    promises no repeats: then it may be traced (negative indices count from the end)."""
    check_arraylike("delete", arr)
    a = lnp.asarray(arr)
    a, axis = lnp.axis_or_flattened(a, axis)
    n = _shape(a)[axis]
    before = (slice(None),) * axis
    try:
        obj = canonicalize_axis(operator.index(obj), n)
    except TypeError:
        pass
    else:
        return lnp.concatenate([a[before + (slice(0, obj),)], a[before + (slice(obj + 1, None),)]],
                               axis)
    if isinstance(obj, slice):
        obj, assume_unique_indices = np.arange(n)[obj], True
    a, obj = ensure_arraylike("delete", a, obj)
    if dtypes.is_int(_dtype(lnp.asarray(obj))) and assume_unique_indices:
        # the kept positions i: each skips as many deleted positions as lie at or before it
        gone = lnp.ravel(lnp.asarray(obj))
        gone = sorting.sort(lnp.clip(lnp.where(gone < 0, gone + n, gone), 0, n))
        gone = gone - lnp.arange(_shape(gone)[0], dtype=_dtype(gone))
        i = lnp.arange(n - _shape(gone)[0], dtype=_dtype(gone))
        i = i + red.sum(i[None, :] >= gone[:, None], 0, dtype=_dtype(i))
        return a[before + (i,)]
    idx = concrete(obj, "delete", "obj")
    if idx.dtype == np.bool_:
        if idx.shape != (n,):
            raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                             "one-dimensional with length matching specified axis.")
        keep = ~idx
    elif idx.dtype.kind in "iu" or not idx.size:
        keep = np.ones(n, bool)
        keep[idx.astype(np.int64)] = False
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={idx.dtype}; must be integer "
                         "or bool.")
    return a[before + (keep,)]


def insert(arr, obj, values, axis=None):
    """A copy of arr with values inserted before the indices obj (an int, slice or 1-D
    integer array, which may be traced) along axis, as JAX computes it: the new positions
    of the values are scattered into an array of the new size, arr fills the rest."""
    check_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    a = lnp.asarray(arr)
    a, axis = lnp.axis_or_flattened(a, axis)
    n_input = _shape(a)[axis]
    indices = lnp.arange(*obj.indices(n_input)) if isinstance(obj, slice) else lnp.asarray(obj)
    if _ndim(indices) > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         f"scalar; got {obj}")
    if not dtypes.is_int(_dtype(indices)):
        if lnp.size(indices) == 0 and not isinstance(obj, (Array, Tracer)):
            indices = lnp.asarray(indices, dtypes.default_int_dtype())
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    values = lnp.array(values, ndmin=_ndim(a), dtype=_dtype(a), copy=False)
    if lnp.size(indices) == 1:
        index = lnp.ravel(indices)[0]
        if _ndim(indices) == 0:
            values = lnp.moveaxis(values, 0, axis)
        indices = lnp.full(_shape(values)[axis], index)
    n_insert = np.broadcast_shapes(_shape(indices), (_shape(values)[axis],))[0]
    out_shape = list(_shape(a))
    out_shape[axis] += n_insert
    indices = lnp.clip(lnp.where(indices < 0, indices + n_input, indices), 0, n_input)
    values_at = indices.at[sorting.argsort(indices)].add(
        lnp.arange(n_insert, dtype=_dtype(indices)))
    arr_mask = lnp.ones(n_input + n_insert, bool).at[values_at].set(False)
    arr_at = indexing.nonzero(arr_mask, size=n_input)[0]
    before = (slice(None),) * axis
    out = lnp.zeros_like(a, shape=tuple(out_shape))
    return out.at[before + (values_at,)].set(values).at[before + (arr_at,)].set(a)


def resize(a, new_shape):
    """An array of new_shape filled with a's flattened elements, cycled."""
    a = lnp.ravel(lnp.asarray(a))
    new_shape = canonicalize_shape(new_shape, "jnp.resize", negative_error=ValueError)
    size = int(np.prod(new_shape))
    n = _shape(a)[0]
    if n == 0 or size == 0:
        return lnp.zeros(new_shape, _dtype(a))
    return lnp.reshape(a[np.arange(size) % n], new_shape)


# --- selecting ------------------------------------------------------------------------------

def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """Slices of a where condition is true; a traced condition needs `size`."""
    check_arraylike("compress", condition, a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    a = lnp.asarray(a)
    a, axis = lnp.axis_or_flattened(a, axis)
    cond = lnp.ravel(lnp.asarray(condition, np.bool_))
    n = _shape(a)[axis]
    if _shape(cond)[0] > n:
        raise ValueError("jnp.compress: condition is longer than the array axis")
    if size is None and not (isinstance(cond, Tracer) and cond.to_concrete_value() is None):
        idx = np.nonzero(concrete(cond, "compress", "condition"))[0]
        return _take_axis(a, idx, axis)
    (idx,) = indexing.nonzero(cond, size=size, fill_value=n)
    moved = lnp.moveaxis(a, axis, 0)
    fill = lnp.full((1,) + _shape(moved)[1:], lnp.asarray(fill_value, _dtype(a)))
    padded = lnp.concatenate([moved, fill], 0)
    return lnp.moveaxis(padded[lnp.clip(idx, 0, n)], 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    return compress(lnp.ravel(condition), lnp.ravel(arr), size=size, fill_value=fill_value)


def choose(a, choices, out=None, mode="raise"):
    """Picks, per element of the index array a, the matching element of choices[a]."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    check_arraylike("choose", a, *choices)
    a = lnp.asarray(a)
    if not dtypes.is_int(_dtype(a)):
        raise TypeError(f"jnp.choose: index array must be integer, got {_dtype(a)}")
    n = len(choices)
    if mode == "raise":
        value = a.to_concrete_value() if isinstance(a, Tracer) else \
            concrete(a, "choose", "a")
        if value is None:
            raise errors.ConcretizationTypeError(
                a, "The error arose in jnp.choose with mode='raise', which checks the "
                "index values; use mode='wrap' or mode='clip' under jit.\n")
        if ((value < 0) | (value >= n)).any():
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = uf.remainder(a, np.asarray(n, _dtype(a)))
    elif mode == "clip":
        a = lnp.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arrays = lnp.broadcast_arrays(a, *promote_dtypes(*[lnp.asarray(c) for c in choices]))
    return ensure_array(ew.select_n(convert(arrays[0], np.int32), *arrays[1:]))


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i] (a function or a constant) where condlist[i] holds; an extra trailing
    function or value applies where no condition holds. As in JAX, the functions are
    static arguments of one jitted computation, so a repeated call traces them once."""
    check_arraylike("piecewise", x)
    x = lnp.asarray(x)
    if isinstance(condlist, (Array, Tracer, np.ndarray)) and np.ndim(condlist) == _ndim(x):
        condlist = [condlist]
    conds = [lnp.asarray(c, np.bool_) for c in condlist]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are "
                         f"expected, got {len(funclist)}")
    if len(funclist) == n:
        funclist = [0] + list(funclist)
    else:
        funclist = [funclist[-1]] + list(funclist[:-1])
    consts = {i: f for i, f in enumerate(funclist) if not callable(f)}
    funcs = frozenset((i, f) for i, f in enumerate(funclist) if callable(f))
    return _piecewise(x, conds, consts, funcs, *args, **kw)


@functools.partial(jit, static_argnames=("funcs",))
def _piecewise(x, conds, consts, funcs, *args, **kw):
    # the index of the last true condition decides (later conditions win, as in NumPy)
    which = lnp.zeros(_shape(x), np.int32)
    for i, c in enumerate(conds):
        which = lnp.where(c, np.int32(i + 1), which)
    pieces = {**consts, **{i: f(x, *args, **kw) for i, f in funcs}}
    outs = [lnp.broadcast_to(lnp.asarray(pieces[i], _dtype(x)), _shape(x))
            for i in range(len(pieces))]
    return ew.select_n(which, *outs)


def place(arr, mask, vals, *, inplace=True):
    """A copy of arr with its entries where mask is true replaced by vals, cycled; mask
    may be traced. JAX arrays are immutable: pass inplace=False."""
    check_arraylike("place", arr, mask, vals)
    data, mask, vals = lnp.asarray(arr), lnp.asarray(mask), lnp.ravel(lnp.asarray(vals))
    if inplace:
        raise ValueError("jax.numpy.place cannot modify arrays in-place, because JAX arrays "
                         "are immutable. Pass inplace=False to instead return an updated "
                         "array.")
    if lnp.size(data) != lnp.size(mask):
        raise ValueError("place: arr and mask must be the same size")
    if not lnp.size(vals):
        raise ValueError("Cannot place values from an empty array")
    if not lnp.size(data):
        return data
    size = lnp.size(mask)
    (where,) = indexing.nonzero(lnp.ravel(mask), size=size, fill_value=size)
    cycled = vals[np.arange(size) % lnp.size(vals)]
    return lnp.reshape(lnp.ravel(data).at[where].set(cycled, mode="drop"), _shape(data))


def put(a, ind, v, mode=None, *, inplace=True):
    """A copy of a with the flat entries ind replaced by v (cycled)."""
    if inplace:
        raise ValueError("jnp.put cannot modify arrays in place (JAX arrays are "
                         "immutable): call it with inplace=False; it returns the new array.")
    a = lnp.asarray(a)
    flat = lnp.ravel(a)
    ind = lnp.ravel(lnp.asarray(ind))
    v = lnp.ravel(lnp.asarray(v, _dtype(a)))
    count = _shape(ind)[0]
    if not (count and _shape(v)[0] and _shape(flat)[0]):
        return a   # nothing to put, or nowhere to put it (JAX's)
    if _shape(v)[0] != count:
        v = v[np.arange(count) % _shape(v)[0]]
    size = _shape(flat)[0]
    if mode in (None, "fill", "raise"):
        ind = lnp.where(ind < 0, ind + size, ind)
    elif mode == "wrap":
        ind = uf.remainder(ind, np.asarray(size, _dtype(ind)))
    elif mode == "clip":
        ind = lnp.clip(ind, 0, size - 1)
    else:
        raise ValueError(f"jnp.put: unknown mode {mode!r}")
    return lnp.reshape(flat.at[ind].set(v, mode="drop" if mode in (None, "fill") else None),
                       _shape(a))


# --- products ------------------------------------------------------------------------------

def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
              out_sharding=None):
    """Sum of products over the given axes of a and b (an int N: a's last N with b's
    first N). out_sharding: how the result is split."""
    a, b, dtype, weak = lnp.product_args("tensordot", a, b, preferred_element_type)
    na, nb = _ndim(a), _ndim(b)
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if n < 0 or n > builtins.min(na, nb):
            raise TypeError(f"Number of tensordot axes (axes {n}) exceeds input ranks "
                            f"({_shape(a)} and {_shape(b)})")
        ca, cb = tuple(range(na - n, na)), tuple(range(n))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax_a, ax_b = axes
        if isinstance(ax_a, (int, np.integer)) and isinstance(ax_b, (int, np.integer)):
            ax_a, ax_b = (ax_a,), (ax_b,)
        elif not (isinstance(ax_a, (tuple, list)) and isinstance(ax_b, (tuple, list))):
            raise TypeError("tensordot requires both axes lists to be either ints, tuples or "
                            f"lists, got {ax_a} and {ax_b}")
        if len(ax_a) != len(ax_b):
            raise TypeError("tensordot requires axes lists to have equal length, got "
                            f"{ax_a} and {ax_b}.")
        ca, cb = canonicalize_axes(ax_a, na), canonicalize_axes(ax_b, nb)
    else:
        raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair "
                        f"of lists/tuples of ints, got {axes!r}.")
    for i, j in zip(ca, cb):
        if _shape(a)[i] != _shape(b)[j]:
            raise TypeError(f"tensordot requires contracted dimensions to match, got shapes "
                            f"{_shape(a)} and {_shape(b)} with axes {(ca, cb)}")
    out = ldot.dot_general(a, b, ((ca, cb), ((), ())), precision, dtype, out_sharding)
    return ensure_array(convert(out, dtype, weak))


def kron(a, b):
    """Kronecker product: blocks a[i, j] * b."""
    check_arraylike("kron", a, b)
    a, b = promote_dtypes(lnp.asarray(a), lnp.asarray(b))
    nd = builtins.max(_ndim(a), _ndim(b))
    a = lnp.reshape(a, (1,) * (nd - _ndim(a)) + _shape(a))
    b = lnp.reshape(b, (1,) * (nd - _ndim(b)) + _shape(b))
    a_exp = lnp.reshape(a, tuple(d for s in _shape(a) for d in (s, 1)))
    b_exp = lnp.reshape(b, tuple(d for s in _shape(b) for d in (1, s)))
    out = a_exp * b_exp
    return lnp.reshape(out, tuple(x * y for x, y in zip(_shape(a), _shape(b))))


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) over `axis`, broadcasting the other axes."""
    x1, x2, dtype, weak = lnp.product_args("vecdot", x1, x2, preferred_element_type)
    shape1, shape2 = np.shape(x1), np.shape(x2)
    if shape1[axis] != shape2[axis]:   # the contracted axis never broadcasts
        raise ValueError(f"axes must match; got shapes {shape1} and {shape2} with {axis=}")
    # `axis` names each operand's own axis (as in JAX and NumPy); the others broadcast
    x1, x2 = lnp.moveaxis(uf.conj(x1), axis, -1), lnp.moveaxis(x2, axis, -1)
    x1, x2 = lnp.broadcast_arrays(x1, x2)
    n = _ndim(x1)
    batch = tuple(range(n - 1))
    out = ldot.dot_general(x1, x2, (((n - 1,), (n - 1,)), (batch, batch)), precision, dtype)
    return ensure_array(convert(out, dtype, weak))


def matvec(x1, x2, /):
    """Matrix-vector products with broadcasting batch dimensions."""
    return lnp.matmul(x1, lnp.expand_dims(x2, -1))[..., 0]


def vecmat(x1, x2, /):
    """Vector-matrix products conj(x1) @ x2 with broadcasting batch dimensions."""
    return lnp.matmul(lnp.expand_dims(uf.conj(x1), -2), x2)[..., 0, :]


def block(arrays):
    """Assembles an array from nested lists of blocks (innermost lists join the last
    axis)."""
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else \
            (1 if isinstance(x, list) else 0)
    if isinstance(arrays, tuple):
        raise TypeError("jnp.block takes nested lists, not tuples")
    d = depth(arrays)
    leaves_ndim = []

    def collect(x):
        if isinstance(x, list):
            for y in x:
                collect(y)
        else:
            leaves_ndim.append(np.ndim(x) if not hasattr(x, "aval") else _ndim(x))
    collect(arrays)
    nd = builtins.max([d] + leaves_ndim)

    def build(x, level):
        if not isinstance(x, list):
            x = lnp.asarray(x)
            return lnp.reshape(x, (1,) * (nd - _ndim(x)) + _shape(x))
        if not x:
            raise ValueError("jnp.block: lists cannot be empty")
        return lnp.concatenate([build(y, level + 1) for y in x], nd - d + level)
    return build(arrays, 0)


def unstack(x, /, *, axis=0):
    if extended_dtype(x) is None:   # typed keys split and squeeze as their data does
        check_arraylike("unstack", x)
    x = lnp.asarray(x)
    if _ndim(x) == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array "
                         "was passed.")
    axis = canonicalize_axis(axis, _ndim(x))
    if _shape(x)[axis] == 0:   # split cannot make zero sections; there is nothing to unstack
        return ()
    return tuple(lnp.squeeze(s, axis) for s in lnp.split(x, _shape(x)[axis], axis))


def vander(x, N=None, increasing=False):
    check_arraylike("vander", x)
    x = lnp.asarray(x)
    if _ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array")
    n = _shape(x)[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    (x,) = promote_dtypes_numeric(x)
    return uf.power(x[:, None], lnp.asarray(powers, _dtype(x)))


def trim_zeros(filt, trim="fb", axis=None):
    """filt without its leading ('f') and/or trailing ('b') all-zero slices along `axis`
    (None: every axis). filt must be concrete: the result's shape depends on its
    values."""
    check_arraylike("trim_zeros", filt)
    values = concrete(filt, "trim_zeros", "filt")
    axes = set(canonicalize_axes(tuple(range(values.ndim)) if axis is None else axis,
                                 values.ndim))
    front, back = "f" in trim.lower(), "b" in trim.lower()

    def kept(ax):
        if ax not in axes:
            return slice(None)
        nonzero = np.flatnonzero(values.any(axis=tuple(i for i in range(values.ndim)
                                                       if i != ax)))
        if not len(nonzero):
            return slice(0, 0)
        return slice(nonzero[0] if front else None, nonzero[-1] + 1 if back else None)
    return lnp.asarray(filt)[tuple(kept(ax) for ax in range(values.ndim))]
