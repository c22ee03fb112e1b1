"""jax.scipy.optimize: minimize with BFGS or L-BFGS, driven by a strong-Wolfe line search
(the bracketing and zoom of Nocedal & Wright, Algorithms 3.5 and 3.6). Every loop is a
lax.while_loop, so minimize works under jit and vmap.

The line search keeps two behaviours of JAX's that SciPy lacks, so that results (and
failures) agree with JAX's: the zoom gives up as soon as its interval's *signed* width
a_hi - a_lo drops below a threshold (so it fails whenever the bracket is reversed, after
evaluating one more trial step), and its interpolation safeguards use that signed width.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from pyjax._src.api.autodiff import value_and_grad
from pyjax._src.lax.control_flow.conditionals import cond
from pyjax._src.lax.control_flow.fori import fori_loop
from pyjax._src.lax.control_flow.loops import while_loop
from pyjax._src.numpy import array_manipulation, lax_numpy as lnp
from pyjax._src.numpy import linalg as np_linalg
from pyjax._src.numpy import ufuncs
from pyjax._src.numpy.util import promote_dtypes_inexact


class OptimizeResults(NamedTuple):
    """Result of minimize: the solution x, success (converged without a line-search
    failure), status (0 converged, 1 out of iterations, 2 + the line search's status when
    it failed), fun and jac at x, hess_inv (the BFGS inverse-Hessian estimate), the
    numbers of function and gradient evaluations nfev and njev, and iterations nit."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


class _LineSearchResults(NamedTuple):
    failed: Any
    nfev: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any   # 0 ok, 1 zoom failed, 3 out of iterations


def _dot(a, b):
    return lnp.matmul(a, b, precision="highest")


def _quadratic_minimum(a, fa, fpa, b, fb):
    """Minimiser of the parabola through (a, fa) with slope fpa there, and (b, fb)."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db * db)
    return a - fpa / (2 * curvature)


def _cubic_minimum(a, fa, fpa, b, fb, c, fc):
    """Minimiser of the cubic through (a, fa) with slope fpa there, (b, fb) and (c, fc);
    NaN when it has none (callers then fall back)."""
    db, dc = b - a, c - a
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    denominator = (db * dc) ** 2 * (db - dc)
    cubic = (dc ** 2 * rb - db ** 2 * rc) / denominator
    quadratic = (-dc ** 3 * rb + db ** 3 * rc) / denominator
    radical = quadratic * quadratic - 3 * cubic * fpa
    return a + (-quadratic + ufuncs.sqrt(radical)) / (3 * cubic)


def line_search(f, xk, pk, old_fval, old_old_fval, gfk, c1=1e-4, c2=0.9, maxiter=10):
    """A step a along pk from xk meeting the strong Wolfe conditions
    f(xk + a pk) <= f(xk) + c1 a f'(0) and |f'(a)| <= c2 |f'(0)|. The first trial step
    is SciPy's guess from the last decrease old_old_fval - old_fval (at most 1), or 1
    when old_old_fval is None."""
    xk, pk = promote_dtypes_inexact(xk, pk)
    dtype = pk.dtype
    value_and_gradient = value_and_grad(f)

    def phi(a):   # f, its slope along pk, and its gradient at xk + a pk
        value, g = value_and_gradient(xk + a * pk)
        return value, ufuncs.real(_dot(g, pk)), g

    phi0, dphi0 = old_fval, ufuncs.real(_dot(gfk, pk))
    if old_old_fval is None:
        start = lnp.ones((), dtype)
    else:
        start = 1.01 * 2 * (phi0 - old_old_fval) / dphi0
        start = lnp.where(start > 1, 1.0, start).astype(dtype)
    width_threshold = 1e-10 if np.finfo(dtype).bits >= 64 else 1e-5

    def sufficient_decrease_fails(a, value):
        return value > phi0 + c1 * a * dphi0

    def curvature_holds(slope):
        return ufuncs.abs(slope) <= -c2 * dphi0

    def zoom(lo, hi):
        """Shrink the bracket [lo, hi] (each (a, phi, dphi)) around a Wolfe step."""
        def body(z):
            (j, done, failed, lo, hi, rec, star, nfev) = z
            width = hi[0] - lo[0]
            failed = failed | (width <= width_threshold)
            left, right = ufuncs.minimum(lo[0], hi[0]), ufuncs.maximum(lo[0], hi[0])
            cubic = _cubic_minimum(lo[0], lo[1], lo[2], hi[0], hi[1], rec[0], rec[1])
            quadratic = _quadratic_minimum(lo[0], lo[1], lo[2], hi[0], hi[1])
            use_cubic = (j > 0) & (cubic > left + 0.2 * width) & (cubic < right - 0.2 * width)
            use_quadratic = (quadratic > left + 0.1 * width) & (quadratic < right - 0.1 * width)
            a = lnp.where(use_cubic, cubic,
                          lnp.where(use_quadratic, quadratic, (lo[0] + hi[0]) / 2))
            value, slope, g = phi(a)
            trial = (a, value, slope)
            too_high = sufficient_decrease_fails(a, value) | (value >= lo[1])
            accept = curvature_holds(slope) & ~too_high
            move_lo = ~too_high & ~accept
            reverse = move_lo & (slope * (hi[0] - lo[0]) >= 0)   # hi jumps to the old lo

            def pick(flag, new, old):
                return tuple(lnp.where(flag, n, o) for n, o in zip(new, old))
            new_rec = pick(too_high | reverse, hi[:2], pick(move_lo, lo[:2], rec))
            new_hi = pick(too_high, trial, pick(reverse, lo, hi))
            new_lo = pick(move_lo, trial, lo)
            star = pick(accept, (a, value, slope, g), star)
            return (j + 1, done | accept, failed | (j + 1 >= 30), new_lo, new_hi, new_rec,
                    star, nfev + 1)

        rec = ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2)
        star = (lnp.ones((), dtype), lo[1], lo[2], gfk)
        z = (0, lnp.asarray(False), lnp.asarray(False), lo, hi, rec, star, 0)
        z = while_loop(lambda z: ~z[1] & ~z[2], body, z)
        return z[2], z[6], z[7]

    def body(s):
        i, done, failed, prev, star, nfev = s
        a = lnp.where(i == 1, start, 2 * prev[0])
        value, slope, g = phi(a)
        trial = (a, value, slope)
        overshot = sufficient_decrease_fails(a, value) | ((value >= prev[1]) & (i > 1))
        accept = curvature_holds(slope) & ~overshot
        uphill = (slope >= 0) & ~overshot & ~accept
        lo, hi = (tuple(lnp.where(overshot, p, t) for p, t in zip(prev, trial)),
                  tuple(lnp.where(overshot, t, p) for p, t in zip(prev, trial)))
        no_zoom = (lnp.asarray(False), star, 0)
        zoom_failed, zoom_star, zoom_nfev = cond(
            overshot | uphill, lambda: zoom(lo, hi), lambda: no_zoom)
        star = tuple(lnp.where(accept, t, lnp.where(overshot | uphill, z, o))
                     for t, z, o in zip((a, value, slope, g), zoom_star, star))
        return (i + 1, done | overshot | uphill | accept, failed | zoom_failed, trial, star,
                nfev + 1 + zoom_nfev)

    zero = lnp.zeros((), dtype)
    s = (1, lnp.asarray(False), lnp.asarray(False), (zero, phi0, dphi0),
         (zero, phi0, dphi0, gfk), 0)
    i, done, failed, _, (a_star, phi_star, _, g_star), nfev = while_loop(
        lambda s: ~s[1] & (s[0] <= maxiter) & ~s[2], body, s)
    status = lnp.where(failed, 1, lnp.where(i > maxiter, 3, 0))
    if np.finfo(dtype).bits < 64:   # a vanishing step would stall the search for good
        a_star = lnp.where(ufuncs.abs(a_star) < 1e-8, ufuncs.sign(a_star) * 1e-8, a_star)
    return _LineSearchResults(failed | ~done, nfev, a_star, phi_star, g_star, status)


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """BFGS from x0 until the gradient's `norm` is below gtol, maxiter iterations
    (default 200 per variable) pass, or the line search fails."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    n = x0.shape[0]
    f0, g0 = value_and_grad(fun)(x0)

    def body(s):
        k, converged, failed, ls_status, nfev, x, f, g, H, f_prev = s
        p = -_dot(H, g)
        ls = line_search(fun, x, p, f, f_prev, g, maxiter=line_search_maxiter)
        step = ls.a_k * p
        y = ls.g_k - g
        rho = 1 / _dot(y, step)
        w = lnp.eye(n, dtype=rho.dtype) - rho * step[:, None] * y[None, :]
        H_next = _dot(_dot(w, H), w.T) + rho * step[:, None] * step[None, :]
        H = lnp.where(ufuncs.isfinite(rho), H_next, H)
        converged = np_linalg.norm(ls.g_k, ord=norm) < gtol
        return (k + 1, converged, ls.failed, ls.status, nfev + ls.nfev, x + step, ls.f_k,
                ls.g_k, H, f)

    s = (0, np_linalg.norm(g0, ord=norm) < gtol, lnp.asarray(False), 0, 1, x0, f0, g0,
         lnp.eye(n, dtype=x0.dtype), f0 + np_linalg.norm(g0) / 2)
    k, converged, failed, ls_status, nfev, x, f, g, H, _ = while_loop(
        lambda s: ~s[1] & ~s[2] & (s[0] < maxiter), body, s)
    status = lnp.where(converged, 0, lnp.where(k == maxiter, 1,
                                               lnp.where(failed, 2 + ls_status, -1)))
    return OptimizeResults(x=x, success=converged & ~failed, status=status, fun=f, jac=g,
                           hess_inv=H, nfev=nfev, njev=nfev, nit=k)


def minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09,
                   gtol=1e-5, maxfun=None, maxgrad=None, maxls=20):
    """L-BFGS (Nocedal & Wright, Algorithm 7.5), for complex x as Sorber et al. (2012): the
    last maxcor steps and gradient changes stand for the inverse Hessian. Stops when the
    gradient's `norm` is below gtol; fails when f decreased by less than ftol, or after
    maxiter iterations (default 200 per variable unless maxfun or maxgrad is given),
    maxfun evaluations of f or maxgrad of its gradient, or a failed line search."""
    d = len(x0)
    dtype = x0.dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    limits = [np.inf if limit is None else limit for limit in (maxiter, maxfun, maxgrad)]
    f0, g0 = value_and_grad(fun)(x0)

    def two_loop_recursion(k, g, s_history, y_history, rho_history, gamma):
        """-H g for the inverse Hessian H that the stored pairs (oldest first) define."""
        size = lnp.where(k < maxcor, k, maxcor)

        def newest_first(j, carry):
            q, alphas = carry
            i = maxcor - 1 - j
            alpha = rho_history[i] * ufuncs.real(_dot(ufuncs.conj(s_history[i]), q)).astype(
                dtype)
            return q - alpha * ufuncs.conj(y_history[i]), alphas.at[i].set(alpha)

        q, alphas = fori_loop(0, size, newest_first,
                              (-ufuncs.conj(g), lnp.zeros_like(rho_history)))

        def oldest_first(j, q):
            i = maxcor - size + j
            beta = rho_history[i] * ufuncs.real(_dot(y_history[i], q)).astype(dtype)
            return q + (alphas[i] - beta) * s_history[i]

        return fori_loop(0, size, oldest_first, gamma * q)

    def remember(history, new):
        return array_manipulation.roll(history, -1, axis=0).at[-1].set(new)

    def body(s):
        (_, _, k, nfev, ngev, x, f, g, s_history, y_history, rho_history, gamma, _,
         _) = s
        p = two_loop_recursion(k, g, s_history, y_history, rho_history, gamma)
        ls = line_search(fun, x, p, f, None, g, maxiter=maxls)
        step = lnp.asarray(ls.a_k).astype(p.dtype) * p
        y = ls.g_k - g
        rho_inv = ufuncs.real(_dot(y, step))
        rho = ufuncs.reciprocal(rho_inv).astype(y.dtype)
        gamma = rho_inv / ufuncs.real(_dot(ufuncs.conj(y), y))
        status = lnp.where(f - ls.f_k < ftol, 4, 0)
        for code, count, limit in ((3, ngev, limits[2]), (2, nfev, limits[1]),
                                   (1, k, limits[0])):
            status = lnp.where(count >= limit, code, status)
        status = lnp.where(ls.failed, 5, status)
        converged = np_linalg.norm(ls.g_k, ord=norm) < gtol
        return (converged, (status > 0) & ~converged, k + 1, nfev + ls.nfev,
                ngev + ls.nfev, (x + step).astype(x.dtype), ls.f_k.astype(f.dtype),
                ls.g_k.astype(g.dtype), remember(s_history, step), remember(y_history, y),
                remember(rho_history, rho), gamma.astype(g.dtype),
                lnp.where(converged, 0, status), ls.status)

    s = (lnp.asarray(False), lnp.asarray(False), 0, 1, 1, x0, f0, g0,
         lnp.zeros((maxcor, d), dtype), lnp.zeros((maxcor, d), dtype),
         lnp.zeros((maxcor,), dtype), lnp.ones((), g0.dtype), 0, 0)
    converged, failed, k, nfev, ngev, x, f, g, *_, status, _ = while_loop(
        lambda s: ~s[0] & ~s[1], body, s)
    return OptimizeResults(x=x, success=converged & ~failed, status=status, fun=f, jac=g,
                           hess_inv=None, nfev=nfev, njev=ngev, nit=k)


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimise the scalar function fun(x, *args) of a 1-D array x from x0, by
    method='BFGS' (options maxiter, norm, gtol, line_search_maxiter) or, as JAX names it,
    'l-bfgs-experimental-do-not-rely-on-this' (options maxiter, norm, maxcor, ftol, gtol,
    maxfun, maxgrad, maxls). tol is accepted for SciPy compatibility and, as in JAX,
    unused (set options['gtol'])."""
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")
    methods = {"bfgs": minimize_bfgs,
               "l-bfgs-experimental-do-not-rely-on-this": minimize_lbfgs}
    if method.lower() not in methods:
        raise ValueError(f"Method {method} not recognized")
    x0 = lnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be a 1-D array, got shape {x0.shape}")
    return methods[method.lower()](lambda x: fun(x, *args), x0, **(options or {}))


__all__ = ["OptimizeResults", "minimize"]
