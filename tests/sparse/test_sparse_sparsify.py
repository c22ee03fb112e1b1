"""jax.experimental.sparse.sparsify, as a jaxpr interpreter and as a trace, and the BCOO
methods built on it. Expected buffers are JAX 0.10.2's."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.experimental import sparse
from pyjax.experimental.sparse.transform import (
    SparsifyEnv, SparsifyValue, arrays_to_spvalues, spvalues_to_arrays,
)

X = (jnp.arange(24.).reshape(2, 3, 4) % 5) * (jnp.arange(24).reshape(2, 3, 4) % 3 == 0)
M = sparse.BCOO.fromdense(X, n_batch=1)
# duplicate indices ([0, 1] twice), an explicit zero, and an out-of-bounds (padding) index
DUP = sparse.BCOO((jnp.array([1., 2., 3., 0., 5.]),
                   jnp.array([[0, 1], [2, 0], [0, 1], [1, 1], [3, 3]])), shape=(3, 3))
DUP_IND = [[0, 1], [2, 0], [0, 1], [1, 1], [3, 3]]
V = jnp.array([1., 2., 3., 4.])


def _buffers(out):
    return np.asarray(out.data).tolist(), np.asarray(out.indices).tolist()


@pytest.fixture(params=[False, True], ids=["interpreter", "tracer"])
def sp(request):
    return lambda f: sparse.sparsify(f, use_tracer=request.param)


@pytest.mark.parametrize("fun, args, text, data, indices", [
    (lambda a: 2 * a.T, (DUP,), "BCOO(float32[3, 3], nse=5)", [2.0, 4.0, 6.0, 0.0, 10.0],
     [[1, 0], [0, 2], [1, 0], [1, 1], [3, 3]]),
    # a nonlinear op sums duplicates first; a linear one keeps the indices
    (jnp.sqrt, (DUP,), "BCOO(float32[3, 3], nse=5)",
     [2.0, 0.0, 1.4142135381698608, 2.2360680103302, 0.0],
     [[0, 1], [1, 1], [2, 0], [3, 3], [3, 3]]),
    (lax.neg, (DUP,), "BCOO(float32[3, 3], nse=5)", [-1.0, -2.0, -3.0, -0.0, -5.0], DUP_IND),
    (lambda a, b: a + b, (DUP, DUP.T), "BCOO(float32[3, 3], nse=10)",
     [1.0, 2.0, 3.0, 0.0, 5.0] * 2, DUP_IND + [[1, 0], [0, 2], [1, 0], [1, 1], [3, 3]]),
    (lambda a: jax.jit(lambda x: x * 2)(a), (DUP,), "BCOO(float32[3, 3], nse=5)",
     [2.0, 4.0, 6.0, 0.0, 10.0], DUP_IND),
    (lambda a: lax.fori_loop(0, 3, lambda i, x: x * 2, a), (DUP,),
     "BCOO(float32[3, 3], nse=5)", [8.0, 16.0, 24.0, 0.0, 40.0], DUP_IND),
    (lambda a: lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] * 3),
                              (0, a))[1], (DUP,),
     "BCOO(float32[3, 3], nse=5)", [9.0, 18.0, 27.0, 0.0, 45.0], DUP_IND),
    (lambda a: lax.cond(True, lambda x: -x, lambda x: x * 3, a), (DUP,),
     "BCOO(float32[3, 3], nse=5)", [-1.0, -2.0, -3.0, -0.0, -5.0], DUP_IND),
    (lambda a: a / 2, (DUP,), "BCOO(float32[3, 3], nse=5)", [0.5, 1.0, 1.5, 0.0, 2.5],
     DUP_IND),
    (lambda a: jnp.broadcast_to(a, (2, 3, 3)), (DUP,), "BCOO(float32[2, 3, 3], nse=5, n_batch=1)",
     [[1.0, 2.0, 3.0, 0.0, 5.0]] * 2, [DUP_IND] * 2),
    (lambda a: jnp.concatenate([a, a]), (DUP,), "BCOO(float32[6, 3], nse=10)",
     [1.0, 2.0, 3.0, 0.0, 5.0] * 2,
     DUP_IND + [[3, 1], [5, 0], [3, 1], [4, 1], [6, 3]]),
])
def test_sparse_results_match_jax(sp, fun, args, text, data, indices):
    out = sp(fun)(*args)
    assert repr(out) == text
    assert _buffers(out) == (data, indices)


def test_dense_results_match_jax(sp):
    matvec = sp(lambda a, v: -(jnp.sin(a) @ v))(M, V)
    np.testing.assert_allclose(matvec, [[-0.56448, -2.5244129, 1.513605],
                                        [-0.9092974, -0.42336, -1.6829419]], rtol=1e-6)
    expected = [[1.0, 5.0, 1.0], [1.0, 1.0, 1.0], [3.0, 1.0, 1.0]]
    assert np.asarray(sp(lambda a, b: a + b)(DUP, jnp.ones((3, 3)))).tolist() == expected
    assert np.asarray(sp(lambda a: sparse.todense(a) + 1)(DUP)).tolist() == expected
    assert np.asarray(jax.jit(sp(lambda a, v: a @ v))(M, V)).tolist() == [
        [12.0, 3.0, 8.0], [2.0, 9.0, 2.0]]
    assert np.asarray(sp(lambda a: (a * a).sum(1))(M).todense()).tolist() == [
        [0.0, 16.0, 1.0, 9.0], [4.0, 1.0, 9.0, 0.0]]


@pytest.mark.parametrize("fun, message", [
    (lax.cos, r"^sparse rule for cos is not implemented because it would result in dense "
              r"output\."),
    (lambda a: lax.complex(a, a), r"^sparse rule for complex is not implemented\.$"),
    (lambda a: a - 1, "^Subtraction between sparse and dense array.$"),
    (lambda a: 1 / a, "^Division by a sparse array is not implemented"),
    (lambda a: a ** -1, "^sparse rule for integer_pow with non-positive exponent -1"),
])
def test_unsupported_operations_raise_jax_errors(sp, fun, message):
    with pytest.raises(NotImplementedError, match=message):
        sp(fun)(DUP)


def test_cond_branches_of_different_sparsity_raise(sp):
    fun = sp(lambda a, b: lax.cond(False, lambda x: x[0], lambda x: x[1], (a, b)))
    with pytest.raises(TypeError, match="sparsified true_fun output must have same type "
                                        "structure as sparsified false_fun output"):
        fun(DUP, jnp.ones((3, 3)))


def test_tracer_mode_passes_sparse_tracers():
    seen = []
    sparse.sparsify(lambda x: seen.append(type(x)), use_tracer=True)(jnp.arange(5))
    sparse.sparsify(lambda x: seen.append(type(x)))(jnp.arange(5))
    assert seen[0] is sparse.SparseTracer and seen[1] is not sparse.SparseTracer


def test_spvalues_share_buffers():
    dense, mat = jnp.arange(3.), sparse.BCOO.fromdense(jnp.arange(3.))
    spenv = SparsifyEnv()
    spvalues = arrays_to_spvalues(spenv, (dense, mat))
    assert spvalues == (SparsifyValue((3,), 0, None),
                        SparsifyValue((3,), 1, 2, indices_sorted=True, unique_indices=True))
    shared = SparsifyEnv([dense, mat.data, mat.indices, 2 * mat.data])
    a, b = spvalues_to_arrays(shared, (SparsifyValue((3,), 1, 2), SparsifyValue((3,), 3, 2)))
    assert b.indices is a.indices
    assert np.asarray(b.todense()).tolist() == [0.0, 2.0, 4.0]


@pytest.mark.parametrize("op, text, data, indices", [
    (lambda: DUP + DUP, "BCOO(float32[3, 3], nse=10)", [1.0, 2.0, 3.0, 0.0, 5.0] * 2,
     DUP_IND * 2),
    (lambda: 2 * DUP, "BCOO(float32[3, 3], nse=5)", [2.0, 4.0, 6.0, 0.0, 10.0], DUP_IND),
    (lambda: DUP.sum(0), "BCOO(float32[3], nse=5)", [1.0, 2.0, 3.0, 0.0, 0.0],
     [[1], [0], [1], [1], [3]]),
    (lambda: DUP.reshape(9), "BCOO(float32[9], nse=5)", [1.0, 2.0, 3.0, 0.0, 5.0],
     [[1], [6], [1], [4], [9]]),
    (lambda: DUP.astype("int32"), "BCOO(int32[3, 3], nse=5)", [4, 0, 2, 5, 0],
     [[0, 1], [1, 1], [2, 0], [3, 3], [3, 3]]),
    (lambda: DUP ** 2, "BCOO(float32[3, 3], nse=5)", [16.0, 0.0, 4.0, 25.0, 0.0],
     [[0, 1], [1, 1], [2, 0], [3, 3], [3, 3]]),
    (lambda: DUP - DUP, "BCOO(float32[3, 3], nse=10)",
     [1.0, 2.0, 3.0, 0.0, 5.0, -1.0, -2.0, -3.0, -0.0, -5.0], DUP_IND * 2),
])
def test_bcoo_methods_are_sparsified(op, text, data, indices):
    out = op()
    assert repr(out) == text
    assert _buffers(out) == (data, indices)
    assert np.asarray(DUP @ jnp.ones(3)).tolist() == [4.0, 0.0, 2.0]


def test_slices_are_sparsified(sp):
    out = sp(lambda a: lax.slice(a, (0, 1, 2), (1, 3, 3)))(sparse.BCOO.fromdense(X))
    assert repr(out) == "BCOO(float32[1, 2, 1], nse=2)"
    assert _buffers(out) == ([1.0, 0.0], [[0, 0, 0], [1, 2, 1]])
    out = jax.jit(sp(lambda a: lax.dynamic_slice(a, (0, 1, 2), (1, 1, 3))))(
        sparse.BCOO.fromdense(X))
    assert repr(out) == "BCOO(float32[1, 1, 3], nse=3)"
    assert _buffers(out) == ([1.0, 0.0, 0.0], [[0, 0, 1], [1, 1, 3], [1, 1, 3]])


def test_sparse_sparse_matmul_is_sparse(sp):
    out = sp(lambda a, b: a @ b.T)(sparse.BCOO.fromdense(X[0]), sparse.BCOO.fromdense(X[1]))
    assert repr(out) == "BCOO(float32[3, 3], nse=9)"
    assert np.asarray(out.todense()).tolist() == [[0.0, 0.0, 0.0], [0.0, 3.0, 0.0],
                                                  [0.0, 0.0, 4.0]]


G = (jnp.arange(12.).reshape(3, 4) % 5) * (jnp.arange(12).reshape(3, 4) % 3 == 0)


@pytest.mark.parametrize("n_batch, idx, text, dense", [
    (0, np.index_exp[1], "BCOO(float32[4], nse=3)", [0.0, 0.0, 1.0, 0.0]),
    (1, np.index_exp[1, 2], "BCOO(float32[], nse=1)", 1.0),
    (1, np.index_exp[np.array([1, 2])], "BCOO(float32[2, 4], nse=1, n_batch=1)",
     [[0.0, 0.0, 1.0, 0.0], [0.0, 4.0, 0.0, 0.0]]),
    (1, np.index_exp[np.array([True, False, True])], "BCOO(float32[2, 4], nse=1, n_batch=1)",
     [[0.0, 0.0, 0.0, 3.0], [0.0, 4.0, 0.0, 0.0]]),
    (1, np.index_exp[:2, np.array([True, False, True, False])], "BCOO(float32[2, 2], nse=4)",
     [[0.0, 0.0], [0.0, 1.0]]),
    (1, np.index_exp[None, 0, np.array([[2]])], "BCOO(float32[1, 1, 1], nse=1, n_batch=3)",
     [[[0.0]]]),
    (1, np.index_exp[::2], "BCOO(float32[2, 4], nse=1, n_batch=1)",
     [[0.0, 0.0, 0.0, 3.0], [0.0, 4.0, 0.0, 0.0]]),
    (1, np.index_exp[None], "BCOO(float32[1, 3, 4], nse=1, n_batch=2)",
     [np.asarray(G).tolist()]),
])
def test_bcoo_indexing_matches_jax(n_batch, idx, text, dense):
    out = sparse.BCOO.fromdense(G, n_batch=n_batch)[idx]
    assert repr(out) == text
    assert np.asarray(out.todense()).tolist() == dense


def test_bcsr_indexing_and_iteration():
    out = sparse.BCSR.fromdense(G)[None]
    assert repr(out) == "BCSR(float32[1, 3, 4], nse=3, n_batch=1)"
    assert np.asarray(out.todense()).tolist() == [np.asarray(G).tolist()]
    rows = list(sparse.BCOO.fromdense(G))
    assert [repr(r) for r in rows] == ["BCOO(float32[4], nse=3)"] * 3
    assert np.asarray(rows[2].todense()).tolist() == [0.0, 4.0, 0.0, 0.0]


def test_convolve_is_sparsified(sp):
    a = sparse.BCOO.fromdense(jnp.array([0., 1., 0., 2., 0., 0., 3.]))
    out = sp(lambda x, y: jnp.convolve(x, y, mode="full"))(a, jnp.array([1., 2., 0.]))
    assert repr(out) == "BCOO(float32[9], nse=9)"
    assert np.asarray(out.todense()).tolist() == [0.0, 1.0, 2.0, 2.0, 4.0, 0.0, 3.0, 6.0, 0.0]
