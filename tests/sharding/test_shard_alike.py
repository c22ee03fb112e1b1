"""jax.experimental.shard_alike: two values laid out alike by XLA's partitioner (a Shardy
sharding group), under jit, eagerly, through grad and vmap, and its errors. The checks
that need several devices run in one subprocess with eight; expected values are JAX
0.10.2's for the same programs."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental.shard_alike import shard_alike
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P

from harness import checks_on_devices


def _mesh(shape=(4, 2), names=("x", "y")):
    return jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape))


def _split():
    s = NamedSharding(_mesh(), P("x", "y"))
    return s, jax.device_put(np.arange(16).reshape(8, 2), s)


# --- checks run with eight devices ------------------------------------------------------

def check_jit_lays_the_second_value_out_as_the_first():
    s, inp = _split()

    def f(x):
        return shard_alike(x, x * 2)[1], shard_alike(x, jnp.arange(16).reshape(8, 2))[1]
    a, b = jax.jit(f)(inp)
    assert a.sharding == s and b.sharding == s
    assert a.tolist()[:2] == [[0, 2], [4, 6]] and b.tolist()[:2] == [[0, 1], [2, 3]]


def check_eager_values_are_laid_out_alike():
    s, inp = _split()
    x, y = shard_alike(inp, np.arange(16).reshape(8, 2))
    assert x.sharding == s and y.sharding == s


def check_grad_and_vmap():
    s = NamedSharding(_mesh((8,), ("x",)), P("x"))
    g = jax.grad(lambda x: jnp.sum(shard_alike(x, jnp.arange(8.))[1] * x))(
        jax.device_put(np.arange(8.), s))
    assert g.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0] and g.sharding == s
    s, inp = _split()
    other = jax.device_put(np.arange(16).reshape(2, 8), NamedSharding(_mesh(), P("y", "x")))
    a, b = jax.jit(lambda x, y: jax.vmap(shard_alike, in_axes=(0, 1))(x, y))(inp, other)
    assert a.sharding == s and b.sharding == s and b.tolist()[1] == [1, 9]


def check_lowering_puts_both_values_in_one_group():
    _, inp = _split()
    text = jax.jit(lambda x: shard_alike(x, x * 2)).lower(inp).as_text()
    assert [line.strip() for line in text.splitlines() if "sharding_group" in line] == [
        "sdy.sharding_group %arg0 group_id=0 : tensor<8x2xi32>",
        "sdy.sharding_group %1 group_id=0 : tensor<8x2xi32>"]


test_on_eight_devices = checks_on_devices(globals(), 8)


# --- one device ---------------------------------------------------------------------------

def test_values_pass_through_unchanged():
    x, y = shard_alike(1., 2.)
    assert (float(x), float(y)) == (1.0, 2.0)
    assert jax.vmap(shard_alike, in_axes=(None, 0))(jnp.ones(2), jnp.zeros((3, 2)))[0].shape \
        == (3, 2)


def test_jaxpr_has_one_equation_per_leaf_pair():
    assert str(jax.make_jaxpr(lambda x, y: shard_alike({"a": x}, {"a": y}))(1., 2.)) == (
        "{ lambda ; a:f32[] b:f32[]. let c:f32[] d:f32[] = shard_alike a b in (c, d) }")


def test_bad_input_names_the_mismatch():
    with pytest.raises(ValueError, match=r"Trees should be equal. Got x_tree: "
                                         r"PyTreeDef\(\*\), y_tree: PyTreeDef\(\[\*\]\)"):
        shard_alike(np.ones(3), [np.ones(3)])
    with pytest.raises(ValueError, match=r"The leaves shapes of `x` and `y` should match. "
                                         r"Got `x` leaf shape: \(3,\) and `y` leaf shape: "
                                         r"\(4,\)"):
        shard_alike(np.ones(3), np.ones(4))
