"""Small helpers shared by every layer (level 0): imports nothing from pyjax."""
from __future__ import annotations

import functools
import operator


def prod(xs):
    return functools.reduce(operator.mul, xs, 1)


def canonicalize_axis(axis, ndim, name="axis"):
    """Turns a possibly negative axis into a non-negative one, or raises ValueError."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name} {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def canonicalize_axes(axes, ndim, name="axis"):
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, int) or hasattr(axes, "__index__"):
        axes = (axes,)
    out = tuple(canonicalize_axis(a, ndim, name) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated {name} in {tuple(axes)}")
    return out


def safe_zip(*seqs):
    n = len(seqs[0])
    for s in seqs[1:]:
        if len(s) != n:
            raise ValueError(f"length mismatch: {[len(s) for s in seqs]}")
    return list(zip(*seqs))


def safe_map(f, *seqs):
    return [f(*args) for args in safe_zip(*seqs)]


def split_list(xs, sizes):
    """Splits xs into consecutive chunks of the given sizes plus the remainder."""
    xs = list(xs)
    out = []
    for n in sizes:
        out.append(xs[:n])
        xs = xs[n:]
    out.append(xs)
    return out


def partition_list(flags, xs):
    """Splits xs into (those with a false flag, those with a true flag)."""
    false_part, true_part = [], []
    for f, x in safe_zip(flags, xs):
        (true_part if f else false_part).append(x)
    return false_part, true_part


def merge_lists(flags, false_part, true_part):
    false_it, true_it = iter(false_part), iter(true_part)
    return [next(true_it) if f else next(false_it) for f in flags]


class HashableFunction:
    """Wraps a closure so that equal (code, closure values) hash equal: used for params."""

    __slots__ = ("f", "key")

    def __init__(self, f, key):
        self.f, self.key = f, key

    def __call__(self, *args, **kwargs):
        return self.f(*args, **kwargs)

    def __hash__(self):
        return hash(self.key)

    def __eq__(self, other):
        return isinstance(other, HashableFunction) and self.key == other.key


def _make_quiet_caller():
    """call_quietly(f, *args): f with NumPy's floating-point warnings off (XLA and JAX
    never warn on overflow or nan). Entering np.errstate costs ~1 us per eager op, so on
    NumPy 2 we set its context variable directly, falling back to errstate elsewhere."""
    import numpy as np
    try:
        from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
        ignore_all = _make_extobj(all="ignore")
    except (ImportError, TypeError):
        def call_quietly(f, *args, **params):
            with np.errstate(all="ignore"):
                return f(*args, **params)
        return call_quietly

    def call_quietly(f, *args, **params):
        token = _extobj_contextvar.set(ignore_all)
        try:
            return f(*args, **params)
        finally:
            _extobj_contextvar.reset(token)
    return call_quietly


call_quietly = _make_quiet_caller()
