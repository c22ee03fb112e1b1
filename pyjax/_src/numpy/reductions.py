"""jnp reductions: sum, prod, max, min, mean, var, std, any, all, argmax, argmin, the
cumulative ops, with axis, keepdims, where, dtype and initial as in NumPy. Small floats
(float16/bfloat16) accumulate in float32, as JAX does."""
from __future__ import annotations

import builtins

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as lr
from pyjax._src.lax import structural as st
from pyjax._src.shape_poly import is_symbolic_dim
from pyjax._src.numpy.util import (check_arraylike, convert, ensure_array, ensure_arraylike,
                                   jax_array_protocol, promote_dtypes_inexact)
from pyjax._src.util import canonicalize_axes, canonicalize_axis, renamed


def _axes(a, axis):
    ndim = get_aval(a).ndim
    if axis is None:
        return tuple(range(ndim))
    return canonicalize_axes(axis, ndim)


def check_where(name, where):
    """Refuses a `where` that is not None or booleans (JAX raises, NumPy would cast)."""
    if where is not None:
        check_arraylike(name, where)
        dtype = get_aval(where).dtype
        if dtype != np.bool_:
            raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                             f"where.dtype={dtype!r}.")


def _keep(out, in_shape, axes, keepdims):
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else d for i, d in enumerate(in_shape))
    return st.reshape(out, shape)


def _upcast_small_float(dtype):
    return np.dtype(np.float32) if dtype in (dtypes.bfloat16, dtypes.float16) else dtype


def _reduction(name, lax_reduce, identity, *, bool_to_int=False, upcast=False,
               bool_op=None):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
               where=None, promote_integers=True):
        a = ensure_arraylike(name, a)
        check_where(name, where)
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported: "
                                      "JAX arrays are immutable.")
        aval = get_aval(a)
        axes = _axes(a, axis)
        if dtype is not None:
            result_dtype = dtypes.check_user_dtype(dtype, name)
        elif bool_to_int and (aval.dtype == np.bool_ or (
                promote_integers and dtypes.is_int(aval.dtype)
                and aval.dtype.itemsize < dtypes.default_int_dtype().itemsize)):
            result_dtype = (dtypes.default_uint_dtype() if aval.dtype.kind == "u"
                            else dtypes.default_int_dtype())
        else:
            result_dtype = aval.dtype
        # small floats accumulate in float32, unless the dtype is asked for (as JAX)
        compute_dtype = _upcast_small_float(result_dtype) if upcast and dtype is None \
            else result_dtype
        if bool_op is not None and result_dtype == np.bool_:
            x, reducer = convert(a, np.bool_), bool_op
        else:
            x, reducer = convert(a, compute_dtype), lax_reduce
        if where is not None:
            fill = identity(compute_dtype) if result_dtype != np.bool_ or bool_op is None \
                else np.array(reducer is lr.reduce_and, np.bool_)
            if fill is None:
                # max and min have no identity, but repeating initial cannot change them
                fill = initial
            if fill is None:
                raise ValueError(f"reduction operation {name} does not have an identity, so "
                                 "to use a where mask one has to specify 'initial'")
            x = ew.select(st.broadcast_to_shape(convert(where, np.bool_), aval.shape), x,
                          st.broadcast_in_dim(_as_value(fill, get_aval(x).dtype),
                                              aval.shape, ()))
        if builtins.any(aval.shape[i] == 0 for i in axes) and identity(compute_dtype) is None \
                and initial is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
        out_val = reducer(x, axes)
        if initial is not None:
            if np.ndim(initial) != 0:
                raise ValueError("initial value must be a scalar. Got array of shape "
                                 f"{np.shape(initial)}")
            init = _as_value(initial, get_aval(out_val).dtype)
            out_val = _combine(name, out_val, init)
        out_val = convert(out_val, result_dtype)
        return ensure_array(_keep(out_val, aval.shape, axes, keepdims))
    reduce.__name__ = name
    reduce.__doc__ = f"jnp.{name}: like numpy.{name}, with JAX's dtype rules."
    return reduce


def _as_value(x, dtype):
    """initial (or a where fill) as a value of dtype: a constant, or traced under jit."""
    return convert(x if hasattr(x, "aval") else np.asarray(x), dtype)


def _combine(name, value, init):
    return {"sum": ew.add, "prod": ew.mul, "max": ew.max, "min": ew.min}[name](value, init)


def _zero(dtype):
    return np.zeros((), dtype)


def _one(dtype):
    return np.ones((), dtype)


sum = _reduction("sum", lr.reduce_sum, _zero, bool_to_int=True, upcast=True,
                 bool_op=None)
prod = _reduction("prod", lr.reduce_prod, _one, bool_to_int=True, upcast=True)
# max and min with a dtype argument: jnp.maximum.reduce and jnp.minimum.reduce
reduce_max = _reduction("max", lr.reduce_max, lambda d: None, bool_op=lr.reduce_or)
reduce_min = _reduction("min", lr.reduce_min, lambda d: None, bool_op=lr.reduce_and)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """jnp.max: like numpy.max; the result keeps a's dtype (no dtype argument, as in JAX)."""
    return reduce_max(a, axis, None, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """jnp.min: like numpy.min; the result keeps a's dtype (no dtype argument, as in JAX)."""
    return reduce_min(a, axis, None, out, keepdims, initial, where)


amax, amin = renamed(max, "amax"), renamed(min, "amin")


def _bool_reduction(name, lax_reduce, fill):
    def reduce(a, axis=None, out=None, keepdims=False, *, where=None):
        a = ensure_arraylike(name, a)
        check_where(name, where)
        aval = get_aval(a)
        x = convert(a, np.bool_) if aval.dtype != np.bool_ else a
        if dtypes.is_inexact(aval.dtype) or dtypes.is_int(aval.dtype):
            x = ew.ne(a, np.zeros((), aval.dtype))
        axes = _axes(a, axis)
        if where is not None:
            x = ew.select(st.broadcast_to_shape(convert(where, np.bool_), aval.shape), x,
                          st.broadcast_in_dim(np.array(fill), aval.shape, ()))
        return ensure_array(_keep(lax_reduce(x, axes), aval.shape, axes, keepdims))
    reduce.__name__ = name
    return reduce


all = _bool_reduction("all", lr.reduce_and, True)
any = _bool_reduction("any", lr.reduce_or, False)


def _count(a, axes, where):
    aval = get_aval(a)
    if where is None:
        n = 1
        for i in axes:
            n *= aval.shape[i]
        return n, None
    mask = st.broadcast_to_shape(convert(where, np.bool_), aval.shape)
    return None, mask


def check_var_dtype(a, dtype):
    """JAX refuses a real `dtype` for the variance of complex values."""
    if dtype is not None and dtypes.is_complex(get_aval(a).dtype) \
            and not dtypes.is_complex(dtypes.canonicalize_dtype(dtype)):
        raise ValueError("jax.numpy.var does not yet support real dtype parameters when "
                         "computing the variance of an array of complex values. The "
                         "semantics of numpy.var seem unclear in this case. Please comment "
                         "on https://github.com/jax-ml/jax/issues/2283 if this behavior is "
                         "important to you.")


def _mean_dtypes(a, dtype):
    """The dtype mean and var work in (a's as inexact, unless given) and the one they
    accumulate in."""
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(get_aval(a).dtype)
    else:
        dtype = dtypes.check_user_dtype(dtype, "mean")
    return dtype, _upcast_small_float(dtype)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean; integer inputs average in the default float dtype."""
    a = ensure_arraylike("mean", a)
    check_where("mean", where)
    axes = _axes(a, axis)
    given = dtype is not None
    dtype, compute = _mean_dtypes(a, dtype)
    if given:
        compute = dtype   # an explicit dtype is accumulated in as it is, as JAX
    total = sum(convert(a, compute), axis=axes, dtype=compute, keepdims=keepdims,
                where=where)
    n, mask = _count(a, axes, where)
    if mask is None:
        result = ew.div(total, convert(st.dim_as_value(n), compute))
    else:
        counts = sum(mask, axis=axes, keepdims=keepdims, dtype=compute)
        result = ew.div(total, counts)
    return ensure_array(convert(result, dtype))


_mean = mean  # var's `mean=` parameter shadows the function there


def _ddof(ddof, correction):
    """`correction` is the array API's name for ddof; only one of them may be given."""
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """Variance: mean(|a - mean(a)|**2) scaled by n / (n - ddof). `mean`, when given, is
    a's mean along `axis` computed beforehand (broadcastable against a, e.g. with
    keepdims=True), used instead of computing it again."""
    a = ensure_arraylike("var", a)
    check_where("var", where)
    check_var_dtype(a, dtype)
    ddof = _ddof(ddof, correction)
    axes = _axes(a, axis)
    # the result is real unless a dtype is given: that one is kept (complex too)
    real_result = dtype is None
    dtype, compute = _mean_dtypes(a, dtype)
    x = convert(a, compute)
    if mean is None:
        mean = _mean(x, axis=axes, dtype=compute, keepdims=True, where=where)
    else:
        check_arraylike("var", mean)
    centered = ew.sub(x, convert(mean, compute))
    sq = ew.real(ew.mul(centered, ew.conj(centered))) if dtypes.is_complex(compute) \
        else ew.square(centered)
    total = sum(sq, axis=axes, dtype=get_aval(sq).dtype, keepdims=keepdims, where=where)
    n, mask = _count(a, axes, where)
    total_dtype = get_aval(total).dtype
    # as in JAX, no positive degrees of freedom left gives NaN (not inf)
    no_dof = np.nan if dtypes.is_inexact(total_dtype) else 0
    if mask is None and is_symbolic_dim(n):   # a symbolic count (jax.export), as JAX's
        denom = ew.sub(convert(st.dim_as_value(n), total_dtype),
                       np.array(ddof, total_dtype))
    elif mask is None:
        denom = np.array(n - ddof if n - ddof > 0 else no_dof, total_dtype)
    else:
        denom = ew.sub(sum(mask, axis=axes, keepdims=keepdims, dtype=total_dtype),
                       np.array(ddof, total_dtype))
        denom = ew.select(ew.gt(denom, np.zeros((), total_dtype)), denom,
                          st.full(get_aval(denom).shape, np.array(no_dof, total_dtype)))
    result = ew.div(total, denom)
    if not dtypes.is_inexact(dtype):
        # an integer dtype: JAX computes in it and returns a weak default float
        return ensure_array(convert(result, dtypes.default_float_dtype(), weak_type=True))
    out_dtype = dtypes.canonicalize_dtype(dtypes.real_dtype(dtype) if real_result else dtype)
    return ensure_array(convert(result, out_dtype))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    check_where("std", where)
    if dtype is not None and not dtypes.is_inexact(dtypes.canonicalize_dtype(dtype)):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {np.dtype(dtype)}")
    return ensure_array(ew.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where,
                                    mean=mean, correction=correction)))


def _arg_reduction(name, lax_fn):
    def reduce(a, axis=None, out=None, keepdims=None):
        a = ensure_arraylike(name, a)
        aval = get_aval(a)
        if axis is None:
            flat = st.reshape(a, (aval.size,))
            if aval.size == 0:
                raise ValueError(f"attempt to get {name} of an empty sequence")
            result = lax_fn(flat, 0, dtypes.default_int_dtype())
            return ensure_array(st.reshape(result, (1,) * aval.ndim) if keepdims else result)
        axis = canonicalize_axis(axis, aval.ndim)
        if aval.shape[axis] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = lax_fn(a, axis, dtypes.default_int_dtype())
        return ensure_array(_keep(result, aval.shape, (axis,), keepdims))
    reduce.__name__ = name
    return reduce


argmax = _arg_reduction("argmax", lr.argmax)
argmin = _arg_reduction("argmin", lr.argmin)


def _cumulative_dtype(aval, dtype, promote_integers):
    """bool counts in the default int; narrow ints widen only when promote_integers."""
    if dtype is not None:
        return dtypes.check_user_dtype(dtype, "cumsum")
    if aval.dtype == np.bool_:
        return dtypes.default_int_dtype()
    if promote_integers and dtypes.is_int(aval.dtype) \
            and aval.dtype.itemsize < dtypes.default_int_dtype().itemsize:
        return (dtypes.default_uint_dtype() if aval.dtype.kind == "u"
                else dtypes.default_int_dtype())
    return aval.dtype


def _accumulate(lax_fn, a, axis, aval, dtype, promote_integers):
    """lax_fn along axis in the result dtype. lax does not accumulate booleans: an
    explicit bool dtype accumulates a != 0 in the default int and casts back, as JAX."""
    result_dtype = _cumulative_dtype(aval, dtype, promote_integers)
    if result_dtype != np.bool_:
        return lax_fn(convert(a, result_dtype), axis)
    if aval.dtype != np.bool_:
        a = ew.ne(a, np.zeros((), aval.dtype))
    return convert(lax_fn(convert(a, dtypes.default_int_dtype()), axis), np.bool_)


def _cumulative(name, lax_fn):
    def cum(a, axis=None, dtype=None, out=None):
        a = ensure_arraylike(name, a)
        aval = get_aval(a)
        if axis is None:
            a = st.reshape(a, (aval.size,))
            axis = 0
        aval = get_aval(a)
        axis = canonicalize_axis(axis, aval.ndim)
        return ensure_array(_accumulate(lax_fn, a, axis, aval, dtype, False))
    cum.__name__ = name
    return cum


cumsum = _cumulative("cumsum", lr.cumsum)
cumprod = _cumulative("cumprod", lr.cumprod)


def _array_api_cumulative(name, what, lax_fn, identity, promote_integers):
    def cum(x, /, *, axis=None, dtype=None, include_initial=False):
        x = ensure_arraylike(name, x)
        aval = get_aval(x)
        if aval.ndim == 0:
            raise ValueError(f"The input must be non-scalar to take a cumulative {what}, "
                             "however a scalar value or scalar array was given.")
        if axis is None:
            if aval.ndim > 1:
                raise ValueError(f"The input array has rank {aval.ndim}, however axis was "
                                 "not set to an explicit value. The axis argument is only "
                                 "optional for one-dimensional arrays.")
            axis = 0
        axis = canonicalize_axis(axis, aval.ndim)
        out = _accumulate(lax_fn, x, axis, aval, dtype, promote_integers)
        if include_initial:
            shape = list(aval.shape)
            shape[axis] = 1
            init = st.broadcast_in_dim(identity(get_aval(out).dtype), tuple(shape), ())
            out = st.concatenate([init, out], axis)
        return ensure_array(out)
    cum.__name__ = name
    return cum


cumulative_sum = _array_api_cumulative("cumulative_sum", "sum", lr.cumsum, _zero, True)
cumulative_prod = _array_api_cumulative("cumulative_prod", "product", lr.cumprod, _one, False)


def ptp(a, axis=None, out=None, keepdims=False):
    return ensure_array(ew.sub(max(a, axis, keepdims=keepdims),
                               min(a, axis, keepdims=keepdims)))


def count_nonzero(a, axis=None, keepdims=False):
    a = ensure_arraylike("count_nonzero", a)
    aval = get_aval(a)
    return sum(ew.ne(a, np.zeros((), aval.dtype)), axis=axis, keepdims=keepdims,
               dtype=dtypes.default_int_dtype())


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    a = jax_array_protocol(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        aval = get_aval(a)
        n = aval.size if axis is None else int(np.prod([aval.shape[i] for i in
                                                        _axes(a, axis)]))
        count = ensure_array(np.array(n, get_aval(avg).dtype))
        return (avg, st.broadcast_to_shape(count, get_aval(avg).shape)) if returned else avg
    a, weights = promote_dtypes_inexact(a, weights)
    aval, w_aval = get_aval(a), get_aval(weights)
    if w_aval.shape != aval.shape:
        if axis is None:
            raise ValueError("Axis must be specified when shapes of a and weights differ.")
        axes = canonicalize_axes(axis, aval.ndim)
        if w_aval.shape != tuple(aval.shape[i] for i in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        # weights' dimensions follow `axis` in its order: put them in a's order.
        weights = st.broadcast_in_dim(st.transpose(weights, tuple(np.argsort(axes))),
                                      aval.shape, tuple(sorted(axes)))
    scale = sum(weights, axis=axis, keepdims=keepdims)
    avg = ew.div(sum(ew.mul(a, weights), axis=axis, keepdims=keepdims), scale)
    return (ensure_array(avg), ensure_array(scale)) if returned else ensure_array(avg)
