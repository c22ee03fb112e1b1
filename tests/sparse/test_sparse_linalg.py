"""jax.experimental.sparse: LOBPCG on a matrix, on a function (a BCOO product under vmap)
and with its diagnostics, and bcoo_dot_general, against values from JAX 0.10.2."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.experimental.sparse import BCOO, bcoo, bcoo_dot_general, linalg


def _problem():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((50, 50)).astype(np.float32)
    return a @ a.T, rng.standard_normal((50, 4)).astype(np.float32)


TOP4 = [175.34651, 172.25049, 152.66983, 145.05414]


def test_lobpcg_matrix_and_callable_match_jax():
    a, x = _problem()
    theta, u, iterations = linalg.lobpcg_standard(jnp.array(a), jnp.array(x), 100)
    np.testing.assert_allclose(theta, TOP4, rtol=1e-6)
    assert int(iterations) == 13 and u.dtype == np.float32 and u.shape == (50, 4)
    np.testing.assert_allclose(np.abs(np.asarray(u)[:2]),
                               [[0.159073, 0.0228857, 0.139971, 0.167337],
                                [0.0827557, 0.0410948, 0.226462, 0.183969]], atol=2e-5)
    theta, _, iterations = linalg.lobpcg_standard(lambda v: jnp.array(a) @ v, x, 30)
    np.testing.assert_allclose(theta, TOP4, rtol=1e-6)
    assert int(iterations) == 13


def test_lobpcg_debug_diagnostics_match_jax():
    a, x = _problem()
    _, _, iterations, info = linalg._lobpcg_standard_matrix(a, x, 10, tol=0, debug=True)
    assert int(iterations) == 10
    np.testing.assert_array_equal(info["basis rank"], [12] * 10)
    np.testing.assert_array_equal(info["X zeros"], [0] * 10)
    np.testing.assert_allclose(info["lambda history"][-1],
                               [175.34647, 172.25046, 152.66974, 145.05394], rtol=1e-5)


def test_lobpcg_of_a_bcoo_product_under_vmap():
    dense = np.zeros((30, 30), np.float32)
    dense[np.arange(30), (np.arange(30) * 7) % 30] = np.arange(1, 31)
    m = BCOO.fromdense(dense)
    numbers = (((1,), (0,)), ((), ()))

    def action(v):
        return bcoo.bcoo_dot_general(m.T, bcoo_dot_general(m, v, dimension_numbers=numbers),
                                     dimension_numbers=numbers)
    x = np.random.default_rng(1).standard_normal((30, 3)).astype(np.float32)
    theta, _, _ = linalg.lobpcg_standard(pyjax.vmap(action, in_axes=1, out_axes=1), x, 40)
    np.testing.assert_allclose(theta, [900, 841, 784], rtol=1e-5)


def test_bcoo_dot_general_contracts_either_dimension():
    dense = np.array([[1., 0, 2], [0, 3, 0]], np.float32)
    m = BCOO.fromdense(dense)
    np.testing.assert_allclose(
        bcoo_dot_general(m, np.ones((3, 2), np.float32),
                         dimension_numbers=(((1,), (0,)), ((), ()))), [[3, 3], [3, 3]])
    np.testing.assert_allclose(
        bcoo_dot_general(m, np.array([1., 2], np.float32),
                         dimension_numbers=(((0,), (0,)), ((), ()))), [1, 6, 2])
    np.testing.assert_allclose(
        bcoo_dot_general(m, np.ones((2, 3), np.float32),
                         dimension_numbers=(((1,), (1,)), ((), ()))), [[3, 3], [3, 3]])


def test_lobpcg_bad_input():
    a, x = _problem()
    with pytest.raises(ValueError, match="search dim > 0"):
        linalg.lobpcg_standard(a, x[:, :0])
    with pytest.raises(ValueError, match="A, X must have same dtypes"):
        linalg.lobpcg_standard(lambda v: jnp.array(a).dot(v).astype(jnp.float16), x)
    with pytest.raises(ValueError, match=r"A must be \(50, 50\)"):
        linalg.lobpcg_standard(a[:30, :], x)
    with pytest.raises(ValueError, match=r"search dim \* 5 < matrix dim"):
        linalg.lobpcg_standard(a[:15, :15], x[:15])
