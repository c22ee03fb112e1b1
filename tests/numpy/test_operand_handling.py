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


_V = _Boxed(jnp.array([3.0, -1.0, 0.0, 2.0]))
_I = _Boxed(jnp.array([2, 0]))
_B = _Boxed
_TAKING_PYTREES = {
    "any": lambda: jnp.any(_V),
    "argmax": lambda: jnp.argmax(_V),
    "cumsum": lambda: jnp.cumsum(_V),
    "cumulative_sum": lambda: jnp.cumulative_sum(_V),
    "var": lambda: jnp.var(_V),
    "count_nonzero": lambda: jnp.count_nonzero(_V),
    "average": lambda: jnp.average(_V),
    "reshape": lambda: jnp.reshape(_V, (2, 2)),
    "transpose": lambda: jnp.transpose(_B(jnp.arange(4).reshape(2, 2))),
    "squeeze": lambda: jnp.squeeze(_B(jnp.ones((1, 2)))),
    "swapaxes": lambda: jnp.swapaxes(_B(jnp.arange(4).reshape(2, 2)), 0, 1),
    "moveaxis": lambda: jnp.moveaxis(_B(jnp.arange(4).reshape(2, 2)), 0, 1),
    "flip": lambda: jnp.flip(_V),
    "broadcast_to": lambda: jnp.broadcast_to(_B(jnp.array(1.0)), (2,)),
    "broadcast_arrays": lambda: jnp.broadcast_arrays(_B(jnp.array(1.0)), _V)[0],
    "expand_dims": lambda: jnp.expand_dims(_V, 0),
    "where": lambda: jnp.where(_B(_V.value > 0), _V, 0.0),
    "nonzero": lambda: jnp.nonzero(_V)[0],
    "take": lambda: jnp.take(_V, _I),
    "take_along_axis": lambda: jnp.take_along_axis(_V, _I, axis=0),
    "put_along_axis": lambda: jnp.put_along_axis(_V, _I, _B(jnp.array([9.0, 8.0])), axis=0,
                                                 inplace=False),
    "angle": lambda: jnp.angle(_V),
    "fmod": lambda: jnp.fmod(_V, _B(jnp.array(2.0))),
    "power": lambda: jnp.power(_V, _B(jnp.array(2.0))),
    "rint": lambda: jnp.rint(_B(jnp.array([0.5, 1.5]))),
    "ldexp": lambda: jnp.ldexp(_V, _B(jnp.array(1))),
    "cov": lambda: jnp.cov(_V),
    "delete": lambda: jnp.delete(_V, _B(jnp.array(1))),
    "roll": lambda: jnp.roll(_V, _B(jnp.array(1))),
    "full_like": lambda: jnp.full_like(_V, _B(jnp.array(7.0))),
    "zeros_like": lambda: jnp.zeros_like(_V),
    "iscomplexobj": lambda: jnp.iscomplexobj(_B(jnp.array([1j]))),
    "select": lambda: jnp.select([_B(_V.value > 0)], [_V], 5.0),
}
_JAX_RESULTS = [
    ('any', True),
    ('argmax', 0),
    ('cumsum', [3.0, 2.0, 2.0, 4.0]),
    ('cumulative_sum', [3.0, 2.0, 2.0, 4.0]),
    ('var', 2.5),
    ('count_nonzero', 3),
    ('average', 1.0),
    ('reshape', [[3.0, -1.0], [0.0, 2.0]]),
    ('transpose', [[0, 2], [1, 3]]),
    ('squeeze', [1.0, 1.0]),
    ('swapaxes', [[0, 2], [1, 3]]),
    ('moveaxis', [[0, 2], [1, 3]]),
    ('flip', [2.0, 0.0, -1.0, 3.0]),
    ('broadcast_to', [1.0, 1.0]),
    ('broadcast_arrays', [1.0, 1.0, 1.0, 1.0]),
    ('expand_dims', [[3.0, -1.0, 0.0, 2.0]]),
    ('where', [3.0, 0.0, 0.0, 2.0]),
    ('nonzero', [0, 1, 3]),
    ('take', [0.0, 3.0]),
    ('take_along_axis', [0.0, 3.0]),
    ('put_along_axis', [8.0, -1.0, 9.0, 2.0]),
    ('angle', [0.0, 3.1415927410125732, 0.0, 0.0]),
    ('fmod', [1.0, -1.0, 0.0, 0.0]),
    ('power', [9.0, 1.0, 0.0, 4.0]),
    ('rint', [0.0, 2.0]),
    ('ldexp', [6.0, -2.0, 0.0, 4.0]),
    ('cov', 3.3333334922790527),
    ('delete', [3.0, 0.0, 2.0]),
    ('roll', [2.0, 3.0, -1.0, 0.0]),
    ('full_like', [7.0, 7.0, 7.0, 7.0]),
    ('zeros_like', [0.0, 0.0, 0.0, 0.0]),
    ('iscomplexobj', True),
    ('select', [3.0, 5.0, 5.0, 2.0]),
]


@pytest.mark.parametrize("name,expected", _JAX_RESULTS, ids=[n for n, _ in _JAX_RESULTS])
def test_more_jnp_functions_take_pytrees_with_jax_array(name, expected):
    # JAX 0.10.2's jnp functions take such a pytree for any array operand (they convert
    # it on entry, as ensure_arraylike does), not only the promoting ones
    np.testing.assert_allclose(np.asarray(_TAKING_PYTREES[name]()), expected, rtol=1e-6)


def test_jnp_functions_refuse_plain_objects_with_jax_array():
    for call in (lambda: jnp.dot(jnp.ones(1), _ArrayLike()), lambda: jnp.sin(_ArrayLike()),
                 lambda: jnp.sum(_ArrayLike())):
        with pytest.raises(ValueError, match="Triggering __jax_array__\\(\\) during "
                           "abstractification is no longer supported"):
            call()


def test_transformations_refuse_plain_objects_with_jax_array():
    # JAX 0.10.2 converts such an object only in jnp.array / jnp.asarray
    for call in (lambda: jax.jit(lambda v: v)(_ArrayLike()),
                 lambda: jax.make_jaxpr(lambda v: v)(_ArrayLike()),
                 lambda: jax.grad(lambda v: v)(_ArrayLike()),
                 lambda: jax.device_put(_ArrayLike())):
        with pytest.raises(ValueError, match="^Triggering __jax_array__\\(\\) during "
                           "abstractification is no longer supported. To avoid this error, "
                           "either explicitly convert your object using jax.numpy.array\\(\\), "
                           "or register your object as a pytree."):
            call()


def test_array_of_objects_with_jax_array_is_strongly_typed():
    one = _ArrayLike()   # stands for jnp.array(3.0), weakly typed
    for x in (jnp.array(one), jnp.asarray(one)):   # JAX: Array(3., dtype=float32)
        assert x.dtype == np.float32 and not x.weak_type and x.tolist() == 3.0
    nested = jnp.array(((one, one), [one, one]))   # nested sequences of them too
    assert nested.dtype == np.float32 and not nested.weak_type
    assert nested.tolist() == [[3.0, 3.0], [3.0, 3.0]]


@pytest.mark.parametrize("value,expected",
                         [(1 + 1j, True), ([1 + 1j], True), (np.pi, False),
                          (np.arange(2), False)])
def test_iscomplexobj_traced(value, expected):
    assert jnp.iscomplexobj(value) is expected
    assert bool(jax.jit(jnp.iscomplexobj)(value)) is expected
