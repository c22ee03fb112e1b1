"""jax.experimental.sparse.util: the sparse warnings and errors, SparseInfo, and the index
conversions and stored-element counts the formats share. Built from jax.numpy."""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from pyjax._src import tree_util
from pyjax._src.api.vmap import vmap
from pyjax._src.lax import structural
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.numpy import reductions


class SparseEfficiencyError(ValueError):
    pass


class SparseEfficiencyWarning(UserWarning):
    pass


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    pass


# The data and index dtypes of JAX's cuSPARSE/hipSPARSE lowerings (its sparse._lowerings);
# pyjax compiles for CPU, where every sparse primitive lowers through jax.numpy.
SUPPORTED_DATA_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
SUPPORTED_INDEX_DTYPES = [np.int32]


class SparseInfo(NamedTuple):
    shape: tuple[int, ...]
    indices_sorted: bool = False
    unique_indices: bool = False


def _csr_to_coo(indices, indptr):
    """Given CSR (indices, indptr) return COO (row, col)."""
    indices, indptr = jnp.asarray(indices), jnp.asarray(indptr)
    return reductions.cumsum(jnp.zeros_like(indices).at[indptr].add(1)) - 1, indices


def _coo_extract(row, col, mat):
    """The values of the dense matrix `mat` at COO indices (row, col)."""
    return jnp.asarray(mat)[row, col]


def _csr_extract(indices, indptr, mat):
    """The values of the dense matrix `mat` at CSR indices."""
    row, col = _csr_to_coo(indices, indptr)
    return _coo_extract(row, col, mat)


def _count_stored_elements_per_batch(mat, n_batch=0, n_dense=0):
    """The number of stored elements (nse) of each batch of the dense array `mat`."""
    mask = jnp.asarray(mat) != 0
    if n_dense > 0:
        mask = mask.any(tuple(-(i + 1) for i in range(n_dense)))
    return mask.sum(tuple(range(n_batch, mask.ndim)))


def _count_stored_elements(mat, n_batch=0, n_dense=0):
    """The number of stored elements (nse) the dense array `mat` needs."""
    return _count_stored_elements_per_batch(mat, n_batch, n_dense).max(initial=0)


def nfold_vmap(fun, N, *, broadcasted=True, in_axes=0):
    """`fun` vmapped N times (with broadcasting_vmap: size-1 axes broadcast)."""
    for _ in range(N):
        fun = (broadcasting_vmap if broadcasted else vmap)(fun, in_axes=in_axes)
    return fun


def broadcasting_vmap(fun, in_axes=0, out_axes=0):
    """vmap, where a mapped argument whose axis has size 1 is broadcast (unmapped)."""
    @functools.wraps(fun)
    def batched_fun(*args):
        args_flat, in_tree = tree_util.tree_flatten(args)
        axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
        in_axes_flat = [a for arg, axis in zip(args, axes)
                        for a in [axis] * len(tree_util.tree_leaves(arg))]
        size = max(arg.shape[i] for arg, i in zip(args_flat, in_axes_flat) if i is not None)
        if size > 1:
            if any(i is not None and arg.shape[i] not in (1, size)
                   for arg, i in zip(args_flat, in_axes_flat)):
                raise ValueError("broadcasting_vmap: mismatched input shapes")
            args_flat, in_axes_flat = map(list, zip(*(
                (arg, None) if i is None else
                (structural.squeeze(arg, (i,)), None) if arg.shape[i] == 1 else (arg, i)
                for arg, i in zip(args_flat, in_axes_flat))))
        new_args = tree_util.tree_unflatten(in_tree, args_flat)
        new_axes = tree_util.tree_unflatten(in_tree, in_axes_flat)
        return vmap(fun, in_axes=new_axes, out_axes=out_axes)(*new_args)
    return batched_fun


def remaining(original, *removed_lists):
    """The items of `original` in none of `removed_lists`, in order."""
    removed = set().union(*removed_lists)
    return [i for i in original if i not in removed]
