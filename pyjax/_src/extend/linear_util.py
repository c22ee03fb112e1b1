"""jax.extend.linear_util: a function wrapped with the transformations applied to it, and
the store through which a flattening transformation reports the output tree after the
call. Imports tree_util only."""
from __future__ import annotations

from pyjax._src import tree_util


class Store:
    """A value set once during a call, read afterwards (e.g. the output tree)."""

    _EMPTY = object()

    def __init__(self):
        self._value = Store._EMPTY

    def store(self, value):
        if self._value is not Store._EMPTY:
            raise RuntimeError("Store: value stored twice")
        self._value = value

    @property
    def val(self):
        if self._value is Store._EMPTY:
            raise RuntimeError("Store: read before the wrapped function was called")
        return self._value

    def __call__(self):
        return self.val


class WrappedFun:
    """`f` with keyword `params`; `call_wrapped(*args)` calls it."""

    def __init__(self, f, params=(), debug_info=None):
        self.f, self.params, self.debug_info = f, tuple(params), debug_info

    def call_wrapped(self, *args, **kwargs):
        return self.f(*args, **dict(self.params), **kwargs)

    def __repr__(self):
        return f"Wrapped function: {getattr(self.f, '__name__', self.f)!r}"


def wrap_init(f, params=None, *, debug_info=None) -> WrappedFun:
    return WrappedFun(f, (params or {}).items(), debug_info)


def flatten_fun(f: WrappedFun, in_tree):
    """f taking flat leaves of `(args, kwargs)` and returning flat outputs; the second
    result gives the output treedef once the function has been called."""
    out_tree = Store()

    def flat(*leaves):
        args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
        outs, tree = tree_util.tree_flatten(f.call_wrapped(*args, **kwargs))
        out_tree.store(tree)
        return outs
    return WrappedFun(flat, (), f.debug_info), out_tree


def flatten_fun_nokwargs(f: WrappedFun, in_tree):
    """Like flatten_fun for leaves of a tuple of positional arguments."""
    out_tree = Store()

    def flat(*leaves):
        args = tree_util.tree_unflatten(in_tree, leaves)
        outs, tree = tree_util.tree_flatten(f.call_wrapped(*args))
        out_tree.store(tree)
        return outs
    return WrappedFun(flat, (), f.debug_info), out_tree
