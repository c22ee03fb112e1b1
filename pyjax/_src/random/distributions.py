"""jax.random samplers built on raw random bits: uniform and the distributions derived from
it by transformation (normal, truncated normal, exponential, Gumbel, Laplace, ...), the
integer samplers (randint, bernoulli, categorical) and the sampling of indices (choice,
permutation). Each follows JAX's recipe bit for bit, so a key gives the values JAX gives.
Imports lax, dtypes and jax.numpy."""
from __future__ import annotations

import functools
import inspect
import math

import numpy as np

from pyjax._src import dtypes, errors
from pyjax._src.api.jit import jit
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import slicing, sorting, structural
from pyjax._src.numpy import indexing
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.random.keys import canonical_shape, random_bits, split_keys, unwrap
from pyjax._src.lax.sharding_constraint import takes_out_sharding

# --- argument helpers ---------------------------------------------------------------------


def compiled(*static_argnames):
    """Runs a sampler as one compiled program, as JAX runs its samplers. XLA fuses the
    elementwise steps of a program (float16 arithmetic stays in float32 between steps,
    multiply-adds contract), which moves the last bits of the result, so op by op the
    same key would give values a few ulps off JAX's. `shape`, `dtype` and the parameters
    named here are static; the key is checked outside the trace (a raw key warns on each
    call, as eagerly) and the shape canonicalised there (a list would not hash)."""
    def decorate(sampler):
        signature = inspect.signature(sampler)
        static = tuple(n for n in ("shape", "dtype", *static_argnames)
                       if n in signature.parameters)
        traced = jit(sampler, static_argnames=static)

        @functools.wraps(sampler)
        def run(key, *args, **kwargs):
            data, _ = unwrap(key, sampler.__name__)
            bound = signature.bind(data, *args, **kwargs)
            if bound.arguments.get("shape") is not None:
                bound.arguments["shape"] = canonical_shape(bound.arguments["shape"],
                                                           sampler.__name__)
            return traced(*bound.args, **bound.kwargs)
        return run
    return decorate



def float_dtype(dtype, name, allow_complex=False):
    """The canonical floating dtype of a sampler's `dtype` argument (default float)."""
    dtype = dtypes.default_float_dtype() if dtype is None else \
        dtypes.canonicalize_dtype(dtype)
    ok = dtypes.is_float(dtype) or (allow_complex and dtypes.is_complex(dtype))
    if not ok:
        kind = "a float or complex" if allow_complex else "a float"
        raise ValueError(f"dtype argument to `{name}` must be {kind} dtype, got {dtype}")
    return np.dtype(dtype)


def int_dtype(dtype, name):
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.canonicalize_dtype(dtype)
    if np.dtype(dtype).kind not in "iu":
        raise ValueError(f"dtype argument to `{name}` must be an int dtype, got {dtype}")
    return np.dtype(dtype)


def shape_of(x):
    return tuple(get_aval(x).shape)


def check_shape(name, shape, *param_shapes):
    """The parameters must broadcast to exactly `shape`."""
    if param_shapes:
        try:
            joined = lnp.broadcast_shapes(tuple(shape), *param_shapes)
        except ValueError:
            joined = None
        if joined != tuple(shape):
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, "
                f"and the result of broadcasting the shapes must equal the shape argument, "
                f"but got result {joined} for shape argument {tuple(shape)}.")


def sample_shape(name, shape, *params):
    """`shape` checked against the parameters, or their broadcast shape when None."""
    param_shapes = [shape_of(p) for p in params]
    if shape is None:
        return lnp.broadcast_shapes(*param_shapes) if param_shapes else ()
    shape = canonical_shape(shape, name)
    check_shape(name, shape, *param_shapes)
    return shape


def as_dtype(x, dtype):
    return ew.convert_element_type(x, dtype)


def broadcast_to_rank(x, rank):
    ndim = get_aval(x).ndim
    if ndim >= rank:
        return x
    return structural.reshape(x, (1,) * (rank - ndim) + shape_of(x))


def full_to(x, shape):
    return lnp.broadcast_to(x, tuple(shape))


def _const(value, dtype):
    return np.array(value, dtype)


# --- uniform and its transforms -------------------------------------------------------------

@takes_out_sharding
@compiled()
def uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
    """Uniform floats in [minval, maxval)."""
    data, _ = unwrap(key, "uniform")
    return uniform_raw(data, canonical_shape(shape, "uniform"),
                       float_dtype(dtype, "uniform"), minval, maxval)


def uniform_raw(data, shape, dtype, minval=0., maxval=1.):
    """uniform on a raw key: random mantissa bits under the exponent of 1.0, giving
    [1, 2), shifted to [0, 1) and scaled."""
    check_shape("uniform", shape, shape_of(minval), shape_of(maxval))
    minval = full_to(as_dtype(minval, dtype), shape)
    maxval = full_to(as_dtype(maxval, dtype), shape)
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    if nbits not in (16, 32, 64):
        raise TypeError(f"uniform only accepts 16-, 32- or 64-bit float dtypes, got {dtype}")
    rng_bits = nbits if nmant >= 8 else 8
    uint = np.dtype(f"uint{nbits}")
    bits = random_bits(data, rng_bits, shape)
    if rng_bits != nbits:
        bits = as_dtype(bits, uint)
    mantissa = ew.shift_right_logical(bits, _const(rng_bits - nmant, uint))
    one_bits = np.array(1.0, dtype).view(uint)
    floats = ew.sub(ew.bitcast_convert_type(ew.bitwise_or(mantissa, one_bits), dtype),
                    _const(1.0, dtype))
    return ew.max(minval, ew.add(ew.mul(floats, ew.sub(maxval, minval)), minval))


@takes_out_sharding
@compiled()
def normal(key, shape=(), dtype=None):
    """Standard normal samples (complex dtypes: independent real and imaginary parts of
    variance 1/2)."""
    data, _ = unwrap(key, "normal")
    return normal_raw(data, canonical_shape(shape, "normal"),
                      float_dtype(dtype, "normal", allow_complex=True))


def normal_raw(data, shape, dtype):
    if dtypes.is_complex(dtype):
        real = dtypes.real_dtype(dtype)
        k_re, k_im = _split2(data)
        re, im = _normal_real(k_re, shape, real), _normal_real(k_im, shape, real)
        z = ew.complex(re, im)
        return ew.div(z, _const(np.sqrt(2), dtype))
    return _normal_real(data, shape, dtype)


def _normal_real(data, shape, dtype):
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = uniform_raw(data, shape, dtype, lo, np.array(1.0, dtype))
    return ew.mul(_const(np.sqrt(2), dtype), ew.erf_inv(u))


def _split2(data):
    keys = split_keys(data, (2,))
    return keys[0], keys[1]


def split_raw(data, num):
    keys = split_keys(data, (num,))
    return [keys[i] for i in range(num)]


@takes_out_sharding
@compiled()
def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal samples conditioned on lower < x < upper."""
    data, _ = unwrap(key, "truncated_normal")
    dtype = float_dtype(dtype, "truncated_normal")
    shape = sample_shape("truncated_normal", shape, lower, upper)
    sqrt2 = _const(np.sqrt(2), dtype)
    lower, upper = as_dtype(lower, dtype), as_dtype(upper, dtype)
    a = ew.erf(ew.div(lower, sqrt2))
    b = ew.erf(ew.div(upper, sqrt2))
    u = uniform_raw(data, shape, dtype, a, b)
    out = ew.mul(sqrt2, ew.erf_inv(u))
    return lnp.clip(out, uf.nextafter(lower, _const(np.inf, dtype)),
                    uf.nextafter(upper, _const(-np.inf, dtype)))


@takes_out_sharding
@compiled()
def exponential(key, shape=(), dtype=None):
    """Exponential samples of rate 1."""
    data, _ = unwrap(key, "exponential")
    dtype = float_dtype(dtype, "exponential")
    return exponential_raw(data, canonical_shape(shape, "exponential"), dtype)


def exponential_raw(data, shape, dtype):
    u = uniform_raw(data, shape, dtype)
    return ew.neg(ew.log1p(ew.neg(u)))


@takes_out_sharding
@compiled("mode")
def gumbel(key, shape=(), dtype=None, mode=None):
    """Standard Gumbel samples. mode="high" spends two uniforms per sample for more
    resolution near 0."""
    data, _ = unwrap(key, "gumbel")
    dtype = float_dtype(dtype, "gumbel")
    mode = "low" if mode is None else mode
    if mode not in ("low", "high", "highest"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return gumbel_raw(data, canonical_shape(shape, "gumbel"), dtype, mode)


def gumbel_raw(data, shape, dtype, mode="low"):
    info = dtypes.finfo(dtype)
    if mode == "low":
        u = uniform_raw(data, shape, dtype, _const(info.tiny, dtype), 1.)
        return ew.neg(ew.log(ew.neg(ew.log(u))))
    pair = uniform_raw(data, (2, *shape), dtype)
    high, low = pair[0], pair[1]
    x = lnp.where(high >= 0.5, high, high + _const(2.0 ** -info.nmant, dtype) * low
                  + _const(info.tiny, dtype))
    return ew.neg(ew.log(ew.neg(ew.log1p(ew.neg(x)))))


@takes_out_sharding
@compiled()
def laplace(key, shape=(), dtype=None):
    """Laplace samples of scale 1."""
    data, _ = unwrap(key, "laplace")
    dtype = float_dtype(dtype, "laplace")
    u = uniform_raw(data, canonical_shape(shape, "laplace"), dtype,
                    _const(-1.0 + dtypes.finfo(dtype).epsneg, dtype), 1.)
    return ew.mul(ew.sign(u), ew.log1p(ew.neg(ew.abs(u))))


@takes_out_sharding
@compiled()
def logistic(key, shape=(), dtype=None):
    """Standard logistic samples."""
    data, _ = unwrap(key, "logistic")
    dtype = float_dtype(dtype, "logistic")
    x = uniform_raw(data, canonical_shape(shape, "logistic"), dtype,
                    _const(dtypes.finfo(dtype).tiny, dtype), 1.)
    return ew.sub(ew.log(x), ew.log1p(ew.neg(x)))


@takes_out_sharding
@compiled()
def cauchy(key, shape=(), dtype=None):
    """Standard Cauchy samples."""
    data, _ = unwrap(key, "cauchy")
    dtype = float_dtype(dtype, "cauchy")
    u = uniform_raw(data, canonical_shape(shape, "cauchy"), dtype,
                    _const(dtypes.finfo(dtype).eps, dtype), 1.)
    return ew.tan(ew.mul(_const(np.pi, dtype), ew.sub(u, _const(0.5, dtype))))


@takes_out_sharding
@compiled()
def pareto(key, b, shape=None, dtype=None):
    """Pareto samples of shape parameter b (support [1, inf))."""
    data, _ = unwrap(key, "pareto")
    dtype = float_dtype(dtype, "pareto")
    shape = sample_shape("pareto", shape, b)
    e = exponential_raw(data, shape, dtype)
    return uf.exp(e / as_dtype(b, dtype))


@takes_out_sharding
@compiled()
def rademacher(key, shape=(), dtype=None):
    """Random signs, -1 or +1 with equal probability."""
    data, _ = unwrap(key, "rademacher")
    dtype = int_dtype(dtype, "rademacher") if dtype is None or np.dtype(dtype).kind in "iu" \
        else dtypes.canonicalize_dtype(dtype)
    return _rademacher_raw(data, canonical_shape(shape, "rademacher"), dtype)


@compiled()
def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples with the given scale and concentration."""
    data, _ = unwrap(key, "weibull_min")
    dtype = float_dtype(dtype, "weibull_min")
    u = uniform_raw(data, canonical_shape(shape, "weibull_min"), dtype)
    return uf.power(-uf.log1p(-u), 1.0 / lnp.asarray(concentration)) * scale


@takes_out_sharding
@compiled()
def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh samples with the given scale."""
    data, _ = unwrap(key, "rayleigh")
    dtype = float_dtype(dtype, "rayleigh")
    shape = sample_shape("rayleigh", shape, scale)
    u = uniform_raw(data, shape, dtype)
    scale = full_to(as_dtype(scale, dtype), shape)
    return ew.mul(scale, ew.sqrt(ew.mul(ew.log(u), _const(-2, dtype))))


@takes_out_sharding
@compiled()
def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) samples with the given mean."""
    data, _ = unwrap(key, "wald")
    dtype = float_dtype(dtype, "wald")
    shape = sample_shape("wald", shape, mean)
    k1, k2 = _split2(data)
    mean = full_to(as_dtype(mean, dtype), shape)
    v = normal_raw(k1, shape, dtype)
    z = uniform_raw(k2, shape, dtype)
    y = ew.integer_pow(v, 2)
    y_sq = ew.integer_pow(y, 2)
    mean_sq = ew.integer_pow(mean, 2)
    sqrt_term = uf.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return ew.select(ew.le(z, mean / (mean + x)), x, mean_sq / x)


@takes_out_sharding
@compiled()
def geometric(key, p, shape=None, dtype=None):
    """Number of Bernoulli(p) trials up to and including the first success."""
    data, _ = unwrap(key, "geometric")
    dtype = int_dtype(dtype, "geometric")
    shape = sample_shape("geometric", shape, p)
    p = _to_inexact(p)
    u = uniform_raw(data, shape, get_aval(p).dtype)
    u = lnp.where(u == 0, 1, u)
    log_one_minus_p = full_to(ew.log1p(ew.neg(p)), shape)
    g = ew.floor(ew.div(ew.log(u), log_one_minus_p)) + 1
    return lnp.astype(g, dtype)


def _to_inexact(x):
    x = lnp.asarray(x)
    if not dtypes.is_inexact(x.dtype):
        x = lnp.astype(x, dtypes.default_float_dtype())
    return x


@takes_out_sharding
@compiled()
def triangular(key, left, mode, right, shape=None, dtype=None):
    """Samples of the triangular distribution on [left, right] peaking at mode."""
    data, _ = unwrap(key, "triangular")
    dtype = float_dtype(dtype, "triangular")
    shape = sample_shape("triangular", shape, left, mode, right)
    left, mode, right = (full_to(as_dtype(v, dtype), shape) for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = uniform_raw(data, shape, dtype)
    out1 = left + uf.sqrt(u * (right - left) * (mode - left))
    out2 = right - uf.sqrt((1 - u) * (right - left) * (right - mode))
    return ew.select(u < fc, out1, out2)


@takes_out_sharding
@compiled()
def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
    """exp(sigma * N(0, 1))."""
    data, _ = unwrap(key, "lognormal")
    dtype = float_dtype(dtype, "lognormal", allow_complex=True)
    shape = sample_shape("lognormal", shape, sigma)
    return uf.exp(normal_raw(data, shape, dtype) * as_dtype(sigma, dtype))


@takes_out_sharding
@compiled()
def maxwell(key, shape=(), dtype=None):
    """Maxwell samples: the norm of a 3-vector of standard normals."""
    data, _ = unwrap(key, "maxwell")
    dtype = float_dtype(dtype, "maxwell")
    return _maxwell_raw(data, canonical_shape(shape, "maxwell"), dtype)


@compiled()
def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Maxwell samples with random signs, scaled and shifted."""
    data, _ = unwrap(key, "double_sided_maxwell")
    dtype = float_dtype(dtype, "double_sided_maxwell")
    shape = canonical_shape(shape, "double_sided_maxwell")
    params = tuple(np.broadcast_shapes(shape_of(loc), shape_of(scale)))
    shape = (shape or params) + params
    k_max, k_sign = _split2(data)
    rvs = _maxwell_raw(k_max, shape, dtype)
    sign = _rademacher_raw(k_sign, shape, dtype)
    return sign * rvs * scale + loc


def _maxwell_raw(data, shape, dtype):
    x = normal_raw(data, (*shape, 3), dtype)
    return uf.sqrt(red.sum(x * x, axis=-1))


def _rademacher_raw(data, shape, dtype):
    u = uniform_raw(data, shape, dtypes.default_float_dtype())
    signs = ew.convert_element_type(ew.lt(u, _const(0.5, get_aval(u).dtype)), dtype)
    return ew.sub(ew.mul(_const(2, dtype), signs), _const(1, dtype))


# --- integers -------------------------------------------------------------------------------

def _clip_to(val, dtype):
    """An integer array clipped to the range both its dtype and `dtype` can hold, then
    converted to `dtype`."""
    vinfo, info = dtypes.iinfo(val.dtype), dtypes.iinfo(dtype)
    lo = np.array(max(info.min, vinfo.min), val.dtype)
    hi = np.array(min(info.max, vinfo.max), val.dtype)
    return lnp.astype(lnp.clip(val, lo, hi), dtype)


@takes_out_sharding
def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in [minval, maxval)."""
    data, _ = unwrap(key, "randint")
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.canonicalize_dtype(dtype)
    if np.dtype(dtype).kind not in "iu":
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    dtype = np.dtype(dtype)
    shape = canonical_shape(shape, "randint")
    info = dtypes.iinfo(dtype)
    sampling = dtype
    if info.bits < 32:   # sample in 32 bits: fewer values would be too biased
        sampling = np.dtype(np.int32)
        minval = lnp.clip(lnp.astype(lnp.asarray(minval), np.int32), int(info.min),
                          int(info.max))
        maxval = lnp.clip(lnp.astype(lnp.asarray(maxval), np.int32), int(info.min),
                          int(info.max) + 1)
    return lnp.astype(randint_raw(data, shape, minval, maxval, sampling), dtype)


def randint_raw(data, shape, minval, maxval, dtype):
    """JAX's randint: 2*nbits random bits per value, reduced modulo the span."""
    check_shape("randint", shape, shape_of(minval), shape_of(maxval))
    minval, maxval = lnp.asarray(minval), lnp.asarray(maxval)
    if minval.dtype.kind not in "iu":
        minval = lnp.astype(minval, dtypes.default_int_dtype())
    if maxval.dtype.kind not in "iu":
        maxval = lnp.astype(maxval, dtypes.default_int_dtype())
    top = lnp.asarray(np.array(dtypes.iinfo(dtype).max, dtype))
    maxval_out_of_range = ew.gt(maxval, _clip_to(top, maxval.dtype))
    minval = broadcast_to_rank(_clip_to(minval, dtype), len(shape))
    maxval = broadcast_to_rank(_clip_to(maxval, dtype), len(shape))
    nbits = dtypes.iinfo(dtype).bits
    k1, k2 = _split2(data)
    higher = random_bits(k1, nbits, shape)
    lower = random_bits(k2, nbits, shape)
    unsigned = np.dtype(f"uint{nbits}")
    span = as_dtype(ew.sub(maxval, minval), unsigned)
    span = ew.select(ew.le(maxval, minval), lnp.full_like(span, 1), span)
    wider = uf.logical_and(broadcast_to_rank(maxval_out_of_range, len(shape)),
                            ew.gt(maxval, minval))
    span = ew.select(wider, ew.add(span, _const(1, unsigned)), span)
    multiplier = ew.rem(_const(2 ** (nbits // 2), unsigned), span)
    multiplier = ew.rem(ew.mul(multiplier, multiplier), span)
    offset = ew.add(ew.mul(ew.rem(higher, span), multiplier), ew.rem(lower, span))
    offset = ew.rem(offset, span)
    return ew.add(minval, as_dtype(offset, dtype))


@takes_out_sharding
@compiled("mode")
def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability p."""
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    data, _ = unwrap(key, "bernoulli")
    dtype = dtypes.canonicalize_dtype(get_aval(p).dtype)
    if not dtypes.is_float(dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got "
                        f"{dtype}.")
    p = as_dtype(p, dtype)
    shape = sample_shape("bernoulli", shape, p)
    if mode == "high":
        pair = uniform_raw(data, (2, *shape), dtype)
        u1, u2 = pair[0], pair[1] * _const(2.0 ** -dtypes.finfo(dtype).nmant, dtype)
        return u2 < p - u1
    return uniform_raw(data, shape, dtype) < p


@takes_out_sharding
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices sampled with probabilities softmax(logits) along `axis` (Gumbel-max)."""
    data, _ = unwrap(key, "categorical")
    logits = lnp.asarray(logits)
    ndim = logits.ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"categorical: axis {axis} is out of bounds for logits of rank "
                         f"{ndim}")
    axis %= ndim
    batch_shape = tuple(d for i, d in enumerate(logits.shape) if i != axis)
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape, "categorical")
        check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    mode = "low" if mode is None else mode
    if replace:
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis, logits.shape[axis])
        g = gumbel(data, (*prefix, *logits_shape), logits.dtype, mode)
        expanded = structural.reshape(logits, (1,) * len(prefix) + logits.shape)
        return red.argmax(g + expanded, axis=axis + len(prefix))
    noisy = logits + gumbel(data, logits.shape, logits.dtype, mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed "
                         f"number of categories ({logits.shape[axis]}).")
    _, indices = _top_k(lnp.moveaxis(noisy, axis, -1), k)
    ndim = indices.ndim
    moved = lnp.transpose(indices, (ndim - 1, *range(ndim - 1)))
    return lnp.reshape(moved, shape)


# --- indices: permutation and choice --------------------------------------------------------

def _top_k(x, k):
    return sorting.top_k(x, k)


def shuffle_raw(data, x, axis):
    """x permuted along `axis` by sorting on fresh random 32-bit keys, repeated enough
    rounds that ties are improbable (the number of rounds depends on x.size)."""
    size = get_aval(x).size
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        data, sub = _split2(data)
        sort_keys = random_bits(sub, 32, shape_of(x))
        _, x = sorting.sort_key_val(sort_keys, x, axis)
    return x


@takes_out_sharding
def permutation(key, x, axis=0, independent=False):
    """A random permutation of arange(x) (x an int) or of x along `axis`."""
    data, _ = unwrap(key, "permutation")
    return permutation_raw(data, x, axis, independent)


def permutation_raw(data, x, axis=0, independent=False):
    if not lnp.ndim(x):
        if not dtypes.issubdtype(get_aval(x).dtype, np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        _canonical_axis(axis, 1, "permutation")   # of arange(x)
        n = x.to_concrete_value() if isinstance(x, Tracer) else x
        if n is None:
            raise errors.ConcretizationTypeError(
                x, "The error arose in argument x of jax.random.permutation(): an integer x "
                "decides the shape of the result, so it must be static (e.g. a "
                "static_argnums argument of jit).\n")
        return shuffle_raw(data, lnp.arange(int(n)), 0)
    x = lnp.asarray(x)
    axis = _canonical_axis(axis, x.ndim, "permutation")
    if independent or x.ndim == 1:
        return shuffle_raw(data, x, axis)
    order = shuffle_raw(data, lnp.arange(x.shape[axis]), 0)
    return _take(x, order, axis)


def _canonical_axis(axis, ndim, where):
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"jax.random.{where}: axis {axis} is out of bounds for an array "
                         f"of rank {ndim}")
    return axis % max(ndim, 1)


def _take(x, indices, axis):
    return indexing.take(x, indices, axis=axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Samples from a (an int n means arange(n)) along `axis`, with or without
    replacement, uniformly or with probabilities p."""
    data, _ = unwrap(key, "choice")
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got "
                        f"{shape}")
    shape = canonical_shape(shape, "choice")
    arr = lnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = _canonical_axis(axis, arr.ndim, "choice")
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return lnp.zeros(shape, arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint_raw(data, shape, 0, n_inputs, dtypes.default_int_dtype())
            result = ind if arr.ndim == 0 else _take(arr, ind, axis)
        else:
            perm = permutation_raw(data, n_inputs if arr.ndim == 0 else arr,
                                   axis if arr.ndim else 0)
            result = slicing.slice_in_dim(perm, 0, n_draws, axis=axis if arr.ndim else 0)
    else:
        p_arr = _to_inexact(p)
        if p_arr.shape != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = red.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(data, shape, p_cuml.dtype))
            # searchsorted(p_cuml, r): how many cumulative probabilities lie below r
            below = lnp.expand_dims(p_cuml, tuple(range(len(shape)))) < \
                lnp.expand_dims(r, -1)
            ind = red.sum(below, axis=-1, dtype=dtypes.default_int_dtype())
        else:
            g = gumbel(data, (n_inputs,), p_arr.dtype, mode) + uf.log(p_arr)
            ind = lnp.astype(_top_k(g, n_draws)[1], dtypes.default_int_dtype())
        result = ind if arr.ndim == 0 else _take(arr, ind, axis)
    out_shape = shape if arr.ndim == 0 else \
        arr.shape[:axis] + tuple(shape) + arr.shape[axis + 1:]
    return lnp.reshape(result, out_shape)

