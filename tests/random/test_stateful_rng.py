"""jax.experimental.random: the stateful PRNG (a base key and a counter in a jax.Ref),
eagerly and under jit. Expected values recorded from JAX 0.10.2."""
import pytest

import pyjax as jax
from pyjax.experimental import random as exp_random


def test_draws_update_the_counter():
    rng = exp_random.stateful_rng(42)
    assert repr(rng._counter) == "Ref(0, dtype=int32, weak_type=True)"
    assert [float(rng.uniform()) for _ in range(2)] == [0.5302608013153076,
                                                         0.7276642322540283]
    uniform = jax.jit(rng.uniform)       # the counter is read and written through jit
    assert [float(uniform()) for _ in range(2)] == [0.6672406196594238,
                                                     0.38901209831237793]
    assert jax.random.key_data(rng.key()).tolist() == [2954079971, 3276725750]
    assert int(rng._counter[...]) == 5


def test_keys_children_and_shapes():
    rng = exp_random.stateful_rng(0)
    assert jax.random.key_data(rng.key()).tolist() == [1797259609, 2579123966]
    assert jax.random.key_data(rng.key()).tolist() == [928981903, 3453687069]
    children = exp_random.stateful_rng(123).spawn(2)
    assert [c.integers(0, 10, 2).tolist() for c in children] == [[4, 5], [2, 1]]
    keys = rng.key(10)
    assert keys.shape == (10,) and jax.dtypes.issubdtype(keys.dtype, jax.dtypes.prng_key)
    assert rng.normal(size=(5, 2)).shape == (5, 2)


def test_bad_state_is_refused():
    with pytest.raises(ValueError, match="Expected base_key to be a typed PRNG key"):
        exp_random.StatefulPRNG(jax.numpy.array([0, 1], dtype="uint32"), jax.new_ref(0))
    with pytest.raises(ValueError, match="Expected counter to be a scalar integer ref"):
        exp_random.StatefulPRNG(jax.random.key(0), 0)
    with pytest.raises(TypeError, match="requires an explicit seed"):
        jax.jit(lambda: exp_random.stateful_rng().key())()


def test_vmap_over_a_split_generator():
    rng = exp_random.stateful_rng(123)
    out = jax.vmap(lambda r, x: x + r.uniform())(rng.split(3), jax.numpy.zeros(3))
    assert out.tolist() == [0.3552595376968384, 0.21937882900238037, 0.5336955785751343]
    # in_axes that leave the generator unmapped rebuild it over placeholders first
    rng = exp_random.stateful_rng(758943)
    split = rng.split(4)
    out = jax.vmap(lambda r, x: x + r.uniform(), in_axes=(0, 0))(split,
                                                                 jax.numpy.arange(4.))
    assert out.tolist() == [0.9114396572113037, 1.3816978931427002, 2.3661561012268066,
                            3.132561683654785]
    assert split._counter[...].tolist() == [1, 1, 1, 1]
