"""jax.scipy.special's Bessel functions J_0..J_v, the Fresnel and sine/cosine
integrals, Owen's T, the Faddeeva function wofz and spherical harmonics. Compositions of
jnp and lax, no new primitives: series near the origin, continued fractions away from it,
Gauss-Legendre quadrature for Owen's T, recurrences for the Bessel and Legendre
functions. Every branch is computed and the valid one selected, so all work under jit and
vmap; fresnel, sici, owens_t and wofz differentiate by their closed-form derivatives
(custom JVPs), bessel_jn and sph_harm_y through their recurrences. float16/bfloat16
arguments are computed in float32 (the series need the bits) and rounded back."""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from pyjax._src import dtypes, errors
from pyjax._src.api.custom_derivatives import custom_jvp
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.control_flow.fori import fori_loop
from pyjax._src.lax.control_flow.scan import scan
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import promote_args_inexact

_EULER_GAMMA = 0.5772156649015329
_SQRT_PI = math.sqrt(math.pi)


def _real_operands(name, arguments, *xs, complex_error=ValueError):
    """xs (the arguments named in the string `arguments`) promoted to one real float
    dtype, broadcast, as strong arrays of the dtype to compute in (float32 for narrower
    floats), and the promoted dtype."""
    xs = [lnp.asarray(x) for x in promote_args_inexact(name, *xs)]
    dtype = xs[0].dtype
    if dtypes.is_complex(dtype):
        raise complex_error(f"Argument {arguments} to {name} must be real-valued. Got "
                            f"dtype {dtype}.")
    work = np.promote_types(dtype, np.float32)
    return [lnp.astype(x, work) for x in lnp.broadcast_arrays(*xs)], dtype


def _is_double(x):
    return x.dtype == np.float64


def _const(x, value):
    """value as a rank-0 array of x's dtype (keeps float32 arithmetic in float32)."""
    return np.asarray(value, x.dtype)


def _split(x):
    """x = high + low with each half of x's significand bits (Veltkamp), so that products
    of halves are exact."""
    scaled = _const(x, 2.0 ** 27 + 1 if _is_double(x) else 2.0 ** 12 + 1) * x
    high = scaled - (scaled - x)
    return high, x - high


def _horner(coefficients, u):
    """sum_k coefficients[k] u^k."""
    out = lnp.zeros_like(u) + _const(u, coefficients[-1])
    for c in coefficients[-2::-1]:
        out = out * u + _const(u, c)
    return out


# --- the Faddeeva function w(z) = exp(-z^2) erfc(-iz) ---------------------------------------

@functools.cache
def _weideman_coefficients(n):
    """Coefficients a_1..a_n of Weideman's rational approximation (SIAM J. Numer. Anal.
    31, 1994) for Im z >= 0: w(z) ~ 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)) with
    Z = (L + iz) / (L - iz) and p(Z) = sum_k a_{k+1} Z^k. With t = L tan(theta / 2) the
    a_k are the cosine coefficients of f(t) = exp(-t^2) (L^2 + t^2), computed here by the
    trapezoidal rule on 4n points (spectrally accurate for a smooth periodic f)."""
    length = math.sqrt(n / math.sqrt(2))
    points = 2 * n
    theta = np.pi * np.arange(-points + 1, points) / points
    t = length * np.tan(theta / 2)
    f = np.exp(-t * t) * (length * length + t * t)
    k = np.arange(1, n + 1)
    return length, np.cos(np.outer(k, theta)) @ f / (2 * points)


def _wofz_upper(z, double):
    """w(z) for Im z >= 0 (finite z): Weideman's approximation near the origin, the
    Laplace continued fraction i/sqrt(pi) / (z - (1/2) / (z - 1 / (z - (3/2) / ...)))
    for |z| >= radius, where a few terms suffice."""
    n, radius, cf_terms = (40, 8.0, 12) if double else (20, 6.0, 8)
    far = uf.abs(z) >= radius
    z_near = lnp.where(far, 0, z)
    z_far = lnp.where(far, z, radius)
    length, a = _weideman_coefficients(n)
    big_z = (length + 1j * z_near) / (length - 1j * z_near)
    near = (2 * _horner(a, big_z) / (length - 1j * z_near) ** 2
            + (1 / _SQRT_PI) / (length - 1j * z_near))
    tail = lnp.zeros_like(z_far)
    for k in range(cf_terms, 0, -1):
        tail = (k / 2) / (z_far - tail)
    return lnp.where(far, (1j / _SQRT_PI) / (z_far - tail), near)


def _times(modulus, trig):
    """modulus * trig, 0 where either is 0 (so that 0 * inf and inf * 0 give 0)."""
    return lnp.where((modulus == 0) | (trig == 0), 0, modulus * trig)


def _cos_sin_twice_product(x, y):
    """cos and sin of 2xy, with the rounding error of x * y (Dekker's exact product) added
    back: the phase of exp(-z^2) far from the origin needs more bits than x * y keeps."""
    product = x * y
    x_high, x_low = _split(x)
    y_high, y_low = _split(y)
    error = ((x_high * y_high - product) + x_high * y_low + x_low * y_high) + x_low * y_low
    cos_p, sin_p = uf.cos(2 * product), uf.sin(2 * product)
    cos_e, sin_e = uf.cos(2 * error), uf.sin(2 * error)
    return cos_p * cos_e - sin_p * sin_e, sin_p * cos_e + cos_p * sin_e


@custom_jvp
def _wofz(z):
    x, y = uf.real(z), uf.imag(z)
    lower = y < 0
    # w(z) for Im z >= 0 (w -> 0 at infinity there); below, w(z) = 2 exp(-z^2) - w(-z)
    z_up = lnp.where(lower, -z, z)
    infinite = (uf.isinf(x) | uf.isinf(y)) & ~uf.isnan(x) & ~uf.isnan(y)
    w_up = _wofz_upper(lnp.where(infinite, 0, z_up), x.dtype == np.float64)
    # on the real axis Re w(x) = exp(-x^2) exactly (the approximations only reach it
    # to within an absolute error)
    w_up = lnp.where(y == 0, ew.complex(uf.exp(-x * x), uf.imag(w_up)), w_up)
    w_up = lnp.where(infinite, 0, w_up)
    # exp(-z^2) = exp(y^2 - x^2) (cos 2xy - i sin 2xy), in parts so that overflow gives inf
    # (taking the phase as 0 at infinity)
    modulus = uf.exp((y - x) * (y + x))
    cos_phase, sin_phase = _cos_sin_twice_product(lnp.where(infinite, 0, x),
                                                  lnp.where(infinite, 0, y))
    reflected = ew.complex(2 * _times(modulus, cos_phase) - uf.real(w_up),
                           -2 * _times(modulus, sin_phase) - uf.imag(w_up))
    return lnp.where(lower, reflected, w_up)


@_wofz.defjvp
def _wofz_jvp(primals, tangents):
    (z,), (z_dot,) = primals, tangents
    w = _wofz(z)
    return w, (2j / _SQRT_PI - 2 * z * w) * z_dot


def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz), complex for real or complex z.
    Relative accuracy about 1e-13 (complex128) and 1e-6 (complex64) across the plane."""
    z = lnp.asarray(promote_args_inexact("wofz", z)[0])
    return _wofz(lnp.astype(z, dtypes.complex_dtype(z.dtype)))


# --- Fresnel integrals --------------------------------------------------------------------

def _half_pi_square(x):
    """(cos, sin) of pi x^2 / 2, with x^2 reduced modulo 4 exactly: x is split into a
    high and a low half (Veltkamp) whose products have no rounding error."""
    high, low = _split(x)
    four = _const(x, 4)
    turns = uf.fmod(high * high, four) + uf.fmod(2 * high * low, four) + low * low
    phase = _const(x, math.pi / 2) * uf.fmod(turns, four)
    return uf.cos(phase), uf.sin(phase)


def _fresnel_series(x, double):
    """S(x), C(x) by their power series in u = (pi x^2 / 2)^2 (|x| < 1)."""
    terms = 11 if double else 6
    c_coefficients = [(-1) ** k / (math.factorial(2 * k) * (4 * k + 1)) for k in range(terms)]
    s_coefficients = [(-1) ** k / (math.factorial(2 * k + 1) * (4 * k + 3))
                      for k in range(terms)]
    t = _const(x, math.pi / 2) * x * x
    u = t * t
    return x * t * _horner(s_coefficients, u), x * _horner(c_coefficients, u)


@custom_jvp
def _fresnel(x):
    double = _is_double(x)
    ax = uf.abs(x)
    near = ax < 1
    s_near, c_near = _fresnel_series(lnp.where(near, ax, 0), double)
    # C + iS = (1 + i)/2 (1 - exp(i pi x^2 / 2) w((1 + i) sqrt(pi) x / 2)); beyond
    # `flat`, where 1/(pi x) is below a quarter ulp of 1/2, both are 1/2
    flat = 4 / (math.pi * dtypes.finfo(x.dtype).eps)
    x_far = lnp.where(near | (ax >= flat), 1, ax)
    cos_phase, sin_phase = _half_pi_square(x_far)
    w = _wofz_upper(ew.complex(x_far, x_far) * (_SQRT_PI / 2), double)
    g = (1 + 1j) / 2 * (1 - ew.complex(cos_phase, sin_phase) * w)
    s_far = lnp.where(ax >= flat, 0.5, uf.imag(g))
    c_far = lnp.where(ax >= flat, 0.5, uf.real(g))
    s = lnp.where(near, s_near, s_far)
    c = lnp.where(near, c_near, c_far)
    negative = x < 0
    return lnp.where(negative, -s, s), lnp.where(negative, -c, c)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    cos_phase, sin_phase = _half_pi_square(x)
    return _fresnel(x), (sin_phase * x_dot, cos_phase * x_dot)


def fresnel(x):
    """The Fresnel integrals (S(x), C(x)): the integrals from 0 to x of sin(pi t^2 / 2)
    and cos(pi t^2 / 2). Real x only."""
    (x,), dtype = _real_operands("fresnel", "`x`", x, complex_error=NotImplementedError)
    s, c = _fresnel(x)
    return lnp.astype(s, dtype), lnp.astype(c, dtype)


# --- sine and cosine integrals -----------------------------------------------------------

def _sici_series(x, double):
    """Si(x), Ci(x) by their power series in u = x^2 (0 < x <= 4 in float64, 3 in float32)."""
    terms = 15 if double else 8
    si_coefficients = [(-1) ** k / ((2 * k + 1) * math.factorial(2 * k + 1))
                       for k in range(terms)]
    ci_coefficients = [(-1) ** (k + 1) / ((2 * k + 2) * math.factorial(2 * k + 2))
                       for k in range(terms)]
    u = x * x
    return (x * _horner(si_coefficients, u),
            _EULER_GAMMA + uf.log(x) + u * _horner(ci_coefficients, u))


def _sici_continued_fraction(x, double):
    """Si(x), Ci(x) beyond the series from E1(ix) = -Ci(x) + i (Si(x) - pi/2), with
    E1(z) = exp(-z) / (z + 1 - 1 / (z + 3 - 4 / (z + 5 - 9 / ...)))."""
    terms = 40 if double else 20
    z = ew.complex(lnp.zeros_like(x), x)
    tail = lnp.zeros_like(z)
    for k in range(terms, 0, -1):
        tail = (k * k) / (z + (2 * k + 1) - tail)
    e1 = ew.complex(uf.cos(x), -uf.sin(x)) / (z + 1 - tail)
    return math.pi / 2 + uf.imag(e1), -uf.real(e1)


@custom_jvp
def _sici(x):
    double = _is_double(x)
    ax = uf.abs(x)
    crossover = 4 if double else 3
    near = ax <= crossover
    si_near, ci_near = _sici_series(lnp.where(near, ax, 1), double)
    infinite = uf.isinf(ax)
    si_far, ci_far = _sici_continued_fraction(lnp.where(near | infinite, crossover, ax),
                                              double)
    si = lnp.where(near, si_near, lnp.where(infinite, math.pi / 2, si_far))
    ci = lnp.where(near, ci_near, lnp.where(infinite, 0, ci_far))
    # Si is odd (keeping the sign of -0); Ci(x) for x < 0 is the real part, Ci(|x|),
    # except at -inf, where it has no limit
    return uf.copysign(si, x), lnp.where(x == -np.inf, np.nan, ci)


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    at_zero = x == 0
    safe_x = lnp.where(at_zero, 1, x)
    sin_over_x = lnp.where(at_zero, 1, uf.sin(x) / safe_x)
    return _sici(x), (sin_over_x * x_dot, uf.cos(x) / x * x_dot)


def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)): Si is the integral from 0 to x of
    sin(t)/t, Ci(x) = gamma + log|x| + the integral from 0 to x of (cos(t) - 1)/t (its real
    part for x < 0, as SciPy). Real x only."""
    (x,), dtype = _real_operands("sici", "`x`", x)
    si, ci = _sici(x)
    return lnp.astype(si, dtype), lnp.astype(ci, dtype)


# --- Owen's T function -------------------------------------------------------------------

@functools.cache
def _gauss_legendre_unit(n):
    """Gauss-Legendre nodes and weights on [0, 1]."""
    nodes, weights = np.polynomial.legendre.leggauss(n)
    return (nodes + 1) / 2, weights / 2


def _owens_t_quadrature(h, a):
    """T(h, a) for h >= 0, 0 <= a <= 1, as exp(-h^2/2)/(2 pi) times the integral over
    [0, a] of exp(-h^2 x^2 / 2) / (1 + x^2), cut where exp(-h^2 x^2 / 2) falls below
    the precision, which keeps the integrand smooth enough for Gauss-Legendre."""
    n, cut = (20, 9.0) if _is_double(h) else (10, 6.0)
    nodes, weights = _gauss_legendre_unit(n)
    top = uf.minimum(a, cut / h)
    x = top[..., None] * nodes.astype(h.dtype)
    f = uf.exp(-0.5 * (h[..., None] * x) ** 2) / (1 + x * x)
    integral = red.sum(f * weights.astype(h.dtype), axis=-1)
    return uf.exp(-0.5 * h * h) / (2 * math.pi) * top * integral


def _upper_normal_tail(x):
    """1 - ndtr(x), accurate for large x."""
    return 0.5 * ew.erfc(x * _const(x, 1 / math.sqrt(2)))


@custom_jvp
def _owens_t(h, a):
    # T is even in h and odd in a; beyond |h| = 40 it underflows to 0 in every dtype
    h = uf.minimum(uf.abs(h), 40)
    sign, a = uf.sign(a), uf.abs(a)
    small = a <= 1
    t_small = _owens_t_quadrature(h, lnp.where(small, a, 1))
    # for a > 1: T(h, a) = (Q(h) + Q(ah)) / 2 - Q(h) Q(ah) - T(ah, 1/a), Q(x) = 1 - ndtr(x)
    ah = uf.minimum(lnp.where(small | (h == 0), 0, a * h), 40)
    inverse_a = lnp.where(small, 1, 1 / a)
    q_h, q_ah = _upper_normal_tail(h), _upper_normal_tail(ah)
    t_large = (0.5 * q_h * (1 - 2 * q_ah) + 0.5 * q_ah
               - _owens_t_quadrature(ah, inverse_a))
    return sign * lnp.where(small, t_small, t_large)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    (h, a), (h_dot, a_dot) = primals, tangents
    one_plus_a2 = 1 + a * a
    d_h = -uf.exp(-0.5 * h * h) / (2 * math.sqrt(2 * math.pi)) * ew.erf(
        a * h * _const(h, 1 / math.sqrt(2)))
    d_a = uf.exp(-0.5 * h * h * one_plus_a2) / (2 * math.pi * one_plus_a2)
    return _owens_t(h, a), d_h * h_dot + d_a * a_dot


def owens_t(h, a):
    """Owen's T function: the integral from 0 to a of exp(-h^2 (1 + x^2) / 2) / (1 + x^2),
    over 2 pi. The result is at least float32 (as in JAX)."""
    (h, a), _ = _real_operands("owens_t", "`h` or `a`", h, a)
    return _owens_t(h, a)


# --- Bessel functions of the first kind ---------------------------------------------------

def _static_int(name, arg, value):
    if isinstance(value, Tracer):
        raise errors.ConcretizationTypeError(
            value, f"The error arose in jax.scipy.special.{name} argument `{arg}`: it must "
            "be a static Python integer.\n")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: `{arg}` must be an integer, got {value!r}") from None


def bessel_jn(z, *, v, n_iter=50):
    """J_0(z), ..., J_v(z) stacked along a new leading axis (shape (v + 1, *z.shape)), by
    Miller's backward recurrence on the ratios J_k / J_{k-1} from order v + n_iter down,
    normalised by J_0 + 2 (J_2 + J_4 + ...) = 1. Accurate while |z| is well below
    v + n_iter; raise n_iter for larger |z|."""
    v = _static_int("bessel_jn", "v", v)
    n_iter = _static_int("bessel_jn", "n_iter", n_iter)
    if v < 0 or n_iter < 0:
        raise ValueError(f"bessel_jn: v and n_iter must be non-negative, got v={v}, "
                         f"n_iter={n_iter}")
    (z,), dtype = _real_operands("bessel_jn", "`z`", z)
    top = v + n_iter
    orders = np.arange(top, 0, -1)

    def step(carry, order_and_even):
        # ratio = J_{k+1} / J_k, even_sum = (J_{k+2} + J_{k+4} + ... over even orders) / J_k
        ratio, even_sum = carry
        order, even = order_and_even
        ratio = z / (2 * order - z * ratio)                # J_k / J_{k-1}
        even_sum = ratio * (even + even_sum)               # now relative to J_{k-1}
        return (ratio, even_sum), ratio

    start = (lnp.zeros_like(z), lnp.zeros_like(z))
    xs = (orders.astype(z.dtype), (orders % 2 == 0).astype(z.dtype))
    (_, even_sum), ratios = scan(step, start, xs)
    j0 = 1 / (1 + 2 * even_sum)
    ratios_up = ratios[::-1][:v]                            # J_1/J_0, ..., J_v/J_{v-1}
    out = lnp.concatenate([j0[None], j0 * red.cumprod(ratios_up, axis=0)], axis=0)
    return lnp.astype(out, dtype)


# --- spherical harmonics -----------------------------------------------------------------

def _integer_operand(name, arg, x):
    x = lnp.asarray(x)
    if x.dtype.kind not in "iub":
        raise TypeError(f"{name}: `{arg}` must be an integer array, got dtype {x.dtype}")
    return x


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonic Y_n^m(theta, phi) = N P_n^m(cos theta) exp(i m phi) of degree n
    and order m (Condon-Shortley phase, orthonormal on the sphere); theta is the polar angle.
    n_max, the largest degree, must be static under jit (default max(n)); larger n are
    clipped to it. Zero where |m| > n. The arguments broadcast together."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    n = _integer_operand("sph_harm_y", "n", n)
    m = _integer_operand("sph_harm_y", "m", m)
    if n_max is None:
        concrete = n.to_concrete_value() if isinstance(n, Tracer) else n
        if concrete is None:
            raise errors.ConcretizationTypeError(
                n, "The `n_max` argument of jax.scipy.special.sph_harm_y must be given "
                "statically to use it under jit or other transformations.\n")
        n_max = int(np.max(np.asarray(concrete), initial=0))
    n_max = _static_int("sph_harm_y", "n_max", n_max)
    (theta, phi), _ = _real_operands("sph_harm_y", "`theta` or `phi`", theta, phi,
                                     complex_error=TypeError)
    n, m, theta, phi = lnp.broadcast_arrays(n, m, theta, phi)
    degree = lnp.astype(uf.minimum(n, n_max), theta.dtype)
    order = lnp.astype(uf.abs(m), theta.dtype)
    # P_n^m(x) carries sqrt(1 - x^2) = |sin(theta)|, so negative angles keep their sign
    cos_t, sin_t = uf.cos(theta), uf.abs(uf.sin(theta))

    def diagonal(k, p):
        # normalised P_k^k = -sqrt((2k + 1) / (2k)) sin(theta) P_{k-1}^{k-1}, up to |m|
        k = lnp.astype(k, theta.dtype)
        factor = -uf.sqrt((2 * k + 1) / (2 * k)) * sin_t
        return lnp.where(k <= order, factor * p, p)

    p_mm = fori_loop(1, n_max + 1, diagonal,
                     lnp.full_like(theta, 1 / math.sqrt(4 * math.pi)))

    def upward(j, carry):
        # normalised P_d^m = a (cos(theta) P_{d-1}^m - b P_{d-2}^m) for d = |m| + j <= n
        below, current = carry
        d = order + lnp.astype(j, theta.dtype)
        a = uf.sqrt((4 * d * d - 1) / (d * d - order * order))
        b = uf.sqrt(((d - 1) ** 2 - order * order) / (4 * (d - 1) ** 2 - 1))
        following = a * (cos_t * current - b * below)
        active = d <= degree
        return lnp.where(active, current, below), lnp.where(active, following, current)

    _, p_nm = fori_loop(1, n_max + 1, upward, (lnp.zeros_like(theta), p_mm))
    # Y_n^{-|m|} = (-1)^m conj(Y_n^{|m|})
    odd_negative = (m < 0) & (uf.remainder(m, 2) == 1)
    p_nm = lnp.where(degree < order, 0, lnp.where(odd_negative, -p_nm, p_nm))
    angle = lnp.astype(m, theta.dtype) * phi
    return ew.complex(p_nm * uf.cos(angle), p_nm * uf.sin(angle))
