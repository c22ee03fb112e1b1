"""Pytrees (level 1): the node registry, treedefs, flatten/unflatten, key paths, Partial.
Built on optree in a private namespace with JAX's conventions (None is an empty node).
May import only pyjax._src.util, pyjax._src.errors, numpy, optree and the stdlib."""
from __future__ import annotations

import atexit
import collections
import dataclasses
import functools
import operator
import re
import sys
import threading
import types
import warnings
from typing import Hashable, TypeVar


def _atexit_callbacks() -> list:
    """The callbacks atexit holds. It has no API to list them; unregister compares each
    one to its argument, whose __eq__ records them and matches none."""
    seen = []

    class Probe:
        __hash__ = None

        def __eq__(self, other):
            seen.append(other)
            return False

    atexit.unregister(Probe())
    return seen


# optree's import registers an atexit callback that empties its node registry, builtins
# included (a tuple then flattens as a leaf). Run by hand mid-process (atexit's
# _run_exitfuncs, as chex's tests do) it would break every later flatten, where JAX's
# pytrees go on working: see _clear_registry_only_at_exit.
_callbacks_before_optree = None if "optree" in sys.modules else _atexit_callbacks()

import optree  # noqa: E402

_NS = "pyjax"  # optree namespace: our registrations never leak into other optree users
_NoneType = type(None)
_BUILTIN_NODES = frozenset({tuple, list, dict, _NoneType, collections.OrderedDict,
                            collections.defaultdict, collections.deque})



def _clear_registry_only_at_exit(callbacks_before):
    """Swaps optree's atexit callback (the one its import added) for one that runs it
    only at the interpreter's exit, when the main thread has stopped. Not known (optree
    imported before pyjax): left as it is."""
    if callbacks_before is None:
        return
    for clear in _atexit_callbacks():
        if all(clear is not old for old in callbacks_before):
            atexit.unregister(clear)
            atexit.register(_at_interpreter_exit(clear))


def _at_interpreter_exit(clear):
    def clear_at_interpreter_exit():
        if not threading.main_thread().is_alive():
            clear()
    return clear_at_interpreter_exit


_clear_registry_only_at_exit(_callbacks_before_optree)
del _callbacks_before_optree


# ---------------------------------------------------------------- key entries

@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """Path entry for an element of a tuple or list."""
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """Path entry for a value of a dict."""
    key: Hashable

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """Path entry for an attribute (namedtuple fields, dataclass fields)."""
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """Path entry for the i-th child of a node registered without keys."""
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


KeyEntry = TypeVar("KeyEntry", bound=Hashable)
KeyPath = tuple  # tuple[KeyEntry, ...]


def _simple_str(key):
    for cls, attr in ((SequenceKey, "idx"), (DictKey, "key"), (GetAttrKey, "name"),
                      (FlattenedIndexKey, "key")):
        if type(key) is cls:
            return str(getattr(key, attr))
    return str(key)


def keystr(keys, *, simple=False, separator=""):
    """Pretty-prints a key path, e.g. "['a'][0].attr" (or "a/0/attr" when simple)."""
    return separator.join(map(_simple_str if simple else str, keys))


# ---------------------------------------------------------------- treedefs

def _jax_aux(t, data):
    # optree keeps OrderedDict/defaultdict keys in lists; JAX's aux data are tuples.
    if t is collections.OrderedDict:
        return tuple(data)
    if t is collections.defaultdict:
        return (data[0], tuple(data[1]))
    return None if t in (tuple, list, _NoneType) else data


def _is_namedtuple_node(t):
    return t not in _registry and optree.is_namedtuple_class(t)


def _render(t, data, kids):
    body = ", ".join(kids)
    if t is tuple:
        return f"({body},)" if len(kids) == 1 else f"({body})"
    if t is list:
        return f"[{body}]"
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(data, kids)) + "}"
    if t is _NoneType:
        return "None"
    if _is_namedtuple_node(t):
        return f"CustomNode(namedtuple[{t.__name__}], [{body}])"
    return f"CustomNode({t.__name__}[{_jax_aux(t, data)}], [{body}])"


def _derived_dict_nodes(*treedefs):
    """The _dict_nodes of a treedef built from the specs of `treedefs`: () if none of
    them needs its dicts sorted, else None (not known: their indices move)."""
    return () if all(td._dict_nodes == () for td in treedefs) else None


def _jaxify(msg):
    return (msg.replace("PyTreeSpec", "PyTreeDef").replace(f", namespace={_NS!r}", "")
            .replace("CustomTreeNode(", "CustomNode("))


# optree's flatten_up_to messages, and JAX's words for the same mismatch.
_UP_TO_MESSAGES = [(re.compile(pattern, re.DOTALL), replacement) for pattern, replacement in [
    (r"^(list|tuple) arity mismatch; expected: (\d+), got: (\d+); ",
     lambda m: f"{m[1].capitalize()} arity mismatch: {m[3]} != {m[2]}; "),
    (r"^dictionary key mismatch; expected key\(s\): (\[.*?\]), got key\(s\): (\[.*?\]),"
     r" .*$", lambda m: f"Dict key mismatch; expected keys: {m[1]}; present keys: {m[2]}."),
    (r"^Expected an instance of dict, collections\.OrderedDict, or collections\.defaultdict,"
     r" got ", lambda m: "Expected dict, got "),
    (r"^Expected an instance of collections\.namedtuple, got ",
     lambda m: "Expected named tuple, got "),
    (r"^Expected an instance of (\w+), got ", lambda m: f"Expected {m[1]}, got "),
    (r"^namedtuple type mismatch; expected type: (.*?), got type: .*?; tuple: ",
     lambda m: f"Named tuple type mismatch: expected type: {m[1]}, tuple: "),
    (r"^Custom node type mismatch; expected type: (.*?), got type: .*?; value: ",
     lambda m: f"Custom node type mismatch: expected type: {m[1]}, value: "),
    (r"^Mismatch custom node data; expected: (.*?), got: (.*?); value: ",
     lambda m: f"Mismatch custom node data: {m[1]} != {m[2]}; value: "),
    (r"^(Expected None, got .*)$",
     lambda m: f"{m[1]}\n\nIn previous releases of JAX, flatten-up-to used to consider None "
               "to be a tree-prefix of non-None values. To obtain the previous behavior, you "
               "can usually write:\n  jax.tree.map(lambda x, y: None if x is None else "
               "f(x, y), a, b, is_leaf=lambda x: x is None)"),
]]


def _up_to_message(msg):
    """JAX's message for a flatten_up_to mismatch that optree reported as `msg`."""
    msg = _jaxify(msg)
    for pattern, replacement in _UP_TO_MESSAGES:
        new, n = pattern.subn(replacement, msg, count=1)
        if n:
            return new
    return msg


class PyTreeDef:
    """The structure of a pytree: hashable, comparable, and able to rebuild trees.

    Wraps an optree PyTreeSpec; the repr, error messages and the order of rebuilt dicts
    differ (JAX's)."""

    __slots__ = ("_spec", "_hash", "_dict_nodes", "_array_nodes")

    def __init__(self, spec, dict_nodes=None):
        self._spec = spec
        self._hash = None
        self._array_nodes = None   # (_array_nodes_version, whether it holds one) once asked
        # Where _spec's dicts are among its nodes (see _dict_node_indices): None when not
        # known yet, () once there are none or _spec rebuilds them key-sorted.
        self._dict_nodes = dict_nodes

    def _rebuilder(self):
        """The spec to rebuild trees with: every dict comes back in sorted key order, as
        on JAX (optree's spec rebuilds a dict in the insertion order of the dict it was
        flattened from; the two specs are equal and hash alike)."""
        if self._dict_nodes != ():
            self._spec = _sorted_dicts(self._spec, self._dict_nodes)
            self._dict_nodes = ()
        return self._spec

    def __hash__(self):
        # Cached: jit hashes treedefs on every call and optree rehashes each time.
        h = self._hash
        if h is None:
            h = self._hash = hash(self._spec)
        return h

    def __eq__(self, other):
        if type(other) is not PyTreeDef:
            return NotImplemented
        return self is other or self._spec == other._spec

    def __repr__(self):
        leaves = ["*"] * self._spec.num_leaves
        return f"PyTreeDef({self._spec.walk(leaves, _render, None)})"

    @property
    def num_leaves(self):
        return self._spec.num_leaves

    @property
    def num_nodes(self):
        return self._spec.num_nodes

    def unflatten(self, leaves):
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        try:
            return self._rebuilder().unflatten(leaves)
        except ValueError as e:
            n, want = len(leaves), self._spec.num_leaves
            if n == want:
                raise
            few = "few" if n < want else "many"
            raise ValueError(f"Too {few} leaves for PyTreeDef; expected {want}, got {n}.\n"
                             f"  treedef: {self}") from e

    def flatten_up_to(self, tree):
        try:
            return self._spec.flatten_up_to(tree)
        except ValueError as e:
            raise ValueError(_up_to_message(str(e))) from None

    def children(self):
        return [PyTreeDef(c, _derived_dict_nodes(self)) for c in self._spec.children()]

    def node_data(self):
        """(type, aux data) of the root node, or None for a leaf (JAX's conventions)."""
        spec = self._spec
        if spec.num_nodes == 1 and spec.num_leaves == 1:
            return None
        t, data = spec.one_level().walk([None] * spec.num_children,
                                        lambda t, d, _: (t, d), None)
        if t is dict:
            return t, list(data)
        return t, (None if _is_namedtuple_node(t) else _jax_aux(t, data))

    def compose(self, inner):
        return PyTreeDef(self._spec.compose(inner._spec),
                         _derived_dict_nodes(self, inner))

    def walk(self, f_node, f_leaf, leaves):
        """Rebuilds bottom-up with f_node(children_tuple, node_data) and f_leaf(leaf)."""
        return self._spec.walk(list(leaves), lambda t, d, kids: f_node(kids, d), f_leaf)

    def from_iterable_tree(self, xs):
        return build_tree(self, xs)


# ---------------------------------------------------------------- flatten

# Fast path for the shapes jit sees most (a flat tuple/list/dict of arrays): optree
# costs ~0.15us per leaf, a type check in Python much less. Leaf types are learned
# from optree's own answers, and forgotten when a type gets registered as a node.
_leaf_types = {int, float, complex, bool, str}
_seq_defs = {}   # (tuple|list, n) -> PyTreeDef of n leaves
_dict_defs = {}  # sorted str keys -> PyTreeDef of a dict of leaves
_CACHE_MAX = 4096


def _learn(tree, leaves, treedef):
    if max(len(_leaf_types), len(_seq_defs), len(_dict_defs)) > _CACHE_MAX:
        return
    t = type(tree)
    if t is dict:
        if any(type(k) is not str for k in tree):
            return  # 1 == 1.0 == True: only str keys make an unambiguous cache key
        _dict_defs[tuple(sorted(tree))] = treedef
    else:
        _seq_defs[(t, len(tree))] = treedef
    _leaf_types.update(type(x) for x in leaves)


def flatten(tree):
    """(leaves, treedef) with no is_leaf: the cheapest flatten, used on every jit call."""
    t = type(tree)
    if t is tuple or t is list:
        known = _leaf_types
        for x in tree:
            if type(x) not in known:
                break
        else:
            td = _seq_defs.get((t, len(tree)))
            if td is not None:
                return list(tree), td
    elif t is dict:
        try:
            keys = tuple(sorted(tree))
        except TypeError:
            keys = None  # never a cache key: falls through to optree
        td = _dict_defs.get(keys)
        if td is not None:
            leaves = [tree[k] for k in keys]
            known = _leaf_types
            for x in leaves:
                if type(x) not in known:
                    break
            else:
                return leaves, td
    leaves, td = _optree_flatten(tree, None)
    if ((t is tuple or t is list or t is dict) and len(leaves) == len(tree)
            and td.num_nodes == len(leaves) + 1):
        _learn(tree, leaves, td)
    return leaves, td


def _optree_flatten(tree, is_leaf):
    """(leaves, treedef) by optree's flatten, with JAX's errors: a custom node whose
    flatten function returns no (children, aux_data) tuple, and dict keys that cannot be
    sorted, are ValueErrors."""
    try:
        leaves, spec = optree.tree_flatten(tree, is_leaf, none_is_leaf=False, namespace=_NS)
    except (TypeError, RuntimeError):
        _check_custom_flattens(tree, is_leaf)
        raise
    try:
        known = _known_specs.get(spec)
    except TypeError:   # unhashable aux data: check every time
        known, cacheable = None, False
    else:
        cacheable = len(_known_specs) < _CACHE_MAX
    if known is None:
        known = [_dict_node_indices(spec.__getstate__()[0]), None]
        if cacheable:
            _known_specs[spec] = known
    treedef = PyTreeDef(spec, known[0])
    treedef._array_nodes = known[1]
    return leaves, treedef


# PyTreeSpec -> [its _dict_node_indices, its _holds_array_node answer (None until asked)]:
# one lookup per flatten, as a PyTreeSpec's hash walks all its aux data.
# PyTreeSpec.__getstate__ (optree's pickle format, stable within its pinned 0.16) gives
# one tuple per node: (kind, arity, node data, ...), a dict's keys in insertion order last.
# Its node data hold the keys sorted, the order JAX rebuilds dicts in; optree rebuilds
# them in insertion order. Equal specs have equal node kinds at equal indices.
_known_specs: dict = {}
_DICT, _DEFAULTDICT = int(optree.PyTreeKind.DICT), int(optree.PyTreeKind.DEFAULTDICT)


def _dict_node_indices(nodes):
    """The indices of the dict and defaultdict nodes among a spec's state `nodes`, as a
    tuple; raises a ValueError if a dict's keys cannot be sorted (JAX's error)."""
    found = []
    for i, node in enumerate(nodes):
        kind = node[0]
        if kind == _DICT or kind == _DEFAULTDICT:
            keys = node[2] if kind == _DICT else node[2][1]
            try:
                sorted(keys)
            except TypeError as err:
                raise ValueError(
                    f"Comparator raised exception while sorting pytree dictionary keys: "
                    f"the keys {list(keys)!r:.200} cannot be ordered ({err}). A dict in a "
                    "pytree needs keys of one comparable type (e.g. all str); use an "
                    "OrderedDict to keep keys in insertion order instead.") from None
            found.append(i)
    return tuple(found)


def _sorted_dicts(spec, dict_nodes):
    """`spec`, or its equal that rebuilds every dict and defaultdict in sorted key order.
    `dict_nodes`: _dict_node_indices of its nodes, or None if not known."""
    nodes, *rest = spec.__getstate__()
    if dict_nodes is None:
        dict_nodes = _dict_node_indices(nodes)
    fixed = list(nodes)
    for i in dict_nodes:
        node = nodes[i]
        keys = node[2] if node[0] == _DICT else node[2][1]
        if node[-1] != keys:
            fixed[i] = (*node[:-1], list(keys))
    if fixed == list(nodes):
        return spec
    out = optree.PyTreeSpec.__new__(optree.PyTreeSpec)
    out.__setstate__((tuple(fixed), *rest))
    return out


def _check_custom_flattens(tree, is_leaf):
    """Raises a ValueError naming the registered flatten function inside `tree` that
    returns something other than a (children, aux_data) tuple; returns if there is none."""
    stack = [tree]
    while stack:
        x = stack.pop()
        if is_leaf is not None and is_leaf(x):
            continue
        t = type(x)
        if t in _registry:
            out = _registry[t][0](x)
            if type(out) is not tuple or len(out) not in (2, 3):
                raise ValueError(
                    f"The to_iterable function for a custom PyTree node should return a "
                    f"(children, aux_data) tuple, got {out!r:.100}: fix the flatten function "
                    f"registered for {t.__qualname__}.")
            try:
                stack.extend(out[0])
            except TypeError:
                raise ValueError(
                    f"The flatten function registered for {t.__qualname__} returned "
                    f"children {out[0]!r:.100}, which is not an iterable of subtrees.") \
                    from None
            continue
        try:
            kids = optree.tree_flatten_one_level(x, none_is_leaf=False, namespace=_NS)[0]
        except ValueError:
            continue   # a leaf
        stack.extend(kids)


# ---------------------------------------------------------------- jit's trees

class StructureCheck:
    """Takes apart trees of one structure (an example's) into their leaves, in
    flatten's order; returns None for a tree of another structure. What jit's cached
    calls run on their arguments, so per-node Python work here is paid on every call:
    trees of tuples, lists, namedtuples, dicts with str keys, None, registered custom
    nodes and leaves of `leaf_types` are walked by a loop over precomputed steps (optree's
    flatten builds a new treespec each call, about 1 us a node; this loop a fraction of
    it); trees holding other nodes (OrderedDict, structseq, ...) are flattened by optree
    and their treedefs compared. Plain objects only: no generated code, no cycles."""

    __slots__ = ("steps", "spec")

    def __init__(self, example, leaf_types):
        self.spec = flatten(example)[1]._spec
        self.steps = _walk_steps(example, leaf_types)

    def __call__(self, tree):
        steps = self.steps
        if steps is None:
            leaves, spec = optree.tree_flatten(tree, None, none_is_leaf=False, namespace=_NS)
            return leaves if spec == self.spec else None
        leaves = []
        take_leaf, take_leaves = leaves.append, leaves.extend
        pending = [tree]
        next_node, push_children = pending.pop, pending.extend
        for node_type, size, select, aux, leaf_children in steps:   # depth first
            node = next_node()
            if node_type is None:             # a leaf (the runner checks its kind)
                take_leaf(node)
                continue
            if type(node) is not node_type:
                return None
            if node_type is dict:             # its values in sorted key order
                if len(node) != size:
                    return None
                try:
                    children = select(node)
                except KeyError:
                    return None
            elif select is None:              # a tuple, list or namedtuple; None
                if node is None:
                    continue
                if len(node) != size:
                    return None
                children = node
            else:                             # a registered node: its flatten function
                children = _custom_children(node, select, aux)
                if children is None or len(children) != size:
                    return None
            if leaf_children is True:
                take_leaves(children)
            elif leaf_children:               # dicts of leaves (layers' parameters)
                for child, (child_size, child_select) in zip(children, leaf_children):
                    if type(child) is not dict or len(child) != child_size:
                        return None
                    try:
                        take_leaves(child_select(child))
                    except KeyError:
                        return None
            else:
                push_children(children[::-1])
        return leaves


def _custom_children(node, flatten_func, aux):
    """The children of a registered node, or None when its aux data differ from `aux`
    (or its flatten function fails: jit's general path then raises the error)."""
    try:
        children, node_aux = flatten_func(node)[:2]
        if node_aux is aux or node_aux == aux:
            return tuple(children)
    except Exception:
        pass
    return None


def _item_getter(keys):
    """A function dict -> its values at `keys`, as a tuple (itemgetter returns a bare
    value for one key and refuses none)."""
    if not keys:
        return lambda d: ()
    if len(keys) == 1:
        key = keys[0]
        return lambda d: (d[key],)
    return operator.itemgetter(*keys)


def _walk_steps(example, leaf_types):
    """StructureCheck's steps for trees shaped like `example`, one per node depth first
    (a node whose children are all leaves, or all dicts of leaves, takes them in one step):
    (type, size, select, aux, leaf_children), type None for a leaf; select is None for a
    tuple, list, namedtuple or None, the getter of its values in sorted key order for a
    dict, the flatten function of a registered node (whose aux data must equal `aux`);
    leaf_children is True when the children are leaves, and when they are all dicts of
    leaves, per child (its size, the getter of its values): the step takes their leaves.
    None if a node is of another kind."""
    steps, pending = [], [example]
    while pending:
        node = pending.pop()
        t = type(node)
        select = aux = None
        if isinstance(node, leaf_types):
            steps.append((None, 0, None, None, False))
            continue
        if t in _registry:
            children, aux = _registry[t][0](node)[:2]
            select, children = _registry[t][0], list(children)
        elif t is dict and all(type(k) is str for k in node):
            order = sorted(node)
            children, select = [node[k] for k in order], _item_getter(order)
        elif t is tuple or t is list or optree.is_namedtuple_class(t):
            children = list(node)
        elif node is None:
            children = []
        else:
            return None
        leaf_children = bool(children) and all(isinstance(c, leaf_types) for c in children)
        if not leaf_children and children and all(_is_leaf_dict(c, leaf_types)
                                                  for c in children):
            # taken in the same step: a step costs ~3x a dict's check
            leaf_children = tuple((len(c), _item_getter(sorted(c))) for c in children)
        steps.append((t, len(children), select, aux, leaf_children))
        if not leaf_children:
            pending.extend(reversed(children))
    return tuple(steps)


def _is_leaf_dict(node, leaf_types) -> bool:
    """Whether `node` is a non-empty dict with str keys whose values are all leaves."""
    return (type(node) is dict and bool(node) and all(type(k) is str for k in node)
            and all(isinstance(v, leaf_types) for v in node.values()))


def tree_builder(treedef):
    """The function that builds a tree of structure `treedef` from a list of exactly its
    number of leaves: optree's own unflatten, in C (what jit's cached calls run on their
    results; PyTreeDef.unflatten's checks and messages are for users' lists)."""
    return treedef._rebuilder().unflatten


def tree_flatten(tree, is_leaf=None):
    """Flattens a pytree into (leaves, treedef); None is an empty node, dict keys sorted."""
    if is_leaf is None:
        return flatten(tree)
    if not callable(is_leaf):
        raise TypeError(f"is_leaf must be a callable (a predicate on subtrees) or None, got "
                        f"{is_leaf!r}")
    return _optree_flatten(tree, is_leaf)


def tree_unflatten(treedef, leaves):
    """Rebuilds the pytree of structure `treedef` from a flat iterable of leaves."""
    if type(treedef) is not PyTreeDef:
        raise TypeError(f"tree_unflatten expects a PyTreeDef, got {type(treedef).__name__}: "
                        f"{treedef!r}. Note the argument order: (treedef, leaves).")
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def treedef_tuple(treedefs):
    specs = [td._spec for td in treedefs]
    return PyTreeDef(optree.treespec_tuple(specs, none_is_leaf=False, namespace=_NS),
                     _derived_dict_nodes(*treedefs))


def treedef_children(treedef):
    return treedef.children()


def treedef_is_leaf(treedef):
    # JAX's definition: one node, so the structure of None counts as a leaf too.
    return treedef.num_nodes == 1


def all_leaves(iterable, is_leaf=None):
    """True when every element of `iterable` is a leaf (not a pytree node)."""
    items = list(iterable)
    leaves = user_tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def is_tree_node(typ):
    """True when instances of `typ` are pytree nodes (builtin, namedtuple or registered)."""
    if typ in _array_nodes:
        return False
    return (typ in _BUILTIN_NODES or typ in _registry or optree.is_namedtuple_class(typ)
            or optree.is_structseq_class(typ))


def build_tree(treedef, xs):
    """Builds a tree of structure `treedef` from nested iterables `xs` (one per node)."""
    spec = treedef._rebuilder()
    if spec.num_nodes == 1 and spec.num_leaves == 1:
        return xs
    kids, xs = treedef.children(), list(xs)
    if len(kids) != len(xs):
        raise ValueError(f"Arity mismatch between trees: {treedef} has {len(kids)} "
                         f"children at its root but got {len(xs)} values.")
    return spec.one_level().unflatten([build_tree(k, x) for k, x in zip(kids, xs)])


# ---------------------------------------------------------------- registration

_registry = {}      # nodetype -> (flatten_func, unflatten_func)
_key_flatten = {}   # nodetype -> flatten_with_keys(x) -> ([(key, child)...], aux)


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Makes `nodetype` a pytree node: flatten_func(x) -> (children, aux_data) and
    unflatten_func(aux_data, children) -> x; aux_data must be hashable."""
    if nodetype in _registry or nodetype in _BUILTIN_NODES:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype!r}.")
    if not isinstance(nodetype, type) or not callable(flatten_func) or \
            not callable(unflatten_func):
        raise TypeError(f"register_pytree_node expects a class and two callables "
                        f"(flatten_func, unflatten_func), got {nodetype!r}, {flatten_func!r}, "
                        f"{unflatten_func!r}")
    with warnings.catch_warnings():
        # optree warns when a namedtuple class gets its own flatten; JAX allows it silently
        warnings.filterwarnings("ignore", "PyTree type .* is a subclass of", UserWarning)
        optree.register_pytree_node(nodetype, flatten_func, unflatten_func, namespace=_NS)
    _registry[nodetype] = (flatten_func, unflatten_func)
    if flatten_with_keys_func is not None:
        _key_flatten[nodetype] = flatten_with_keys_func
    _leaf_types.discard(nodetype)


def register_pytree_node_class(cls):
    """Class decorator: registers via `x.tree_flatten()` and `cls.tree_unflatten(aux, kids)`."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Like register_pytree_node, with flatten_with_keys(x) -> ([(key, child)...], aux)."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls):
    flat = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flat)
    return cls


def _getter(names):
    # attrgetter returns a bare value for one name and refuses zero names.
    if not names:
        return lambda x: ()
    if len(names) == 1:
        name = names[0]
        return lambda x: (getattr(x, name),)
    return operator.attrgetter(*names)


def static_field(**kwargs):
    """dataclasses.field(**kwargs) marked static (metadata static=True): register_dataclass
    then keeps the field in the treedef instead of among the leaves (jax.tree.static)."""
    metadata = {**(kwargs.pop("metadata", None) or {}), "static": True}
    return dataclasses.field(metadata=metadata, **kwargs)


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Registers a dataclass: data_fields are children, meta_fields static aux data.
    When both are omitted they come from the fields, `static=True` metadata marking meta."""
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be "
                            f"specified when either is. Got {data_fields=} {meta_fields=}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required "
                            f"when nodetype is not a dataclass. Got {nodetype=}.")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        given = {*data_fields, *meta_fields}
        if given != init:
            msg = ("data_fields and meta_fields must include all dataclass fields with "
                   "``init=True`` and only them.")
            if init - given:
                msg += (f" Missing fields: {init - given}. Add them to drop_fields to "
                        "suppress this error.")
            if given - init:
                msg += f" Unexpected fields: {given - init}."
            raise ValueError(msg)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError(f"data_fields and meta_fields must not overlap. Overlapping "
                         f"fields: {overlap}.")
    get_data, get_meta = _getter(data_fields), _getter(meta_fields)

    def flatten_func(x):
        return get_data(x), get_meta(x)

    def flatten_with_keys(x):
        return [(GetAttrKey(n), v) for n, v in zip(data_fields, get_data(x))], get_meta(x)

    def unflatten_func(meta, data):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)
    return nodetype


def register_static(cls):
    """Registers `cls` as a pytree with no leaves: instances live in the treedef (static)."""
    register_pytree_with_keys(cls, lambda x: ((), x), lambda x, _: x)
    return cls


# ---------------------------------------------------------------- maps and reductions

def tree_map(f, tree, *rest, is_leaf=None):
    """f applied leafwise; every tree in `rest` must have `tree`'s structure as a prefix."""
    return _map_flat(f, tree_flatten(tree, is_leaf), tree, rest, is_leaf)


def _map_flat(f, flat, tree, rest, is_leaf):
    """tree_map's result from (leaves, treedef) of `tree`."""
    leaves, treedef = flat
    if not rest:
        return treedef._rebuilder().unflatten([f(x) for x in leaves])
    columns = [leaves] + [_flatten_up_to("tree_map", treedef, tree, r, i, is_leaf)
                          for i, r in enumerate(rest)]
    return treedef._rebuilder().unflatten([f(*xs) for xs in zip(*columns)])


_NO_INIT = object()  # tree_reduce's "no initializer"


def tree_reduce(function, tree, initializer=_NO_INIT, is_leaf=None):
    leaves = user_tree_leaves(tree, is_leaf)
    if initializer is _NO_INIT:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation, tree, *, identity=_NO_INIT, is_leaf=None):
    """Reduces the leaves pairwise as a balanced tree (operation must be associative)."""
    def reduce(xs):
        if not xs:
            if identity is _NO_INIT:
                raise TypeError("Must specify identity for parallel reduction of empty "
                                "sequence.")
            return identity
        if len(xs) == 1:
            return xs[0]
        mid = len(xs) // 2
        return operation(reduce(xs[:mid]), reduce(xs[mid:]))
    return reduce(user_tree_leaves(tree, is_leaf))


def tree_all(tree, *, is_leaf=None):
    return all(user_tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turns a tree of structure outer(inner) into one of structure inner(outer)."""
    flat, treedef = user_tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = user_tree_structure(
            outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    n_in, n_out = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != n_in * n_out:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    rows = [flat[i * n_in:(i + 1) * n_in] for i in range(n_out)]
    return inner_treedef.unflatten([outer_treedef.unflatten(col) for col in zip(*rows)])


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """Repeats each leaf of `prefix_tree` over the matching subtree of `full_tree`."""
    out = []
    add = lambda x, sub: out.extend([x] * user_tree_structure(sub).num_leaves)
    user_tree_map(add, prefix_tree, full_tree, is_leaf=is_leaf)
    return user_tree_structure(full_tree).unflatten(out)


_NONE_PROXY = object()  # plain objects are leaves
# The leaf a structure is rebuilt over when only its shape matters (prefix_broadcast),
# as JAX's api_util.SENTINEL: a node whose constructor validates its fields lets it pass.
SENTINEL = object()


def prefix_broadcast(prefix_tree, full_treedef, name):
    """One prefix value per leaf of `full_treedef` (e.g. vmap's in_axes); None in the
    prefix is a value, not a node. Raises ValueError naming `name` on mismatch."""
    n = full_treedef.num_leaves
    if prefix_tree is None or type(prefix_tree) is int:
        return [prefix_tree] * n
    prefix = optree.tree_map(lambda x: _NONE_PROXY if x is None else x, prefix_tree,
                             none_is_leaf=True, namespace=_NS)
    dummy = full_treedef._spec.unflatten([SENTINEL] * n)
    try:
        out = optree.broadcast_prefix(prefix, dummy, none_is_leaf=False, namespace=_NS)
    except ValueError:
        found = _sequence_mismatch(prefix, dummy, name, ())
        details = [found] if found is not None else [
            str(err(name)) for err in prefix_errors(prefix, dummy)]
        raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                         f"value; \n  Mismatch details ({len(details)} found):\n  "
                         + "\n  ".join(details)) from None   # (JAX's layout of it)
    return [None if x is _NONE_PROXY else x for x in out]


def prefix_errors(prefix_tree, full_tree, is_leaf=None):
    """One callable per place where `prefix_tree` is not a tree prefix of `full_tree`:
    given the prefix's name (e.g. 'in_axes') it makes the ValueError describing that
    mismatch. JAX's private helper (flax's tests import it)."""
    return list(optree.prefix_errors(prefix_tree, full_tree, is_leaf, none_is_leaf=False,
                                     namespace=_NS))


def _sequence_mismatch(prefix, full, name, path):
    """JAX's wording for the first place where a prefix tuple or list differs from the
    full tree in type or length (None elsewhere: optree's message then serves)."""
    if type(prefix) not in (tuple, list):
        return None
    where = f"at key path\n    {name}{keystr(path)}\nAt that key path, the prefix pytree {name}"
    if type(full) is not type(prefix):
        return (f"pytree structure error: different types {where} has a subtree of type\n"
                f"    {type(prefix)}\nbut at the same key path the full pytree has a "
                f"subtree of different type\n    {type(full)}.")
    if len(full) != len(prefix):
        kind = type(prefix).__name__
        return (f"pytree structure error: different lengths of {kind} {where} has a "
                f"subtree of type {kind} of length {len(prefix)}, but the full pytree has "
                f"a subtree of the same type but of length {len(full)}.")
    for i, (p, f) in enumerate(zip(prefix, full)):
        found = _sequence_mismatch(p, f, name, path + (SequenceKey(i),))
        if found is not None:
            return found
    return None


class _StructureLeaf:
    """The leaf equality_errors_pytreedef fills tree structures with."""

    def __repr__(self):
        return "pytree leaf"


_STRUCTURE_LEAF = _StructureLeaf()


def equality_errors(tree1, tree2):
    """For each place where two pytrees' structures differ: (key path, what tree1 has
    there, what tree2 has, why they differ), in JAX's words (as jax.tree_util's)."""
    return _equality_errors((), tree1, tree2)


def equality_errors_pytreedef(tree1, tree2):
    """equality_errors of two tree structures, their leaves named 'pytree leaf'."""
    return _equality_errors((), tree1.unflatten([_STRUCTURE_LEAF] * tree1.num_leaves),
                            tree2.unflatten([_STRUCTURE_LEAF] * tree2.num_leaves))


def _is_strict_leaf(tree):
    structure = tree_structure(tree)    # (None is a node without children)
    return structure.num_nodes == structure.num_leaves == 1


def _equality_errors(path, t1, t2):
    if _is_strict_leaf(t1) and _is_strict_leaf(t2):
        return
    if type(t1) is not type(t2):
        kind = lambda t: "pytree leaf" if t is _STRUCTURE_LEAF else str(type(t))
        yield path, kind(t1), kind(t2), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        yield (path, f"{type(t1).__name__} of length {len(t1)}",
               f"{type(t2).__name__} of length {len(t2)}", "the lengths do not match")
        return
    (kids1, meta1), (kids2, meta2) = (flatten_one_level_with_keys(t) for t in (t1, t2))
    if len(kids1) != len(kids2):
        extra = set(k for k, _ in kids1) ^ set(k for k, _ in kids2)
        diff = " ".join(sorted(repr(k.key) for k in extra)) \
            if all(type(k) is DictKey for k in extra) else ""
        count = lambda kids: f"{type(t1)} with {len(kids)} child" + \
            ("ren" if len(kids) > 1 else "")
        yield (path, count(kids1), count(kids2), "the numbers of children do not match"
               + (f", with the symmetric difference of key sets: {{{diff}}}" if diff else ""))
        return
    if meta1 != meta2:
        yield (path, f"{type(t1)} with pytree metadata {meta1}",
               f"{type(t2)} with pytree metadata {meta2}",
               "the pytree node metadata does not match")
        return
    for (key, c1), (_, c2) in zip(kids1, kids2):
        yield from _equality_errors(path + (key,), c1, c2)


# ---------------------------------------------------------------- key paths

def _key_children(x):
    """[(key, child)...] for one pytree node, or None when x is a leaf."""
    t = type(x)
    # The built-in containers first, without optree's one-level flatten (~20 us a node)
    if t is tuple or t is list:
        return [(SequenceKey(i), c) for i, c in enumerate(x)]
    if t is dict:
        try:
            return [(DictKey(k), x[k]) for k in sorted(x)]
        except TypeError:   # keys that do not sort together: optree's order, below
            pass
    if x is None:
        return []
    kf = _key_flatten.get(t)
    if kf is not None:
        return list(kf(x)[0])
    if t in _registry:  # call it directly so that its own errors surface
        return [(FlattenedIndexKey(i), c) for i, c in enumerate(_registry[t][0](x)[0])]
    if isinstance(x, tuple) and optree.is_namedtuple_class(t):
        return [(GetAttrKey(f), c) for f, c in zip(t._fields, x)]
    # Asked first: optree's error for flattening a leaf formats the leaf's repr (an
    # array's costs milliseconds).
    if optree.tree_is_leaf(x, none_is_leaf=False, namespace=_NS):
        return None
    kids, _, entries, _ = optree.tree_flatten_one_level(x, none_is_leaf=False,
                                                        namespace=_NS)
    if t is collections.deque:
        return [(SequenceKey(i), c) for i, c in zip(entries, kids)]
    if t in (dict, collections.OrderedDict, collections.defaultdict):
        return [(DictKey(k), c) for k, c in zip(entries, kids)]
    if optree.is_structseq_class(t):
        return [(GetAttrKey(f), c) for f, c in zip(optree.structseq_fields(t), kids)]
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(kids)]


def flatten_one_level(tree):
    """(children, aux_data) of the root node; ValueError for a leaf."""
    if type(tree) in _array_nodes:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    try:
        kids, data, _, _ = optree.tree_flatten_one_level(tree, none_is_leaf=False,
                                                         namespace=_NS)
    except ValueError:
        raise ValueError(f"can't tree-flatten type: {type(tree)}") from None
    t = type(tree)
    meta = tuple(data) if t is dict else t if _is_namedtuple_node(t) else _jax_aux(t, data)
    return tuple(kids), meta


def flatten_one_level_with_keys(tree):
    pairs = None if type(tree) in _array_nodes else _key_children(tree)
    if pairs is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return pairs, flatten_one_level(tree)[1]


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """Like tree_flatten, but each leaf comes as (key_path, leaf)."""
    out, decisions = [], []
    pending = [((), tree)]   # a loop, not a recursive closure (a reference cycle)
    while pending:   # pre-order, children in order
        path, x = pending.pop()
        if is_leaf is not None:
            leaf = bool(is_leaf(path, x) if is_leaf_takes_path else is_leaf(x))
            decisions.append(leaf)
            if leaf:
                out.append((path, x))
                continue
        pairs = _key_children(x)
        if pairs is None:
            out.append((path, x))
        else:
            pending.extend([((*path, k), c) for k, c in pairs][::-1])
    if is_leaf is None:
        return out, flatten(tree)[1]
    # Replay our decisions: optree asks is_leaf in the same pre-order we visited in.
    replay = iter(decisions)
    _, spec = optree.tree_flatten(tree, lambda _: next(replay), none_is_leaf=False,
                                  namespace=_NS)
    return out, PyTreeDef(spec)


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    return user_tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """Like tree_map, with f(key_path, leaf, *rest_leaves)."""
    pairs, treedef = user_tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    plain_is_leaf = _with_array_leaves(None if is_leaf_takes_path else is_leaf)
    columns = [[p for p, _ in pairs], [x for _, x in pairs]]
    columns += [_flatten_up_to("tree_map_with_path", treedef, tree, r, i, plain_is_leaf)
                for i, r in enumerate(rest)]
    return treedef._rebuilder().unflatten([f(*xs) for xs in zip(*columns)])


def _flatten_up_to(fn, treedef, tree, other, i, is_leaf):
    try:
        return treedef._spec.flatten_up_to(other)
    except ValueError as e:
        # optree ports JAX's prefix diagnosis: it names the key path where trees differ.
        errs = optree.prefix_errors(tree, other, is_leaf, none_is_leaf=False, namespace=_NS)
        detail = str(errs[0](f"{fn} tree")) if errs else _up_to_message(str(e))
        raise ValueError(f"{fn}: rest[{i}] must have the structure of the first tree as a "
                         f"prefix.\n{detail}\n  first tree: {treedef}\n  rest[{i}]:    "
                         f"{tree_structure(other, is_leaf)}") from None


# ---------------------------------------------------------------- the users' view

# Types that are arrays to users but pytree nodes to pyjax's own code: a typed PRNG key
# array is a jax.Array leaf in JAX, and here a node over its uint32 data, so that jit,
# vmap, grad, scan and every other transformation carry that data like any leaf. The
# tree functions users call (jax.tree_util, jax.tree: the user_* functions, and those
# pyjax's own code never calls) see these types as leaves.
_array_nodes = set()
_array_nodes_version = 0   # PyTreeDef._array_nodes answers of an older version are stale


def register_array_node(nodetype, flatten_func, unflatten_func):
    """Registers `nodetype` as a node for pyjax's transformations that users' tree
    functions treat as a leaf."""
    global _array_nodes_version
    register_pytree_node(nodetype, flatten_func, unflatten_func)
    _array_nodes.add(nodetype)
    _array_nodes_version += 1


def _holds_array_node(treedef) -> bool:
    answer = treedef._array_nodes
    if answer is not None and answer[0] == _array_nodes_version:
        return answer[1]
    spec = treedef._spec
    found = spec.walk([False] * spec.num_leaves,
                      lambda t, _, kids: t in _array_nodes or any(kids), None)
    treedef._array_nodes = (_array_nodes_version, found)
    try:
        known = _known_specs.get(spec)
    except TypeError:   # unhashable aux data
        known = None
    if known is not None:
        known[1] = treedef._array_nodes
    return found


def is_array_node(x):
    """Whether x is of a type registered with register_array_node (a key array): a node
    inside pyjax, a leaf as users see trees."""
    return type(x) in _array_nodes


def _with_array_leaves(is_leaf, takes_path=False):
    """`is_leaf` that also takes the array nodes for leaves."""
    if is_leaf is None:
        return (lambda _, x: type(x) in _array_nodes) if takes_path else is_array_node
    if takes_path:
        return lambda path, x: type(x) in _array_nodes or is_leaf(path, x)
    return lambda x: type(x) in _array_nodes or is_leaf(x)


def user_tree_flatten(tree, is_leaf=None):
    """jax.tree_util.tree_flatten: tree_flatten with array nodes as leaves."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not _holds_array_node(treedef):
        return leaves, treedef
    return tree_flatten(tree, _with_array_leaves(is_leaf))


def user_tree_leaves(tree, is_leaf=None):
    return user_tree_flatten(tree, is_leaf)[0]


def user_tree_structure(tree, is_leaf=None):
    return user_tree_flatten(tree, is_leaf)[1]


def user_tree_map(f, tree, *rest, is_leaf=None):
    """jax.tree_util.tree_map: tree_map with array nodes as leaves."""
    return _map_flat(f, user_tree_flatten(tree, is_leaf), tree, rest,
                     _with_array_leaves(is_leaf))


def user_tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """jax.tree_util.tree_flatten_with_path: with array nodes as leaves."""
    return tree_flatten_with_path(tree, _with_array_leaves(is_leaf, is_leaf_takes_path),
                                  is_leaf_takes_path)


# ---------------------------------------------------------------- Partial

class _CallableShim:
    """Holds an inner functools.partial as Partial's func, so CPython does not merge the
    two: the inner partial's arguments stay static, exactly as in JAX."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        return self.fun == (other.fun if isinstance(other, _CallableShim) else other)

    def __repr__(self):
        return f"_CallableShim({self.fun!r})"


class Partial(functools.partial):
    """functools.partial that is a pytree: args and keywords are children, func is
    static (part of the treedef), so a Partial can be passed through jit/vmap/grad."""

    def __new__(cls, func, *args, **kwargs):
        if not isinstance(func, functools.partial):
            return super().__new__(cls, func, *args, **kwargs)
        shim = _CallableShim(func)
        out = super().__new__(cls, shim, *args, **kwargs)
        # Look like a partial afterwards (introspection), once merging can't happen.
        shim.func, shim.args, shim.keywords = func.func, func.args, func.keywords
        return out


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, xs: Partial(func, *xs[0], **xs[1]))

# JAX exposes its registry object; ours forwards to the functions above.
default_registry = types.SimpleNamespace(
    flatten=user_tree_flatten, register_node=register_pytree_node, is_node=is_tree_node,
    flatten_one_level=lambda x: None if is_array_node(x) or _key_children(x) is None
    else flatten_one_level(x))
