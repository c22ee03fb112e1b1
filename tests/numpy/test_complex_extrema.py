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
