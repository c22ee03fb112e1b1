"""Typed PRNG key arrays (jax.random.key) through jnp's structural functions, indexing
and .at, and the key arrays' buffer attributes; expected key data recorded from JAX
0.10.2."""
import copy

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import random

kd = random.key_data
SPLIT4 = [[969380169, 3408994049], [2095235069, 2959038751], [1896456402, 4081828428],
          [1653257682, 785867247]]


def keys4():
    return random.split(random.key(123), 4)


def test_split_data_matches_jax():
    assert kd(keys4()).tolist() == SPLIT4


def test_structural_functions_act_on_whole_keys():
    key, keys = random.key(123), keys4()
    assert kd(jnp.tile(key, 3)).tolist() == [[0, 123]] * 3
    assert kd(jnp.concatenate([keys[:2], keys[3:]])).tolist() == [SPLIT4[0], SPLIT4[1],
                                                                  SPLIT4[3]]
    assert jnp.expand_dims(keys.reshape(2, 2), -1).shape == (2, 2, 1)
    assert kd(jnp.expand_dims(keys.reshape(2, 2), -1)).shape == (2, 2, 1, 2)
    assert jnp.stack([keys, keys], axis=-1).shape == (4, 2)
    assert kd(jnp.append(keys, key)).tolist() == SPLIT4 + [[0, 123]]
    assert kd(jnp.broadcast_arrays(key, keys)[0]).tolist() == [[0, 123]] * 4
    assert jnp.broadcast_to(key, (3,)).shape == (3,)
    assert jnp.ravel(keys.reshape(2, 2)).shape == (4,)
    assert kd(jax.jit(lambda k: jnp.reshape(k, (2, 2)))(keys)).tolist() == [SPLIT4[:2],
                                                                           SPLIT4[2:]]
    assert jnp.result_type(key) == key.dtype
    assert jnp.array(key).dtype == key.dtype and jnp.asarray(key, dtype=key.dtype) is key


def test_indexed_reads_and_updates():
    key, keys = random.key(123), keys4()
    mask = np.array([False, True, True, False])
    assert kd(keys.at[mask].get()).tolist() == SPLIT4[1:3]
    # out of bounds with mode='fill': a key of all-ones data, as in JAX
    filled = jax.jit(lambda k: k.at[100].get(mode="fill"))(keys)
    assert kd(filled).tolist() == [4294967295, 4294967295]
    assert (key == keys.at[1:3].set(key)).tolist() == [False, True, True, False]
    with pytest.raises(TypeError, match="takes keys of dtype key<fry>"):
        keys.at[0].set(1)


def test_filled_key_arrays():
    key, keys = random.key(123), keys4()
    assert kd(jnp.full_like(keys, 100)).tolist() == [[100, 100]] * 4
    assert kd(jnp.zeros_like(keys)).tolist() == [[0, 0]] * 4
    assert kd(jnp.zeros((2,), dtype=keys.dtype)).tolist() == [[0, 0]] * 2
    assert kd(jnp.full((2,), key, dtype=keys.dtype)).tolist() == [[0, 123]] * 2
    assert kd(jnp.full_like(keys[:2], key)).tolist() == [[0, 123]] * 2


def test_mixing_keys_and_numbers_is_refused():
    with pytest.raises(TypeError, match="does not accept mixed dtypes"):
        jnp.concatenate([keys4(), jnp.zeros((2,), jnp.uint32)])


def test_buffer_attributes_are_the_key_data_s():
    keys = keys4()
    assert keys.device == kd(keys).device
    assert keys.devices() == kd(keys).devices()
    assert keys.is_fully_addressable and keys.is_fully_replicated
    assert keys.on_device_size_in_bytes() == kd(keys).on_device_size_in_bytes()
    assert len(keys.addressable_shards) == 1
    for clone in (keys.copy(), copy.copy(keys), copy.deepcopy(keys),
                  jax.jit(lambda k: k.copy())(keys)):
        assert clone.dtype == keys.dtype and kd(clone).tolist() == SPLIT4
    assert keys.copy_to_host_async() is None
    keys.delete()
    assert keys.is_deleted()


def test_eval_shape_of_functions_returning_keys():
    assert jax.eval_shape(lambda seed: random.key(seed), 28).shape == ()
    assert jax.eval_shape(lambda k: random.split(k), random.key(1)).shape == (2,)


def test_key_arrays_have_jax_s_structural_methods():
    # JAX 0.10.2: PRNGKeyArray has squeeze, swapaxes, take and transpose (sums of the
    # key data recorded from it)
    k = random.split(random.key(0), 6).reshape(2, 1, 3)
    total = 2293874216
    cases = [(k.squeeze(1), (2, 3), total), (k.squeeze(), (2, 3), total),
             (jnp.squeeze(k, -2), (2, 3), total), (k.swapaxes(0, 2), (3, 1, 2), total),
             (k.transpose(), (3, 1, 2), total), (k.transpose(2, 0, 1), (3, 2, 1), total),
             (k.transpose((1, 0, 2)), (1, 2, 3), total),
             (k.take(jnp.array([1, 0]), axis=2), (2, 1, 2), 606839939),
             (k.take(jnp.array([4])), (1,), 2719728695)]
    for keys, shape, data_sum in cases:
        assert keys.shape == shape and int(kd(keys).astype(np.uint32).sum()) == data_sum
    assert jax.jit(lambda k: k.squeeze(1).T)(k).shape == (3, 2)
    assert kd(k.transpose(2, 0, 1)).tolist() == np.transpose(
        np.asarray(kd(k)), (2, 0, 1, 3)).tolist()
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out"):
        k.squeeze(0)


def test_where_selects_whole_keys():
    k = random.split(random.key(0), 6).reshape(2, 1, 3)
    picked = jnp.where(jnp.array([True, False, True]), k, k[::-1])
    assert picked.shape == (2, 1, 3)
    assert kd(picked).tolist() == np.where(np.array([True, False, True])[:, None],
                                           np.asarray(kd(k)),
                                           np.asarray(kd(k))[::-1]).tolist()
    c = jnp.array([[[True, False, True]], [[False, True, False]]])
    mixed = jnp.where(c, k, random.key(5))   # JAX 0.10.2: data sum 1076077511
    assert int(kd(mixed).astype(np.uint32).sum()) == 1076077511
    assert kd(mixed)[0, 0, 1].tolist() == kd(random.key(5)).tolist()
def test_equality_of_keys():
    keys, key = random.split(random.key(0), 3), random.key(0)
    assert jnp.equal(key, key) and jnp.isclose(key, key)
    assert (keys == keys[0]).tolist() == [True, False, False]
    assert jnp.isclose(keys, keys[1]).tolist() == [False, True, False]
    assert jnp.not_equal(keys, keys[0]).tolist() == [False, True, True]
    assert jax.jit(jnp.isclose)(keys, keys[2]).tolist() == [False, False, True]
    for name in ["isclose", "equal"]:
        with pytest.raises(TypeError, match=f"{name} does not accept dtypes key<fry>, int"):
            getattr(jnp, name)(key, 1)


def test_astype_to_a_keys_own_dtype_is_the_keys():
    # optax's MultiSteps does jnp.astype(jnp.where(emit, new, old), old.dtype) over its
    # inner state, PRNG keys included (JAX 0.10.2: the same array back; another dtype
    # raises "Cannot convert_element_type from key<fry> to uint32")
    k = jax.random.key(0)
    assert jnp.astype(k, k.dtype) is k
    copied = jnp.astype(k, k.dtype, copy=True)
    assert copied is not k and copied.dtype == k.dtype
    with pytest.raises(ValueError, match="Cannot convert_element_type from key<fry> to uint32"):
        jnp.astype(k, jnp.uint32)
    out = jax.jit(lambda a, b: jnp.astype(jnp.where(True, a, b), a.dtype))(k, jax.random.key(1))
    assert out.dtype == k.dtype
    np.testing.assert_array_equal(jax.random.key_data(out), jax.random.key_data(k))


def test_elementwise_queries_and_identities_take_keys():
    """JAX's isfinite, isnan, isinf, isposinf and isneginf answer for each key (a key is
    finite), and nan_to_num, real, conj and positive return keys as they are: blackjax's
    adjusted MCLMC tuner maps nan_to_num over a state that holds a key."""
    keys = keys4().reshape(2, 2)
    for fn, value in [(jnp.isfinite, True), (jnp.isnan, False), (jnp.isinf, False),
                      (jnp.isposinf, False), (jnp.isneginf, False)]:
        for out in (fn(keys), jax.jit(fn)(keys)):
            assert out.dtype == np.bool_ and out.tolist() == [[value, value]] * 2
    for fn in (jnp.nan_to_num, jnp.real, jnp.conj, jnp.conjugate, jnp.positive):
        for out in (fn(keys), jax.jit(fn)(keys)):
            assert out.dtype == keys.dtype and kd(out).tolist() == [SPLIT4[:2], SPLIT4[2:]]
    assert not jnp.iscomplexobj(keys) and jnp.isrealobj(keys)
    state = jax.jit(lambda k: jax.lax.select(True, jnp.nan_to_num(k), k))(keys)
    assert kd(state).tolist() == [SPLIT4[:2], SPLIT4[2:]]


def test_flip_and_unstack_move_whole_keys():
    keys = keys4()
    assert kd(jnp.flip(keys.reshape(2, 2), 1)).tolist() == [[SPLIT4[1], SPLIT4[0]],
                                                           [SPLIT4[3], SPLIT4[2]]]
    assert kd(jnp.flipud(keys)).tolist() == SPLIT4[::-1]
    assert kd(jax.jit(jnp.flip)(keys)).tolist() == SPLIT4[::-1]
    assert [kd(k).tolist() for k in jnp.unstack(keys.reshape(2, 2), axis=1)] == [
        [SPLIT4[0], SPLIT4[2]], [SPLIT4[1], SPLIT4[3]]]
