"""The jnp functions that are jnp.ufunc objects in JAX (add, multiply, maximum, the logical
and bitwise binary functions, logaddexp, subtract, negative): the elementwise function,
with reduce, accumulate and at through the matching reductions (jnp.add.reduce is
jnp.sum). jnp's own code and Array operators call the plain functions in ufuncs.py."""
from __future__ import annotations

import numpy as np

from pyjax._src.api.jit import jit
from pyjax._src.lax import reductions as lr
from pyjax._src.lax.ad_util import stop_gradient
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.functional import ufunc
from pyjax._src.numpy.util import check_arraylike
from pyjax._src.util import canonicalize_axis


def _lax_reduce(name, lax_reduce, identity):
    """ufunc.reduce by a lax reduction (bitwise and logical ones)."""
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        check_arraylike(f"{name}.reduce", a)
        a = lnp.asarray(a, dtype) if dtype is not None else lnp.asarray(a)
        if where is not None:
            a = lnp.where(where, a, lnp.asarray(identity).astype(a.dtype))
        axes = tuple(range(a.ndim)) if axis is None else (
            axis if isinstance(axis, tuple) else (axis,))
        axes = tuple(sorted(canonicalize_axis(ax, a.ndim) for ax in axes))
        out = lax_reduce(a, axes)
        if initial is not None:
            out = getattr(uf, name)(out, lnp.asarray(initial).astype(a.dtype))
        return lnp.expand_dims(out, axes) if keepdims else out
    return reduce


def _logical(name, lax_reduce, identity):
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        a = lnp.asarray(a).astype(np.bool_)
        return _lax_reduce(name, lax_reduce, identity)(a, axis, dtype, keepdims, initial,
                                                        where)
    return reduce


def _log_sum_exp(exp, log):
    """logaddexp(2).reduce: log(sum(exp(a))) computed around the largest element."""
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        if initial is not None:
            raise NotImplementedError("The initial argument to logsumexp is not supported.")
        a = lnp.asarray(a, dtype) if dtype is not None else lnp.asarray(a)
        axes = tuple(range(a.ndim)) if axis is None else (
            axis if isinstance(axis, tuple) else (axis,))
        axes = tuple(sorted(canonicalize_axis(ax, a.ndim) for ax in axes))
        top = red.max(a, axis=axes, keepdims=True, where=where, initial=-np.inf)
        top = stop_gradient(lnp.where(uf.isfinite(top), top, lnp.zeros_like(top)))
        total = red.sum(exp(a - top), axis=axes, keepdims=True, where=where)
        out = log(total) + top
        return out if keepdims else lnp.squeeze(out, axes)
    # compiled as in JAX, whose ufunc methods are jitted (XLA's exp and log round as JAX's)
    return jit(reduce, static_argnames=("axis", "dtype", "keepdims"))


def _add_at(a, indices, b):
    return lnp.asarray(a).at[indices].add(b)


def _multiply_at(a, indices, b):
    return lnp.asarray(a).at[indices].multiply(b)


def _subtract_at(a, indices, b):
    return lnp.asarray(a).at[indices].subtract(b)


def _binary(fn, identity, **methods):
    return ufunc(fn, name=fn.__name__, nin=2, nout=1, call=fn, identity=identity, **methods)


add = _binary(uf.add, 0, reduce=red.sum, accumulate=red.cumsum, at=_add_at)
multiply = _binary(uf.multiply, 1, reduce=red.prod, accumulate=red.cumprod, at=_multiply_at)
subtract = _binary(uf.subtract, None, at=_subtract_at)
maximum = _binary(uf.maximum, None, reduce=red.reduce_max)
minimum = _binary(uf.minimum, None, reduce=red.reduce_min)
bitwise_and = _binary(uf.bitwise_and, -1,
                      reduce=_lax_reduce("bitwise_and", lr.reduce_and, -1))
bitwise_or = _binary(uf.bitwise_or, 0, reduce=_lax_reduce("bitwise_or", lr.reduce_or, 0))
bitwise_xor = _binary(uf.bitwise_xor, 0, reduce=_lax_reduce("bitwise_xor", lr.reduce_xor, 0))
logical_and = _binary(uf.logical_and, True,
                      reduce=_logical("logical_and", lr.reduce_and, True))
logical_or = _binary(uf.logical_or, False, reduce=_logical("logical_or", lr.reduce_or, False))
logical_xor = _binary(uf.logical_xor, False,
                      reduce=_logical("logical_xor", lr.reduce_xor, False))
logaddexp = _binary(uf.logaddexp, -np.inf, reduce=_log_sum_exp(uf.exp, uf.log))
logaddexp2 = _binary(uf.logaddexp2, -np.inf, reduce=_log_sum_exp(uf.exp2, uf.log2))
negative = ufunc(uf.negative, name="negative", nin=1, nout=1, call=uf.negative)
