"""How jnp takes its operands: rank promotion's messages, objects with __jax_array__ in
operators, iscomplexobj of traced lists (behaviour observed on JAX 0.10.2)."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


def test_rank_promotion_messages():
    with jax.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match=r"Operands could not be broadcast together for "
                           r"add on shapes \(2,\) \(1, 2\) and with the config option "
                           r"jax_numpy_rank_promotion='raise'"):
            jnp.ones(2) + jnp.ones((1, 2))
        assert (jnp.ones(2) + 3).tolist() == [4.0, 4.0]
    with jax.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match=r"Following NumPy automatic rank promotion for "
                          r"multiply on shapes \(2,\) \(1, 2\)\. Set the "
                          "jax_numpy_rank_promotion config option to 'allow'"):
            jnp.ones(2) * jnp.ones((1, 2))


class _ArrayLike:
    def __jax_array__(self):
        return jnp.array(3.0)


def test_operators_take_objects_with_jax_array():
    x = jnp.arange(3.0)
    assert (_ArrayLike() * x).tolist() == [0.0, 3.0, 6.0]
    assert (x - _ArrayLike()).tolist() == [-3.0, -2.0, -1.0]
    assert (_ArrayLike() - x).tolist() == [3.0, 2.0, 1.0]
    assert (x < _ArrayLike()).tolist() == [True] * 3
    assert jax.jit(lambda v: _ArrayLike() * v)(x).tolist() == [0.0, 3.0, 6.0]


@pytest.mark.parametrize("value,expected",
                         [(1 + 1j, True), ([1 + 1j], True), (np.pi, False),
                          (np.arange(2), False)])
def test_iscomplexobj_traced(value, expected):
    assert jnp.iscomplexobj(value) is expected
    assert bool(jax.jit(jnp.iscomplexobj)(value)) is expected
