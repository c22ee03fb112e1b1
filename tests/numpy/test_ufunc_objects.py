"""jnp's ufunc objects (jnp.add, jnp.bitwise_or, ...) and jnp.frompyfunc: properties,
reduce, accumulate, reduceat, at and outer, with JAX 0.10.2's values."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

X = np.arange(1, 7, dtype="int32").reshape(2, 3)


def test_which_functions_are_ufuncs():
    assert sorted(n for n in dir(jnp) if isinstance(getattr(jnp, n), jnp.ufunc)) == [
        "add", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2",
        "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "multiply",
        "negative", "subtract"]
    assert (jnp.add.identity, jnp.multiply.identity, jnp.bitwise_and.identity) == (0, 1, -1)
    assert jnp.maximum.identity is None and jnp.logaddexp.identity == -np.inf
    assert (jnp.negative.nin, jnp.add.nargs) == (1, 2)
    with pytest.raises(AttributeError):
        jnp.add.identity = 3


def test_methods():
    assert jnp.bitwise_or.reduce(X, axis=1).tolist() == [3, 7]
    assert jnp.add.reduce(X, axis=None).tolist() == 21
    assert jnp.maximum.reduce(X).tolist() == [4, 5, 6]
    assert jnp.bitwise_xor.reduce(X, axis=0, keepdims=True).tolist() == [[5, 7, 5]]
    assert jnp.logical_xor.reduce(jnp.array([True, True, True])).tolist() is True
    assert jnp.bitwise_or.accumulate(X, axis=1).tolist() == [[1, 3, 3], [4, 5, 7]]
    assert jnp.multiply.accumulate(X, axis=1).tolist() == [[1, 2, 6], [4, 20, 120]]
    assert jnp.add.at(jnp.ones(6, "int32"), jnp.array([2, 2, 5]), 10,
                      inplace=False).tolist() == [1, 1, 21, 1, 1, 11]
    assert jnp.maximum.at(jnp.ones(6, "int32"), jnp.array([2, 2, 5]), jnp.array([3, 4, 0]),
                          inplace=False).tolist() == [1, 1, 4, 1, 1, 1]
    assert jnp.add.reduceat(jnp.arange(8), jnp.array([0, 2, 5])).tolist() == [1, 9, 18]
    assert jax.jit(lambda a, i: jnp.minimum.reduceat(a, i))(
        jnp.arange(8.), jnp.array([4, 1, 6])).tolist() == [4.0, 1.0, 6.0]
    assert jnp.multiply.outer(jnp.arange(3), jnp.arange(2)).tolist() == [[0, 0], [0, 1],
                                                                          [0, 2]]
    assert jnp.logaddexp.reduce(jnp.array([0., 1., 2.])).tolist() == 2.4076058864593506
    assert jax.jit(lambda a, i: jnp.add.reduce(a, initial=i))(jnp.ones(3), 2.) == 5.0


def test_frompyfunc():
    f = jnp.frompyfunc(lambda a, b: a * b + 1, nin=2, nout=1, identity=None)
    assert f.reduce(jnp.array([1., 2., 3.])).tolist() == 10.0
    assert f.accumulate(jnp.array([1., 2., 3.])).tolist() == [1.0, 3.0, 10.0]
    assert f.nargs == 2
    with pytest.raises(ValueError, match="no identity"):
        f.reduce(jnp.zeros((0,)))
