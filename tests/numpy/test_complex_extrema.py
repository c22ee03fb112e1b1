"""max/min of complex operands that broadcast size-1 axes, lowered to XLA (jnp.logaddexp
takes a max of its operands); values observed on JAX 0.10.2."""
import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

A = (np.arange(4).reshape(1, 1, 4) + 1j).astype(np.complex64)
B = (np.arange(8).reshape(2, 1, 4) - 2j).astype(np.complex64)


def test_complex_max_broadcasts_size_one_axes():
    assert np.asarray(jax.jit(lax.max)(A, B)).tolist() == [
        [[1j, 1 + 1j, 2 + 1j, 3 + 1j]], [[4 - 2j, 5 - 2j, 6 - 2j, 7 - 2j]]]


def test_complex_logaddexp_under_jit():
    out = np.asarray(jax.jit(jnp.logaddexp)(A, B))
    expected = np.array([[[-1.9556 - 0.5j, -0.9556 - 0.5j, 0.0444 - 0.5j, 1.0444 - 0.5j]],
                         [[3.9817 - 1.9974j, 4.9817 - 1.9974j, 5.9817 - 1.9974j,
                           6.9817 - 1.9974j]]])
    np.testing.assert_allclose(out, expected, atol=1e-4)


def test_eager_complex_max_min_compare_parts_as_jax():
    # JAX picks x where (re x > re y), or re x == re y and im x > im y (< for min); a nan
    # part compares false, so y is picked, where NumPy's maximum would propagate the nan
    nan = np.nan
    a = jnp.array([1 + 2j, complex(nan, 0), 1 + 1j, complex(0, nan), 0j, complex(1, nan)],
                  jnp.complex64)
    b = jnp.array([1 + 3j, 2 + 0j, complex(1, nan), 1j, complex(0, nan), complex(1, 2)],
                  jnp.complex64)
    assert [str(v) for v in np.asarray(jnp.maximum(a, b)).tolist()] == [
        '(1+3j)', '(2+0j)', '(1+nanj)', '1j', 'nanj', '(1+2j)']
    assert [str(v) for v in np.asarray(jnp.minimum(a, b)).tolist()] == [
        '(1+2j)', '(2+0j)', '(1+nanj)', '1j', 'nanj', '(1+2j)']
