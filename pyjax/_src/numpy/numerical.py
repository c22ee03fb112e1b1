"""Numerical jax.numpy functions: differences and integrals (diff, gradient,
trapezoid, unwrap, interp), statistics (cov, corrcoef, histograms, bincount, digitize),
comparisons (isclose, array_equal), nan_to_num, i0, window functions, bit packing and
small ufunc-like helpers. Shapes are static: bincount and histograms take `length`/bins
that fix the output size. Imports lax, the other jnp modules and dtypes."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import sorting as lax_sort
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy.lax_numpy import ndim as _ndim, shape as _shape
from pyjax._src.numpy import array_manipulation as more
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import sorting
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import (check_arraylike, compare_keys, convert, ensure_array,
                                   ensure_arraylike, extended_dtype, promote_dtypes,
                                   promote_dtypes_inexact)
from pyjax._src.util import canonicalize_axis, renamed
from pyjax._src.lax.sharding_constraint import takes_out_sharding


def _dtype(x):
    return get_aval(x).dtype


def _slice_axis(x, axis, start, stop):
    index = [slice(None)] * _ndim(x)
    index[axis] = slice(start, stop)
    return x[tuple(index)]


# --- differences and integrals ------------------------------------------------------------

def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference along axis (bool arrays: not_equal)."""
    check_arraylike("diff", a)
    a = lnp.asarray(a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return a
    axis = canonicalize_axis(axis, _ndim(a))

    def edge(e):
        e = lnp.asarray(e)
        if _ndim(e) == 0:
            shape = list(_shape(a))
            shape[axis] = 1
            e = lnp.broadcast_to(e, tuple(shape))
        return e
    parts = ([edge(prepend)] if prepend is not None else []) + [a] + \
        ([edge(append)] if append is not None else [])
    if len(parts) > 1:
        a = lnp.concatenate(parts, axis)
    for _ in range(n):
        hi, lo = _slice_axis(a, axis, 1, None), _slice_axis(a, axis, None, -1)
        a = uf.not_equal(hi, lo) if _dtype(a) == np.bool_ else uf.subtract(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with optional values before and after."""
    check_arraylike("ediff1d", ary)
    flat = lnp.ravel(ary)
    out = flat[1:] - flat[:-1]
    parts = [lnp.ravel(lnp.asarray(to_begin, _dtype(out)))] if to_begin is not None else []
    parts.append(out)
    if to_end is not None:
        parts.append(lnp.ravel(lnp.asarray(to_end, _dtype(out))))
    return lnp.concatenate(parts) if len(parts) > 1 else out


def gradient(f, *varargs, axis=None, edge_order=None):
    """Central differences inside, one-sided differences at the ends (edge_order 1);
    spacing per axis is a scalar or a coordinate array."""
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                                  "supported.")
    (f,) = promote_dtypes_inexact(lnp.asarray(f))
    nd = _ndim(f)
    axes = tuple(range(nd)) if axis is None else \
        tuple(canonicalize_axis(a, nd) for a in ((axis,) if np.ndim(axis) == 0 else axis))
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(f"jnp.gradient: expected 0, 1 or {len(axes)} spacing arguments, got "
                        f"{len(varargs)}")
    outs = []
    for ax, h in zip(axes, spacings):
        n = _shape(f)[ax]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        hi, lo = _slice_axis(f, ax, 2, None), _slice_axis(f, ax, None, -2)
        first = _slice_axis(f, ax, 1, 2) - _slice_axis(f, ax, 0, 1)
        last = _slice_axis(f, ax, -1, None) - _slice_axis(f, ax, -2, -1)
        if np.ndim(h) == 0:
            inner = (hi - lo) / (2 * lnp.asarray(h, _dtype(f)))
            first, last = first / h, last / h
        else:
            x = lnp.asarray(h, _dtype(f))
            if _shape(x) != (n,):
                raise ValueError("jnp.gradient: coordinate arrays must match the axis length")
            dx = x[1:] - x[:-1]
            shape = [1] * nd
            shape[ax] = n - 2
            h1 = lnp.reshape(dx[:-1], shape)
            h2 = lnp.reshape(dx[1:], shape)
            mid = _slice_axis(f, ax, 1, -1)
            # second-order accurate for uneven spacing
            inner = (h1 ** 2 * hi - h2 ** 2 * lo + (h2 ** 2 - h1 ** 2) * mid) / \
                (h1 * h2 * (h1 + h2))
            first, last = first / dx[0], last / dx[-1]
        outs.append(lnp.concatenate([first, inner, last], ax) if n > 2 else
                    lnp.concatenate([first, last], ax))
    return outs[0] if len(outs) == 1 else outs


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of y along axis by the trapezoidal rule. The spacing is diff(x), else dx:
    a scalar, or an array laid out like y (leading axes may be missing) whose size along
    axis is 1 or one less than y's."""
    check_arraylike("trapezoid", y)
    if x is None:
        (y,) = promote_dtypes_inexact(lnp.asarray(y))
        spacing = lnp.asarray(dx)
        if _ndim(spacing) > 0:
            spacing = lnp.expand_dims(spacing, tuple(range(_ndim(y) - _ndim(spacing))))
            spacing = lnp.moveaxis(spacing, axis, -1)
    else:
        y, x = promote_dtypes_inexact(lnp.asarray(y), lnp.asarray(x))
        spacing = diff(x) if _ndim(x) == 1 else lnp.moveaxis(diff(x, axis=axis), axis, -1)
    y = lnp.moveaxis(y, axis, -1)
    return 0.5 * red.sum(spacing * (y[..., 1:] + y[..., :-1]), axis=-1)


def unwrap(p, discont=None, axis=-1, period=2 * math.pi):
    """p with jumps larger than discont (default period/2) along axis corrected by
    multiples of period. p and period are promoted together, so integer inputs with an
    integer period stay integers (JAX's)."""
    check_arraylike("unwrap", p)
    p, period = promote_dtypes(lnp.asarray(p), period)
    if dtypes.is_complex(_dtype(p)):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    axis = canonicalize_axis(axis, _ndim(p))
    if _shape(p)[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    half = lnp.asarray(period // 2 if dtypes.is_int(_dtype(p)) else period / 2)
    dd = diff(p, axis=axis)
    ddmod = uf.remainder(dd + half, period) - half
    # a jump of exactly +period/2 stays positive (NumPy's boundary rule)
    ddmod = lnp.where((ddmod == -half) & (dd > 0), half, ddmod)
    correction = lnp.where(uf.abs(dd) < discont, 0, ddmod - dd)
    cumulative = red.cumsum(correction, axis=axis)
    first = _slice_axis(p, axis, 0, 1)
    rest = _slice_axis(p, axis, 1, None) + cumulative
    return lnp.concatenate([first, rest], axis)


def _count_le(edges, x, strict=False):
    """For each x, how many edges are <= x (< x when strict): searchsorted 'right'
    ('left') on sorted edges, by comparison and sum."""
    cmp = edges[None, :] < x[..., None] if strict else edges[None, :] <= x[..., None]
    return red.sum(lnp.asarray(cmp, np.int32), axis=-1)


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation of (xp, fp) at x; xp increasing.
    Outside xp the ends' values (or left/right) hold, or the end segments extend with
    left/right='extrapolate'; with a period, x and xp wrap around (left/right unused)."""
    check_arraylike("interp", x, xp, fp)
    if _shape(xp) != _shape(fp) or _ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = promote_dtypes_inexact(lnp.asarray(x), lnp.asarray(xp))
    (fp,) = promote_dtypes_inexact(lnp.asarray(fp))
    extrapolate = []
    for name, end in (("left", left), ("right", right)):
        if isinstance(end, str) and end != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', "
                             f"but got: {end!r}")
        extrapolate.append(isinstance(end, str))
    if dtypes.is_complex(_dtype(x)):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = uf.abs(period)
        x, xp = uf.remainder(x, period), uf.remainder(xp, period)
        xp, fp = lax_sort.sort_key_val(xp, fp, 0)
        xp = lnp.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = lnp.concatenate([fp[-1:], fp, fp[:1]])
    i = lnp.clip(sorting.searchsorted(xp, x, side="right"), 1, _shape(xp)[0] - 1)
    df = fp[i] - fp[i - 1]
    dx = xp[i] - xp[i - 1]
    delta = x - xp[i - 1]
    flat = uf.abs(dx) <= np.spacing(np.finfo(_dtype(xp)).eps)   # no NaN gradients there
    f = lnp.where(flat, fp[i - 1], fp[i - 1] + (delta / lnp.where(flat, 1, dx)) * df)
    if period is None:
        if not extrapolate[0]:
            f = lnp.where(x < xp[0], fp[0] if left is None else left, f)
        if not extrapolate[1]:
            f = lnp.where(x > xp[-1], fp[-1] if right is None else right, f)
    return f


# --- statistics -------------------------------------------------------------------------

def _cov_weights(name, weights, n):
    weights = lnp.asarray(weights)
    if _ndim(weights) > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if _shape(weights)[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    return uf.abs(weights)   # NumPy refuses negative weights; JAX takes their size


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """Covariance matrix of the variables (rows, or columns when rowvar is False),
    squeezed as in NumPy 2.2: one variable gives a scalar."""
    if y is not None:
        m, y = promote_dtypes_inexact(*ensure_arraylike("cov", m, y))
        if _ndim(y) > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = promote_dtypes_inexact(ensure_arraylike("cov", m))
    if _ndim(m) > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not dtypes.is_inexact(dtypes.check_user_dtype(dtype, "cov")):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got "
                         f"dtype={np.dtype(dtype)}")
    x = lnp.atleast_2d(m)
    if not rowvar and _ndim(m) != 1:
        x = x.T
    if _shape(x)[0] == 0:
        return lnp.reshape(lnp.array([]), (0, 0))
    if y is not None:
        y = lnp.atleast_2d(y)
        if not rowvar and _shape(y)[0] != 1:
            y = y.T
        x = lnp.concatenate([x, y], 0)
    rows, n = _shape(x)
    if n == 0:
        return lnp.full(() if rows == 1 else (rows, rows), np.nan, _dtype(x))
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        if not dtypes.is_int(_dtype(lnp.asarray(fweights))):
            raise TypeError("fweights must be integer.")
        w = _cov_weights("fweights", fweights, n)
    if aweights is not None:
        aweights = _cov_weights("aweights", aweights, n)
        w = aweights if w is None else w * aweights
    if dtype is not None:
        x = lnp.asarray(x, dtype)
        w = None if w is None else lnp.asarray(w, dtype)
    avg, w_sum = red.average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = n - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * red.sum(w * aweights) / w_sum
    centered = x - avg[:, None]
    weighted = centered if w is None else centered * w
    return lnp.squeeze(uf.true_divide(lnp.dot(centered, uf.conj(weighted).T), fact))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients (real and imaginary parts clipped to [-1, 1])."""
    check_arraylike("corrcoef", x)
    if dtype is not None and not dtypes.is_inexact(dtypes.check_user_dtype(dtype,
                                                                            "corrcoef")):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got "
                         f"dtype={np.dtype(dtype)}")
    c = cov(x, y, rowvar, dtype=dtype)
    if _ndim(c) == 0:
        return uf.divide(c, c)   # nan for nan, inf or 0 variance, else 1
    stddev = lnp.asarray(uf.sqrt(uf.real(more.diagonal(c))), _dtype(c))
    c = c / stddev[:, None] / stddev[None, :]
    real = lnp.clip(uf.real(c), -1, 1)
    if not dtypes.is_complex(_dtype(c)):
        return real
    return ew.complex(real, lnp.clip(uf.imag(c), -1, 1))


@takes_out_sharding
def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each non-negative integer in x. The output length is
    max(x) + 1 (at least minlength), which must be known statically: under jit pass
    `length`. Values >= length are dropped; negative values count as 0, as in JAX."""
    check_arraylike("bincount", x)
    x = lnp.asarray(x)
    if not dtypes.is_int(_dtype(x)) and _dtype(x) != np.bool_:
        raise TypeError(f"x argument to bincount must have an integer type; got {_dtype(x)}")
    if _ndim(x) != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(minlength)
    if length is None:
        values = more.concrete(x, "bincount", "x")
        length = builtins.max(minlength, int(values.max()) + 1 if values.size else 0)
    else:
        length = operator.index(length)
    w = lnp.ones(_shape(x), dtypes.default_int_dtype()) if weights is None else \
        lnp.asarray(weights)
    if _dtype(w) == np.bool_:
        w = lnp.asarray(w, dtypes.default_int_dtype())
    idx = lnp.clip(x, 0, None) if dtypes.is_int(_dtype(x)) else lnp.asarray(x, np.int32)
    return lnp.zeros((length,), _dtype(w)).at[idx].add(w, mode="drop")


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """Edges of the histogram bins (bins + 1 values)."""
    check_arraylike("histogram_bin_edges", a)
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` are not implemented.")
    (a,) = promote_dtypes_inexact(lnp.asarray(a))
    if np.ndim(bins) == 1 or (hasattr(bins, "aval") and _ndim(bins) == 1):
        return lnp.asarray(bins, _dtype(a))
    bins = operator.index(bins)
    if bins < 1:
        raise ValueError(f"`bins` must be a positive integer (a bin count) or a 1-D "
                         f"sequence of edges, got {bins}.")
    if range is None:
        lo, hi = red.min(a), red.max(a)
    else:
        lo, hi = lnp.asarray(range[0], _dtype(a)), lnp.asarray(range[1], _dtype(a))
    same = lo == hi
    lo = lnp.where(same, lo - 0.5, lo)
    hi = lnp.where(same, hi + 0.5, hi)
    return lnp.linspace(lo, hi, bins + 1, dtype=_dtype(a))


def _bin_index(values, edges):
    """Bin of each value (-1 / nbins outside), the last bin closed on the right."""
    nbins = _shape(edges)[0] - 1
    idx = _count_le(edges, values) - 1
    return lnp.where(values == edges[-1], nbins - 1, idx)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(counts, bin_edges) of a flattened; bins is a count or the edges."""
    edges = histogram_bin_edges(a, bins, range, weights)
    a = lnp.ravel(lnp.asarray(a, _dtype(edges)))
    nbins = _shape(edges)[0] - 1
    idx = _bin_index(a, edges)
    inside = (idx >= 0) & (idx < nbins)
    w = lnp.ones(_shape(a), _dtype(edges)) if weights is None else \
        lnp.ravel(lnp.asarray(weights))
    w = lnp.where(inside, w, lnp.zeros((), _dtype(w)))
    counts = lnp.zeros((nbins,), _dtype(w)).at[lnp.clip(idx, 0, nbins - 1)].add(w)
    if density:
        widths = edges[1:] - edges[:-1]
        counts = counts / widths / red.sum(counts)
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """Multidimensional histogram of N points of D coordinates: (counts, [edges])."""
    check_arraylike("histogramdd", sample)
    sample = lnp.asarray(sample)
    if _ndim(sample) == 1:
        sample = sample[:, None]
    n_dim = _shape(sample)[1]
    # a list is one entry per dimension (np.ndim of edges of unequal lengths would fail)
    if not isinstance(bins, (list, tuple)) and np.ndim(bins) == 0:
        bins = [bins] * n_dim
    if len(bins) != n_dim:
        raise ValueError("The dimension of bins must be equal to the dimension of the "
                         "sample x.")
    ranges = [None] * n_dim if range is None else list(range)
    edges = [histogram_bin_edges(sample[:, d], bins[d], ranges[d]) for d in
             builtins.range(n_dim)]
    nbins = [_shape(e)[0] - 1 for e in edges]
    flat = lnp.zeros((_shape(sample)[0],), np.int32)
    inside = lnp.ones((_shape(sample)[0],), np.bool_)
    for d, e in enumerate(edges):
        idx = _bin_index(lnp.asarray(sample[:, d], _dtype(e)), e)
        inside = inside & (idx >= 0) & (idx < nbins[d])
        flat = flat * nbins[d] + lnp.clip(idx, 0, nbins[d] - 1)
    # as in JAX: unweighted counts are integers, weights are made inexact
    w = lnp.ones((_shape(sample)[0],), dtypes.default_int_dtype()) if weights is None else \
        promote_dtypes_inexact(lnp.asarray(weights))[0]
    w = lnp.where(inside, w, lnp.zeros((), _dtype(w)))
    total = int(np.prod(nbins))
    counts = lnp.reshape(lnp.zeros((total,), _dtype(w)).at[flat].add(w), tuple(nbins))
    if density:
        counts = counts / red.sum(counts)
        for d, e in enumerate(edges):
            shape = [1] * n_dim
            shape[d] = nbins[d]
            counts = counts / lnp.reshape(e[1:] - e[:-1], tuple(shape))
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """Two-dimensional histogram: (counts, x_edges, y_edges)."""
    check_arraylike("histogram2d", x, y)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):   # one array of edges for both coordinates
        bins = [bins, bins]
    sample = lnp.stack(promote_dtypes(lnp.ravel(x), lnp.ravel(y)), axis=1)
    counts, edges = histogramdd(sample, bins, range, weights, density)
    return counts, edges[0], edges[1]


# --- comparisons ----------------------------------------------------------------------------

def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b| elementwise, with infinities equal to themselves
    (typed keys: equality)."""
    if extended_dtype(a) is not None or extended_dtype(b) is not None:
        return compare_keys("isclose", a, b, operator.eq)
    check_arraylike("isclose", a, b)
    a, b = promote_dtypes(lnp.asarray(a), lnp.asarray(b))
    if not dtypes.is_inexact(_dtype(a)):
        (a, b) = promote_dtypes_inexact(a, b)
    real = _dtype(uf.abs(a))
    out = uf.abs(a - b) <= lnp.asarray(atol, real) + lnp.asarray(rtol, real) * uf.abs(b)
    both_inf = uf.isinf(a) | uf.isinf(b)
    out = lnp.where(both_inf, a == b, out)
    if equal_nan:
        out = out | (uf.isnan(a) & uf.isnan(b))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return red.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether the arrays have one shape and equal elements (False for other shapes)."""
    try:
        a1, a2 = lnp.asarray(a1), lnp.asarray(a2)
    except TypeError:
        return False
    if _shape(a1) != _shape(a2):
        return lnp.asarray(False)
    eq = uf.equal(a1, a2)   # not ==, which is False for a key and a number
    # Either inexact makes the promoted type inexact (typed keys have no NumPy type).
    if equal_nan and any(dtypes.issubdtype(_dtype(a), np.inexact) for a in (a1, a2)):
        eq = eq | (uf.isnan(a1) & uf.isnan(a2))
    return red.all(eq)


def array_equiv(a1, a2):
    """Whether the arrays are equal after broadcasting (False when they can't)."""
    a1, a2 = lnp.asarray(a1), lnp.asarray(a2)
    try:
        lnp.broadcast_shapes(_shape(a1), _shape(a2))
    except ValueError:
        return lnp.asarray(False)
    return red.all(a1 == a2)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """x with NaN -> nan, +inf -> posinf and -inf -> neginf (default: the dtype's
    largest finite values). Typed keys hold no NaN: they come back as they are."""
    if extended_dtype(x) is not None:
        return x
    check_arraylike("nan_to_num", x)
    x = lnp.asarray(x)
    if dtypes.is_complex(_dtype(x)):
        part = lambda v: nan_to_num(v, nan=nan, posinf=posinf, neginf=neginf)  # noqa
        return ensure_array(ew.complex(part(uf.real(x)), part(uf.imag(x))))
    if not dtypes.is_inexact(_dtype(x)):
        return x
    info = dtypes.finfo(_dtype(x))
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = lnp.where(uf.isnan(x), lnp.asarray(nan, _dtype(x)), x)
    out = lnp.where(out == np.inf, lnp.asarray(posinf, _dtype(x)), out)
    return lnp.where(out == -np.inf, lnp.asarray(neginf, _dtype(x)), out)


def _isinf_signed(name, x, infinity):
    """x == infinity, never weak (as in JAX); ints, bools and typed keys are never
    infinite."""
    if extended_dtype(x) is not None:
        return lnp.zeros(x.shape, np.bool_)
    x = lnp.asarray(x)
    if dtypes.is_complex(_dtype(x)):
        raise ValueError(f"jnp.{name} is not defined for complex input")
    if not dtypes.is_inexact(_dtype(x)):
        return lnp.zeros(_shape(x), np.bool_)
    return ew.eq(x, np.array(infinity, _dtype(x)))


def isposinf(x, /, out=None):
    return _isinf_signed("isposinf", x, np.inf)


def isneginf(x, /, out=None):
    return _isinf_signed("isneginf", x, -np.inf)


def isreal(x):
    """Whether each element has no imaginary part (weak for Python scalars, as in JAX)."""
    im = uf.imag(x)
    return ensure_array(ew.eq(im, uf._zero(im)))


def iscomplex(x):
    im = uf.imag(x)
    return ensure_array(ew.ne(im, uf._zero(im)))


def fabs(x, /):
    """Absolute value of real values (as a float)."""
    (x,) = promote_dtypes_inexact(lnp.asarray(x))
    if dtypes.is_complex(_dtype(x)):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return uf.abs(x)


def modf(x, /, out=None):
    """(fractional part, integral part), both with x's sign."""
    (x,) = promote_dtypes_inexact(lnp.asarray(x))
    whole = uf.trunc(x)
    return x - whole, whole


def spacing(x, /):
    """Distance from x to the next representable value away from zero (toward +inf for
    float16, as NumPy and JAX do)."""
    (x,) = promote_dtypes_inexact(lnp.asarray(x))
    if dtypes.is_complex(_dtype(x)):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    toward = lnp.where((x < 0) & (_dtype(x) != np.float16), lnp.asarray(-np.inf, _dtype(x)),
                       lnp.asarray(np.inf, _dtype(x)))
    return uf.nextafter(x, toward) - x


def bitwise_count(x, /):
    """Number of 1 bits in |x|."""
    x = lnp.asarray(x)
    if not dtypes.is_int(_dtype(x)) and _dtype(x) != np.bool_:
        raise TypeError(f"bitwise_count requires integer inputs, got {_dtype(x)}")
    return lnp.asarray(ew.population_count(uf.abs(x) if _dtype(x).kind == "i" else
                                           lnp.asarray(x, np.uint8)
                                           if _dtype(x) == np.bool_ else x), np.uint8)


bitwise_left_shift = renamed(uf.left_shift, "bitwise_left_shift")
bitwise_right_shift = renamed(uf.right_shift, "bitwise_right_shift")


# --- special functions and windows ----------------------------------------------------------

def i0(x):
    """The modified Bessel function of the first kind, order zero (real x): the power
    series for |x| <= 15, the asymptotic series beyond."""
    check_arraylike("i0", x)
    (x,) = promote_dtypes_inexact(lnp.asarray(x))
    if dtypes.is_complex(_dtype(x)):
        raise ValueError("jnp.i0 does not support complex-valued inputs")
    ax = uf.abs(x)
    small = ax <= 15
    xs = lnp.where(small, ax, lnp.zeros((), _dtype(x)))
    q = xs * xs / 4
    term = lnp.ones_like(q)
    series = lnp.ones_like(q)
    for k in range(1, 60):
        term = term * q / (k * k)
        series = series + term
    xl = lnp.where(small, lnp.asarray(16, _dtype(x)), ax)
    coef, asym = 1.0, lnp.ones_like(xl)
    for k in range(1, 12):
        coef *= (2 * k - 1) ** 2 / (8.0 * k)
        asym = asym + coef / xl ** k
    large = uf.exp(xl) / uf.sqrt(2 * np.pi * xl) * asym
    # elementwise, so weak in, weak out (as in JAX)
    return convert(lnp.where(small, series, large), _dtype(x), get_aval(x).weak_type)


def _window(M, name):
    M = operator.index(more.concrete(M, name, "M"))
    return M, dtypes.default_float_dtype()


def _cosine_window(M, name, coeffs):
    M, dtype = _window(M, name)
    if M <= 1:
        return lnp.ones((builtins.max(M, 0),), dtype)
    n = lnp.arange(M, dtype=dtype)
    out = lnp.zeros((M,), dtype)
    for k, c in enumerate(coeffs):
        out = out + c * uf.cos(2 * np.pi * k * n / (M - 1))
    return out


def bartlett(M):
    """The triangular Bartlett window of M points."""
    M, dtype = _window(M, "bartlett")
    if M <= 1:
        return lnp.ones((builtins.max(M, 0),), dtype)
    n = lnp.arange(M, dtype=dtype)
    return 1 - uf.abs(2 * n / (M - 1) - 1)


def blackman(M):
    return _cosine_window(M, "blackman", (0.42, -0.5, 0.08))


def hamming(M):
    return _cosine_window(M, "hamming", (0.54, -0.46))


def hanning(M):
    return _cosine_window(M, "hanning", (0.5, -0.5))


def kaiser(M, beta):
    """The Kaiser window of M points with shape parameter beta."""
    M, dtype = _window(M, "kaiser")
    if M <= 1:
        return lnp.ones((builtins.max(M, 0),), dtype)
    n = lnp.arange(M, dtype=dtype)
    alpha = (M - 1) / 2.0
    beta = lnp.asarray(beta, dtype)
    return i0(beta * uf.sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)


# --- bits -----------------------------------------------------------------------------------

def packbits(a, axis=None, bitorder="big"):
    """Packs the truthiness of a's elements into uint8 bits (8 per byte, zero padded)."""
    check_arraylike("packbits", a)
    a = lnp.asarray(a)
    if not (dtypes.is_int(_dtype(a)) or _dtype(a) == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = lnp.asarray(a != 0, np.uint8)
    bits, axis = lnp.axis_or_flattened(bits, axis)
    bits = lnp.moveaxis(bits, axis, -1)
    n = _shape(bits)[-1]
    pad = (-n) % 8
    if pad:
        bits = more.pad(bits, [(0, 0)] * (_ndim(bits) - 1) + [(0, pad)])
    bits = lnp.reshape(bits, _shape(bits)[:-1] + ((n + pad) // 8, 8))
    shifts = np.arange(8, dtype=np.uint8)
    if bitorder == "big":
        shifts = shifts[::-1].copy()
    packed = red.sum(uf.left_shift(bits, lnp.asarray(shifts)), axis=-1, dtype=np.uint8)
    return lnp.moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of uint8 array a as a uint8 array of 0s and 1s."""
    check_arraylike("unpackbits", a)
    a = lnp.asarray(a)
    if _dtype(a) != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    shifts = np.arange(8, dtype=np.uint8)
    if bitorder == "big":
        shifts = shifts[::-1].copy()
    bits = uf.bitwise_and(uf.right_shift(a[..., None], lnp.asarray(shifts)), np.uint8(1))
    if axis is None:
        bits, axis = lnp.ravel(bits), 0
    else:
        axis = canonicalize_axis(axis, _ndim(a))
        bits = lnp.moveaxis(bits, -1, axis + 1)
        shape = list(_shape(a))
        shape[axis] *= 8
        bits = lnp.reshape(bits, tuple(shape))
    if count is not None:
        n = _shape(bits)[axis]
        count = operator.index(count)
        stop = count if count >= 0 else n + count
        if stop <= n:
            bits = _slice_axis(bits, axis, 0, builtins.max(stop, 0))
        else:
            widths = [(0, 0)] * _ndim(bits)
            widths[axis] = (0, stop - n)
            bits = more.pad(bits, widths)
    return bits


# --- creation -------------------------------------------------------------------------------

def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """num numbers spaced evenly on a log scale from start to stop: sign(start) times a
    logspace of |start| to stop / sign(start), as JAX computes it (for complex input too,
    with sign(z) = z / |z|)."""
    check_arraylike("geomspace", start, stop)
    num = operator.index(num)
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    else:
        dtype = dtypes.check_user_dtype(dtype, "geomspace")
    compute = dtypes.to_inexact_dtype(dtype)
    start, stop = lnp.asarray(start, compute), lnp.asarray(stop, compute)
    sign = uf.sign(start)
    out = sign * lnp.logspace(uf.log10(start / sign), uf.log10(stop / sign), num,
                              endpoint=endpoint, base=10.0, dtype=compute, axis=0)
    return lnp.asarray(lnp.moveaxis(out, 0, canonicalize_axis(axis, _ndim(out))), dtype)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-element vectors (2-element vectors give the z
    component only)."""
    check_arraylike("cross", a, b)
    a, b = promote_dtypes(lnp.asarray(a), lnp.asarray(b))
    if axis is not None:
        axisa = axisb = axisc = axis
    a = lnp.moveaxis(a, axisa, -1)
    b = lnp.moveaxis(b, axisb, -1)
    if _shape(a)[-1] not in (2, 3) or _shape(b)[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if _shape(a)[-1] == 2 and _shape(b)[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if _shape(a)[-1] == 3 else lnp.zeros_like(a0)
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if _shape(b)[-1] == 3 else lnp.zeros_like(b0)
    c = lnp.stack(lnp.broadcast_arrays(a1 * b2 - a2 * b1, a2 * b0 - a0 * b2,
                                       a0 * b1 - a1 * b0), -1)
    return lnp.moveaxis(c, -1, axisc)


def iterable(y):
    try:
        iter(y)
    except TypeError:
        return False
    return not (isinstance(y, Tracer) and not get_aval(y).shape)
