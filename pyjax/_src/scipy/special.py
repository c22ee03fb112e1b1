"""jax.scipy.special: gamma-family functions, error functions, logistic and entropy
helpers, incomplete gamma/beta, Bessel I0/I1, zeta and the exponential integrals, with
JAX's formulas and derivatives (custom JVPs where JAX has them, e.g. xlogy at x = 0).
Built from lax (incl. lax.special's SciPy-backed primitives) and jax.numpy."""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from pyjax._src import dtypes
from pyjax._src.api.autodiff import jvp
from pyjax._src.api.custom_derivatives import custom_jvp
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import special as ls
from pyjax._src.lax.control_flow.loops import while_loop
from pyjax._src.nn import functions as nn
from pyjax._src.nn.functions import logsumexp  # noqa: F401
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import promote_args_inexact
from pyjax._src.scipy.special_bessel_fresnel import _wofz as faddeeva


def inexact_arrays(name, *xs):
    """xs promoted to one inexact dtype (Python scalars stay weak) and one rank, as arrays;
    `name` is the function the errors name."""
    return [lnp.asarray(x) for x in promote_args_inexact(name, *xs)]


def _one(name, x):
    return inexact_arrays(name, x)[0]


_SUPPORTED = "x.dtype={} is not supported, see docstring for supported types."


def _float32_or_64(x, message=_SUPPORTED):
    """x as an array, for the functions whose JAX implementation has float32 and float64
    coefficients only: other dtypes (float16, bfloat16, integers) are JAX's TypeError."""
    x = lnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(message.format(x.dtype))
    return x


# --- gamma family -----------------------------------------------------------------------------

def gammaln(x):
    """log |Gamma(x)|."""
    return ew.lgamma(_one("gammaln", x))


def gammasgn(x):
    """The sign of Gamma(x): -1 between negative odd and even integers, else 1; nan at
    the poles (negative integers and -inf), and the sign of a signed zero at 0."""
    x = _one("gammasgn", x)
    floor_x = uf.floor(x)
    negative = x < 0
    sign = lnp.where(negative & (uf.remainder(floor_x, 2) != 0), -1.0, 1.0)
    sign = lnp.where((x == 0) & uf.signbit(x), -1.0, sign)
    pole = (negative & (x == floor_x)) | uf.isnan(x)
    return lnp.where(pole, np.nan, sign).astype(x.dtype)


def gamma(x):
    """The gamma function: gammasgn(x) * exp(gammaln(x)) for real x; for complex x
    Lanczos' approximation with the reflection formula, nan+nanj at the poles."""
    x = _one("gamma", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return _complex_gamma(x)
    return gammasgn(x) * uf.exp(ew.lgamma(x))


def loggamma(x):
    """log Gamma(x): for real x, for x > 0 (nan for x <= 0, as JAX); for complex x the
    principal branch (one cut, along the negative real axis, as SciPy), nan+nanj at the
    poles."""
    x = _one("loggamma", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return _complex_loggamma(x)
    return lnp.where(x <= 0, np.nan, ew.lgamma(x)).astype(x.dtype)


# Lanczos' approximation with g = 7 and 9 coefficients (GSL's lanczos_7_c, as JAX uses)
_LANCZOS_G = 7.0
_LANCZOS_COEFFICIENTS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
                         771.32342877765313, -176.61502916214059, 12.507343278686905,
                         -0.13857109526572012, 9.9843695780195716e-6,
                         1.5056327351493116e-7)


def _lanczos_loggamma(z):
    """log Gamma(z) for complex z with Re z >= 1/2, where the approximation holds and
    its logarithms stay on the principal branch."""
    w = z - 1
    series = _LANCZOS_COEFFICIENTS[0] + sum(
        c / (w + k) for k, c in enumerate(_LANCZOS_COEFFICIENTS[1:], start=1))
    t = w + (_LANCZOS_G + 0.5)
    return 0.5 * math.log(2 * math.pi) + (w + 0.5) * uf.log(t) - t + uf.log(series)


def _complex_poles(z):
    """Where complex z is nan or a pole of Gamma (0, -1, -2, ... on the real axis)."""
    re = uf.real(z)
    return ((uf.imag(z) == 0) & (re <= 0) & (re == uf.floor(re))) | uf.isnan(z)


def _complex_gamma(z):
    pole = _complex_poles(z)
    z = lnp.where(pole, 1, z)      # a finite stand-in, so no nan reaches the gradients
    reflect = uf.real(z) < 0.5
    log_gamma = _lanczos_loggamma(lnp.where(reflect, 1 - z, z))
    # Gamma(z) = pi / (sin(pi z) Gamma(1 - z)) for Re z < 1/2
    sine = uf.sin(np.pi * lnp.where(reflect, z, 0.5))
    reflected = math.log(math.pi) - uf.log(sine) - log_gamma
    out = uf.exp(lnp.where(reflect, reflected, log_gamma))
    return lnp.where(pole, complex(np.nan, np.nan), out).astype(z.dtype)


def _complex_loggamma(z):
    """Principal-branch log Gamma: for Re z < 1/2, z is shifted right by n =
    ceil(1/2 - Re z) with log Gamma(z) = log Gamma(z + n) - sum_(k<n) log(z + k); the
    sum of principal logs is continuous off the negative real axis, as SciPy's branch."""
    pole = _complex_poles(z)
    z = lnp.where(pole, 1, z)
    shift = uf.maximum(uf.ceil(0.5 - uf.real(z)), 0)

    def add_log(state):
        k, total = state
        active = k < shift
        return k + 1, total + lnp.where(active, uf.log(lnp.where(active, z + k, 1)), 0)

    _, logs = while_loop(lambda state: red.any(state[0] < shift), add_log,
                         (lnp.zeros((), shift.dtype), lnp.zeros_like(z)))
    out = _lanczos_loggamma(z + shift) - logs
    return lnp.where(pole, complex(np.nan, np.nan), out).astype(z.dtype)


def digamma(x):
    """d/dx log Gamma(x)."""
    return ew.digamma(_one("digamma", x))


def polygamma(n, x):
    """The n-th derivative of digamma (n a non-negative integer)."""
    n_arr = lnp.asarray(n)
    if n_arr.dtype.kind not in "iu":
        raise ValueError("Argument `n` to polygamma must be of integer type. "
                         f"Got dtype {n_arr.dtype}.")
    n, x = inexact_arrays("polygamma", n, x)
    return ew.polygamma(n, x)


def betaln(a, b):
    """log |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b), as cdflib's betaln (which
    SciPy and JAX use): with a <= b, once b >= 8 the difference gammaln(b) -
    gammaln(a + b) comes from Stirling's series, which keeps its accuracy for large b
    where the difference of two large lgammas cancels."""
    a, b = inexact_arrays("betaln", a, b)
    a, b = uf.minimum(a, b), uf.maximum(a, b)
    small_b = ew.lgamma(a) + (ew.lgamma(b) - ew.lgamma(a + b))
    large_b = ew.lgamma(a) + _lgamma_difference(a, lnp.where(b < 8, 8, b))
    return lnp.where(b < 8, small_b, large_b)


# Stirling-series coefficients of del(x) = lgamma(x) - ((x - 1/2) log x - x + log(2 pi)/2)
# ~ sum_k c_k / x^(2k+1), as fitted in cdflib's algdiv.
_STIRLING_CORRECTION = (0.833333333333333e-01, -0.277777777760991e-02,
                        0.793650666825390e-03, -0.595202931351870e-03,
                        0.837308034031215e-03, -0.165322962780713e-02)


def _lgamma_difference(a, b):
    """lgamma(b) - lgamma(a + b) for 0 < a <= b, b >= 8 (cdflib's algdiv).

    Written as del(b) - del(a + b) - (a + b - 1/2) log1p(a / b) - a (log b - 1); the
    correction difference sum_k c_k (1/b^(2k+1) - 1/(a+b)^(2k+1)) is evaluated as
    (c / b) sum_k c_k s_(2k+1) / b^(2k) with x = a / (a + b), c = x and
    s_n = (1 - x^n) / (1 - x), which has no cancellation."""
    x = (a / b) / (1 + a / b)
    x2 = x * x
    s = [lnp.ones_like(x)]                   # s_1, s_3, s_5, ...: s_(n+2) = 1 + x + x^2 s_n
    for _ in _STIRLING_CORRECTION[1:]:
        s.append(1 + (x + x2 * s[-1]))
    t = (1 / b) ** 2
    w = _STIRLING_CORRECTION[-1] * s[-1]
    for coefficient, s_n in zip(_STIRLING_CORRECTION[-2::-1], s[-2::-1]):
        w = w * t + coefficient * s_n
    w = w * (x / b)
    u = (b + (a - 0.5)) * uf.log1p(a / b)
    v = a * (uf.log(b) - 1)
    # subtract the smaller of u, v first, for accuracy
    return lnp.where(u <= v, (w - v) - u, (w - u) - v)


def beta(a, b):
    """The beta function B(a, b)."""
    a, b = inexact_arrays("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * uf.exp(betaln(a, b))


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d (a static integer)."""
    d = int(d)
    a = _one("multigammaln", a)
    constant = np.asarray(d * (d - 1) / 4 * math.log(math.pi), a.dtype)
    terms = [ew.lgamma(a - np.asarray(j / 2, a.dtype)) for j in range(d)]
    return constant + sum(terms[1:], terms[0])


def factorial(n, exact=False):
    """n! = Gamma(n + 1) (0 for negative n)."""
    if exact:
        raise NotImplementedError("factorial with exact=True is not supported (as in JAX)")
    n = _one("factorial", n)
    return lnp.where(n < 0, 0.0, uf.exp(ew.lgamma(n + 1))).astype(n.dtype)


def comb(N, k, *, repetition=False):
    """The number of combinations of N things taken k at a time (with repetition: of
    N + k - 1, and 1 for k == 0); 0 outside 0 <= k <= N."""
    N, k = inexact_arrays("comb", N, k)
    if repetition:
        return lnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k)).astype(N.dtype)
    valid = (k <= N) & (N >= 0) & (k >= 0)
    safe_N, safe_k = lnp.where(valid, N, 0.0), lnp.where(valid, k, 0.0)
    log_comb = ew.lgamma(safe_N + 1) - ew.lgamma(safe_k + 1) - ew.lgamma(safe_N + 1 - safe_k)
    return lnp.where(valid, uf.exp(log_comb), 0.0).astype(N.dtype)


def softmax(x, /, *, axis=None):
    """scipy.special.softmax: over all axes unless `axis` is given."""
    return nn.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """scipy.special.log_softmax: over all axes unless `axis` is given."""
    return nn.log_softmax(x, axis=axis)


def poch(z, m):
    """The rising factorial Gamma(z + m) / Gamma(z)."""
    z, m = inexact_arrays("poch", z, m)
    return lnp.where(m == 0.0, 1.0, gamma(z + m) / gamma(z)).astype(z.dtype)


def gammainc(a, x):
    """The regularised lower incomplete gamma function P(a, x)."""
    return ls.igamma(*inexact_arrays("gammainc", a, x))


def gammaincc(a, x):
    """The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return ls.igammac(*inexact_arrays("gammaincc", a, x))


def betainc(a, b, x):
    """The regularised incomplete beta function I_x(a, b)."""
    return ls.betainc(*inexact_arrays("betainc", a, b, x))


# --- error functions and the normal distribution -------------------------------------------------

def erf(x):
    return ew.erf(_one("erf", x))


def erfc(x):
    return ew.erfc(_one("erfc", x))


def erfinv(x):
    return ew.erf_inv(_one("erfinv", x))


def erfcx(x):
    """exp(x^2) * erfc(x), without overflow; for complex x, the Faddeeva function w(ix)."""
    x = _one("erfcx", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return faddeeva(ew.complex(-uf.imag(x), uf.real(x)))
    return ls.erfcx(x)


def ndtr(x):
    """The standard normal CDF, accurate in both tails."""
    x = _float32_or_64(x)
    half_sqrt2 = np.asarray(0.5 * math.sqrt(2), x.dtype)
    w = x * half_sqrt2
    z = uf.abs(w)
    y = lnp.where(z < half_sqrt2, 1.0 + ew.erf(w),
                  lnp.where(w > 0, 2.0 - ew.erfc(z), ew.erfc(z)))
    return (0.5 * y).astype(x.dtype)


def ndtri(p):
    """The inverse of ndtr."""
    return ls.ndtri(_float32_or_64(p))


# log_ndtr's segments per dtype: log(ndtr(x)) between them, -ndtr(-x) above, and the
# asymptotic series below (JAX's bounds)
_LOG_NDTR_SEGMENTS = {np.dtype(np.float32): (-10.0, 5.0), np.dtype(np.float64): (-20.0, 8.0)}


def _log_ndtr_lower(x, series_order):
    """log(ndtr(x)) for x << -1: log of the leading term times the asymptotic series
    1 - 1/x^2 + 3/x^4 - ... of `series_order` terms, summed odd and even apart."""
    dtype = x.dtype.type
    x_2 = ew.square(x)
    log_scale = (dtype(-0.5) * x_2 - ew.log(-x)
                 - np.asarray(0.5 * np.log(2.0 * np.pi), x.dtype))
    even_sum, odd_sum = lnp.zeros_like(x), lnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = np.asarray(np.prod(np.arange(2 * n - 1, 1, -2)), x.dtype) / x_2n
        if n % 2:
            odd_sum = odd_sum + y
        else:
            even_sum = even_sum + y
        x_2n = x_2n * x_2
    return log_scale + ew.log(dtype(1.0) + even_sum - odd_sum)


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _log_ndtr(x, series_order):
    lower, upper = (np.asarray(v, x.dtype) for v in _LOG_NDTR_SEGMENTS[x.dtype])
    above = ew.gt(x, upper)
    ndtr_res = ndtr(lnp.where(above, -x, ew.max(x, lower)))   # one ndtr for both
    return lnp.where(above, -ndtr_res,
                     lnp.where(ew.gt(x, lower), ew.log(ndtr_res),
                               _log_ndtr_lower(ew.min(x, lower), series_order)))


@_log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    log_pdf = np.asarray(-0.5, x.dtype) * ew.square(x) - np.asarray(
        np.log(np.sqrt(2 * np.pi)), x.dtype)
    return ans, t * ew.exp(log_pdf - ans)


def log_ndtr(x, series_order=3):
    """log(ndtr(x)), as JAX computes it in float32 and float64 only: log of ndtr between
    two bounds, -ndtr(-x) above (log(1 - p) ~ -p), an asymptotic series of
    `series_order` terms below."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    return _log_ndtr(_float32_or_64(x, "x.dtype={} is not supported."), series_order)


def dawsn(x):
    """Dawson's integral exp(-x^2) * integral_0^x exp(t^2) dt."""
    return ls.dawsn(_one("dawsn", x))


# --- logistic and entropy -------------------------------------------------------------------------

def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return ew.logistic(_one("expit", x))


def logit(x):
    """log(x / (1 - x)), the inverse of expit."""
    x = _one("logit", x)
    return uf.log(x / (1 - x))


@custom_jvp
def xlogy(x, y):
    """x * log(y), defined as 0 where x == 0 (also when y == 0; a nan y stays nan)."""
    x, y = inexact_arrays("xlogy", x, y)
    return lnp.where((x != 0) | uf.isnan(y), x * uf.log(y), lnp.zeros_like(x))


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = xlogy(x, y)
    return out, (x_dot * uf.log(y) + y_dot * x / y).astype(out.dtype)


@custom_jvp
def xlog1py(x, y):
    """x * log1p(y), defined as 0 where x == 0 (also when y == -1; a nan y stays nan)."""
    x, y = inexact_arrays("xlog1py", x, y)
    return lnp.where((x != 0) | uf.isnan(y), x * uf.log1p(y), lnp.zeros_like(x))


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = xlog1py(x, y)
    return out, (x_dot * uf.log1p(y) + y_dot * x / (1 + y)).astype(out.dtype)


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    # d/dx x log x = log x + 1 (-inf at 0, as JAX has it); xlogy's rule would give the
    # y-derivative x / x = nan there
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (uf.log(x) + 1)


def entr(x):
    """-x log x for x > 0, -0 at 0, -inf for x < 0 (nan stays nan)."""
    x = _one("entr", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("entr does not support complex-valued inputs.")
    return lnp.where(x < 0, -np.inf, -_xlogx(x)).astype(x.dtype)


def rel_entr(p, q):
    """p log(p / q) (0 where p == 0 and q >= 0; inf outside the domain)."""
    p, q = inexact_arrays("rel_entr", p, q)
    both = (p > 0) & (q > 0)
    safe_q = lnp.where(both, q, 1)
    value = xlogy(p, p / safe_q)
    return lnp.where(both, value, lnp.where((p == 0) & (q >= 0), 0.0, np.inf)).astype(
        p.dtype)


def kl_div(p, q):
    """p log(p / q) - p + q (q where p == 0 and q >= 0; inf outside the domain; nan
    where p or q is nan)."""
    p, q = inexact_arrays("kl_div", p, q)
    both = (p > 0) & (q > 0)
    safe_q = lnp.where(both, q, 1)
    value = xlogy(p, p / safe_q) - p + q
    out = lnp.where(both, value, lnp.where((p == 0) & (q >= 0), q, np.inf))
    return lnp.where(uf.isnan(p) | uf.isnan(q), np.nan, out).astype(p.dtype)


def boxcox(x, lmbda):
    """The Box-Cox transform: (x^lmbda - 1) / lmbda, log(x) when lmbda == 0."""
    x, lmbda = inexact_arrays("boxcox", x, lmbda)
    safe = lnp.where(lmbda == 0, 1, lmbda)
    return lnp.where(lmbda == 0, uf.log(x), uf.expm1(lmbda * uf.log(x)) / safe)


def boxcox1p(x, lmbda):
    """boxcox(1 + x, lmbda), accurate for small x."""
    x, lmbda = inexact_arrays("boxcox1p", x, lmbda)
    safe = lnp.where(lmbda == 0, 1, lmbda)
    return lnp.where(lmbda == 0, uf.log1p(x), uf.expm1(lmbda * uf.log1p(x)) / safe)


# --- Bessel, zeta, exponential integrals, hypergeometric ------------------------------------------

def i0e(x):
    """exp(-|x|) I0(x)."""
    return ls.bessel_i0e(_one("i0e", x))


def i1e(x):
    """exp(-|x|) I1(x)."""
    return ls.bessel_i1e(_one("i1e", x))


def i0(x):
    """The modified Bessel function of the first kind, order 0."""
    x = _one("i0", x)
    return uf.exp(uf.abs(x)) * ls.bessel_i0e(x)


def i1(x):
    """The modified Bessel function of the first kind, order 1."""
    x = _one("i1", x)
    return uf.exp(uf.abs(x)) * ls.bessel_i1e(x)


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (Riemann's when q is None)."""
    if q is None:
        x = _one("zeta", x)
        q = lnp.ones_like(x)
    return _zeta(*lnp.broadcast_arrays(*inexact_arrays("zeta", x, q)))


@custom_jvp
def _zeta(x, q):
    return ls.zeta(x, q)


@_zeta.defjvp
def _zeta_jvp(primals, tangents):
    # d/dq is -x zeta(x + 1, q); d/dx has no closed form, so (as JAX) it is the derivative
    # of the Euler-Maclaurin expansion
    (x, q), (x_dot, q_dot) = primals, tangents
    _, along_x = jvp(lambda s: _zeta_euler_maclaurin(s, q), (x,), (x_dot,))
    return _zeta(x, q), along_x - x * _zeta(x + 1, q) * q_dot


def _bernoulli_over_factorial(count):
    """B_2j / (2j)! for j = 1 .. count, from the recurrence
    B_m = -sum_(k<m) C(m + 1, k) B_k / (m + 1)."""
    numbers = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        numbers.append(-sum(math.comb(m + 1, k) * numbers[k] for k in range(m)) / (m + 1))
    return np.array([float(numbers[2 * j] / math.factorial(2 * j))
                     for j in range(1, count + 1)])


_EULER_MACLAURIN_TERMS = {np.dtype(np.float32): 8, np.dtype(np.float64): 16}
_BERNOULLI_OVER_FACTORIAL = _bernoulli_over_factorial(16)


def _zeta_euler_maclaurin(s, a):
    """zeta(s, a) = sum_(k<N) (a + k)^-s + (a + N)^(1-s) / (s - 1) + (a + N)^-s (1/2 +
    sum_(j=1..M) B_2j / (2j)! s (s + 1) ... (s + 2j - 2) / (a + N)^(2j - 1))
    (Johansson 2015, eq. 5), with N = M = 8 in float32 and 16 in float64."""
    n = _EULER_MACLAURIN_TERMS.get(np.dtype(a.dtype), 16)
    head = red.sum((a[..., None] + np.arange(n, dtype=a.dtype)) ** -s[..., None], axis=-1)
    shifted = a + n
    integral = shifted ** (1 - s) / (s - 1)
    # s / A, s (s + 1) (s + 2) / A^3, ...: every other partial product of (s + m) / A
    rising = red.cumprod((s[..., None] + np.arange(2 * n, dtype=s.dtype))
                         / shifted[..., None], axis=-1)[..., ::2]
    rising = uf.minimum(rising, dtypes.finfo(s.dtype).max)
    corrections = red.sum(rising * _BERNOULLI_OVER_FACTORIAL[:n].astype(s.dtype), axis=-1)
    return head + integral + shifted ** -s * (0.5 + corrections)


def expi(x):
    """The exponential integral Ei(x)."""
    return ls.expi(_one("expi", x))


def exp1(x):
    """The exponential integral E1(x)."""
    return ls.exp1(_one("exp1", x))


def expn(n, x):
    """The generalised exponential integral E_n(x) for integer n >= 0."""
    n = lnp.asarray(n)
    if n.dtype.kind not in "iu":
        n = lnp.astype(n, dtypes.default_int_dtype())
    x = _one("expn", x)
    shape = np.broadcast_shapes(n.shape, x.shape)
    return ls.expn(lnp.broadcast_to(n, shape), lnp.broadcast_to(x, shape))


def spence(x):
    """Spence's function (the dilogarithm Li2(1 - x))."""
    return ls.spence(_float32_or_64(x))


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x)."""
    return _hyp1f1(*lnp.broadcast_arrays(*inexact_arrays("hyp1f1", a, b, x)))


@custom_jvp
def _hyp1f1(a, b, x):
    return ls.hyp1f1(a, b, x)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals, tangents):
    (a, b, x), (a_dot, b_dot, x_dot) = primals, tangents
    slope_a, slope_b = _hypergeometric_parameter_slopes((a,), (b,), x)
    slope_x = a / b * _hyp1f1(a + 1, b + 1, x)
    return _hyp1f1(a, b, x), slope_a * a_dot + slope_b * b_dot + slope_x * x_dot


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x)."""
    return _hyp2f1(*lnp.broadcast_arrays(*inexact_arrays("hyp2f1", a, b, c, x)))


@custom_jvp
def _hyp2f1(a, b, c, x):
    return ls.hyp2f1(a, b, c, x)


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals, tangents):
    (a, b, c, x), (a_dot, b_dot, c_dot, x_dot) = primals, tangents
    slope_a, slope_b, slope_c = _hypergeometric_parameter_slopes((a, b), (c,), x)
    slope_x = a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x)
    return (_hyp2f1(a, b, c, x),
            slope_a * a_dot + slope_b * b_dot + slope_c * c_dot + slope_x * x_dot)


def _hypergeometric_parameter_slopes(upper, lower, x):
    """The derivatives of pFq(upper; lower; x) = sum_k t_k, t_k = prod (u)_k / prod (l)_k
    x^k / k!, in each parameter (upper ones first), summed term by term:
    dt_k/du = t_k sum_(j<k) 1 / (u + j) and dt_k/dl = -t_k sum_(j<k) 1 / (l + j). As
    JAX's series, it stops once every term is below the dtype's resolution of its sum,
    or after 250 terms. All arguments have one shape."""
    params = (*upper, *lower)
    eps = dtypes.finfo(x.dtype).eps

    def cond(state):
        k, term, harmonics, slopes = state
        growing = [uf.abs(term * h) > eps * uf.abs(s) for h, s in zip(harmonics, slopes)]
        return (k < 250) & red.any(lnp.stack(growing))

    def body(state):
        k, term, harmonics, slopes = state
        slopes = tuple(s + term * h for s, h in zip(slopes, harmonics))
        k_float = lnp.astype(k, x.dtype)
        ratio = x / (k_float + 1)
        for u in upper:
            ratio = ratio * (u + k_float)
        for low in lower:
            ratio = ratio / (low + k_float)
        harmonics = tuple(h + 1 / (p + k_float) for h, p in zip(harmonics, params))
        return k + 1, term * ratio, harmonics, slopes

    first = x
    for u in upper:
        first = first * u
    for low in lower:
        first = first / low
    state = (lnp.asarray(1, np.int32), first, tuple(1 / p for p in params),
             tuple(lnp.zeros_like(x) for _ in params))
    slopes = while_loop(cond, body, state)[-1]
    return (*slopes[:len(upper)], *(-s for s in slopes[len(upper):]))


def bernoulli(n):
    """The Bernoulli numbers B_0 .. B_n (n a static integer)."""
    n = int(n)
    if n < 0:
        raise ValueError(f"bernoulli: n must be non-negative, got {n}")
    import scipy.special   # imported on first use: it is slow to import
    return lnp.asarray(scipy.special.bernoulli(n).astype(dtypes.default_float_dtype()))

