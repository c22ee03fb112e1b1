"""Eager transcendental ops round as XLA's CPU code does, so that eager and jitted
results agree bit for bit (numerical code steep near a bound amplifies 1-ulp
differences: numpyro's L1BallTransform computes arctanh(tanh(x)))."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src import dtypes

_X = np.float32([0.0005, 0.3, 1.7, 3.0, 5.25, 8.5, -0.001, 0.7071068])


def _wide_sample(dtype):
    rng = np.random.default_rng(5)
    values = np.concatenate([np.linspace(-12, 12, 40001),
                             rng.normal(size=20000) * 10.0 ** rng.uniform(-45, 2, 20000),
                             [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 0.0004]])
    with np.errstate(over="ignore"):
        return values.astype(dtype)


def _bits(x):
    x = np.asarray(x)
    return x.view({2: np.uint16, 4: np.uint32}[x.dtype.itemsize]).tolist()


def test_eager_tanh_holds_jax_values():
    # jnp.tanh of _X on JAX 0.10.2 (CPU), as float32 bits; np.tanh is off by 1-4 ulps
    assert _bits(jnp.tanh(_X)) == [0x3a03126d, 0x3e9526ed, 0x3f6f76f8, 0x3f7ebbe8,
                                   0x3f7ffc62, 0x3f800000, 0xba83126b, 0x3f1bde36]
    assert _bits(jnp.tanh(_X.astype(np.float16))) == [0x1019, 0x34a9, 0x3b7c, 0x3bf6,
                                                      0x3c00, 0x3c00, 0x9419, 0x38df]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, dtypes.bfloat16])
def test_eager_tanh_equals_jitted_tanh_bit_for_bit(dtype):
    # (float64 tanh still rounds as NumPy's, 1 ulp from XLA's in places)
    x = _wide_sample(dtype)
    eager = np.asarray(jnp.tanh(x)).astype(np.float32)   # exact, and NaNs compare
    jitted = np.asarray(jax.jit(jnp.tanh)(x)).astype(np.float32)
    np.testing.assert_array_equal(eager, jitted)
    assert np.signbit(jnp.tanh(np.float32(-0.0)))
