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


# duplicate indices ([0, 1] twice), an explicit zero, and an out-of-bounds (padding) index
DUP = sparse.BCOO((jnp.array([1., 2., 3., 0., 5.]),
                   jnp.array([[0, 1], [2, 0], [0, 1], [1, 1], [3, 3]])), shape=(3, 3))


@pytest.mark.parametrize("op, text, data, indices", [
    (lambda: sparse.bcoo_broadcast_in_dim(sparse.BCOO.fromdense(X[0]), shape=(3, 4, 1),
                                          broadcast_dimensions=(0, 1)),
     "BCOO(float32[3, 4, 1], nse=3)", [3.0, 1.0, 4.0], [[0, 3, 0], [1, 2, 0], [2, 1, 0]]),
    (lambda: sparse.bcoo_multiply_sparse(sparse.BCOO.fromdense(X[0]),
                                         sparse.BCOO.fromdense(X[0] + 1)),
     "BCOO(float32[3, 4], nse=36)", [12.0, 2.0, 20.0] + [0.0] * 33,
     [[0, 3], [1, 2], [2, 1]] + [[4, 4]] * 33),
    (lambda: sparse.bcoo_sum_duplicates(DUP), "BCOO(float32[3, 3], nse=3)",
     [4.0, 0.0, 2.0], [[0, 1], [1, 1], [2, 0]]),
    (lambda: DUP.sum_duplicates(nse=5, remove_zeros=False), "BCOO(float32[3, 3], nse=5)",
     [4.0, 0.0, 2.0, 5.0, 0.0], [[0, 1], [1, 1], [2, 0], [3, 3], [3, 3]]),
    (lambda: DUP.sum_duplicates(), "BCOO(float32[3, 3], nse=2)", [4.0, 2.0],
     [[0, 1], [2, 0]]),
    (lambda: jax.jit(lambda m: sparse.bcoo_sum_duplicates(m, nse=2))(DUP),
     "BCOO(float32[3, 3], nse=2)", [4.0, 0.0], [[0, 1], [1, 1]]),
])
def test_broadcast_multiply_sum_duplicates_match_jax(op, text, data, indices):
    _check(op(), text, data, indices)


def test_broadcast_in_dim_adds_batch_dimensions():
    out = sparse.bcoo_broadcast_in_dim(M, shape=(5, 2, 3, 4), broadcast_dimensions=(1, 2, 3))
    assert repr(out) == "BCOO(float32[5, 2, 3, 4], nse=3, n_batch=2)"
    assert np.asarray(out.data).tolist() == [[[3.0, 1.0, 4.0], [2.0, 3.0, 1.0]]] * 5
    assert np.asarray(out.indices).tolist() == [
        [[[0, 3], [1, 2], [2, 1]], [[0, 0], [1, 2], [2, 1]]]] * 5


def test_multiply_dense_gives_the_product_data():
    assert np.asarray(sparse.bcoo_multiply_dense(M, jnp.arange(4.))).tolist() == [
        [9.0, 2.0, 4.0], [0.0, 6.0, 1.0]]
    assert np.asarray(sparse.bcoo_multiply_dense(M, X)).tolist() == [
        [9.0, 1.0, 16.0], [4.0, 9.0, 1.0]]


def test_sum_duplicates_gradient_and_nse_under_jit():
    grad = jax.grad(lambda d: sparse.bcoo_sum_duplicates(
        sparse.BCOO((d, DUP.indices), shape=(3, 3)), nse=4).data[0] * 3)(DUP.data)
    assert np.asarray(grad).tolist() == [3.0, 0.0, 3.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="nse must be specified"):
        jax.jit(sparse.bcoo_sum_duplicates)(DUP)


M0 = sparse.BCOO.fromdense(X)
MD = sparse.BCOO.fromdense(X, n_dense=1)


@pytest.mark.parametrize("op, text, data, indices", [
    (lambda: sparse.bcoo_slice(M, start_indices=(0, 1, 1), limit_indices=(2, 3, 4)),
     "BCOO(float32[2, 2, 3], nse=3, n_batch=1)", [[0.0, 1.0, 4.0], [0.0, 3.0, 1.0]],
     [[[2, 3], [0, 1], [1, 0]], [[2, 3], [0, 1], [1, 0]]]),
    # strided, and fewer window positions than nse: duplicates are summed
    (lambda: sparse.bcoo_slice(M0, start_indices=(0, 0, 0), limit_indices=(2, 3, 4),
                               strides=(1, 2, 2)),
     "BCOO(float32[2, 2, 2], nse=6)", [0.0, 0.0, 0.0, 2.0, 0.0, 0.0],
     [[2, 2, 2], [2, 2, 2], [2, 2, 2], [1, 0, 0], [2, 2, 2], [2, 2, 2]]),
    (lambda: sparse.bcoo_slice(MD, start_indices=(1, 0, 1), limit_indices=(2, 2, 3)),
     "BCOO(float32[1, 2, 2], nse=2, n_dense=1)", [[0.0, 0.0], [0.0, 3.0]], [[0, 0], [0, 1]]),
    (lambda: sparse.bcoo_dynamic_slice(M, (1, 1, 1), (1, 2, 3)),
     "BCOO(float32[1, 2, 3], nse=3, n_batch=1)", [[0.0, 3.0, 1.0]],
     [[[2, 3], [0, 1], [1, 0]]]),
    # a negative start counts from the end, and starts are clamped
    (lambda: sparse.bcoo_dynamic_slice(M0, (0, 2, -1), (2, 1, 2)),
     "BCOO(float32[2, 1, 2], nse=4)", [0.0] * 4, [[2, 1, 2]] * 4),
    (lambda: jax.jit(lambda m, i: sparse.bcoo_dynamic_slice(m, (i, 0, 1), (1, 2, 2)))(MD, 1),
     "BCOO(float32[1, 2, 2], nse=2, n_dense=1)", [[0.0, 0.0], [0.0, 3.0]], [[0, 0], [0, 1]]),
])
def test_slices_match_jax(op, text, data, indices):
    _check(op(), text, data, indices)


_NINE = [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [2, 0], [2, 1], [2, 2]]


@pytest.mark.parametrize("op, text, data, indices", [
    (lambda: sparse.bcoo_dot_general(sparse.BCOO.fromdense(X[0]), sparse.BCOO.fromdense(X[1]),
                                     dimension_numbers=(((1,), (1,)), ((), ()))),
     "BCOO(float32[3, 3], nse=9)", [0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 4.0], _NINE),
    (lambda: sparse.bcoo_dot_general(sparse.BCOO.fromdense(X[0]),
                                     sparse.BCOO.fromdense(jnp.arange(4.)),
                                     dimension_numbers=(((1,), (0,)), ((), ()))),
     "BCOO(float32[3], nse=3)", [9.0, 2.0, 4.0], [[0], [1], [2]]),
    (lambda: sparse.bcoo_dot_general(M, M, dimension_numbers=(((2,), (2,)), ((0,), (0,)))),
     "BCOO(float32[2, 3, 3], nse=9, n_batch=1)",
     [[9.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 16.0],
      [4.0, 0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 1.0]], [_NINE, _NINE]),
    (lambda: sparse.bcoo_dot_general(M, sparse.BCOO.fromdense(X[1]),
                                     dimension_numbers=(((2,), (1,)), ((), ()))),
     "BCOO(float32[2, 3, 3], nse=9, n_batch=1)",
     [[0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 4.0],
      [4.0, 0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 1.0]], [_NINE, _NINE]),
])
def test_sparse_sparse_dot_general_matches_jax(op, text, data, indices):
    _check(op(), text, data, indices)


def test_sparse_sparse_dot_general_derivatives():
    a, b = sparse.BCOO.fromdense(X[0]), sparse.BCOO.fromdense(X[1])

    def f(d):
        return sparse.bcoo_dot_general(sparse.BCOO((d, a.indices), shape=a.shape), b,
                                       dimension_numbers=(((1,), (1,)), ((), ()))).data.sum()
    assert np.asarray(jax.jacfwd(f)(a.data)).tolist() == [0.0, 3.0, 1.0]
    with pytest.raises(NotImplementedError, match="no transpose rule"):
        jax.grad(f)(a.data)


@pytest.mark.parametrize("op, text, data, indices", [
    (lambda: sparse.bcoo_update_layout(M, n_batch=0), "BCOO(float32[2, 3, 4], nse=6)",
     [3.0, 1.0, 4.0, 2.0, 3.0, 1.0],
     [[0, 0, 3], [0, 1, 2], [0, 2, 1], [1, 0, 0], [1, 1, 2], [1, 2, 1]]),
    (lambda: sparse.bcoo_update_layout(M, n_dense=1, on_inefficient=None),
     "BCOO(float32[2, 3, 4], nse=3, n_batch=1, n_dense=1)",
     [[[0.0, 0.0, 0.0, 3.0], [0.0, 0.0, 1.0, 0.0], [0.0, 4.0, 0.0, 0.0]],
      [[2.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0], [0.0, 1.0, 0.0, 0.0]]],
     [[[0], [1], [2]], [[0], [1], [2]]]),
    (lambda: M.update_layout(n_batch=2, on_inefficient=None),
     "BCOO(float32[2, 3, 4], nse=3, n_batch=2)",
     [[[3.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 4.0]],
      [[2.0, 0.0, 0.0], [0.0, 3.0, 0.0], [0.0, 0.0, 1.0]]],
     [[[[3], [2], [1]]] * 3, [[[0], [2], [1]]] * 3]),
])
def test_update_layout_matches_jax(op, text, data, indices):
    _check(op(), text, data, indices)


def test_update_layout_refuses_inefficient_storage_and_mixed_batch_products():
    with pytest.raises(sparse.SparseEfficiencyError, match="increasing n_batch from 1 to 2"):
        sparse.bcoo_update_layout(M, n_batch=2)
    with pytest.warns(sparse.SparseEfficiencyWarning):
        sparse.bcoo_update_layout(M, n_batch=2, on_inefficient="warn")
    # operands with different batch dimensions multiply through the unbatched layout
    out = sparse.bcoo_multiply_sparse(M, sparse.BCOO.fromdense(X))
    assert repr(out) == "BCOO(float32[2, 3, 4], nse=36)"
    assert np.asarray(out.todense()).tolist() == np.asarray(X * X).tolist()


def test_conv_general_dilated_matches_jax():
    a = jnp.array([0., 1., 0., 2., 0., 0., 3.])
    b = jnp.array([1., 2., 0.])
    out = sparse.bcoo_conv_general_dilated(sparse.BCOO.fromdense(a[None, None]), b[None, None],
                                           window_strides=(1,), padding="SAME")
    _check(out, "BCOO(float32[1, 1, 7], nse=9, n_batch=2)",
           [[[1.0, 2.0, 0.0, 2.0, 4.0, 0.0, 3.0, 6.0, 0.0]]],
           [[[[2], [1], [0], [4], [3], [2], [7], [6], [5]]]])
    out = sparse.bcoo_conv_general_dilated(a[None, None], sparse.BCOO.fromdense(b[None, None]),
                                           window_strides=(1,), padding="VALID")
    assert np.asarray(out.todense()).tolist() == [[[2.0, 1.0, 4.0, 2.0, 0.0]]]
    with pytest.raises(NotImplementedError, match="non-unit window_strides"):
        sparse.bcoo_conv_general_dilated(sparse.BCOO.fromdense(a[None, None]), b[None, None],
                                         window_strides=(2,), padding="SAME")
