"""NaN-ignoring reductions of jax.numpy (nansum, nanmean, nanmax, nanvar, nanargmax,
nancumsum, ...): NaNs are replaced by the reduction's identity first. As in JAX, an
all-NaN slice gives NaN (nanmax/nanmin/nanmean) or -1 (nanargmax/nanargmin) rather than
raising. Imports the core jnp modules and dtypes."""
from __future__ import annotations

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import elementwise as ew
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import check_arraylike, ensure_array


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported: JAX "
                                  "arrays are immutable.")


def _replace_nan(a, value):
    a = lnp.asarray(a)
    if not dtypes.is_inexact(get_aval(a).dtype):
        return a
    return lnp.where(uf.isnan(a), lnp.asarray(value, get_aval(a).dtype), a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum treating NaNs as zero."""
    check_arraylike("nansum", a)
    red.check_where("nansum", where)
    _no_out("nansum", out)
    return red.sum(_replace_nan(a, 0), axis=axis, dtype=dtype, keepdims=keepdims,
                   initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product treating NaNs as one."""
    check_arraylike("nanprod", a)
    red.check_where("nanprod", where)
    _no_out("nanprod", out)
    return red.prod(_replace_nan(a, 1), axis=axis, dtype=dtype, keepdims=keepdims,
                    initial=initial, where=where)


def _nan_extreme(name, reduce, fill):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        check_arraylike(name, a)
        red.check_where(name, where)
        _no_out(name, out)
        a = lnp.asarray(a)
        if not dtypes.is_inexact(get_aval(a).dtype):
            return reduce(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
        out_ = reduce(_replace_nan(a, fill), axis=axis, keepdims=keepdims, initial=initial,
                      where=where)
        all_nan = red.all(uf.isnan(a), axis=axis, keepdims=keepdims)
        return lnp.where(all_nan, lnp.asarray(np.nan, get_aval(out_).dtype), out_)
    f.__name__ = name
    f.__doc__ = f"{name[3:]} ignoring NaNs; an all-NaN slice gives NaN."
    return f


nanmax = _nan_extreme("nanmax", red.max, -np.inf)
nanmin = _nan_extreme("nanmin", red.min, np.inf)


def _not_nan_count(a, axis, keepdims, where, dtype):
    mask = uf.logical_not(uf.isnan(a)) if dtypes.is_inexact(get_aval(a).dtype) else \
        lnp.ones(get_aval(a).shape, np.bool_)
    return red.sum(mask, axis=axis, keepdims=keepdims, where=where, dtype=dtype)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean of the non-NaN elements."""
    check_arraylike("nanmean", a)
    red.check_where("nanmean", where)
    _no_out("nanmean", out)
    a = lnp.asarray(a)
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(get_aval(a).dtype)
    dtype = dtypes.canonicalize_dtype(dtype)
    total = nansum(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    count = _not_nan_count(a, axis, keepdims, where, dtype)
    return uf.divide(total, count)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
    """Variance of the non-NaN elements; `mean`, when given, is their mean along `axis`
    computed beforehand (broadcastable against a), used instead of computing it again."""
    check_arraylike("nanvar", a)
    red.check_where("nanvar", where)
    _no_out("nanvar", out)
    a = lnp.asarray(a)
    red.check_var_dtype(a, dtype)
    compute = dtypes.to_inexact_dtype(get_aval(a).dtype)
    if mean is None:
        mean = nanmean(a, axis=axis, dtype=compute, keepdims=True, where=where)
    else:
        check_arraylike("nanvar", mean)
    centered = uf.subtract(lnp.asarray(a, compute), lnp.asarray(mean, compute))
    if dtypes.is_inexact(get_aval(a).dtype):
        # only a's own NaNs are skipped: inf - inf (an infinite mean) stays NaN, as in JAX
        centered = lnp.where(uf.isnan(a), lnp.zeros((), compute), centered)
    squared = uf.real(uf.multiply(centered, uf.conj(centered))) \
        if dtypes.is_complex(compute) else uf.square(centered)
    real = get_aval(squared).dtype
    count = _not_nan_count(a, axis, keepdims, where, real)
    total = red.sum(squared, axis=axis, keepdims=keepdims, where=where)
    denom = uf.subtract(count, lnp.asarray(ddof, real))
    # no positive degrees of freedom left gives NaN (not inf), as in JAX
    denom = lnp.where(denom > 0, denom, lnp.asarray(np.nan, real))
    result = uf.divide(total, denom)
    return result if dtype is None else lnp.asarray(result, dtype)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
    """Standard deviation of the non-NaN elements."""
    red.check_where("nanstd", where)
    _no_out("nanstd", out)
    # lax's sqrt, as JAX: an integer dtype raises rather than promoting
    return ensure_array(ew.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof,
                                       keepdims=keepdims, where=where, mean=mean)))


def _nan_arg(name, arg, fill):
    def f(a, axis=None, out=None, keepdims=None):
        check_arraylike(name, a)
        _no_out(name, out)
        a = lnp.asarray(a)
        if not dtypes.is_inexact(get_aval(a).dtype):
            return arg(a, axis=axis, keepdims=keepdims)
        nan = uf.isnan(a)
        res = arg(lnp.where(nan, lnp.asarray(fill, get_aval(a).dtype), a), axis=axis,
                  keepdims=keepdims)
        all_nan = red.all(nan, axis=axis, keepdims=bool(keepdims))
        return lnp.where(all_nan, lnp.asarray(-1, get_aval(res).dtype), res)
    f.__name__ = name
    f.__doc__ = f"{name[3:]} ignoring NaNs; an all-NaN slice gives -1 (JAX does not raise)."
    return f


nanargmax = _nan_arg("nanargmax", red.argmax, -np.inf)
nanargmin = _nan_arg("nanargmin", red.argmin, np.inf)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaNs as zero."""
    _no_out("nancumsum", out)
    return red.cumsum(_replace_nan(a, 0), axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaNs as one."""
    _no_out("nancumprod", out)
    return red.cumprod(_replace_nan(a, 1), axis=axis, dtype=dtype)
