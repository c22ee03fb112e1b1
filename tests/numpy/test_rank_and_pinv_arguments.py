"""jnp.linalg.matrix_rank's and pinv's arguments as JAX 0.10.2 takes them: matrix_rank's
rtol/tol is an absolute cutoff (one per matrix), hermitian is accepted, and pinv's
gradient works for a very tall or wide matrix (no m x m intermediates)."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

M = jnp.diag(jnp.array([10.0, 0.5]))


def test_matrix_rank_cutoff_is_absolute_like_jax():
    assert int(jnp.linalg.matrix_rank(M, rtol=0.1)) == 2
    assert int(jnp.linalg.matrix_rank(M, 0.1)) == 2
    assert int(jnp.linalg.matrix_rank(M, tol=0.6)) == 1
    batch = jnp.stack([M, M * 0.01])
    np.testing.assert_array_equal(jnp.linalg.matrix_rank(batch, rtol=jnp.array([0.1, 1e-3])),
                                  [2, 2])
    assert int(jnp.linalg.matrix_rank(M, hermitian=True)) == 2


@pytest.mark.parametrize("fn, kwargs, message", [
    (jnp.linalg.matrix_rank, dict(rtol=0.1, tol=0.1),
     "matrix_rank: only one of tol or rtol may be specified."),
    (jnp.linalg.pinv, dict(rtol=0.1, rcond=0.1),
     "pinv: only one of rtol and rcond may be specified."),
])
def test_two_names_for_one_tolerance_raise(fn, kwargs, message):
    with pytest.raises(ValueError, match=message):
        fn(M, **kwargs)


@pytest.mark.parametrize("shape", [(100000, 2), (2, 100000)])
def test_pinv_gradient_of_a_very_tall_or_wide_matrix(shape):
    a = jnp.asarray(np.random.RandomState(0).randn(*shape).astype(np.float32))
    da = jnp.asarray(np.random.RandomState(1).randn(*shape).astype(np.float32))
    _, dp = jax.jvp(jnp.linalg.pinv, (a,), (da,))
    eps = 1e-3
    numeric = (jnp.linalg.pinv(a + eps * da) - jnp.linalg.pinv(a - eps * da)) / (2 * eps)
    np.testing.assert_allclose(dp, numeric, rtol=2e-2, atol=2e-5)
