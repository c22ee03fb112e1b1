"""Explicit 64-bit requests while x64 is off: jax.random.bits follows
jax_explicit_x64_dtypes as every dtype= argument does (values from JAX 0.10.2)."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src import config


def test_random_bits_truncates_uint64_with_a_warning():
    with pytest.warns(UserWarning, match="Explicitly requested dtype uint64"):
        bits = jax.random.bits(jax.random.key(1701), (3,), jnp.dtype("uint64"))
    assert bits.dtype == jnp.uint32
    assert bits.tolist() == [1111271205, 2679469115, 974515252]


def test_random_bits_refuses_uint64_in_error_mode():
    with config.explicit_x64_dtypes("error"), \
            pytest.raises(ValueError, match="Explicitly requested dtype uint64"):
        jax.random.bits(jax.random.key(1701), (3,), jnp.dtype("uint64"))

