"""jax.nn activations and friends (first part): relu, sigmoid, softplus, soft_sign, silu,
gelu, softmax, log_softmax, logsumexp, one_hot, with JAX's gradients (custom JVPs where
JAX has them). Built from jax.numpy, lax and the autodiff API."""
from __future__ import annotations

import math
import operator
import types
import warnings

import numpy as np

from pyjax._src import config, dtypes, errors
from pyjax._src.api.custom_derivatives import custom_jvp
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.ad_util import stop_gradient
from pyjax._src.shape_poly import is_symbolic_dim
from pyjax._src.numpy import array_methods  # noqa: F401  (operators on arrays)
from pyjax._src.numpy import lax_numpy, reductions, ufuncs
from pyjax._src.util import canonicalize_axes


# The jax.numpy functions used here, under their public names.
jnp = types.SimpleNamespace(
    asarray=lax_numpy.asarray, arange=lax_numpy.arange,
    broadcast_arrays=lax_numpy.broadcast_arrays, broadcast_to=lax_numpy.broadcast_to,
    expand_dims=lax_numpy.expand_dims, reshape=lax_numpy.reshape,
    squeeze=lax_numpy.squeeze, where=lax_numpy.where, max=reductions.max,
    sum=reductions.sum, abs=ufuncs.abs, exp=ufuncs.exp, isfinite=ufuncs.isfinite,
    log=ufuncs.log, logaddexp=ufuncs.logaddexp, maximum=ufuncs.maximum,
    minimum=ufuncs.minimum, sign=ufuncs.sign, tanh=ufuncs.tanh, inf=np.inf, nan=np.nan)


@custom_jvp
def relu(x):
    """Rectified linear unit, max(x, 0). Its derivative at 0 is taken to be 0."""
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: ew.select(x > 0, g, ew.zeros_like(g)))


@custom_jvp
def relu6(x):
    """min(max(x, 0), 6). Its derivative at 0 and at 6 is taken to be 0."""
    return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: ew.select((x > 0) & (x < 6), g, ew.zeros_like(g)))


def sigmoid(x):
    """The logistic function 1 / (1 + exp(-x))."""
    return ew.logistic(_inexact(x))


def _inexact(x):
    x = jnp.asarray(x)
    if not dtypes.is_inexact(x.dtype):
        x = x.astype(dtypes.default_float_dtype())
    return x


def softplus(x):
    """log(1 + exp(x)), computed stably as logaddexp(x, 0)."""
    return jnp.logaddexp(x, 0)


def soft_sign(x):
    """x / (|x| + 1)."""
    return x / (jnp.abs(x) + 1)


def silu(x):
    """x * sigmoid(x) (also known as swish)."""
    x = _inexact(x)
    return x * sigmoid(x)


swish = silu


def gelu(x, approximate=True):
    """Gaussian error linear unit: x * Phi(x), with the tanh approximation by default."""
    x = _inexact(x)
    if approximate:
        cdf = 0.5 * (1.0 + jnp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * (x ** 3))))
        return x * cdf
    return (x * (ew.erf(x / np.array(math.sqrt(2), x.dtype)) + 1) / 2).astype(x.dtype)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over axis, computed stably (the max is subtracted first and
    does not take part in differentiation). For complex a the max is taken over the real
    parts; the result is the complex log unless return_sign, which gives log|sum| (real)
    and the complex sign sum / |sum|."""
    a = _inexact(a)
    if b is not None:
        dtype = dtypes.result_type(a, b)   # a and b promote together, as in JAX
        a, b = jnp.broadcast_arrays(a.astype(dtype), jnp.asarray(b, dtype))
        a = jnp.where(b != 0, a, -jnp.inf)
    if where is not None:
        a = jnp.where(where, a, -jnp.inf)
    is_complex = dtypes.issubdtype(a.dtype, np.complexfloating)
    amax = jnp.max(a.real, axis=axis, keepdims=True, initial=-jnp.inf)   # -inf when empty
    amax = stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0))
    exp_a = jnp.exp(a - amax.astype(a.dtype))
    if b is not None:
        exp_a = exp_a * b
    summed = jnp.sum(exp_a, axis=axis, keepdims=True)
    sign = jnp.sign(summed)
    if return_sign or not is_complex:
        summed = jnp.abs(summed)
    out = jnp.log(summed) + amax.astype(summed.dtype)
    if not return_sign and not is_complex:
        out = jnp.where(sign < 0, jnp.nan, out)
    if not keepdims:
        out = _squeeze(out, axis, a.ndim)
        sign = _squeeze(sign, axis, a.ndim)
    return (out, sign) if return_sign else out


def _squeeze(x, axis, ndim):
    if axis is None:
        return jnp.reshape(x, ())
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return jnp.squeeze(x, tuple(operator.index(d) % ndim for d in axes))


def _softmax_forward(x, axis, where):
    # no guard for an infinite max: a +inf entry makes the whole slice NaN, as in JAX
    masked = x if where is None else jnp.where(where, x, -jnp.inf)
    x_max = jnp.max(masked, axis, keepdims=True, initial=-jnp.inf)   # -inf when empty
    # from the masked input, as JAX: a slice masked whole then has gradient 0, not NaN
    unnormalized = jnp.exp(masked - stop_gradient(x_max))
    if where is not None:
        unnormalized = jnp.where(where, unnormalized, 0.)
    result = unnormalized / jnp.sum(unnormalized, axis, keepdims=True)
    # masked entries are 0, also where a whole slice is masked (0 / 0)
    return result if where is None else jnp.where(where, result, 0.)


_softmax = custom_jvp(_softmax_forward, nondiff_argnums=(1,))


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
    (x, where), (t, _) = primals, tangents
    y = _softmax(x, axis, where)
    inner = y * t if where is None else jnp.where(where, y * t, 0.)
    return y, y * (t - jnp.sum(inner, axis, keepdims=True))


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along axis, computed stably. With jax_softmax_custom_jvp on,
    its JVP is the custom rule y * (t - sum(y * t)); off (JAX's default), autodiff goes
    through the forward computation, whose max is behind stop_gradient."""
    x = _inexact(x)
    fun = _softmax if config.softmax_custom_jvp.value else _softmax_forward
    return fun(x, _axis_tuple(axis, x.ndim), None if where is None else jnp.asarray(where))


def _axis_tuple(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return canonicalize_axes(axis, ndim)


def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along axis, computed stably."""
    x = _inexact(x)
    axis = _axis_tuple(axis, x.ndim)
    masked = x if where is None else jnp.where(where, x, -jnp.inf)
    # +inf gives NaN throughout, as in JAX; -inf when empty
    x_max = jnp.max(masked, axis, keepdims=True, initial=-jnp.inf)
    # from the masked input, as JAX: the NaNs of a slice masked whole (-inf - -inf) then
    # meet a select on the way back, and its gradient is 0, not NaN
    shifted = masked - stop_gradient(x_max)
    exp_shifted = jnp.exp(shifted)
    if where is not None:
        exp_shifted = jnp.where(where, exp_shifted, 0.)
    result = shifted - jnp.log(jnp.sum(exp_shifted, axis, keepdims=True))
    return result if where is None else jnp.where(where, result, -jnp.inf)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """x's integer entries as one-hot vectors of length num_classes along a new axis;
    out-of-range entries give all-zero vectors."""
    if isinstance(num_classes, Tracer):
        raise errors.ConcretizationTypeError(
            num_classes, "The error arose in jax.nn.one_hot argument `num_classes`: it must "
            "be a static Python integer.\n")
    try:   # a symbolic dimension (jax.export) stands as it is, as in JAX
        if not is_symbolic_dim(num_classes):
            num_classes = operator.index(num_classes)
    except TypeError:
        raise TypeError(f"jax.nn.one_hot: num_classes must be an integer, got "
                        f"{num_classes!r}") from None
    x = jnp.asarray(x)
    if not dtypes.is_int(x.dtype):
        warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
                      DeprecationWarning, stacklevel=2)
    out_ndim = x.ndim + 1
    axis = operator.index(axis)
    if not -out_ndim <= axis < out_ndim:
        raise ValueError(f"one_hot: axis {axis} is out of bounds for an output of rank "
                         f"{out_ndim}")
    axis %= out_ndim
    classes = jnp.arange(num_classes, dtype=x.dtype if dtypes.is_int(x.dtype) else None)
    shape = [1] * out_ndim
    shape[axis] = num_classes
    out_shape = x.shape[:axis] + (num_classes,) + x.shape[axis:]
    hot = (jnp.broadcast_to(jnp.expand_dims(x, axis), out_shape)
           == jnp.broadcast_to(jnp.reshape(classes, shape), out_shape))
    return hot.astype(dtypes.default_float_dtype() if dtype is None else dtype)
