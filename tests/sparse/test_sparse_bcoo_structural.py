"""The structural operations of BCOO arrays (reduce_sum, rev, reshape, squeeze,
concatenate). Expected buffers are JAX 0.10.2's."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental import sparse

X = (jnp.arange(24.).reshape(2, 3, 4) % 5) * (jnp.arange(24).reshape(2, 3, 4) % 3 == 0)
M = sparse.BCOO.fromdense(X, n_batch=1)


def _check(mat, text, data, indices):
    assert repr(mat) == text
    assert np.asarray(mat.data).tolist() == data
    assert np.asarray(mat.indices).tolist() == indices


@pytest.mark.parametrize("op, text, data, indices", [
    (lambda: sparse.bcoo_reduce_sum(M, axes=(0, 2)), "BCOO(float32[3], nse=6)",
     [3.0, 1.0, 4.0, 2.0, 3.0, 1.0], [[0], [1], [2], [0], [1], [2]]),
    (lambda: sparse.bcoo_rev(M, dimensions=(0, 2)), "BCOO(float32[2, 3, 4], nse=3, n_batch=1)",
     [[2.0, 3.0, 1.0], [3.0, 1.0, 4.0]], [[[0, 3], [1, 1], [2, 2]], [[0, 0], [1, 1], [2, 2]]]),
    (lambda: sparse.bcoo_reshape(M, new_sizes=(2, 12)), "BCOO(float32[2, 12], nse=3, n_batch=1)",
     [[3.0, 1.0, 4.0], [2.0, 3.0, 1.0]], [[[3], [6], [9]], [[0], [6], [9]]]),
    (lambda: sparse.bcoo_squeeze(sparse.BCOO.fromdense(X[:, :1]), dimensions=(1,)),
     "BCOO(float32[2, 4], nse=2)", [3.0, 2.0], [[0, 3], [1, 0]]),
    (lambda: sparse.bcoo_concatenate([M, sparse.BCOO.fromdense(X[:1], n_batch=1)],
                                     dimension=0),
     "BCOO(float32[3, 3, 4], nse=3, n_batch=1)",
     [[3.0, 1.0, 4.0], [2.0, 3.0, 1.0], [3.0, 1.0, 4.0]],
     [[[0, 3], [1, 2], [2, 1]], [[0, 0], [1, 2], [2, 1]], [[0, 3], [1, 2], [2, 1]]]),
    (lambda: sparse.bcoo_concatenate([M, M], dimension=2),
     "BCOO(float32[2, 3, 8], nse=6, n_batch=1)",
     [[3.0, 1.0, 4.0, 3.0, 1.0, 4.0], [2.0, 3.0, 1.0, 2.0, 3.0, 1.0]],
     [[[0, 3], [1, 2], [2, 1], [0, 7], [1, 6], [2, 5]],
      [[0, 0], [1, 2], [2, 1], [0, 4], [1, 6], [2, 5]]]),
])
def test_structural_ops_match_jax(op, text, data, indices):
    _check(op(), text, data, indices)


def test_reduce_sum_under_jit_matches_jax():
    np.testing.assert_array_equal(
        jax.jit(lambda m: sparse.bcoo_reduce_sum(m, axes=(1,)).todense())(M),
        [[0.0, 4.0, 1.0, 3.0], [2.0, 1.0, 3.0, 0.0]])


def test_structural_bad_input():
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out"):
        sparse.bcoo_squeeze(M, dimensions=(1,))
    with pytest.raises(ValueError, match="cannot mix batch and sparse dimensions"):
        sparse.bcoo_reshape(M, new_sizes=(3, 8))
    with pytest.raises(NotImplementedError, match="dense dimensions"):
        sparse.bcoo_concatenate([sparse.BCOO.fromdense(X, n_dense=1)] * 2, dimension=2)
