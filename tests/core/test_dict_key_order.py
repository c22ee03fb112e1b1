"""Dicts come back from every tree function and transformation in sorted key order, as
on JAX 0.10.2 (whose outputs the literals here are); OrderedDicts keep their order."""
import collections
import threading

import pyjax as jax
import pyjax.numpy as jnp
import pyjax.tree_util as jtu


def keys(tree):
    """The key order of every dict in `tree`, outermost first, depth first."""
    if isinstance(tree, dict):
        return [list(tree)] + [k for v in tree.values() for k in keys(v)]
    if isinstance(tree, (list, tuple)):
        return [k for v in tree for k in keys(v)]
    return []


def test_tree_map_sorts_dicts():
    out = jax.tree.map(lambda x: x, {"b": 1, "a": 2})
    assert out == {"a": 2, "b": 1} and list(out) == ["a", "b"]
    nested = jax.tree.map(lambda x: x, {"b": {"d": 1, "c": 2}, "a": 2})
    assert keys(nested) == [["a", "b"], ["c", "d"]]
    assert list(jax.tree.map(lambda x, y: x + y, {"b": 1, "a": 2}, {"a": 10, "b": 20})) \
        == ["a", "b"]
    assert list(jax.tree.map(lambda x: x, {3: 1, 1: 2, 2: 3})) == [1, 2, 3]
    with_none = jax.tree.map(lambda x: x, {"b": (1, None), "a": 2}, is_leaf=lambda x: x is None)
    assert list(with_none) == ["a", "b"]
    assert list(jtu.tree_map_with_path(lambda p, x: x, {"b": 1, "a": 2})) == ["a", "b"]


def test_unflatten_sorts_dicts():
    td = jax.tree.structure({"b": 1, "a": 2})
    out = jax.tree.unflatten(td, [5, 6])
    assert out == {"a": 5, "b": 6} and list(out) == ["a", "b"]
    assert list(td.unflatten([7, 8])) == ["a", "b"]
    [child] = jtu.treedef_children(jax.tree.structure([{"b": 1, "a": 2}]))
    assert list(child.unflatten([5, 6])) == ["a", "b"]
    both = jtu.tree_unflatten(jtu.treedef_tuple([td]), [5, 6])
    assert keys(both) == [["a", "b"]]
    composed = td.compose(jax.tree.structure({"d": 1, "c": 2}))
    assert keys(jax.tree.unflatten(composed, [1, 2, 3, 4])) == [["a", "b"], ["c", "d"],
                                                                 ["c", "d"]]
    transposed = jax.tree.transpose(jax.tree.structure([0, 0]), td,
                                    [{"b": 1, "a": 2}, {"b": 3, "a": 4}])
    assert transposed == {"a": [2, 4], "b": [1, 3]} and list(transposed) == ["a", "b"]
    assert list(jax.tree.broadcast({"b": 1, "a": 2}, {"b": [1, 2], "a": 3})) == ["a", "b"]


def test_a_treedef_made_from_one_order_rebuilds_any_in_sorted_order():
    # The flatten cache shares one treedef between dicts with the same keys.
    jax.tree.structure({"b": 1, "a": 2})
    assert list(jax.tree.map(lambda x: x, {"a": 1, "b": 2})) == ["a", "b"]
    assert list(jax.tree.map(lambda x: x, {"b": 1, "a": 2})) == ["a", "b"]


def test_defaultdict_sorted_ordereddict_kept():
    dd = collections.defaultdict(list, {"b": {"d": 1, "c": 2}, "a": 2})
    out = jax.tree.map(lambda x: x, dd)
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert list(out) == ["a", "b"] and list(out["b"]) == ["c", "d"]
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert list(jax.tree.map(lambda x: x, od)) == ["b", "a"]
    assert repr(jax.tree.structure(od)) == \
        "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"


def test_custom_nodes_keep_their_aux_data_around_sorted_dicts():
    Point = collections.namedtuple("Point", "x y")
    tree = Point({"b": 1, "a": 2}, jtu.Partial(max, {"z": 1, "y": 2}))
    out = jax.tree.map(lambda x: x * 10, tree)
    assert out.x == {"a": 20, "b": 10} and list(out.x) == ["a", "b"]
    assert out.y.func is max and list(out.y.args[0]) == ["y", "z"]


def test_transformations_return_sorted_dicts():
    d = {"b": 1.0, "a": 2.0}
    f = jax.jit(lambda: {"b": 1.0, "a": 2.0})
    assert list(f()) == ["a", "b"]
    assert list(f()) == ["a", "b"]   # the cached call too
    ident = jax.jit(lambda d: d)
    for arg in ({"b": 1.0, "a": 2.0}, {"b": 1.0, "a": 2.0}, {"a": 1.0, "b": 2.0}):
        assert list(ident(arg)) == ["a", "b"]
    g = jax.jit(lambda x: {"z": x, "y": {"q": x, "p": x}})
    assert keys(g(1.0)) == [["y", "z"], ["p", "q"]]
    assert keys(g(2.0)) == [["y", "z"], ["p", "q"]]
    grads = jax.grad(lambda d: d["b"] * d["a"])(d)
    assert list(grads) == ["a", "b"] and (float(grads["a"]), float(grads["b"])) == (1.0, 2.0)
    assert list(jax.vmap(lambda x: {"b": x, "a": x})(jnp.arange(2.0))) == ["a", "b"]
    assert list(jax.eval_shape(lambda: {"b": 1.0, "a": 2.0})) == ["a", "b"]
    ys = jax.lax.scan(lambda c, x: (c, {"b": x, "a": x}), 0.0, jnp.arange(2.0))[1]
    assert list(ys) == ["a", "b"]
    jac = jax.jacfwd(lambda d: {"y": d["b"], "x": d["a"]})(d)
    assert keys(jac) == [["x", "y"], ["a", "b"], ["a", "b"]]
    hess = jax.hessian(lambda d: d["b"] * d["a"])(d)
    assert keys(hess) == [["a", "b"], ["a", "b"], ["a", "b"]]


def test_sorted_from_any_thread():
    results = []

    def work():
        results.append(list(jax.tree.map(lambda x: x, {"y": 1, "x": {"q": 1, "p": 2}})))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [["x", "y"]] * 4
