"""BCSR, JAX's batched compressed-sparse-row array (jax.experimental.sparse.bcsr): an
array of `shape` = batch + 2 sparse + dense dimensions, holding `data` (batch..., nse,
dense...) at column `indices` (batch..., nse), the entries of row i of each batch being
those from indptr[..., i] to indptr[..., i + 1]. Its primitives (bcsr_fromdense,
bcsr_todense, bcsr_extract, bcsr_dot_general) compute, as JAX's CPU implementations do,
through the BCOO ones on the row and column indices; the structural functions convert
to BCOO and back."""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from pyjax._src import errors, tree_util
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace import Tracer
from pyjax._src.interpreters import ad, batching
from pyjax._src.lax import builders as b
from pyjax._src.lax import dot as ldot
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.numpy import numerical, reductions
from pyjax._src.sparse import bcoo
from pyjax._src.sparse import bcoo_structural as bst
from pyjax._src.sparse.base import JAXSparse
from pyjax._src.sparse.composite import composite_primitive
from pyjax._src.sparse.util import (
    SparseInfo, _count_stored_elements, _csr_to_coo, nfold_vmap,
)


class BCSRProperties(NamedTuple):
    n_batch: int
    n_dense: int
    nse: int


def _compatible(shape1, shape2):
    return all(s1 in (1, s2) for s1, s2 in zip(shape1, shape2))


def _validate_bcsr_indices(indices, indptr, shape) -> BCSRProperties:
    if not (np.issubdtype(indices.dtype, np.integer)
            and np.issubdtype(indptr.dtype, np.integer)):
        raise TypeError(f"BCSR indices and indptr must be integer arrays; got "
                        f"{indices.dtype} and {indptr.dtype}")
    shape = tuple(shape)
    nse = indices.shape[-1]
    n_batch = indices.ndim - 1
    n_dense = len(shape) - n_batch - 2
    if n_dense < 0:
        raise ValueError(f"BCSR indices of shape {indices.shape} do not fit shape={shape}")
    if not _compatible(indices.shape[:n_batch], shape[:n_batch]):
        raise ValueError("indices batch dimensions not compatible for "
                         f"indices.shape={indices.shape}, shape={shape}")
    if not _compatible(indptr.shape[:n_batch], shape[:n_batch]):
        raise ValueError("indptr batch dimensions not compatible for "
                         f"indptr.shape={indptr.shape}, shape={shape}")
    if tuple(indptr.shape[n_batch:]) != (shape[n_batch] + 1,):
        raise ValueError("indptr shape must match the matrix shape plus 1.")
    return BCSRProperties(n_batch=n_batch, n_dense=n_dense, nse=nse)


def _validate_bcsr(data, indices, indptr, shape) -> BCSRProperties:
    props = _validate_bcsr_indices(indices, indptr, shape)
    shape = tuple(shape)
    n_batch, n_dense, nse = props
    n_sparse = len(shape) - n_batch - n_dense
    if n_sparse != 2:
        raise ValueError(f"BCSR array must have 2 sparse dimensions; {n_sparse} is given.")
    if not _compatible(data.shape[:n_batch], shape[:n_batch]):
        raise ValueError(f"data batch dimensions not compatible for data.shape={data.shape}, "
                         f"shape={shape}")
    if tuple(data.shape[-(n_dense + 1):]) != (nse,) + shape[n_batch + 2:]:
        raise ValueError(f"Invalid data.shape={data.shape} for nse={nse}, n_batch={n_batch}, "
                         f"n_dense={n_dense}")
    return props


def _bcsr_to_bcoo(indices, indptr, *, shape):
    """The BCOO indices (row, column) of BCSR (indices, indptr)."""
    n_batch, _, _ = _validate_bcsr_indices(indices, indptr, shape)
    csr_to_coo = nfold_vmap(_csr_to_coo, n_batch)
    return jnp.stack(csr_to_coo(indices, indptr), axis=indices.ndim)


def _bcoo_to_bcsr(indices, *, shape, index_dtype):
    """The BCSR (indices, indptr) of BCOO indices sorted within each batch."""
    n_batch, n_sparse, _, _ = bcoo._validate_bcoo_indices(indices, shape)
    if n_sparse != 2:
        raise ValueError("Must have 2 sparse dimensions to be converted to BCSR.")
    n_rows = shape[n_batch]

    def get_ptr(i):
        indptr = jnp.zeros(n_rows + 1, index_dtype)
        counts = numerical.bincount(i, length=n_rows).astype(index_dtype)
        return indptr.at[1:].set(reductions.cumsum(counts))
    return indices[..., 1], nfold_vmap(get_ptr, n_batch, broadcasted=False)(indices[..., 0])


def _samples():
    data = b.random_values((3,), np.float32)
    return data, np.array([2, 0, 1], np.int32), np.array([0, 1, 3], np.int32)


# --- bcsr_fromdense ---------------------------------------------------------------------

_TRACED_NSE_ERROR = """
The error arose for the nse argument of bcsr_fromdense. In order for
BCSR.fromdense() to be used in traced/compiled code, you must pass a concrete
value to the nse (number of stored elements) argument.
"""


def bcsr_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=np.int32):
    """The BCSR array of the dense array `mat` with `n_batch` batch and `n_dense` dense
    dimensions, storing `nse` entries per batch (default: as many as `mat` needs)."""
    mat = jnp.asarray(mat)
    nse_arr = _count_stored_elements(mat, n_batch, n_dense) if nse is None else nse
    if isinstance(nse_arr, Tracer) and nse_arr.to_concrete_value() is None:
        raise errors.ConcretizationTypeError(nse_arr, _TRACED_NSE_ERROR)
    return BCSR(_bcsr_fromdense(mat, nse=operator.index(nse_arr), n_batch=n_batch,
                                n_dense=n_dense, index_dtype=index_dtype),
                shape=mat.shape)


def _bcsr_fromdense(mat, *, nse, n_batch=0, n_dense=0, index_dtype=np.int32):
    return bcsr_fromdense_p.bind(jnp.asarray(mat), nse=operator.index(nse), n_batch=n_batch,
                                 n_dense=n_dense, index_dtype=np.dtype(index_dtype))


def _bcsr_fromdense_fun(mat, *, nse, n_batch, n_dense, index_dtype):
    if mat.ndim - n_dense - n_batch != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions.")
    data, bcoo_indices = bcoo._bcoo_fromdense_fun(mat, nse=nse, n_batch=n_batch,
                                                  n_dense=n_dense, index_dtype=index_dtype)
    indices, indptr = _bcoo_to_bcsr(bcoo_indices, shape=mat.shape, index_dtype=index_dtype)
    return data, indices, indptr


def _bcsr_fromdense_abstract_eval(mat, *, nse, n_batch, n_dense, index_dtype):
    n_sparse = mat.ndim - n_batch - n_dense
    if n_sparse != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions.")
    return [ShapedArray(mat.shape[:n_batch] + (nse,) + mat.shape[n_batch + n_sparse:],
                        mat.dtype),
            ShapedArray(mat.shape[:n_batch] + (nse,), index_dtype),
            ShapedArray(mat.shape[:n_batch] + (mat.shape[n_batch] + 1,), index_dtype)]


def _bcsr_fromdense_jvp(primals, tangents, **params):
    (mat,), (mat_dot,) = primals, tangents
    data, indices, indptr = out = _bcsr_fromdense(mat, **params)
    data_dot = (ad.Zero.from_primal_value(data) if type(mat_dot) is ad.Zero
                else bcsr_extract(indices, indptr, mat_dot))
    return out, [data_dot, ad.Zero.from_primal_value(indices),
                 ad.Zero.from_primal_value(indptr)]


def _bcsr_fromdense_transpose(cts, mat, **params):
    data, indices, indptr = cts
    if type(indices) is ad.Zero or type(indptr) is ad.Zero:
        raise ValueError("Cannot transpose with respect to sparse indices")
    return [_bcsr_todense(ad.instantiate_zeros(data), indices, indptr,
                          spinfo=SparseInfo(mat.aval.shape))]


bcsr_fromdense_p = composite_primitive(
    "bcsr_fromdense", _bcsr_fromdense_fun, multiple_results=True,
    abstract_eval=_bcsr_fromdense_abstract_eval, jvp=_bcsr_fromdense_jvp,
    transpose=_bcsr_fromdense_transpose,
    samples=lambda: [b.Sample([np.array([[0.5, 1.5, 1], [2, 3, -1]], np.float32)],
                              {"nse": 4, "n_batch": 0, "n_dense": 0,
                               "index_dtype": np.dtype(np.int32)})])


# --- bcsr_todense -----------------------------------------------------------------------

def bcsr_todense(mat):
    """The dense array of the BCSR array `mat`."""
    return _bcsr_todense(mat.data, mat.indices, mat.indptr, spinfo=mat._info)


def _bcsr_todense(data, indices, indptr, *, spinfo):
    return bcsr_todense_p.bind(jnp.asarray(data), jnp.asarray(indices), jnp.asarray(indptr),
                               spinfo=spinfo)


def _bcsr_todense_fun(data, indices, indptr, *, spinfo):
    bcoo_indices = _bcsr_to_bcoo(indices, indptr, shape=spinfo.shape)
    return bcoo._bcoo_todense_fun(data, bcoo_indices, spinfo=SparseInfo(spinfo.shape))


def _bcsr_todense_abstract_eval(data, indices, indptr, *, spinfo):
    _validate_bcsr(data, indices, indptr, spinfo.shape)
    return ShapedArray(spinfo.shape, data.dtype)


def _bcsr_todense_transpose(ct, data, indices, indptr, *, spinfo):
    if ad.is_undefined_primal(indices) or ad.is_undefined_primal(indptr):
        raise ValueError("Cannot transpose with respect to sparse indices")
    return [bcsr_extract(indices, indptr, ad.instantiate_zeros(ct)), None, None]


bcsr_todense_p = composite_primitive(
    "bcsr_todense", _bcsr_todense_fun, abstract_eval=_bcsr_todense_abstract_eval,
    jvp=ad.defjvp(lambda g, data, indices, indptr, *, spinfo: _bcsr_todense(
        g, indices, indptr, spinfo=spinfo), None, None),
    transpose=_bcsr_todense_transpose,
    samples=lambda: [b.Sample(_samples(), {"spinfo": SparseInfo(shape=(2, 3))})])


# --- bcsr_extract -----------------------------------------------------------------------

def bcsr_extract(indices, indptr, mat):
    """The values of the dense `mat` at BCSR (indices, indptr): the data of a BCSR array
    of that structure."""
    return bcsr_extract_p.bind(jnp.asarray(indices), jnp.asarray(indptr), jnp.asarray(mat))


def _bcsr_extract_fun(indices, indptr, mat):
    bcoo_indices = _bcsr_to_bcoo(indices, indptr, shape=mat.shape)
    return bcoo._bcoo_extract_fun(bcoo_indices, mat, assume_unique=True)


def _bcsr_extract_abstract_eval(indices, indptr, mat):
    n_batch, n_dense, nse = _validate_bcsr_indices(indices, indptr, mat.shape)
    return ShapedArray(mat.shape[:n_batch] + (nse,) + mat.shape[mat.ndim - n_dense:],
                       mat.dtype)


def _bcsr_extract_transpose(ct, indices, indptr, mat):
    if ad.is_undefined_primal(indices) or ad.is_undefined_primal(indptr):
        raise ValueError("Cannot transpose with respect to sparse indices")
    return [None, None, _bcsr_todense(ad.instantiate_zeros(ct), indices, indptr,
                                      spinfo=SparseInfo(mat.aval.shape))]


bcsr_extract_p = composite_primitive(
    "bcsr_extract", _bcsr_extract_fun, abstract_eval=_bcsr_extract_abstract_eval,
    jvp=ad.defjvp(None, None, lambda g, indices, indptr, mat: bcsr_extract(indices, indptr,
                                                                           g)),
    transpose=_bcsr_extract_transpose,
    samples=lambda: [b.Sample([*_samples()[1:], b.random_values((2, 3), np.float32)], {})])


# --- bcsr_dot_general -------------------------------------------------------------------

def bcsr_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """lax.dot_general of a BCSR lhs and a dense rhs (a dense result)."""
    if not isinstance(rhs, JAXSparse):
        if not isinstance(lhs, JAXSparse):
            return ldot.dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                                    preferred_element_type=preferred_element_type)
        if isinstance(lhs, BCSR):
            return _bcsr_dot_general(*lhs._bufs, jnp.asarray(rhs),
                                     dimension_numbers=dimension_numbers,
                                     preferred_element_type=preferred_element_type,
                                     lhs_spinfo=lhs._info)
    raise NotImplementedError("bcsr_dot_general currently implemented for BCSR lhs and "
                              "ndarray rhs.")


def _bcsr_dot_general(lhs_data, lhs_indices, lhs_indptr, rhs, *, dimension_numbers,
                      preferred_element_type, lhs_spinfo):
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    dims = ((bcoo._index_tuple(lhs_contract), bcoo._index_tuple(rhs_contract)),
            (bcoo._index_tuple(lhs_batch), bcoo._index_tuple(rhs_batch)))
    return bcsr_dot_general_p.bind(
        jnp.asarray(lhs_data), jnp.asarray(lhs_indices), jnp.asarray(lhs_indptr),
        jnp.asarray(rhs), dimension_numbers=dims,
        preferred_element_type=preferred_element_type, lhs_spinfo=lhs_spinfo)


def _bcsr_dot_general_fun(lhs_data, lhs_indices, lhs_indptr, rhs, *, lhs_spinfo, **params):
    bcoo_indices = _bcsr_to_bcoo(lhs_indices, lhs_indptr, shape=lhs_spinfo.shape)
    return bcoo._bcoo_dot_general_fun(lhs_data, bcoo_indices, rhs, lhs_spinfo=lhs_spinfo,
                                      **params)


def _bcsr_dot_general_abstract_eval(lhs_data, lhs_indices, lhs_indptr, rhs, *,
                                    dimension_numbers, preferred_element_type, lhs_spinfo):
    props = _validate_bcsr(lhs_data, lhs_indices, lhs_indptr, lhs_spinfo.shape)
    (lhs_contracting, _), (lhs_batch, _) = dimension_numbers
    if lhs_batch and max(lhs_batch) >= props.n_batch:
        raise NotImplementedError(
            "bcsr_dot_general batch dimensions must be among the batch dimensions in the "
            f"sparse representtaion.\ngot lhs_batch={lhs_batch}, n_batch={props.n_batch}")
    if any(d >= props.n_batch + 2 for d in lhs_contracting):
        raise NotImplementedError("bcsr_dot_general: contracting over dense dimensions.")
    bcoo_indices = ShapedArray(lhs_indices.shape + (2,), lhs_indices.dtype)
    return bcoo._bcoo_dot_general_abstract_eval(
        lhs_data, bcoo_indices, rhs, dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type, lhs_spinfo=lhs_spinfo)


def _bcsr_dot_general_transpose(ct, lhs_data, lhs_indices, lhs_indptr, rhs, **params):
    if ad.is_undefined_primal(lhs_indices) or ad.is_undefined_primal(lhs_indptr):
        raise ValueError("Cannot transpose with respect to sparse indices")
    bcoo_indices = _bcsr_to_bcoo(lhs_indices, lhs_indptr, shape=params["lhs_spinfo"].shape)
    data_ct, _, rhs_ct = bcoo._bcoo_dot_general_transpose(ct, lhs_data, bcoo_indices, rhs,
                                                          **params)
    return [data_ct, None, None, rhs_ct]


bcsr_dot_general_p = composite_primitive(
    "bcsr_dot_general", _bcsr_dot_general_fun,
    abstract_eval=_bcsr_dot_general_abstract_eval,
    jvp=ad.defjvp(
        lambda g, data, indices, indptr, rhs, **p: _bcsr_dot_general(g, indices, indptr,
                                                                     rhs, **p),
        None, None,
        lambda g, data, indices, indptr, rhs, **p: _bcsr_dot_general(data, indices, indptr,
                                                                     g, **p)),
    transpose=_bcsr_dot_general_transpose,
    samples=lambda: [b.Sample([*_samples(), b.random_values((3, 2), np.float32, seed=1)],
                              {"dimension_numbers": (((1,), (0,)), ((), ())),
                               "preferred_element_type": None,
                               "lhs_spinfo": SparseInfo(shape=(2, 3))})])


# --- functions through BCOO -------------------------------------------------------------

def bcsr_eliminate_zeros(mat, nse=None):
    """The BCSR array with its zero entries dropped and duplicates summed."""
    return BCSR.from_bcoo(bcoo.bcoo_eliminate_zeros(mat.to_bcoo(), nse=nse))


def bcsr_sum_duplicates(mat, nse=None):
    """The BCSR array with the data of duplicate indices summed (sorted unique
    indices)."""
    return BCSR.from_bcoo(bcoo.bcoo_sum_duplicates(mat.to_bcoo(), nse=nse))


def bcsr_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None):
    """lax.broadcast_in_dim of a BCSR array (through bcoo_broadcast_in_dim)."""
    return BCSR.from_bcoo(bst.bcoo_broadcast_in_dim(mat.to_bcoo(), shape=shape,
                                                broadcast_dimensions=broadcast_dimensions))


def bcsr_concatenate(operands, *, dimension):
    """lax.concatenate of BCSR arrays (through bcoo_concatenate)."""
    return BCSR.from_bcoo(bst.bcoo_concatenate([mat.to_bcoo() for mat in operands],
                                           dimension=dimension))


# --- the BCSR array ---------------------------------------------------------------------

class BCSR(JAXSparse):
    """Experimental batched CSR matrix implemented in JAX."""

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        self.data, self.indices, self.indptr = map(jnp.asarray, args)
        self.indices_sorted, self.unique_indices = indices_sorted, unique_indices
        super().__init__(args, shape=tuple(shape))
        _validate_bcsr(self.data, self.indices, self.indptr, self.shape)

    @property
    def _bufs(self):
        return (self.data, self.indices, self.indptr)

    @property
    def _info(self):
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def nse(self):
        return self.indices.shape[-1]

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def n_batch(self):
        return self.indices.ndim - 1

    @property
    def n_sparse(self):
        return 2

    @property
    def n_dense(self):
        return self.data.ndim - self.indices.ndim

    @property
    def _sparse_shape(self):
        return tuple(self.shape[self.n_batch:self.n_batch + 2])

    def __repr__(self):
        name = self.__class__.__name__
        try:
            nse, n_batch, n_dense = self.nse, self.n_batch, self.n_dense
            dtype, shape = self.dtype, list(self.shape)
        except Exception:
            repr_ = f"{name}(<invalid>)"
        else:
            extra = f", nse={nse}"
            if n_batch:
                extra += f", n_batch={n_batch}"
            if n_dense:
                extra += f", n_dense={n_dense}"
            repr_ = f"{name}({dtype}{shape}{extra})"
        if isinstance(self.data, Tracer):
            repr_ = f"{type(self.data).__name__}[{repr_}]"
        return repr_

    def transpose(self, *args, **kwargs):
        raise NotImplementedError("Transpose is not implemented.")

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        if aux_data.keys() != {"shape", "indices_sorted", "unique_indices"}:
            raise ValueError(f"BCSR.tree_unflatten: invalid aux_data={aux_data}")
        obj.__dict__.update(**aux_data)
        return obj

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0):
        shape = tuple(shape)
        if n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, "
                             f"n_batch={n_batch}, nse={nse}")
        n_sparse = len(shape) - n_dense - n_batch
        if n_sparse != 2:
            raise ValueError("BCSR sparse.empty: must have 2 sparse dimensions.")
        batch_shape = shape[:n_batch]
        sparse_shape = shape[n_batch:n_batch + 2]
        dense_shape = shape[n_batch + 2:]
        data = jnp.zeros((*batch_shape, nse, *dense_shape), dtype)
        indices = jnp.full((*batch_shape, nse), jnp.array(sparse_shape[1]), index_dtype)
        indptr = jnp.zeros((*batch_shape, sparse_shape[0] + 1), index_dtype)
        return cls((data, indices, indptr), shape=shape)

    def sum_duplicates(self, nse=None, remove_zeros=True):
        """The array with duplicate indices summed (and, with `remove_zeros`, zero entries
        dropped), its indices sorted and unique."""
        if remove_zeros:
            return bcsr_eliminate_zeros(self, nse=nse)
        return bcsr_sum_duplicates(self, nse=nse)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
        """The BCSR array of the dense array `mat`."""
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    def todense(self):
        """The dense array."""
        return bcsr_todense(self)

    def to_bcoo(self):
        """The same array as BCOO."""
        coo_indices = _bcsr_to_bcoo(self.indices, self.indptr, shape=self.shape)
        return bcoo.BCOO((self.data, coo_indices), shape=self.shape)

    @classmethod
    def from_bcoo(cls, arr):
        """The BCSR array of a BCOO array with 2 sparse dimensions."""
        if arr.n_sparse != 2:
            raise NotImplementedError(
                f"BSCR.from_bcoo requires n_sparse=2; got arr.n_sparse={arr.n_sparse}")
        if not arr.indices_sorted:
            arr = arr.sort_indices()
        indices, indptr = _bcoo_to_bcsr(arr.indices, shape=arr.shape,
                                        index_dtype=arr.indices.dtype)
        return cls((arr.data, indices, indptr), shape=arr.shape)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0):
        """The BCSR array of a 2-D scipy.sparse array."""
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCSR from_scipy_sparse with nonzero n_dense/n_batch.")
        if mat.ndim != 2:
            raise ValueError(f"BCSR from_scipy_sparse requires 2D array; {mat.ndim}D is "
                             "given.")
        mat = mat.tocsr()
        data = jnp.asarray(mat.data)
        indices = jnp.asarray(mat.indices).astype(index_dtype or np.int32)
        indptr = jnp.asarray(mat.indptr).astype(index_dtype or np.int32)
        return cls((data, indices, indptr), shape=mat.shape)


tree_util.register_pytree_node(BCSR, BCSR.tree_flatten, BCSR.tree_unflatten)


def _bcsr_to_elt(cont, _, val, axis):
    if axis is None:
        return val
    if axis >= val.n_batch:
        raise ValueError(f"Cannot map in_axis={axis} for BCSR array with n_batch="
                         f"{val.n_batch}. in_axes for batched BCSR operations must "
                         "correspond to a batched dimension.")
    return BCSR((cont(val.data, axis), cont(val.indices, axis), cont(val.indptr, axis)),
                shape=val.shape[:axis] + val.shape[axis + 1:])


def _bcsr_from_elt(cont, axis_size, elt, axis):
    if axis is None:
        return elt
    if axis > elt.n_batch:
        raise ValueError(f"BCSR: cannot add out_axis={axis} for BCSR array with n_batch="
                         f"{elt.n_batch}. BCSR batch axes must be a contiguous block of "
                         "leading dimensions.")
    return BCSR((cont(axis_size, elt.data, axis), cont(axis_size, elt.indices, axis),
                 cont(axis_size, elt.indptr, axis)),
                shape=elt.shape[:axis] + (axis_size,) + elt.shape[axis:])


# vmap maps a BCSR array along one of its batch dimensions
batching.register_vmappable(BCSR, _bcsr_to_elt, _bcsr_from_elt)
