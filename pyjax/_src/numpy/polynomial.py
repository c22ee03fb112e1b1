"""jax.numpy's polynomial functions (coefficients highest degree first): polyval, polyfit,
poly, roots, polyadd/sub/mul/div, polyder, polyint. As in JAX, leading zeros are kept
unless trim_leading_zeros (which needs concrete values) asks otherwise, and roots of
traced coefficients need strip_zeros=False. Imports the other jnp modules."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import get_aval
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy.lax_numpy import shape as _shape
from pyjax._src.numpy import array_manipulation as more
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import signal
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import check_arraylike, promote_dtypes, promote_dtypes_inexact


def _coeffs(name, *ps):
    check_arraylike(name, *ps)
    out = [lnp.asarray(p) for p in ps]
    for p in out:
        if get_aval(p).ndim != 1:
            raise ValueError(f"jnp.{name}: coefficient arrays must be 1-D, got shape "
                             f"{_shape(p)}")
    return out


def _trim_leading_zeros(p, name):
    values = more.concrete(p, name, "coefficients")
    nz = np.nonzero(values)[0]
    return p[nz[0]:] if len(nz) else p[-1:] if _shape(p)[0] else p


def polyval(p, x, *, unroll=16):
    """p evaluated at x by Horner's scheme (p's first axis holds the coefficients,
    highest power first; more axes are polynomials side by side, broadcast with x)."""
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(lnp.asarray(p), lnp.asarray(x))
    if get_aval(p).ndim == 0:
        raise ValueError("jnp.polyval: p must be an array of coefficients (at least 1-D), "
                         "got a scalar")
    y = lnp.zeros_like(x)
    for i in range(_shape(p)[0]):
        y = y * x + p[i]
    return y


def polyadd(a1, a2):
    """Sum of two polynomials (the shorter padded with leading zeros)."""
    a1, a2 = promote_dtypes(*_coeffs("polyadd", a1, a2))
    n1, n2 = _shape(a1)[0], _shape(a2)[0]
    if n1 < n2:
        a1 = more.pad(a1, (n2 - n1, 0))
    elif n2 < n1:
        a2 = more.pad(a2, (n1 - n2, 0))
    return a1 + a2


def polysub(a1, a2):
    a1, a2 = _coeffs("polysub", a1, a2)
    return polyadd(a1, -a2)


def _convolve_full(a, b):
    """Full linear convolution of two 1-D arrays (as polynomial products need)."""
    n, m = _shape(a)[0], _shape(b)[0]
    if n == 0 or m == 0:
        return lnp.zeros((0,), get_aval(a).dtype)
    products = lnp.ravel(a[:, None] * b[None, :])
    index = (np.arange(n)[:, None] + np.arange(m)[None, :]).reshape(-1)
    return lnp.zeros((n + m - 1,), get_aval(products).dtype).at[index].add(products)


def polymul(a1, a2, *, trim_leading_zeros=False):
    """Product of two polynomials (in an inexact dtype): their full convolution, as JAX
    computes it."""
    a1, a2 = promote_dtypes_inexact(*_coeffs("polymul", a1, a2))
    if trim_leading_zeros:
        a1 = _trim_leading_zeros(a1, "polymul")
        a2 = _trim_leading_zeros(a2, "polymul")
    if _shape(a1)[0] == 0:
        a1 = lnp.zeros(1, get_aval(a2).dtype)
    if _shape(a2)[0] == 0:
        a2 = lnp.zeros(1, get_aval(a1).dtype)
    return signal.convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros=False):
    """(quotient, remainder) of polynomial division u / v (v's leading coefficient must
    be nonzero)."""
    u, v = promote_dtypes_inexact(*_coeffs("polydiv", u, v))
    m, n = _shape(u)[0] - 1, _shape(v)[0] - 1
    scale = 1.0 / v[0]
    q = lnp.zeros((max(m - n + 1, 1),), get_aval(u).dtype)
    r = u
    for k in range(0, m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        r = _trim_leading_zeros(r, "polydiv")
    return q, r


def polyder(p, m=1):
    """The m-th derivative of p (empty when m exceeds the degree), in an inexact dtype as
    in JAX."""
    (p,) = promote_dtypes_inexact(*_coeffs("polyder", p))
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = _shape(p)[0]
    powers = np.arange(n - 1, m - 1, -1)      # the powers of the coefficients kept
    factors = np.prod([powers - j for j in range(m)], axis=0) if n > m else np.zeros(0)
    return p[:max(n - m, 0)] * lnp.asarray(factors, get_aval(p).dtype)


def polyint(p, m=1, k=None):
    """The m-th antiderivative of p with integration constants k (a scalar, or one per
    order; default zeros), in an inexact dtype."""
    m = operator.index(m)
    check_arraylike("polyint", p, 0 if k is None else k)
    p, k = promote_dtypes_inexact(lnp.asarray(p), lnp.asarray(0 if k is None else k))
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = lnp.atleast_1d(k)
    if _shape(k)[0] == 1:
        k = lnp.full((m,), k[0])
    if _shape(k) != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    # the coefficient of x**j picks up (j + 1)(j + 2)...(j + m) from m integrations
    dtype = get_aval(p).dtype
    grid = lnp.arange(_shape(p)[0] + m, dtype=dtype)[None] - lnp.arange(m, dtype=dtype)[:, None]
    return uf.true_divide(lnp.concatenate((p, k)), red.prod(uf.maximum(1, grid), 0)[::-1])
    (p,) = promote_dtypes_inexact(p)
    consts = lnp.zeros((m,), get_aval(p).dtype) if k is None else \
        lnp.ravel(lnp.asarray(k, get_aval(p).dtype))
    if _shape(consts)[0] == 1 and m > 1:
        consts = lnp.broadcast_to(consts, (m,))
    if _shape(consts)[0] != m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    for i in range(m):
        n = _shape(p)[0]
        p = lnp.concatenate([p / lnp.asarray(np.arange(n, 0, -1), get_aval(p).dtype),
                             consts[i:i + 1]])
    return p


def _linalg():
    # jnp.linalg (and its lax families) load on first use, to keep import cheap.
    from pyjax._src.numpy import linalg
    return linalg


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots (or the characteristic
    polynomial of a square matrix)."""
    check_arraylike("poly", seq_of_zeros)
    (z,) = promote_dtypes_inexact(lnp.asarray(seq_of_zeros))
    shape = _shape(z)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] > 0:
        z = _linalg().eigvals(z)
    elif len(shape) != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    coeffs = lnp.ones((1,), get_aval(z).dtype)
    for i in range(_shape(z)[0]):
        coeffs = _convolve_full(coeffs, lnp.stack([lnp.ones((), get_aval(z).dtype), -z[i]]))
    return coeffs


def roots(p, *, strip_zeros=True):
    """Roots of p (complex), the eigenvalues of its companion matrix. strip_zeros
    removes leading and trailing zeros, which needs concrete coefficients; under jit
    pass strip_zeros=False (leading zeros then give NaN roots)."""
    (p,) = _coeffs("roots", p)
    (p,) = promote_dtypes_inexact(p)
    trailing = 0
    if strip_zeros:
        values = more.concrete(p, "roots", "p")
        nz = np.nonzero(values)[0]
        if not len(nz):
            return lnp.zeros((0,), dtypes.complex_dtype(get_aval(p).dtype))
        trailing = len(values) - nz[-1] - 1
        p = p[nz[0]:nz[-1] + 1]
    n = _shape(p)[0] - 1
    if n < 1:
        out = lnp.zeros((0,), dtypes.complex_dtype(get_aval(p).dtype))
    else:
        companion = lnp.zeros((n, n), get_aval(p).dtype)
        companion = companion.at[0, :].set(-p[1:] / p[0])
        if n > 1:
            companion = companion.at[np.arange(1, n), np.arange(n - 1)].set(1)
        out = _linalg().eigvals(companion)
    if trailing:
        out = lnp.concatenate([out, lnp.zeros((trailing,), get_aval(out).dtype)])
    return out


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit of degree deg: the coefficients (and with full=True
    the lstsq diagnostics, with cov=True the coefficient covariance)."""
    check_arraylike("polyfit", x, y)
    x, y = promote_dtypes_inexact(lnp.asarray(x), lnp.asarray(y))
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if get_aval(x).ndim != 1 or _shape(x)[0] == 0:
        raise TypeError("expected a non-empty 1-D array for x")
    if get_aval(y).ndim not in (1, 2) or _shape(y)[0] != _shape(x)[0]:
        raise TypeError("expected y to be 1-D or 2-D with as many rows as x has elements")
    order = deg + 1
    real = get_aval(uf.abs(x)).dtype
    if rcond is None:
        rcond = _shape(x)[0] * float(np.finfo(real).eps)
    lhs = more.vander(x, order)
    rhs = y
    if w is not None:
        w = lnp.asarray(w, get_aval(x).dtype)
        lhs = lhs * w[:, None]
        rhs = rhs * (w if get_aval(rhs).ndim == 1 else w[:, None])
    scale = uf.sqrt(red.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    c, resids, rank, s = _linalg().lstsq(lhs, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, lnp.asarray(rcond, real)
    if cov:
        vbase = _linalg().inv(lnp.matmul(lhs.T, lhs)) / lnp.outer(scale, scale)
        if cov == "unscaled":
            factor = 1.0
        else:
            if _shape(x)[0] <= order:
                raise ValueError("the number of data points must exceed order to scale "
                                 "the covariance matrix")
            factor = resids / (_shape(x)[0] - order)
        if get_aval(y).ndim == 1:
            return c, vbase * factor
        return c, vbase[:, :, None] * factor
    return c
