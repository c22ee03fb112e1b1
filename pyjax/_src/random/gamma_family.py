"""jax.random samplers built on gamma variates (gamma, loggamma, beta, dirichlet, t,
chisquare, f, generalized_normal, ball), the counting samplers (poisson, binomial,
multinomial) and the multivariate ones (multivariate_normal, orthogonal), each following
JAX's recipe so a key gives JAX's values. Imports lax, dtypes, jax.numpy and jax.nn."""
from __future__ import annotations

import numpy as np

from pyjax._src import dtypes
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as lax_reductions
from pyjax._src.lax.control_flow.loops import while_loop
from pyjax._src.lax.control_flow.scan import scan
from pyjax._src.lax.random_gamma import random_gamma_p
from pyjax._src.nn.functions import softmax
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import linalg
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.random import distributions as dist
from pyjax._src.random.keys import canonical_shape, split_keys, unwrap
from pyjax._src.lax.sharding_constraint import takes_out_sharding


def _gamma_raw(data, a, shape, dtype, log_space=False):
    if shape is None:
        shape = dist.shape_of(a)
    else:
        dist.check_shape("gamma", shape, dist.shape_of(a))
    a = dist.as_dtype(a, dtype)
    if dist.shape_of(a) != tuple(shape):
        a = lnp.broadcast_to(a, shape)
    return random_gamma_p.bind(data._base, a, log_space=log_space, impl=data._impl)


def _shape_arg(shape, name):
    return None if shape is None else canonical_shape(shape, name)


@takes_out_sharding
@dist.compiled()
def gamma(key, a, shape=None, dtype=None):
    """Gamma samples of shape parameter a and scale 1."""
    data, _ = unwrap(key, "gamma")
    dtype = dist.float_dtype(dtype, "gamma")
    return _gamma_raw(data, a, _shape_arg(shape, "gamma"), dtype)


@takes_out_sharding
@dist.compiled()
def loggamma(key, a, shape=None, dtype=None):
    """log of gamma samples, computed in log space (accurate for small a)."""
    data, _ = unwrap(key, "loggamma")
    dtype = dist.float_dtype(dtype, "loggamma")
    return _gamma_raw(data, a, _shape_arg(shape, "loggamma"), dtype, log_space=True)


@takes_out_sharding
@dist.compiled()
def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) samples, as G_a / (G_a + G_b) of gamma samples (in log space)."""
    data, _ = unwrap(key, "beta")
    dtype = dist.float_dtype(dtype, "beta")
    shape = dist.sample_shape("beta", shape, a, b)
    a, b = dist.as_dtype(a, dtype), dist.as_dtype(b, dtype)
    key_a, key_b = dist.split_raw(data, 2)
    a, b = lnp.broadcast_to(a, shape), lnp.broadcast_to(b, shape)
    log_a = _gamma_raw(key_a, a, shape, dtype, log_space=True)
    log_b = _gamma_raw(key_b, b, shape, dtype, log_space=True)
    log_max = ew.max(log_a, log_b)
    ga, gb = uf.exp(log_a - log_max), uf.exp(log_b - log_max)
    return ga / (ga + gb)


@takes_out_sharding
@dist.compiled()
def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) samples over alpha's last axis."""
    data, _ = unwrap(key, "dirichlet")
    dtype = dist.float_dtype(dtype, "dirichlet")
    alpha_shape = dist.shape_of(alpha)
    if len(alpha_shape) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{len(alpha_shape)}")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        shape = canonical_shape(shape, "dirichlet")
        dist.check_shape("dirichlet", shape, alpha_shape[:-1])
    alpha = dist.as_dtype(alpha, dtype)
    log_g = _gamma_raw(data, alpha, (*shape, alpha_shape[-1]), dtype, log_space=True)
    return softmax(log_g, -1)


@takes_out_sharding
@dist.compiled()
def t(key, df, shape=None, dtype=None):
    """Student's t samples with df degrees of freedom."""
    data, _ = unwrap(key, "t")
    dtype = dist.float_dtype(dtype, "t")
    shape = dist.sample_shape("t", shape, df)
    df = dist.as_dtype(df, dtype)
    key_n, key_g = dist.split_raw(data, 2)
    n = dist.normal_raw(key_n, shape, dtype)
    half_df = ew.div(df, np.array(2, dtype))
    g = _gamma_raw(key_g, half_df, shape, dtype)
    return n * uf.sqrt(half_df / g)


def _chisquare_raw(data, df, shape, dtype):
    df = dist.as_dtype(df, dtype)
    half_df = ew.div(df, np.array(2, dtype))
    log_g = _gamma_raw(data, half_df, shape, dtype, log_space=True)
    return ew.mul(uf.exp(log_g), np.array(2, dtype))


@takes_out_sharding
@dist.compiled()
def chisquare(key, df, shape=None, dtype=None):
    """Chi-square samples with df degrees of freedom."""
    data, _ = unwrap(key, "chisquare")
    dtype = dist.float_dtype(dtype, "chisquare")
    return _chisquare_raw(data, df, dist.sample_shape("chisquare", shape, df), dtype)


@takes_out_sharding
@dist.compiled()
def f(key, dfnum, dfden, shape=None, dtype=None):
    """F-distribution samples: (chi2(dfnum)/dfnum) / (chi2(dfden)/dfden)."""
    data, _ = unwrap(key, "f")
    dtype = dist.float_dtype(dtype, "f")
    shape = dist.sample_shape("f", shape, dfnum, dfden)
    dfden, dfnum = dist.as_dtype(dfden, dtype), dist.as_dtype(dfnum, dtype)
    key_den, key_num = dist.split_raw(data, 2)
    num = ew.div(_chisquare_raw(key_num, dfnum, shape, dtype), dfnum)
    den = ew.div(_chisquare_raw(key_den, dfden, shape, dtype), dfden)
    return ew.div(num, den)


@takes_out_sharding
@dist.compiled()
def generalized_normal(key, p, shape=(), dtype=None):
    """Samples with density proportional to exp(-|x|^p)."""
    data, _ = unwrap(key, "generalized_normal")
    dtype = dist.float_dtype(dtype, "generalized_normal")
    return _generalized_normal_raw(data, p, canonical_shape(shape, "generalized_normal"),
                                   dtype)


def _generalized_normal_raw(data, p, shape, dtype):
    k_g, k_r = dist.split_raw(data, 2)
    g = _gamma_raw(k_g, 1 / p, shape, dtype)
    r = dist._rademacher_raw(k_r, shape, dtype)
    return r * g ** (1 / p)


@takes_out_sharding
@dist.compiled("d")
def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit p-norm ball of dimension d."""
    data, _ = unwrap(key, "ball")
    dtype = dist.float_dtype(dtype, "ball")
    shape = canonical_shape(shape, "ball")
    d = int(d)
    k1, k2 = dist.split_raw(data, 2)
    g = _generalized_normal_raw(k1, p, (*shape, d), dtype)
    e = dist.exponential_raw(k2, shape, dtype)
    return g / ((red.sum(uf.abs(g) ** p, axis=-1) + e) ** (1 / p))[..., None]


# --- counts -------------------------------------------------------------------------------

def _poisson_knuth(data, lam, shape, dtype, max_iters):
    """Knuth's method: count uniform draws until their product falls below e^-lam."""
    def body(carry):
        i, k, rng, log_prod = carry
        rng, sub = dist.split_raw(rng, 2)
        k = ew.select(log_prod > -lam, k + 1, k)
        u = dist.uniform_raw(sub, shape, np.dtype(np.float32))
        return i + 1, k, rng, log_prod + uf.log(u)

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return red.any(log_prod > -lam) & (i < max_iters)

    k0 = lnp.zeros(shape, dtype)
    log0 = lnp.zeros(shape, np.float32)
    k = while_loop(cond, body, (0, k0, data, log0))[1]
    return lnp.astype(k - 1, dtype)


def _poisson_rejection(data, lam, shape, dtype, max_iters):
    """Hormann's transformed rejection, for large rates."""
    log_lam = uf.log(lam)
    b = 0.931 + 2.53 * uf.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, rng = carry
        rng, sub0, sub1 = dist.split_raw(rng, 3)
        u = dist.uniform_raw(sub0, shape, lam.dtype) - 0.5
        v = dist.uniform_raw(sub1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = uf.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = uf.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        tt = -lam + k * log_lam - ew.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= tt))
        return i + 1, ew.select(accept, k, k_out), accepted | accept, rng

    def cond(carry):
        i, _, accepted, _ = carry
        return red.any(~accepted) & (i < max_iters)

    k0 = lnp.full(shape, -1, lam.dtype)
    acc0 = lnp.full(shape, False, np.bool_)
    k = while_loop(cond, body, (0, k0, acc0, data))[1]
    return lnp.astype(k, dtype)


@takes_out_sharding
@dist.compiled()
def poisson(key, lam, shape=None, dtype=None):
    """Poisson samples of rate lam."""
    data, _ = unwrap(key, "poisson")
    dtype = dist.int_dtype(dtype, "poisson")
    shape = dist.shape_of(lam) if shape is None else canonical_shape(shape, "poisson")
    lam = dist.as_dtype(lnp.broadcast_to(lam, shape), np.float32)
    use_knuth = uf.isnan(lam) | (lam < 10)
    lam_knuth = ew.select(use_knuth, lam, lnp.zeros_like(lam))
    lam_rejection = ew.select(use_knuth, lnp.full_like(lam, 1e5), lam)
    max_iters = np.array(np.iinfo(dtype).max, dtype)
    result = ew.select(use_knuth, _poisson_knuth(data, lam_knuth, shape, dtype, max_iters),
                       _poisson_rejection(data, lam_rejection, shape, dtype, max_iters))
    return ew.select(lam == 0, lnp.zeros_like(result), result)


def _stirling_tail(k):
    values = lnp.asarray(np.array(
        [0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287], k.dtype))
    use_table = k <= 9
    k = ew.clamp(np.array(0, k.dtype), k, np.array(9, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return ew.select(use_table, values[lnp.astype(uf.floor(k), np.int32)], approx)


def _binomial_inversion(data, count, prob, shape, max_iters):
    log1m = uf.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, rng = carry
        sub, rng = dist.split_raw(rng, 2)
        num_geom = ew.select(geom_sum <= count, num_geom + 1, num_geom)
        u = dist.uniform_raw(sub, shape, prob.dtype)
        geom_sum = geom_sum + uf.ceil(uf.log(u) / log1m)
        return i + 1, num_geom, geom_sum, rng

    def cond(carry):
        return red.any(carry[2] <= count) & (carry[0] < max_iters)

    zeros = lnp.zeros(shape, prob.dtype)
    return while_loop(cond, body, (0, zeros, zeros, data))[1] - 1


def _btrs(data, count, prob, shape, max_iters):
    """The transformed rejection sampler of Hormann (1993), for large n * p."""
    stddev = uf.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = uf.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, rng = carry
        rng, sub0, sub1 = dist.split_raw(rng, 3)
        u = dist.uniform_raw(sub0, shape, prob.dtype) - 0.5
        v = dist.uniform_raw(sub1, shape, prob.dtype)
        us = 0.5 - abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = uf.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = uf.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * uf.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * uf.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * uf.log(r * (count - k + 1) / (k + 1))
              + _stirling_tail(m) + _stirling_tail(count - m)
              - _stirling_tail(k) - _stirling_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, ew.select(accept, k, k_out), accepted | accept, rng

    def cond(carry):
        return red.any(~carry[2]) & (carry[0] < max_iters)

    init = (0, lnp.full(shape, -1, prob.dtype), lnp.full(shape, False, np.bool_), data)
    return while_loop(cond, body, init)[1]


@dist.compiled()
def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) samples (as floats, like JAX)."""
    data, _ = unwrap(key, "binomial")
    dtype = dist.float_dtype(dtype, "binomial")
    shape = dist.sample_shape("binomial", shape, n, p)
    prob = dist._to_inexact(p)
    count = lnp.broadcast_to(dist.as_dtype(n, prob.dtype), shape)
    prob = lnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = ew.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = uf.isnan(count) | (count < 0.0)
    count_inf = uf.isinf(count)
    q_is_nan = uf.isnan(q)
    q_l_0 = q < 0.0
    q = ew.select(q_is_nan | q_l_0, lnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = uf.floor(count)
    count_inv = ew.select(use_inversion, count, lnp.full_like(count, 0.0))
    count_btrs = ew.select(use_inversion, lnp.full_like(count, 1e4), count)
    q_btrs = ew.select(use_inversion, lnp.full_like(q, 0.5), q)
    max_iters = np.array(dtypes.finfo(dtype).max, dtype)
    samples = ew.select(use_inversion,
                        lnp.astype(_binomial_inversion(data, count_inv, q, shape, max_iters),
                                   dtype),
                        lnp.astype(_btrs(data, count_btrs, q_btrs, shape, max_iters), dtype))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = ew.select(invalid, lnp.full_like(samples, np.nan), samples)
    samples = ew.select(count_inf & ~invalid, lnp.full_like(samples, np.inf), samples)
    return ew.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                     lnp.astype(count, dtype) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Counts of n draws over the categories of p's last axis."""
    data, _ = unwrap(key, "multinomial")
    dtype = dist.float_dtype(dtype, "multinomial")
    n, p = dist._to_inexact(n), dist._to_inexact(p)
    dt = dtypes.result_type(n, p)
    n, p = lnp.astype(n, dt), lnp.astype(p, dt)
    shape = p.shape if shape is None else canonical_shape(shape, "multinomial")
    n = lnp.broadcast_to(n, shape[:-1])
    p = lnp.moveaxis(lnp.broadcast_to(p, shape), -1, 0)
    remaining = lax_reductions.cumsum(p, 0, reverse=True)
    ratios = p / lnp.where(remaining == 0, 1, remaining)
    keys = split_keys(data, (ratios.shape[0],))

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = binomial(k, remainder, lnp.clip(ratio, 0, 1),
                         dtype=remainder.dtype)
        return remainder - count, count

    _, counts = scan(step, n, (ratios, keys), unroll=unroll)
    return lnp.astype(lnp.moveaxis(counts, 0, -1), dtype)


# --- multivariate -----------------------------------------------------------------------------

@takes_out_sharding
@dist.compiled("method")
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Samples of N(mean, cov) over the last axis; cov is factored by cholesky, eigh or
    svd."""
    data, _ = unwrap(key, "multivariate_normal")
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean, cov = dist._to_inexact(mean), dist._to_inexact(cov)
    dt = dtypes.result_type(mean, cov)
    mean, cov = lnp.astype(mean, dt), lnp.astype(cov, dt)
    dtype = mean.dtype if dtype is None else dist.float_dtype(dtype, "multivariate_normal")
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        shape = canonical_shape(shape, "multivariate_normal")
        dist.check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = linalg.svd(cov)
        factor = u * uf.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = linalg.eigh(cov)
        factor = v * uf.sqrt(w[..., None, :])
    else:
        factor = linalg.cholesky(cov)
    z = dist.normal_raw(data, (*shape, n), dtype)
    return mean + red.sum(factor * z[..., None, :], axis=-1)


@takes_out_sharding
@dist.compiled("n", "m")
def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Random n x m matrices with orthonormal columns (rows when n < m), uniform in the
    Haar measure."""
    data, _ = unwrap(key, "orthogonal")
    dtype = dist.float_dtype(dtype, "orthogonal", allow_complex=True)
    shape = canonical_shape(shape, "orthogonal")
    n = int(n)
    m = n if m is None else int(m)
    z = dist.normal_raw(data, (*shape, max(n, m), min(n, m)), dtype)
    q, r = linalg.qr(z)
    d = linalg.diagonal(r)
    x = q * lnp.expand_dims(uf.sign(d), -2)
    return lnp.matrix_transpose(x) if n < m else x

