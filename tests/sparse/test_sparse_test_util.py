"""jax.experimental.sparse.test_util and the JaxTestCase it builds on: random sparse
inputs, sparse layouts, the per-test random state and the comparisons. Expected values
are JAX 0.10.2's."""
import unittest

import numpy as np

from pyjax.experimental.sparse import test_util as sptu


def test_random_inputs_match_jax():
    m = sptu.rand_bcoo(np.random.RandomState(0), nse=0.5, n_batch=1)((2, 3, 4), np.float32)
    assert repr(m) == "BCOO(float32[2, 3, 4], nse=6, n_batch=1)"
    np.testing.assert_allclose(m.data, [
        [5.29216, 1.20047, 2.93621, 6.72268, 5.60267, -2.93183],
        [2.85027, -0.45407, -0.30966, 1.2318, 0.43213, 4.36282]], atol=1e-5)
    assert np.asarray(m.indices).tolist() == [
        [[0, 1], [1, 1], [1, 0], [1, 0], [0, 3], [1, 2]],
        [[0, 2], [0, 1], [1, 3], [2, 3], [0, 1], [1, 1]]]
    np.testing.assert_allclose(
        sptu.rand_sparse(np.random.RandomState(1), nse=3)((2, 3), np.float32),
        [[4.87304, 0.0, -1.58452], [0.0, 0.0, -6.90462]], atol=1e-5)


def test_sparse_layouts_match_jax():
    assert [tuple(x) for x in sptu.iter_sparse_layouts((2, 3))] == [
        (0, 0, 2), (0, 1, 1), (0, 2, 0), (1, 0, 1), (1, 1, 0), (2, 0, 0)]


def test_sparse_test_case_matches_jax():
    seen = []

    class T(sptu.SparseTestCase):
        def test_x(self):
            seen.append(self.rng().randint(100))   # seeded by the test's name
            self.assertAllClose({"a": [np.float32(1.0), 2.0]},
                                {"a": [np.float32(1.0 + 1e-7), 2.0]})
            with self.assertRaises(AssertionError):
                self.assertAllClose(np.float32(1.0), np.float32(1.1))
            with self.assertRaises(AssertionError):
                self.assertArraysEqual(np.int32(1), np.float32(1))

    result = unittest.TestResult()
    T("test_x").run(result)
    assert not result.errors and not result.failures and seen == [3]


def test_check_batching_sparse_compares_vmapped_functions():
    import pyjax.numpy as jnp
    from pyjax.experimental import sparse

    class T(sptu.SparseTestCase):
        def test_x(self):
            rng = sptu.rand_bcoo(self.rng(), n_batch=1)
            def args_maker():
                return [rng((2, 3, 4), np.float32), jnp.ones(4, np.float32)]
            self._CheckBatchingSparse(lambda m, v: m @ v, lambda m, v: m @ v, args_maker,
                                      bdims=(1, None))
            # a sparse function that disagrees fails the check
            with self.assertRaises(AssertionError):
                self._CheckBatchingSparse(lambda m, v: m @ v, lambda m, v: 2 * (m @ v),
                                          args_maker, bdims=(0, 0))
            self.assertEqual(sparse.todense(rng((2, 3, 4), np.float32)).shape, (2, 3, 4))

    result = unittest.TestResult()
    T("test_x").run(result)
    assert result.wasSuccessful(), result.errors + result.failures
