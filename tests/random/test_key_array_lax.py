"""lax's slicing and select functions on typed PRNG key arrays act on whole keys, eagerly
and under jit; expected key data recorded from JAX 0.10.2."""
from functools import partial

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax, random

kd = random.key_data
K0 = [[3625411723, 1954958720], [195045567, 4062205631]]
K1 = [[966301609, 1948237315], [276534068, 1641862660]]
K2 = [[51277378, 3088387524], [3583082021, 1947592014]]
NEW = [[3916621945, 2736092722], [3968567658, 4184449365]]


def keys():
    return random.split(random.key(7), 6).reshape(3, 2)


def test_keys_fixture_matches_jax():
    assert kd(keys()).tolist() == [K0, K1, K2]


def test_slice_and_dynamic_slice():
    out = jax.jit(lambda x: lax.slice_in_dim(x, 1, 3))(keys())
    assert out.dtype == keys().dtype and kd(out).tolist() == [K1, K2]
    out = jax.jit(partial(lax.dynamic_slice_in_dim, slice_size=2))(keys(), np.int16(1))
    assert out.shape == (2, 2) and kd(out).tolist() == [K1, K2]


def test_dynamic_update_slice():
    k = random.split(random.key(8), 2).reshape(1, 2)
    out = jax.jit(partial(lax.dynamic_update_slice_in_dim, axis=0))(keys(), k, np.int16(1))
    assert kd(out).tolist() == [K0, NEW, K2]
    with pytest.raises(TypeError, match="dynamic_update_slice requires an update"):
        lax.dynamic_update_slice(keys(), kd(k), (0, 0))


def test_select_whole_keys():
    cs = jnp.array([True, False, False, True, False, True]).reshape(3, 2)
    out = jax.jit(lax.select)(cs, keys(), keys()[::-1])
    assert kd(out).tolist() == [[K0[0], K2[1]], K1, [K0[0], K2[1]]]
    assert kd(lax.select(True, keys(), keys()[::-1])).tolist() == [K0, K1, K2]
    assert kd(jax.vmap(lambda c, k: lax.select(c, k, k))(cs[:, 0], keys())).shape == (3, 2, 2)


@pytest.mark.parametrize("op, message", [
    (lambda k: jnp.add(k, 1), "add does not accept dtypes key<fry>, int32."),
    (lambda k: k + 1, "add does not accept dtypes key<fry>, int32."),
    (lambda k: 1 + k, "add does not accept dtypes int32, key<fry>."),
    (lambda k: jnp.multiply(k, 2.0), "multiply does not accept dtypes key<fry>, float32."),
    (lambda k: jnp.add(k, k), "add does not accept dtype key<fry>"),
    (lambda k: k * k, "mul does not accept dtype key<fry>"),
    (lambda k: -k, "neg does not accept dtype key<fry>"),
    (lambda k: jnp.negative(k), "neg does not accept dtype key<fry>"),
])
def test_arithmetic_on_keys_raises_jax_errors(op, message):
    with pytest.raises(TypeError, match=message.replace("<", ".").replace(">", ".")):
        op(random.key(123))


def test_no_casts_to_or_from_keys():
    key = random.key(0)
    with pytest.raises(ValueError, match="Cannot convert_element_type from key<fry> to int32"):
        lax.convert_element_type(key, int)
    with pytest.raises(ValueError, match="Cannot convert_element_type from int32 to key<fry>"):
        lax.convert_element_type(np.int32(0), key.dtype)


def test_wrap_key_data_of_numpy_data_is_on_the_device():
    key = random.wrap_key_data(np.array([42, 173], dtype=np.uint32), impl="threefry2x32")
    assert isinstance(key._base_array, jax.Array)
    assert key.device == key._base_array.device == jax.devices()[0]
