"""jnp.r_, c_, mgrid and ogrid (values observed on JAX 0.10.2)."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import errors


def test_directives():
    assert jnp.r_[1:4, 0, np.array([5, 6])].tolist() == [1, 2, 3, 0, 5, 6]
    assert jnp.r_["0,4,-2", [1, 2, 3], [4, 5, 6]].tolist() == \
        [[[[1], [2], [3]]], [[[4], [5], [6]]]]
    assert jnp.c_["1,3,1", [1, 2], [3, 4]].tolist() == [[[1], [2], [3], [4]]]
    assert jnp.r_["1,2,3,4", [1, 2]].tolist() == [[1, 2]]   # ints after three ignored
    assert jnp.c_[1:3].tolist() == [[1], [2]]


def test_matrix_directives():
    assert jnp.r_["r", [1, 2], [3]].tolist() == [[1, 2, 3]]
    assert jnp.r_["c", [1, 2], [3]].tolist() == [[1], [2], [3]]
    assert jnp.c_["r", [1, 2, 3], [4, 5, 6]].tolist() == [[1, 4], [2, 5], [3, 6]]


def test_bad_directives():
    with pytest.raises(ValueError, match="could not understand directive 'asdfgh'"):
        jnp.r_["asdfgh", [1, 2, 3]]
    with pytest.raises(ValueError, match="string directive must be placed at the beginning"):
        jnp.r_[[1], "0"]


def test_imaginary_step_and_promotion():
    assert jnp.r_[0:1:3j, 2.5].tolist() == [0.0, 0.5, 1.0, 2.5]
    assert jnp.r_[jnp.float16(1), 2].dtype == jnp.float16


def test_grids():
    assert jnp.mgrid[()].dtype == jnp.int32 and jnp.mgrid[()].shape == (0,)
    assert jnp.ogrid[()] == []
    grid = jnp.mgrid[0:2, 0:1.5:0.5]
    assert grid.dtype == jnp.float32
    assert grid.tolist() == [[[0, 0, 0], [1, 1, 1]], [[0, 0.5, 1], [0, 0.5, 1]]]
    rows, cols = jnp.ogrid[0:3, 1:2]
    assert rows.tolist() == [[0], [1], [2]] and cols.tolist() == [[1]]


@pytest.mark.parametrize("name", ["r_", "c_", "mgrid", "ogrid"])
def test_traced_slice_needs_a_concrete_value(name):
    indexer = getattr(jnp, name)
    with pytest.raises(errors.ConcretizationTypeError, match=f"slice start of jnp.{name}"):
        jax.jit(lambda a, b: indexer[a:b])(0, 2)
