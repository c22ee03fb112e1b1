"""lax.bitcast_convert_type and Array.view with 4-bit integers: two to a byte, the first
in the low bits (values observed on JAX 0.10.2)."""
import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

NIBBLES = np.arange(-8, 8).astype(jnp.int4)


def test_int4_pairs_to_bytes():
    x = jnp.array(NIBBLES.reshape(8, 2))
    expected = [-104, -70, -36, -2, 16, 50, 84, 118]
    assert lax.bitcast_convert_type(x, np.int8).tolist() == expected
    unsigned = jax.jit(lambda v: lax.bitcast_convert_type(v, np.uint8))(x)
    assert unsigned.tolist() == [152, 186, 220, 254, 16, 50, 84, 118]


def test_bytes_to_int4_pairs():
    out = lax.bitcast_convert_type(jnp.array([1, -2, 3, 100], np.int8), jnp.int4)
    assert out.shape == (4, 2) and out.astype(int).tolist() == [[1, 0], [-2, -1], [3, 0],
                                                                 [4, 6]]


def test_view_int4_as_wider():
    x = jnp.array(NIBBLES.reshape(2, 8))
    assert x.view(np.int16).tolist() == [[-17768, -292], [12816, 30292]]
    assert x.view(jnp.uint4).astype(int).tolist()[0] == [8, 9, 10, 11, 12, 13, 14, 15]
