"""COO, the older coordinate-format sparse matrix (jax.experimental.sparse.coo): a 2-D
matrix holding `data[i]` at (`row[i]`, `col[i]`), and its primitives coo_todense,
coo_fromdense, coo_matvec and coo_matmat, computed with jax.numpy gathers and scatter-adds
as JAX's CPU lowerings are, with their JVP and transpose rules (JAX's)."""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from pyjax._src import tree_util
from pyjax._src.core.avals import ShapedArray
from pyjax._src.interpreters import ad
from pyjax._src.lax import builders as b
from pyjax._src.lax import sorting
from pyjax._src.numpy import indexing
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.numpy.util import promote_dtypes
from pyjax._src.sparse.base import JAXSparse
from pyjax._src.sparse.composite import composite_primitive
from pyjax._src.sparse.util import _coo_extract


class COOInfo(NamedTuple):
    shape: tuple[int, ...]
    rows_sorted: bool = False
    cols_sorted: bool = False


class COO(JAXSparse):
    """Experimental COO matrix implemented in JAX (prefer BCOO)."""

    @property
    def _info(self):
        return COOInfo(shape=self.shape, rows_sorted=self._rows_sorted,
                       cols_sorted=self._cols_sorted)

    @property
    def _bufs(self):
        return (self.data, self.row, self.col)

    @property
    def nse(self):
        return self.data.size

    @property
    def dtype(self):
        return self.data.dtype

    def __init__(self, args, *, shape, rows_sorted=False, cols_sorted=False):
        self.data, self.row, self.col = map(jnp.asarray, args)
        self._rows_sorted, self._cols_sorted = rows_sorted, cols_sorted
        super().__init__(args, shape=shape)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32):
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def _sort_indices(self):
        """A copy with indices sorted by row, then column (self if rows are sorted)."""
        if self._rows_sorted:
            return self
        row, col, data = sorting.sort((self.row, self.col, self.data), num_keys=2)
        return self.__class__((data, row, col), shape=self.shape, rows_sorted=True)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32"):
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"COO must have ndim=2; got shape={shape}")
        data = jnp.empty(0, dtype)
        row = col = jnp.empty(0, index_dtype)
        return cls((data, row, col), shape=shape, rows_sorted=True, cols_sorted=True)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32"):
        diag_size = min(N, M - k) if k > 0 else min(N + k, M)
        if diag_size <= 0:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype)
        data = jnp.ones(diag_size, dtype=dtype)
        idx = jnp.arange(diag_size, dtype=index_dtype)
        row, col = idx - min(k, 0), idx + max(k, 0)
        return cls((data, row, col), shape=(N, M), rows_sorted=True, cols_sorted=True)

    def todense(self):
        return coo_todense(self)

    def transpose(self, axes=None):
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return COO((self.data, self.col, self.row), shape=self.shape[::-1],
                   rows_sorted=self._cols_sorted, cols_sorted=self._rows_sorted)

    def tree_flatten(self):
        return (self.data, self.row, self.col), self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.row, obj.col = children
        if aux_data.keys() != {"shape", "rows_sorted", "cols_sorted"}:
            raise ValueError(f"COO.tree_unflatten: invalid aux_data={aux_data}")
        obj.shape = aux_data["shape"]
        obj._rows_sorted = aux_data["rows_sorted"]
        obj._cols_sorted = aux_data["cols_sorted"]
        return obj

    def __matmul__(self, other):
        if isinstance(other, JAXSparse):
            raise NotImplementedError("matmul between two sparse objects.")
        other = jnp.asarray(other)
        data, other = promote_dtypes(self.data, other)
        promoted = COO((data, self.row, self.col), **self._info._asdict())
        if other.ndim == 1:
            return coo_matvec(promoted, other)
        if other.ndim == 2:
            return coo_matmat(promoted, other)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")


tree_util.register_pytree_node(COO, COO.tree_flatten, COO.tree_unflatten)


def _samples_2d():
    data = b.random_values((3,), np.float32)
    row, col = np.array([0, 1, 1], np.int32), np.array([2, 0, 1], np.int32)
    return data, row, col


# --- coo_todense ------------------------------------------------------------------------

def coo_todense(mat):
    """The dense matrix of the COO matrix `mat`."""
    return _coo_todense(mat.data, mat.row, mat.col, spinfo=mat._info)


def _coo_todense(data, row, col, *, spinfo):
    return coo_todense_p.bind(data, row, col, spinfo=spinfo)


def _coo_todense_fun(data, row, col, *, spinfo):
    return jnp.zeros(spinfo.shape, data.dtype).at[row, col].add(data)


def _coo_todense_transpose(ct, data, row, col, *, spinfo):
    if ad.is_undefined_primal(row) or ad.is_undefined_primal(col):
        raise ValueError("Cannot transpose with respect to sparse indices")
    return [_coo_extract(row, col, ad.instantiate_zeros(ct)), None, None]


coo_todense_p = composite_primitive(
    "coo_todense", _coo_todense_fun,
    abstract_eval=lambda data, row, col, *, spinfo: ShapedArray(spinfo.shape, data.dtype),
    jvp=ad.defjvp(lambda g, data, row, col, *, spinfo: _coo_todense(g, row, col,
                                                                     spinfo=spinfo),
                  None, None),
    transpose=_coo_todense_transpose,
    samples=lambda: [b.Sample(_samples_2d(), {"spinfo": COOInfo(shape=(2, 3))})])


# --- coo_fromdense ----------------------------------------------------------------------

def coo_fromdense(mat, *, nse=None, index_dtype=np.int32):
    """The COO matrix of the dense matrix `mat`, storing `nse` entries (default: its
    number of nonzeros)."""
    mat = jnp.asarray(mat)
    if nse is None:
        nse = int((mat != 0).sum())
    nse = operator.index(nse)
    return COO(_coo_fromdense(mat, nse=nse, index_dtype=index_dtype), shape=mat.shape,
               rows_sorted=True)


def _coo_fromdense(mat, *, nse, index_dtype=np.int32):
    mat = jnp.asarray(mat)
    nse = operator.index(nse)
    return coo_fromdense_p.bind(mat, nse=nse, index_dtype=np.dtype(index_dtype))


def _coo_fromdense_fun(mat, *, nse, index_dtype):
    row, col = indexing.nonzero(mat, size=nse)
    data = mat[row, col]
    true_nonzeros = jnp.arange(nse) < (mat != 0).sum()
    data = jnp.where(true_nonzeros, data, 0)
    return data, row.astype(index_dtype), col.astype(index_dtype)


def _coo_fromdense_abstract_eval(mat, *, nse, index_dtype):
    if mat.ndim != 2:
        raise ValueError(f"coo_fromdense: expected a 2-D matrix, got shape {mat.shape}")
    return [ShapedArray((nse,), mat.dtype), ShapedArray((nse,), index_dtype),
            ShapedArray((nse,), index_dtype)]


def _coo_fromdense_jvp(primals, tangents, *, nse, index_dtype):
    (mat,), (mat_dot,) = primals, tangents
    data, row, col = out = _coo_fromdense(mat, nse=nse, index_dtype=index_dtype)
    data_dot = (ad.Zero.from_primal_value(data) if type(mat_dot) is ad.Zero
                else _coo_extract(row, col, mat_dot))
    return out, [data_dot, ad.Zero.from_primal_value(row), ad.Zero.from_primal_value(col)]


def _coo_fromdense_transpose(cts, mat, *, nse, index_dtype):
    data, row, col = cts
    if type(row) is ad.Zero or type(col) is ad.Zero:
        raise ValueError("Cannot transpose with respect to sparse indices")
    return [_coo_todense(ad.instantiate_zeros(data), row, col,
                         spinfo=COOInfo(shape=mat.aval.shape))]


coo_fromdense_p = composite_primitive(
    "coo_fromdense", _coo_fromdense_fun, multiple_results=True,
    abstract_eval=_coo_fromdense_abstract_eval, jvp=_coo_fromdense_jvp,
    transpose=_coo_fromdense_transpose,
    samples=lambda: [b.Sample([np.array([[0.5, 1.5, 1], [2, 3, -1]], np.float32)],
                              {"nse": 6, "index_dtype": np.dtype(np.int32)})])


# --- coo_matvec and coo_matmat ----------------------------------------------------------

def coo_matvec(mat, v, transpose=False):
    """The product of the COO matrix `mat` (transposed if `transpose`) with vector v."""
    data, row, col = mat._bufs
    return _coo_matvec(data, row, col, v, spinfo=mat._info, transpose=transpose)


def _coo_matvec(data, row, col, v, *, spinfo, transpose=False):
    return coo_matvec_p.bind(data, row, col, v, spinfo=spinfo, transpose=transpose)


def coo_matmat(mat, B, *, transpose=False):
    """The product of the COO matrix `mat` (transposed if `transpose`) with matrix B."""
    data, row, col = mat._bufs
    return _coo_matmat(data, row, col, B, spinfo=mat._info, transpose=transpose)


def _coo_matmat(data, row, col, B, *, spinfo, transpose=False):
    return coo_matmat_p.bind(data, row, col, B, spinfo=spinfo, transpose=transpose)


def _coo_product_fun(data, row, col, x, *, spinfo, transpose):
    if transpose:
        row, col = col, row
    out_rows = spinfo.shape[1] if transpose else spinfo.shape[0]
    dx = data.reshape((-1,) + (1,) * (x.ndim - 1)) * x[col]
    return jnp.zeros((out_rows,) + x.shape[1:], dx.dtype).at[row].add(dx)


def _coo_product_abstract_eval(ndim, name):
    def abstract_eval(data, row, col, x, *, spinfo, transpose):
        rows, cols = spinfo.shape[::-1] if transpose else spinfo.shape
        if not (data.shape == row.shape == col.shape and data.dtype == x.dtype
                and row.dtype == col.dtype and x.ndim == ndim and x.shape[0] == cols):
            raise TypeError(
                f"{name}: a {spinfo.shape} matrix with data {data.str_short()}, indices "
                f"{row.str_short()} and {col.str_short()} cannot multiply "
                f"{x.str_short()} (transpose={transpose})")
        return ShapedArray((rows,) + x.shape[1:], data.dtype)
    return abstract_eval


def _coo_product_transpose(product):
    def transpose_rule(ct, data, row, col, x, *, spinfo, transpose):
        ct = ad.instantiate_zeros(ct)
        if ad.is_undefined_primal(x):
            return [None, None, None, product(data, row, col, ct, spinfo=spinfo,
                                              transpose=not transpose)]
        r, c = (col, row) if transpose else (row, col)
        prod = ct[r] * x[c]
        return [prod if prod.ndim == 1 else prod.sum(1), None, None, None]
    return transpose_rule


def _coo_product_samples(x_shape):
    def samples():
        return [b.Sample([*_samples_2d(), b.random_values(x_shape, np.float32, seed=1)],
                         {"spinfo": COOInfo(shape=(2, 3)), "transpose": False})]
    return samples


coo_matvec_p = composite_primitive(
    "coo_matvec", _coo_product_fun,
    abstract_eval=_coo_product_abstract_eval(1, "coo_matvec"),
    jvp=ad.defjvp(lambda g, data, row, col, v, **p: _coo_matvec(g, row, col, v, **p),
                  None, None,
                  lambda g, data, row, col, v, **p: _coo_matvec(data, row, col, g, **p)),
    transpose=_coo_product_transpose(lambda *a, **p: _coo_matvec(*a, **p)),
    samples=_coo_product_samples((3,)))

coo_matmat_p = composite_primitive(
    "coo_matmat", _coo_product_fun,
    abstract_eval=_coo_product_abstract_eval(2, "coo_matmat"),
    jvp=ad.defjvp(lambda g, data, row, col, B, **p: _coo_matmat(g, row, col, B, **p),
                  None, None,
                  lambda g, data, row, col, B, **p: _coo_matmat(data, row, col, g, **p)),
    transpose=_coo_product_transpose(lambda *a, **p: _coo_matmat(*a, **p)),
    samples=_coo_product_samples((3, 2)))
