"""Indices that are (nested) tuples of traced integers, as jit passes an index argument
like ((1, 20), (1, 4)): they index like integer arrays instead of failing on NumPy's
attempt to read the tracers."""
import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental import checkify

X = jnp.arange(12.0).reshape(3, 4)


def test_nested_tuple_of_traced_ints_indexes_like_an_array():
    out = jax.jit(lambda x, i: x[i])(X, ((1, 2), (0, 3)))
    np.testing.assert_array_equal(out, [4.0, 11.0])
    out = jax.jit(lambda x, i: x.at[i].set(-1.0))(X, ((1, 2), (0, 3)))
    expected = np.arange(12.0).reshape(3, 4)
    expected[[1, 2], [0, 3]] = -1
    np.testing.assert_array_equal(out, expected)


def test_checkify_reports_an_out_of_bounds_traced_tuple_index():
    def f(x, i):
        return x.at[i].get()
    err, _ = checkify.checkify(jax.jit(f), errors=checkify.index_checks)(X, ((1, 20), (1, 2)))
    assert err.get().startswith("out-of-bounds indexing")
    assert "index 20" in err.get() and "axis 0 with size 3" in err.get()
