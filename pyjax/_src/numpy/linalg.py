"""jax.numpy.linalg: decompositions, solvers, norms and the array-API helpers, built on
lax.linalg's primitives. Integer inputs promote to the default float dtype; a failed
factorisation gives NaNs instead of raising, as in JAX. Imports lax, api (custom_jvp),
the core jnp modules and dtypes."""
from __future__ import annotations

import builtins
import operator
from typing import NamedTuple

import numpy as np

from pyjax._src import dtypes
from pyjax._src.api.custom_derivatives import custom_jvp
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import linalg as llinalg
from pyjax._src.lax import linalg_spectral as lspectral
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy.lax_numpy import shape as _shape
from pyjax._src.numpy import array_manipulation as more
from pyjax._src.numpy import indexing
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import check_arraylike, ensure_array, promote_dtypes_inexact
from pyjax._src.util import canonicalize_axis


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def _inexact(name, *args):
    check_arraylike(name, *args)
    return promote_dtypes_inexact(*[lnp.asarray(a) for a in args])


def _matrices(name, a, square=False):
    (a,) = _inexact(name, a)
    shape = get_aval(a).shape
    if len(shape) < 2:
        raise ValueError(f"jnp.linalg.{name} requires an array of at least 2 dimensions "
                         f"(a stack of matrices), got shape {shape}")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"jnp.linalg.{name} requires square matrices (last two dimensions "
                         f"equal), got shape {shape}")
    return a


def _H(x):
    return uf.conj(lnp.matrix_transpose(x))


def _dtype(x):
    return get_aval(x).dtype


# --- decompositions -------------------------------------------------------------------------

def cholesky(a, *, upper=False, symmetrize_input=True):
    """The Cholesky factor of Hermitian positive-definite matrices: L with a = L @ L^H
    (or U with a = U^H @ U when upper). Non positive-definite input gives NaNs."""
    a = _matrices("cholesky", a, square=True)
    L = ensure_array(llinalg.cholesky(a, symmetrize_input=symmetrize_input))
    return _H(L) if upper else L


def qr(a, mode="reduced"):
    """QR decomposition; mode 'reduced', 'complete' or 'r' (only R)."""
    a = _matrices("qr", a)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'; use 'reduced', "
                         "'complete' or 'r'")
    q, r = llinalg.qr(a, full_matrices=mode == "complete")
    if mode == "r":
        return ensure_array(r)
    return QRResult(ensure_array(q), ensure_array(r))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """Singular value decomposition a = U @ diag(S) @ Vh, S descending. `hermitian`
    selects an algorithm in NumPy; the general one gives the same decomposition."""
    a = _matrices("svd", a)
    outs = lspectral.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                         subset_by_index=subset_by_index)
    if not compute_uv:
        return ensure_array(outs)
    u, s, vh = outs
    return SVDResult(ensure_array(u), ensure_array(s), ensure_array(vh))


def svdvals(x, /):
    """The singular values of x, descending."""
    return svd(x, compute_uv=False)


def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices."""
    a = _matrices("eigh", a, square=True)
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"UPLO must be 'L' or 'U', got {UPLO!r}")
    v, w = lspectral.eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return EighResult(ensure_array(w), ensure_array(v))


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """Eigenvalues of Hermitian matrices, ascending."""
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices (complex results).
    Only differentiable through the eigenvalues, as in JAX."""
    a = _matrices("eig", a, square=True)
    w, v = lspectral.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=True)
    return EigResult(ensure_array(w), ensure_array(v))


def eigvals(a):
    """Eigenvalues of general square matrices (complex)."""
    a = _matrices("eigvals", a, square=True)
    (w,) = lspectral.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return ensure_array(w)


# --- solving --------------------------------------------------------------------------------

def _batch_broadcast(a, b, b_core):
    """a (..., n, n) and b (..., *b_core) broadcast to one batch shape."""
    batch = lnp.broadcast_shapes(_shape(a)[:-2], _shape(b)[:_shape(b).__len__() - b_core])
    a = lnp.broadcast_to(a, batch + _shape(a)[-2:])
    b = lnp.broadcast_to(b, batch + _shape(b)[len(_shape(b)) - b_core:])
    return a, b


def solve(a, b):
    """Solves a @ x = b. b is a vector (..., n) only when it is 1-D, else a stack of
    matrices (..., n, k) (NumPy 2 semantics)."""
    a = _matrices("solve", a, square=True)
    a, b = _inexact("solve", a, b)
    n = _shape(a)[-1]
    if get_aval(b).ndim == 1:
        if _shape(b)[0] != n:
            raise ValueError(f"jnp.linalg.solve: b of shape {_shape(b)} does not match a of "
                             f"shape {_shape(a)}")
        a, bm = _batch_broadcast(a, b[:, None], 2)
        return ensure_array(llinalg.solve(a, bm)[..., 0])
    if _shape(b)[-2] != n:
        raise ValueError(f"jnp.linalg.solve: b of shape {_shape(b)} does not match a of shape "
                         f"{_shape(a)} (b must be (..., {n}, k), or 1-D of length {n})")
    a, b = _batch_broadcast(a, b, 2)
    return ensure_array(llinalg.solve(a, b))


def inv(a):
    """The inverse of each square matrix (inf/NaN for singular ones)."""
    a = _matrices("inv", a, square=True)
    eye = lnp.broadcast_to(lnp.eye(_shape(a)[-1], dtype=_dtype(a)), _shape(a))
    return ensure_array(llinalg.solve(a, eye))


def _lu_diag_and_parity(a):
    lu, pivots, _ = llinalg.lu(a)
    diag = more.diagonal(lu, axis1=-2, axis2=-1)
    swaps = red.sum(pivots != np.arange(_shape(pivots)[-1], dtype=np.int32), axis=-1)
    parity = uf.remainder(swaps, 2)
    return diag, parity


@custom_jvp
def det(a):
    """Determinant of each square matrix."""
    a = _matrices("det", a, square=True)
    diag, parity = _lu_diag_and_parity(a)
    sign = lnp.where(parity == 1, lnp.asarray(-1, _dtype(a)), lnp.asarray(1, _dtype(a)))
    return sign * red.prod(diag, axis=-1)


@det.defjvp
def _det_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    a = _matrices("det", a, square=True)
    # d det = tr(adj(a) da): the adjugate, unlike det(a) a^-1, exists for singular a
    y, adj_da = _det_and_adjugate_times(a, lnp.asarray(da, _dtype(a)))
    return y, more.trace(adj_da, axis1=-2, axis2=-1)


def _det_and_adjugate_times(a, b):
    """(det(a), adj(a) @ b) from a's LU factors p a = l u. adj(a) b = det(a) u^-1 l^-1 p b,
    and solving u y = det(a) x divides by no last pivot when that pivot is replaced by
    1 / (the determinant of the others) and the last row of x is not scaled: right for a
    matrix of rank n - 1 whose zero pivot comes last. When another pivot is zero the
    product is taken as 0 (as JAX does)."""
    n = _shape(a)[-1]
    lu, pivots, permutation = llinalg.lu(a)
    diag = more.diagonal(lu, axis1=-2, axis2=-1)
    swaps = red.sum(pivots != np.arange(n, dtype=np.int32), axis=-1)
    sign = lnp.where(uf.remainder(swaps, 2) == 1, lnp.asarray(-1, _dtype(a)),
                     lnp.asarray(1, _dtype(a)))
    partial = red.cumprod(diag, axis=-1) * sign[..., None]
    y = partial[..., -1]
    if n == 1:   # adj of a 1x1 matrix is [[1]]
        return y, b
    lu = lu.at[..., -1, -1].set(1 / partial[..., -2])
    probe = llinalg.triangular_solve(lu, lnp.ones(_shape(b)[:-1] + (1,), _dtype(a)),
                                     left_side=True, lower=False)
    unusable = red.any(~uf.isfinite(probe), axis=(-2, -1))[..., None, None]
    # solve with the identity there instead: a 0 * inf would poison the transposed solves
    lu = lnp.where(unusable, lnp.eye(n, dtype=_dtype(a)), lu)
    x = indexing.take_along_axis(b, lnp.broadcast_to(permutation[..., :, None], _shape(b)),
                            axis=-2)
    x = llinalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = lnp.concatenate([x[..., :-1, :] * y[..., None, None], x[..., -1:, :]], axis=-2)
    x = llinalg.triangular_solve(lu, x, left_side=True, lower=False)
    return y, lnp.where(unusable, lnp.zeros((), _dtype(a)), x)


def slogdet(a, *, method=None):
    """(sign, log|det|) of each square matrix; method 'lu' (default) or 'qr'."""
    a = _matrices("slogdet", a, square=True)
    if method in (None, "lu"):
        diag, parity = _lu_diag_and_parity(a)
        flip = lnp.where(parity == 1, lnp.asarray(-1, _dtype(a)), lnp.asarray(1, _dtype(a)))
    elif method == "qr":
        q, r = llinalg.qr(a, full_matrices=False)
        diag = more.diagonal(r, axis1=-2, axis2=-1)
        flip = det(q)
    else:
        raise ValueError(f"Unrecognized slogdet method {method!r}; use 'lu' or 'qr'")
    absdiag = uf.abs(diag)
    logdet = red.sum(uf.log(absdiag), axis=-1)
    if dtypes.is_complex(_dtype(a)):
        unit = diag / lnp.where(absdiag == 0, 1, absdiag).astype(_dtype(a))
        sign = flip * red.prod(unit, axis=-1)
    else:
        sign = flip * red.prod(uf.sign(diag), axis=-1)
    zero = red.any(absdiag == 0, axis=-1)
    sign = lnp.where(zero, lnp.zeros((), _dtype(sign)), sign)
    logdet = lnp.where(zero, lnp.asarray(-np.inf, _dtype(logdet)), logdet)
    return SlogdetResult(sign, logdet)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least-squares solution x of a @ x ~= b with (x, residuals, rank, singular values).
    rcond defaults to eps * max(m, n) (the cutoff relative to the largest singular
    value)."""
    a, b = _inexact("lstsq", a, b)
    if get_aval(a).ndim != 2:
        raise TypeError(f"jnp.linalg.lstsq: a must be 2-D, got shape {_shape(a)}")
    if get_aval(b).ndim not in (1, 2):
        raise TypeError(f"jnp.linalg.lstsq: b must be 1-D or 2-D, got shape {_shape(b)}")
    m, n = _shape(a)
    if _shape(b)[0] != m:
        raise TypeError(f"jnp.linalg.lstsq: leading dimensions of a {_shape(a)} and b "
                        f"{_shape(b)} must match")
    vector = get_aval(b).ndim == 1
    if vector:
        b = b[:, None]
    dtype = _dtype(a)
    real = get_aval(uf.abs(lnp.zeros((), dtype))).dtype
    if rcond is None:
        rcond = float(np.finfo(real).eps) * builtins.max(m, n)
    u, s, vh = svd(a, full_matrices=False)
    # zero singular values never count (a zero matrix has rank 0 and solution 0)
    mask = s > 0
    if min(m, n):
        mask = mask & (s >= lnp.asarray(rcond, real) * s[0])
    rank = red.sum(mask)
    safe_s = lnp.where(mask, s, lnp.ones((), real))
    s_inv = lnp.where(mask, 1 / safe_s, lnp.zeros((), real))[:, None]
    uTb = lnp.matmul(_H(u), b)
    x = lnp.matmul(_H(vh), lnp.asarray(s_inv, dtype) * uTb)
    b_est = lnp.matmul(a, x)
    resid = red.sum(uf.abs(b - b_est) ** 2, axis=0)
    # NumPy's residuals are empty for a rank-deficient a: this needs a concrete rank, so
    # numpy_resid=True does not trace under jit (as in JAX)
    if numpy_resid and (m <= n or int(rank) < n):
        resid = lnp.zeros((0,), real)
    if vector:
        x = x[:, 0]
        if get_aval(resid).shape[0]:
            resid = resid[0]
    return x, resid, rank, s


@custom_jvp
def _pinv(a, rtol):
    u, s, vh = svd(a, full_matrices=False)
    real = _dtype(s)
    cutoff = lnp.asarray(rtol, real)[..., None] * red.max(s, axis=-1, keepdims=True)
    s_inv = lnp.where(s > cutoff, 1 / lnp.where(s > cutoff, s, 1), lnp.zeros((), real))
    return lnp.matmul(_H(vh) * lnp.asarray(s_inv, _dtype(a))[..., None, :], _H(u))


def _product_of_three(x, y, z):
    """x @ y @ z, multiplied in the order with the smaller intermediate product."""
    (rx, _), (ry, cy), (_, cz) = _shape(x)[-2:], _shape(y)[-2:], _shape(z)[-2:]
    if rx * cy <= ry * cz:
        return lnp.matmul(lnp.matmul(x, y), z)
    return lnp.matmul(x, lnp.matmul(y, z))


@_pinv.defjvp
def _pinv_jvp(primals, tangents):
    # The derivative of the pseudo-inverse p of a (Golub & Pereyra):
    # dp = -p da p + p p^H da^H (I - a p) + (I - p a) da^H p^H p, multiplied out without
    # the identities and in an order that keeps intermediates small: for a tall or wide
    # a, m x m or n x n products would not fit in memory.
    a, rtol = primals
    da = tangents[0]
    p = _pinv(a, rtol)
    da_h = _H(da)
    x = _product_of_three(p, _H(p), da_h)
    y = _product_of_three(da_h, _H(p), p)
    dp = (x - _product_of_three(x, a, p) - _product_of_three(p, da, p)
          + y - _product_of_three(p, a, y))
    return p, dp


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """Moore-Penrose pseudo-inverse via the SVD; singular values below rtol * max(s)
    are dropped (rtol defaults to 10 * max(m, n) * eps)."""
    a = _matrices("pinv", a)
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    m, n = _shape(a)[-2:]
    real = get_aval(uf.abs(lnp.zeros((), _dtype(a)))).dtype
    if rtol is None:
        rtol = 10 * builtins.max(m, n) * float(np.finfo(real).eps)
    rtol = lnp.asarray(rtol, real)
    if m == 0 or n == 0:
        return lnp.zeros(_shape(a)[:-2] + (n, m), _dtype(a))
    return _pinv(a, rtol)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b."""
    a, b = _inexact("tensorsolve", a, b)
    if axes is not None:
        nd = get_aval(a).ndim
        axes = [canonicalize_axis(x, nd) for x in axes]
        order = [i for i in range(nd) if i not in axes] + axes
        a = lnp.transpose(a, order)
    out_shape = _shape(a)[get_aval(b).ndim:]
    size = int(np.prod(out_shape))
    rows = int(np.prod(_shape(b)))
    if rows != size:
        raise ValueError(f"jnp.linalg.tensorsolve: a of shape {_shape(a)} is not square "
                         f"for b of shape {_shape(b)}")
    x = solve(lnp.reshape(a, (rows, size)), lnp.ravel(b))
    return lnp.reshape(x, out_shape)


def tensorinv(a, ind=2):
    """The inverse of a with respect to tensordot over its first `ind` axes."""
    (a,) = _inexact("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer, got {ind}")
    shape = _shape(a)
    head, tail = shape[:ind], shape[ind:]
    rows, cols = int(np.prod(head)), int(np.prod(tail))
    if rows != cols:
        raise ValueError(f"jnp.linalg.tensorinv: a of shape {shape} with ind={ind} is not "
                         "square")
    return lnp.reshape(inv(lnp.reshape(a, (rows, cols))), tail + head)


def matrix_power(a, n):
    """a raised to the integer power n (by repeated squaring; n < 0 inverts)."""
    a = _matrices("matrix_power", a, square=True) if dtypes.is_inexact(
        get_aval(lnp.asarray(a)).dtype) else lnp.asarray(a)
    if get_aval(a).ndim < 2 or _shape(a)[-1] != _shape(a)[-2]:
        raise ValueError(f"jnp.linalg.matrix_power requires square matrices, got shape "
                         f"{_shape(a)}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"jnp.linalg.matrix_power: exponent must be an integer, got {n!r}") \
            from None
    if n == 0:
        return lnp.broadcast_to(lnp.eye(_shape(a)[-1], dtype=_dtype(a)), _shape(a))
    if n < 0:
        a, n = inv(a), -n
    result, power = None, a
    while n:
        if n & 1:
            result = power if result is None else lnp.matmul(result, power)
        n >>= 1
        if n:
            power = lnp.matmul(power, power)
    return result


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """Number of singular values above a cutoff: rtol (tol is its older name) is, as in
    JAX, an absolute cutoff, one per matrix; the default is max(s) * max(m, n) * eps.
    `hermitian` selects an algorithm in NumPy; the SVD gives the same rank."""
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (M,) = _inexact("matrix_rank", M)
    if get_aval(M).ndim < 2:
        return lnp.asarray(red.any(M != 0), np.int32)
    s = svd(M, compute_uv=False, hermitian=hermitian)
    real = _dtype(s)
    if rtol is None:
        cutoff = red.max(s, axis=-1) * lnp.asarray(
            builtins.max(_shape(M)[-2:]) * float(np.finfo(real).eps), real)
    else:
        cutoff = lnp.asarray(rtol)
    return red.sum(s > lnp.expand_dims(cutoff, np.ndim(cutoff)), axis=-1)


def cond(x, p=None):
    """Condition number: ||x|| ||x^-1|| in norm p (the ratio of extreme singular values
    for p in None, 2, -2)."""
    (x,) = _inexact("cond", x)
    if p in (None, 2, -2):
        s = svd(x, compute_uv=False)
        ratio = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return ratio
    r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return lnp.where(uf.isnan(r), lnp.asarray(np.inf, _dtype(r)), r)


# --- norms ----------------------------------------------------------------------------------

def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The ord-norm of vectors along axis (all elements when axis is None)."""
    (x,) = _inexact("vector_norm", x)
    if axis is None:
        out = _vector_norm(lnp.ravel(x), ord, (0,), False)
        return lnp.reshape(out, (1,) * get_aval(x).ndim) if keepdims else out
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return _vector_norm(x, ord, axes, keepdims)


def _vector_norm(x, ord, axes, keepdims):
    a = uf.abs(x)
    if ord is None or ord == 2:
        return uf.sqrt(red.sum(uf.real(x * uf.conj(x)) if dtypes.is_complex(_dtype(x))
                               else x * x, axis=axes, keepdims=keepdims))
    if ord == np.inf:
        return red.max(a, axis=axes, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return red.min(a, axis=axes, keepdims=keepdims)
    if ord == 0:
        return red.sum(lnp.asarray(x != 0, _dtype(a)), axis=axes, keepdims=keepdims)
    if ord == 1:
        return red.sum(a, axis=axes, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    p = lnp.asarray(ord, _dtype(a))
    return red.sum(a ** p, axis=axes, keepdims=keepdims) ** (1 / p)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The ord-norm of the matrices over the last two axes."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def _largest(values, axis, keepdims):
    """The largest of nonnegative values: 0 for none (the norm of an empty matrix)."""
    return red.max(values, axis=axis, keepdims=keepdims, initial=0)


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm, as numpy.linalg.norm: ord None/'fro'/'nuc'/inf/-inf/1/-1/
    2/-2 for matrices, any order for vectors."""
    (x,) = _inexact("norm", x)
    nd = get_aval(x).ndim
    if axis is None:
        if ord is None:
            out = _vector_norm(lnp.ravel(x), 2, (0,), False)
            return lnp.reshape(out, (1,) * nd) if keepdims else out
        axis = tuple(range(nd))
        if nd not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(canonicalize_axis(a, nd) for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) != 2:
        raise ValueError(f"Invalid axis {axis} for norm: give one or two axes")
    r, c = axes
    if r == c:
        raise ValueError("Duplicate axes given.")
    a = uf.abs(x)
    if ord in (None, "fro", "f"):
        out = uf.sqrt(red.sum(a * a, axis=axes, keepdims=keepdims))
    elif ord in (1, -1):
        colsum = red.sum(a, axis=r, keepdims=True)
        out = _largest(colsum, axes, keepdims) if ord == 1 else \
            red.min(colsum, axis=axes, keepdims=keepdims)
    elif ord in (np.inf, -np.inf):
        rowsum = red.sum(a, axis=c, keepdims=True)
        out = _largest(rowsum, axes, keepdims) if ord == np.inf else \
            red.min(rowsum, axis=axes, keepdims=keepdims)
    elif ord in (2, -2, "nuc"):
        moved = lnp.moveaxis(x, axes, (-2, -1))
        s = svd(moved, compute_uv=False)
        if ord == "nuc":
            out = red.sum(s, axis=-1)
        else:
            out = _largest(s, -1, False) if ord == 2 else red.min(s, axis=-1)
        if keepdims:
            out = lnp.expand_dims(out, sorted(axes))
    else:
        raise ValueError(f"Invalid norm order {ord} for matrices.")
    return out


# --- array-API helpers ----------------------------------------------------------------------

def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices, multiplied in the cheapest order; the first
    and last may be vectors."""
    arrays = [lnp.asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("multi_dot requires at least two arrays")
    first_vec = get_aval(arrays[0]).ndim == 1
    last_vec = get_aval(arrays[-1]).ndim == 1
    if first_vec:
        arrays[0] = arrays[0][None, :]
    if last_vec:
        arrays[-1] = arrays[-1][:, None]
    for a in arrays:
        if get_aval(a).ndim != 2:
            raise ValueError(f"multi_dot: arrays must be 2-D (the first and last may be "
                             f"1-D), got shape {_shape(a)}")
    dims = [_shape(arrays[0])[0]] + [_shape(a)[1] for a in arrays]
    order = _chain_order(dims)

    def product(i, j):
        if i == j:
            return arrays[i]
        k = order[i][j]
        return lnp.matmul(product(i, k), product(k + 1, j), precision=precision)
    out = product(0, len(arrays) - 1)
    if first_vec:
        out = out[0]
    if last_vec:
        out = out[..., 0]
    return out


def _chain_order(dims):
    """The classic dynamic programme for the cheapest matrix-chain parenthesisation."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-element vectors along axis."""
    x1, x2 = lnp.asarray(x1), lnp.asarray(x2)
    if _shape(x1)[axis] != 3 or _shape(x2)[axis] != 3:
        raise ValueError("jnp.linalg.cross requires both inputs to have size 3 along axis, "
                         f"got shapes {_shape(x1)} and {_shape(x2)}")
    from pyjax._src.numpy.numerical import cross as np_cross
    return np_cross(x1, x2, axis=axis)


def outer(x1, x2, /):
    """Outer product of two 1-D vectors."""
    x1, x2 = lnp.asarray(x1), lnp.asarray(x2)
    if get_aval(x1).ndim != 1 or get_aval(x2).ndim != 1:
        raise ValueError(f"jnp.linalg.outer requires 1-D arguments, got shapes {_shape(x1)} "
                         f"and {_shape(x2)}")
    return lnp.outer(x1, x2)


def trace(x, /, *, offset=0, dtype=None):
    """Sum along the offset diagonal of the last two axes."""
    return more.trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x, /, *, offset=0):
    """The offset diagonal of the last two axes."""
    return more.diagonal(x, offset, axis1=-2, axis2=-1)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """jnp.matmul in the array API's form (positional operands)."""
    return lnp.matmul(x1, x2, precision=precision,
                      preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None,
              out_sharding=None):
    """jnp.tensordot in the array API's form (positional operands, keyword axes)."""
    return more.tensordot(x1, x2, axes, precision=precision,
                          preferred_element_type=preferred_element_type,
                          out_sharding=out_sharding)


matrix_transpose = lnp.matrix_transpose
vecdot = more.vecdot
