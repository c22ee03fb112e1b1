"""jax.extend.random: PRNG implementations a library defines (define_prng_impl) used
through jax.random's impl= and dtype=, the built-in implementations, seeding by
implementation, and the Threefry hash. Values are JAX 0.10.2's for the same program."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.extend import random as jex_random


def _custom_impl(shape):
    def no_rule(*args, **kwargs):
        raise AssertionError("unreachable")
    return jex_random.define_prng_impl(
        key_shape=shape, seed=lambda _: jnp.ones(shape, dtype=jnp.dtype("uint32")),
        split=no_rule, fold_in=no_rule, random_bits=no_rule)


def test_public_names():
    assert sorted(n for n in dir(jex_random) if not n.startswith("_")) == [
        "define_prng_impl", "random_seed", "rbg_prng_impl", "seed_with_impl",
        "threefry2x32_p", "threefry_2x32", "threefry_prng_impl", "unsafe_rbg_prng_impl"]
    assert jax.extend.random is jex_random


def test_custom_impl_keys():
    impl = _custom_impl((4, 2, 7))
    assert repr(impl) == "PRNGSpec('<unnamed>')"
    assert str(impl) == "?"
    k = jax.random.key(42, impl=impl)
    assert k.shape == ()
    assert str(k.dtype) == "key<?>"
    assert k.dtype == jax.random.key_dtype(impl)
    # an unregistered implementation is named by its spec, a built-in one by its name
    assert jax.random.key_impl(k) == impl
    assert jax.random.key_impl(jax.random.key(0)) == "threefry2x32"
    keys = jax.random.wrap_key_data(jnp.ones((3, 4, 2, 7), jnp.uint32),
                                    dtype=jax.random.key_dtype(impl))
    assert keys.shape == (3,)
    assert jax.random.key_impl(keys) == impl


def test_seed_with_impl():
    k = jex_random.seed_with_impl(jex_random.threefry_prng_impl, 7)
    assert str(k.dtype) == "key<fry>" and k.shape == ()
    np.testing.assert_array_equal(jax.random.key_data(k), [0, 7])
    ks = jex_random.random_seed(np.array([1, 2, 3]), jex_random.rbg_prng_impl)
    assert str(ks.dtype) == "key<rbg>" and ks.shape == (3,)
    np.testing.assert_array_equal(jax.random.key_data(ks),
                                  [[0, 1, 0, 1], [0, 2, 0, 2], [0, 3, 0, 3]])
    # a Python int seeds as int64: 2**40 wraps to 0 while x64 is off
    np.testing.assert_array_equal(
        jax.random.key_data(jex_random.seed_with_impl(jex_random.unsafe_rbg_prng_impl,
                                                      2 ** 40)), [0, 0, 0, 0])
    jitted = jax.jit(lambda s: jex_random.seed_with_impl(jex_random.threefry_prng_impl, s))
    np.testing.assert_array_equal(jax.random.key_data(jitted(np.array([3, 4]))),
                                  [[0, 3], [0, 4]])


def test_threefry_2x32():
    key = (np.uint32(1), np.uint32(2))
    np.testing.assert_array_equal(
        jex_random.threefry_2x32(key, np.arange(5, dtype=np.uint32)),
        np.array([2052595727, 3504730591, 2527474599, 1880214352, 1914734168], np.uint32))
    out = jex_random.threefry_2x32(key, np.arange(6, dtype=np.uint32).reshape(2, 3))
    np.testing.assert_array_equal(
        out, np.array([[2052595727, 3504730591, 1038787879],
                       [1880214352, 1914734168, 1027009547]], np.uint32))
    assert jex_random.threefry2x32_p.name == "threefry2x32"
    with pytest.raises(TypeError, match=r"threefry_2x32 requires uint32 arguments, got "
                                        r"\[dtype\('float32'\)"):
        jex_random.threefry_2x32((np.float32(1), np.uint32(2)),
                                 np.arange(5, dtype=np.uint32))


def test_builtin_impls():
    assert jex_random.threefry_prng_impl.key_shape == (2,)
    assert str(jex_random.rbg_prng_impl) == "rbg"
    assert jex_random.unsafe_rbg_prng_impl.name == "unsafe_rbg"
