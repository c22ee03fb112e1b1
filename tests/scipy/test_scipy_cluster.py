"""jax.scipy.cluster.vq.vq against values observed from JAX 0.10.2."""
import numpy as np
import pytest

import pyjax as jax
from pyjax.scipy.cluster.vq import vq

BOOK = np.array([[1., 2., 3.], [2., 3., 4.], [3., 4., 5.], [4., 5., 6.]], np.float32)
OBS = np.array([[1.1, 2.1, 3.1], [5.9, 4.8, 6.2], [0, 0, 0.]], np.float32)


def test_vq_assigns_nearest_codes():
    for f in (vq, jax.jit(vq)):
        code, dist = f(OBS, BOOK)
        assert code.dtype == np.int32 and dist.dtype == np.float32
        np.testing.assert_array_equal(code, [0, 3, 0])
        np.testing.assert_allclose(dist, [0.17320499, 1.9209373, 3.7416575], rtol=1e-6)


def test_vq_of_vectors_and_integers():
    """One-dimensional inputs are length-1 observations; integers promote to float."""
    code, dist = vq(np.array([1, 5, 2]), np.array([0., 4.]))
    np.testing.assert_array_equal(code, [0, 1, 0])
    np.testing.assert_array_equal(dist, [1., 1., 2.])
    assert dist.dtype == np.float32


def test_vq_bad_ranks():
    with pytest.raises(ValueError, match="same rank"):
        vq(np.ones((2, 3)), np.ones(3))
    with pytest.raises(ValueError, match="rank 1 or 2"):
        vq(np.ones((2, 3, 1)), np.ones((2, 3, 1)))
