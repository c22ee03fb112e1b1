"""BCOO, JAX's batched-coordinate sparse array (jax.experimental.sparse.bcoo): an array of
`shape` = batch + sparse + dense dimensions, holding `data` (batch..., nse, dense...) at
`indices` (batch..., nse, n_sparse); a batch dimension of data or indices may be 1
(broadcast). Its primitives bcoo_todense, bcoo_fromdense, bcoo_extract, bcoo_transpose
and bcoo_dot_general compute with jax.numpy gathers and scatter-adds, as JAX's CPU
lowerings do, with JAX's JVP and transpose rules; they batch by vmapping that
computation (JAX moves the vmapped axis into the batch dimensions: the same values)."""
from __future__ import annotations

import functools
import math
import operator
import warnings
from typing import NamedTuple

import numpy as np

from pyjax._src import tree_util
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace import NO_TRANSPOSE, Tracer
from pyjax._src.interpreters import ad, batching
from pyjax._src.lax import builders as b
from pyjax._src.lax import dot as ldot
from pyjax._src.lax import sorting as lax_sorting
from pyjax._src.lax import structural
from pyjax._src.numpy import array_manipulation, indexing
from pyjax._src.numpy import sorting as lax_sorting_np
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.sparse.base import JAXSparse
from pyjax._src.sparse.composite import composite_primitive
from pyjax._src.sparse.util import (
    SparseEfficiencyError, SparseEfficiencyWarning, SparseInfo, _count_stored_elements,
    nfold_vmap, remaining,
)


class BCOOProperties(NamedTuple):
    n_batch: int
    n_sparse: int
    n_dense: int
    nse: int


def _validate_bcoo_indices(indices, shape) -> BCOOProperties:
    if not np.issubdtype(indices.dtype, np.integer) or len(indices.shape) < 2:
        raise TypeError(f"BCOO indices must be an integer array of shape (batch..., nse, "
                        f"n_sparse); got {indices.dtype}{list(indices.shape)}")
    shape = tuple(shape)
    nse, n_sparse = indices.shape[-2:]
    n_batch = len(indices.shape) - 2
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0:
        raise ValueError(f"BCOO indices of shape {indices.shape} do not fit shape={shape}")
    if any(s1 not in (1, s2) for s1, s2 in zip(indices.shape[:n_batch], shape[:n_batch])):
        raise ValueError("indices batch dimensions not compatible for "
                         f"indices.shape={indices.shape}, shape={shape}")
    return BCOOProperties(n_batch=n_batch, n_sparse=n_sparse, n_dense=n_dense, nse=nse)


def _validate_bcoo(data, indices, shape) -> BCOOProperties:
    props = _validate_bcoo_indices(indices, shape)
    n_batch, n_sparse, n_dense, nse = props
    shape = tuple(shape)
    if any(s1 not in (1, s2) for s1, s2 in zip(data.shape[:n_batch], shape[:n_batch])):
        raise ValueError(f"data batch dimensions not compatible for data.shape={data.shape}, "
                         f"shape={shape}")
    if tuple(data.shape[n_batch:]) != (nse,) + shape[n_batch + n_sparse:]:
        raise ValueError(f"Invalid data.shape={data.shape} for nse={nse}, n_batch={n_batch}, "
                         f"n_dense={n_dense}")
    return props


def _index_grids(shape, indices_shape, n_batch, n_sparse, indices):
    """The index tuple addressing, in an array of `shape`, the stored entries of each batch:
    batch positions (broadcast over nse), then the sparse indices."""
    ind_slices = tuple(np.zeros(s, int) if i_s == 1 else np.arange(s)
                       for s, i_s in zip(shape[:n_batch], indices_shape[:n_batch]))
    grid = tuple(np.meshgrid(*ind_slices, indexing="ij", sparse=True))
    sparse_ind = tuple(indices[grid + (slice(None), i)] for i in range(n_sparse))
    batch_slices = tuple(np.arange(s) for s in shape[:n_batch])
    batch_ind = tuple(np.meshgrid(*batch_slices, np.arange(1), indexing="ij",
                                  sparse=True))[:-1]
    return batch_ind, sparse_ind


def _samples():
    data = b.random_values((3,), np.float32)
    indices = np.array([[0, 2], [1, 0], [1, 1]], np.int32)
    return data, indices


# --- bcoo_todense -----------------------------------------------------------------------

def bcoo_todense(mat):
    """The dense array of the BCOO array `mat`."""
    return _bcoo_todense(mat.data, mat.indices, spinfo=mat._info)


def _bcoo_todense(data, indices, *, spinfo):
    return bcoo_todense_p.bind(jnp.asarray(data), jnp.asarray(indices), spinfo=spinfo)


def _bcoo_todense_fun(data, indices, *, spinfo):
    shape = spinfo.shape
    n_batch, n_sparse, _, _ = _validate_bcoo(data, indices, shape)
    batch_ind, sparse_ind = _index_grids(shape, indices.shape, n_batch, n_sparse, indices)
    if not sparse_ind:
        data = data.sum(n_batch, keepdims=bool(batch_ind), dtype=data.dtype)
    return jnp.zeros(shape, data.dtype).at[batch_ind + sparse_ind].add(data)


def _bcoo_todense_abstract_eval(data, indices, *, spinfo):
    _validate_bcoo(data, indices, spinfo.shape)
    return ShapedArray(spinfo.shape, data.dtype)


def _bcoo_todense_transpose(ct, data, indices, *, spinfo):
    if ad.is_undefined_primal(indices):
        raise ValueError("Cannot transpose with respect to sparse indices")
    return [_bcoo_extract(indices, ad.instantiate_zeros(ct)), None]


bcoo_todense_p = composite_primitive(
    "bcoo_todense", _bcoo_todense_fun, abstract_eval=_bcoo_todense_abstract_eval,
    jvp=ad.defjvp(lambda g, data, indices, *, spinfo: _bcoo_todense(g, indices,
                                                                     spinfo=spinfo), None),
    transpose=_bcoo_todense_transpose,
    samples=lambda: [b.Sample(_samples(), {"spinfo": SparseInfo(shape=(2, 3))})])


# --- bcoo_fromdense ---------------------------------------------------------------------

def bcoo_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=np.int32):
    """The BCOO array of the dense array `mat` with `n_batch` batch and `n_dense` dense
    dimensions, storing `nse` entries per batch (default: as many as `mat` needs)."""
    mat = jnp.asarray(mat)
    nse_arr = nse
    if nse_arr is None:
        nse_arr = _count_stored_elements(mat, n_batch, n_dense)
    nse_int = operator.index(nse_arr)
    return BCOO(_bcoo_fromdense(mat, nse=nse_int, n_batch=n_batch, n_dense=n_dense,
                                index_dtype=index_dtype),
                shape=mat.shape, indices_sorted=True, unique_indices=True)


def _bcoo_fromdense(mat, *, nse, n_batch=0, n_dense=0, index_dtype=np.int32):
    mat = jnp.asarray(mat)
    return bcoo_fromdense_p.bind(mat, nse=operator.index(nse), n_batch=n_batch,
                                 n_dense=n_dense, index_dtype=np.dtype(index_dtype))


def _bcoo_fromdense_fun(mat, *, nse, n_batch, n_dense, index_dtype):
    n_sparse = mat.ndim - n_dense - n_batch
    mask = mat != 0
    if n_dense > 0:
        mask = mask.any([-(i + 1) for i in range(n_dense)])

    def _nonzero(a):
        if a.ndim:
            return indexing.nonzero(a, size=nse, fill_value=a.shape[:n_sparse])
        return ()
    found = nfold_vmap(_nonzero, n_batch, broadcasted=False)(mask)
    if not found:
        indices = jnp.zeros(mask.shape[:n_batch] + (nse, 0), index_dtype)
    else:
        indices = jnp.moveaxis(jnp.array(found, index_dtype), 0, n_batch + 1)
    data = _bcoo_extract_fun(indices, mat, assume_unique=True)
    true_nonzeros = (structural.broadcasted_iota(np.int32, (1,) * n_batch + (nse,), n_batch)
                     < mask.sum(list(range(n_batch, mask.ndim)))[..., None])
    true_nonzeros = true_nonzeros[(n_batch + 1) * (slice(None),) + n_dense * (None,)]
    return jnp.where(true_nonzeros, data, 0), indices


def _bcoo_fromdense_abstract_eval(mat, *, nse, n_batch, n_dense, index_dtype):
    n_sparse = mat.ndim - n_batch - n_dense
    if n_sparse < 0 or n_batch < 0 or n_dense < 0:
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for an array of "
                         f"shape {mat.shape}")
    data_shape = mat.shape[:n_batch] + (nse,) + mat.shape[n_batch + n_sparse:]
    index_shape = mat.shape[:n_batch] + (nse, n_sparse)
    return [ShapedArray(data_shape, mat.dtype), ShapedArray(index_shape, index_dtype)]


def _bcoo_fromdense_jvp(primals, tangents, **params):
    (mat,), (mat_dot,) = primals, tangents
    data, indices = out = _bcoo_fromdense(mat, **params)
    data_dot = (ad.Zero.from_primal_value(data) if type(mat_dot) is ad.Zero
                else _bcoo_extract(indices, mat_dot))
    return out, [data_dot, ad.Zero.from_primal_value(indices)]


def _bcoo_fromdense_transpose(cts, mat, **params):
    data, indices = cts
    if type(indices) is ad.Zero:
        raise ValueError("Cannot transpose with respect to sparse indices")
    return [_bcoo_todense(ad.instantiate_zeros(data), indices,
                          spinfo=SparseInfo(mat.aval.shape))]


bcoo_fromdense_p = composite_primitive(
    "bcoo_fromdense", _bcoo_fromdense_fun, multiple_results=True,
    abstract_eval=_bcoo_fromdense_abstract_eval, jvp=_bcoo_fromdense_jvp,
    transpose=_bcoo_fromdense_transpose,
    samples=lambda: [b.Sample([np.array([[0.5, 1.5, 1], [2, 3, -1]], np.float32)],
                              {"nse": 6, "n_batch": 0, "n_dense": 0,
                               "index_dtype": np.dtype(np.int32)}),
                     b.Sample([np.array([[0.5, 1.5, 1], [2, 3, -1]], np.float32)],
                              {"nse": 3, "n_batch": 1, "n_dense": 0,
                               "index_dtype": np.dtype(np.int32)})])


# --- bcoo_extract -----------------------------------------------------------------------

def bcoo_extract(sparr, arr, *, assume_unique=None):
    """The BCOO array with the indices of `sparr` and the values of the dense `arr` there
    (where indices repeat, all but the first get zero unless `assume_unique`)."""
    if not isinstance(sparr, BCOO):
        raise TypeError(f"First argument to bcoo_extract should be a BCOO array. Got "
                        f"type(sparr)={type(sparr)}")
    arr = jnp.asarray(arr)
    if arr.shape != sparr.shape:
        raise ValueError(f"shape mismatch: sparr.shape={sparr.shape} arr.shape={arr.shape}")
    if arr.dtype != sparr.dtype:
        raise ValueError(f"dtype mismatch: sparr.dtype={sparr.dtype} arr.dtype={arr.dtype}")
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    data = _bcoo_extract(sparr.indices, arr, assume_unique=assume_unique)
    return BCOO((data, sparr.indices), **sparr._info._asdict())


def _bcoo_extract(indices, arr, *, assume_unique=True):
    return bcoo_extract_p.bind(indices, arr, assume_unique=bool(assume_unique))


def _first_occurrences(indices, shape):
    """Per batch, whether each stored index is the first stored at its position."""
    n_batch = indices.ndim - 2
    nse, n_sparse = indices.shape[-2:]
    sparse_shape = shape[n_batch:n_batch + n_sparse]
    strides = np.cumprod((1,) + tuple(sparse_shape[::-1]))[:-1][::-1].astype(np.int64)

    def first(ind):
        flat = (ind * jnp.asarray(strides.astype(ind.dtype))).sum(-1) if n_sparse else \
            jnp.zeros(nse, ind.dtype)
        earlier = array_manipulation.tril(flat[:, None] == flat[None, :], -1).any(1)
        return ~earlier
    return nfold_vmap(first, n_batch, broadcasted=False)(indices)


def _bcoo_extract_fun(indices, arr, *, assume_unique):
    props = _validate_bcoo_indices(indices, arr.shape)
    batch_ind, sparse_ind = _index_grids(arr.shape, indices.shape, props.n_batch,
                                         props.n_sparse, indices)
    if not sparse_ind + batch_ind:
        result = arr[None]
    else:
        result = arr.at[batch_ind + sparse_ind].get(mode="fill", fill_value=0)
    if props.n_sparse == 0 and props.nse != 1:
        result = structural.broadcast_in_dim(
            result, result.shape[:props.n_batch] + (props.nse,)
            + result.shape[props.n_batch + 1:], tuple(range(result.ndim)))
    if not assume_unique:
        keep = _first_occurrences(indices, arr.shape)
        keep = keep[(Ellipsis,) + (None,) * props.n_dense]
        result = jnp.where(keep, result, 0)
    return result


def _bcoo_extract_abstract_eval(indices, arr, *, assume_unique):
    n_batch, _, n_dense, nse = _validate_bcoo_indices(indices, arr.shape)
    return ShapedArray(arr.shape[:n_batch] + (nse,) + arr.shape[arr.ndim - n_dense:],
                       arr.dtype)


def _bcoo_extract_transpose(ct, indices, arr, *, assume_unique):
    if ad.is_undefined_primal(indices):
        raise ValueError("Cannot transpose with respect to sparse indices")
    ct = ad.instantiate_zeros(ct)
    if not assume_unique:
        keep = _first_occurrences(indices, arr.aval.shape)
        ct = jnp.where(keep[(Ellipsis,) + (None,) * (ct.ndim - keep.ndim)], ct, 0)
    return [None, _bcoo_todense(ct, indices, spinfo=SparseInfo(arr.aval.shape))]


bcoo_extract_p = composite_primitive(
    "bcoo_extract", _bcoo_extract_fun, abstract_eval=_bcoo_extract_abstract_eval,
    jvp=ad.defjvp(None, lambda g, indices, arr, **p: _bcoo_extract(indices, g, **p)),
    transpose=_bcoo_extract_transpose,
    samples=lambda: [b.Sample([_samples()[1], b.random_values((2, 3), np.float32)],
                              {"assume_unique": True})])


# --- bcoo_transpose ---------------------------------------------------------------------

def bcoo_transpose(mat, *, permutation):
    """The BCOO array with its dimensions permuted (batch, sparse and dense dimensions
    each stay among themselves)."""
    buffers = _bcoo_transpose(mat.data, mat.indices, permutation=permutation,
                              spinfo=mat._info)
    out_shape = tuple(mat.shape[p] for p in permutation)
    return BCOO(buffers, shape=out_shape, unique_indices=mat.unique_indices)


def _bcoo_transpose(data, indices, *, permutation, spinfo):
    permutation = tuple(permutation)
    if permutation == tuple(range(len(spinfo.shape))):
        return data, indices
    return bcoo_transpose_p.bind(data, indices, permutation=permutation, spinfo=spinfo)


def _validate_permutation(data, indices, permutation, shape):
    if not isinstance(permutation, (tuple, list, np.ndarray)):
        raise TypeError("transpose permutation must be a tuple/list/ndarray, got "
                        f"{type(permutation)}.")
    if tuple(sorted(permutation)) != tuple(range(len(shape))):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                        f"got permutation {permutation} for shape {shape}.")
    n_batch, n_sparse, n_dense, _ = _validate_bcoo(data, indices, shape)
    batch_perm = permutation[:n_batch]
    sparse_perm = [p - n_batch for p in permutation[n_batch: n_batch + n_sparse]]
    dense_perm = [p - n_sparse - n_batch for p in permutation[n_batch + n_sparse:]]
    if n_batch and tuple(sorted(batch_perm)) != tuple(range(n_batch)):
        raise NotImplementedError(
            "transpose permutation cannot permute batch axes with non-batch axes; got "
            f"permutation {permutation}, with n_batch={n_batch}.")
    if n_dense and tuple(sorted(dense_perm)) != tuple(range(n_dense)):
        raise NotImplementedError(
            "transpose permutation cannot permute dense axes with non-dense axes; got "
            f"permutation {permutation}, with n_dense={n_dense}.")
    return batch_perm, sparse_perm, dense_perm


def _bcoo_transpose_fun(data, indices, *, permutation, spinfo):
    batch_perm, sparse_perm, dense_perm = _validate_permutation(data, indices, permutation,
                                                                spinfo.shape)
    n_batch = len(batch_perm)
    indices = indices[..., np.array(sparse_perm, int)].transpose(*batch_perm, n_batch,
                                                                 n_batch + 1)
    data = data.transpose(*batch_perm, n_batch, *(d + n_batch + 1 for d in dense_perm))
    return data, indices


def _bcoo_transpose_abstract_eval(data, indices, *, permutation, spinfo):
    batch_perm, _, dense_perm = _validate_permutation(data, indices, permutation,
                                                      spinfo.shape)
    n_batch = len(batch_perm)
    data_shape = tuple(data.shape[p] for p in batch_perm) + (data.shape[n_batch],) + tuple(
        data.shape[n_batch + 1 + d] for d in dense_perm)
    index_shape = tuple(indices.shape[p] for p in batch_perm) + indices.shape[n_batch:]
    return [ShapedArray(data_shape, data.dtype), ShapedArray(index_shape, indices.dtype)]


def _bcoo_transpose_jvp(primals, tangents, *, permutation, spinfo):
    data, indices = primals
    data_dot, _ = tangents
    out = _bcoo_transpose(data, indices, permutation=permutation, spinfo=spinfo)
    out_dot = (ad.Zero.from_primal_value(out[0]) if type(data_dot) is ad.Zero else
               _bcoo_transpose(data_dot, indices, permutation=permutation, spinfo=spinfo)[0])
    return out, [out_dot, ad.Zero.from_primal_value(out[1])]


def _bcoo_transpose_transpose(cts, data, indices, *, permutation, spinfo):
    data_ct, _ = cts
    if ad.is_undefined_primal(indices):
        raise ValueError("Cannot transpose with respect to sparse indices")
    inverse = tuple(int(i) for i in np.argsort(permutation))
    indices_t = _bcoo_transpose_fun(jnp.zeros(data.aval.shape, data.aval.dtype), indices,
                                    permutation=permutation, spinfo=spinfo)[1]
    shape_t = tuple(spinfo.shape[p] for p in permutation)
    data_ct = ad.instantiate_zeros(data_ct)
    return [_bcoo_transpose(data_ct, indices_t, permutation=inverse,
                            spinfo=SparseInfo(shape_t))[0], None]


bcoo_transpose_p = composite_primitive(
    "bcoo_transpose", _bcoo_transpose_fun, multiple_results=True,
    abstract_eval=_bcoo_transpose_abstract_eval, jvp=_bcoo_transpose_jvp,
    transpose=_bcoo_transpose_transpose,
    samples=lambda: [b.Sample(_samples(), {"permutation": (1, 0),
                                           "spinfo": SparseInfo(shape=(2, 3))})])


# --- bcoo_dot_general -------------------------------------------------------------------

def bcoo_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """lax.dot_general where lhs or rhs is a BCOO array: a dense result, or a BCOO one
    when both are (bcoo_spdot_general); contraction and batch dimensions of a sparse
    operand must be among its batch or sparse dimensions."""
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        shape = ldot.dot_general_p.abstract_eval(
            ShapedArray(lhs.shape, lhs.dtype), ShapedArray(rhs.shape, rhs.dtype),
            dimension_numbers=dimension_numbers, precision=None,
            preferred_element_type=preferred_element_type, out_sharding=None).shape
        bufs = _bcoo_spdot_general(lhs.data, lhs.indices, rhs.data, rhs.indices,
                                   lhs_spinfo=lhs._info, rhs_spinfo=rhs._info,
                                   dimension_numbers=dimension_numbers,
                                   preferred_element_type=preferred_element_type)
        return BCOO(bufs, shape=shape)
    if isinstance(lhs, BCOO):
        return _bcoo_dot_general(lhs.data, lhs.indices, rhs,
                                 dimension_numbers=dimension_numbers,
                                 preferred_element_type=preferred_element_type,
                                 lhs_spinfo=lhs._info)
    if isinstance(rhs, BCOO):
        return _bcoo_rdot_general(lhs, rhs.data, rhs.indices,
                                  dimension_numbers=dimension_numbers,
                                  preferred_element_type=preferred_element_type,
                                  rhs_spinfo=rhs._info)
    return ldot.dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                            preferred_element_type=preferred_element_type)


def _index_tuple(dims):
    return tuple(operator.index(d) for d in (dims if isinstance(dims, (tuple, list))
                                             else (dims,)))


def _bcoo_dot_general(lhs_data, lhs_indices, rhs, *, dimension_numbers,
                      preferred_element_type, lhs_spinfo):
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    dims = ((_index_tuple(lhs_contract), _index_tuple(rhs_contract)),
            (_index_tuple(lhs_batch), _index_tuple(rhs_batch)))
    if preferred_element_type is not None:
        preferred_element_type = np.dtype(preferred_element_type)
    return bcoo_dot_general_p.bind(jnp.asarray(lhs_data), jnp.asarray(lhs_indices),
                                   jnp.asarray(rhs), dimension_numbers=dims,
                                   preferred_element_type=preferred_element_type,
                                   lhs_spinfo=lhs_spinfo)


def _bcoo_rdot_general(lhs, rhs_data, rhs_indices, *, dimension_numbers,
                       preferred_element_type, rhs_spinfo):
    reversed_dims = tuple(d[::-1] for d in dimension_numbers)
    result = _bcoo_dot_general(rhs_data, rhs_indices, lhs, lhs_spinfo=rhs_spinfo,
                               dimension_numbers=reversed_dims,
                               preferred_element_type=preferred_element_type)
    n_contract, n_batch = (len(d[0]) for d in dimension_numbers)
    n_swap = len(rhs_spinfo.shape) - n_contract
    permutation = (*range(n_batch), *range(n_swap, result.ndim), *range(n_batch, n_swap))
    return structural.transpose(result, permutation)


def _bcoo_dot_general_fun(lhs_data, lhs_indices, rhs, *, dimension_numbers,
                          preferred_element_type, lhs_spinfo):
    out_aval = _bcoo_dot_general_abstract_eval(
        lhs_data.aval, lhs_indices.aval, rhs.aval, dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type, lhs_spinfo=lhs_spinfo)
    n_sparse = lhs_indices.shape[-1]
    n_batch = lhs_indices.ndim - 2
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    pairs = list(zip(lhs_contracting, rhs_contracting))
    lhs_contracting_b = tuple(l for l, _ in pairs if l < n_batch)
    rhs_contracting_b = tuple(r for l, r in pairs if l < n_batch)
    lhs_contracting_s = tuple(l for l, _ in pairs if l >= n_batch)
    rhs_contracting_s = tuple(r for l, r in pairs if l >= n_batch)

    if lhs_batch or lhs_contracting_b:   # batch dimensions in the order the product uses
        batch_perm = [*lhs_batch, *remaining(range(n_batch), lhs_batch, lhs_contracting_b),
                      *lhs_contracting_b]
        lhs_data = lhs_data.transpose([*batch_perm, *range(n_batch, lhs_data.ndim)])
        lhs_indices = lhs_indices.transpose([*batch_perm,
                                             *range(n_batch, lhs_indices.ndim)])
    if lhs_contracting_s:   # contracted sparse dimensions first
        lhs_contracting_s = tuple(d - n_batch for d in lhs_contracting_s)
        sparse_perm = np.array([*lhs_contracting_s,
                                *remaining(range(n_sparse), lhs_contracting_s)], int)
        lhs_indices = lhs_indices[..., sparse_perm]
    rhs_perm = [*rhs_batch, *rhs_contracting_b, *rhs_contracting_s,
                *remaining(range(rhs.ndim), rhs_batch, rhs_contracting)]
    rhs = rhs.transpose(rhs_perm)

    def result(out_array, lhs_data, lhs_indices, rhs):
        idx = tuple(lhs_indices[..., i] for i in range(n_sparse))
        idx_right = idx[:len(lhs_contracting_s)]
        idx_out = idx[len(lhs_contracting_s):]
        if idx_right and lhs_indices.ndim > 2:
            idx_batch = array_manipulation.meshgrid(
                *(jnp.arange(n) for n in lhs_indices.shape[:-1]),
                indexing="ij")[:lhs_indices.ndim - 2]
            idx_right = (*idx_batch, *idx_right)
        batch_dims = list(range(len(lhs_contracting_b) + bool(lhs_contracting_s)))
        prod = ldot.dot_general(lhs_data, rhs.at[idx_right].get(mode="fill", fill_value=0),
                                (([], []), (batch_dims, batch_dims)),
                                preferred_element_type=preferred_element_type)
        if idx_out:
            return out_array.at[idx_out].add(prod)
        return prod.sum(tuple(range(prod.ndim - out_array.ndim)), dtype=out_array.dtype)

    result = nfold_vmap(result, n_batch - len(lhs_contracting_b))
    rhs = structural.expand_dims(rhs, tuple(range(len(rhs_batch),
                                                  n_batch - len(lhs_contracting_b))))
    out_array = jnp.zeros(out_aval.shape, out_aval.dtype)
    return result(out_array, lhs_data, lhs_indices, rhs)


def _bcoo_dot_general_abstract_eval(lhs_data, lhs_indices, rhs, *, dimension_numbers,
                                    preferred_element_type, lhs_spinfo):
    out_aval = ldot.dot_general_p.abstract_eval(
        ShapedArray(lhs_spinfo.shape, lhs_data.dtype), ShapedArray(rhs.shape, rhs.dtype),
        dimension_numbers=dimension_numbers, precision=None,
        preferred_element_type=preferred_element_type, out_sharding=None)
    (lhs_contracting, _), (lhs_batch, _) = dimension_numbers
    n_batch, n_sparse, _, _ = _validate_bcoo(lhs_data, lhs_indices, lhs_spinfo.shape)
    if lhs_batch and max(lhs_batch) >= n_batch:
        raise NotImplementedError(
            "bcoo_dot_general batch dimensions must be among the batch dimensions in the "
            f"sparse representation.\ngot lhs_batch={lhs_batch}, n_batch={n_batch}")
    if any(d >= n_batch + n_sparse for d in lhs_contracting):
        raise NotImplementedError("bcoo_dot_general: contracting over dense dimensions.")
    return ShapedArray(out_aval.shape, out_aval.dtype)


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield range(start, start + len(x))
        start += len(x)


def _unbroadcast(aval, x):
    """x summed over the dimensions where `aval` has size 1 and x does not."""
    dims = [i for i, (a, b_) in enumerate(zip(aval.shape, x.shape)) if a != b_]
    return x.sum(tuple(dims), keepdims=True) if dims else x


def _bcoo_dot_general_transpose(ct, lhs_data, lhs_indices, rhs, *, dimension_numbers,
                                preferred_element_type, lhs_spinfo):
    if ad.is_undefined_primal(lhs_indices):
        raise ValueError("Cannot transpose with respect to sparse indices")
    ct = ad.instantiate_zeros(ct)
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_ndim = len(lhs_spinfo.shape)
    rhs_ndim = rhs.aval.ndim if ad.is_undefined_primal(rhs) else rhs.ndim
    lhs_kept = remaining(range(lhs_ndim), lhs_contract, lhs_batch)
    rhs_kept = remaining(range(rhs_ndim), rhs_contract, rhs_batch)
    ans_batch, ans_lhs, ans_rhs = map(list, _ranges_like(lhs_batch, lhs_kept, rhs_kept))
    if ad.is_undefined_primal(lhs_data):
        dims = ((ans_rhs, rhs_kept), (ans_batch, rhs_batch))
        lhs_contract_sorted_by_rhs = list(np.take(lhs_contract, np.argsort(rhs_contract)))
        permutation = list(lhs_batch) + lhs_kept + lhs_contract_sorted_by_rhs
        out_axes = [int(i) for i in np.argsort(permutation)]
        out_dense = structural.transpose(
            ldot.dot_general(ct, rhs, dimension_numbers=dims), tuple(out_axes))
        result = _bcoo_extract(lhs_indices, out_dense.astype(lhs_data.aval.dtype))
        return [_unbroadcast(lhs_data.aval, result), None, None]
    dims = ((lhs_kept, ans_lhs), (lhs_batch, ans_batch))
    rhs_contract_sorted_by_lhs = list(np.take(rhs_contract, np.argsort(lhs_contract)))
    out_axes = tuple(int(i) for i in np.argsort(list(rhs_batch) + rhs_contract_sorted_by_lhs
                                                + rhs_kept))
    result = _bcoo_dot_general(lhs_data, lhs_indices, ct, lhs_spinfo=lhs_spinfo,
                               preferred_element_type=preferred_element_type,
                               dimension_numbers=dims)
    return [None, None, structural.transpose(result, out_axes).astype(rhs.aval.dtype)]


bcoo_dot_general_p = composite_primitive(
    "bcoo_dot_general", _bcoo_dot_general_fun,
    abstract_eval=_bcoo_dot_general_abstract_eval,
    jvp=ad.defjvp(lambda g, data, indices, rhs, **p: _bcoo_dot_general(g, indices, rhs, **p),
                  None,
                  lambda g, data, indices, rhs, **p: _bcoo_dot_general(data, indices, g, **p)),
    transpose=_bcoo_dot_general_transpose,
    samples=lambda: [b.Sample([*_samples(), b.random_values((3, 2), np.float32, seed=1)],
                              {"dimension_numbers": (((1,), (0,)), ((), ())),
                               "preferred_element_type": None,
                               "lhs_spinfo": SparseInfo(shape=(2, 3))})])


# --- bcoo_dot_general_sampled ---------------------------------------------------------

def bcoo_dot_general_sampled(A, B, indices, *, dimension_numbers):
    """The data of lax.dot_general(A, B) at the BCOO `indices` (the product computed
    where the sparse result is stored)."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    dims = ((_index_tuple(lhs_contract), _index_tuple(rhs_contract)),
            (_index_tuple(lhs_batch), _index_tuple(rhs_batch)))
    return bcoo_dot_general_sampled_p.bind(jnp.asarray(A), jnp.asarray(B),
                                           jnp.asarray(indices), dimension_numbers=dims)


def _bcoo_dot_general_sampled_fun(A, B, indices, *, dimension_numbers):
    # JAX's general CPU path: the dense product, then the entries at the indices
    return _bcoo_extract_fun(indices, ldot.dot_general(A, B, dimension_numbers),
                             assume_unique=True)


def _dense_product_aval(A, B, dimension_numbers):
    return ldot.dot_general_p.abstract_eval(
        ShapedArray(A.shape, A.dtype), ShapedArray(B.shape, B.dtype),
        dimension_numbers=dimension_numbers, precision=None, preferred_element_type=None,
        out_sharding=None)


def _bcoo_dot_general_sampled_abstract_eval(A, B, indices, *, dimension_numbers):
    dense = _dense_product_aval(A, B, dimension_numbers)
    return _bcoo_extract_abstract_eval(indices, dense, assume_unique=True)


def _bcoo_dot_general_sampled_transpose(ct, A, B, indices, *, dimension_numbers):
    if ad.is_undefined_primal(indices):
        raise ValueError("Cannot transpose with respect to sparse indices")
    A_aval = A.aval if ad.is_undefined_primal(A) else ShapedArray(A.shape, A.dtype)
    B_aval = B.aval if ad.is_undefined_primal(B) else ShapedArray(B.shape, B.dtype)
    dense = _dense_product_aval(A_aval, B_aval, dimension_numbers)
    ct_dense = _bcoo_todense(ad.instantiate_zeros(ct), indices,
                             spinfo=SparseInfo(dense.shape))
    ct_A, ct_B = ldot.dot_general_p.transpose(ct_dense, A, B,
                                              dimension_numbers=dimension_numbers)
    return [ct_A, ct_B, None]


bcoo_dot_general_sampled_p = composite_primitive(
    "bcoo_dot_general_sampled", _bcoo_dot_general_sampled_fun,
    abstract_eval=_bcoo_dot_general_sampled_abstract_eval,
    jvp=ad.defjvp(
        lambda g, A, B, indices, **p: bcoo_dot_general_sampled(g, B, indices, **p),
        lambda g, A, B, indices, **p: bcoo_dot_general_sampled(A, g, indices, **p), None),
    transpose=_bcoo_dot_general_sampled_transpose,
    samples=lambda: [b.Sample([b.random_values((2, 4), np.float32),
                               b.random_values((4, 3), np.float32, seed=1), _samples()[1]],
                              {"dimension_numbers": (((1,), (0,)), ((), ()))})])


# --- bcoo_sort_indices ------------------------------------------------------------------

def bcoo_sort_indices(mat):
    """The BCOO array with each batch's indices in lexicographic order (duplicates kept)."""
    data, indices = _bcoo_sort_indices(mat.data, mat.indices, spinfo=mat._info)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True,
                unique_indices=mat.unique_indices)


def _bcoo_sort_indices(data, indices, *, spinfo):
    return bcoo_sort_indices_p.bind(data, indices, spinfo=spinfo)


def _sort_indices_unbatched(indices):
    nse, n = indices.shape
    *columns, perm = lax_sorting.sort(
        (*(indices[:, i] for i in range(n)), structural.iota(indices.dtype, nse)),
        num_keys=n)
    return jnp.column_stack(columns), perm


def _sorted(data, indices, n_batch):
    """(data, indices) sorted, and the permutation applied to a data-like array."""
    indices_out, perm = nfold_vmap(_sort_indices_unbatched, n_batch,
                                   broadcasted=False)(indices)
    permute = nfold_vmap(lambda d, p: d[p], n_batch)
    return indices_out, lambda d: permute(d, perm)


def _bcoo_sort_indices_fun(data, indices, *, spinfo):
    props = _validate_bcoo(data, indices, spinfo.shape)
    if props.n_sparse == 0:
        return data, indices
    indices_out, permute = _sorted(data, indices, props.n_batch)
    return permute(data), indices_out


def _bcoo_sort_indices_abstract_eval(data, indices, *, spinfo):
    props = _validate_bcoo(data, indices, spinfo.shape)
    if props.n_sparse == 0:
        return [data, indices]
    # each batch of data is permuted by its batch of indices: broadcast batch dimensions
    # of data take the indices' size
    n = props.n_batch
    data_shape = (*map(max, indices.shape[:n], data.shape[:n]), *data.shape[n:])
    return [ShapedArray(data_shape, data.dtype), indices]


def _bcoo_sort_indices_jvp(primals, tangents, *, spinfo):
    data, indices = primals
    data_dot, _ = tangents
    props = _validate_bcoo(data, indices, spinfo.shape)
    if props.n_sparse == 0:
        return list(primals), list(tangents)
    indices_out, permute = _sorted(data, indices, props.n_batch)
    data_out = permute(data)
    data_dot_out = (ad.Zero.from_primal_value(data_out) if type(data_dot) is ad.Zero
                    else permute(data_dot))
    return [data_out, indices_out], [data_dot_out, ad.Zero.from_primal_value(indices_out)]


bcoo_sort_indices_p = composite_primitive(
    "bcoo_sort_indices", _bcoo_sort_indices_fun, multiple_results=True,
    abstract_eval=_bcoo_sort_indices_abstract_eval, jvp=_bcoo_sort_indices_jvp,
    transpose=NO_TRANSPOSE,
    samples=lambda: [b.Sample(_samples(), {"spinfo": SparseInfo(shape=(2, 3))})])


# --- bcoo_sum_duplicates ----------------------------------------------------------------

def bcoo_sum_duplicates(mat, nse=None):
    """The BCOO array `mat` with the data of duplicate indices summed: sorted, unique
    indices, `nse` stored entries per batch (default: as many as the unique indices of
    the fullest batch, which needs concrete indices)."""
    data, indices = _bcoo_sum_duplicates(mat.data, mat.indices, spinfo=mat._info, nse=nse)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


_NSE_NEEDED = ("bcoo_sum_duplicates: nse must be specified when using the function within "
               "jit, vmap, and other transformations requiring abstract evaluation.")


def bcoo_eliminate_zeros(mat, nse=None):
    """bcoo_sum_duplicates of `mat` with its zero entries first moved out of bounds (so
    that they are dropped)."""
    data, indices, shape = mat.data, mat.indices, mat.shape
    props = _validate_bcoo(data, indices, shape)
    mask = (data == 0).all(tuple(range(props.n_batch + 1, data.ndim)))
    dims_to_contract = tuple(i for i, s in enumerate(indices.shape[:props.n_batch]) if s == 1)
    mask = mask.all(dims_to_contract, keepdims=True)
    fill_value = jnp.array(shape[props.n_batch:props.n_batch + props.n_sparse],
                           dtype=indices.dtype)
    indices = nfold_vmap(lambda i, m: jnp.where(m[:, None], fill_value[None, :], i),
                         props.n_batch)(indices, mask)
    return bcoo_sum_duplicates(BCOO((data, indices), shape=shape), nse=nse)


def _bcoo_sum_duplicates(data, indices, *, spinfo, nse):
    data, indices = jnp.asarray(data), jnp.asarray(indices)
    if nse is None:
        props = _validate_bcoo(data, indices, spinfo.shape)
        if props.n_sparse == 0:
            nse = 1
        else:
            true_size = _unique_indices(indices, shape=spinfo.shape,
                                        return_true_size=True)[-1]
            if isinstance(true_size, Tracer) and true_size.to_concrete_value() is None:
                raise ValueError(_NSE_NEEDED)
            nse = int(np.max(np.asarray(true_size), initial=0))
    return bcoo_sum_duplicates_p.bind(data, indices, spinfo=spinfo, nse=operator.index(nse))


def _adjust_indices_nse(indices, *, nse, shape):
    """`indices` cut, or padded with out-of-bounds indices, to `nse` entries."""
    props = _validate_bcoo_indices(indices, shape)
    if nse <= props.nse:
        return indices[..., :nse, :]
    fill = structural.broadcast_in_dim(
        jnp.array(shape[props.n_batch:props.n_batch + props.n_sparse], dtype=indices.dtype),
        (*indices.shape[:-2], nse - props.nse, indices.shape[-1]), (indices.ndim - 1,))
    return structural.concatenate([indices, fill], indices.ndim - 2)


def _unique_indices(indices, *, shape, return_inverse=False, return_true_size=False):
    """The unique indices of each batch (out-of-bounds ones count as the fill index, which
    the true size leaves out), padded to nse, with the inverse mapping and true size."""
    props = _validate_bcoo_indices(indices, shape)
    sparse_shape = shape[props.n_batch:props.n_batch + props.n_sparse]

    def unbatched(ind):
        if props.n_sparse == 0:
            out = [jnp.zeros((1, 0), ind.dtype)]
            out += [jnp.zeros(1, np.int32)] if return_inverse else []
            return tuple(out + [1] if return_true_size else out)
        fill_value = jnp.array(sparse_shape, ind.dtype)[None]
        ind = jnp.where((ind >= fill_value).any(-1, keepdims=True), fill_value, ind)
        out = list(lax_sorting_np._unique(
            ind, False, return_inverse, False, 0, True, props.nse, fill_value, "unique",
            return_true_size=return_true_size))
        if return_inverse:
            out[1] = out[1].ravel()
        if return_true_size:
            out[-1] = out[-1] - (ind == fill_value).all(-1).any().astype(out[-1].dtype)
        return tuple(out)
    return nfold_vmap(unbatched, props.n_batch, broadcasted=False)(indices)


def _sum_duplicates_into(data, indices, props, nse, mapping):
    """The data of `indices` summed into `nse` slots at `mapping`, per batch."""
    if props.n_sparse == 0:
        data = data.sum(props.n_batch, keepdims=True, dtype=data.dtype)
    data_out = jnp.zeros((*map(max, indices.shape[:props.n_batch], data.shape[:props.n_batch]),
                          nse, *data.shape[props.n_batch + 1:]), dtype=data.dtype)
    if not data_out.size:
        return data_out
    permute = nfold_vmap(lambda d_out, m, d: d_out.at[m].add(d, mode="drop"), props.n_batch)
    return permute(data_out, mapping, data)


def _bcoo_sum_duplicates_fun(data, indices, *, spinfo, nse):
    props = _validate_bcoo(data, indices, spinfo.shape)
    indices_out, mapping = _unique_indices(indices, shape=spinfo.shape, return_inverse=True)
    indices_out = _adjust_indices_nse(indices_out, nse=nse, shape=spinfo.shape)
    return _sum_duplicates_into(data, indices, props, nse, mapping), indices_out


def _bcoo_sum_duplicates_abstract_eval(data, indices, *, spinfo, nse):
    props = _validate_bcoo(data, indices, spinfo.shape)
    n = props.n_batch
    indices_out = ShapedArray((*indices.shape[:n], nse, props.n_sparse), indices.dtype,
                              weak_type=indices.weak_type)
    data_out = ShapedArray((*map(max, indices.shape[:n], data.shape[:n]), nse,
                            *data.shape[n + 1:]), data.dtype, weak_type=data.weak_type)
    return [data_out, indices_out]


def _bcoo_sum_duplicates_jvp(primals, tangents, *, spinfo, nse):
    data, indices = primals
    data_dot, _ = tangents
    props = _validate_bcoo(data, indices, spinfo.shape)
    indices_out, mapping = _unique_indices(indices, shape=spinfo.shape, return_inverse=True)
    indices_out = _adjust_indices_nse(indices_out, nse=nse, shape=spinfo.shape)
    data_out = _sum_duplicates_into(data, indices, props, nse, mapping)
    data_dot_out = (ad.Zero.from_primal_value(data_out) if type(data_dot) is ad.Zero
                    else _sum_duplicates_into(data_dot, indices, props, nse, mapping))
    return [data_out, indices_out], [data_dot_out, ad.Zero.from_primal_value(indices_out)]


bcoo_sum_duplicates_p = composite_primitive(
    "bcoo_sum_duplicates", _bcoo_sum_duplicates_fun, multiple_results=True,
    abstract_eval=_bcoo_sum_duplicates_abstract_eval, jvp=_bcoo_sum_duplicates_jvp,
    transpose=NO_TRANSPOSE,
    samples=lambda: [b.Sample(_samples(), {"spinfo": SparseInfo(shape=(2, 3)), "nse": 2})])


# --- bcoo_update_layout -----------------------------------------------------------------

def bcoo_update_layout(mat, *, n_batch=None, n_dense=None, on_inefficient="error"):
    """The BCOO array `mat` stored with `n_batch` batch and `n_dense` dense dimensions
    (default: as it has). Making more dimensions batch or dense stores many zeros where
    those dimensions have size > 1: a SparseEfficiencyError (or, with on_inefficient
    'warn', a SparseEfficiencyWarning; None: silent)."""
    n_batch = mat.n_batch if n_batch is None else operator.index(n_batch)
    n_dense = mat.n_dense if n_dense is None else operator.index(n_dense)
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    n_sparse = mat.ndim - n_batch - n_dense
    if on_inefficient not in ["error", "warn", None]:
        raise ValueError(f"on_inefficent={on_inefficient!r}; expected one of "
                         "['error', 'warn', None].")
    if n_batch < 0:
        raise ValueError(f"n_batch must be non-negative; got {n_batch}")
    if n_dense < 0:
        raise ValueError(f"n_dense must be non-negative; got {n_dense}")
    if n_sparse < 0:
        raise ValueError(f"sum of n_batch={n_batch} and n_dense={n_dense} cannot be larger "
                         f"than mat.ndim={mat.ndim}.")

    def maybe_err_or_warn(msg):
        if on_inefficient == "error":
            raise SparseEfficiencyError(
                msg + " To disable this error, set the on_inefficient argument of "
                "bcoo_update_layout to 'warn' or None.")
        if on_inefficient == "warn":
            warnings.warn(msg + " To disable this warning, set the on_inefficient argument "
                          "of bcoo_update_layout to None.", category=SparseEfficiencyWarning,
                          stacklevel=3)

    if n_dense > mat.n_dense and any(d > 1 for d in mat.shape[-n_dense:mat.ndim - mat.n_dense]):
        maybe_err_or_warn(f"For matrix of shape {mat.shape}, increasing n_dense from "
                          f"{mat.n_dense} to {n_dense} results in inefficient storage.")
    if n_batch > mat.n_batch and any(d > 1 for d in mat.shape[mat.n_batch:n_batch]):
        maybe_err_or_warn(f"For matrix of shape {mat.shape}, increasing n_batch from "
                          f"{mat.n_batch} to {n_batch} results in inefficient storage.")
    data, indices, shape = mat.data, mat.indices, mat.shape
    cur_batch, cur_dense = mat.n_batch, mat.n_dense
    if n_dense < cur_dense:   # leading dense dimensions become sparse
        n = cur_dense - n_dense

        def fewer_dense(d, i):
            new_d = d.reshape(math.prod(d.shape[:n]), *d.shape[n:])
            meshes = array_manipulation.meshgrid(
                *(jnp.arange(s, dtype=i.dtype) for s in d.shape[:n]), indexing="ij")
            new_i = jnp.column_stack([jnp.broadcast_to(i, (new_d.shape[0], i.size)),
                                      *(m.ravel() for m in meshes)])
            return new_d, new_i
        data, indices = nfold_vmap(fewer_dense, cur_batch + 1)(data, indices)
        data = data.reshape(*data.shape[:cur_batch],
                            math.prod(data.shape[cur_batch:cur_batch + 2]),
                            *data.shape[cur_batch + 2:])
        indices = indices.reshape(*indices.shape[:cur_batch],
                                  math.prod(indices.shape[cur_batch:cur_batch + 2]),
                                  *indices.shape[cur_batch + 2:])
        cur_dense = n_dense
    if n_batch < cur_batch:   # trailing batch dimensions become sparse
        n = cur_batch - n_batch

        def fewer_batch(d, i):
            nse = i.shape[-2]
            new_d = d.reshape(math.prod(d.shape[:n + 1]), *d.shape[n + 1:])
            meshes = array_manipulation.meshgrid(
                *(jnp.arange(s, dtype=i.dtype) for s in (*i.shape[:n], nse)), indexing="ij")
            new_i = i.reshape(math.prod(i.shape[:n + 1]), *i.shape[n + 1:])
            new_i = jnp.column_stack((*(m.ravel() for m in meshes[:-1]), new_i))
            return new_d, new_i
        data, indices = nfold_vmap(fewer_batch, n_batch)(data, indices)
        cur_batch = n_batch
    if n_dense > cur_dense:   # trailing sparse dimensions become dense
        n = n_dense - cur_dense

        def more_dense(d, i):
            new_d = jnp.zeros(shape[-n_dense:], d.dtype).at[tuple(i[-n:])].set(d)
            return new_d, i[:-n]
        data, indices = nfold_vmap(more_dense, cur_batch + 1)(data, indices)
        cur_dense = n_dense
    if n_batch > cur_batch:   # leading sparse dimensions become batch
        n = n_batch - cur_batch

        def more_batch(d, i):
            nse = i.shape[-2]
            idx = tuple(i[:, j] for j in range(n)) + (jnp.arange(nse),)
            new_i = jnp.broadcast_to(i[:, n:], (*shape[cur_batch:n_batch], nse,
                                                i.shape[-1] - n))
            new_d = jnp.zeros((*shape[cur_batch:n_batch], nse, *d.shape[d.ndim - n_dense:]),
                              d.dtype).at[idx].set(d)
            return new_d, new_i
        data, indices = nfold_vmap(more_batch, cur_batch)(data, indices)
    return BCOO((data, indices), shape=shape)


# --- bcoo_spdot_general -----------------------------------------------------------------

def _bcoo_spdot_general(lhs_data, lhs_indices, rhs_data, rhs_indices, *, lhs_spinfo,
                        rhs_spinfo, dimension_numbers, preferred_element_type):
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    dims = ((_index_tuple(lhs_contract), _index_tuple(rhs_contract)),
            (_index_tuple(lhs_batch), _index_tuple(rhs_batch)))
    if preferred_element_type is not None:
        preferred_element_type = np.dtype(preferred_element_type)
    return bcoo_spdot_general_p.bind(
        jnp.asarray(lhs_data), jnp.asarray(lhs_indices), jnp.asarray(rhs_data),
        jnp.asarray(rhs_indices), lhs_spinfo=lhs_spinfo, rhs_spinfo=rhs_spinfo,
        dimension_numbers=dims, preferred_element_type=preferred_element_type)


def _bcoo_spdot_general_unbatched(lhs_data, lhs_indices, rhs_data, rhs_indices, *,
                                  lhs_shape, rhs_shape, lhs_contracting, rhs_contracting,
                                  out_nse):
    lhs = _validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    rhs = _validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    out_shape = (*(s for i, s in enumerate(lhs_shape) if i not in lhs_contracting),
                 *(s for i, s in enumerate(rhs_shape) if i not in rhs_contracting))
    lhs_i = lhs_indices[:, np.array(lhs_contracting, dtype=int)]
    rhs_i = rhs_indices[:, np.array(rhs_contracting, dtype=int)]
    lhs_j = lhs_indices[:, np.array(remaining(range(lhs.n_sparse), lhs_contracting),
                                    dtype=int)]
    rhs_j = rhs_indices[:, np.array(remaining(range(rhs.n_sparse), rhs_contracting),
                                    dtype=int)]
    # every pair of entries whose contracted indices agree (both in bounds)
    overlap = (lhs_i[:, None] == rhs_i[None, :]).all(-1)
    lhs_valid = (lhs_i < jnp.array([lhs_shape[d] for d in lhs_contracting],
                                   lhs_i.dtype)).all(-1)
    rhs_valid = (rhs_i < jnp.array([rhs_shape[d] for d in rhs_contracting],
                                   rhs_i.dtype)).all(-1)
    out_data = jnp.where(overlap & lhs_valid[:, None] & rhs_valid[None, :],
                         lhs_data[:, None] * rhs_data[None, :], 0).ravel()
    n_lhs = lhs_j.shape[-1]
    out_indices = jnp.zeros([lhs.nse, rhs.nse, n_lhs + rhs_j.shape[-1]],
                            dtype=jnp.result_type(lhs_indices, rhs_indices))
    out_indices = out_indices.at[:, :, :n_lhs].set(lhs_j[:, None])
    out_indices = out_indices.at[:, :, n_lhs:].set(rhs_j[None, :])
    out_indices = out_indices.reshape(len(out_data), out_indices.shape[-1])
    # zeros stay stored (eliminating them breaks autodiff, as in JAX)
    return _bcoo_sum_duplicates_fun(out_data, out_indices,
                                    spinfo=SparseInfo(shape=out_shape), nse=out_nse)


def _bcoo_spdot_general_fun(lhs_data, lhs_indices, rhs_data, rhs_indices, *, lhs_spinfo,
                            rhs_spinfo, dimension_numbers, preferred_element_type):
    lhs = _validate_bcoo(lhs_data, lhs_indices, lhs_spinfo.shape)
    rhs = _validate_bcoo(rhs_data, rhs_indices, rhs_spinfo.shape)
    data_aval, _ = _bcoo_spdot_general_abstract_eval(
        lhs_data.aval, lhs_indices.aval, rhs_data.aval, rhs_indices.aval,
        lhs_spinfo=lhs_spinfo, rhs_spinfo=rhs_spinfo, dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type)
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    # batch dimensions first
    lhs_perm = [*lhs_batch, *remaining(range(lhs.n_batch), lhs_batch)]
    rhs_perm = [*rhs_batch, *remaining(range(rhs.n_batch), rhs_batch)]
    lhs_data = lhs_data.transpose([*lhs_perm, *range(lhs.n_batch, lhs_data.ndim)])
    rhs_data = rhs_data.transpose([*rhs_perm, *range(rhs.n_batch, rhs_data.ndim)])
    lhs_indices = lhs_indices.transpose([*lhs_perm, *range(lhs.n_batch, lhs_indices.ndim)])
    rhs_indices = rhs_indices.transpose([*rhs_perm, *range(rhs.n_batch, rhs_indices.ndim)])
    func = functools.partial(
        _bcoo_spdot_general_unbatched, lhs_shape=lhs_spinfo.shape[lhs.n_batch:],
        rhs_shape=rhs_spinfo.shape[rhs.n_batch:],
        lhs_contracting=[d - lhs.n_batch for d in lhs_contracting],
        rhs_contracting=[d - rhs.n_batch for d in rhs_contracting],
        out_nse=data_aval.shape[-1])
    func = nfold_vmap(func, rhs.n_batch - len(rhs_batch), in_axes=(None, None, 0, 0))
    func = nfold_vmap(func, lhs.n_batch - len(lhs_batch), in_axes=(0, 0, None, None))
    func = nfold_vmap(func, len(lhs_batch))
    data, indices = func(lhs_data, lhs_indices, rhs_data, rhs_indices)
    return data.astype(data_aval.dtype), indices


def _bcoo_spdot_general_abstract_eval(lhs_data, lhs_indices, rhs_data, rhs_indices, *,
                                      lhs_spinfo, rhs_spinfo, dimension_numbers,
                                      preferred_element_type):
    lhs_shape, rhs_shape = lhs_spinfo.shape, rhs_spinfo.shape
    out_aval = ldot.dot_general_p.abstract_eval(
        ShapedArray(lhs_shape, lhs_data.dtype), ShapedArray(rhs_shape, rhs_data.dtype),
        dimension_numbers=dimension_numbers, precision=None,
        preferred_element_type=preferred_element_type, out_sharding=None)
    lhs = _validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    rhs = _validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    if lhs.n_dense or rhs.n_dense:
        raise NotImplementedError("bcoo_spdot_general with dense dimensions.")
    if ((lhs_batch and max(lhs_batch) >= lhs.n_batch)
            or (rhs_batch and max(rhs_batch) >= rhs.n_batch)):
        raise NotImplementedError("bcoo_spdot_general: batch_dims must correspond to batch "
                                  "dimensions of the sparse representation.")
    for contracting, props in ((lhs_contracting, lhs), (rhs_contracting, rhs)):
        if contracting and (min(contracting) < props.n_batch
                            or max(contracting) >= props.n_batch + props.n_sparse):
            raise NotImplementedError("bcoo_spdot_general only supports contraction of "
                                      "sparse indices.")
    if rhs.n_batch > len(rhs_batch) and lhs.n_sparse > len(lhs_contracting):
        raise ValueError("bcoo_spdot_general: cannot have unused batch dims on rhs with "
                         "unused sparse dims on lhs.")
    out_nse = ((lhs.nse if lhs.n_sparse > len(lhs_contracting) else 1)
               * (rhs.nse if rhs.n_sparse > len(rhs_contracting) else 1))
    out_n_batch = lhs.n_batch + rhs.n_batch - len(lhs_batch)
    out_nse = min(out_nse, math.prod(out_aval.shape[out_n_batch:]))
    lhs_batch_shape = np.broadcast_shapes(
        tuple(lhs_data.shape[d] for d in range(lhs.n_batch) if d not in lhs_batch),
        tuple(lhs_indices.shape[d] for d in range(lhs.n_batch) if d not in lhs_batch))
    rhs_batch_shape = np.broadcast_shapes(
        tuple(rhs_data.shape[d] for d in range(rhs.n_batch) if d not in rhs_batch),
        tuple(rhs_indices.shape[d] for d in range(rhs.n_batch) if d not in rhs_batch))
    batch_shape = (*(lhs_shape[d] for d in lhs_batch), *lhs_batch_shape, *rhs_batch_shape)
    n_sparse_out = lhs.n_sparse + rhs.n_sparse - 2 * len(lhs_contracting)
    data_aval = ShapedArray((*batch_shape, out_nse), out_aval.dtype)
    indices_aval = ShapedArray((*batch_shape, out_nse, n_sparse_out), lhs_indices.dtype)
    _validate_bcoo(data_aval, indices_aval, out_aval.shape)
    return [data_aval, indices_aval]


def _bcoo_spdot_general_jvp(primals, tangents, **params):
    lhs_data, lhs_indices, rhs_data, rhs_indices = primals
    lhs_data_dot, _, rhs_data_dot, _ = tangents
    primals_out = _bcoo_spdot_general(*primals, **params)
    data_dot_out = ad.Zero.from_primal_value(primals_out[0])
    if type(lhs_data_dot) is not ad.Zero:
        data_dot_out = _bcoo_spdot_general(lhs_data_dot, lhs_indices, rhs_data, rhs_indices,
                                           **params)[0]
    if type(rhs_data_dot) is not ad.Zero:
        term = _bcoo_spdot_general(lhs_data, lhs_indices, rhs_data_dot, rhs_indices,
                                   **params)[0]
        data_dot_out = term if type(data_dot_out) is ad.Zero else data_dot_out + term
    return primals_out, [data_dot_out, ad.Zero.from_primal_value(primals_out[1])]


bcoo_spdot_general_p = composite_primitive(
    "bcoo_spdot_general", _bcoo_spdot_general_fun, multiple_results=True,
    abstract_eval=_bcoo_spdot_general_abstract_eval, jvp=_bcoo_spdot_general_jvp,
    transpose=NO_TRANSPOSE,
    samples=lambda: [b.Sample([*_samples(), *_samples()],
                              {"lhs_spinfo": SparseInfo(shape=(2, 3)),
                               "rhs_spinfo": SparseInfo(shape=(2, 3)),
                               "dimension_numbers": (((1,), (1,)), ((), ())),
                               "preferred_element_type": None})])


# --- the BCOO array ---------------------------------------------------------------------

class BCOO(JAXSparse):
    """Experimental batched COO matrix implemented in JAX."""

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        self.data, self.indices = map(jnp.asarray, args)
        self.indices_sorted, self.unique_indices = indices_sorted, unique_indices
        super().__init__(args, shape=tuple(shape))
        _validate_bcoo(self.data, self.indices, self.shape)

    @property
    def _info(self):
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def _bufs(self):
        return (self.data, self.indices)

    @property
    def nse(self):
        return self.indices.shape[-2]

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def n_batch(self):
        return self.indices.ndim - 2

    @property
    def n_sparse(self):
        return self.indices.shape[-1]

    @property
    def n_dense(self):
        return self.data.ndim - 1 - self.n_batch

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
        if type(self.data).__name__.endswith("Tracer"):
            repr_ = f"{type(self.data).__name__}[{repr_}]"
        return repr_

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
        """The BCOO array of the dense array `mat`."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0):
        """The BCOO array of a scipy.sparse matrix (n_batch and n_dense must be 0)."""
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCOO.fromscipy with nonzero n_dense/n_batch")
        mat = mat.tocoo()
        data = jnp.asarray(mat.data)
        indices = jnp.column_stack((mat.row, mat.col)).astype(
            index_dtype or np.int32)
        return cls((data, indices), shape=mat.shape, indices_sorted=False,
                   unique_indices=False)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0):
        shape = tuple(shape)
        n_sparse = len(shape) - n_dense - n_batch
        if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, "
                             f"n_batch={n_batch}, nse={nse}")
        batch_shape = shape[:n_batch]
        sparse_shape = shape[n_batch:n_batch + n_sparse]
        dense_shape = shape[n_batch + n_sparse:]
        data = jnp.zeros((*batch_shape, nse, *dense_shape), dtype)
        indices = jnp.full((*batch_shape, nse, n_sparse), jnp.array(sparse_shape),
                           index_dtype)
        return cls((data, indices), shape=shape, indices_sorted=True, unique_indices=True)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32", n_batch=0, n_dense=0):
        n_sparse = 2 - n_batch - n_dense
        if n_sparse < 0 or n_dense < 0 or n_batch < 0:
            raise ValueError(f"Invalid inputs: shape={(N, M)}, n_dense={n_dense}, "
                             f"n_batch={n_batch}")
        diag_size = min(N, M - k) if k > 0 else min(N + k, M)
        if diag_size <= 0:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype,
                              n_batch=n_batch, n_dense=n_dense)
        if n_dense > 0 or n_batch > 1:
            return cls.fromdense(jnp.eye(N, M, k, dtype=dtype), n_batch=n_batch,
                                 n_dense=n_dense, index_dtype=index_dtype)
        if n_batch == 0:
            data = jnp.ones(diag_size, dtype=dtype)
            idx = jnp.arange(diag_size, dtype=index_dtype)
            indices = jnp.column_stack([idx - min(k, 0), idx + max(k, 0)])
        else:
            data = jnp.ones(N, dtype=dtype)
            indices = jnp.arange(N, dtype=index_dtype) + k
            if k < 0:
                data = data.at[:abs(k)].set(0)
                indices = indices.at[:abs(k)].set(M)
            elif k > 0:
                data = data.at[M - abs(k):].set(0)
                indices = indices.at[M - abs(k)].set(M)
            data, indices = data[:, None], indices[:, None, None]
        return cls((data, indices), shape=(N, M), indices_sorted=True, unique_indices=True)

    def sum_duplicates(self, nse=None, remove_zeros=True):
        """The array with duplicate indices summed (and, with `remove_zeros`, zero entries
        dropped), its indices sorted and unique."""
        if remove_zeros:
            return bcoo_eliminate_zeros(self, nse=nse)
        return bcoo_sum_duplicates(self, nse=nse)

    def update_layout(self, *, n_batch=None, n_dense=None, on_inefficient="error"):
        """The array stored with `n_batch` batch and `n_dense` dense dimensions (see
        bcoo_update_layout)."""
        return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense,
                                  on_inefficient=on_inefficient)

    def sort_indices(self):
        """The array with its indices sorted (self if they are)."""
        return self if self.indices_sorted else bcoo_sort_indices(self)

    def todense(self):
        """The dense array."""
        return bcoo_todense(self)

    def transpose(self, axes=None):
        """The transposed array (batch, sparse and dense dimensions permute among
        themselves)."""
        perm = list(range(self.ndim)[::-1] if axes is None else axes)
        mat_t = bcoo_transpose(self, permutation=perm)
        shape_t = tuple(self.shape[i] for i in perm)
        sparse_perm = [p - self.n_batch
                       for p in perm[self.n_batch: self.n_batch + self.n_sparse]]
        is_sorted = (self.indices_sorted if tuple(sparse_perm) == tuple(range(self.n_sparse))
                     else False)
        return BCOO((mat_t.data, mat_t.indices), shape=shape_t, indices_sorted=is_sorted,
                    unique_indices=self.unique_indices)

    def tree_flatten(self):
        return (self.data, self.indices), self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        if aux_data.keys() != {"shape", "indices_sorted", "unique_indices"}:
            raise ValueError(f"BCOO.tree_unflatten: invalid aux_data={aux_data}")
        obj.__dict__.update(**aux_data)
        return obj


tree_util.register_pytree_node(BCOO, BCOO.tree_flatten, BCOO.tree_unflatten)


def _bcoo_to_elt(cont, _, val, axis):
    if axis is None:
        return val
    if axis >= val.n_batch:
        raise ValueError(f"Cannot map in_axis={axis} for BCOO array with n_batch="
                         f"{val.n_batch}. in_axes for batched BCOO operations must "
                         "correspond to a batch dimension.")
    return BCOO((cont(val.data, axis), cont(val.indices, axis)),
                shape=val.shape[:axis] + val.shape[axis + 1:],
                indices_sorted=val.indices_sorted, unique_indices=val.unique_indices)


def _bcoo_from_elt(cont, axis_size, elt, axis):
    if axis is None:
        return elt
    if axis > elt.n_batch:
        raise ValueError(f"BCOO: cannot add out_axis={axis} for BCOO array with n_batch="
                         f"{elt.n_batch}. BCOO batch axes must be a contiguous block of "
                         "leading dimensions.")
    return BCOO((cont(axis_size, elt.data, axis), cont(axis_size, elt.indices, axis)),
                shape=elt.shape[:axis] + (axis_size,) + elt.shape[axis:],
                indices_sorted=elt.indices_sorted, unique_indices=elt.unique_indices)


# vmap maps a BCOO array along one of its batch dimensions
batching.register_vmappable(BCOO, _bcoo_to_elt, _bcoo_from_elt)
