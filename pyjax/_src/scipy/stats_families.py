"""jax.scipy.stats distribution families betabinom, gennorm, gumbel_l, gumbel_r,
multinomial, nbinom, pareto, truncnorm, vonmises and wrapcauchy, and the sample statistics
mode, rankdata and sem. Built from jax.numpy, lax and jax.scipy.special; the helpers it
shares with the first distributions live in pyjax._src.scipy.stats."""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from pyjax._src import dtypes
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as lax_red
from pyjax._src.numpy import indexing
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import nan_reductions as nanred
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import sorting
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import (
    check_arraylike, convert, promote_dtypes, promote_dtypes_inexact,
)
from pyjax._src.scipy import special as sc
from pyjax._src.scipy.stats import _like, _log_comb, _outside, _standard, norm_logpdf
from pyjax._src.util import canonicalize_axis


def _nan_where(mask, value):
    """nan where `mask` (invalid parameters), else value."""
    return _outside(mask, value, np.nan)


def _log1m_exp(x):
    """log(1 - exp(x)) for x <= 0, accurate at both ends."""
    return _like(lnp.where(x > -math.log(2), uf.log(-uf.expm1(x)), uf.log1p(-uf.exp(x))), x)


# --- Gumbel -----------------------------------------------------------------------------------
# gumbel_l at x is gumbel_r at -x (with -loc): both are written on the standardised variable
# z of the right-skewed form, whose lower tail has log-probability -exp(-z).

def _gumbel_z(name, x, loc, scale, left):
    z, scale = _standard(name, x, loc, scale)
    return (-z if left else z), scale


def _gumbel_logpdf(name, x, loc, scale, left):
    z, scale = _gumbel_z(name, x, loc, scale, left)
    return -z - uf.exp(-z) - uf.log(scale)


def _gumbel_log_tail(name, x, loc, scale, left, upper):
    """log P(X <= x) (upper=False) or log P(X > x) of gumbel_r (left=False) or gumbel_l."""
    z, scale = _gumbel_z(name, x, loc, scale, left)
    log_lower = -uf.exp(-z)   # gumbel_l's upper tail is the right form's lower one
    value = log_lower if upper == left else _log1m_exp(log_lower)
    return _nan_where(scale <= 0, value)


def _gumbel_ppf(name, p, loc, scale, left):
    p, loc, scale = sc.inexact_arrays(name, p, loc, scale)
    z = -uf.log(-uf.log1p(-p)) if left else -uf.log(-uf.log(p))
    value = loc + scale * (-z if left else z)
    return _nan_where((p <= 0) | (p >= 1), value)


def gumbel_r_logpdf(x, loc=0, scale=1):
    return _gumbel_logpdf("gumbel_r.logpdf", x, loc, scale, left=False)


def gumbel_r_pdf(x, loc=0, scale=1):
    return uf.exp(gumbel_r_logpdf(x, loc, scale))


def gumbel_r_logcdf(x, loc=0, scale=1):
    return _gumbel_log_tail("gumbel_r.logcdf", x, loc, scale, left=False, upper=False)


def gumbel_r_cdf(x, loc=0, scale=1):
    return uf.exp(gumbel_r_logcdf(x, loc, scale))


def gumbel_r_logsf(x, loc=0, scale=1):
    return _gumbel_log_tail("gumbel_r.logsf", x, loc, scale, left=False, upper=True)


def gumbel_r_sf(x, loc=0, scale=1):
    return uf.exp(gumbel_r_logsf(x, loc, scale))


def gumbel_r_ppf(p, loc=0, scale=1):
    return _gumbel_ppf("gumbel_r.ppf", p, loc, scale, left=False)


def gumbel_l_logpdf(x, loc=0, scale=1):
    return _gumbel_logpdf("gumbel_l.logpdf", x, loc, scale, left=True)


def gumbel_l_pdf(x, loc=0, scale=1):
    return uf.exp(gumbel_l_logpdf(x, loc, scale))


def gumbel_l_logcdf(x, loc=0, scale=1):
    return _gumbel_log_tail("gumbel_l.logcdf", x, loc, scale, left=True, upper=False)


def gumbel_l_cdf(x, loc=0, scale=1):
    return uf.exp(gumbel_l_logcdf(x, loc, scale))


def gumbel_l_logsf(x, loc=0, scale=1):
    return _gumbel_log_tail("gumbel_l.logsf", x, loc, scale, left=True, upper=True)


def gumbel_l_sf(x, loc=0, scale=1):
    return uf.exp(gumbel_l_logsf(x, loc, scale))


def gumbel_l_ppf(p, loc=0, scale=1):
    return _gumbel_ppf("gumbel_l.ppf", p, loc, scale, left=True)


# --- pareto -----------------------------------------------------------------------------------

def _pareto(name, x, b, loc, scale):
    """(y, b, scale, below): x standardised, and where it lies below the support."""
    x, b, loc, scale = sc.inexact_arrays(name, x, b, loc, scale)
    return (x - loc) / scale, b, scale, x < loc + scale


def pareto_logpdf(x, b, loc=0, scale=1):
    y, b, scale, below = _pareto("pareto.logpdf", x, b, loc, scale)
    return _outside(below, uf.log(b) - uf.log(scale) - (b + 1) * uf.log(y), -np.inf)


def pareto_pdf(x, b, loc=0, scale=1):
    return uf.exp(pareto_logpdf(x, b, loc, scale))


def pareto_logsf(x, b, loc=0, scale=1):
    y, b, _, below = _pareto("pareto.logsf", x, b, loc, scale)
    return _outside(below, -b * uf.log(y), 0.0)


def pareto_sf(x, b, loc=0, scale=1):
    return uf.exp(pareto_logsf(x, b, loc, scale))


def pareto_cdf(x, b, loc=0, scale=1):
    y, b, _, below = _pareto("pareto.cdf", x, b, loc, scale)
    return _outside(below, 1 - uf.power(y, -b), 0.0)


def pareto_logcdf(x, b, loc=0, scale=1):
    y, b, _, below = _pareto("pareto.logcdf", x, b, loc, scale)
    return _outside(below, uf.log1p(-uf.power(y, -b)), -np.inf)


def pareto_ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = sc.inexact_arrays("pareto.ppf", q, b, loc, scale)
    return _nan_where((q < 0) | (q > 1), loc + scale * uf.power(1 - q, -1 / b))


# --- truncnorm --------------------------------------------------------------------------------

def _log_normal_mass(lo, hi):
    """log(ndtr(hi) - ndtr(lo)) for lo <= hi, without cancellation: beyond one standard
    deviation on one side, the mass is that tail's probability times one minus a ratio of
    tail probabilities; otherwise a difference of erf values of opposite signs or small."""
    right, left = lo > 1, hi < -1
    middle = ~(right | left)
    # each branch sees bounds it handles where another is taken, so none feeds an infinity
    # or a nan into the gradient of the branch that is kept
    r_lo, r_hi = lnp.where(right, lo, 2.0), lnp.where(right, hi, 3.0)
    l_lo, l_hi = lnp.where(left, lo, -3.0), lnp.where(left, hi, -2.0)
    m_lo, m_hi = lnp.where(middle, lo, -1.0), lnp.where(middle, hi, 1.0)
    upper_tail = sc.log_ndtr(-r_lo) + _log1m_exp(sc.log_ndtr(-r_hi) - sc.log_ndtr(-r_lo))
    lower_tail = sc.log_ndtr(l_hi) + _log1m_exp(sc.log_ndtr(l_lo) - sc.log_ndtr(l_hi))
    root_half = _like(math.sqrt(0.5), lo)
    central = uf.log(0.5 * (sc.erf(m_hi * root_half) - sc.erf(m_lo * root_half)))
    return _like(lnp.where(right, upper_tail, lnp.where(left, lower_tail, central)), lo)


def _truncnorm(name, x, a, b, loc, scale):
    # strongly typed even for Python-scalar arguments, as JAX's truncnorm returns
    x, a, b, loc, scale = (convert(v, v.dtype) for v in
                           sc.inexact_arrays(name, x, a, b, loc, scale))
    return x, (x - loc) / scale, a, b, loc, scale


def _truncnorm_logcdf(z, a, b):
    """log P(Z <= z) of the standard normal cut to [a, b] (a nan z falls to 0, as in JAX).
    Near the top the lower mass is one minus the small upper one, taken through log1p."""
    inside = (z > a) & (z < b)
    # a point strictly inside [a, b] stands in for z outside it (see _log_normal_mass)
    centre = lnp.where(uf.isfinite(a) & uf.isfinite(b), (a + b) / 2,
                       lnp.where(uf.isfinite(a), a + 1, lnp.where(uf.isfinite(b), b - 1, 0.0)))
    z_in = lnp.where(inside, z, centre)
    log_total = _log_normal_mass(a, b)
    log_lower = _log_normal_mass(a, z_in) - log_total
    log_upper = _log_normal_mass(z_in, b) - log_total
    value = lnp.where(log_upper < -math.log(2), uf.log1p(-uf.exp(log_upper)), log_lower)
    value = lnp.where(z <= a, -np.inf, lnp.where(z < b, value, 0.0))
    return _nan_where(a >= b, _like(value, z))


def truncnorm_logpdf(x, a, b, loc=0, scale=1):
    x, z, a, b, loc, scale = _truncnorm("truncnorm.logpdf", x, a, b, loc, scale)
    value = norm_logpdf(x, loc, scale) - _log_normal_mass(a, b)
    return _nan_where(a >= b, _outside((z < a) | (z > b), value, -np.inf))


def truncnorm_pdf(x, a, b, loc=0, scale=1):
    return uf.exp(truncnorm_logpdf(x, a, b, loc, scale))


def truncnorm_logcdf(x, a, b, loc=0, scale=1):
    _, z, a, b, _, _ = _truncnorm("truncnorm.logcdf", x, a, b, loc, scale)
    return _truncnorm_logcdf(z, a, b)


def truncnorm_cdf(x, a, b, loc=0, scale=1):
    return uf.exp(truncnorm_logcdf(x, a, b, loc, scale))


def truncnorm_logsf(x, a, b, loc=0, scale=1):
    # the upper tail at z is the lower tail of the mirrored distribution at -z
    _, z, a, b, _, _ = _truncnorm("truncnorm.logsf", x, a, b, loc, scale)
    return _truncnorm_logcdf(-z, -b, -a)


def truncnorm_sf(x, a, b, loc=0, scale=1):
    return uf.exp(truncnorm_logsf(x, a, b, loc, scale))


# --- gennorm, vonmises, wrapcauchy ------------------------------------------------------------

def gennorm_logpdf(x, beta):
    x, beta = sc.inexact_arrays("gennorm.logpdf", x, beta)
    return uf.log(0.5 * beta) - ew.lgamma(1 / beta) - uf.power(uf.abs(x), beta)


def gennorm_pdf(x, beta):
    return uf.exp(gennorm_logpdf(x, beta))


def gennorm_cdf(x, beta):
    x, beta = sc.inexact_arrays("gennorm.cdf", x, beta)
    half_mass = 0.5 * sc.gammainc(1 / beta, uf.power(uf.abs(x), beta))
    return _nan_where(beta <= 0, 0.5 + uf.sign(x) * half_mass)


def vonmises_logpdf(x, kappa):
    x, kappa = sc.inexact_arrays("vonmises.logpdf", x, kappa)
    # i0e(kappa) = exp(-kappa) i0(kappa) keeps the normaliser finite for large kappa
    value = kappa * (uf.cos(x) - 1) - uf.log(_like(2 * np.pi, x) * sc.i0e(kappa))
    return _nan_where(~(kappa > 0), value)


def vonmises_pdf(x, kappa):
    return uf.exp(vonmises_logpdf(x, kappa))


def wrapcauchy_logpdf(x, c):
    x, c = sc.inexact_arrays("wrapcauchy.logpdf", x, c)
    value = uf.log1p(-c * c) - uf.log(_like(2 * np.pi, x)) - \
        uf.log1p(c * c - 2 * c * uf.cos(x))
    inside = (x >= 0) & (x <= _like(2 * np.pi, x))
    return _nan_where(~((c > 0) & (c < 1)), _outside(~inside, value, -np.inf))


def wrapcauchy_pdf(x, c):
    return uf.exp(wrapcauchy_logpdf(x, c))


# --- discrete ---------------------------------------------------------------------------------

def betabinom_logpmf(k, n, a, b, loc=0):
    k, n, a, b, loc = sc.inexact_arrays("betabinom.logpmf", k, n, a, b, loc)
    y = uf.floor(k) - loc
    value = _log_comb(n, y) + sc.betaln(y + a, n - y + b) - sc.betaln(a, b)
    value = _outside((y < 0) | (y > n), value, -np.inf)
    return _nan_where((n < 0) | (a <= 0) | (b <= 0), value)


def betabinom_pmf(k, n, a, b, loc=0):
    return uf.exp(betabinom_logpmf(k, n, a, b, loc))


def nbinom_logpmf(k, n, p, loc=0):
    k, n, p, loc = sc.inexact_arrays("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    log_comb = ew.lgamma(n + y) - ew.lgamma(y + 1) - ew.lgamma(n)
    return _outside(y < 0, log_comb + sc.xlogy(n, p) + sc.xlog1py(y, -p), -np.inf)


def nbinom_pmf(k, n, p, loc=0):
    return uf.exp(nbinom_logpmf(k, n, p, loc))


def multinomial_logpmf(x, n, p):
    check_arraylike("multinomial.logpmf", x, n, p)
    x, n = (lnp.asarray(v) for v in promote_dtypes(x, n))
    if x.dtype.kind not in "iub" or n.dtype.kind not in "iub":
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                         f"n.dtype={n.dtype}")
    x, p = (lnp.asarray(v) for v in promote_dtypes_inexact(x, p))
    n = n.astype(x.dtype)
    value = ew.lgamma(n + 1) + red.sum(sc.xlogy(x, p) - ew.lgamma(x + 1), axis=-1)
    return _outside(red.sum(x, axis=-1) != n, value, -np.inf)


def multinomial_pmf(x, n, p):
    return uf.exp(multinomial_logpmf(x, n, p))


# --- sample statistics ------------------------------------------------------------------------

class ModeResult(NamedTuple):
    mode: object
    count: object


def _check_nan_policy(name, nan_policy):
    """mode and rankdata support only nan_policy='propagate', as in JAX."""
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError("Logic for `nan_policy` of omit is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains "
            f"nans. Please check if nans exist in `x` outside of the `{name}` function.")


def _to_last_axis(name, a, axis):
    """(x with the working axis last, that axis): axis=None works on the flattened array."""
    check_arraylike(name, a)
    x = lnp.asarray(a)
    if axis is None:
        return lnp.ravel(x), 0
    axis = canonicalize_axis(axis, x.ndim)
    return lnp.moveaxis(x, axis, -1), axis


def _differs_from_previous(s):
    """For each entry of s (sorted along its last axis), whether it starts a new run of equal
    values; nans count as equal to each other, as sorting puts them together."""
    differs = s[..., 1:] != s[..., :-1]
    if dtypes.is_inexact(s.dtype):
        differs = differs & ~(uf.isnan(s[..., 1:]) & uf.isnan(s[..., :-1]))
    first = lnp.ones(s.shape[:-1] + (1,), bool)
    return lnp.concatenate([first, differs], axis=-1)


def _run_starts(new_run):
    """The index where the run of equal sorted values holding each position starts."""
    positions = lnp.broadcast_to(lnp.arange(new_run.shape[-1]), new_run.shape)
    return lax_red.cummax(lnp.where(new_run, positions, 0), axis=new_run.ndim - 1)


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along `axis` (the smallest among ties) and its count."""
    _check_nan_policy("mode", nan_policy)
    ndim = np.ndim(a)
    # keepdims keeps every dimension of the input when the whole of it is reduced
    keep_shape = (1,) * ndim if axis is None or ndim == 0 else None
    if ndim == 0:
        a, axis = lnp.reshape(lnp.asarray(a), (1,)), 0
    x, axis = _to_last_axis("mode", a, axis)
    if x.shape[-1] == 0:   # an empty sample has no mode: nan, counted 0 (JAX's convention)
        shape = x.shape[:-1]
        most, count = lnp.full(shape, np.nan, dtypes.default_float_dtype()), \
            lnp.zeros(shape, dtypes.default_float_dtype())
    else:
        s = sorting.sort(x, axis=-1)
        starts = _run_starts(_differs_from_previous(s))
        run_length = lnp.arange(s.shape[-1]) - starts + 1
        # the first position where the longest run ends is in the run of the smallest value;
        # the value is read at the run's start, its first occurrence (where JAX's gradient
        # goes)
        end = red.argmax(run_length, axis=-1, keepdims=True)
        start = indexing.take_along_axis(starts, end, axis=-1)
        most = indexing.take_along_axis(s, start, axis=-1)[..., 0]
        count = red.max(run_length, axis=-1).astype(dtypes.default_int_dtype())
    if keepdims and keep_shape is not None:
        most, count = lnp.reshape(most, keep_shape), lnp.reshape(count, keep_shape)
    elif keepdims:
        most, count = lnp.expand_dims(most, axis), lnp.expand_dims(count, axis)
    return ModeResult(most, count)


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks 1..n of the values along `axis` (the flattened array for None), ties resolved
    by `method`; a nan anywhere along the axis makes all its ranks nan."""
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    if np.ndim(a) == 0 and axis is None:
        a = lnp.reshape(lnp.asarray(a), (1,))
    x, axis = _to_last_axis("rankdata", a, axis)
    float_dtype = dtypes.default_float_dtype()
    n = x.shape[-1]
    if n == 0:
        return lnp.moveaxis(lnp.zeros(x.shape, float_dtype), -1, axis)
    order = sorting.argsort(x, axis=-1)
    s = indexing.take_along_axis(x, order, axis=-1)
    positions = lnp.broadcast_to(lnp.arange(n), x.shape)
    if method == "ordinal":
        sorted_ranks = positions + 1
    else:
        new_run = _differs_from_previous(s)
        if method == "dense":
            sorted_ranks = lax_red.cumsum(new_run.astype(positions.dtype), axis=x.ndim - 1)
        else:
            lowest = _run_starts(new_run) + 1
            # a run ends where the next one starts; the last run ends at n
            ends_here = lnp.concatenate([new_run[..., 1:], lnp.ones(x.shape[:-1] + (1,),
                                                                    bool)], axis=-1)
            highest = lax_red.cummin(lnp.where(ends_here, positions, n - 1),
                                     axis=x.ndim - 1, reverse=True) + 1
            sorted_ranks = {"min": lowest, "max": highest,
                            "average": (lowest + highest) / 2}[method]
    inverse = sorting.argsort(order, axis=-1)
    ranks = indexing.take_along_axis(sorted_ranks.astype(float_dtype), inverse, axis=-1)
    if dtypes.is_inexact(x.dtype):
        has_nan = red.any(uf.isnan(x), axis=-1, keepdims=True)
        ranks = lnp.where(has_nan, np.nan, ranks).astype(float_dtype)
    return lnp.moveaxis(ranks, -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean along `axis`: std(ddof) / sqrt(sample size)."""
    check_arraylike("sem", a)
    (x,) = (lnp.asarray(v) for v in promote_dtypes_inexact(a))
    if nan_policy == "propagate":
        size = x.size if axis is None else x.shape[canonicalize_axis(axis, x.ndim)]
        spread = red.std(x, axis=axis, ddof=ddof, keepdims=keepdims)
        return spread / np.sqrt(np.asarray(size, x.dtype))
    if nan_policy == "omit":
        size = red.sum(~uf.isnan(x), axis=axis, keepdims=keepdims).astype(x.dtype)
        return nanred.nanstd(x, axis=axis, ddof=ddof, keepdims=keepdims) / uf.sqrt(size)
    raise ValueError(f"{nan_policy} is not supported")
