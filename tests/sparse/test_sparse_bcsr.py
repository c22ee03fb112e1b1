"""The BCSR array: its primitives, the functions it shares with BCOO, and sparsify of
BCSR values. Expected buffers are JAX 0.10.2's."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental import sparse
from pyjax.experimental.sparse import test_util as sptu

M = jnp.array([[0., 1., 0., 2.], [3., 0., 0., 0.], [0., 0., 4., 5.]])
MSP = sparse.BCSR.fromdense(M)
# row 0 holds column 1 twice; row 1 is empty
DUP = sparse.BCSR((jnp.array([1., 2., 3., 4.]), jnp.array([1, 1, 0, 2]),
                   jnp.array([0, 2, 2, 4])), shape=(3, 3))


def _check(mat, text, data, indices, indptr):
    assert repr(mat) == text
    assert np.asarray(mat.data).tolist() == data
    assert np.asarray(mat.indices).tolist() == indices
    assert np.asarray(mat.indptr).tolist() == indptr


@pytest.mark.parametrize("op, text, data, indices, indptr", [
    (lambda: MSP, "BCSR(float32[3, 4], nse=5)", [1.0, 2.0, 3.0, 4.0, 5.0], [1, 3, 0, 2, 3],
     [0, 2, 3, 5]),
    (lambda: sparse.BCSR.fromdense(jnp.stack([M, M.at[0].set(0)]), n_batch=1),
     "BCSR(float32[2, 3, 4], nse=5, n_batch=1)",
     [[1.0, 2.0, 3.0, 4.0, 5.0], [3.0, 4.0, 5.0, 0.0, 0.0]],
     [[1, 3, 0, 2, 3], [0, 2, 3, 4, 4]], [[0, 2, 3, 5], [0, 0, 1, 3]]),
    (lambda: jax.jit(lambda x: sparse.BCSR.fromdense(x, nse=6))(M),
     "BCSR(float32[3, 4], nse=6)", [1.0, 2.0, 3.0, 4.0, 5.0, 0.0], [1, 3, 0, 2, 3, 4],
     [0, 2, 3, 5]),
    (lambda: sparse.bcsr_broadcast_in_dim(MSP, shape=(2, 3, 4), broadcast_dimensions=(1, 2)),
     "BCSR(float32[2, 3, 4], nse=5, n_batch=1)", [[1.0, 2.0, 3.0, 4.0, 5.0]] * 2,
     [[1, 3, 0, 2, 3]] * 2, [[0, 2, 3, 5]] * 2),
    (lambda: sparse.bcsr_concatenate([MSP, MSP], dimension=0), "BCSR(float32[6, 4], nse=10)",
     [1.0, 2.0, 3.0, 4.0, 5.0] * 2, [1, 3, 0, 2, 3] * 2, [0, 2, 3, 5, 7, 8, 10]),
    (lambda: DUP.sum_duplicates(), "BCSR(float32[3, 3], nse=3)", [3.0, 3.0, 4.0], [1, 0, 2],
     [0, 1, 1, 3]),
    (lambda: sparse.bcsr_sum_duplicates(DUP, nse=4), "BCSR(float32[3, 3], nse=4)",
     [3.0, 3.0, 4.0, 0.0], [1, 0, 2, 3], [0, 1, 1, 3]),
    (lambda: sparse.empty((2, 3), sparse_format="bcsr"), "BCSR(float32[2, 3], nse=0)", [],
     [], [0, 0, 0]),
])
def test_bcsr_buffers_match_jax(op, text, data, indices, indptr):
    _check(op(), text, data, indices, indptr)


def test_bcsr_dense_results_match_jax():
    assert np.asarray(MSP.todense()).tolist() == np.asarray(M).tolist()
    assert np.asarray(sparse.todense(MSP)).tolist() == np.asarray(M).tolist()
    dot = sparse.bcsr_dot_general(MSP, jnp.arange(8.).reshape(4, 2),
                                  dimension_numbers=(((1,), (0,)), ((), ())))
    assert np.asarray(dot).tolist() == [[14.0, 17.0], [0.0, 3.0], [46.0, 55.0]]
    assert np.asarray(MSP @ jnp.arange(4.)).tolist() == [7.0, 0.0, 23.0]
    extracted = sparse.bcsr_extract(MSP.indices, MSP.indptr, M * 2)
    assert np.asarray(extracted).tolist() == [2.0, 4.0, 6.0, 8.0, 10.0]
    coo = MSP.to_bcoo()
    assert np.asarray(coo.indices).tolist() == [[0, 1], [0, 3], [1, 0], [2, 2], [2, 3]]
    with pytest.raises(NotImplementedError, match="BCSR lhs and ndarray rhs"):
        _ = jnp.arange(3.) @ MSP


def test_bcsr_gradients_match_jax():
    def bcsr(d):
        return sparse.BCSR((d, MSP.indices, MSP.indptr), shape=MSP.shape)
    grad = jax.grad(lambda d: sparse.bcsr_todense(bcsr(d)).sum() * 2)(MSP.data)
    assert np.asarray(grad).tolist() == [2.0] * 5
    grad = jax.grad(lambda d: (bcsr(d) @ jnp.arange(4.)).sum())(MSP.data)
    assert np.asarray(grad).tolist() == [1.0, 3.0, 0.0, 2.0, 3.0]
    grad = jax.grad(lambda x: sparse.BCSR.fromdense(x, nse=5).data.sum())(M)
    assert np.asarray(grad).tolist() == [[0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0],
                                         [0.0, 0.0, 1.0, 1.0]]


@pytest.mark.parametrize("use_tracer", [False, True])
def test_sparsify_of_bcsr_values(use_tracer):
    def sp(f):
        return sparse.sparsify(f, use_tracer=use_tracer)
    # a nonlinear op sums duplicates first; a linear one keeps the buffers
    _check(sp(lambda a: a ** 2)(DUP), "BCSR(float32[3, 3], nse=4)", [9.0, 9.0, 16.0, 0.0],
           [1, 0, 2, 3], [0, 1, 1, 3])
    _check(sp(lambda a: -a)(DUP), "BCSR(float32[3, 3], nse=4)", [-1.0, -2.0, -3.0, -4.0],
           [1, 1, 0, 2], [0, 2, 2, 4])
    assert np.asarray(sp(lambda a, v: a @ v)(MSP, jnp.arange(4.))).tolist() == [
        7.0, 0.0, 23.0]
    assert np.asarray(sp(lambda a: sparse.todense(a) + 1)(MSP)).tolist() == [
        [1.0, 2.0, 1.0, 3.0], [4.0, 1.0, 1.0, 1.0], [1.0, 1.0, 5.0, 6.0]]


def test_rand_bcsr_gives_valid_arrays():
    mat = sptu.rand_bcsr(np.random.RandomState(0), n_batch=1)((2, 3, 4), np.float32)
    assert isinstance(mat, sparse.BCSR) and mat.shape == (2, 3, 4) and mat.n_batch == 1
    indptr = np.asarray(mat.indptr)
    assert (indptr[:, 0] == 0).all() and (np.diff(indptr, axis=-1) >= 0).all()
