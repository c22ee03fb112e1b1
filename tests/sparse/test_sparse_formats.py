"""jax.experimental.sparse's formats (BCOO with batch and dense dimensions, COO, CSR,
CSC), their conversions and products, their derivatives, `todense`, `empty` and `eye`,
and the JaxTestCase its test_util builds on. Expected values are JAX 0.10.2's."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental import sparse

M = np.array([[0, 1.5, 0], [2, 0, -1]], np.float32)


def _lists(bufs):
    return [np.asarray(b).tolist() for b in bufs]


@pytest.mark.parametrize("fmt, bufs", [
    ("COO", [[1.5, 2.0, -1.0], [0, 1, 1], [1, 0, 2]]),
    ("CSR", [[1.5, 2.0, -1.0], [1, 0, 2], [0, 1, 3]]),
    ("CSC", [[2.0, 1.5, -1.0], [1, 0, 1], [0, 1, 2, 3]]),
])
def test_older_formats_match_jax(fmt, bufs):
    cls = getattr(sparse, fmt)
    m = cls.fromdense(M)
    got = (m.data, m.row, m.col) if fmt == "COO" else (m.data, m.indices, m.indptr)
    assert _lists(got) == bufs
    assert repr(m) == f"{fmt}(float32[2, 3], nse=3)"
    np.testing.assert_array_equal(m.todense(), M)
    np.testing.assert_array_equal(jax.jit(lambda m: m.todense())(m), M)
    np.testing.assert_allclose(m @ jnp.array([1., 2, 3]), [3.0, -1.0])
    np.testing.assert_allclose(m @ jnp.arange(6.).reshape(3, 2), [[3.0, 4.5], [-4.0, -3.0]])
    np.testing.assert_array_equal(
        sparse.eye(3, 4, -1, sparse_format=fmt.lower()).todense(),
        [[0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]])
    assert sparse.todense(sparse.empty((2, 3), sparse_format=fmt.lower())).shape == (2, 3)


@pytest.mark.parametrize("n_batch, n_dense, data, indices, text", [
    (0, 0, [1.5, 2.0, -1.0], [[0, 1], [1, 0], [1, 2]], "nse=3"),
    (1, 0, [[1.5, 0.0], [2.0, -1.0]], [[[1], [3]], [[0], [2]]], "nse=2, n_batch=1"),
    (0, 1, [[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], [[0], [1]], "nse=2, n_dense=1"),
    (1, 1, [[[0.0, 1.5, 0.0]], [[2.0, 0.0, -1.0]]], [[[]], [[]]],
     "nse=1, n_batch=1, n_dense=1"),
    (2, 0, [[[0.0], [1.5], [0.0]], [[2.0], [0.0], [-1.0]]],
     [[[[]], [[]], [[]]], [[[]], [[]], [[]]]], "nse=1, n_batch=2"),
])
def test_bcoo_layouts_match_jax(n_batch, n_dense, data, indices, text):
    m = sparse.BCOO.fromdense(M, n_batch=n_batch, n_dense=n_dense)
    assert _lists(m._bufs) == [data, indices]
    assert repr(m) == f"BCOO(float32[2, 3], {text})"
    np.testing.assert_array_equal(m.todense(), M)
    np.testing.assert_array_equal(jax.jit(sparse.todense)(m), M)


def test_bcoo_operations_match_jax():
    m = sparse.BCOO.fromdense(M)
    assert _lists(m.T._bufs) == [[1.5, 2.0, -1.0], [[1, 0], [0, 1], [2, 1]]]
    assert np.asarray(sparse.bcoo_extract(m, jnp.arange(6.).reshape(2, 3)).data).tolist() \
        == [1.0, 3.0, 5.0]
    b3 = sparse.BCOO.fromdense(jnp.arange(12.).reshape(2, 3, 2) % 3, n_batch=1)
    np.testing.assert_array_equal(
        sparse.bcoo_dot_general(b3, jnp.ones((2, 2, 4)),
                                dimension_numbers=(((2,), (1,)), ((0,), (0,)))),
        [[[1.0] * 4, [2.0] * 4, [3.0] * 4]] * 2)
    assert _lists(sparse.empty((2, 3), n_batch=1, nse=2)._bufs) == \
        [[[0.0, 0.0], [0.0, 0.0]], [[[3], [3]], [[3], [3]]]]


def test_sparse_derivatives_match_jax():
    m = sparse.BCOO.fromdense(M)
    np.testing.assert_array_equal(jax.grad(lambda d: (sparse.BCOO(
        (d, m.indices), shape=m.shape) @ jnp.array([1., 2, 3])).sum())(m.data), [2.0, 1.0, 3.0])
    np.testing.assert_array_equal(
        jax.jacfwd(lambda x: sparse.bcoo_fromdense(x, nse=3).data)(M),
        [[[0, 1, 0], [0, 0, 0]], [[0, 0, 0], [1, 0, 0]], [[0, 0, 0], [0, 0, 1]]])
    np.testing.assert_array_equal(
        jax.jacrev(lambda x: sparse.bcoo_fromdense(x, nse=3).data)(M),
        [[[0, 1, 0], [0, 0, 0]], [[0, 0, 0], [1, 0, 0]], [[0, 0, 0], [0, 0, 1]]])
    c = sparse.CSR.fromdense(M)
    np.testing.assert_array_equal(
        jax.grad(lambda v: (c @ v).sum())(jnp.ones(3)), [2.0, 1.5, -1.0])


def test_sparse_bad_input():
    with pytest.raises(ValueError, match="sparse_format='foo' not recognized"):
        sparse.empty((2, 3), sparse_format="foo")
    with pytest.raises(ValueError, match="Invalid data.shape"):
        sparse.BCOO((jnp.ones(2), jnp.zeros((3, 2), jnp.int32)), shape=(2, 3))
    with pytest.raises(NotImplementedError, match="cannot permute dense axes"):
        sparse.BCOO.fromdense(M, n_dense=1).transpose()
    with pytest.raises(NotImplementedError, match="contracting over dense dimensions"):
        sparse.bcoo_dot_general(sparse.BCOO.fromdense(M, n_dense=1), jnp.ones(3),
                                dimension_numbers=(((1,), (0,)), ((), ())))


def test_sparse_autodiff_matches_jax():
    X = sparse.BCOO.fromdense(jnp.arange(6.))
    val, g = sparse.value_and_grad(lambda X, y: X @ y)(X, jnp.ones(6))
    assert float(val) == 15.0 and repr(g) == "BCOO(float32[6], nse=5)"
    g, gy = sparse.grad(lambda X, y: X @ y, argnums=(0, 1))(X, jnp.ones(6))
    assert np.asarray(g.data).tolist() == [1.0] * 5
    assert np.asarray(gy).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    for jac in (sparse.jacfwd, sparse.jacrev):
        j = jac(lambda X: X.todense() * 2)(X)
        assert repr(j) == "BCOO(float32[6, 6], nse=5, n_batch=1)"
        assert j.indices.shape == (6, 5, 1)
        np.testing.assert_array_equal(j.data, 2 * np.eye(6, 5, -1))


def test_random_bcoo_and_sort_indices_match_jax():
    m = sparse.random_bcoo(jax.random.key(1), (3, 4), nse=5, dtype=jnp.float32,
                           indices_dtype=jnp.int32)
    np.testing.assert_allclose(m.data, [0.7026152610778809, 0.2348346710205078,
                                        0.8178645372390747, 0.17094111442565918,
                                        0.026347756385803223], rtol=1e-6)
    assert np.asarray(m.indices).tolist() == [[2, 3], [0, 3], [2, 2], [0, 2], [0, 0]]
    m = sparse.random_bcoo(jax.random.key(2), (2, 3, 4), n_batch=1, nse=0.5,
                           dtype=jnp.float32, sorted_indices=True)
    assert repr(m) == "BCOO(float32[2, 3, 4], nse=6, n_batch=1)" and m.indices_sorted
    assert np.asarray(m.indices).tolist() == [
        [[1, 1], [1, 2], [1, 3], [2, 1], [2, 2], [2, 3]],
        [[0, 0], [0, 1], [1, 2], [1, 3], [2, 0], [2, 3]]]
    s = sparse.bcoo_sort_indices(sparse.BCOO(
        (jnp.array([1., 2, 3]), jnp.array([[1, 0], [0, 2], [0, 1]])), shape=(2, 3)))
    assert _lists(s._bufs) == [[3.0, 2.0, 1.0], [[0, 1], [0, 2], [1, 0]]]


def test_batched_matmul_matches_jax():
    a = (jnp.arange(24.).reshape(2, 3, 4) % 4) - 1.5
    A = sparse.BCOO.fromdense(a * (a > 0), n_batch=1)
    b = jnp.arange(40.).reshape(2, 4, 5) / 10
    B = sparse.BCOO.fromdense(b * (b > 1.5), n_batch=1)
    np.testing.assert_allclose((A @ b[0]).sum(-1), [[15.75] * 3] * 2, rtol=1e-6)
    np.testing.assert_allclose((A @ b).sum(-1), [[15.75] * 3, [35.75] * 3], rtol=1e-6)
    np.testing.assert_allclose((a[0] @ B).sum(-1), [[10.5] * 3, [12.5] * 3], rtol=1e-6)
    np.testing.assert_allclose(jnp.ones(4) @ B, [[0.0, 1.6, 1.7, 1.8, 1.9],
                                                 [11.0, 11.4, 11.8, 12.2, 12.6]], rtol=1e-6)
    np.testing.assert_allclose(A @ jnp.ones(4), [[2.0] * 3] * 2)


def test_dot_general_sampled_matches_jax():
    A = jnp.arange(8.).reshape(2, 4) / 4
    B = jnp.arange(12.).reshape(4, 3) - 5
    idx = jnp.array([[0, 2], [1, 0], [1, 1], [2, 5]])   # the last is out of bounds: 0

    def f(A, B):
        return sparse.bcoo_dot_general_sampled(A, B, idx,
                                               dimension_numbers=(((1,), (0,)), ((), ())))
    np.testing.assert_array_equal(f(A, B), [6.0, 1.0, 6.5, 0.0])
    np.testing.assert_array_equal(jax.jit(f)(A, B), [6.0, 1.0, 6.5, 0.0])
    gA, gB = jax.grad(lambda A, B: (f(A, B) ** 2).sum(), argnums=(0, 1))(A, B)
    np.testing.assert_array_equal(gA, [[-36, 0, 36, 72], [-62, -17, 28, 73]])
    np.testing.assert_array_equal(gB, [[2, 13, 0], [2.5, 16.25, 3], [3, 19.5, 6],
                                       [3.5, 22.75, 9]])
