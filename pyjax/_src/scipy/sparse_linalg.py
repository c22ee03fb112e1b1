"""jax.scipy.sparse.linalg: iterative solvers (conjugate gradient, BiCGSTAB and restarted
GMRES) for A x = b, where A is a matrix or a function and b any pytree. Each solver runs on
b's leaves raveled into one vector, inside lax.custom_linear_solve, so derivatives solve
again instead of differentiating the iterations."""
from __future__ import annotations

import numpy as np

from pyjax._src import tree_util
from pyjax._src.array import Array
from pyjax._src.core.avals import get_aval
from pyjax._src.flatten_util import ravel_pytree
from pyjax._src.lax.control_flow.fori import fori_loop
from pyjax._src.lax.control_flow.loops import while_loop
from pyjax._src.lax.control_flow.solves import custom_linear_solve
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import linalg as np_linalg
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs
from pyjax._src.numpy.util import convert


def _as_linear_operator(A):
    """A function x -> A x for a callable, a square matrix, or an object with a
    `__matmul__` (and, if it has one, a square `shape`)."""
    if callable(A):
        return A
    if isinstance(A, (np.ndarray, Array)):
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{A.shape}")
        return lambda x: lnp.matmul(A, x, precision="highest")
    if hasattr(A, "__matmul__"):
        if hasattr(A, "shape") and (len(A.shape) != 2 or A.shape[0] != A.shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{A.shape}")
        return lambda x: A @ x
    raise TypeError(f"linear operator must be either a function or ndarray: {A}")


def _vdot(x, y):
    """sum(conj(x) * y) of two flat vectors."""
    return red.sum(ufuncs.conjugate(x) * y)


def _vdot_real(x, y):
    return ufuncs.real(_vdot(x, y))


def _norm(x):
    return np_linalg.norm(x)


def _cg(A, b, x0, M, tol, atol, maxiter):
    """Preconditioned conjugate gradient for Hermitian positive definite A and M."""
    atol2 = ufuncs.maximum(tol ** 2 * _vdot_real(b, b), atol ** 2)
    r0 = b - A(x0)
    z0 = M(r0)

    def cond(state):
        _, r, _, _, k = state
        return (_vdot_real(r, r) > atol2) & (k < maxiter)

    def body(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / _vdot_real(p, Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        z = M(r)
        gamma_next = _vdot_real(r, z)
        return x, r, gamma_next, z + (gamma_next / gamma) * p, k + 1

    state = (x0, r0, _vdot_real(r0, z0), z0, 0)
    return while_loop(cond, body, state)[0]


def _bicgstab(A, b, x0, M, tol, atol, maxiter):
    """Preconditioned BiCGSTAB. A breakdown (rho, alpha or omega reaching zero) ends the
    loop with the iterate reached so far."""
    atol2 = ufuncs.maximum(tol ** 2 * _vdot_real(b, b), atol ** 2)
    r0 = b - A(x0)
    one = lnp.ones((), r0.dtype)

    def cond(state):
        _, r, *_, k = state
        return (_vdot_real(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body(state):
        x, r, p, v, rho, alpha, omega, k = state
        rho_next = _vdot(r0, r)
        beta = (rho_next / rho) * (alpha / omega)
        p = r + beta * (p - omega * v)
        p_hat = M(p)
        v = A(p_hat)
        alpha = rho_next / _vdot(r0, v)
        s = r - alpha * v
        x = x + alpha * p_hat
        s_converged = _vdot_real(s, s) < atol2
        s_hat = M(s)
        t = A(s_hat)
        omega = _vdot(t, s) / _vdot(t, t)
        x = lnp.where(s_converged, x, x + omega * s_hat)
        r = lnp.where(s_converged, s, s - omega * t)
        broke_down = (rho_next == 0) | (alpha == 0) | (omega == 0)
        return x, r, p, v, rho_next, alpha, omega, lnp.where(broke_down, -1, k + 1)

    zeros = lnp.zeros_like(r0)
    state = (x0, r0, zeros, zeros, one, one, one, 0)
    return while_loop(cond, body, state)[0]


def _safe_normalize(x):
    """x / |x| and |x|, with 0 instead of a unit vector when |x| is at rounding level."""
    norm = _norm(x)
    tiny = np.finfo(norm.dtype).eps * 10
    return lnp.where(norm > tiny, x / lnp.where(norm > tiny, norm, 1), 0), norm


def _gmres_cycle(A, M, x, unit_residual, residual_norm, restart):
    """One restart: an Arnoldi basis of the Krylov space of M A (classical Gram-Schmidt,
    done twice for stability), then the least-squares step over it."""
    n = x.shape[0]
    basis = lnp.zeros((restart + 1, n), x.dtype).at[0].set(unit_residual)
    hessenberg = lnp.zeros((restart, restart + 1), x.dtype)   # stored by columns

    def arnoldi_step(j, carry):
        basis, hessenberg = carry
        w = M(A(basis[j]))
        h = lnp.zeros((restart + 1,), x.dtype)
        for _ in range(2):
            correction = lnp.matmul(ufuncs.conjugate(basis), w, precision="highest")
            w = w - lnp.matmul(correction, basis, precision="highest")
            h = h + correction
        w, w_norm = _safe_normalize(w)
        h = h.at[j + 1].set(w_norm.astype(x.dtype))
        return basis.at[j + 1].set(w), hessenberg.at[j].set(h)

    basis, hessenberg = fori_loop(0, restart, arnoldi_step, (basis, hessenberg))
    rhs = lnp.zeros((restart + 1,), x.dtype).at[0].set(residual_norm.astype(x.dtype))
    y = np_linalg.lstsq(hessenberg.T, rhs)[0]
    return x + lnp.matmul(y, basis[:-1], precision="highest")


def _gmres(A, b, x0, M, tol, atol, maxiter, restart):
    """Restarted GMRES, left-preconditioned: it minimises |M (b - A x)| and stops once
    that is within tol (relative to |M b|, scaled like |b|) or after maxiter restarts."""
    b_norm = _norm(b)
    atol = ufuncs.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * ufuncs.minimum(1.0, atol / b_norm)

    def preconditioned_residual(x):
        return _safe_normalize(M(b - A(x)))

    def cond(state):
        _, k, _, residual_norm = state
        return (k < maxiter) & (residual_norm > ptol)

    def body(state):
        x, k, unit_residual, residual_norm = state
        x = _gmres_cycle(A, M, x, unit_residual, residual_norm, restart)
        return (x, k + 1, *preconditioned_residual(x))

    return while_loop(cond, body, (x0, 0, *preconditioned_residual(x0)))[0]


def _isolve(solver, A, b, x0, tol, atol, maxiter, M, symmetric):
    b = tree_util.tree_map(lnp.asarray, b)
    if x0 is None:
        x0 = tree_util.tree_map(lnp.zeros_like, b)
    x0 = tree_util.tree_map(lnp.asarray, x0)
    b_tree, x0_tree = tree_util.tree_structure(b), tree_util.tree_structure(x0)
    if b_tree != x0_tree:
        raise ValueError(f"x0 and b must have matching tree structure: {x0_tree} vs "
                         f"{b_tree}")
    b_shapes = [leaf.shape for leaf in tree_util.tree_leaves(b)]
    x0_shapes = [leaf.shape for leaf in tree_util.tree_leaves(x0)]
    if b_shapes != x0_shapes:
        raise ValueError(f"arrays in x0 and b must have matching shapes: {x0_shapes} vs "
                         f"{b_shapes}")
    if maxiter is None:
        maxiter = 10 * sum(int(np.prod(shape)) for shape in b_shapes)
    matvec = _as_linear_operator(A)
    precondition = (lambda x: x) if M is None else _as_linear_operator(M)

    def solve(matvec, b):
        b_flat, unravel = ravel_pytree(b)
        x0_flat = ravel_pytree(x0)[0].astype(b_flat.dtype)

        def flat(f):
            return lambda v: ravel_pytree(f(unravel(v)))[0].astype(b_flat.dtype)
        x = unravel(solver(flat(matvec), b_flat, x0_flat, flat(precondition), tol, atol,
                           maxiter))
        # x is weakly typed when all of b is (JAX's solvers mix b's leaves in every step)
        weak = all(get_aval(leaf).weak_type for leaf in tree_util.tree_leaves(b))
        return tree_util.tree_map(lambda x: convert(x, x.dtype, weak), x)

    if symmetric:   # a real positive definite operator is its own transpose
        symmetric = not any(lnp.iscomplexobj(leaf) for leaf in tree_util.tree_leaves(b))
    return custom_linear_solve(matvec, b, solve, transpose_solve=solve, symmetric=symmetric)


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b by (preconditioned) conjugate gradients; A (a matrix or a function)
    and M must be Hermitian positive definite. Stops when |b - A x| <= max(tol |b|, atol)
    or after maxiter steps (default 10 * size of b). Returns (x, None)."""
    x = _isolve(_cg, A, b, x0, tol, atol, maxiter, M, symmetric=True)
    return x, None


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve A x = b for a general A by BiCGSTAB; same stopping rule as cg. Returns
    (x, None)."""
    x = _isolve(_bicgstab, A, b, x0, tol, atol, maxiter, M, symmetric=False)
    return x, None


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve A x = b for a general A by GMRES restarted every `restart` steps (at most the
    size of b), at most maxiter restarts, M a left preconditioner. Returns (x, info) with
    info -1 when x came out NaN, else 0."""
    if solve_method not in ("incremental", "batched"):
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         "'incremental' or 'batched'")
    size = sum(int(np.size(leaf)) for leaf in tree_util.tree_leaves(b))
    restart = min(restart, size)

    def solver(A, b, x0, M, tol, atol, maxiter):
        return _gmres(A, b, x0, M, tol, atol, maxiter, restart)
    x = _isolve(solver, A, b, x0, tol, atol, maxiter, M, symmetric=False)
    return x, lnp.where(ufuncs.isnan(_norm(ravel_pytree(x)[0])), -1, 0)


__all__ = ["bicgstab", "cg", "gmres"]
