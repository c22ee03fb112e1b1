"""jax.scipy.stats: log-densities, densities and distribution functions of the common
distributions (norm, multivariate_normal, uniform, expon, laplace, logistic, cauchy, t,
chi2, gamma, beta, dirichlet, poisson, bernoulli, binom, geom), each exported by a public
module named after the distribution. Built from jax.numpy, lax and jax.scipy.special;
its private helpers also serve stats_families.py."""
from __future__ import annotations

import math

import numpy as np

from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import linalg as lax_linalg
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import linalg as np_linalg
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import convert, promote_dtypes_inexact
from pyjax._src.scipy import special as sc

_LOG_2PI = math.log(2 * math.pi)


def _same_dtype(*xs):
    """Promoted to one inexact dtype, shapes untouched (for functions over vectors)."""
    return [lnp.asarray(x) for x in promote_dtypes_inexact(*xs)]


def _like(value, x):
    """value (a constant, or lnp.where's result) in x's dtype and weak type: results of
    Python-scalar arguments stay weakly typed, as in JAX."""
    return convert(value, x.dtype, weak_type=x.aval.weak_type)


def _standard(name, x, loc, scale):
    x, loc, scale = sc.inexact_arrays(name, x, loc, scale)
    return (x - loc) / scale, scale


def _outside(mask, value, fill):
    return _like(lnp.where(mask, fill, value), value)


# --- norm -------------------------------------------------------------------------------------

def norm_logpdf(x, loc=0, scale=1):
    x, loc, scale = sc.inexact_arrays("norm.logpdf", x, loc, scale)
    scale_sq = uf.square(scale)
    log_normalizer = uf.log(_like(2 * np.pi, x) * scale_sq)
    quadratic = uf.square(x - loc) / scale_sq
    return (log_normalizer + quadratic) / _like(-2, x)


def norm_pdf(x, loc=0, scale=1):
    return uf.exp(norm_logpdf(x, loc, scale))


def norm_cdf(x, loc=0, scale=1):
    z, _ = _standard("norm.cdf", x, loc, scale)
    return sc.ndtr(z)


def norm_logcdf(x, loc=0, scale=1):
    z, _ = _standard("norm.logcdf", x, loc, scale)
    return sc.log_ndtr(z)


def norm_sf(x, loc=0, scale=1):
    z, _ = _standard("norm.sf", x, loc, scale)
    return sc.ndtr(-z)


def norm_logsf(x, loc=0, scale=1):
    z, _ = _standard("norm.logsf", x, loc, scale)
    return sc.log_ndtr(-z)


def norm_ppf(q, loc=0, scale=1):
    q, loc, scale = sc.inexact_arrays("norm.ppf", q, loc, scale)
    return sc.ndtri(q) * scale + loc


def norm_isf(q, loc=0, scale=1):
    q, loc, scale = sc.inexact_arrays("norm.isf", q, loc, scale)
    return norm_ppf(1 - q, loc, scale)


# --- multivariate_normal ---------------------------------------------------------------------

def multivariate_normal_logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf "
                                  "is not supported (as in JAX)")
    x, mean, cov = _same_dtype(x, mean, cov)
    if not mean.shape:
        return -0.5 * uf.square(x - mean) / cov - 0.5 * (_LOG_2PI + uf.log(cov))
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        return -0.5 * red.sum(y * y, axis=-1) / cov - n / 2 * (_LOG_2PI + uf.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal.logpdf got incompatible shapes: mean "
                         f"{mean.shape}, cov {cov.shape}")
    chol = lax_linalg.cholesky(cov)
    diff = x - mean
    batch = np.broadcast_shapes(diff.shape[:-1], cov.shape[:-2])
    if cov.ndim == 2:   # one factor for every point: solve all rows at once
        rows = lnp.reshape(lnp.broadcast_to(diff, batch + (n,)), (-1, n))
        y = lax_linalg.triangular_solve(chol, rows, left_side=False, lower=True,
                                        transpose_a=True)
        y = lnp.reshape(y, batch + (n,))
    else:
        chol_b = lnp.broadcast_to(chol, batch + (n, n))
        rows = lnp.broadcast_to(diff, batch + (n,))[..., None, :]
        y = lax_linalg.triangular_solve(chol_b, rows, left_side=False, lower=True,
                                        transpose_a=True)[..., 0, :]
    log_det = red.sum(uf.log(np_linalg.diagonal(chol)), axis=-1)
    return -0.5 * red.sum(y * y, axis=-1) - n / 2 * _LOG_2PI - log_det


def multivariate_normal_pdf(x, mean, cov):
    return uf.exp(multivariate_normal_logpdf(x, mean, cov))


# --- continuous distributions on an interval or half-line -------------------------------------

def uniform_logpdf(x, loc=0, scale=1):
    x, loc, scale = sc.inexact_arrays("uniform.logpdf", x, loc, scale)
    log_prob = -uf.log(scale) + 0 * x
    return _like(lnp.where((x < loc) | (x > loc + scale), -np.inf, log_prob), x)


def uniform_pdf(x, loc=0, scale=1):
    return uf.exp(uniform_logpdf(x, loc, scale))


def uniform_cdf(x, loc=0, scale=1):
    x, loc, scale = sc.inexact_arrays("uniform.cdf", x, loc, scale)
    return lnp.clip((x - loc) / scale, 0, 1)


def uniform_ppf(q, loc=0, scale=1):
    q, loc, scale = sc.inexact_arrays("uniform.ppf", q, loc, scale)
    return _like(lnp.where((q < 0) | (q > 1), np.nan, loc + q * scale), q)


def expon_logpdf(x, loc=0, scale=1):
    z, scale = _standard("expon.logpdf", x, loc, scale)
    return _outside(z < 0, -z - uf.log(scale), -np.inf)


def expon_pdf(x, loc=0, scale=1):
    return uf.exp(expon_logpdf(x, loc, scale))


def expon_cdf(x, loc=0, scale=1):
    z, _ = _standard("expon.cdf", x, loc, scale)
    return _outside(z < 0, -uf.expm1(-z), 0.0)


def expon_logcdf(x, loc=0, scale=1):
    return uf.log(expon_cdf(x, loc, scale))


def expon_sf(x, loc=0, scale=1):
    z, _ = _standard("expon.sf", x, loc, scale)
    return _outside(z < 0, uf.exp(-z), 1.0)


def expon_logsf(x, loc=0, scale=1):
    z, _ = _standard("expon.logsf", x, loc, scale)
    return _outside(z < 0, -z, 0.0)


def expon_ppf(q, loc=0, scale=1):
    q, loc, scale = sc.inexact_arrays("expon.ppf", q, loc, scale)
    return _outside((q < 0) | (q > 1), -uf.log1p(-q) * scale + loc, np.nan)


def laplace_logpdf(x, loc=0, scale=1):
    z, scale = _standard("laplace.logpdf", x, loc, scale)
    return -uf.log(2 * scale) - uf.abs(z)


def laplace_pdf(x, loc=0, scale=1):
    return uf.exp(laplace_logpdf(x, loc, scale))


def laplace_cdf(x, loc=0, scale=1):
    z, _ = _standard("laplace.cdf", x, loc, scale)
    return _like(lnp.where(z <= 0, 0.5 * uf.exp(z), 1 - 0.5 * uf.exp(-z)), z)


def logistic_logpdf(x, loc=0, scale=1):
    z, scale = _standard("logistic.logpdf", x, loc, scale)
    two = _like(2, z)
    half_z = z / two
    return -two * uf.logaddexp(half_z, -half_z) - uf.log(scale)


def logistic_pdf(x, loc=0, scale=1):
    return uf.exp(logistic_logpdf(x, loc, scale))


def logistic_cdf(x, loc=0, scale=1):
    z, _ = _standard("logistic.cdf", x, loc, scale)
    return sc.expit(z)


def logistic_sf(x, loc=0, scale=1):
    z, _ = _standard("logistic.sf", x, loc, scale)
    return sc.expit(-z)


def logistic_ppf(x, loc=0, scale=1):
    x, loc, scale = sc.inexact_arrays("logistic.ppf", x, loc, scale)
    return sc.logit(x) * scale + loc


def logistic_isf(x, loc=0, scale=1):
    x, loc, scale = sc.inexact_arrays("logistic.isf", x, loc, scale)
    return -sc.logit(x) * scale + loc


def cauchy_logpdf(x, loc=0, scale=1):
    z, scale = _standard("cauchy.logpdf", x, loc, scale)
    return -uf.log(_like(np.pi, z) * scale) - uf.log1p(uf.square(z))


def cauchy_pdf(x, loc=0, scale=1):
    return uf.exp(cauchy_logpdf(x, loc, scale))


def cauchy_cdf(x, loc=0, scale=1):
    z, _ = _standard("cauchy.cdf", x, loc, scale)
    return 0.5 + uf.arctan(z) / _like(np.pi, z)


def cauchy_logcdf(x, loc=0, scale=1):
    return uf.log(cauchy_cdf(x, loc, scale))


def cauchy_sf(x, loc=0, scale=1):
    z, _ = _standard("cauchy.sf", x, loc, scale)
    return 0.5 - uf.arctan(z) / _like(np.pi, z)


def cauchy_logsf(x, loc=0, scale=1):
    return uf.log(cauchy_sf(x, loc, scale))


def cauchy_ppf(q, loc=0, scale=1):
    q, loc, scale = sc.inexact_arrays("cauchy.ppf", q, loc, scale)
    return loc + scale * uf.tan(_like(np.pi, q) * (q - 0.5))


def cauchy_isf(q, loc=0, scale=1):
    q, loc, scale = sc.inexact_arrays("cauchy.isf", q, loc, scale)
    return loc + scale * uf.tan(_like(np.pi, q) * (0.5 - q))


def t_logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = sc.inexact_arrays("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half = (df + 1) / 2
    normalize = ew.lgamma(half) - ew.lgamma(df / 2) - 0.5 * uf.log(df * np.pi) - \
        uf.log(scale)
    return normalize - half * uf.log1p(uf.square(z) / df)


def t_pdf(x, df, loc=0, scale=1):
    return uf.exp(t_logpdf(x, df, loc, scale))


# --- gamma family -------------------------------------------------------------------------------

def gamma_logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = sc.inexact_arrays("gamma.logpdf", x, a, loc, scale)
    below = x < loc
    # a stand-in y below the support keeps log(y) from making a nan (jax.debug_nans)
    y = lnp.where(below, 1, (x - loc) / scale)
    log_prob = sc.xlogy(a - 1, y) - y - ew.lgamma(a) - uf.log(scale)
    return _outside(below, log_prob, -np.inf)


def gamma_pdf(x, a, loc=0, scale=1):
    return uf.exp(gamma_logpdf(x, a, loc, scale))


def gamma_cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = sc.inexact_arrays("gamma.cdf", x, a, loc, scale)
    y = (x - loc) / scale
    return sc.gammainc(a, lnp.clip(y, 0, np.inf))


def gamma_logcdf(x, a, loc=0, scale=1):
    return uf.log(gamma_cdf(x, a, loc, scale))


def gamma_sf(x, a, loc=0, scale=1):
    x, a, loc, scale = sc.inexact_arrays("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return sc.gammaincc(a, lnp.clip(y, 0, np.inf))


def gamma_logsf(x, a, loc=0, scale=1):
    return uf.log(gamma_sf(x, a, loc, scale))


def chi2_logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = sc.inexact_arrays("chi2.logpdf", x, df, loc, scale)
    return gamma_logpdf(x, df / 2, loc, 2 * scale)


def chi2_pdf(x, df, loc=0, scale=1):
    return uf.exp(chi2_logpdf(x, df, loc, scale))


def chi2_cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = sc.inexact_arrays("chi2.cdf", x, df, loc, scale)
    return gamma_cdf(x, df / 2, loc, 2 * scale)


def chi2_logcdf(x, df, loc=0, scale=1):
    return uf.log(chi2_cdf(x, df, loc, scale))


def chi2_sf(x, df, loc=0, scale=1):
    x, df, loc, scale = sc.inexact_arrays("chi2.sf", x, df, loc, scale)
    return gamma_sf(x, df / 2, loc, 2 * scale)


def chi2_logsf(x, df, loc=0, scale=1):
    return uf.log(chi2_sf(x, df, loc, scale))


def beta_logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = sc.inexact_arrays("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    log_prob = sc.xlogy(a - 1, y) + sc.xlog1py(b - 1, -y) - sc.betaln(a, b) - uf.log(scale)
    log_prob = _outside((x < loc) | (x > loc + scale), log_prob, -np.inf)
    # the distribution is undefined unless a, b and scale are positive (nan, as JAX)
    return _outside((a <= 0) | (b <= 0) | (scale <= 0), log_prob, np.nan)


def beta_pdf(x, a, b, loc=0, scale=1):
    return uf.exp(beta_logpdf(x, a, b, loc, scale))


def beta_cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = sc.inexact_arrays("beta.cdf", x, a, b, loc, scale)
    return _like(sc.betainc(a, b, lnp.clip((x - loc) / scale, 0, 1)), x)


def beta_logcdf(x, a, b, loc=0, scale=1):
    return uf.log(beta_cdf(x, a, b, loc, scale))


def beta_sf(x, a, b, loc=0, scale=1):
    # the upper tail of beta(a, b) is the lower tail of beta(b, a): no 1 - cdf cancellation
    x, a, b, loc, scale = sc.inexact_arrays("beta.sf", x, a, b, loc, scale)
    return _like(sc.betainc(b, a, 1 - lnp.clip((x - loc) / scale, 0, 1)), x)


def beta_logsf(x, a, b, loc=0, scale=1):
    return uf.log(beta_sf(x, a, b, loc, scale))


def dirichlet_logpdf(x, alpha):
    x, alpha = _same_dtype(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(f"`x` must have either the same number of entries as `alpha` or "
                         f"one entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    alpha_b = lnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    if x.shape[0] != alpha.shape[0]:
        x = lnp.concatenate([x, 1 - red.sum(x, axis=0, keepdims=True)], axis=0)
    normalize = red.sum(ew.lgamma(alpha)) - ew.lgamma(red.sum(alpha))
    log_probs = red.sum(sc.xlogy(alpha_b - 1, x), axis=0) - normalize
    inside = red.all((x >= 0) & (x <= 1), axis=0) & \
        (uf.abs(red.sum(x, axis=0) - 1) < 1e-5)
    return _like(lnp.where(inside, log_probs, -np.inf), log_probs)


def dirichlet_pdf(x, alpha):
    return uf.exp(dirichlet_logpdf(x, alpha))


# --- discrete -----------------------------------------------------------------------------------

def _log_comb(n, k):
    """log of the binomial coefficient (n choose k), for real n and k."""
    return ew.lgamma(n + 1) - ew.lgamma(k + 1) - ew.lgamma(n - k + 1)


def poisson_logpmf(k, mu, loc=0):
    k, mu, loc = sc.inexact_arrays("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_prob = sc.xlogy(x, mu) - ew.lgamma(x + 1) - mu
    return _like(lnp.where((x < 0) | (x != uf.floor(x)), -np.inf, log_prob), k)


def poisson_pmf(k, mu, loc=0):
    return uf.exp(poisson_logpmf(k, mu, loc))


def poisson_cdf(k, mu, loc=0):
    k, mu, loc = sc.inexact_arrays("poisson.cdf", k, mu, loc)
    x = k - loc
    p = sc.gammaincc(uf.floor(1 + lnp.clip(x, 0, np.inf)), mu)
    return _outside(x < 0, p, 0.0)


# The entropy of a Poisson distribution has no closed form: below this mean it is summed over
# the first _POISSON_TERMS counts (the mass beyond them is far below float64's resolution
# there), above it taken from its asymptotic series in 1/mu.
_POISSON_SERIES_FROM = 20.0
_POISSON_TERMS = 100


def poisson_entropy(mu, loc=0):
    mu, loc = sc.inexact_arrays("poisson.entropy", mu, loc)
    shape = np.broadcast_shapes(mu.shape, loc.shape)   # loc moves nothing, but broadcasts
    mu = convert(mu, mu.dtype)   # strongly typed, as JAX returns it
    small = mu < _POISSON_SERIES_FROM
    # each branch sees a safe mean where the other is taken, so neither feeds a nan or an
    # infinity into the gradient of the branch that is kept
    # mu = 0 is summed at mu = 1 and its entropy, 0, set at the end: every log-probability
    # summed is then finite, and so is the gradient of -p log p where p underflows
    mu_small = _like(lnp.where(small & (mu > 0), mu, 1.0), mu)[..., None]
    k = lnp.arange(_POISSON_TERMS, dtype=mu.dtype)
    log_p = k * uf.log(mu_small) - mu_small - ew.lgamma(k + 1)
    summed = -red.sum(uf.exp(log_p) * log_p, axis=-1)
    m = _like(lnp.where(small, _POISSON_SERIES_FROM, mu), mu)
    inv = 1 / m
    series = 0.5 * uf.log(_like(2 * np.pi * np.e, m) * m) - inv * (
        _like(1 / 12, m) + inv * (_like(1 / 24, m) + inv * _like(19 / 360, m)))
    value = lnp.where(mu == 0, 0.0, lnp.where(small, summed, series))
    return lnp.broadcast_to(_like(lnp.where(mu < 0, np.nan, value), mu), shape)


def bernoulli_logpmf(k, p, loc=0):
    k, p, loc = sc.inexact_arrays("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_prob = lnp.where(x == 1, uf.log(p), uf.log1p(-p))
    return _like(lnp.where((x == 0) | (x == 1), log_prob, -np.inf), k)


def bernoulli_pmf(k, p, loc=0):
    return uf.exp(bernoulli_logpmf(k, p, loc))


def bernoulli_cdf(k, p):
    """P(X <= k); NaN for a NaN input or p outside [0, 1]."""
    k, p = sc.inexact_arrays("bernoulli.cdf", k, p)
    invalid = uf.isnan(k) | uf.isnan(p) | (p < 0) | (p > 1)
    return _like(lnp.where(invalid, np.nan,
                           lnp.where(k < 0, 0.0, lnp.where(k < 1, 1 - p, 1.0))), k)


def bernoulli_ppf(q, p):
    q, p = sc.inexact_arrays("bernoulli.ppf", q, p)
    return _like(lnp.where((q < 0) | (q > 1), np.nan, lnp.where(q <= 1 - p, 0.0, 1.0)), q)


def binom_logpmf(k, n, p, loc=0):
    k, n, p, loc = sc.inexact_arrays("binom.logpmf", k, n, p, loc)
    y = k - loc
    log_prob = _log_comb(n, y) + sc.xlogy(y, p) + sc.xlog1py(n - y, -p)
    inside = (y >= 0) & (y <= n) & (y == uf.floor(y))
    return _like(lnp.where(inside, log_prob, -np.inf), k)


def binom_pmf(k, n, p, loc=0):
    return uf.exp(binom_logpmf(k, n, p, loc))


def geom_logpmf(k, p, loc=0):
    k, p, loc = sc.inexact_arrays("geom.logpmf", k, p, loc)
    x = k - loc
    log_prob = sc.xlog1py(x - 1, -p) + uf.log(p)
    return _like(lnp.where(x <= 0, -np.inf, log_prob), k)


def geom_pmf(k, p, loc=0):
    return uf.exp(geom_logpmf(k, p, loc))
