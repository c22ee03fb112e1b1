"""jax.extend.random: the Threefry hash (its primitive against Random123's known-answer
vectors, threefry_2x32 on arrays of any shape), typed keys from seeds of any shape, the
built-in implementations, and an implementation a library defines. Values are JAX
0.10.2's for the same program."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.extend import random as xr


def test_public_names_are_jaxs():
    assert sorted(n for n in dir(xr) if not n.startswith("_")) == [
        "define_prng_impl", "random_seed", "rbg_prng_impl", "seed_with_impl",
        "threefry2x32_p", "threefry_2x32", "threefry_prng_impl", "unsafe_rbg_prng_impl"]


@pytest.mark.parametrize("key, count, expected", [   # Random123's kat_vectors (20 rounds)
    ([0, 0], [0, 0], [0x6B200159, 0x99BA4EFE]),
    ([0xFFFFFFFF, 0xFFFFFFFF], [0xFFFFFFFF, 0xFFFFFFFF], [0x1CB996FC, 0xBB002BE7]),
    ([0x13198A2E, 0x03707344], [0x243F6A88, 0x85A308D3], [0xC4923A9C, 0x483DF7A0]),
])
def test_threefry2x32_p_known_answers(key, count, expected):
    out = xr.threefry2x32_p.bind(*(np.uint32(v) for v in key + count))
    assert [int(o) for o in out] == expected


@pytest.mark.parametrize("jit", [False, True])
def test_threefry_2x32_keeps_the_count_shape(jit):
    f = jax.jit(xr.threefry_2x32) if jit else xr.threefry_2x32
    keypair = (np.uint32(1), np.uint32(2))
    np.testing.assert_array_equal(
        f(keypair, jnp.arange(5, dtype=jnp.uint32)),
        [2052595727, 3504730591, 2527474599, 1880214352, 1914734168])
    np.testing.assert_array_equal(
        f(keypair, jnp.arange(6, dtype=jnp.uint32).reshape(2, 3)),
        [[2052595727, 3504730591, 1038787879], [1880214352, 1914734168, 1027009547]])


def test_threefry_2x32_takes_uint32_only():
    with pytest.raises(TypeError, match=r"threefry_2x32 requires uint32 arguments, got "
                                        r"\[dtype\('uint32'\), dtype\('int32'\)"):
        xr.threefry_2x32((np.uint32(1), np.int32(2)), jnp.arange(4, dtype=jnp.uint32))


def test_keys_from_seeds():
    keys = xr.random_seed(jnp.arange(3), xr.threefry_prng_impl)
    assert (keys.shape, str(keys.dtype)) == ((3,), "key<fry>")
    np.testing.assert_array_equal(jax.random.key_data(keys), [[0, 0], [0, 1], [0, 2]])
    key = xr.seed_with_impl(xr.rbg_prng_impl, 7)
    assert (key.shape, str(key.dtype)) == ((), "key<rbg>")
    np.testing.assert_array_equal(jax.random.key_data(key), [0, 7, 0, 7])
    keys = xr.random_seed(jnp.arange(4).reshape(2, 2), xr.unsafe_rbg_prng_impl)
    assert (keys.shape, str(keys.dtype)) == ((2, 2), "key<urbg>")
    impl = xr.threefry_prng_impl
    assert (impl.name, impl.tag, impl.key_shape, str(xr.rbg_prng_impl)) == (
        "threefry2x32", "fry", (2,), "rbg")


def test_a_defined_implementation():
    base = xr.threefry_prng_impl
    spec = xr.define_prng_impl(key_shape=(2,), seed=base.seed, split=base.split,
                               random_bits=base.random_bits, fold_in=base.fold_in,
                               name="mine", tag="mn")
    assert (type(spec).__name__, str(spec), repr(spec)) == ("PRNGSpec", "mn",
                                                            "PRNGSpec('mine')")
    key = jax.random.key(3, impl=spec)
    assert str(key.dtype) == "key<mn>"
    np.testing.assert_array_equal(jax.random.key_data(key), [0, 3])
    np.testing.assert_allclose(jax.random.uniform(key, (3,)),
                               [0.07405257, 0.9381443, 0.648957], rtol=1e-6)
