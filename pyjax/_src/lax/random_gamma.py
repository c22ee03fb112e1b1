"""Gamma sampling as primitives: `random_gamma` (Marsaglia and Tsang's rejection method,
"A simple method for generating gamma variables", 2000, run per element on its own key, as
JAX does, so samples match JAX's; its `impl` parameter is the keys' PRNG implementation)
and `random_gamma_grad` (d sample / d alpha by implicit
differentiation of the CDF). Both are written once in lax ops (vectorised while loops);
impl runs that jaxpr on the NumPy executor and the lowering inlines it. Imports core,
interpreters, backends and the lax families."""
from __future__ import annotations

import functools
import math

import numpy as np

from pyjax._src import dtypes
from pyjax._src.backends import numpy_backend
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import NOT_DIFFERENTIABLE, define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.interpreters.ad import Zero
from pyjax._src.lax import builders as b
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import random_bits as rb
from pyjax._src.lax.prng import rbg_prng_impl, threefry_prng_impl
from pyjax._src.lax import reductions, slicing
from pyjax._src.lax import structural as st
from pyjax._src.lax.control_flow.batched import vmap_leading
from pyjax._src.lax.control_flow.loops import while_loop
from pyjax._src.lax.control_flow.scan import map as lax_map

UINT32 = rb.UINT32


# --- vectorised key arithmetic on raw keys of shape (N, 2) ---------------------------------

def _words(keys):
    n = get_aval(keys).shape[0]
    return (st.reshape(slicing.slice(keys, (0, 0), (n, 1)), (n,)),
            st.reshape(slicing.slice(keys, (0, 1), (n, 2)), (n,)))


def _split_all(keys, num):
    """split(key, num) of every key, as one array of shape (N, num, 2)."""
    k1, k2 = _words(keys)
    n = get_aval(keys).shape[0]
    counts = st.broadcast_in_dim(st.iota(UINT32, num), (n, num), (1,))
    zeros = st.full((n, num), 0, UINT32)
    y1, y2 = rb.threefry2x32_p.bind(st.broadcast_in_dim(k1, (n, num), (0,)),
                                    st.broadcast_in_dim(k2, (n, num), (0,)), zeros, counts)
    return st.concatenate([st.reshape(y1, (n, num, 1)), st.reshape(y2, (n, num, 1))], 2)


def _split_each(keys, num):
    """split(key, num) of every key, as `num` key arrays of shape (N, 2)."""
    n = get_aval(keys).shape[0]
    both = _split_all(keys, num)
    return [st.reshape(slicing.slice(both, (0, i, 0), (n, i + 1, 2)), (n, 2))
            for i in range(num)]


def _uniform_each(keys, dtype, lo=0.0, hi=1.0):
    """uniform(key, (), dtype, lo, hi) of every key (the scalar draw JAX makes)."""
    k1, k2 = _words(keys)
    zero = np.zeros((), UINT32)
    y1, y2 = rb.threefry2x32_p.bind(k1, k2, zero, zero)
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = nbits if nmant >= 8 else 8   # 16-bit floats draw 8 random bits
    uint = np.dtype(f"uint{nbits}")
    if rng_bits == 64:
        bits = ew.bitwise_or(ew.shift_left(ew.convert_element_type(y1, uint), np.uint64(32)),
                             ew.convert_element_type(y2, uint))
    else:
        bits = ew.bitwise_xor(y1, y2)
        if rng_bits != 32:
            bits = ew.convert_element_type(bits, np.dtype(f"uint{rng_bits}"))
        bits = ew.convert_element_type(bits, uint)
    return _bits_to_uniform(bits, dtype, rng_bits, lo, hi)


def _bits_to_uniform(bits, dtype, rng_bits, lo, hi):
    """uniform's floats in [lo, hi) from random bits (of `dtype`'s width)."""
    nbits, nmant = dtypes.finfo(dtype).bits, dtypes.finfo(dtype).nmant
    uint = np.dtype(f"uint{nbits}")
    mantissa = ew.shift_right_logical(bits, np.array(rng_bits - nmant, uint))
    floats = ew.sub(ew.bitcast_convert_type(
        ew.bitwise_or(mantissa, np.array(1.0, dtype).view(uint)), dtype),
        np.array(1.0, dtype))
    lo, hi = np.array(lo, dtype), np.array(hi, dtype)
    return ew.max(lo, ew.add(ew.mul(floats, ew.sub(hi, lo)), lo))


def _any(mask):
    return reductions.reduce_or(mask, (0,))


# --- sampling --------------------------------------------------------------------------------

class _ThreefryOps:
    """Per-key split and scalar uniform draws of N threefry2x32 keys (N, 2) at once."""
    split_each = staticmethod(_split_each)
    uniform_each = staticmethod(_uniform_each)


class _OneKeyOps:
    """Per-key split and scalar uniform draws of one key of any PRNG implementation,
    held as a batch of one (1, *key_shape)."""

    def __init__(self, impl):
        self.impl = impl

    def _one(self, keys):
        return st.reshape(keys, self.impl.key_shape)

    def split_each(self, keys, num):
        both = self.impl.split(self._one(keys), (num,))
        width = self.impl.key_shape
        return [st.reshape(slicing.slice_in_dim(both, i, i + 1), (1, *width))
                for i in range(num)]

    def uniform_each(self, keys, dtype, lo=0.0, hi=1.0):
        finfo = dtypes.finfo(dtype)
        nbits, nmant = finfo.bits, finfo.nmant
        rng_bits = nbits if nmant >= 8 else 8
        uint = np.dtype(f"uint{nbits}")
        bits = ew.convert_element_type(self.impl.random_bits(self._one(keys), rng_bits, (1,)),
                                       uint)
        return _bits_to_uniform(bits, dtype, rng_bits, lo, hi)


def _gamma_flat(keys, alpha, log_space, ops=_ThreefryOps):
    """One gamma sample per (key, alpha) pair: keys (N, *key_shape), alpha (N,)."""
    dtype = get_aval(alpha).dtype
    _split_each, _uniform_each = ops.split_each, ops.uniform_each

    def _normal_each(keys, dtype):
        lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
        u = _uniform_each(keys, dtype, lo, 1.0)
        return ew.mul(np.array(np.sqrt(2), dtype), ew.erf_inv(u))

    def c(v):
        return np.array(v, dtype)

    zero, one = c(0), c(1)
    boost_mask = ew.ge(alpha, one)
    alpha_orig = alpha
    alpha = ew.select(boost_mask, alpha, ew.add(alpha, one))
    d = ew.sub(alpha, c(1 / 3))
    scale = ew.div(c(1 / 3), ew.sqrt(d))

    def filled(value, *sources):
        """A loop's initial carry: `value` everywhere, varying (inside shard_map) along
        the manual axes its sources vary along, as the loop body's results do."""
        out = st.full((get_aval(keys).shape[0],), value, dtype)
        for source in sources:
            out = pe.vary_like(out, get_aval(source))
        return out

    def rejected(X, V, U):
        squeeze = ew.ge(U, ew.sub(one, ew.mul(c(0.0331), ew.mul(X, X))))
        log_test = ew.ge(ew.log(U), ew.add(ew.mul(X, c(0.5)), ew.mul(
            d, ew.add(ew.sub(one, V), ew.log(V)))))
        return ew.bitwise_and(squeeze, log_test)

    def draw_x(key):
        """Normal draws x until v = 1 + x * scale > 0, per element."""

        def body(state):
            k, x, v = state
            active = ew.le(v, zero)
            k_next, sub = _split_each(k, 2)
            x_new = _normal_each(sub, dtype)
            v_new = ew.add(one, ew.mul(x_new, scale))
            pick = st.broadcast_in_dim(active, get_aval(k).shape, (0,))
            return (ew.select(pick, k_next, k), ew.select(active, x_new, x),
                    ew.select(active, v_new, v))

        init = (key, filled(0, key, scale), filled(-1, key, scale))
        _, x, v = while_loop(lambda s: _any(ew.le(s[2], zero)), body, init)
        return x, v

    def outer_body(state):
        k, X, V, U = state
        active = rejected(X, V, U)
        k_next, x_key, u_key = _split_each(k, 3)
        x, v = draw_x(x_key)
        pick = st.broadcast_in_dim(active, get_aval(k).shape, (0,))
        return (ew.select(pick, k_next, k), ew.select(active, ew.mul(x, x), X),
                ew.select(active, ew.mul(ew.mul(v, v), v), V),
                ew.select(active, _uniform_each(u_key, dtype), U))

    n = get_aval(keys).shape[0]
    key, subkey = _split_each(keys, 2)
    init = (key, filled(0, key, d), filled(1, key, d), filled(2, key, d))
    _, _, V, _ = while_loop(lambda s: _any(rejected(*s[1:])), outer_body, init)
    if log_space:
        log_samples = ew.log1p(ew.neg(_uniform_each(subkey, dtype)))
        log_boost = ew.select(ew.bitwise_or(boost_mask, ew.eq(log_samples, zero)),
                              st.full((n,), 0, dtype),
                              ew.mul(log_samples, ew.div(one, alpha_orig)))
        return ew.add(ew.add(ew.log(d), ew.log(V)), log_boost)
    samples = ew.sub(one, _uniform_each(subkey, dtype))
    boost = ew.select(boost_mask, st.full((n,), 1, dtype),
                      ew.pow(samples, ew.div(one, alpha_orig)))
    return ew.mul(ew.mul(d, V), boost)


def _gamma_keys_and_alphas(key, a, impl):
    """Each leading key split into one key per element of a's remaining dimensions."""
    width = impl.key_shape
    key_shape = get_aval(key).shape[:-len(width)]
    a_shape = get_aval(a).shape
    n_keys = math.prod(key_shape)
    per_key = math.prod(a_shape[len(key_shape):])
    keys = st.reshape(key, (n_keys, *width))
    if impl.name == "threefry2x32":
        keys = _split_all(keys, per_key)
    else:
        keys = vmap_leading(lambda k: impl.split(k, (per_key,)), keys)
    return st.reshape(keys, (n_keys * per_key, *width)), st.reshape(a, (n_keys * per_key,))


@functools.lru_cache(maxsize=256)
def _gamma_jaxpr(key_aval, a_aval, log_space, impl):
    def f(key, a):
        if a_aval.size == 0:
            return [a]
        keys, alphas = _gamma_keys_and_alphas(key, a, impl)
        if impl.name == "threefry2x32":   # every key's draws at once
            samples = _gamma_flat(keys, alphas, log_space)
        else:   # one key at a time, as JAX does on CPU
            ops = _OneKeyOps(impl)
            samples = lax_map(lambda ka: st.reshape(_gamma_flat(
                st.reshape(ka[0], (1, *impl.key_shape)), st.reshape(ka[1], (1,)),
                log_space, ops), ()), (keys, alphas))
        return [st.reshape(samples, a_aval.shape)]
    closed, _ = pe.trace_to_closed_jaxpr(f, [key_aval, a_aval])
    return closed


def _gamma_abstract_eval(key, a, *, log_space, impl):
    width = impl.key_shape
    if key.dtype != UINT32 or key.shape[-len(width):] != width:
        raise TypeError(f"random_gamma needs raw uint32 keys of shape (..., *{width}) for "
                        f"{impl.name}, got {key}")
    if not dtypes.is_float(a.dtype):
        raise TypeError(f"random_gamma needs a floating alpha, got {a.dtype}")
    batch = key.shape[:key.ndim - len(width)]
    if a.shape[:len(batch)] != batch:
        raise TypeError(f"random_gamma: alpha shape {a.shape} must start with the key "
                        f"shape {batch}")
    return a.strip_weak_type()


def _gamma_impl(key, a, *, log_space, impl):
    closed = _gamma_jaxpr(get_aval(key), get_aval(a).strip_weak_type(), log_space, impl)
    return numpy_backend.execute_closed_jaxpr(closed, [key, a])[0]


def _gamma_lower(ctx, key, a, *, log_space, impl):
    closed = _gamma_jaxpr(key.aval, a.aval.strip_weak_type(), log_space, impl)
    return ctx.lower_jaxpr(closed, [key, a])[0]


def _gamma_batch(args, dims, *, log_space, impl):
    size = batching.axis_size_of(args, dims)
    key, a = (batching.bdim_at_front(x, d, size) for x, d in zip(args, dims))
    return random_gamma_p.bind(key, a, log_space=log_space, impl=impl), 0


def _gamma_jvp(primals, tangents, *, log_space, impl):
    key, a = primals
    _, a_dot = tangents
    sample = random_gamma_p.bind(key, a, log_space=log_space, impl=impl)
    if type(a_dot) is Zero:
        return sample, Zero(ad.tangent_aval(get_aval(sample)))
    if log_space:   # d log(x) = dx / x, with x = exp(log x) kept away from 0
        x = ew.exp(sample)
        tiny = st.full(get_aval(x).shape, dtypes.finfo(get_aval(x).dtype).tiny,
                       get_aval(x).dtype)
        x = ew.select(ew.eq(x, st.full(get_aval(x).shape, 0, get_aval(x).dtype)), tiny, x)
        grad = ew.div(random_gamma_grad(a, x), x)
    else:
        grad = random_gamma_grad(a, sample)
    return sample, ew.mul(a_dot, grad)


def _gamma_samples():
    key = rb.threefry2x32_numpy(np.uint32(0), np.uint32(42), np.zeros(2, UINT32),
                                np.arange(2, dtype=UINT32))
    raw = np.stack(key, axis=-1)
    fry = threefry_prng_impl
    rbg_key = np.array([3, 1, 4, 1], UINT32)
    return [b.Sample([raw[0], np.array([0.5, 1.0, 3.5], np.float32)],
                     {"log_space": False, "impl": fry}),
            b.Sample([raw, np.array([[0.3, 2.0], [1.5, 7.0]], np.float32)],
                     {"log_space": True, "impl": fry}),
            b.Sample([rbg_key, np.array([0.4, 2.5], np.float32)],
                     {"log_space": False, "impl": rbg_prng_impl})]


random_gamma_p = define_primitive(
    "random_gamma", impl=_gamma_impl, abstract_eval=_gamma_abstract_eval,
    jvp=_gamma_jvp, batch=_gamma_batch, lower=_gamma_lower, samples=lambda: _gamma_samples())


# --- d sample / d alpha ----------------------------------------------------------------------
# A sample is x = F^-1(u; a) for a uniform u, F(x; a) = P(a, x) the regularised lower
# incomplete gamma function, so dx/da = -(dP/da)(a, x) / f(x; a) with f the density.
# P(a, x) = sum_n t_n, t_n = x^(a+n) e^-x / Gamma(a+n+1); termwise, dP/da = sum_n t_n
# (log x - digamma(a+n+1)). The terms grow until n ~ x - a and then shrink geometrically,
# so the loop runs past that point and stops once a term no longer changes the sum.

_MAX_TERMS = 4000


def _gamma_grad_flat(a, x):
    dtype = get_aval(a).dtype
    wide = np.dtype(np.float64) if dtypes.canonicalize_dtype(np.float64) == np.float64 \
        else dtype
    a, x = ew.convert_element_type(a, wide), ew.convert_element_type(x, wide)

    def c(v):
        return np.array(v, wide)

    log_x = ew.log(x)
    log_pdf = ew.sub(ew.sub(ew.mul(ew.sub(a, c(1)), log_x), x), ew.lgamma(a))
    n0 = st.full(get_aval(a).shape, 0, wide)

    def body(state):
        n, total, log_term, done = state
        ap = ew.add(ew.add(a, n), c(1))
        term = ew.exp(log_term)
        contribution = ew.mul(term, ew.sub(log_x, ew.digamma(ap)))
        total_new = ew.add(total, ew.select(done, n0, contribution))
        small = ew.bitwise_and(ew.gt(n, ew.sub(x, a)),
                               ew.le(ew.abs(contribution),
                                     ew.mul(c(np.finfo(wide).eps), ew.abs(total_new))))
        return (ew.add(n, c(1)), total_new, ew.add(log_term, ew.sub(log_x, ew.log(ap))),
                ew.bitwise_or(done, small))

    def cond(state):
        n, _, _, done = state
        return ew.bitwise_and(ew.bitwise_not(reductions.reduce_and(
            done, tuple(range(get_aval(done).ndim)))),
            ew.lt(reductions.reduce_max(n, tuple(range(get_aval(n).ndim))), c(_MAX_TERMS)))

    log_t0 = ew.sub(ew.sub(ew.mul(a, log_x), x), ew.lgamma(ew.add(a, c(1))))
    init = (n0, n0, log_t0, st.full(get_aval(a).shape, False, np.bool_))
    _, dp_da, _, _ = while_loop(cond, body, init)
    grad = ew.neg(ew.div(dp_da, ew.exp(log_pdf)))
    bad = ew.bitwise_or(ew.le(a, c(0)), ew.lt(x, c(0)))
    grad = ew.select(bad, st.full(get_aval(a).shape, np.nan, wide), grad)
    grad = ew.select(ew.eq(x, c(0)), n0, grad)
    return ew.convert_element_type(grad, dtype)


@functools.lru_cache(maxsize=256)
def _gamma_grad_jaxpr(aval):
    closed, _ = pe.trace_to_closed_jaxpr(lambda a, x: [_gamma_grad_flat(a, x)], [aval, aval])
    return closed


def _gamma_grad_abstract_eval(a, x):
    if a.shape != x.shape or a.dtype != x.dtype or not dtypes.is_float(a.dtype):
        raise TypeError(f"random_gamma_grad needs float operands of one shape and dtype, "
                        f"got {a} and {x}")
    return a.strip_weak_type()


def _gamma_grad_impl(a, x):
    return numpy_backend.execute_closed_jaxpr(_gamma_grad_jaxpr(get_aval(a)), [a, x])[0]


def _gamma_grad_lower(ctx, a, x):
    return ctx.lower_jaxpr(_gamma_grad_jaxpr(a.aval.strip_weak_type()), [a, x])[0]


random_gamma_grad_p = define_primitive(
    "random_gamma_grad", impl=_gamma_grad_impl, abstract_eval=_gamma_grad_abstract_eval,
    jvp=NOT_DIFFERENTIABLE,
    batch=batching.same_shape_rule, lower=_gamma_grad_lower,
    samples=lambda: [b.Sample([np.array([0.5, 2.0, 9.0], np.float32),
                       np.array([0.3, 1.7, 10.5], np.float32)])])


def random_gamma_grad(a, x):
    """d x / d a for gamma samples x of shape parameter a (implicit differentiation)."""
    return random_gamma_grad_p.bind(a, x)


__all__ = ["random_gamma_p", "random_gamma_grad_p", "random_gamma_grad"]
