"""The structural and elementwise operations of BCOO arrays (jax.experimental.sparse's
bcoo_reduce_sum, bcoo_squeeze, bcoo_rev, bcoo_reshape, bcoo_concatenate,
bcoo_broadcast_in_dim, bcoo_multiply_dense, bcoo_multiply_sparse, bcoo_slice,
bcoo_dynamic_slice, bcoo_gather, bcoo_conv_general_dilated): JAX's algorithms, which act
on the data and indices buffers with jax.numpy and lax operations (no primitives of their
own), so their derivatives and batching follow from those."""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from pyjax._src.api.shapes import ShapeDtypeStruct, eval_shape, make_jaxpr
from pyjax._src.api.vmap import vmap
from pyjax._src.core.avals import ShapedArray
from pyjax._src.lax import convolution as lconv
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import indexing as lindexing
from pyjax._src.lax import slicing
from pyjax._src.lax.indexing import GatherScatterMode
from pyjax._src.lax import structural as lax
from pyjax._src.numpy import functional, indexing
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.sparse.bcoo import (
    BCOO, _bcoo_extract, _bcoo_sum_duplicates, _validate_bcoo, _validate_permutation,
    bcoo_transpose, bcoo_update_layout,
)
from pyjax._src.sparse.util import SparseInfo, nfold_vmap
from pyjax._src.util import canonicalize_axis


def _replace(tup, ind, val):
    return tuple(val if i == ind else t for i, t in enumerate(tup))


def bcoo_reduce_sum(mat, *, axes):
    """The sum of the BCOO array over `axes` (a BCOO array)."""
    data, indices, shape = _bcoo_reduce_sum(mat.data, mat.indices, shape=mat.shape, axes=axes)
    return BCOO((data, indices), shape=shape)


def _bcoo_reduce_sum(data, indices, *, shape, axes):
    axes = sorted({canonicalize_axis(a, len(shape)) for a in axes})
    n_batch, n_sparse, _, nse = _validate_bcoo(data, indices, shape)
    # dense dimensions: sum the data
    data = data.sum(tuple(ax - n_sparse + 1 for ax in axes if ax >= n_batch + n_sparse))
    if n_sparse:   # entries at out-of-bounds (padding) indices hold nothing
        fill_value = lax.expand_dims(
            jnp.array(shape[n_batch: n_batch + n_sparse], dtype=indices.dtype),
            tuple(range(indices.ndim - 1)))
        mask = (indices < fill_value).all(-1)
        if data.ndim > mask.ndim:
            mask = lax.expand_dims(mask, tuple(range(mask.ndim, data.ndim)))
        data = jnp.where(mask, data, 0)
    # sparse dimensions: drop their index column (the sum is implicit)
    sparse_idx = [i for i in range(n_sparse) if i + n_batch not in axes]
    if not sparse_idx:
        indices = jnp.zeros(_replace(indices.shape, n_batch + 1, 0), indices.dtype)
    else:
        indices = indices[..., np.array(sparse_idx)]
    # batch dimensions: fold into nse (broadcast batch dimensions first)
    batch_axes = {ax for ax in axes if ax < n_batch}
    for ax in batch_axes:
        if data.shape[ax] == 1:
            if indices.shape[ax] == 1:
                data = data * shape[ax]
            else:
                data = lax.broadcast_in_dim(data, _replace(data.shape, ax, shape[ax]),
                                            tuple(range(data.ndim)))
        elif indices.shape[ax] == 1:
            data = data.sum(ax)
    new_batch_dims = tuple(sorted(set(range(n_batch)) - batch_axes))
    new_batch_shape = tuple(data.shape[i] for i in new_batch_dims)
    new_nse = nse * math.prod([data.shape[i] for i in batch_axes])
    data = lax.reshape(data, (*new_batch_shape, new_nse, *data.shape[n_batch + 1:]),
                       (*new_batch_dims, *sorted(batch_axes), *range(n_batch, data.ndim)))
    indices = lax.reshape(indices, (*new_batch_shape, new_nse, *indices.shape[n_batch + 1:]),
                          (*new_batch_dims, *sorted(batch_axes),
                           *range(n_batch, indices.ndim)))
    out_shape = tuple(shape[i] for i in range(len(shape)) if i not in axes)
    return data, indices, out_shape


def bcoo_squeeze(arr, *, dimensions):
    """The BCOO array with the size-1 `dimensions` removed."""
    dimensions = tuple(canonicalize_axis(dim, arr.ndim) for dim in dimensions)
    if any(arr.shape[dim] != 1 for dim in dimensions):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                         f"one, got shape={arr.shape} and dimensions={dimensions}")
    batch_dims = tuple(d for d in dimensions if d < arr.n_batch)
    sparse_dims = np.array([i for i in range(arr.n_sparse)
                            if i + arr.n_batch not in dimensions], dtype=int)
    dense_dims = tuple(d - arr.n_sparse + 1 for d in dimensions
                       if d >= arr.n_batch + arr.n_sparse)
    data_out = lax.squeeze(arr.data, batch_dims + dense_dims)
    indices_out = lax.squeeze(arr.indices[..., sparse_dims], batch_dims)
    out_shape = tuple(s for i, s in enumerate(arr.shape) if i not in dimensions)
    return BCOO((data_out, indices_out), shape=out_shape,
                indices_sorted=arr.indices_sorted, unique_indices=arr.unique_indices)


def bcoo_rev(operand, dimensions):
    """The BCOO array reversed along `dimensions` (lax.rev)."""
    dimensions = [operator.index(d) for d in dimensions]
    if len(set(dimensions)) != len(dimensions) or not all(
            0 <= d < operand.ndim for d in dimensions):
        raise ValueError(f"rev dimensions must be unique and in range for an array of rank "
                         f"{operand.ndim}, got {dimensions}")
    n_batch, n_sparse = operand.n_batch, operand.n_sparse
    batch_dims = [d for d in dimensions if d < n_batch]
    sparse_dims = [d for d in dimensions if n_batch <= d < n_batch + n_sparse]
    dense_dims = [d for d in dimensions if d >= n_batch + n_sparse]
    data, indices = operand.data, operand.indices
    if batch_dims:
        indices = lax.rev(indices, tuple(batch_dims))
    if batch_dims or dense_dims:
        data = lax.rev(data, tuple(batch_dims + [d + 1 - n_sparse for d in dense_dims]))
    if sparse_dims:
        sparse_shape = jnp.array(operand.shape[n_batch: n_batch + n_sparse],
                                 dtype=indices.dtype)
        spdims = np.array([d - n_batch for d in sparse_dims])
        indices = indices.at[..., spdims].mul(-1)
        indices = indices.at[..., spdims].add(sparse_shape[spdims] - 1)
        indices = jnp.where(indices < 0, sparse_shape, indices)
    return BCOO((data, indices), shape=operand.shape)


def bcoo_reshape(mat, *, new_sizes, dimensions=None, sharding=None):
    """The BCOO array reshaped to `new_sizes` (batch, sparse and dense dimensions must
    not mix), after permuting by `dimensions` if given (lax.reshape)."""
    if mat.indices.shape[:mat.n_batch] != mat.data.shape[:mat.n_batch] != \
            mat.shape[:mat.n_batch]:
        raise NotImplementedError("reshape of arrays with broadcasted batch dimensions.")
    new_sizes = tuple(operator.index(s) for s in new_sizes)
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    batch_shape = mat.shape[:n_batch]
    sparse_shape = mat.shape[n_batch:n_batch + n_sparse]
    batch_perm, sparse_perm, dense_perm = _validate_permutation(
        mat.data, mat.indices, dimensions or tuple(range(mat.ndim)), mat.shape)
    batch_size, sparse_size = math.prod(batch_shape), math.prod(sparse_shape)
    if math.prod(new_sizes) != math.prod(mat.shape):
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                        f"for shape {mat.shape}.")
    cuml_shape = np.cumprod(new_sizes)
    if batch_size != 1 and batch_size not in cuml_shape:
        raise ValueError("bcoo_reshape: new shape cannot mix batch and sparse dimensions; "
                         f"got shape={mat.shape} new_shape={new_sizes} with n_batch={n_batch}")
    if sparse_size != 1 and batch_size * sparse_size not in cuml_shape:
        raise ValueError("bcoo_reshape: new shape cannot mix sparse and dense dimensions; "
                         f"got shape={mat.shape} new_shape={new_sizes} with "
                         f"n_dense={mat.n_dense}")
    i1 = int(cuml_shape.searchsorted(batch_size, side="right"))
    i2 = int(cuml_shape.searchsorted(batch_size * sparse_size, side="right"))
    new_batch_shape, new_sparse_shape = new_sizes[:i1], new_sizes[i1:i2]
    new_dense_shape = new_sizes[i2:]
    # batch and dense dimensions: a plain reshape of the buffers
    data = lax.reshape(mat.data, (*new_batch_shape, mat.nse, *new_dense_shape),
                       (*batch_perm, n_batch, *(p + n_batch + 1 for p in dense_perm)))
    indices = lax.reshape(mat.indices, (*new_batch_shape, mat.nse, n_sparse),
                          (*batch_perm, n_batch, n_batch + 1))
    # sparse dimensions: re-index through the flat position
    if not new_sparse_shape:
        indices = jnp.zeros((*new_batch_shape, mat.nse, 0), indices.dtype)
    elif sparse_shape:
        index_cols = tuple(indices[..., i] for i in sparse_perm)
        perm_shape = tuple(int(mat.shape[n_batch + i]) for i in sparse_perm)
        flat = functional.ravel_multi_index(index_cols, dims=perm_shape, mode="clip")
        oob = (indices >= jnp.array(sparse_shape, dtype=indices.dtype)).any(-1, keepdims=True)
        new_cols = functional.unravel_index(flat, new_sparse_shape)
        indices = jnp.concatenate([col[..., None] for col in new_cols], axis=-1)
        indices = jnp.where(oob, jnp.array(new_sparse_shape, dtype=indices.dtype), indices)
    return BCOO((data, indices), shape=new_sizes)


def _bcoo_set_nse(mat, nse):
    """`mat` holding `nse` entries per batch (padding with out-of-bounds indices, or
    dropping the last ones)."""
    if mat.nse == nse:
        return mat
    nb = mat.n_batch
    if nse <= mat.nse:
        data = mat.data[(*(slice(None),) * nb, slice(nse))]
        indices = mat.indices[..., :nse, :]
    else:
        data = jnp.zeros((*mat.data.shape[:nb], nse, *mat.data.shape[nb + 1:]), mat.dtype)
        data = data.at[(*(slice(None),) * nb, slice(mat.nse))].set(mat.data)
        indices = jnp.zeros((*mat.indices.shape[:-2], nse, mat.indices.shape[-1]),
                            mat.indices.dtype)
        indices = indices.at[..., :mat.nse, :].set(mat.indices)
        indices = indices.at[..., mat.nse:, :].set(
            jnp.array(mat.shape[nb:nb + mat.n_sparse], dtype=indices.dtype))
    return BCOO((data, indices), shape=mat.shape, indices_sorted=mat.indices_sorted,
                unique_indices=mat.unique_indices)


def bcoo_concatenate(operands, *, dimension):
    """The BCOO arrays concatenated along `dimension` (a batch or sparse dimension, of
    arrays with the same batch and dense dimensions)."""
    dimension = operator.index(dimension)
    if not all(isinstance(op, BCOO) for op in operands):
        raise ValueError("bcoo_concatenate: expected operands to be a sequence of BCOO "
                         f"arrays. Got {operands}")
    out_aval = lax.concatenate_p.abstract_eval(
        *[ShapedArray(op.shape, op.dtype) for op in operands], dimension=dimension)
    if len({op.n_dense for op in operands}) > 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching nse dimensions.")
    if len({op.n_batch for op in operands}) != 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching batch "
                         "dimensions.")
    n_batch, n_sparse = operands[0].n_batch, operands[0].n_sparse
    index_batches = [op.indices.shape[:n_batch] for op in operands]
    data_batches = [op.data.shape[:n_batch] for op in operands]
    if dimension < n_batch:
        index_batches = [s[:dimension] + s[dimension + 1:] for s in index_batches]
        data_batches = [s[:dimension] + s[dimension + 1:] for s in data_batches]
    if not len(set(index_batches)) == len(set(data_batches)) == 1:
        raise NotImplementedError("concatenation of arrays with broadcasted batch indices")
    if dimension < n_batch:
        nse = max(op.nse for op in operands)
        operands = [_bcoo_set_nse(op, nse) for op in operands]
        new_indices = lax.concatenate([op.indices for op in operands], dimension)
        new_data = lax.concatenate([op.data for op in operands], dimension)
    elif dimension < n_batch + n_sparse:
        offsets = np.cumsum([0] + [op.shape[dimension] for op in operands[:-1]],
                            dtype=operands[0].indices.dtype)
        new_data = lax.concatenate([op.data for op in operands], n_batch)
        new_indices = lax.concatenate(
            [op.indices.at[..., dimension - n_batch].add(offset)
             for op, offset in zip(operands, offsets)], n_batch)
    else:
        raise NotImplementedError("Concatenation along dense dimensions.")
    return BCOO((new_data, new_indices), shape=out_aval.shape)


def bcoo_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None):
    """The BCOO array `mat` broadcast to `shape` (lax.broadcast_in_dim): new dimensions
    before its sparse ones are batch dimensions, new trailing ones dense (if it has
    dense dimensions) or sparse of size 1."""
    return BCOO(_bcoo_broadcast_in_dim(mat.data, mat.indices, spinfo_shape=mat.shape,
                                       shape=shape,
                                       broadcast_dimensions=broadcast_dimensions),
                shape=shape)


def _bcoo_broadcast_in_dim(data, indices, *, spinfo_shape, shape, broadcast_dimensions):
    shape, broadcast_dimensions = tuple(shape), tuple(broadcast_dimensions)
    if len(spinfo_shape) != len(broadcast_dimensions):
        raise ValueError(f"spinfo.shape={tuple(spinfo_shape)} and "
                         f"broadcast_dimensions={broadcast_dimensions} must have the same "
                         "length")
    n_batch, n_sparse, n_dense, nse = _validate_bcoo(data, indices, spinfo_shape)
    batch_dims = broadcast_dimensions[:n_batch]
    sparse_dims = broadcast_dimensions[n_batch:n_batch + n_sparse]
    dense_dims = broadcast_dimensions[n_batch + n_sparse:]
    if max(batch_dims, default=0) > min(sparse_dims, default=len(shape)):
        raise ValueError("Cannot mix batch and sparse dimensions during broadcast_in_dim")
    if max(sparse_dims, default=0) > min(dense_dims, default=len(shape)):
        raise ValueError("Cannot mix sparse and dense dimensions during broadcast_in_dim")
    new_n_batch = min(broadcast_dimensions[n_batch:], default=len(shape))
    new_n_dense = n_dense and len(shape) - min(broadcast_dimensions[-n_dense:])
    new_n_sparse = len(shape) - new_n_batch - new_n_dense
    if (math.prod(spinfo_shape[n_batch:n_batch + n_sparse])
            != math.prod(shape[new_n_batch:new_n_batch + new_n_sparse])):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    if (new_n_batch, new_n_dense) != (n_batch, n_dense):
        data = lax.broadcast_in_dim(
            data, (*shape[:new_n_batch], nse, *shape[new_n_batch + new_n_sparse:]),
            (*batch_dims, new_n_batch, *(d + 1 - new_n_sparse for d in dense_dims)))
        indices = lax.broadcast_in_dim(
            indices, (*shape[:new_n_batch], nse, n_sparse),
            (*batch_dims, new_n_batch, new_n_batch + 1))
    if new_n_sparse != n_sparse:
        columns = np.array(sparse_dims, int) - new_n_batch
        indices = jnp.zeros((*shape[:new_n_batch], nse, new_n_sparse),
                            indices.dtype).at[..., columns].set(indices)
    return data, indices


def bcoo_multiply_dense(sp_mat, v):
    """The stored entries of the BCOO array `sp_mat` times the dense array `v` (which
    broadcasts to sp_mat's shape): the data of the product, on sp_mat's indices."""
    data, indices, shape = sp_mat.data, sp_mat.indices, sp_mat.shape
    v = jnp.asarray(v)
    if v.ndim == 0:
        return ew.mul(data, v)
    if shape == v.shape:   # by distributivity, duplicate indices need no summing
        return ew.mul(data, _bcoo_extract(indices, v))
    if jnp.broadcast_shapes(v.shape, shape) != shape:
        raise NotImplementedError(
            "multiplication between sparse and dense is only implemented for cases where "
            f"the output shape matches the sparse matrix shape. Got shape={shape}, "
            f"v.shape={v.shape}")
    v = lax.expand_dims(v, tuple(range(len(shape) - v.ndim)))
    n_batch, _, n_dense, _ = _validate_bcoo(data, indices, shape)

    def mul(data, indices, v):
        ind = tuple(indices[:, i] for i in range(indices.shape[1]))
        ind = tuple(i if s != 1 else 0 for i, s in zip(ind, v.shape))
        return data * v[ind]
    return nfold_vmap(mul, n_batch)(data, indices, v)


def bcoo_multiply_sparse(lhs, rhs):
    """The elementwise product of two BCOO arrays (of the same rank and dense
    dimensions, their shapes broadcasting)."""
    if lhs.ndim != rhs.ndim:
        raise TypeError("bcoo_multiply_sparse: arrays must have same number of dimensions, "
                        f"got {lhs.shape}, {rhs.shape}")
    if lhs.n_dense != rhs.n_dense:
        raise NotImplementedError("bcoo_multiply_sparse: arrays with differing numbers of "
                                  f"dense dimensions: {lhs}, {rhs}")
    n_batch = min(lhs.n_batch, rhs.n_batch)
    mul = functools.partial(_bcoo_multiply_sparse_unbatched, lhs_shape=lhs.shape[n_batch:],
                            rhs_shape=rhs.shape[n_batch:])
    data, indices = nfold_vmap(mul, n_batch)(lhs.data, lhs.indices, rhs.data, rhs.indices)
    return BCOO((data, indices), shape=jnp.broadcast_shapes(lhs.shape, rhs.shape))


def _bcoo_multiply_sparse_unbatched(lhs_data, lhs_indices, rhs_data, rhs_indices, *,
                                    lhs_shape, rhs_shape):
    lhs = _validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    rhs = _validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    # the operand with more batch dimensions: as plain sparse ones
    if lhs.n_batch:
        lhs_data, lhs_indices = bcoo_update_layout(
            BCOO((lhs_data, lhs_indices), shape=lhs_shape), n_batch=0)._bufs
        lhs = _validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    elif rhs.n_batch:
        rhs_data, rhs_indices = bcoo_update_layout(
            BCOO((rhs_data, rhs_indices), shape=rhs_shape), n_batch=0)._bufs
        rhs = _validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    dims = np.array([i for i, (s1, s2) in enumerate(zip(lhs_shape[:lhs.n_sparse],
                                                        rhs_shape[:rhs.n_sparse]))
                     if s1 != 1 and s2 != 1], dtype=int)
    nse = lhs.nse * rhs.nse
    # every pair of entries at the same index (in the dimensions neither broadcasts)
    mask = (lhs_indices[:, None, dims] == rhs_indices[None, :, dims]).all(-1)
    i_lhs, i_rhs = indexing.nonzero(mask, size=nse, fill_value=(lhs.nse, rhs.nse))
    data = (lhs_data.at[i_lhs].get(mode="fill", fill_value=0)
            * rhs_data.at[i_rhs].get(mode="fill", fill_value=0))
    indices = ew.max(
        lhs_indices.at[i_lhs].get(mode="fill", fill_value=max(lhs_shape, default=0)),
        rhs_indices.at[i_rhs].get(mode="fill", fill_value=max(rhs_shape, default=0)))
    return data, indices


def _keep_in_window(mat, new_data, new_indices, new_shape, in_window, new_index, out_index):
    """The sliced buffers with entries outside the window moved out of bounds (their data
    zeroed), and duplicates summed when the window holds fewer positions than nse."""
    n_batch, n_sparse, n_dense = mat.n_batch, mat.n_sparse, mat.n_dense
    keep = in_window.all(-1, keepdims=True)
    new_indices = jnp.where(keep, new_index, out_index)
    keep_data = lax.expand_dims(keep[..., 0],
                                tuple(range(n_batch + 1, n_batch + 1 + n_dense)))
    new_data = jnp.where(keep_data, new_data, 0)
    new_nse = math.prod(new_shape[n_batch:n_batch + n_sparse])
    if mat.nse > new_nse:
        new_data, new_indices = _bcoo_sum_duplicates(
            new_data, new_indices, spinfo=SparseInfo(shape=tuple(new_shape)), nse=new_nse)
    return new_data, new_indices


def bcoo_slice(mat, *, start_indices, limit_indices, strides=None):
    """lax.slice of a BCOO array: batch and dense dimensions slice their buffers, sparse
    ones keep the entries in the window (re-indexed)."""
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}")
    start_indices = [operator.index(i) for i in start_indices]
    limit_indices = [operator.index(i) for i in limit_indices]
    strides = [1] * mat.ndim if strides is None else [operator.index(i) for i in strides]
    if len(start_indices) != mat.ndim or len(limit_indices) != mat.ndim:
        raise ValueError(f"bcoo_slice: indices must have size mat.ndim={mat.ndim}")
    if len(strides) != mat.ndim:
        raise ValueError(f"len(strides) = {len(strides)}; expected {mat.ndim}")
    if any(s <= 0 for s in strides):
        raise ValueError(f"strides must be a sequence of positive integers; got {strides}")
    if not all(0 <= start <= end <= size
               for start, end, size in zip(start_indices, limit_indices, mat.shape)):
        raise ValueError(f"bcoo_slice: invalid indices. Got start_indices={start_indices}, "
                         f"limit_indices={limit_indices} and shape={mat.shape}")
    nb, ns = mat.n_batch, mat.n_sparse
    data_slices, index_slices = [], []
    for i in range(nb):
        window = slice(start_indices[i], limit_indices[i], strides[i])
        data_slices.append(slice(None) if mat.data.shape[i] != mat.shape[i] else window)
        index_slices.append(slice(None) if mat.indices.shape[i] != mat.shape[i] else window)
    data_slices.append(slice(None))
    index_slices.extend([slice(None), slice(None)])
    data_slices.extend(slice(*w) for w in zip(start_indices[nb + ns:],
                                              limit_indices[nb + ns:], strides[nb + ns:]))
    new_data = mat.data[tuple(data_slices)]
    new_indices = mat.indices[tuple(index_slices)]
    new_shape = tuple((end - start + stride - 1) // stride
                      for start, end, stride in zip(start_indices, limit_indices, strides))
    if ns:
        dtype = new_indices.dtype
        expand = tuple(range(nb + 1))
        starts = lax.expand_dims(jnp.array(start_indices[nb:nb + ns], dtype), expand)
        ends = lax.expand_dims(jnp.array(limit_indices[nb:nb + ns], dtype), expand)
        steps = lax.expand_dims(jnp.array(strides[nb:nb + ns], dtype), expand)
        in_window = ((new_indices >= starts) & (new_indices < ends)
                     & ((new_indices - starts) % steps == 0))
        new_data, new_indices = _keep_in_window(
            mat, new_data, new_indices, new_shape, in_window,
            (new_indices - starts + steps - 1) // steps, (ends - starts + steps - 1) // steps)
    return BCOO((new_data, new_indices), shape=new_shape)


def bcoo_dynamic_slice(mat, start_indices, slice_sizes):
    """lax.dynamic_slice of a BCOO array (start indices may be traced; starts are clamped
    so the slice fits, as lax.dynamic_slice's)."""
    slice_sizes = tuple(operator.index(i) for i in slice_sizes)
    eval_shape(lambda x, s: slicing.dynamic_slice(x, s, slice_sizes),
               ShapeDtypeStruct(mat.shape, mat.dtype), start_indices)
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}")
    start_indices = tuple(jnp.asarray(i) for i in start_indices)
    if not all(0 <= size <= axis for size, axis in zip(slice_sizes, mat.shape)):
        raise TypeError("slice_sizes must be less than or equal to operand shape, "
                        f"got slice_sizes {slice_sizes} for operand shape {mat.shape}")
    nb, ns = mat.n_batch, mat.n_sparse
    zero = jnp.zeros((), start_indices[0].dtype if start_indices else np.int32)
    data_start, data_sizes, indices_start, indices_sizes = [], [], [], []
    for i in range(nb):
        data_bcast = mat.data.shape[i] != mat.shape[i]
        indices_bcast = mat.indices.shape[i] != mat.shape[i]
        data_start.append(zero if data_bcast else start_indices[i])
        data_sizes.append(1 if data_bcast else slice_sizes[i])
        indices_start.append(zero if indices_bcast else start_indices[i])
        indices_sizes.append(1 if indices_bcast else slice_sizes[i])
    data_start.append(zero)
    data_sizes.append(mat.nse)
    indices_start.extend([zero, zero])
    indices_sizes.extend([mat.nse, ns])
    data_start.extend(start_indices[nb + ns:])
    data_sizes.extend(slice_sizes[nb + ns:])
    new_data = slicing.dynamic_slice(mat.data, data_start, data_sizes)
    new_indices = slicing.dynamic_slice(mat.indices, indices_start, indices_sizes)
    if ns:
        dtype = new_indices.dtype
        starts = jnp.array(start_indices[nb:nb + ns], dtype)
        sizes = jnp.array(slice_sizes[nb:nb + ns], dtype)
        sparse_shape = jnp.array(mat.shape[nb:nb + ns], dtype)
        starts = jnp.where(starts < 0, starts + sparse_shape, starts)
        starts = jnp.clip(starts, 0, sparse_shape - sizes)
        expand = tuple(range(nb + 1))
        starts, sizes = lax.expand_dims(starts, expand), lax.expand_dims(sizes, expand)
        in_window = (new_indices >= starts) & (new_indices < starts + sizes)
        new_data, new_indices = _keep_in_window(mat, new_data, new_indices, slice_sizes,
                                                in_window, new_indices - starts, sizes)
    return BCOO((new_data, new_indices), shape=slice_sizes)


def bcoo_gather(operand, start_indices, dimension_numbers, slice_sizes, *,
                unique_indices=False, indices_are_sorted=False, mode=None, fill_value=None):
    """lax.gather of a BCOO operand (a BCOO result): a bcoo_dynamic_slice per index,
    vmapped, then reshaped and permuted as gather's dimension numbers say."""
    _validate_bcoo(operand.data, operand.indices, operand.shape)
    if mode is None:
        mode = GatherScatterMode.PROMISE_IN_BOUNDS
    if GatherScatterMode.from_any(mode) != GatherScatterMode.PROMISE_IN_BOUNDS:
        raise NotImplementedError(f"bcoo_gather: mode={mode} not yet supported.")
    start_indices = jnp.asarray(start_indices)
    out_shape = eval_shape(
        lambda x, i: lindexing.gather(
            x, i, dimension_numbers=dimension_numbers, slice_sizes=slice_sizes,
            unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, mode=mode,
            fill_value=fill_value),
        ShapeDtypeStruct(operand.shape, operand.dtype),
        ShapeDtypeStruct(start_indices.shape, start_indices.dtype)).shape
    offset_dims = tuple(dimension_numbers.offset_dims)
    # every dimension's start (0 where gather does not index it) and slice size
    full_start_indices = [jnp.zeros((), start_indices.dtype)] * operand.ndim
    in_axes = [None] * operand.ndim
    full_slice_sizes = list(slice_sizes)
    for i, j in enumerate(dimension_numbers.start_index_map):
        full_start_indices[j] = start_indices[..., i].ravel()
        in_axes[j] = 0

    def slice_func(indices):
        slc = bcoo_dynamic_slice(operand, indices, slice_sizes=full_slice_sizes)
        return bcoo_squeeze(slc, dimensions=dimension_numbers.collapsed_slice_dims)
    result = vmap(slice_func, in_axes=(in_axes,))(full_start_indices)
    result = bcoo_reshape(result, new_sizes=(*start_indices.shape[:-1], *result.shape[1:]),
                          dimensions=tuple(range(result.ndim)))
    if result.shape:   # offset dimensions where gather puts them
        batch_dims = tuple(d for d in range(len(out_shape)) if d not in offset_dims)
        permutation = np.zeros(result.ndim, dtype=int)
        permutation[np.array(batch_dims + offset_dims)] = np.arange(result.ndim)
        if set(permutation[:len(batch_dims)]) != set(range(len(batch_dims))):
            result = bcoo_update_layout(result, n_batch=0)
        result = bcoo_transpose(result, permutation=tuple(int(p) for p in permutation))
    return bcoo_reshape(result, new_sizes=out_shape)


def bcoo_conv_general_dilated(lhs, rhs, *, window_strides, padding, lhs_dilation=None,
                              rhs_dilation=None, dimension_numbers=None,
                              feature_group_count=1, batch_group_count=1, precision=None,
                              preferred_element_type=None, out_sharding=None):
    """lax.conv_general_dilated where an operand is BCOO (a BCOO result): JAX supports
    one-dimensional convolutions of one batch and one feature, unit strides and
    dilations."""
    func = functools.partial(
        lconv.conv_general_dilated, window_strides=window_strides, padding=padding,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count, precision=precision,
        preferred_element_type=preferred_element_type, out_sharding=out_sharding)
    jaxpr = make_jaxpr(func)(ShapeDtypeStruct(lhs.shape, lhs.dtype),
                             ShapeDtypeStruct(rhs.shape, rhs.dtype))
    params = jaxpr.eqns[0].params   # the normalized parameters
    if params["lhs_dilation"] != (1,) * (lhs.ndim - 2):
        raise NotImplementedError("bcoo convolution with lhs_dilation.")
    if params["rhs_dilation"] != (1,) * (rhs.ndim - 2):
        raise NotImplementedError("bcoo convolution with lhs_dilation.")
    if params["window_strides"] != (1,) * (lhs.ndim - 2):
        raise NotImplementedError("bcoo convolution with non-unit window_strides.")
    if params["batch_group_count"] != 1 or params["feature_group_count"] != 1:
        raise NotImplementedError("bcoo convolution with non-unit group counts.")
    if lhs.shape[:2] != (1, 1) or rhs.shape[:2] != (1, 1):
        raise NotImplementedError("bcoo convolution with leading dimensions other than "
                                  "(1, 1)")
    index_dtype = (lhs.indices.dtype if isinstance(lhs, BCOO)
                   else rhs.indices.dtype if isinstance(rhs, BCOO) else np.dtype("int32"))
    (pad,) = params["padding"]
    return _bcoo_conv_1d(_convert_to_1d_for_conv(lhs, index_dtype),
                         _convert_to_1d_for_conv(rhs, index_dtype), padding=pad)


def _convert_to_1d_for_conv(mat, index_dtype):
    if isinstance(mat, BCOO):
        mat = bcoo_update_layout(mat, n_batch=2, n_dense=0)
        data = lax.squeeze(mat.data, (0, 1))
        indices = lax.squeeze(mat.indices, (0, 1))
        # out-of-bounds (padding) entries hold nothing
        data = jnp.where(lax.squeeze(indices, (1,)) < mat.shape[-1], data, 0)
    else:
        mat = jnp.asarray(mat)
        data = lax.squeeze(mat, (0, 1))
        indices = lax.broadcasted_iota(index_dtype, (len(data), 1), 0)
    return BCOO((data, indices), shape=mat.shape[2:])


def _bcoo_conv_1d(lhs, rhs, padding):
    padding = tuple(map(int, padding))
    new_data = (lhs.data[:, None] * rhs.data[None, :]).ravel()
    offset = padding[0] - rhs.indices
    new_indices = (lhs.indices[:, None] + offset[None, :]).ravel()
    mask = new_indices < 0
    new_indices = jnp.where(mask, 0, new_indices)
    new_data = jnp.where(mask, 0, new_data)
    dimsize = max(0, lhs.shape[0] + padding[0] + padding[1] - rhs.shape[0] + 1)
    new_data = lax.expand_dims(new_data, (0, 1))
    new_indices = lax.expand_dims(new_indices, (0, 1, 3))
    return BCOO((new_data, new_indices), shape=(1, 1, dimsize))
