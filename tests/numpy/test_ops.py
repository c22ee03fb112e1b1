"""jax.ops segment reductions; expected values observed from JAX 0.10.2."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src import errors

DATA = jnp.arange(6.0)
IDS = jnp.array([0, 0, 1, 5, -1, 2])      # 5 and -1 are out of range: dropped


@pytest.mark.parametrize("name, floats, ints", [
    ("segment_sum", [1, 2, 5, 0], [1, 2, 5, 0]),
    ("segment_prod", [0, 2, 5, 1], [0, 2, 5, 1]),
    ("segment_max", [1, 2, 5, -np.inf], [1, 2, 5, np.iinfo(np.int32).min]),
    ("segment_min", [0, 2, 5, np.inf], [0, 2, 5, np.iinfo(np.int32).max]),
])
def test_segment_ops_drop_out_of_range_ids_and_fill_empty_segments(name, floats, ints):
    op = getattr(jax.ops, name)
    out = op(DATA, IDS, num_segments=4)
    assert out.dtype == jnp.float32 and out.tolist() == floats
    assert op(jnp.arange(6), IDS, 4).tolist() == ints
    assert jax.jit(lambda d, i: op(d, i, 4))(DATA, IDS).tolist() == floats
    assert op(DATA, IDS, 4, bucket_size=4).tolist() == floats     # buckets, then combined


@pytest.mark.parametrize("name, clipped", [
    ("segment_sum", [8, 3, 6, 4]), ("segment_prod", [10, 3, 6, 4]),
    ("segment_max", [5, 3, 6, 4]), ("segment_min", [1, 3, 6, 4])])
def test_bucket_padding_changes_nothing_when_ids_are_clipped(name, clipped):
    op, data = getattr(jax.ops, name), DATA + 1                   # no zeros: prod shows it
    assert op(data, IDS, 4, mode="clip").tolist() == clipped
    assert op(data, IDS, 4, bucket_size=4, mode="clip").tolist() == clipped


def test_segment_sum_shapes_modes_and_transformations():
    assert jax.ops.segment_sum(jnp.ones((3, 2)), jnp.array([1, 1, 0]), 2).tolist() == \
        [[1.0, 1.0], [2.0, 2.0]]
    assert jax.ops.segment_sum(DATA, IDS).tolist() == [1, 2, 5, 0, 0, 3]   # max id + 1
    assert jax.ops.segment_sum(DATA, IDS, 4, mode="clip").tolist() == [5, 2, 5, 3]
    assert jax.ops.segment_sum(2.0, IDS, 3).tolist() == [4, 2, 2]          # broadcast data
    assert jax.ops.segment_sum(jnp.ones(3, jnp.int8), jnp.zeros(3, int), 1).dtype == jnp.int8
    batched = jax.vmap(lambda d: jax.ops.segment_sum(d, jnp.array([0, 1, 1]), 2))
    assert batched(jnp.ones((2, 3))).tolist() == [[1, 2], [1, 2]]
    ties = jnp.array([1.0, 1.0, 0.0, 2.0, 2.0, 3.0])
    grad = jax.grad(lambda d: jax.ops.segment_max(d, jnp.array([0, 0, 0, 1, 1, 2]), 3).sum())
    assert grad(ties).tolist() == [0.5, 0.5, 0.0, 0.5, 0.5, 1.0]           # ties share
    assert "scatter-add" in str(jax.make_jaxpr(lambda d: jax.ops.segment_sum(d, IDS, 4))(DATA))


def test_segment_ops_reject_bad_input():
    with pytest.raises(errors.ConcretizationTypeError, match="static num_segments"):
        jax.jit(lambda d, i: jax.ops.segment_sum(d, i))(DATA, IDS)
    with pytest.raises(TypeError, match="segment_ids must be integers"):
        jax.ops.segment_sum(DATA, jnp.ones(6), 3)
    with pytest.raises(ValueError, match="one row per segment id"):
        jax.ops.segment_sum(DATA, jnp.ones(5, int), 3)
    with pytest.raises(TypeError, match="num_segments must be a Python int"):
        jax.ops.segment_sum(DATA, IDS, 2.5)
