"""issubdtype with jnp's scalar types of narrow integers, and the promotion error of
8- and 4-bit floats, as in JAX 0.10.2."""
import numpy as np
import pytest

import pyjax.numpy as jnp
from pyjax import dtypes


@pytest.mark.parametrize("t", [jnp.int4, jnp.uint4])
def test_narrow_int_scalar_types_are_their_own_subdtype(t):
    assert dtypes.issubdtype(t, t)
    assert dtypes.issubdtype(t, np.dtype(t).type)
    assert dtypes.issubdtype(np.dtype(t).type, t)
    assert not dtypes.issubdtype(t, jnp.int8)


@pytest.mark.parametrize("dtype, other, bits", [
    ("float8_e4m3fn", "float32", 8), ("float8_e4m3fn", "float8_e5m2", 8),
    ("float4_e2m1fn", "float32", 4), ("float4_e2m1fn", "float8_e5m2", 8)])
def test_narrow_floats_refuse_implicit_promotion(dtype, other, bits):
    with pytest.raises(dtypes.TypePromotionError,
                       match=f"{bits}-bit floats do not support implicit promotion"):
        jnp.array(1, dtype=dtype) + jnp.array(1, dtype=other)
    # JAX keeps the narrow float with an integer operand
    assert (jnp.array(1, dtype=dtype) + jnp.array(1, dtype="int32")).dtype == dtype
