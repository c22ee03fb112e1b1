"""jax._src.tree_util: the pytree registry (node type -> its flatten/unflatten) and the
public tree functions."""
import collections
from collections.abc import Iterator, Mapping
from typing import Any, Callable, NamedTuple

from pyjax._src import tree_util as _tree_util
from pyjax._src.tree_util import *  # noqa: F401,F403


class _RegistryEntry(NamedTuple):
    to_iter: Callable[[Any], tuple]
    from_iter: Callable[[Any, Any], Any]


def _sorted_dict_flatten(d):
    keys = sorted(d)
    return [d[k] for k in keys], keys


# JAX's `_registry` holds the builtin containers as well as registered types (flax asks
# `type(x) in _registry` to tell pytree nodes from leaves).
_BUILTIN_ENTRIES = {
    tuple: _RegistryEntry(lambda xs: (xs, None), lambda _, xs: tuple(xs)),
    list: _RegistryEntry(lambda xs: (xs, None), lambda _, xs: list(xs)),
    dict: _RegistryEntry(_sorted_dict_flatten, lambda keys, xs: dict(zip(keys, xs))),
    type(None): _RegistryEntry(lambda _: ((), None), lambda _, xs: None),
    collections.OrderedDict: _RegistryEntry(
        lambda d: (list(d.values()), list(d)),
        lambda keys, xs: collections.OrderedDict(zip(keys, xs))),
    collections.defaultdict: _RegistryEntry(
        lambda d: (_sorted_dict_flatten(d)[0], (d.default_factory, sorted(d))),
        lambda aux, xs: collections.defaultdict(aux[0], zip(aux[1], xs))),
}


class _Registry(Mapping):
    """Every pytree node type -> its _RegistryEntry(to_iter, from_iter): the builtin
    containers, then the types registered with pyjax, read live."""

    def __getitem__(self, nodetype) -> _RegistryEntry:
        entry = _BUILTIN_ENTRIES.get(nodetype)
        if entry is None:
            entry = _RegistryEntry(*_tree_util._registry[nodetype])
        return entry

    def __contains__(self, nodetype) -> bool:
        return nodetype in _BUILTIN_ENTRIES or nodetype in _tree_util._registry

    def __iter__(self) -> Iterator[type]:
        yield from _BUILTIN_ENTRIES
        yield from list(_tree_util._registry)

    def __len__(self) -> int:
        return len(_BUILTIN_ENTRIES) + len(_tree_util._registry)


_registry = _Registry()
