"""jax.experimental.sparse.linalg: spsolve (a sparse direct solve, through SciPy as JAX's
CPU backend) and LOBPCG: the top-k eigenpairs of a Hermitian matrix or
of a function giving its action, by Locally Optimal Block Preconditioned Conjugate
Gradient, written as JAX writes it (an orthonormal basis for the block search
directions kept by SVQB, its convergence rule, its basis extension by block
Householder reflectors), so that iterates and iteration counts agree with JAX's."""
from __future__ import annotations

import functools

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from pyjax._src.api.jit import jit
from pyjax._src.api.shapes import ShapeDtypeStruct
from pyjax._src.array import Array
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace import NO_BATCHING
from pyjax._src.interpreters import ad
from pyjax._src.lax import builders
from pyjax._src.lax import dot as ldot
from pyjax._src.lax import sorting as lax_sorting
from pyjax._src.lax.callbacks import pure_callback
from pyjax._src.lax.control_flow.loops import while_loop
from pyjax._src.lax.control_flow.scan import scan
from pyjax._src.numpy import array_manipulation as am
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import linalg as np_linalg
from pyjax._src.numpy import numerical
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import sorting
from pyjax._src.numpy import ufuncs
from pyjax._src.sparse.composite import composite_primitive
from pyjax._src.sparse.csr import csr_matvec_p


def lobpcg_standard(A, X, m=100, tol=None):
    """The k largest eigenvalues theta (descending) and eigenvectors U (n, k) of the
    Hermitian (n, n) matrix A, or of the function A giving its action on (n, k) blocks,
    from the k initial directions X (orthonormalised here; 0 < 5 k < n), after at most m
    iterations; returns (theta, U, iterations). An eigenpair (lambda, v) has converged
    when |A v - lambda v| < tol * 10 n (lambda + |A v|) (tol defaults to the float
    epsilon of A's dtype); the iteration stops early once all k have."""
    if isinstance(A, (Array, np.ndarray)):   # jit compiles once per matrix shape
        return _lobpcg_standard_matrix(A, X, m, tol, debug=False)
    return _lobpcg_standard_callable(A, X, m, tol, debug=False)


@functools.partial(jit, static_argnames=["m", "debug"])
def _lobpcg_standard_matrix(A, X, m, tol, debug=False):
    """lobpcg_standard for a matrix A; with debug, also per-iteration diagnostics."""
    return _lobpcg_standard_callable(functools.partial(_mm, A), X, m, tol, debug)


@functools.partial(jit, static_argnames=["A", "m", "debug"])
def _lobpcg_standard_callable(A, X, m, tol, debug=False):
    """lobpcg_standard for a function A; with debug, m iterations and per-iteration
    diagnostics."""
    n, k = X.shape
    _check_inputs(A, X)
    if tol is None:
        tol = float(np.finfo(X.dtype).eps)
    X = _orthonormalize(X)
    P = _extend_basis(X, X.shape[1])
    # X the current best eigenvectors, P the search directions, R the residuals.
    AX = A(X)
    theta = red.sum(X * AX, axis=0, keepdims=True)
    R = AX - theta * X

    def cond(state):
        i, _, _, _, converged, _ = state
        return (i < m) & (converged < k)

    def body(state):
        i, X, P, R, _, theta = state
        # X, P, R stay orthonormal; columns of P and R may be 0 (basis truncation).
        R = _project_out(lnp.concatenate((X, P), axis=1), R)
        XPR = lnp.concatenate((X, P, R), axis=1)
        theta, Q = _rayleigh_ritz_orth(A, XPR)
        B = Q[:, :k]
        B = B / np_linalg.norm(B, ord=2, axis=0, keepdims=True)
        X = _mm(XPR, B)
        X = X / np_linalg.norm(X, ord=2, axis=0, keepdims=True)
        # The new directions: (0, Q[k:, :k]) orthogonalised against Q[:, :k], mapped by
        # the orthonormal XPR (so they come out orthonormal).
        q, _ = np_linalg.qr(Q[:k, k:].T)
        P = _mm(XPR, _mm(Q[:, k:], q))
        normP = np_linalg.norm(P, ord=2, axis=0, keepdims=True)
        P = P / lnp.where(normP == 0, 1.0, normP)
        AX = A(X)
        R = AX - theta[None, :k] * X
        resid_norms = np_linalg.norm(R, ord=2, axis=0)
        # Converged: the residual is within the rounding error expected of computing it.
        reltol = (np_linalg.norm(AX, ord=2, axis=0) + theta[:k]) * n * 10
        converged = red.sum(resid_norms < tol * reltol)
        new_state = i + 1, X, P, R, converged, theta[None, :k]
        if debug:
            return new_state, _diagnostics(XPR, X, P, R, theta, converged,
                                           resid_norms / reltol)
        return new_state

    state = (0, X, P, R, 0, theta)
    if debug:
        state, diagnostics = scan(lambda state, _: body(state), state, xs=None, length=m)
        i, X, _, _, _, theta = state
        return theta[0, :], X, i, diagnostics
    i, X, _, _, _, theta = while_loop(cond, body, state)
    return theta[0, :], X, i


def _check_inputs(A, X):
    n, k = X.shape
    if k == 0:
        raise ValueError(f"must have search dim > 0, got {k}")
    if k * 5 >= n:
        raise ValueError(f"expected search dim * 5 < matrix dim (got {k * 5}, {n})")
    test_output = A(lnp.zeros((n, 1), dtype=X.dtype))
    if test_output.dtype != X.dtype:
        raise ValueError(f"A, X must have same dtypes (were {test_output.dtype}, "
                         f"{X.dtype})")
    if test_output.shape != (n, 1):
        raise ValueError(f"A must be ({n}, {n}) matrix A, got output {test_output.shape}")


def _mm(a, b):
    return ldot.dot(a, b, precision=("highest", "highest"))


def _diagnostics(prev_XPR, X, P, R, theta, converged, adj_resid):
    k = X.shape[1]

    def off_diagonal_mean(x):
        return red.sum(ufuncs.abs(x - am.diag(am.diag(x)))) / (k ** 2)

    def zero_columns(x):
        return red.sum(red.all(x == 0.0, axis=0))
    return {
        "basis rank": prev_XPR.shape[1] - zero_columns(prev_XPR),
        "X zeros": zero_columns(X),
        "P zeros": zero_columns(P),
        "lambda history": theta[:k],
        "residual history": np_linalg.norm(R, axis=0, ord=2),
        "converged": converged,
        "adjusted residual max": red.max(adj_resid),
        "adjusted residual p50": sorting.median(adj_resid),
        "adjusted residual min": red.min(adj_resid),
        "X orth": off_diagonal_mean(_mm(X.T, X)),
        "P orth": off_diagonal_mean(_mm(P.T, P)),
        "P.X": red.sum(ufuncs.abs(X.T @ P)) / (k ** 2)}


def _eigh_descending(A):
    w, V = np_linalg.eigh(A)
    return w[::-1], V[:, ::-1]


def _svqb(X):
    """An orthonormal basis (n, k) of the span of X by SVQB (eigenvectors of X^T X), with
    the columns of directions X is numerically degenerate in zeroed out."""
    norms = np_linalg.norm(X, ord=2, axis=0, keepdims=True)
    X = X / lnp.where(norms == 0, 1.0, norms)
    inner = _mm(X.T, X)
    w, V = _eigh_descending(inner)
    # An eigenvalue below the largest's times eps is a degenerate direction.
    tau = np.finfo(X.dtype).eps * w[0]
    padded = ufuncs.maximum(w, tau)
    sqrted = lnp.where(tau > 0, padded, 1.0) ** (-0.5)   # tau == 0: X was all zeros
    orthoX = _mm(X, V * sqrted[None, :])
    keep = ((w > tau) * (am.diag(inner) > 0.0))[None, :]
    orthoX = orthoX * keep.astype(orthoX.dtype)
    norms = np_linalg.norm(orthoX, ord=2, axis=0, keepdims=True)
    keep = keep * (norms > 0.0)
    return orthoX / lnp.where(keep, norms, 1.0)


def _project_out(basis, U):
    """The part of U orthogonal to the orthonormal (zero columns allowed) basis, its
    nonzero columns orthonormal: subtract and orthonormalise twice, subtract twice more,
    and zero the columns that lost norm (they would bring the basis back in)."""
    for _ in range(2):
        U = U - _mm(basis, _mm(basis.T, U))
        U = _orthonormalize(U)
    for _ in range(2):
        U = U - _mm(basis, _mm(basis.T, U))
    normU = np_linalg.norm(U, ord=2, axis=0, keepdims=True)
    return U * (normU >= 0.99).astype(U.dtype)


def _orthonormalize(basis):
    for _ in range(2):
        basis = _svqb(basis)
    return basis


def _rayleigh_ritz_orth(A, S):
    """Eigenvalues (descending) and eigenvectors of A projected on the orthonormal S."""
    return _eigh_descending(_mm(S.T, A(S)))


def _extend_basis(X, m):
    """m more orthonormal directions (n, m) orthogonal to the orthonormal X (n, k): columns
    of the block Householder reflector that maps X to (-u vt, 0)."""
    n, k = X.shape
    Xupper, Xlower = lnp.split(X, [k], axis=0)
    u, s, vt = np_linalg.svd(Xupper)
    y = lnp.concatenate([Xupper + _mm(u, vt), Xlower], axis=0)
    other = lnp.concatenate([lnp.eye(m, dtype=X.dtype),
                             lnp.zeros((n - k - m, m), dtype=X.dtype)], axis=0)
    w = _mm(y, vt.T * ((2 * (1 + s)) ** (-1 / 2))[None, :])
    h = -2 * np_linalg.multi_dot([w, w[k:, :].T, other], precision="highest")
    return h.at[k:].add(other)


__all__ = ["lobpcg_standard"]


# --- spsolve ----------------------------------------------------------------------------

def spsolve(data, indices, indptr, b, tol=1e-6, reorder=1):
    """The solution x of A x = b for the square CSR matrix A = (data, indices, indptr).
    As JAX's CPU backend, it calls scipy.sparse.linalg.spsolve (tol and reorder are
    options of JAX's GPU solver; it does not support vmap)."""
    return spsolve_p.bind(data, indices, indptr, b, tol=tol, reorder=reorder)


def _scipy_spsolve(data, indices, indptr, b):
    a = scipy.sparse.csr_matrix((data, indices, indptr), shape=(b.size, b.size))
    return scipy.sparse.linalg.spsolve(a, b).astype(b.dtype)


def _spsolve_fun(data, indices, indptr, b, *, tol, reorder):
    return pure_callback(_scipy_spsolve, ShapeDtypeStruct(b.shape, b.dtype), data, indices,
                         indptr, b)


def _spsolve_abstract_eval(data, indices, indptr, b, *, tol, reorder):
    if data.dtype != b.dtype:
        raise ValueError(f"data types do not match: data.dtype={data.dtype} "
                         f"b.dtype={b.dtype}")
    if not (np.issubdtype(indices.dtype, np.integer)
            and np.issubdtype(indptr.dtype, np.integer)):
        raise ValueError(f"index arrays must be integer typed; got indices.dtype="
                         f"{indices.dtype} indptr.dtype={indptr.dtype}")
    if not data.ndim == indices.ndim == indptr.ndim == b.ndim == 1:
        raise ValueError("Arrays must be one-dimensional. Got data.shape="
                         f"{data.shape} indices.shape={indices.shape} "
                         f"indptr.shape={indptr.shape} b.shape={b.shape}")
    if indptr.size != b.size + 1 or data.shape != indices.shape:
        raise ValueError(f"Invalid CSR buffer sizes: data.shape={data.shape} "
                         f"indices.shape={indices.shape} indptr.shape={indptr.shape}")
    if reorder not in [0, 1, 2, 3]:
        raise ValueError(f"reorder={reorder} not valid, must be one of [1, 2, 3, 4]")
    float(tol)
    return ShapedArray(b.shape, b.dtype)


def _spsolve_jvp_lhs(data_dot, data, indices, indptr, b, **params):
    # d/dM M^-1 b = -M^-1 M_dot M^-1 b
    p = spsolve(data, indices, indptr, b, **params)
    q = csr_matvec_p.bind(data_dot, indices, indptr, p, shape=(indptr.size - 1, len(b)),
                          transpose=False)
    return -spsolve(data, indices, indptr, q, **params)


def _csr_transpose(data, indices, indptr):
    """The CSR buffers of the transpose of a square CSR matrix."""
    m = indptr.size - 1
    row = red.cumsum(lnp.zeros_like(indices).at[indptr].add(1)) - 1
    row_t, indices_t, data_t = lax_sorting.sort((indices, row, data), num_keys=2)
    indptr_t = lnp.zeros_like(indptr).at[1:].set(
        red.cumsum(numerical.bincount(row_t, length=m)).astype(indptr.dtype))
    return data_t, indices_t, indptr_t


def _spsolve_transpose(ct, data, indices, indptr, b, **params):
    if not ad.is_undefined_primal(b) or ad.is_undefined_primal(data):
        raise NotImplementedError("spsolve transpose with respect to data")
    data_t, indices_t, indptr_t = _csr_transpose(data, indices, indptr)
    return [None, None, None, spsolve(data_t, indices_t, indptr_t, ad.instantiate_zeros(ct),
                                      **params)]


spsolve_p = composite_primitive(
    "spsolve", _spsolve_fun, abstract_eval=_spsolve_abstract_eval,
    jvp=ad.defjvp(_spsolve_jvp_lhs, None, None,
                  lambda b_dot, data, indices, indptr, b, **params: spsolve(
                      data, indices, indptr, b_dot, **params)),
    transpose=_spsolve_transpose, batch=NO_BATCHING,
    samples=lambda: [builders.Sample([np.array([2., 1., 3.], np.float32),
                               np.array([0, 1, 1], np.int32), np.array([0, 2, 3], np.int32),
                               np.array([1., 2.], np.float32)],
                              {"tol": 1e-6, "reorder": 1})])
