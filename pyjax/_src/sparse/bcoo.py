"""BCOO, JAX's batched-coordinate sparse matrix, for the un-batched two-dimensional case
that libraries build from SciPy matrices (numpyro's CAR distribution): stored entries
`data[i]` at `indices[i] = (row, col)`; products with dense arrays gather and scatter-add
over the stored entries only. A pytree (data and indices are leaves), so it passes through
jit, grad and vmap. Imports jnp and tree_util."""
from __future__ import annotations

import numpy as np

from pyjax._src import tree_util
from pyjax._src.numpy import lax_numpy as jnp


class BCOO:
    """A 2-D sparse matrix of `shape` with entries `data` at `indices` (nse x 2)."""

    def __init__(self, args, *, shape):
        data, indices = args
        shape = tuple(int(d) for d in shape)
        if len(shape) != 2 or np.ndim(indices) != 2 or np.shape(indices)[1] != 2 \
                or np.shape(data) != np.shape(indices)[:1]:
            raise ValueError(
                f"BCOO: pyjax supports 2-D matrices with data of shape (nse,) and indices "
                f"of shape (nse, 2); got shape={shape}, data {np.shape(data)}, indices "
                f"{np.shape(indices)}.")
        self.data, self.indices, self.shape = data, indices, shape

    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: len(self.shape))
    nse = property(lambda self: self.indices.shape[0])

    @classmethod
    def fromdense(cls, mat, *, index_dtype=np.int32):
        mat = np.asarray(mat)
        rows, cols = np.nonzero(mat)
        indices = np.stack([rows, cols], axis=1).astype(index_dtype)
        return cls((jnp.asarray(mat[rows, cols]), jnp.asarray(indices)), shape=mat.shape)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=np.int32):
        coo = mat.tocoo()
        indices = np.stack([coo.row, coo.col], axis=1).astype(index_dtype)
        return cls((jnp.asarray(coo.data), jnp.asarray(indices)), shape=coo.shape)

    def todense(self):
        rows, cols = self.indices[:, 0], self.indices[:, 1]
        return jnp.zeros(self.shape, self.dtype).at[rows, cols].add(self.data)

    @property
    def T(self):
        return BCOO((self.data, self.indices[:, ::-1]), shape=self.shape[::-1])

    def transpose(self, axes=None):
        if axes is not None and tuple(axes) != (1, 0):
            raise ValueError(f"BCOO.transpose: axes must be None or (1, 0), got {axes}")
        return self.T

    def __matmul__(self, other):
        """Sparse (m, n) @ dense (n,) or (n, k): each stored entry adds data * other[col]
        to row `row` of the result."""
        other = jnp.asarray(other)
        if other.ndim not in (1, 2) or other.shape[0] != self.shape[1]:
            raise TypeError(f"BCOO @ dense: cannot multiply a {self.shape} matrix by an "
                            f"array of shape {other.shape}")
        rows, cols = self.indices[:, 0], self.indices[:, 1]
        contrib = other[cols]
        data = self.data.reshape((-1,) + (1,) * (other.ndim - 1))
        out = jnp.zeros((self.shape[0],) + other.shape[1:], jnp.result_type(self.dtype, other))
        return out.at[rows].add(data * contrib)

    def __mul__(self, other):
        """Elementwise product with a scalar or a dense array broadcastable to the shape:
        only the stored entries change, so the result is sparse."""
        other = jnp.asarray(other)
        if other.ndim == 0:
            return BCOO((self.data * other, self.indices), shape=self.shape)
        dense = jnp.broadcast_to(other, self.shape)
        return BCOO((self.data * dense[self.indices[:, 0], self.indices[:, 1]], self.indices),
                    shape=self.shape)

    __rmul__ = __mul__

    def __repr__(self):
        return f"BCOO({self.dtype.name}{list(self.shape)}, nse={self.nse})"


def bcoo_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """lax.dot_general of a BCOO matrix and a dense array, for the products pyjax's
    2-D BCOO holds: one lhs dimension contracted with the rhs's first, no batch
    dimensions (the stored entries are multiplied exactly, so precision does not
    apply)."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    if not isinstance(lhs, BCOO) or isinstance(rhs, BCOO) or lhs_batch or rhs_batch \
            or len(lhs_contract) != 1 or tuple(rhs_contract) != (0,):
        raise NotImplementedError(
            f"bcoo_dot_general: pyjax multiplies a BCOO lhs by a dense rhs, contracting "
            f"one lhs dimension with the rhs's first and no batch dimensions; got "
            f"{type(lhs).__name__} and {type(rhs).__name__} with dimension_numbers "
            f"{dimension_numbers}")
    out = (lhs if lhs_contract[0] == 1 else lhs.T) @ rhs
    return out if preferred_element_type is None else out.astype(preferred_element_type)


tree_util.register_pytree_node(
    BCOO, lambda m: ((m.data, m.indices), m.shape),
    lambda shape, children: BCOO(tuple(children), shape=shape))
