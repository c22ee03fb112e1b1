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



@pytest.mark.parametrize("impl", ["threefry2x32", "rbg", "unsafe_rbg"])
@pytest.mark.parametrize("partitionable", [True, False])
def test_random_bits_keeps_uint64_in_allow_mode(impl, partitionable):
    expected = {"threefry2x32": {True: [3182764935064573181, 366096495144982249,
                                        241365115613244543],
                                 False: [3982329540505020460, 16822122385914693683,
                                         7882654074788531506]}}.get(impl)
    rbg = [2436515601188908477, 14956486593509556310, 1085863245873123167]
    with config.explicit_x64_dtypes("allow"), config.threefry_partitionable(partitionable), \
            jax.default_prng_impl(impl):
        key = jax.random.key(1701)
        for bits in (jax.random.bits(key, (3,), jnp.uint64),
                     jax.jit(lambda k: jax.random.bits(k, (3,), jnp.uint64))(key)):
            assert bits.dtype == jnp.uint64
            assert bits.tolist() == (expected[partitionable] if expected else rbg)


def test_rng_bit_generator_follows_explicit_x64_dtypes():
    key = jnp.zeros(4, jnp.uint32)
    with pytest.warns(UserWarning, match="requested in rng_bit_generator"):
        assert jax.lax.rng_bit_generator(key, (3,), jnp.uint64)[1].dtype == jnp.uint32
    with config.explicit_x64_dtypes("error"), pytest.raises(ValueError, match="uint64"):
        jax.lax.rng_bit_generator(key, (3,), jnp.uint64)
