"""How jnp takes its operands: rank promotion's messages, objects with __jax_array__ in
operators and (as pytrees) in jnp functions, iscomplexobj of traced lists (behaviour
observed on JAX 0.10.2)."""
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


@jax.tree_util.register_pytree_node_class
class _Boxed:
    """A pytree standing for its array, as a flax nnx Variable does."""

    def __init__(self, value):
        self.value = value

    def __jax_array__(self):
        return self.value

    def tree_flatten(self):
        return (self.value,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_jnp_functions_take_pytrees_with_jax_array():
    # JAX's jnp functions are jitted: the pytree reaches them rebuilt around tracers
    w, b, x = _Boxed(jnp.arange(6.0).reshape(3, 2)), _Boxed(jnp.ones(2)), jnp.ones((1, 3))
    assert jnp.dot(x, w).tolist() == [[6.0, 9.0]] == jnp.matmul(x, w).tolist()
    assert jnp.add(jnp.ones(2), b).tolist() == [2.0, 2.0]
    assert jnp.maximum(b, 0.5).tolist() == [1.0, 1.0]
    assert (float(jnp.sum(w)), float(jnp.mean(w))) == (15.0, 2.5)
    assert jax.jit(lambda x: jnp.dot(x, w) + jnp.multiply(b, 2))(x).tolist() == [[8.0, 11.0]]


def test_jnp_functions_refuse_plain_objects_with_jax_array():
    for call in (lambda: jnp.dot(jnp.ones(1), _ArrayLike()), lambda: jnp.sin(_ArrayLike()),
                 lambda: jnp.sum(_ArrayLike())):
        with pytest.raises(ValueError, match="Triggering __jax_array__\\(\\) during "
                           "abstractification is no longer supported"):
            call()


@pytest.mark.parametrize("value,expected",
                         [(1 + 1j, True), ([1 + 1j], True), (np.pi, False),
                          (np.arange(2), False)])
def test_iscomplexobj_traced(value, expected):
    assert jnp.iscomplexobj(value) is expected
    assert bool(jax.jit(jnp.iscomplexobj)(value)) is expected
