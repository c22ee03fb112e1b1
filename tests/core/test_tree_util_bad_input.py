"""Bad input to jax.tree_util (structures that disagree, wrong leaf counts, treedefs and
callables that are not): each case raises a named exception whose message names the
problem (see harness.assert_named_error)."""
import pytest

import pyjax as jax
from harness import assert_named_error, bad_input_case as case

CASES = [
    case("tree_map_lengths", ValueError, "structure",
         lambda: jax.tree_util.tree_map(lambda a, b: a, (1, 2), (1,))),
    case("tree_map_keys", ValueError, "structure",
         lambda: jax.tree_util.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})),
    case("tree_unflatten_too_few", ValueError, "Too few leaves",
         lambda: jax.tree_util.tree_unflatten(jax.tree_util.tree_structure((1, 2)), [1])),
    case("tree_unflatten_too_many", ValueError, "Too many leaves",
         lambda: jax.tree_util.tree_unflatten(jax.tree_util.tree_structure((1, 2)), [1, 2, 3])),
    case("tree_unflatten_not_treedef", TypeError, "expects a PyTreeDef",
         lambda: jax.tree_util.tree_unflatten(5, [1])),
    case("tree_is_leaf_not_callable", TypeError, "is_leaf must be a callable",
         lambda: jax.tree_util.tree_leaves((1, 2), is_leaf=5)),
    case("register_pytree_not_callables", TypeError, "two callables",
         lambda: jax.tree_util.register_pytree_node(int, 5, 6)),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)
