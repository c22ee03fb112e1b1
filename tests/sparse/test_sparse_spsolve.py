"""jax.experimental.sparse.linalg.spsolve (through SciPy, as JAX's CPU backend) and its
derivatives. Expected values are JAX 0.10.2's."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental import sparse
from pyjax.experimental.sparse import csr as sparse_csr

A = jnp.array([[4., 1., 0.], [0., 3., 0.], [1., 0., 2.]])
DATA, INDICES, INDPTR = sparse_csr._csr_fromdense(A, nse=5)
B = jnp.array([1., 2., 3.])


def test_spsolve_matches_jax():
    x = sparse.linalg.spsolve(DATA, INDICES, INDPTR, B)
    np.testing.assert_allclose(x, [0.08333, 0.66667, 1.45833], atol=1e-5)
    np.testing.assert_allclose(jax.jit(sparse.linalg.spsolve)(DATA, INDICES, INDPTR, B), x)


def test_spsolve_gradients_match_jax():
    g_data, g_b = jax.grad(lambda d, b: sparse.linalg.spsolve(d, INDICES, INDPTR, b).sum(),
                           argnums=(0, 1))(DATA, B)
    np.testing.assert_allclose(g_data, [-0.01042, -0.08333, -0.19444, -0.04167, -0.72917],
                               atol=1e-5)
    np.testing.assert_allclose(g_b, [0.125, 0.29167, 0.5], atol=1e-5)


def test_spsolve_bad_input_and_vmap():
    with pytest.raises(ValueError, match="data types do not match"):
        sparse.linalg.spsolve(DATA, INDICES, INDPTR, B.astype("int32"))
    with pytest.raises(NotImplementedError):
        jax.vmap(lambda b: sparse.linalg.spsolve(DATA, INDICES, INDPTR, b))(jnp.ones((2, 3)))
