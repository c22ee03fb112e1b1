"""jax.scipy.linalg's matrix functions and spectral helpers: expm (scaling and squaring
with Pade approximants), expm_frechet, polar (QDWH or SVD), hessenberg (Householder
reflections), eigh_tridiagonal (Sturm bisection and inverse iteration), rsf2csf, and the
Schur-based schur, sqrtm, funm and solve_sylvester. Imports lax, api, random, dtypes and
the jnp modules."""
from __future__ import annotations

import functools

import numpy as np

from pyjax._src import dtypes
from pyjax._src.api.autodiff import jvp
from pyjax._src.api.jit import jit
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import linalg as llinalg
from pyjax._src.lax import linalg_schur
from pyjax._src.lax import slicing as lsl
from pyjax._src.lax.control_flow.conditionals import cond, switch
from pyjax._src.lax.control_flow.fori import fori_loop
from pyjax._src.lax.control_flow.loops import while_loop
from pyjax._src.lax.control_flow.scan import scan
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import array_manipulation as more
from pyjax._src.numpy import linalg as np_linalg
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.functional import vectorize
from pyjax._src.numpy.util import promote_dtypes_inexact
from pyjax._src.random import distributions as rdist
from pyjax._src.random import keys as rkeys
from pyjax._src.scipy import linalg as sl
from pyjax._src.scipy.linalg import _H, _dtype, _shape


def _promote_complex(*args):
    """args promoted together to a complex dtype."""
    args = promote_dtypes_inexact(*[lnp.asarray(a) for a in args])
    dtype = dtypes.complex_dtype(_dtype(args[0]))
    return [a.astype(dtype) for a in args]


def _eye_like(x):
    return lnp.eye(_shape(x)[-1], dtype=_dtype(x))


# --- expm -----------------------------------------------------------------------------------

# Higham (2005), "The scaling and squaring method for the matrix exponential revisited":
# the Pade degrees usable in each precision, the largest 1-norm each is accurate for
# (theta_m), and the numerator coefficients b_0..b_m of the [m/m] approximant.
_PADE_COEFFS = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
_PADE_THETAS = {
    np.dtype(np.float64): ((3, 5, 7, 9, 13), (1.495585217958292e-2, 2.539398330063230e-1,
                                              9.504178996162932e-1, 2.097847961257068,
                                              5.371920351148152)),
    np.dtype(np.float32): ((3, 5, 7), (4.258730016922831e-1, 1.880152677804762,
                                       3.925724783138660)),
}


def _pade(A, degree):
    """(U, V): the odd and even parts of the degree-m Pade numerator p(A) = V + U; the
    denominator is V - U."""
    b = _PADE_COEFFS[degree]
    eye = _eye_like(A)
    A2 = lnp.matmul(A, A)
    if degree == 13:
        A4 = lnp.matmul(A2, A2)
        A6 = lnp.matmul(A4, A2)
        odd = lnp.matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2) + \
            b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye
        even = lnp.matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + \
            b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
        return lnp.matmul(A, odd), even
    powers = [eye, A2]
    while len(powers) <= degree // 2:
        powers.append(lnp.matmul(powers[-1], A2) if len(powers) > 2 else
                      lnp.matmul(A2, A2))
    # Highest powers first, the summation order JAX's rounding follows.
    odd = sum(b[2 * k + 1] * powers[k] for k in reversed(range(degree // 2 + 1)))
    even = sum(b[2 * k] * powers[k] for k in reversed(range(degree // 2 + 1)))
    return lnp.matmul(A, odd), even


def _expm_2d(A, upper_triangular, max_squarings):
    real = np.finfo(_dtype(A)).dtype
    degrees, thetas = _PADE_THETAS[np.dtype(real)]
    norm1 = np_linalg.norm(A, 1)
    squarings = uf.maximum(0, uf.floor(uf.log2(norm1 / thetas[-1])))
    scaled = A / (2 ** squarings).astype(_dtype(A))
    # The lowest degree whose theta bounds the (unscaled) norm, else the highest one
    # on the scaled matrix.
    which = red.sum(norm1 >= lnp.asarray(thetas[:-1], real)).astype(np.int32)
    U, V = switch(which, [functools.partial(_pade, degree=m) for m in degrees], scaled)
    P, Q = U + V, V - U

    def compute(_):
        R = sl.solve_triangular(Q, P) if upper_triangular else np_linalg.solve(Q, P)

        def square(R, i):
            return cond(i < squarings, lambda r: lnp.matmul(r, r), lambda r: r, R), None
        R, _ = scan(square, R, lnp.arange(max_squarings, dtype=_dtype(squarings)))
        return R
    return cond(squarings > max_squarings, lambda _: lnp.full_like(A, np.nan), compute,
                None)


def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential of (..., N, N) matrices by scaling and squaring; NaN where
    more than max_squarings squarings would be needed. upper_triangular solves the Pade
    system with a triangular solve (A must then be upper triangular)."""
    (A,) = promote_dtypes_inexact(lnp.asarray(A))
    if get_aval(A).ndim < 2 or _shape(A)[-1] != _shape(A)[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape="
                         f"{_shape(A)}.")
    return vectorize(functools.partial(_expm_2d, upper_triangular=upper_triangular,
                                       max_squarings=max_squarings),
                     signature="(n,n)->(n,n)")(A)


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Frechet derivative of expm at A in direction E (the JVP of expm), with expm(A)
    first when compute_expm. method is accepted and ignored, as in JAX."""
    del method
    A, E = lnp.asarray(A), lnp.asarray(E)
    for name, x in (("A", A), ("E", E)):
        if get_aval(x).ndim < 2 or _shape(x)[-1] != _shape(x)[-2]:
            raise ValueError(f"expected {name} to be a (batched) square matrix, got "
                             f"{name}.shape={_shape(x)}")
    if _shape(A) != _shape(E):
        raise ValueError(f"expected A and E to be the same shape, got A.shape={_shape(A)} "
                         f"E.shape={_shape(E)}")
    expm_A, frechet = jvp(expm, (A,), (E,))
    return (expm_A, frechet) if compute_expm else frechet


# --- polar ----------------------------------------------------------------------------------

def _qdwh_weights(eps):
    """The dynamically weighted Halley coefficients (a, b, c) for a smallest singular
    value bound rising from eps to 1 (Nakatsukasa, Bai & Gygi, 2010); the bound is
    known beforehand, so the schedule is static."""
    steps, low = [], eps
    while low + 5 * eps < 1 and len(steps) < 10:
        l2 = low * low
        d = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1 + d) ** 0.5
        a = sqd + (8 - 4 * d + 8 * (2 - l2) / (l2 * sqd)) ** 0.5 / 2
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        low = low * (a + b * l2) / (1 + c * l2)
        steps.append((a, b, c))
    return steps


def _halley_step(u, a, b, c):
    """u (b/c) + (a - b/c) u (I + c u^H u)^-1: the QR form when c is large (the Cholesky
    form would square a bad condition number), else the Cholesky form."""
    n = _shape(u)[-1]
    eye = lnp.eye(n, dtype=_dtype(u))
    if c > 100:
        stacked = lnp.concatenate([np.sqrt(c) * u, eye], axis=0)
        q, _ = llinalg.qr(stacked, full_matrices=False)
        m = _shape(u)[0]
        return (b / c) * u + ((a - b / c) / np.sqrt(c)) * lnp.matmul(q[:m], _H(q[m:]))
    gram = c * lnp.matmul(_H(u), u) + eye
    chol = llinalg.cholesky(gram, symmetrize_input=False)
    # u gram^-1 = (gram^-1 u^H)^H, solved with the two triangles of gram = L L^H.
    y = llinalg.triangular_solve(chol, _H(u), left_side=True, lower=True)
    z = llinalg.triangular_solve(chol, y, left_side=True, lower=True, transpose_a=True,
                                 conjugate_a=True)
    return (b / c) * u + (a - b / c) * _H(z)


def _qdwh(x, eps, max_iterations):
    """(u, h): the polar decomposition x = u h of a tall matrix by QDWH."""
    real = np.finfo(_dtype(x)).dtype
    eps = float(np.finfo(real).eps) if eps is None else float(eps)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    norm1 = np_linalg.norm(x, 1)
    norm_inf = np_linalg.norm(x, np.inf)
    # sqrt(||x||_1 ||x||_inf) bounds the largest singular value.
    scale = lnp.where(norm1 == 0, 1, 1 / uf.sqrt(norm1 * norm_inf))
    u = x * scale.astype(_dtype(x))
    tol = (5 * eps) ** (1 / 3)
    steps = _qdwh_weights(eps)[:max_iterations]
    not_converged = lnp.asarray(True)
    for a, b, c in steps:
        prev, u = u, _halley_step(u, a, b, c)
        if c <= 100:
            not_converged = np_linalg.norm(u - prev) > tol

    def keep_going(state):
        k, _, not_converged = state
        return uf.logical_and(not_converged, k < max_iterations)

    def halley(state):
        k, u, _ = state
        new = _halley_step(u, 3., 1., 3.)
        return k + 1, new, np_linalg.norm(new - u) > tol
    _, u, _ = while_loop(keep_going, halley, (len(steps), u, not_converged))
    # One Newton-Schulz step polishes the orthogonality of u.
    u = 1.5 * u - 0.5 * lnp.matmul(u, lnp.matmul(_H(u), u))
    h = lnp.matmul(_H(u), x)
    return u, (h + _H(h)) / 2


def _polar_2d(a, side, method, eps, max_iterations):
    m, n = _shape(a)
    if method == "qdwh":
        if side == "right" and m >= n:
            return _qdwh(a, eps, max_iterations)
        if side == "left" and m < n:
            u, h = _qdwh(_H(a), eps, max_iterations)
            return _H(u), _H(h)
        raise NotImplementedError(
            f"polar(method='qdwh') supports side='right' for matrices with m >= n rows and "
            f"columns and side='left' for m < n, got shape {(m, n)} with side={side!r}; "
            "use method='svd'.")
    u, s, vh = sl.svd(a, full_matrices=False)
    s = s.astype(_dtype(u))
    unitary = lnp.matmul(u, vh)
    if side == "right":
        return unitary, lnp.matmul(_H(vh) * s, vh)
    return unitary, lnp.matmul(u * s, _H(u))


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """The polar decomposition a = u p (side 'right') or a = p u ('left'), u with
    orthonormal columns (rows) and p Hermitian positive semi-definite; method 'qdwh'
    (QR-based dynamically weighted Halley iteration) or 'svd'."""
    a = lnp.asarray(a)
    if get_aval(a).ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method}; use 'qdwh' or "
                         "'svd'.")
    (a,) = promote_dtypes_inexact(a)
    signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return vectorize(functools.partial(_polar_2d, side=side, method=method, eps=eps,
                                       max_iterations=max_iterations),
                     signature=signature)(a)


# --- Hessenberg -----------------------------------------------------------------------------

def _hessenberg_2d(a, calc_q):
    n = _shape(a)[0]
    if n == 0:
        return a, a

    def step(k, state):
        a, q = state
        v, tau, _ = sl.householder(a[:, k], k + 1)
        # a <- H^H a H with H = I - tau v v^H; q <- q H.
        a = sl._reflect_left(a, v, tau)
        a = a - tau * lnp.matmul(a, v[:, None]) * uf.conj(v)[None, :]
        q = q - tau * lnp.matmul(q, v[:, None]) * uf.conj(v)[None, :]
        return a, q
    # The last, 1x1 reflector makes a complex subdiagonal real, as LAPACK's does.
    a, q = fori_loop(0, max(n - 1, 0), step, (a, lnp.eye(n, dtype=_dtype(a))))
    return more.triu(a, -1), q


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """The upper Hessenberg form h of (..., N, N) matrices, a = q h q^H, by LAPACK's
    Householder reduction (gehrd), with q when calc_q."""
    del overwrite_a, check_finite
    (a,) = promote_dtypes_inexact(lnp.asarray(a))
    if get_aval(a).ndim < 2 or _shape(a)[-1] != _shape(a)[-2]:
        raise ValueError(f"Argument to Hessenberg reduction must have shape [..., n, n], "
                         f"got shape {_shape(a)}")
    h, q = vectorize(functools.partial(_hessenberg_2d, calc_q=calc_q),
                     signature="(n,n)->(n,n),(n,n)")(a)
    return (h, q) if calc_q else h


# --- eigh_tridiagonal -----------------------------------------------------------------------

def _sturm_counts(alpha, beta_sq, pivmin, first_pivot, x):
    """The number of eigenvalues below each x: negative pivots of the LDL^T factorisation
    of T - x I, tiny pivots nudged to -pivmin as in LAPACK's bisection."""
    def step(carry, ab):
        q, count = carry
        a, bsq = ab
        q = a - bsq / q - x
        neg = q <= pivmin
        return (lnp.where(neg, uf.minimum(q, -pivmin), q), count + neg), None
    q0 = alpha[0] - x
    count0 = (q0 < 0).astype(np.int32)
    q0 = lnp.where(q0 == 0, first_pivot, q0)
    (_, count), _ = scan(step, (q0, count0), (alpha[1:], beta_sq))
    return count


def _tridiagonal_solve_perturbed(dl, d, du, b, tiny):
    """Solves the tridiagonal systems (dl, d, du) x = b (each of shape (k, n)) by
    Gaussian elimination with partial pivoting, a zero pivot replaced by `tiny` (what
    inverse iteration needs: T - lambda I is singular up to rounding)."""
    def safe(p):
        return lnp.where(p == 0, tiny.astype(_dtype(p)), p)

    def eliminate(carry, row):
        c0, c1, y = carry                    # the row still to be eliminated
        low, diag, up, rhs = row             # the next row of the matrix
        swap = uf.abs(low) > uf.abs(c0)
        pivot = safe(lnp.where(swap, low, c0))
        lead = lnp.where(swap, c0, low) / pivot
        u1 = lnp.where(swap, diag, c1)
        u2 = lnp.where(swap, up, lnp.zeros_like(up))
        y_pivot = lnp.where(swap, rhs, y)
        rest = lnp.where(swap, y, rhs) - lead * y_pivot
        new_c0 = lnp.where(swap, c1, diag) - lead * u1
        new_c1 = lnp.where(swap, lnp.zeros_like(up), up) - lead * u2
        return (new_c0, new_c1, rest), (pivot, u1, u2, y_pivot)
    rows = (dl.T[1:], d.T[1:], du.T[1:], b.T[1:])
    (c0, _, y), (u0, u1, u2, ys) = scan(eliminate, (d.T[0], du.T[0], b.T[0]), rows)
    u0 = lnp.concatenate([u0, safe(c0)[None]])
    u1 = lnp.concatenate([u1, lnp.zeros_like(c0)[None]])
    u2 = lnp.concatenate([u2, lnp.zeros_like(c0)[None]])
    ys = lnp.concatenate([ys, y[None]])

    def substitute(carry, row):
        x1, x2 = carry
        p, a1, a2, yi = row
        x = (yi - a1 * x1 - a2 * x2) / p
        return (x, x1), x
    zero = lnp.zeros_like(c0)
    _, xs = scan(substitute, (zero, zero), (u0, u1, u2, ys), reverse=True)
    return xs.T


def _tridiagonal_eigenvectors(alpha, beta, eigvals, key):
    """Inverse iteration from random starts; vectors of eigenvalues closer than
    sqrt(eps) |T| are orthogonalised against each other (Gram-Schmidt in order)."""
    n, k = _shape(alpha)[0], _shape(eigvals)[0]
    dtype = _dtype(beta)
    real = _dtype(eigvals)
    eps = float(np.finfo(real).eps)
    t_norm = uf.maximum(uf.abs(eigvals[0]), uf.abs(eigvals[-1]))
    close = (eigvals[1:] - eigvals[:-1]) < np.sqrt(eps) * t_norm
    cluster = lnp.concatenate([lnp.zeros(1, np.int32), red.cumsum(~close).astype(np.int32)])
    same = cluster[:, None] == cluster[None, :]
    dl = lnp.broadcast_to(lnp.concatenate([lnp.zeros(1, dtype), uf.conj(beta)]), (k, n))
    du = lnp.broadcast_to(lnp.concatenate([beta, lnp.zeros(1, dtype)]), (k, n))
    diag = (alpha[None, :] - eigvals[:, None]).astype(dtype)
    tiny = eps * uf.maximum(t_norm, 1)
    v = rdist.normal(key, (k, n), dtype=real).astype(dtype)
    v = v / np_linalg.norm(v, axis=-1, keepdims=True).astype(dtype)

    def orthogonalise(v):
        def one(i, v):
            earlier = (lnp.arange(k) < i) & same[i]
            proj = lnp.matmul(uf.conj(v), v[i]) * earlier.astype(dtype)
            w = v[i] - lnp.matmul(proj, v)
            w = w / np_linalg.norm(w).astype(dtype)
            return v.at[i].set(lnp.where(red.any(earlier), w, v[i]))
        return fori_loop(1, k, one, v)

    def keep_going(state):
        i, _, norms, old_norms = state
        return (i < 5) & red.any(norms >= 1.1 * old_norms)

    def iterate(state):
        i, v, norms, _ = state
        w = _tridiagonal_solve_perturbed(dl, diag, du, v, tiny)
        new_norms = np_linalg.norm(w, axis=-1)
        w = w / new_norms[:, None].astype(dtype)
        return i + 1, orthogonalise(w), new_norms, norms
    start = (0, v, lnp.ones(k, real), lnp.zeros(k, real))
    _, v, _, _ = while_loop(keep_going, iterate, start)
    return v.T


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):
    """Eigenvalues (ascending) and, unless eigvals_only, eigenvectors of the Hermitian
    tridiagonal matrix with diagonal d and off-diagonal e. select 'a' gives all,
    'i' those with indices select_range = (lo, hi) inclusive; key seeds the inverse
    iteration's random starts (default key(42), as in JAX)."""
    alpha, beta = lnp.asarray(d), lnp.asarray(e)
    if _dtype(alpha) != _dtype(beta):
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got "
                        f"{_dtype(alpha)} and {_dtype(beta)}")
    if not dtypes.is_inexact(_dtype(alpha)):
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        "jax.scipy.linalg.eigh_tridiagonal, got "
                        f"{_dtype(alpha)} and {_dtype(beta)}")
    if get_aval(alpha).ndim != 1 or _shape(beta) != (max(_shape(alpha)[0] - 1, 0),):
        raise ValueError(f"eigh_tridiagonal takes d of shape (n,) and e of shape (n - 1,), "
                         f"got {_shape(alpha)} and {_shape(beta)}")
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    if select not in ("a", "i"):
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    n = _shape(alpha)[0]
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        lo, hi = (int(i) for i in select_range)
        if lo > hi:
            raise ValueError("Got empty index range in select_range.")
        if lo < 0 or hi >= n:
            raise ValueError(f"select_range {select_range} is out of range for a matrix of "
                             f"order {n}")
        targets = lnp.arange(lo, hi + 1, dtype=np.int32)
    else:
        targets = lnp.arange(n, dtype=np.int32)
    if n <= 1:
        w = uf.real(alpha)
        return w if eigvals_only else (w, lnp.eye(n, dtype=_dtype(alpha)))
    if dtypes.is_complex(_dtype(alpha)):
        alpha = uf.real(alpha)
        beta_sq = uf.real(beta * uf.conj(beta))
        beta_abs = uf.sqrt(beta_sq)
    else:
        beta_abs, beta_sq = uf.abs(beta), beta * beta
    real = _dtype(alpha)
    finfo = np.finfo(real)
    # Gershgorin discs bound the spectrum.
    radius = lnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    top = red.max(alpha + radius)
    bottom = red.min(alpha - radius)
    t_norm = uf.maximum(uf.abs(bottom), uf.abs(top))
    safemin = max(1 / float(finfo.max), (1 + float(finfo.eps)) * float(finfo.tiny))
    pivmin = safemin * uf.maximum(1, red.max(beta_sq))
    first_pivot = lnp.broadcast_to((float(finfo.eps) * beta_abs[0]) ** 2, _shape(targets))
    abs_tol = float(finfo.eps) * t_norm
    if tol is not None:
        abs_tol = uf.maximum(tol, abs_tol)
    slack = n * 2.1 * float(finfo.eps) * t_norm
    lower = lnp.broadcast_to(bottom - slack - 4.2 * pivmin, _shape(targets))
    upper = lnp.broadcast_to(top + slack + 2.1 * pivmin, _shape(targets))
    pivmin_t = lnp.broadcast_to(pivmin, _shape(targets))

    def keep_going(state):
        i, lower, upper = state
        return (i < finfo.nmant + 1) & (red.max(upper - lower) > abs_tol)

    def bisect(state):
        i, lower, upper = state
        mid = 0.5 * (lower + upper)
        below = _sturm_counts(alpha, beta_sq, pivmin_t, first_pivot, mid) <= targets
        return i + 1, lnp.where(below, mid, lower), lnp.where(below, upper, mid)
    _, lower, upper = while_loop(keep_going, bisect, (0, lower, upper))
    eigvals = 0.5 * (lower + upper)
    if eigvals_only:
        return eigvals
    if key is None:
        key = rkeys.key(42)
    return eigvals, _tridiagonal_eigenvectors(alpha, lnp.asarray(e), eigvals, key)


# --- complex Schur form ---------------------------------------------------------------------

def _rsf2csf_2d(T, Z):
    T, Z = _promote_complex(T, Z)
    n = _shape(T)[0]
    if n == 1:
        return T, Z
    eps = float(np.finfo(_dtype(T)).eps)
    cols = lnp.arange(n)

    def rotate(m, T, Z):
        # A Givens rotation that splits the 2x2 block at rows m-1, m into its two
        # complex eigenvalues.
        block = lsl.dynamic_slice(T, (m - 1, m - 1), (2, 2))
        mu = np_linalg.eigvals(block) - T[m, m]
        r = uf.sqrt(uf.abs(mu[0]) ** 2 + uf.abs(T[m, m - 1]) ** 2).astype(_dtype(T))
        c, s = mu[0] / r, T[m, m - 1] / r
        G = lnp.stack([lnp.stack([uf.conj(c), s]), lnp.stack([-s, c])])
        rows = lsl.dynamic_slice(T, (m - 1, 0), (2, n))
        rows = lnp.where(cols >= m - 1, lnp.matmul(G, rows), rows)
        T = lsl.dynamic_update_slice(T, rows, (m - 1, 0))
        pair = lsl.dynamic_slice(T, (0, m - 1), (n, 2))
        pair = lnp.where(cols[:, None] < m + 1, lnp.matmul(pair, _H(G)), pair)
        T = lsl.dynamic_update_slice(T, pair, (0, m - 1))
        zpair = lnp.matmul(lsl.dynamic_slice(Z, (0, m - 1), (n, 2)), _H(G))
        return T, lsl.dynamic_update_slice(Z, zpair, (0, m - 1))

    def step(i, TZ):
        T, Z = TZ
        m = n - i
        big = uf.abs(T[m, m - 1]) > eps * (uf.abs(T[m - 1, m - 1]) + uf.abs(T[m, m]))
        T, Z = cond(big, lambda args: rotate(*args), lambda args: args[1:], (m, T, Z))
        return T.at[m, m - 1].set(0), Z
    return fori_loop(1, n, step, (T, Z))


# Compiled whole, as JAX does: eager calls then round exactly as jitted ones.
@functools.partial(jit, static_argnames=("check_finite",))
def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form (T, Z) from the real one (2x2 diagonal blocks are split by
    Givens rotations), as scipy.linalg.rsf2csf."""
    del check_finite
    T, Z = lnp.asarray(T), lnp.asarray(Z)
    if get_aval(T).ndim < 2 or _shape(T)[-1] != _shape(T)[-2]:
        raise ValueError("Input 'T' must be square.")
    if get_aval(Z).ndim < 2 or _shape(Z)[-1] != _shape(Z)[-2]:
        raise ValueError("Input 'Z' must be square.")
    if _shape(T)[-1] != _shape(Z)[-1]:
        raise ValueError(f"Input array shapes must match: Z: {_shape(Z)} vs. T: {_shape(T)}")
    return vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(T, Z)


def schur(a, output="real"):
    """The Schur decomposition a = z t z^H: t upper (quasi-)triangular, z unitary;
    output 'complex' gives the triangular complex form. CPU only, as in JAX."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    (a,) = promote_dtypes_inexact(lnp.asarray(a))
    if output == "complex":
        (a,) = _promote_complex(a)
    if get_aval(a).ndim < 2 or _shape(a)[-1] != _shape(a)[-2]:
        raise ValueError(f"schur: expected a (batched) square matrix, got shape {_shape(a)}")
    return linalg_schur.schur(a)


def _sqrtm_triangular(T):
    """The principal square root of an upper triangular T, column by column (Bjorck &
    Hammarling): U[i, j] = (T[i, j] - sum_k U[i, k] U[k, j]) / (U[i, i] + U[j, j])."""
    diag = uf.sqrt(more.diagonal(T))
    n = _shape(T)[0]
    ks = lnp.arange(n)

    def entry(l_, state):
        j, U = state
        i = j - 1 - l_
        between = (ks > i) & (ks < j)
        s = red.sum(lnp.where(between, U[i, :] * U[:, j], 0))
        value = lnp.where(T[i, j] == s, 0, (T[i, j] - s) / (diag[i] + diag[j]))
        return j, U.at[i, j].set(value)

    def column(j, U):
        return fori_loop(0, j, entry, (j, U))[1]
    return fori_loop(0, n, column, more.diag(diag))


def sqrtm(A, blocksize=1):
    """The principal matrix square root of a square matrix (complex result), through its
    complex Schur form."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    A = lnp.asarray(A)
    if get_aval(A).ndim != 2 or _shape(A)[0] != _shape(A)[1]:
        raise ValueError(f"sqrtm: expected a square matrix, got shape {_shape(A)}")
    T, Z = schur(A, output="complex")
    return lnp.matmul(lnp.matmul(Z, _sqrtm_triangular(T)), _H(Z))


def _parlett(F, T):
    """Parlett's recurrence (Golub & Van Loan, Algorithm 11.1.1): the strictly upper part
    of f(T) from its diagonal F, superdiagonal by superdiagonal. Also returns the
    smallest distance between diagonal entries met, for funm's error estimate."""
    n = _shape(T)[0]
    ks = lnp.arange(n)

    def entry(i, state):
        p, F, minden = state
        j = i + p
        between = (ks >= i) & (ks < j - 1)
        s = T[i - 1, j - 1] * (F[j - 1, j - 1] - F[i - 1, i - 1])
        s = s + lnp.matmul(lnp.where(between, T[i - 1], 0), lnp.where(between, F[:, j - 1], 0))
        s = s - lnp.matmul(lnp.where(between, F[i - 1], 0), lnp.where(between, T[:, j - 1], 0))
        den = T[j - 1, j - 1] - T[i - 1, i - 1]
        s = lnp.where(den != 0, s / den, s)
        return p, F.at[i - 1, j - 1].set(s), uf.minimum(minden, uf.abs(den))

    def diagonal(p, state):
        F, minden = state
        _, F, minden = fori_loop(1, n - p + 1, entry, (p, F, minden))
        return F, minden
    return fori_loop(1, n, diagonal, (F, uf.abs(T[0, 0])))


def funm(A, func, disp=True):
    """f(A) for a function `func` applied elementwise to eigenvalues, through the
    complex Schur form and Parlett's recurrence (unreliable for close eigenvalues, as in
    SciPy). With disp=False, also an estimate of the relative error."""
    A = lnp.asarray(A)
    if get_aval(A).ndim != 2 or _shape(A)[0] != _shape(A)[1]:
        raise ValueError("expected square array_like input")
    T, Z = schur(A)
    T, Z = rsf2csf(T, Z)
    F = more.diag(lnp.asarray(func(more.diagonal(T)))).astype(_dtype(T))
    F, minden = _parlett(F, T)
    F = lnp.matmul(lnp.matmul(Z, F), _H(Z))
    if disp:
        return F
    tol = float(np.finfo(np.finfo(_dtype(F)).dtype).eps)
    minden = lnp.where(minden == 0, tol, minden)
    err = uf.minimum(1, uf.maximum(tol, tol / minden * np_linalg.norm(more.triu(T, 1), 1)))
    return F, lnp.where(red.any(uf.isinf(F)), np.inf, err)


# --- Sylvester equations --------------------------------------------------------------------

def _sylvester_triangular(R, S, F):
    """Y with R Y + Y S = F for upper triangular R (m x m) and lower triangular S
    (n x n), entry by entry from the bottom-right corner (Bartels & Stewart)."""
    m, n = _shape(F)
    rows, cols = lnp.arange(m), lnp.arange(n)

    def entry(Y, idx):
        i, j = idx // n, idx % n
        rest = red.sum(lnp.where(rows > i, R[i, :] * Y[:, j], 0)) + \
            red.sum(lnp.where(cols > j, Y[i, :] * S[:, j], 0))
        return Y.at[i, j].set((F[i, j] - rest) / (R[i, i] + S[j, j])), None
    Y, _ = scan(entry, lnp.zeros((m, n), _dtype(F)), lnp.arange(m * n - 1, -1, -1))
    return Y


def _sylvester_2d(A, B, C, method, tol):
    if method == "schur":
        R, U = schur(A, output="complex")
        S, V = schur(_H(B), output="complex")
        F = lnp.matmul(lnp.matmul(_H(U), C.astype(_dtype(R))), V)
        X = lnp.matmul(lnp.matmul(U, _sylvester_triangular(R, _H(S), F)), _H(V))
    else:
        ra, ua = np_linalg.eig(A)
        rb, ub = np_linalg.eig(B)
        F = np_linalg.solve(ua, lnp.matmul(C.astype(_dtype(ra)), ub))
        X = lnp.matmul(lnp.matmul(ua, F / (ra[:, None] + rb[None, :])), np_linalg.inv(ub))
    if not dtypes.is_complex(_dtype(C)):
        X = uf.real(X)
    # A and -B sharing an eigenvalue make the equation singular: NaNs, as in JAX.
    sums = np_linalg.eigvals(A)[:, None] + np_linalg.eigvals(B)[None, :]
    return lnp.where(red.any(uf.abs(sums) < tol), np.nan, X).astype(_dtype(X))


@functools.partial(jit, static_argnames=("method",))
def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """X with A X + X B = C (Bartels-Stewart through Schur forms, or through
    eigendecompositions with method 'eigen'); NaNs when eigenvalues of A and -B come
    within tol."""
    if method not in ("schur", "eigen"):
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either '
                         '"schur" or "eigen".')
    A, B, C = promote_dtypes_inexact(lnp.asarray(A), lnp.asarray(B), lnp.asarray(C))
    if get_aval(C).ndim < 2:
        raise ValueError(f"solve_sylvester: C must have shape (..., m, n), got {_shape(C)}")
    m, n = _shape(C)[-2:]
    if _shape(A)[-2:] != (m, m) or _shape(B)[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {_shape(A)}\n"
                         f"B: {_shape(B)}\nC: {_shape(C)}")
    return vectorize(functools.partial(_sylvester_2d, method=method, tol=tol),
                     signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)
