"""Tests for pyjax.tree_util: JAX's pytree conventions, treedefs, key paths,
registration, Partial, the jit fast path and error messages."""
import collections
import dataclasses
import functools
import pickle

import numpy as np
import optree
import pytest

import pyjax as jax
import pyjax.numpy as jnp
import pyjax.tree_util as jtu
from pyjax._src import tree_util as tu
from pyjax._src.tree_util import build_tree

Point = collections.namedtuple("Point", "x y")


# ---------------------------------------------------------------- flatten basics

def test_none_is_an_empty_node():
    assert jtu.tree_leaves([None, 1]) == [1]
    assert jtu.tree_leaves(None) == []
    leaves, td = jtu.tree_flatten([None, 1])
    assert repr(td) == "PyTreeDef([None, *])"
    assert jtu.tree_unflatten(td, [5]) == [None, 5]


def test_dict_keys_are_sorted():
    leaves, td = jtu.tree_flatten({"b": 1, "a": (2, 3)})
    assert leaves == [2, 3, 1]
    assert repr(td) == "PyTreeDef({'a': (*, *), 'b': *})"
    assert jtu.tree_structure({"a": 0, "b": 0}) == jtu.tree_structure({"b": 1, "a": 2})


@pytest.mark.parametrize("tree, text", [
    ((1, {"a": 2}), "PyTreeDef((*, {'a': *}))"),
    ((1,), "PyTreeDef((*,))"),
    ((), "PyTreeDef(())"),
    ([], "PyTreeDef([])"),
    (None, "PyTreeDef(None)"),
    (3.0, "PyTreeDef(*)"),
    (Point(1, 2), "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"),
    (collections.OrderedDict(b=1, a=2), "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"),
    (collections.defaultdict(list, {"b": 1, "a": 2}),
     "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))"),
])
def test_treedef_repr_matches_jax(tree, text):
    assert repr(jtu.tree_structure(tree)) == text
    assert str(jtu.tree_structure(tree)) == text


def test_namedtuple_ordereddict_defaultdict_roundtrip():
    od = collections.OrderedDict(b=1, a=2)
    leaves, td = jtu.tree_flatten(od)
    assert leaves == [1, 2]  # insertion order, not sorted
    out = jtu.tree_unflatten(td, [10, 20])
    assert type(out) is collections.OrderedDict and list(out.items()) == [("b", 10), ("a", 20)]
    assert td != jtu.tree_structure(collections.OrderedDict(a=1, b=2))
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, td = jtu.tree_flatten(dd)
    assert leaves == [2, 1]
    out = jtu.tree_unflatten(td, [0, 0])
    assert type(out) is collections.defaultdict and out.default_factory is list
    p = jtu.tree_unflatten(jtu.tree_structure(Point(1, 2)), [3, 4])
    assert type(p) is Point and p == Point(3, 4)


def test_is_leaf():
    tree = [(1, 2), {"a": (3, 4)}]
    leaves = jtu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), (3, 4)]
    assert jtu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


# ---------------------------------------------------------------- treedefs

def test_treedef_hash_eq_and_counts():
    a = jtu.tree_structure((1, {"a": 2, "b": None}))
    b = jtu.tree_structure((np.ones(2), {"a": "x", "b": None}))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != jtu.tree_structure((1, {"a": 2, "b": 3}))
    assert (a == 5) is False
    assert a.num_leaves == 2 and a.num_nodes == 5  # tuple, leaf, dict, leaf, None


def test_treedef_methods():
    td = jtu.tree_structure([(1, 2), 3, {"a": 4}])
    kids = td.children()
    assert kids == jtu.treedef_children(td)
    assert [repr(k) for k in kids] == ["PyTreeDef((*, *))", "PyTreeDef(*)", "PyTreeDef({'a': *})"]
    assert kids == [jtu.tree_structure(v) for v in [(1, 2), 3, {"a": 4}]]
    assert td.node_data() == (list, None)
    assert jtu.tree_structure({"b": 1, "a": 2}).node_data() == (dict, ["a", "b"])
    assert jtu.tree_structure(Point(1, 2)).node_data() == (Point, None)
    assert jtu.tree_structure(1).node_data() is None
    assert jtu.tree_structure(None).node_data() == (type(None), None)
    assert td.flatten_up_to([(1, [9]), 3, {"a": {"z": 4}}]) == [1, [9], 3, {"z": 4}]
    inner = jtu.tree_structure((0, 0))
    assert jtu.tree_structure([1, 2]).compose(inner) == jtu.tree_structure([(1, 1), (2, 2)])
    walked = td.walk(lambda kids, data: ("node", kids), lambda x: x * 10, [1, 2, 3, 4])
    assert walked == ("node", (("node", (10, 20)), 30, ("node", (40,))))
    assert td.from_iterable_tree([[10, 11], 12, [13]]) == [(10, 11), 12, {"a": 13}]


def test_treedef_tuple_and_is_leaf():
    x, y = [1, 2, 3], {"a": 4, "b": 5}
    td = jtu.treedef_tuple([jtu.tree_structure(x), jtu.tree_structure(y)])
    assert td == jtu.tree_structure((x, y))
    assert jtu.treedef_is_leaf(jtu.tree_structure(1))
    assert not jtu.treedef_is_leaf(jtu.tree_structure([1, 2]))
    assert jtu.treedef_is_leaf(jtu.tree_structure(None))  # one node, as in JAX


def test_unflatten_errors():
    td = jtu.tree_structure((1, 2))
    with pytest.raises(ValueError, match=r"Too few leaves for PyTreeDef; expected 2, got 1"):
        jtu.tree_unflatten(td, [1])
    with pytest.raises(ValueError, match=r"Too many leaves for PyTreeDef; expected 2, got 3"):
        jtu.tree_unflatten(td, [1, 2, 3])
    with pytest.raises(TypeError, match="expects a PyTreeDef"):
        jtu.tree_unflatten([1, 2], td)
    assert jtu.tree_unflatten(td, iter([7, 8])) == (7, 8)


def test_treedef_pickles():
    for tree in [(1, {"a": [2, None]}), jtu.Partial(max, 1)]:
        td = jtu.tree_structure(tree)
        assert pickle.loads(pickle.dumps(td)) == td


def test_flatten_up_to_error_uses_jax_names():
    td = jtu.tree_structure((1, 2))
    with pytest.raises(ValueError) as info:
        td.flatten_up_to([1, 2])
    assert "PyTreeSpec" not in str(info.value)


class _Node:
    def __init__(self, kids, data):
        self.kids, self.data = kids, data

    def __repr__(self):
        return "Node"


jtu.register_pytree_node(_Node, lambda n: (n.kids, n.data), lambda d, k: _Node(k, d))


# flatten_up_to's messages on JAX 0.10.2, for a tree and a value it does not fit.
@pytest.mark.parametrize("tree, value, message", [
    ([1], [7, 8], "List arity mismatch: 2 != 1; list: [7, 8]."),
    ((1, 2), (7,), "Tuple arity mismatch: 1 != 2; tuple: (7,)."),
    ({"a": 1}, {"a": 7, "b": 8},
     "Dict key mismatch; expected keys: ['a']; present keys: ['a', 'b']."),
    ({"a": 1, "b": 2}, {"a": 7, "c": 3},
     "Dict key mismatch; expected keys: ['a', 'b']; present keys: ['a', 'c']."),
    ([1], {"a": 7}, "Expected list, got {'a': 7}."),
    ((1,), [7], "Expected tuple, got [7]."),
    ([{"a": 1}], [7], "Expected dict, got 7."),
    ([Point(1, 2)], [(1, 2)], "Expected named tuple, got (1, 2)."),
    ([Point(1, 2)], [collections.namedtuple("Other", "x y")(1, 2)],
     "Named tuple type mismatch: expected type: <class 'test_tree_util.Point'>, "
     "tuple: Other(x=1, y=2)."),
    ([_Node([1], 3)], [([1],)],
     "Custom node type mismatch: expected type: <class 'test_tree_util._Node'>, value: ([1],)."),
    ([_Node([1], 3)], [_Node([1], 4)], "Mismatch custom node data: 3 != 4; value: Node."),
    (None, [2], "Expected None, got [2].\n\nIn previous releases of JAX, flatten-up-to used to "
     "consider None to be a tree-prefix of non-None values. To obtain the previous behavior, "
     "you can usually write:\n  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, "
     "b, is_leaf=lambda x: x is None)"),
])
def test_flatten_up_to_errors_are_jax_messages(tree, value, message):
    with pytest.raises(ValueError) as info:
        jtu.tree_structure(tree).flatten_up_to(value)
    assert str(info.value) == message


def test_build_tree_and_all_leaves():
    td = jtu.tree_structure([(1, 2), {"a": 3, "b": 4}])
    assert build_tree(td, [[10, 11], [12, 13]]) == [(10, 11), {"a": 12, "b": 13}]
    with pytest.raises(ValueError, match="Arity mismatch"):
        build_tree(td, [[10, 11]])
    assert jtu.all_leaves(jtu.tree_leaves({"a": [1, 2, 3]}))
    assert not jtu.all_leaves([{"a": [1, 2, 3]}])
    assert not jtu.all_leaves([None])
    assert jtu.all_leaves([(1, 2)], is_leaf=lambda x: isinstance(x, tuple))


# ---------------------------------------------------------------- maps and reductions

def test_tree_map():
    assert jtu.tree_map(lambda x: x + 1, {"x": 7, "y": (42, None)}) == {"x": 8, "y": (43, None)}
    assert jtu.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == [[5, 7, 9], [6, 1, 2]]
    out = jtu.tree_map(lambda x: len(x), [(1, 2), (3,)], is_leaf=lambda x: isinstance(x, tuple))
    assert out == [2, 1]


def test_tree_map_mismatch_names_both_structures():
    with pytest.raises(ValueError) as info:
        jtu.tree_map(lambda a, b: a + b, (1, [2, 3]), (10, [20, 30, 40]))
    msg = str(info.value)
    assert "tree_map" in msg and "[1]" in msg
    assert "PyTreeDef((*, [*, *]))" in msg and "PyTreeDef((*, [*, *, *]))" in msg
    with pytest.raises(ValueError, match=r"(?s)\['a', 'b'\].*\['a', 'c'\]"):
        jtu.tree_map(lambda a, b: a, {"a": 1, "b": 2}, {"a": 1, "c": 2})
    with pytest.raises(ValueError, match="different types"):
        jtu.tree_map(lambda a, b: a, (1, 2), [1, 2])


def test_reductions():
    assert jtu.tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert jtu.tree_reduce(lambda a, b: a + b, [1, (2, 3)], 10) == 16
    assert jtu.tree_reduce(lambda a, b: a + b, [], 0) == 0
    with pytest.raises(TypeError):
        jtu.tree_reduce(lambda a, b: a + b, [])
    assert jtu.tree_reduce_associative(lambda a, b: a + b, [[1, 2], (3, 4, 5)]) == 15
    assert jtu.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        jtu.tree_reduce_associative(lambda a, b: a + b, [])
    assert jtu.tree_all([True, (1, {"a": True})])
    assert not jtu.tree_all([True, (0,)])
    assert jtu.tree_all([None])  # no leaves at all
    assert not jtu.tree_all([[]], is_leaf=lambda x: x == [])


def test_tree_transpose():
    tree = [(1, 2), (3, 4), (5, 6)]
    outer, inner = jtu.tree_structure([0, 0, 0]), jtu.tree_structure((0, 0))
    assert jtu.tree_transpose(outer, inner, tree) == ([1, 3, 5], [2, 4, 6])
    assert jtu.tree_transpose(outer, None, tree) == ([1, 3, 5], [2, 4, 6])
    with pytest.raises(TypeError, match="Mismatch"):
        jtu.tree_transpose(outer, jtu.tree_structure((0, 0, 0)), tree)


def test_tree_broadcast():
    assert jtu.tree_broadcast((1, 2), ((0, 0), {"a": 0})) == ((1, 1), {"a": 2})


# ---------------------------------------------------------------- key paths

def test_key_classes():
    assert repr(jtu.SequenceKey(0)) == "SequenceKey(idx=0)" and str(jtu.SequenceKey(0)) == "[0]"
    assert repr(jtu.DictKey("a")) == "DictKey(key='a')" and str(jtu.DictKey("a")) == "['a']"
    assert repr(jtu.GetAttrKey("x")) == "GetAttrKey(name='x')" and str(jtu.GetAttrKey("x")) == ".x"
    assert repr(jtu.FlattenedIndexKey(1)) == "FlattenedIndexKey(key=1)"
    assert str(jtu.FlattenedIndexKey(1)) == "[<flat index 1>]"
    assert jtu.DictKey("a") == jtu.DictKey("a") and hash(jtu.DictKey("a")) == hash(jtu.DictKey("a"))
    assert jtu.SequenceKey(0) != jtu.FlattenedIndexKey(0)


def test_paths_and_keystr():
    tree = {"a": [1, (2, Point(3, 4))], "b": None, "c": collections.OrderedDict(z=5)}
    pairs = jtu.tree_leaves_with_path(tree)
    assert [x for _, x in pairs] == jtu.tree_leaves(tree)
    strs = [jtu.keystr(p) for p, _ in pairs]
    assert strs == ["['a'][0]", "['a'][1][0]", "['a'][1][1].x", "['a'][1][1].y", "['c']['z']"]
    assert pairs[2][0] == (jtu.DictKey("a"), jtu.SequenceKey(1), jtu.SequenceKey(1),
                           jtu.GetAttrKey("x"))
    assert jtu.keystr(pairs[2][0], simple=True, separator="/") == "a/1/1/x"
    assert jtu.keystr((0, 1, "a", "b")) == "01ab"
    pairs, td = jtu.tree_flatten_with_path(tree)
    assert td == jtu.tree_structure(tree)
    dd = collections.defaultdict(int, {"b": 1, "a": 2})
    assert [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(dd)] == ["['a']", "['b']"]


def test_paths_with_is_leaf():
    tree = {"a": (1, 2), "b": [3]}
    pairs, td = jtu.tree_flatten_with_path(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert pairs == [((jtu.DictKey("a"),), (1, 2)), ((jtu.DictKey("b"), jtu.SequenceKey(0)), 3)]
    assert td == jtu.tree_structure(tree, is_leaf=lambda x: isinstance(x, tuple))
    by_path = lambda p, x: jtu.keystr(p) == "['b']"
    pairs, td = jtu.tree_flatten_with_path(tree, is_leaf=by_path, is_leaf_takes_path=True)
    assert [x for _, x in pairs] == [1, 2, [3]]
    assert td.num_leaves == 3


def test_tree_map_with_path():
    out = jtu.tree_map_with_path(lambda p, x, y: (jtu.keystr(p), x + y), {"a": 1, "b": [2]},
                                 {"a": 10, "b": [20]})
    assert out == {"a": ("['a']", 11), "b": [("['b'][0]", 22)]}
    with pytest.raises(ValueError, match="tree_map_with_path"):
        jtu.tree_map_with_path(lambda p, x, y: x, [1], [1, 2])


def test_flatten_one_level():
    kids, meta = jtu.flatten_one_level({"a": [1, 2], "b": {"c": 3}})
    assert kids == ([1, 2], {"c": 3}) and meta == ("a", "b")
    assert jtu.flatten_one_level(None) == ((), None)
    with pytest.raises(ValueError, match="can't tree-flatten"):
        jtu.flatten_one_level(1)
    pairs, meta = jtu.flatten_one_level_with_keys(Point(1, 2))
    assert pairs == [(jtu.GetAttrKey("x"), 1), (jtu.GetAttrKey("y"), 2)] and meta is Point
    assert jtu.is_tree_node(list) and jtu.is_tree_node(Point) and jtu.is_tree_node(type(None))
    assert not jtu.is_tree_node(int) and not jtu.is_tree_node(np.ndarray)
    assert jtu.default_registry.flatten_one_level(3) is None
    assert jtu.default_registry.flatten([1, (2,)])[0] == [1, 2]


# ---------------------------------------------------------------- registration

def _make_box():
    class Box:
        def __init__(self, a, b, meta):
            self.a, self.b, self.meta = a, b, meta

        def __eq__(self, other):
            return type(other) is type(self) and vars(self) == vars(other)
    return Box


def test_register_pytree_node():
    Box = _make_box()
    jtu.register_pytree_node(Box, lambda b: ((b.a, b.b), b.meta),
                             lambda meta, kids: Box(*kids, meta))
    tree = [Box(1, (2, 3), "m")]
    leaves, td = jtu.tree_flatten(tree)
    assert leaves == [1, 2, 3]
    assert repr(td) == "PyTreeDef([CustomNode(Box[m], [*, (*, *)])])"
    assert jtu.tree_unflatten(td, [4, 5, 6]) == [Box(4, (5, 6), "m")]
    assert td != jtu.tree_structure([Box(1, (2, 3), "other")])
    assert td.node_data() == (list, None) and td.children()[0].node_data() == (Box, "m")
    paths = [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(tree)]
    assert paths == ["[0][<flat index 0>]", "[0][<flat index 1>][0]", "[0][<flat index 1>][1]"]
    assert jtu.is_tree_node(Box)
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        jtu.register_pytree_node(Box, lambda b: ((), None), lambda m, k: Box())
    with pytest.raises(ValueError, match="different pytree metadata"):
        jtu.tree_map(lambda x, y: x, Box(1, 2, "m"), Box(1, 2, "n"))


def test_register_pytree_node_class():
    @jtu.register_pytree_node_class
    class Pair:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten(self):
            return (self.x, self.y), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    out = jtu.tree_map(lambda v: v * 2, Pair(1, [2]))
    assert type(out) is Pair and out.x == 2 and out.y == [4]
    assert repr(jtu.tree_structure(Pair(1, 2))) == "PyTreeDef(CustomNode(Pair[None], [*, *]))"


def test_register_with_keys():
    @jtu.register_pytree_with_keys_class
    class Special:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten_with_keys(self):
            return ((jtu.GetAttrKey("x"), self.x), (jtu.GetAttrKey("y"), self.y)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    pairs = jtu.tree_leaves_with_path({"s": Special(1, 2)})
    assert [(jtu.keystr(p), x) for p, x in pairs] == [("['s'].x", 1), ("['s'].y", 2)]
    assert jtu.tree_leaves(Special(1, (2, 3))) == [1, 2, 3]

    Box = _make_box()
    jtu.register_pytree_with_keys(
        Box, lambda b: (((jtu.DictKey("a"), b.a), (jtu.DictKey("b"), b.b)), b.meta),
        lambda meta, kids: Box(*kids, meta))
    assert jtu.keystr(jtu.tree_leaves_with_path(Box(1, 2, None))[1][0]) == "['b']"

    Box2 = _make_box()
    jtu.register_pytree_node(Box2, lambda b: ((b.a, b.b), b.meta),
                             lambda meta, kids: Box2(*kids, meta),
                             lambda b: (((jtu.GetAttrKey("a"), b.a), (jtu.GetAttrKey("b"), b.b)),
                                        b.meta))
    assert jtu.keystr(jtu.tree_leaves_with_path(Box2(1, 2, None))[0][0]) == ".a"


def test_register_static():
    @jtu.register_static
    class Tag(str):
        pass

    leaves, td = jtu.tree_flatten((1, Tag("add")))
    assert leaves == [1]
    assert jtu.tree_unflatten(td, [2]) == (2, "add")
    assert td != jtu.tree_structure((1, Tag("sub")))


def test_register_dataclass_inferred_and_explicit():
    @jtu.register_dataclass
    @dataclasses.dataclass
    class S:
        x: object
        y: object
        op: str = dataclasses.field(metadata=dict(static=True))

    leaves, td = jtu.tree_flatten(S(1, 2, "add"))
    assert leaves == [1, 2]
    assert repr(td) == "PyTreeDef(CustomNode(S[('add',)], [*, *]))"
    assert jtu.tree_unflatten(td, [5, 6]) == S(5, 6, "add")
    assert [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(S(1, [2], "a"))] == [
        ".x", ".y[0]"]

    @functools.partial(jtu.register_dataclass, data_fields=["a"], meta_fields=[],
                       drop_fields=["cache"])
    @dataclasses.dataclass
    class T:
        a: object
        cache: object = None

    assert jtu.tree_leaves(T(3)) == [3]
    assert jtu.tree_unflatten(jtu.tree_structure(T(3)), [4]) == T(4)


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class U:
        a: int
        b: int

    with pytest.raises(ValueError, match="Missing fields"):
        jtu.register_dataclass(U, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match="Unexpected fields"):
        jtu.register_dataclass(U, data_fields=["a", "b", "c"], meta_fields=[])
    with pytest.raises(ValueError, match="must not overlap"):
        jtu.register_dataclass(type("V", (), {}), data_fields=["a"], meta_fields=["a"])
    with pytest.raises(TypeError, match="both be specified"):
        jtu.register_dataclass(U, data_fields=["a", "b"])
    with pytest.raises(TypeError, match="not a dataclass"):
        jtu.register_dataclass(type("W", (), {}))


# ---------------------------------------------------------------- Partial

def test_partial_is_a_pytree():
    def add(a, b, scale=1):
        return (a + b) * scale

    p = jtu.Partial(add, 1, scale=3)
    assert isinstance(p, functools.partial) and p(2) == 9
    leaves, td = jtu.tree_flatten(p)
    assert leaves == [1, 3]
    assert repr(td) == f"PyTreeDef(CustomNode(Partial[{add!r}], [(*,), {{'scale': *}}]))"
    q = jtu.tree_unflatten(td, [10, 2])
    assert type(q) is jtu.Partial and q(0) == 20
    assert jtu.tree_structure(jtu.Partial(add, 5, scale=7)) == td
    assert jtu.tree_map(lambda x: x * 2, p)(0) == 12
    assert jtu.tree_leaves(jtu.Partial(add)) == []


def test_partial_of_partial_keeps_inner_args_static():
    # JAX boxes an inner partial instead of merging it: only the outer args are leaves.
    f = lambda a, b, c: a * 100 + b * 10 + c
    inner = jtu.Partial(f, 1)
    outer = jtu.Partial(inner, 2)
    assert jtu.tree_leaves(outer) == [2]
    assert outer(3) == 123
    assert outer.func.func is f and outer.func.args == (1,)
    rebuilt = jtu.tree_unflatten(jtu.tree_structure(outer), [5])
    assert rebuilt(3) == 153


# ---------------------------------------------------------------- jit helpers

def test_flatten_fast_path_agrees_with_optree():
    trees = [(np.ones(3), np.ones(3), np.ones(3)), [1, 2.0, "s"], {f"k{i}": i for i in range(10)},
             {}, (), [None, 1], {1: "a", 2: "b"}, {"a": None}, (Point(1, 2), 3)]
    for tree in trees:
        for _ in range(2):  # second round hits the learned fast path
            leaves, td = tu.flatten(tree)
            ref_leaves, ref = optree.tree_flatten(tree, none_is_leaf=False, namespace="pyjax")
            assert leaves == ref_leaves and td._spec == ref
            assert td == jtu.tree_structure(tree)


def test_fast_path_forgets_types_registered_later():
    Late = _make_box()
    tree = (Late(1, 2, None), 3)
    assert tu.flatten(tree)[0] == [tree[0], 3]
    assert tu.flatten(tree)[0] == [tree[0], 3]  # learned Late as a leaf type
    jtu.register_pytree_node(Late, lambda b: ((b.a, b.b), b.meta),
                             lambda meta, kids: Late(*kids, meta))
    assert tu.flatten(tree)[0] == [1, 2, 3]
    assert tu.flatten({"k": tree[0]})[0] == [1, 2]


def test_dict_fast_path_with_equal_keys_of_other_types():
    assert tu.flatten({"a": 1, "b": 2})[1] == tu.flatten({"b": 5, "a": 6})[1]
    leaves, td = tu.flatten({1: "x"})
    leaves, td2 = tu.flatten({True: "x"})
    assert type(next(iter(jtu.tree_unflatten(td2, [0])))) is bool


def test_prefix_broadcast():
    full = jtu.tree_structure(((1, 2), {"a": 1, "b": None, "c": [3]}))
    assert tu.prefix_broadcast(0, full, "in_axes") == [0, 0, 0, 0]
    assert tu.prefix_broadcast(None, full, "in_axes") == [None] * 4
    assert tu.prefix_broadcast((1, None), full, "in_axes") == [1, 1, None, None]
    assert tu.prefix_broadcast(((0, None), {"a": 1, "b": None, "c": 2}), full, "in_axes") == [
        0, None, 1, 2]
    with pytest.raises(ValueError, match=r"^in_axes specification must be a tree prefix"):
        tu.prefix_broadcast((0, None, 1), full, "in_axes")
    with pytest.raises(ValueError, match="out_axes"):
        tu.prefix_broadcast({"z": 0}, full, "out_axes")


def test_public_names_match_jax():
    jax_names = {
        "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
        "PyTreeDef", "SequenceKey", "all_leaves", "default_registry", "flatten_one_level",
        "flatten_one_level_with_keys", "is_tree_node", "keystr", "register_dataclass",
        "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
        "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
        "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
        "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
        "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
        "treedef_is_leaf", "treedef_tuple"}
    assert jax_names <= set(jtu.__all__)
    assert all(hasattr(jtu, n) for n in jtu.__all__)


def test_jax_tree_short_names_and_static_fields():
    import dataclasses

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: jax.Array
        y: jax.Array
        op: str = jax.tree.static(default="add")

    m = Op(x=jnp.ones(3), y=jnp.arange(3))
    leaves, treedef = jax.tree.flatten(m)
    assert str(treedef) == "PyTreeDef(CustomNode(Op[('add',)], [*, *]))" and len(leaves) == 2
    assert jax.tree.unflatten(treedef, leaves).op == "add"
    assert jax.tree.map(lambda v: v + 1, [1, (2, {"a": 3})]) == [2, (3, {"a": 4})]
    assert jax.tree.reduce(lambda a, b: a + b, [1, 2, 3]) == 6 and jax.tree.all([True, 1])
    assert jax.tree.leaves({"b": 2, "a": 1}) == [1, 2]
    assert str(jax.tree.structure((1, [2]))) == "PyTreeDef((*, [*]))"
    assert jax.tree.map_with_path(lambda p, v: (jax.tree_util.keystr(p), v), {"a": 1}) == \
        {"a": ("['a']", 1)}


def test_ravel_pytree_round_trips_leaves_in_their_dtypes():
    from pyjax.flatten_util import ravel_pytree
    flat, unravel = ravel_pytree({"a": jnp.ones(2), "b": (jnp.int32(3), 2.0)})
    assert flat.tolist() == [1.0, 1.0, 3.0, 2.0] and flat.dtype == jnp.float32
    back = unravel(flat)
    assert back["a"].tolist() == [1.0, 1.0] and back["b"][0].dtype == jnp.int32
    assert jax.grad(lambda f: jnp.sum(unravel(f)["a"] ** 2))(flat).tolist() == [2, 2, 0, 0]
    assert jax.jit(lambda t: ravel_pytree(t)[0])({"x": jnp.ones((2, 2)), "y": 1}).shape == (5,)
    empty, unravel_empty = ravel_pytree([])
    assert empty.shape == (0,) and unravel_empty(empty) == []
    assert ravel_pytree([jnp.ones(2, jnp.int32), jnp.ones(1, jnp.int8)])[0].dtype == jnp.int32
    with pytest.raises(TypeError, match="expected dtype float32"):
        unravel(jnp.ones(4, jnp.int32))
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        unravel(jnp.ones(5))


_Pair = collections.namedtuple("_Pair", "a b")


@pytest.mark.parametrize("example", [
    (1.0, 2), ([(1.0, 2.0), (3.0, 4.0)], 5.0), ({"w": 1.0, "b": [2.0, None]}, (), 3.0),
    ({"z": {"y": 1.0, "x": 2.0}, "a": {"c": 3.0, "b": 4.0}},), (_Pair(1.0, 2.0), [3.0]), (),
    ({}, [], None),
])
def test_structure_check_takes_trees_apart_in_flatten_order(example):
    # what jit's cached calls run on their arguments
    leaves = tu.tree_leaves(example)
    check = tu.StructureCheck(example, (float, int))
    assert check(example) == leaves
    if example:   # another structure does not fit
        assert check(example[:-1]) is None
        assert check(list(example)) is None


class _Box:
    """A registered node whose aux data (its label) is part of the structure."""

    def __init__(self, label, *items):
        self.label, self.items = label, items

    def __repr__(self):
        return f"_Box({self.label!r}, *{self.items!r})"


tu.register_pytree_node(_Box, lambda b: (b.items, b.label), lambda aux, kids: _Box(aux, *kids))


def test_structure_check_walks_registered_nodes_and_compares_their_aux_data():
    example = [_Box("a", 1.0, {"k": 2.0}), _Pair(3.0, _Box("b"))]
    check = tu.StructureCheck(example, (float,))
    assert check.steps is not None   # walked in a loop, not flattened by optree
    assert check(example) == tu.tree_leaves(example) == [1.0, 2.0, 3.0]
    assert check([_Box("a", 4.0, {"k": 5.0}), _Pair(6.0, _Box("b"))]) == [4.0, 5.0, 6.0]
    assert check([_Box("other", 1.0, {"k": 2.0}), _Pair(3.0, _Box("b"))]) is None
    assert check([_Box("a", 1.0), _Pair(3.0, _Box("b"))]) is None
    assert check([_Box("a", 1.0, {"j": 2.0}), _Pair(3.0, _Box("b"))]) is None
    assert check([_Box("a", 1.0, {"k": 2.0, "j": 0.0}), _Pair(3.0, _Box("b"))]) is None
    assert check([_Box("a", 1.0, {"k": 2.0}), (3.0, _Box("b"))]) is None   # not the namedtuple


def test_structure_check_takes_dicts_of_leaves_in_their_parents_step():
    # a list of layers' parameter dicts, as training steps pass them
    example = ([{"w": 1.0, "b": 2.0}, {"w": 3.0, "b": 4.0, "s": 5.0}], {"x": {"k": 6.0}})
    check = tu.StructureCheck(example, (float,))
    assert check(example) == tu.tree_leaves(example) == [2.0, 1.0, 4.0, 5.0, 3.0, 6.0]
    assert check(([{"b": 7.0, "w": 8.0}, {"s": 9.0, "w": 0.5, "b": 1.5}], {"x": {"k": 2.5}})) \
        == [7.0, 8.0, 1.5, 9.0, 0.5, 2.5]
    for other in [
            ([{"w": 1.0, "b": 2.0}, {"w": 3.0, "b": 4.0}], {"x": {"k": 6.0}}),   # a key less
            ([{"w": 1.0, "c": 2.0}, {"w": 3.0, "b": 4.0, "s": 5.0}], {"x": {"k": 6.0}}),
            ([{"w": 1.0, "b": 2.0}, (3.0, 4.0, 5.0)], {"x": {"k": 6.0}}),   # not a dict
            ([collections.OrderedDict(w=1.0, b=2.0), {"w": 3.0, "b": 4.0, "s": 5.0}],
             {"x": {"k": 6.0}}),
            ([{"w": 1.0, "b": 2.0}, {"w": 3.0, "b": 4.0, "s": 5.0}],
             {"x": collections.defaultdict(list, k=6.0)}),
            ([{"w": 1.0, "b": 2.0}, {"w": 3.0, "b": 4.0, "s": 5.0}], {"y": {"k": 6.0}}),
            ([{"w": 1.0, "b": 2.0}], {"x": {"k": 6.0}})]:
        assert check(other) is None, other


def test_structure_check_leaves_other_nodes_to_optree_and_walks_deep_trees():
    example = (collections.OrderedDict(b=1.0, a=2.0), [3.0])
    check = tu.StructureCheck(example, (float,))
    assert check.steps is None   # flattened by optree
    assert check(example) == [1.0, 2.0, 3.0]
    assert check((collections.OrderedDict(a=2.0, b=1.0), [3.0])) is None   # other order
    deep = 1.0
    for _ in range(990):   # deeper than Python's recursion limit lets a walk go
        deep = [deep]
    check = tu.StructureCheck(deep, (float,))
    assert check(deep) == [1.0]
    assert check([[2.0]]) is None
    assert check(deep[0]) is None


class _Checked(collections.namedtuple("_Checked", "a b")):
    """A namedtuple whose constructor runs: unflatten calls it, so the builder must."""
    made = 0

    def __new__(cls, a, b):
        _Checked.made += 1
        return super().__new__(cls, a, b)


@pytest.mark.parametrize("tree", [
    1.0, None, (), [], {}, (1.0,), {"b": 1.0, "a": {"z": 2.0, "y": [3.0, None, ()]}},
    {2: 1.0, 1: 2.0}, {(1, 2): 1.0, (0, 5): 2.0},
    _Pair(1.0, [2.0, _Pair(3.0, None)]), [_Box("a", 1.0, {"k": 2.0}), _Box("b")],
    collections.OrderedDict(b=1.0, a=2.0), collections.deque([1.0, (2.0,)]),
    collections.defaultdict(list, {"y": 1.0, "x": [2.0]}),
])
def test_tree_builder_rebuilds_trees_as_unflatten_does(tree):
    leaves, treedef = tu.tree_flatten(tree)
    new_leaves = [object() for _ in leaves]
    built, want = tu.tree_builder(treedef)(new_leaves), treedef.unflatten(new_leaves)
    assert type(built) is type(want)
    assert tu.tree_structure(built) == treedef
    assert tu.tree_leaves(built) == new_leaves   # objects are leaves
    assert repr(tu.tree_map(id, built)) == repr(tu.tree_map(id, want))   # same key order


def test_tree_builder_calls_constructors_and_handles_deep_trees():
    treedef = tu.tree_structure(_Checked(1.0, 2.0))
    before = _Checked.made
    assert tu.tree_builder(treedef)([3.0, 4.0]) == _Checked(3.0, 4.0)
    assert _Checked.made == before + 2
    deep = 1.0
    for _ in range(990):
        deep = (deep,)
    treedef = tu.tree_structure(deep)
    built = tu.tree_builder(treedef)([2.0])
    assert tu.tree_structure(built) == treedef and tu.tree_leaves(built) == [2.0]


def test_pytrees_survive_atexit_callbacks_run_by_hand():
    # optree's atexit callback empties its registry; chex's tests run atexit's callbacks
    # mid-process, after which JAX's pytrees still work. The real exit still runs it.
    import os
    import subprocess
    import sys

    from repo_paths import REPO_ROOT
    code = ("import atexit, pyjax as jax\n"
            "atexit._run_exitfuncs()\n"
            "print(jax.tree.leaves({'a': (1, [2, None])}), jax.tree.structure((1, 2)),\n"
            "      float(jax.jit(lambda t: t[0] + t[1])((1.0, 2.0))))\n")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[1, 2] PyTreeDef((*, *)) 3.0"
