"""jax.experimental.sparse.random_bcoo: a random BCOO array, its data from a jax.random
generator and its indices drawn with jax.random.choice per batch (JAX's algorithm, so
the same key gives JAX's array)."""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax._src import dtypes
from pyjax._src.api.vmap import vmap
from pyjax._src.numpy import functional
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.random import distributions, keys
from pyjax._src.sparse.bcoo import BCOO


def random_bcoo(key, shape, *, dtype=np.float64, indices_dtype=None, nse=0.2, n_batch=0,
                n_dense=0, unique_indices=True, sorted_indices=False,
                generator=distributions.uniform, **kwds):
    """A random BCOO array of `shape` with `nse` stored elements per batch (a fraction of
    the sparse size if 0 < nse < 1), values from `generator(key, shape=, dtype=)`."""
    shape = tuple(map(operator.index, shape))
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for shape={shape}")
    n_sparse = len(shape) - n_batch - n_dense
    batch_shape = shape[:n_batch]
    sparse_shape = shape[n_batch:n_batch + n_sparse]
    dense_shape = shape[n_batch + n_sparse:]
    batch_size, sparse_size = math.prod(batch_shape), math.prod(sparse_shape)
    if not 0 <= nse < sparse_size:
        raise ValueError(f"got nse={nse}, expected to be between 0 and {sparse_size}")
    if 0 < nse < 1:
        nse = int(math.ceil(nse * sparse_size))
    nse = operator.index(nse)
    data_shape = batch_shape + (nse,) + dense_shape
    indices_shape = batch_shape + (nse, n_sparse)
    if indices_dtype is None:
        indices_dtype = dtypes.default_int_dtype()
    if sparse_size > np.iinfo(indices_dtype).max:
        raise ValueError(f"indices_dtype={indices_dtype} does not have enough range to "
                         f"generate sparse indices of size {sparse_size}.")

    @vmap
    def _indices(key):
        if not sparse_shape:
            return jnp.zeros((nse, n_sparse), dtype=indices_dtype)
        flat_ind = distributions.choice(key, sparse_size, shape=(nse,),
                                        replace=not unique_indices).astype(indices_dtype)
        return jnp.column_stack(functional.unravel_index(flat_ind, sparse_shape))

    split = keys.split(key, batch_size + 1)
    data = generator(split[0], shape=data_shape, dtype=dtype, **kwds)
    indices = _indices(split[1:]).reshape(indices_shape)
    mat = BCOO((data, indices), shape=shape)
    return mat.sort_indices() if sorted_indices else mat
