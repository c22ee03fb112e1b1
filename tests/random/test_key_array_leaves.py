"""Typed PRNG key arrays are pytree leaves to users (jax.tree_util, jax.tree), as the
jax.Arrays they are in JAX, while jit, vmap and scan still carry them; expected values
recorded from JAX 0.10.2."""
import pytest

import pyjax as jax
from pyjax import random

kd = random.key_data


def test_tree_functions_see_keys_as_leaves():
    k = random.key(0)
    ks = random.split(k, 3)
    assert repr(jax.tree.structure(k)) == "PyTreeDef(*)"
    leaves = jax.tree.leaves({"a": k, "b": [ks, 1.0]})
    assert len(leaves) == 3 and leaves[0] is k and leaves[1] is ks
    assert jax.tree_util.tree_leaves(k) == [k]
    assert jax.tree.map(lambda x: x.shape, {"a": ks}) == {"a": (3,)}
    assert jax.tree_util.all_leaves([k, ks]) and not jax.tree_util.all_leaves([[k]])
    assert not jax.tree_util.is_tree_node(type(k))
    assert str(jax.tree_util.tree_leaves_with_path({"k": k})[0][0]) == \
        "(DictKey(key='k'),)"
    assert jax.tree.reduce(lambda a, b: a + b.shape[0], [ks, ks], 0) == 6
    assert jax.tree_util.tree_map_with_path(lambda p, x: x.ndim, [ks]) == [1]
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        jax.tree_util.flatten_one_level(k)


def test_tree_map_over_keys_and_arrays_together():
    ks = random.split(random.key(1), 2)
    out = jax.tree.map(lambda a, b: (a.shape, b), [ks], [7])
    assert out == [((2,), 7)]


def test_transformations_still_carry_keys():
    k = random.key(0)
    ks = random.split(k, 3)
    assert kd(jax.jit(lambda d: d["k"][1])({"k": ks})).tolist() == [928981903,
                                                                  3453687069]
    assert kd(jax.vmap(lambda k: random.fold_in(k, 3))(ks)).tolist() == [
        [4257973933, 3811338087], [2488719848, 3371676629], [2061185276, 1116525886]]
    c, ys = jax.lax.scan(lambda c, _: (random.split(c)[0], random.bits(c)), k, None,
                         length=3)
    assert kd(c).tolist() == [683029726, 1624662641]
    assert ys.tolist() == [4070199207, 3617712097, 1214273199]
