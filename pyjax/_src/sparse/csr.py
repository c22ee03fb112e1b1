"""CSR and CSC, the older compressed-row and compressed-column sparse matrices
(jax.experimental.sparse.csr), and the primitives csr_todense, csr_fromdense, csr_matvec
and csr_matmat: the CSR index converted to COO rows and columns, then COO's gathers and
scatter-adds (as JAX's CPU lowerings), with JAX's JVP and transpose rules. A CSC matrix
is the transpose of the CSR matrix with the same buffers."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src import tree_util
from pyjax._src.core.avals import ShapedArray
from pyjax._src.interpreters import ad
from pyjax._src.lax import builders as b
from pyjax._src.numpy import indexing, numerical, reductions
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.numpy.util import promote_dtypes
from pyjax._src.sparse.base import JAXSparse
from pyjax._src.sparse.composite import composite_primitive
from pyjax._src.sparse.coo import COO, COOInfo, _coo_product_fun, _coo_todense_fun
from pyjax._src.sparse.util import _csr_extract, _csr_to_coo


class _Compressed(JAXSparse):
    """What CSR and CSC share: buffers (data, indices, indptr) and a 2-D shape."""

    @property
    def _bufs(self):
        return (self.data, self.indices, self.indptr)

    @property
    def nse(self):
        return self.data.size

    @property
    def dtype(self):
        return self.data.dtype

    def __init__(self, args, *, shape):
        self.data, self.indices, self.indptr = map(jnp.asarray, args)
        super().__init__(args, shape=shape)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32"):
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"{cls.__name__} must have ndim=2; got shape={shape}")
        compressed = shape[0] if cls is CSR else shape[1]
        return cls((jnp.empty(0, dtype), jnp.empty(0, index_dtype),
                    jnp.zeros(compressed + 1, index_dtype)), shape=shape)

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), {"shape": self.shape}

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        if aux_data.keys() != {"shape"}:
            raise ValueError(f"{cls.__name__}.tree_unflatten: invalid aux_data={aux_data}")
        obj.__dict__.update(**aux_data)
        return obj

    def _matmul(self, other, shape, transpose):
        if isinstance(other, JAXSparse):
            raise NotImplementedError("matmul between two sparse objects.")
        other = jnp.asarray(other)
        data, other = promote_dtypes(self.data, other)
        if other.ndim == 1:
            return _csr_matvec(data, self.indices, self.indptr, other, shape=shape,
                               transpose=transpose)
        if other.ndim == 2:
            return _csr_matmat(data, self.indices, self.indptr, other, shape=shape,
                               transpose=transpose)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")


class CSR(_Compressed):
    """Experimental CSR matrix implemented in JAX (prefer BCOO)."""

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32):
        if nse is None:
            nse = (mat != 0).sum()
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32"):
        coo = COO._eye(N, M, k, dtype=dtype, index_dtype=index_dtype)
        if coo.nse == 0:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype)
        indptr = jnp.zeros(N + 1, dtype=index_dtype).at[1:].set(
            reductions.cumsum(numerical.bincount(coo.row, length=N).astype(index_dtype)))
        return cls((coo.data, coo.col.astype(index_dtype), indptr), shape=(N, M))

    def todense(self):
        return csr_todense(self)

    def transpose(self, axes=None):
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other):
        return self._matmul(other, self.shape, False)


class CSC(_Compressed):
    """Experimental CSC matrix implemented in JAX (prefer BCOO)."""

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32):
        if nse is None:
            nse = (mat != 0).sum()
        return csr_fromdense(mat.T, nse=nse, index_dtype=index_dtype).T

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32"):
        return CSR._eye(M, N, -k, dtype=dtype, index_dtype=index_dtype).T

    def todense(self):
        return csr_todense(self.T).T

    def transpose(self, axes=None):
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other):
        return self._matmul(other, self.shape[::-1], True)


for _cls in (CSR, CSC):
    tree_util.register_pytree_node(_cls, _cls.tree_flatten, _cls.tree_unflatten)


def _samples_2d():
    return (b.random_values((3,), np.float32), np.array([2, 0, 1], np.int32),
            np.array([0, 1, 3], np.int32))


def _check_csr(name, data, indices, indptr, shape):
    if not (data.ndim == indices.ndim == indptr.ndim == 1 and data.shape == indices.shape
            and indices.dtype == indptr.dtype and len(shape) == 2
            and indptr.shape[0] == shape[0] + 1):
        raise TypeError(f"{name}: data {data.str_short()}, indices {indices.str_short()} "
                        f"and indptr {indptr.str_short()} do not describe a CSR matrix of "
                        f"shape {shape}")


# --- csr_todense ------------------------------------------------------------------------

def csr_todense(mat):
    """The dense matrix of the CSR matrix `mat`."""
    return _csr_todense(mat.data, mat.indices, mat.indptr, shape=mat.shape)


def _csr_todense(data, indices, indptr, *, shape):
    return csr_todense_p.bind(data, indices, indptr, shape=tuple(shape))


def _csr_todense_fun(data, indices, indptr, *, shape):
    row, col = _csr_to_coo(indices, indptr)
    return _coo_todense_fun(data, row, col, spinfo=COOInfo(shape=shape))


def _csr_todense_abstract_eval(data, indices, indptr, *, shape):
    _check_csr("csr_todense", data, indices, indptr, shape)
    return ShapedArray(shape, data.dtype)


def _csr_todense_transpose(ct, data, indices, indptr, *, shape):
    if ad.is_undefined_primal(indices) or ad.is_undefined_primal(indptr):
        raise ValueError("Cannot transpose with respect to sparse indices")
    return [_csr_extract(indices, indptr, ad.instantiate_zeros(ct)), None, None]


csr_todense_p = composite_primitive(
    "csr_todense", _csr_todense_fun, abstract_eval=_csr_todense_abstract_eval,
    jvp=ad.defjvp(lambda g, data, indices, indptr, *, shape: _csr_todense(
        g, indices, indptr, shape=shape), None, None),
    transpose=_csr_todense_transpose,
    samples=lambda: [b.Sample(_samples_2d(), {"shape": (2, 3)})])


# --- csr_fromdense ----------------------------------------------------------------------

def csr_fromdense(mat, *, nse=None, index_dtype=np.int32):
    """The CSR matrix of the dense matrix `mat`, storing `nse` entries (default: its
    number of nonzeros)."""
    mat = jnp.asarray(mat)
    if nse is None:
        nse = int((mat != 0).sum())
    return CSR(_csr_fromdense(mat, nse=operator.index(nse), index_dtype=index_dtype),
               shape=mat.shape)


def _csr_fromdense(mat, *, nse, index_dtype=np.int32):
    mat = jnp.asarray(mat)
    return csr_fromdense_p.bind(mat, nse=operator.index(nse),
                                index_dtype=np.dtype(index_dtype))


def _csr_fromdense_fun(mat, *, nse, index_dtype):
    m = mat.shape[0]
    row, col = indexing.nonzero(mat, size=nse)
    data = mat[row, col]
    true_nonzeros = jnp.arange(nse) < (mat != 0).sum()
    data = jnp.where(true_nonzeros, data, 0)
    row = jnp.where(true_nonzeros, row, m)
    indptr = jnp.zeros(m + 1, dtype=index_dtype).at[1:].set(
        reductions.cumsum(numerical.bincount(row, length=m).astype(index_dtype)))
    return data, col.astype(index_dtype), indptr


def _csr_fromdense_abstract_eval(mat, *, nse, index_dtype):
    if mat.ndim != 2:
        raise ValueError(f"csr_fromdense: expected a 2-D matrix, got shape {mat.shape}")
    return [ShapedArray((nse,), mat.dtype), ShapedArray((nse,), index_dtype),
            ShapedArray((mat.shape[0] + 1,), index_dtype)]


def _csr_fromdense_jvp(primals, tangents, *, nse, index_dtype):
    (mat,), (mat_dot,) = primals, tangents
    data, indices, indptr = out = _csr_fromdense(mat, nse=nse, index_dtype=index_dtype)
    data_dot = (ad.Zero.from_primal_value(data) if type(mat_dot) is ad.Zero
                else _csr_extract(indices, indptr, mat_dot))
    return out, [data_dot, ad.Zero.from_primal_value(indices),
                 ad.Zero.from_primal_value(indptr)]


def _csr_fromdense_transpose(cts, mat, *, nse, index_dtype):
    data, indices, indptr = cts
    if type(indices) is ad.Zero or type(indptr) is ad.Zero:
        raise ValueError("Cannot transpose with respect to sparse indices")
    return [_csr_todense(ad.instantiate_zeros(data), indices, indptr, shape=mat.aval.shape)]


csr_fromdense_p = composite_primitive(
    "csr_fromdense", _csr_fromdense_fun, multiple_results=True,
    abstract_eval=_csr_fromdense_abstract_eval, jvp=_csr_fromdense_jvp,
    transpose=_csr_fromdense_transpose,
    samples=lambda: [b.Sample([np.array([[0.5, 1.5, 1], [2, 3, -1]], np.float32)],
                              {"nse": 6, "index_dtype": np.dtype(np.int32)})])


# --- csr_matvec and csr_matmat ----------------------------------------------------------

def csr_matvec(mat, v, transpose=False):
    """The product of the CSR matrix `mat` (transposed if `transpose`) with vector v."""
    data, indices, indptr = mat._bufs
    return _csr_matvec(data, indices, indptr, v, shape=mat.shape, transpose=transpose)


def _csr_matvec(data, indices, indptr, v, *, shape, transpose=False):
    return csr_matvec_p.bind(data, indices, indptr, v, shape=tuple(shape),
                             transpose=transpose)


def csr_matmat(mat, B, *, transpose=False):
    """The product of the CSR matrix `mat` (transposed if `transpose`) with matrix B."""
    data, indices, indptr = mat._bufs
    return _csr_matmat(data, indices, indptr, B, shape=mat.shape, transpose=transpose)


def _csr_matmat(data, indices, indptr, B, *, shape, transpose=False):
    return csr_matmat_p.bind(data, indices, indptr, B, shape=tuple(shape),
                             transpose=transpose)


def _csr_product_fun(data, indices, indptr, x, *, shape, transpose):
    row, col = _csr_to_coo(indices, indptr)
    return _coo_product_fun(data, row, col, x, spinfo=COOInfo(shape=shape),
                            transpose=transpose)


def _csr_product_abstract_eval(ndim, name):
    def abstract_eval(data, indices, indptr, x, *, shape, transpose):
        _check_csr(name, data, indices, indptr, shape)
        rows, cols = shape[::-1] if transpose else shape
        if data.dtype != x.dtype or x.ndim != ndim or x.shape[0] != cols:
            raise TypeError(f"{name}: a {shape} matrix of {data.dtype} cannot multiply "
                            f"{x.str_short()} (transpose={transpose})")
        return ShapedArray((rows,) + x.shape[1:], data.dtype)
    return abstract_eval


def _csr_product_transpose(product):
    def transpose_rule(ct, data, indices, indptr, x, *, shape, transpose):
        ct = ad.instantiate_zeros(ct)
        if ad.is_undefined_primal(x):
            return [None, None, None, product(data, indices, indptr, ct, shape=shape,
                                              transpose=not transpose)]
        row, col = _csr_to_coo(indices, indptr)
        r, c = (col, row) if transpose else (row, col)
        prod = ct[r] * x[c]
        return [prod if prod.ndim == 1 else prod.sum(1), None, None, None]
    return transpose_rule


def _csr_product_samples(x_shape):
    def samples():
        return [b.Sample([*_samples_2d(), b.random_values(x_shape, np.float32, seed=1)],
                         {"shape": (2, 3), "transpose": False})]
    return samples


csr_matvec_p = composite_primitive(
    "csr_matvec", _csr_product_fun,
    abstract_eval=_csr_product_abstract_eval(1, "csr_matvec"),
    jvp=ad.defjvp(lambda g, data, i, p, v, **k: _csr_matvec(g, i, p, v, **k), None, None,
                  lambda g, data, i, p, v, **k: _csr_matvec(data, i, p, g, **k)),
    transpose=_csr_product_transpose(lambda *a, **k: _csr_matvec(*a, **k)),
    samples=_csr_product_samples((3,)))

csr_matmat_p = composite_primitive(
    "csr_matmat", _csr_product_fun,
    abstract_eval=_csr_product_abstract_eval(2, "csr_matmat"),
    jvp=ad.defjvp(lambda g, data, i, p, B, **k: _csr_matmat(g, i, p, B, **k), None, None,
                  lambda g, data, i, p, B, **k: _csr_matmat(data, i, p, g, **k)),
    transpose=_csr_product_transpose(lambda *a, **k: _csr_matmat(*a, **k)),
    samples=_csr_product_samples((3, 2)))
