"""jnp's set operations against JAX 0.10.2: result dtypes, padding of size= results and
their indices, assume_unique on repeated values, and NaNs in complex unique. Expected
values are JAX's, written here as literals."""
import numpy as np
import pytest

import pyjax.numpy as jnp


def _values(out):
    return [(np.asarray(o).dtype, np.asarray(o).tolist()) for o in out]


@pytest.mark.parametrize("ar1, ar2, expected", [
    (np.array([1, 2, 7], np.int16), np.array([2, 5, 3], np.int32), [1, 7]),
    (np.array([1, 4], np.int8), np.array([1.5, 2, 3, 3], np.float16), [1, 4]),
])
def test_setdiff1d_keeps_the_dtype_of_ar1(ar1, ar2, expected):
    for out in (jnp.setdiff1d(ar1, ar2), jnp.setdiff1d(ar1, ar2, assume_unique=True)):
        assert out.dtype == ar1.dtype and out.tolist() == expected
    out = jnp.setdiff1d(ar1, ar2, size=4, fill_value=-1)
    assert out.dtype == ar1.dtype and out.tolist() == expected + [-1, -1]


@pytest.mark.parametrize("assume_unique, a, b, idx1, idx2", [
    (False, [3, 1, 2, 1], [2, 3, 3, 7, 9], [2, 0, 4, 4, 4], [0, 1, 5, 5, 5]),
    (True, [3, 1, 2], [2, 3, 7, 9], [2, 0, 3, 3, 3], [0, 1, 4, 4, 4]),
])
def test_intersect1d_pads_indices_with_the_lengths(assume_unique, a, b, idx1, idx2):
    out = jnp.intersect1d(jnp.array(a), jnp.array(b), assume_unique=assume_unique,
                          return_indices=True, size=5)
    assert [o.tolist() for o in out] == [[2, 3, 2, 2, 2], idx1, idx2]


@pytest.mark.parametrize("f", [
    lambda a, b: jnp.setxor1d(a, b, size=3),
    lambda a, b: jnp.setxor1d(a, b, size=3, assume_unique=True),
    lambda a, b: jnp.intersect1d(a, b[:1] - 4, size=3),
])
@pytest.mark.parametrize("dtype", ["int16", "float32", "uint8"])
def test_empty_results_are_padded_with_zero(f, dtype):
    a = jnp.array([5, 7], dtype)
    out = f(a, a)
    assert out.dtype == np.dtype(dtype) and out.tolist() == [0, 0, 0]


def test_setxor1d_assume_unique_drops_values_repeated_inside_an_array():
    a, b = jnp.array([1, 1, 2, 3]), jnp.array([3.0, 4, 4])
    assert jnp.setxor1d(a, b, assume_unique=True).tolist() == [2.0]
    assert jnp.setxor1d(a, b, assume_unique=True, size=5).tolist() == [2.0] * 5
    assert jnp.setxor1d(jnp.array([5, 1, 2, 3]), jnp.array([3.0, 4, 0]),
                        assume_unique=True).tolist() == [0.0, 1.0, 2.0, 4.0, 5.0]


def test_unique_counts_complex_values_with_a_nan_part_as_one_nan():
    x = jnp.array([complex(np.nan, 1), 1.0, complex(1, np.nan), 2.0, np.nan], jnp.complex64)
    out = np.asarray(jnp.unique(x))
    np.testing.assert_array_equal(out, np.array([1, 2, complex(np.nan, 0)], np.complex64))



def test_unique_along_an_axis_broadcasts_an_array_fill_value():
    # as JAX 0.10.2: the fill value broadcasts against the (size, *rest) result
    x = jnp.array([[1, 2], [1, 2], [0, 5]])
    out = jnp.unique(x, axis=0, size=4, fill_value=jnp.array([[7, 8]]))
    assert np.asarray(out).tolist() == [[0, 5], [1, 2], [7, 8], [7, 8]]
