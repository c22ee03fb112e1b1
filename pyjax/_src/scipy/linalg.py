"""jax.scipy.linalg: SciPy's factorisations and solvers on lax.linalg's primitives, the
special matrices, and (from linalg_functions) matrix functions. SciPy's overwrite_* and
check_finite arguments are accepted and ignored, as in JAX. Imports lax, api, dtypes and
the jnp modules."""
from __future__ import annotations

import functools
import math
import operator
import sys
import warnings

import numpy as np

from pyjax._src import dtypes
from pyjax._src.api.vmap import vmap
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import linalg as llinalg
from pyjax._src.lax import linalg_spectral as lspectral
from pyjax._src.lax.ad_util import stop_gradient
from pyjax._src.lax.control_flow.fori import fori_loop
from pyjax._src.lax.control_flow.solves import custom_linear_solve
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import array_manipulation as more
from pyjax._src.numpy import linalg as np_linalg
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.functional import vectorize
from pyjax._src.numpy.util import (
    check_arraylike, ensure_array, promote_args_inexact, promote_dtypes,
    promote_dtypes_inexact,
)


def _shape(x):
    return get_aval(x).shape


def _ndim(x):
    return get_aval(x).ndim


def _dtype(x):
    return get_aval(x).dtype


def _H(x):
    return uf.conj(lnp.swapaxes(x, -1, -2))


def _square(name, a):
    if _ndim(a) < 2 or _shape(a)[-1] != _shape(a)[-2]:
        raise ValueError(f"jax.scipy.linalg.{name}: expected a (batched) square matrix of "
                         f"shape (..., N, N), got shape {_shape(a)}")


# --- Cholesky -------------------------------------------------------------------------------

def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of Hermitian positive-definite matrices (..., N, N): upper U
    with a = U^H U by default, lower L with a = L L^H when `lower`. Reads only the
    `lower`/upper triangle of a; non positive-definite input gives NaNs."""
    del overwrite_a, check_finite
    (a,) = promote_dtypes_inexact(lnp.asarray(a))
    _square("cholesky", a)
    factor = llinalg.cholesky(a if lower else _H(a), symmetrize_input=False)
    return ensure_array(factor if lower else _H(factor))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower) for cho_solve: c is the Cholesky factor, zero off its triangle."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def _vectorized_solve(name, solver, a, b, *extra):
    """solver(a, *extra, b) for one (n, n) matrix and b (n, k), mapped over the batch
    dimensions. b is a vector when it is 1-D, a batch of vectors (deprecated, with JAX's
    FutureWarning) when it has one dimension fewer than a and ends in n, else a batch of
    (n, k) matrices. `extra` operands are vectors (n) that go with each matrix."""
    vector = _ndim(b) == 1
    if not vector and _ndim(a) == _ndim(b) + 1 and _shape(a)[-1] == _shape(b)[-1]:
        warnings.warn(
            f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, "
            "and in the future will be treated as a batched 2D solve. Use "
            f"{name}(..., b[..., None]).squeeze(-1) to avoid this warning.",
            category=FutureWarning, stacklevel=3)
        vector = True
    rhs = "(n)" if vector else "(n,k)"
    signature = f"(n,n),{'(n),' * len(extra)}{rhs}->{rhs}"

    def call(*args):
        *operands, rhs_b = args
        if vector:
            return solver(*operands, rhs_b[:, None])[:, 0]
        return solver(*operands, rhs_b)
    return vectorize(call, signature=signature)(a, *extra, b)


def _triangular(a, b, *, lower, transpose_a=False, conjugate_a=False, unit_diagonal=False):
    return llinalg.triangular_solve(a, b, left_side=True, lower=lower,
                                    transpose_a=transpose_a, conjugate_a=conjugate_a,
                                    unit_diagonal=unit_diagonal)


def _cho_solve_matrix(c, b, lower):
    # a = L L^H: solve L y = b, then L^H x = y (with U = L^H when the factor is upper).
    y = _triangular(c, b, lower=lower, transpose_a=not lower, conjugate_a=not lower)
    return _triangular(c, y, lower=lower, transpose_a=lower, conjugate_a=lower)


def _check_factor_pair(name, pair, what):
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
        raise TypeError(f"jax.scipy.linalg.{name}: the first argument must be the pair "
                        f"{what}, got {type(pair).__name__}")
    return pair


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solves a x = b given cho_factor(a) = (c, lower). b is (N,) or (..., N, K)."""
    del overwrite_b, check_finite
    c, lower = _check_factor_pair("cho_solve", c_and_lower, "(c, lower) from cho_factor")
    c, b = promote_dtypes_inexact(lnp.asarray(c), lnp.asarray(b))
    _square("cho_solve", c)
    return _vectorized_solve("cho_solve", functools.partial(_cho_solve_matrix,
                                                            lower=bool(lower)), c, b)


# --- LU -------------------------------------------------------------------------------------

def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): L (unit diagonal, below) and U packed in one matrix, and the LAPACK row
    swaps (row i was swapped with row piv[i])."""
    del overwrite_a, check_finite
    (a,) = promote_dtypes_inexact(lnp.asarray(a))
    lu_, pivots, _ = llinalg.lu(a)
    return ensure_array(lu_), ensure_array(pivots)


def _lu_solve_matrix(lu_, perm, b, trans):
    # a[perm] = L U, so a = P^T L U with P the permutation matrix of perm.
    if trans == 0:
        y = _triangular(lu_, b[perm, :], lower=True, unit_diagonal=True)
        return _triangular(lu_, y, lower=False)
    conj = trans == 2
    y = _triangular(lu_, b, lower=False, transpose_a=True, conjugate_a=conj)
    x = _triangular(lu_, y, lower=True, transpose_a=True, conjugate_a=conj,
                    unit_diagonal=True)
    return lnp.zeros_like(x).at[perm].set(x)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solves a x = b (trans 0), a^T x = b (1) or a^H x = b (2) from lu_factor(a)."""
    del overwrite_b, check_finite
    lu_, pivots = _check_factor_pair("lu_solve", lu_and_piv, "(lu, piv) from lu_factor")
    if trans not in (0, 1, 2):
        raise ValueError(f"jax.scipy.linalg.lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    lu_, b = promote_dtypes_inexact(lnp.asarray(lu_), lnp.asarray(b))
    _square("lu_solve", lu_)
    perm = llinalg.lu_pivots_to_permutation(lnp.asarray(pivots), _shape(lu_)[-1])
    return _vectorized_solve("lu_solve", functools.partial(_lu_solve_matrix, trans=trans),
                             lu_, b, perm)


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """LU decomposition with partial pivoting of (..., M, N) matrices: (p, l, u) with
    a = p @ l @ u, or (p @ l, u) when permute_l. l is (M, K) with a unit diagonal and u
    (K, N), K = min(M, N); p is a real permutation matrix."""
    del overwrite_a, check_finite
    (a,) = promote_dtypes_inexact(lnp.asarray(a))
    if _ndim(a) < 2:
        raise TypeError(f"jax.scipy.linalg.lu: expected an array of shape (..., M, N), got "
                         f"shape {_shape(a)}")
    lu_, _, perm = llinalg.lu(a)
    m, n = _shape(a)[-2:]
    k = min(m, n)
    dtype = get_aval(a).dtype
    real = np.finfo(dtype).dtype
    # p[i, j] = 1 where row j of l @ u is row i of a.
    p = lnp.asarray(perm[..., None, :] == lnp.arange(m, dtype=np.int32)[:, None], real)
    l_ = more.tril(lu_, -1)[..., :, :k] + lnp.eye(m, k, dtype=dtype)
    u = more.triu(lu_)[..., :k, :]
    if permute_l:
        return lnp.matmul(p.astype(dtype), l_), u
    return p, l_, u


# --- QR -------------------------------------------------------------------------------------

def householder(x, start):
    """LAPACK's reflector (larfg) for the entries x[start:] of a vector (start may be
    traced): (v, tau, beta) with v zero before start, v[start] = 1 and
    (I - tau v v^H)^H x = beta e_start on those entries, beta real."""
    idx = lnp.arange(_shape(x)[-1])
    alpha = x[start]
    below = idx > start
    tail = uf.sqrt(red.sum(lnp.where(below, uf.abs(x) ** 2, 0)))
    real_alpha = uf.real(alpha)
    norm = uf.sqrt(uf.abs(alpha) ** 2 + tail ** 2)
    beta = lnp.where(real_alpha >= 0, -norm, norm)
    trivial = tail == 0
    if dtypes.is_complex(_dtype(x)):
        trivial = trivial & (uf.imag(alpha) == 0)
    safe_beta = lnp.where(trivial, 1, beta).astype(_dtype(x))
    tau = lnp.where(trivial, 0, (safe_beta - alpha) / safe_beta).astype(_dtype(x))
    denom = lnp.where(trivial, 1, alpha - safe_beta)
    v = lnp.where(below, x / denom, (idx == start).astype(_dtype(x)))
    return v, tau, lnp.where(trivial, real_alpha, beta)


def _reflect_left(a, v, tau):
    """(I - tau v v^H)^H a."""
    return a - uf.conj(tau) * v[:, None] * lnp.matmul(uf.conj(v)[None, :], a)


def _pivoted_qr_2d(a, full_matrices):
    """(q, r, p) with a[:, p] = q r: Householder QR choosing, at each step, the column of
    largest remaining norm (LAPACK geqp3's unblocked algorithm, whose order of column
    choices and reflector signs JAX's results follow)."""
    m, n = _shape(a)
    k = min(m, n)
    dtype = _dtype(a)
    real = np.finfo(dtype).dtype
    # LAPACK recomputes a downdated column norm once it has lost half its digits.
    recompute_below = float(np.sqrt(np.finfo(real).eps / 2))
    cols = lnp.arange(n, dtype=np.int32)
    rows = lnp.arange(m, dtype=np.int32)[:, None]
    norms = uf.sqrt(red.sum(uf.abs(a) ** 2, axis=0))
    if k == 0:
        q = lnp.eye(m, m if full_matrices else 0, dtype=dtype)
        return q, a[:m if full_matrices else 0], cols

    def step(j, state):
        a, norms, exact, perm, vs, taus = state
        pvt = j + red.argmax(lnp.where(cols >= j, norms, -1)).astype(np.int32) - j
        swap = lnp.where(cols == j, pvt, lnp.where(cols == pvt, j, cols))
        a, norms, exact, perm = a[:, swap], norms[swap], exact[swap], perm[swap]
        v, tau, beta = householder(a[:, j], j)
        a = lnp.where(cols > j, _reflect_left(a, v, tau), a)
        a = lnp.where((cols == j) & (rows >= j),
                      lnp.where(rows == j, beta.astype(dtype), 0).astype(dtype), a)
        safe = lnp.where(norms == 0, 1, norms)
        left = uf.maximum(1 - (uf.abs(a[j]) / safe) ** 2, 0)
        drift = left * (norms / lnp.where(exact == 0, 1, exact)) ** 2
        fresh = uf.sqrt(red.sum(lnp.where(rows > j, uf.abs(a) ** 2, 0), axis=0))
        recompute = (drift <= recompute_below) & (cols > j) & (norms != 0)
        downdate = (cols > j) & (norms != 0) & ~recompute
        norms = lnp.where(recompute, fresh, lnp.where(downdate, norms * uf.sqrt(left), norms))
        exact = lnp.where(recompute, fresh, exact)
        return a, norms, exact, perm, vs.at[j].set(v), taus.at[j].set(tau)
    state = (a, norms, norms, cols, lnp.zeros((k, m), dtype), lnp.zeros(k, dtype))
    a, _, _, perm, vs, taus = fori_loop(0, k, step, state)

    def accumulate(i, q):      # q = H_0 ... H_{k-1}, built from the right
        j = k - 1 - i
        return q - taus[j] * vs[j][:, None] * lnp.matmul(uf.conj(vs[j])[None, :], q)
    q = fori_loop(0, k, accumulate, lnp.eye(m, dtype=dtype))
    r = more.triu(a)
    if not full_matrices:
        q, r = q[:, :k], r[:k]
    return q, r, perm


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """QR decomposition of (..., M, N) matrices; mode 'full' gives (q, r) with q (M, M),
    'economic' q (M, K) and r (K, N), 'r' only (r,) of the full shape."""
    del overwrite_a, lwork, check_finite
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'; use 'full', "
                         "'economic' or 'r'")
    (a,) = promote_dtypes_inexact(lnp.asarray(a))
    if _ndim(a) < 2:
        raise ValueError(f"jax.scipy.linalg.qr: expected an array of shape (..., M, N), got "
                         f"shape {_shape(a)}")
    full = mode != "economic"
    if pivoting:
        q, r, p = vectorize(functools.partial(_pivoted_qr_2d, full_matrices=full),
                            signature="(m,n)->(m,k),(k,n),(n)")(a)
        return (r, p) if mode == "r" else (q, r, p)
    q, r = llinalg.qr(a, full_matrices=full)
    if mode == "r":
        return (ensure_array(r),)
    return ensure_array(q), ensure_array(r)


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """(c @ Q, R) (mode 'right') or (Q @ c, R) ('left') for the economic QR a = Q R,
    with conj(Q) when `conjugate`; a 1-D c is a row (right) or column (left) vector."""
    del overwrite_a, overwrite_c
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    a, c = promote_dtypes_inexact(lnp.asarray(a), lnp.asarray(c))
    if _ndim(a) < 2:
        raise ValueError(f"jax.scipy.linalg.qr_multiply: a must have shape (..., M, N), got "
                         f"shape {_shape(a)}")
    vector = _ndim(c) == 1
    if vector:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = _shape(a)[-2:]
    k = min(m, n)
    if mode == "left" and _shape(c)[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                         f"{_shape(a)} so Q has {k} columns, but c has {_shape(c)[-2]} rows "
                         f"(expected {k}).")
    if mode == "right" and _shape(c)[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                         f"{_shape(a)} so Q has {m} rows, but c has {_shape(c)[-1]} columns "
                         f"(expected {m}).")
    if pivoting:
        q, r, p = qr(a, mode="economic", pivoting=True)
    else:
        q, r = llinalg.qr(a, full_matrices=False)
    if conjugate:
        q = uf.conj(q)
    out = lnp.matmul(q, c) if mode == "left" else lnp.matmul(c, q)
    if vector:
        out = lnp.ravel(out)
    if pivoting:
        return ensure_array(out), ensure_array(r), p
    return ensure_array(out), ensure_array(r)


# --- solvers --------------------------------------------------------------------------------

def _matvec(a, x):
    """a @ x with x a batch of vectors or of matrices, as solve's b."""
    if _ndim(a) == _ndim(x) + 1:
        return lnp.matmul(a, x[..., None])[..., 0]
    return lnp.matmul(a, x)


def _solve_positive_definite(a, b, lower):
    a, b = promote_dtypes_inexact(lnp.asarray(a), lnp.asarray(b))
    na, nb = _ndim(a), _ndim(b)
    if not (na >= 2 and nb in (na, na - 1) and _shape(a)[-1] == _shape(a)[-2] ==
            _shape(b)[na - 2]):
        raise ValueError(f"The arguments to solve must have shapes a=[..., m, m] and "
                         f"b=[..., m, k] or b=[..., m]; got a={_shape(a)} and b={_shape(b)}")
    # b's size-1 batch dimensions broadcast against a's, as custom_linear_solve needs.
    b = lnp.broadcast_to(b, tuple(da if db == 1 else db for da, db in
                                  zip(_shape(a)[:-1] + (1,), _shape(b))))
    # The factorisation is a constant to custom_linear_solve: derivatives flow through
    # the matvec, not through the Cholesky factor.
    factors = (cholesky(stop_gradient(a), lower=lower), lower)
    solver = functools.partial(custom_linear_solve, lambda x: _matvec(a, x),
                               solve=lambda _, x: cho_solve(factors, x), symmetric=True)
    if _ndim(a) == _ndim(b) + 1:
        return solver(b)
    # Columns of b are separate right-hand sides for custom_linear_solve.
    return vmap(solver, _ndim(b) - 1, max(_ndim(a), _ndim(b)) - 1)(b)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """Solves a x = b. assume_a 'gen', 'sym' or 'her' use an LU solve (jnp.linalg.solve);
    'pos' uses a Cholesky solve reading the `lower`/upper triangle of a."""
    del overwrite_a, overwrite_b, debug, check_finite
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    if assume_a != "pos":
        return np_linalg.solve(a, b)
    return _solve_positive_definite(a, b, lower)


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """Solves op(a) x = b for triangular a; trans 0/'N' op(a) = a, 1/'T' a^T, 2/'C' a^H.
    Only the `lower`/upper triangle of a is read (and not its diagonal when
    unit_diagonal)."""
    del overwrite_b, debug, check_finite
    if trans not in _TRANS:   # True and False are 1 and 0, as in JAX
        raise ValueError(f"Invalid 'trans' value {trans!r}: use 0/'N', 1/'T' or 2/'C'")
    transpose_a, conjugate_a = _TRANS[trans]
    a, b = promote_dtypes_inexact(lnp.asarray(a), lnp.asarray(b))
    _square("solve_triangular", a)
    solver = functools.partial(_triangular, lower=bool(lower), transpose_a=transpose_a,
                               conjugate_a=conjugate_a, unit_diagonal=bool(unit_diagonal))
    return _vectorized_solve("solve_triangular", solver, a, b)


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of each square matrix of a (..., N, N)."""
    del overwrite_a, check_finite
    return np_linalg.det(a)


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of each square matrix of a (..., N, N)."""
    del overwrite_a, check_finite
    return np_linalg.inv(a)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):
    """Eigenvalues (ascending) and eigenvectors (w, v) of Hermitian matrices, reading the
    `lower`/upper triangle; only the standard problem (b=None, type=1) is supported, as
    in JAX."""
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = promote_dtypes_inexact(lnp.asarray(a))
    _square("eigh", a)
    v, w = lspectral.eigh(a, lower=bool(lower))
    return ensure_array(w) if eigvals_only else (ensure_array(w), ensure_array(v))


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """Singular value decomposition a = u @ diag(s) @ vh, s descending (only s when not
    compute_uv). lapack_driver is ignored, as in JAX."""
    del overwrite_a, check_finite, lapack_driver
    (a,) = promote_dtypes_inexact(lnp.asarray(a))
    if _ndim(a) < 2:
        raise ValueError(f"jax.scipy.linalg.svd: expected an array of shape (..., M, N), "
                         f"got shape {_shape(a)}")
    out = lspectral.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(ensure_array(x) for x in out) if compute_uv else ensure_array(out)


# --- special matrices -----------------------------------------------------------------------

def block_diag(*arrs):
    """The block-diagonal matrix of the given arrays (scalars and vectors are 1-row
    blocks); dtypes promote. With no arrays, a (1, 0) float array."""
    if not arrs:
        arrs = (lnp.zeros((1, 0)),)
    check_arraylike("block_diag", *arrs)
    arrs = promote_dtypes(*[lnp.asarray(a) for a in arrs])
    for i, a in enumerate(arrs):
        if _ndim(a) > 2:
            raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                             f"dimensions, got shape {_shape(a)} at argument {i}.")
    arrs = [lnp.atleast_2d(a) for a in arrs]
    total = sum(_shape(a)[1] for a in arrs)
    rows, start = [], 0
    for a in arrs:
        cols = _shape(a)[1]
        rows.append(more.pad(a, ((0, 0), (start, total - start - cols))))
        start += cols
    return lnp.concatenate(rows, axis=0)


def _toeplitz_2d(c, r):
    m, n = _shape(c)[0], _shape(r)[0]
    if m == 0 or n == 0:
        return lnp.zeros((m, n), lnp.result_type(c, r))
    elems = lnp.concatenate((lnp.flip(c, 0), r[1:]))
    # Entry (i, j) is c[i - j] below the diagonal and r[j - i] on and above it.
    i = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    return elems[(m - 1) + j - i]


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (r defaults to conj(c));
    r[0] is ignored. Leading dimensions of c and r are batch dimensions."""
    if r is None:
        check_arraylike("toeplitz", c)
        r = uf.conj(lnp.asarray(c))
    else:
        check_arraylike("toeplitz", c, r)
    c, r = lnp.atleast_1d(lnp.asarray(c)), lnp.atleast_1d(lnp.asarray(r))
    return vectorize(_toeplitz_2d, signature="(m),(n)->(m,n)")(c, r)


def _hankel_2d(c, r):
    m, n = _shape(c)[0], _shape(r)[0]
    if m == 0 or n == 0:
        return lnp.zeros((m, n), lnp.result_type(c, r))
    elems = lnp.concatenate((c, r[1:]))
    return elems[np.arange(m)[:, None] + np.arange(n)[None, :]]


def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (zeros by default); r[0] is
    ignored. Leading dimensions are batch dimensions."""
    if r is None:
        check_arraylike("hankel", c)
        c = lnp.asarray(c)
        r = lnp.zeros_like(c)
    else:
        check_arraylike("hankel", c, r)
        c, r = lnp.asarray(c), lnp.asarray(r)
    if _ndim(c) == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if _ndim(r) == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    return vectorize(_hankel_2d, signature="(m),(n)->(m,n)")(c, r)


def _circulant_1d(c):
    n = _shape(c)[0]
    return c[(np.arange(n)[:, None] - np.arange(n)[None, :]) % max(n, 1)]


def circulant(c):
    """The circulant matrix whose first column is c (leading dimensions batch)."""
    check_arraylike("circulant", c)
    c = lnp.atleast_1d(lnp.asarray(c))
    return vectorize(_circulant_1d, signature="(n)->(n,n)")(c)


def _leslie_1d(f, s):
    n = _shape(f)[0]
    below = lnp.concatenate([more.diag(s), lnp.zeros((n - 1, 1), get_aval(s).dtype)], axis=1)
    return lnp.concatenate([f[None, :], below], axis=0)


def leslie(f, s):
    """The Leslie matrix: fecundity f (length n >= 2) in the first row, survival s (length
    n - 1) on the subdiagonal. Leading dimensions are batch dimensions."""
    check_arraylike("leslie", f, s)
    f, s = lnp.atleast_1d(lnp.asarray(f)), lnp.atleast_1d(lnp.asarray(s))
    if _shape(f)[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape "
                         f"{_shape(f)}.")
    if _shape(s)[-1] != _shape(f)[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis "
                         "must be one less than the length of f; got f shape "
                         f"{_shape(f)} and s shape {_shape(s)}.")
    f, s = promote_dtypes(f, s)
    return vectorize(_leslie_1d, signature="(n),(m)->(n,n)")(f, s)


def _companion_1d(a):
    m = _shape(a)[0] - 1
    first = -a[1:] / a[0]
    below = lnp.eye(m - 1, m, dtype=get_aval(first).dtype)
    return lnp.concatenate([first[None, :], below], axis=0)


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest power first):
    first row -a[1:] / a[0], ones on the subdiagonal."""
    (a,) = promote_args_inexact("companion", a)
    a = lnp.atleast_1d(a)
    if _shape(a)[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got "
                         f"shape {_shape(a)}.")
    return vectorize(_companion_1d, signature="(n)->(m,m)")(a)


def fiedler(a):
    """The symmetric Fiedler matrix |a[i] - a[j]| (leading dimensions batch)."""
    check_arraylike("fiedler", a)
    a = lnp.atleast_1d(lnp.asarray(a))
    return uf.abs(a[..., :, None] - a[..., None, :])


def _fiedler_companion_1d(a):
    n = _shape(a)[0] - 1
    if n == 0:
        return lnp.zeros((0, 0), get_aval(a).dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    # The pentadiagonal Fiedler companion form: for even rows i, -a[i+1] at (i, i+1)...
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    even, odd = i % 2 == 0, i % 2 == 1
    one = lnp.ones((), get_aval(a).dtype)
    zero = lnp.zeros((), get_aval(a).dtype)
    above = -a[np.minimum(i + 2, n)]
    below = -a[np.minimum(i + 1, n)]
    out = lnp.where((i == 0) & (j == 0), -a[1], zero)
    out = lnp.where((i == 1) & (j == 0), one, out)
    out = lnp.where((j == i + 1) & even, above, out)
    out = lnp.where((j == i + 2) & even, one, out)
    out = lnp.where((j == i - 1) & even & (i >= 2), below, out)
    return lnp.where((j == i - 2) & odd & (i >= 3), one, out)


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients a (highest power
    first): pentadiagonal, with the same eigenvalues as companion(a)."""
    (a,) = promote_args_inexact("fiedler_companion", a)
    a = lnp.atleast_1d(a)
    if _shape(a)[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {_shape(a)}.")
    return vectorize(_fiedler_companion_1d, signature="(n)->(m,m)")(a)


def convolution_matrix(a, n, mode="full"):
    """The Toeplitz matrix A with A @ v == convolve(a, v, mode) for v of length n."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    check_arraylike("convolution_matrix", a)
    a = lnp.asarray(a)
    if _ndim(a) == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a "
                         "scalar.")
    m = _shape(a)[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {_shape(a)}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    widths = [(0, 0)] * (_ndim(a) - 1) + [(0, n - 1)]
    padded = more.pad(a, widths)
    reversed_ = more.pad(lnp.flip(a, -1), widths)
    total = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        head, tail = trim // 2, trim - trim // 2
    elif mode == "valid":
        head = tail = min(n, m) - 1
    else:
        head = tail = 0
    return toeplitz(padded[..., head:total - tail], reversed_[..., total - n - head:total - head])


def _check_order(name, n):
    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(f"jax.scipy.linalg.{name}: n must be an integer, got {n!r}") from None


def hilbert(n):
    """The n x n Hilbert matrix 1 / (i + j + 1)."""
    n = _check_order("hilbert", n)
    i = lnp.arange(n, dtype=dtypes.default_float_dtype())
    return 1 / (i[:, None] + i[None, :] + 1)


def invhilbert(n):
    """The inverse of the n x n Hilbert matrix, from its closed form in binomials,
    (-1)^(i+j) (i+j+1) C(n+i, n-j-1) C(n+j, n-i-1) C(i+j, i)^2."""
    n = _check_order("invhilbert", n)

    def entry(i, j):
        return ((-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1)
                * math.comb(n + j, n - i - 1) * math.comb(i + j, i) ** 2)
    return _integer_matrix(n, entry, dtypes.default_float_dtype())


def _integer_matrix(n, entry, dtype):
    """The n x n matrix of the integers entry(i, j), computed exactly on the host and
    rounded once to dtype (inf beyond its range): exact wherever dtype holds the values,
    and the same under jit as eagerly."""
    def rounded(v):
        return float(v) if abs(v) <= sys.float_info.max else math.copysign(math.inf, v)
    values = np.array([[rounded(entry(i, j)) for j in range(n)] for i in range(n)],
                      np.float64).reshape(n, n)
    with np.errstate(over="ignore"):
        return lnp.asarray(values.astype(dtype))


def _check_kind(kind):
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"Expected kind to be one of: {valid}; got {kind}")
    return kind


def pascal(n, kind=None):
    """The n x n Pascal matrix: 'symmetric' (default) C(i + j, i), or its 'lower'/'upper'
    Cholesky factor C(i, j) / C(j, i). float32 whatever the x64 setting, as in JAX."""
    n = _check_order("pascal", n)
    kind = _check_kind(kind)
    entry = {"symmetric": lambda i, j: math.comb(i + j, i),
             "lower": math.comb, "upper": lambda i, j: math.comb(j, i)}[kind]
    return _integer_matrix(n, entry, np.float32)


def invpascal(n, kind=None):
    """The inverse of pascal(n, kind): lower factor (-1)^(i-j) C(i, j), its transpose
    ('upper'), or their product ('symmetric'), computed exactly."""
    n = _check_order("invpascal", n)
    kind = _check_kind(kind)

    def lower(i, j):
        return (-1) ** (i - j) * math.comb(i, j)
    entry = {"lower": lower, "upper": lambda i, j: lower(j, i),
             "symmetric": lambda i, j: sum(lower(k, i) * lower(k, j) for k in range(n))}[kind]
    return _integer_matrix(n, entry, dtypes.default_float_dtype())


def helmert(n, full=False):
    """The (n - 1) x n Helmert matrix (n x n with the first row 1/sqrt(n) when full):
    orthonormal rows orthogonal to the ones vector."""
    n = _check_order("helmert", n)
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    float_ = dtypes.default_float_dtype()
    i = np.arange(n - 1)[:, None]
    j = np.arange(n)[None, :]
    k = lnp.asarray(i + 1, float_)
    scale = uf.sqrt(k * (k + 1))
    out = lnp.where(j <= i, 1 / scale, lnp.where(j == i + 1, -k / scale, 0).astype(float_))
    if full:
        first = lnp.full((1, n), 1 / math.sqrt(n), float_)
        out = lnp.concatenate([first, out], axis=0)
    return out


def hadamard(n, dtype=int):
    """The n x n Hadamard matrix (Sylvester's construction; n a power of 2)."""
    n = _check_order("hadamard", n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    out = lnp.ones((1, 1), dtype=dtype)
    while _shape(out)[0] < n:
        out = lnp.concatenate([lnp.concatenate([out, out], 1),
                               lnp.concatenate([out, -out], 1)], 0)
    return out


def dft(n, scale=None, *, dtype=None):
    """The n x n discrete Fourier transform matrix exp(-2 pi i j k / n), scaled by
    1/sqrt(n) ('sqrtn') or 1/n ('n')."""
    n = _check_order("dft", n)
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.default_complex_dtype()
    else:
        dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
        if not dtypes.is_complex(dtype):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = lnp.arange(n, dtype=dtype)
    out = uf.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        out = out / math.sqrt(n)
    elif scale == "n":
        out = out / n
    return out

