"""jax.flatten_util.ravel_pytree: a pytree of arrays as one flat vector and back."""
from __future__ import annotations

import numpy as np

from pyjax._src import tree_util
from pyjax._src.numpy import lax_numpy as jnp


def ravel_pytree(pytree):
    """(flat, unravel): the leaves of `pytree` raveled and concatenated into one 1-D
    array of their promoted dtype, and the function that splits such a vector back into
    the pytree, each leaf in its own shape and dtype. Differentiable both ways."""
    leaves, treedef = tree_util.tree_flatten(pytree)
    arrays = [jnp.asarray(x) for x in leaves]
    dtype = jnp.result_type(*arrays) if arrays else np.dtype(np.float32)
    shapes = [a.shape for a in arrays]
    dtypes = [a.dtype for a in arrays]
    ends = np.cumsum([int(np.prod(s)) for s in shapes]).tolist()
    total = ends[-1] if ends else 0
    flat = (jnp.concatenate([jnp.ravel(a if a.dtype == dtype else a.astype(dtype))
                             for a in arrays]) if arrays else jnp.zeros(0, dtype))

    def unravel(vector):
        vector = jnp.asarray(vector)
        if vector.shape != (total,):
            raise ValueError(f"unravel: expected a flat array of shape ({total},) (what "
                             f"ravel_pytree returned), got shape {vector.shape}")
        if vector.dtype != dtype:
            raise TypeError(f"unravel function given array of dtype {vector.dtype}, but "
                            f"expected dtype {dtype}")
        starts = [0] + ends[:-1]
        parts = [vector[start:end].reshape(shape).astype(leaf_dtype)
                 for start, end, shape, leaf_dtype in zip(starts, ends, shapes, dtypes)]
        return tree_util.tree_unflatten(treedef, parts)

    return flat, unravel
