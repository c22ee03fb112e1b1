"""The test case JAX's own tests and its public test helpers build on (JAX's internal
jax._src.test_util.JaxTestCase, which jax.experimental.sparse.test_util subclasses): an
absl parameterized TestCase with a per-test NumPy random state, tree-aware comparisons
with JAX's default tolerances per dtype, a jit-against-Python check and a check against
a NumPy reference; and `rand_default`, JAX's normal random inputs. Needs absl-py (as
JAX's does); imported only by code that runs tests."""
from __future__ import annotations

import contextlib
import functools
import warnings
import zlib

import ml_dtypes
import numpy as np
from absl.testing import parameterized

from pyjax._src import dtypes, tree_util
from pyjax._src.api.jit import jit
from pyjax._src.config import config

# JAX's default_tolerance(): the atol and rtol of a comparison at a dtype.
_DEFAULT_TOLERANCE = {
    **{np.dtype(t): 0 for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                np.uint16, np.uint32, np.uint64)},
    np.dtype(ml_dtypes.bfloat16): 1e-2, np.dtype(np.float16): 1e-3,
    np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
}


def _dtype(x):
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    if dtypes.is_python_scalar(x):
        return np.dtype(dtypes.python_scalar_dtype(x))
    return np.asarray(x).dtype


def tolerance(dtype, tol=None):
    """The tolerance `tol` gives at `dtype`: a number as is, or a {dtype: tol} table
    falling back on JAX's defaults."""
    tol = {} if tol is None else tol
    if not isinstance(tol, dict):
        return tol
    tol = {np.dtype(k): v for k, v in tol.items()}
    dtype = np.dtype(dtypes.canonicalize_dtype(np.dtype(dtype)))
    return tol.get(dtype, _DEFAULT_TOLERANCE.get(dtype, 0))


def _assert_numpy_allclose(a, b, atol=None, rtol=None, err_msg=""):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == dtypes.float0 or b.dtype == dtypes.float0:
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    a, b = (x.astype(np.float32) if x.dtype.kind == "V" else x for x in (a, b))
    kw = {k: v for k, v in (("atol", atol), ("rtol", rtol)) if v}
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a, b, **kw, err_msg=err_msg)


def _is_sequence(x):
    try:
        iter(x)
    except TypeError:
        return False
    return True


def _rand_dtype(rand, shape, dtype, scale=1.0, post=lambda x: x):
    dtype = np.dtype(dtype)
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else ()
    if np.issubdtype(dtype, np.unsignedinteger):
        def r():
            return np.asarray(scale * abs(rand(*dims))).astype(dtype)
    else:
        def r():
            return np.asarray(scale * rand(*dims)).astype(dtype)
    vals = r() + 1.0j * r() if np.issubdtype(dtype, np.complexfloating) else r()
    return np.asarray(post(vals), dtype)


def rand_default(rng, scale=3):
    """JAX's rand_default: a function (shape, dtype) -> normal values times `scale`."""
    return functools.partial(_rand_dtype, rng.randn, scale=scale)


class JaxTestCase(parameterized.TestCase):
    """JAX's test case: `rng()` a NumPy RandomState seeded by the test's name, and
    comparisons of arrays and pytrees of them with JAX's tolerances."""

    def setUp(self):
        super().setUp()
        self._rng = np.random.RandomState(zlib.adler32(self._testMethodName.encode()))

    def rng(self):
        return self._rng

    def assertDtypesMatch(self, actual, desired, *, canonicalize_dtypes=True):
        if not config.x64_enabled and canonicalize_dtypes:
            self.assertEqual(dtypes.canonicalize_dtype(_dtype(actual)),
                             dtypes.canonicalize_dtype(_dtype(desired)))
        else:
            self.assertEqual(_dtype(actual), _dtype(desired))

    def assertArraysEqual(self, actual, desired, *, check_dtypes=True, err_msg="",
                          allow_object_dtype=False, verbose=True):
        if check_dtypes:
            self.assertDtypesMatch(actual, desired)
        actual, desired = np.asarray(actual), np.asarray(desired)
        if not allow_object_dtype and object in (actual.dtype, desired.dtype):
            raise TypeError("assertArraysEqual called on object arrays")
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(actual, desired, err_msg=err_msg, verbose=verbose)

    def assertArraysAllClose(self, actual, desired, *, check_dtypes=True, atol=None,
                             rtol=None, err_msg=""):
        self.assertEqual(np.shape(actual), np.shape(desired))
        atol = max(tolerance(_dtype(actual), atol), tolerance(_dtype(desired), atol))
        rtol = max(tolerance(_dtype(actual), rtol), tolerance(_dtype(desired), rtol))
        _assert_numpy_allclose(actual, desired, atol=atol, rtol=rtol, err_msg=err_msg)
        if check_dtypes:
            self.assertDtypesMatch(actual, desired)

    def assertAllClose(self, actual, desired, *, check_dtypes=True, atol=None, rtol=None,
                       canonicalize_dtypes=True, err_msg=""):
        """Pytrees (dicts, sequences) of arrays or scalars agree within tolerance."""
        kw = dict(check_dtypes=check_dtypes, atol=atol, rtol=rtol,
                  canonicalize_dtypes=canonicalize_dtypes, err_msg=err_msg)
        if isinstance(actual, dict):
            self.assertIsInstance(desired, dict)
            self.assertEqual(set(actual), set(desired))
            for k in actual:
                self.assertAllClose(actual[k], desired[k], **kw)
        elif _is_sequence(actual) and not hasattr(actual, "__array__"):
            self.assertTrue(_is_sequence(desired) and not hasattr(desired, "__array__"),
                            f"Expected sequence, got {desired}")
            self.assertEqual(len(actual), len(desired))
            for a, d in zip(actual, desired):
                self.assertAllClose(a, d, **kw)
        elif hasattr(actual, "__array__") or np.isscalar(actual):
            self.assertTrue(hasattr(desired, "__array__") or np.isscalar(desired),
                            f"Expected array-like, got {desired}")
            if check_dtypes:
                self.assertDtypesMatch(actual, desired,
                                       canonicalize_dtypes=canonicalize_dtypes)
            self.assertArraysAllClose(np.asarray(actual), np.asarray(desired),
                                      check_dtypes=False, atol=atol, rtol=rtol,
                                      err_msg=err_msg)
        elif actual != desired:
            raise TypeError((type(actual), type(desired)))

    @contextlib.contextmanager
    def assertNoWarnings(self):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            yield

    def _CompileAndCheck(self, fun, args_maker, *, check_dtypes=True, tol=None, rtol=None,
                         atol=None, check_cache_misses=True):
        """fun under jit agrees with fun, and a second call does not re-trace."""
        args = args_maker()
        traced = []

        def wrapped(*a):
            traced.append(True)
            return fun(*a)

        python_ans = fun(*args)
        self.assertEqual(tree_util.tree_map(np.shape, python_ans),
                         tree_util.tree_map(lambda x: np.shape(np.asarray(x)), python_ans))
        cfun = jit(wrapped)
        kw = dict(check_dtypes=check_dtypes, atol=atol or tol, rtol=rtol or tol)
        self.assertAllClose(cfun(*args), python_ans, **kw)
        n_traces = len(traced)
        self.assertAllClose(cfun(*args), python_ans, **kw)
        if check_cache_misses:
            self.assertEqual(len(traced), n_traces, "jit re-traced on a cache hit")
        args = args_maker()
        self.assertAllClose(cfun(*args), fun(*args), **kw)

    def _CheckAgainstNumpy(self, numpy_reference_op, lax_op, args_maker, check_dtypes=True,
                           tol=None, atol=None, rtol=None, canonicalize_dtypes=True):
        args = args_maker()
        self.assertAllClose(lax_op(*args), numpy_reference_op(*args),
                            check_dtypes=check_dtypes, atol=atol or tol, rtol=rtol or tol,
                            canonicalize_dtypes=canonicalize_dtypes)
