"""Small helpers shared by every layer (level 0): imports only pyjax._src.errors."""
from __future__ import annotations

import functools
import inspect
import operator
import types
import weakref
from collections.abc import Callable, Hashable
from typing import Any

from pyjax._src.errors import AxisError, origin_of
from pyjax._src.shape_poly import is_symbolic_dim


class WeakCache:
    """Values built once per (owner, key), where the owner is an object whose lifetime
    bounds the entries (a jaxpr, a function): they go when it is garbage collected.
    The one get-or-build cache of pyjax's tracing machinery."""

    def __init__(self) -> None:
        self._per_owner: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        _weak_caches.add(self)

    def clear(self) -> None:
        self._per_owner.clear()

    def get(self, owner: Any, key: Hashable, build: Callable[[], Any],
            keep: Callable[[Any], bool] | None = None) -> Any:
        """The value cached for (owner, key), or build()'s, stored first unless
        keep(value) says it is not reusable."""
        per_owner = self._per_owner.get(owner)
        if per_owner is None:
            per_owner = self._per_owner.setdefault(owner, {})
        try:
            return per_owner[key]
        except KeyError:
            value = build()
            if keep is not None and not keep(value):
                return value
            return per_owner.setdefault(key, value)


_weak_caches: weakref.WeakSet = weakref.WeakSet()


def clear_weak_caches() -> None:
    """Empties every WeakCache (jax.clear_caches)."""
    for cache in list(_weak_caches):
        cache.clear()


def prod(xs):
    return functools.reduce(operator.mul, xs, 1)


def canonicalize_axis(axis, ndim, name="axis"):
    """Turns a possibly negative axis into a non-negative one, or raises ValueError."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {axis!r} of type "
                        f"{type(axis).__name__}") from None
    if not -ndim <= axis < ndim:
        raise AxisError(f"{name} {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def canonicalize_axes(axes, ndim, name="axis"):
    """axes (None, an int or a sequence of ints) as a tuple of non-negative axes. Every
    reduction calls this, so the answers for None, ints and tuples of ints are kept."""
    if axes is None or type(axes) is int or (
            type(axes) is tuple and all(type(a) is int for a in axes)):
        out = _canonical_axes.get((axes, ndim))
        if out is None:
            out = _canonicalize_axes(axes, ndim, name)   # raises for bad axes
            if len(_canonical_axes) >= 4096:
                _canonical_axes.clear()
            _canonical_axes[axes, ndim] = out
        return out
    return _canonicalize_axes(axes, ndim, name)


def ensure_index_tuple(x):
    """An int or a sequence of ints (a 1-D integer array included) as a tuple of Python
    ints, as JAX's util.ensure_index_tuple reads axis arguments."""
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(map(operator.index, x))


_canonical_axes: dict[tuple, tuple[int, ...]] = {}


def _canonicalize_axes(axes, ndim, name):
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, int) or hasattr(axes, "__index__") or not hasattr(axes, "__iter__") \
            or isinstance(axes, str):
        axes = (axes,)
    out = tuple(canonicalize_axis(a, ndim, name) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in '{name}': {tuple(axes)}")
    return out


def canonicalize_shape(shape, where, nonnegative=True, negative_error=TypeError):
    """A shape argument (an int or a sequence of ints) as a tuple of Python ints
    (non-negative unless told otherwise, e.g. for reshape's -1); anything else raises
    TypeError naming `where` (a negative size raises `negative_error`: TypeError, as
    JAX's shape checks do). A traced size raises JAX's TypeError, followed by the
    tracer's own conversion error, which explains static shapes."""
    if is_symbolic_dim(shape) or (hasattr(shape, "__index__")
                                  and getattr(shape, "ndim", 0) == 0):
        shape = (shape,)
    elif hasattr(shape, "tolist") and getattr(shape, "ndim", None) == 1 and \
            getattr(shape, "dtype", None) is not None and shape.dtype.kind in "iu":
        try:
            shape = shape.tolist()      # a concrete integer array
        except TypeError as e:          # a traced one
            raise TypeError(f"{where}: Shapes must be 1D sequences of concrete values of "
                            f"integer type, got {shape}.\nIf using `jit`, try using "
                            "`static_argnums` or applying `jit` to smaller subfunctions.") \
                from e
    try:   # any iterable, sequences with only __getitem__ and __len__ too (as JAX)
        if isinstance(shape, str):
            raise TypeError
        shape = tuple(shape)
    except TypeError:
        raise TypeError(f"{where}: Shapes must be 1D sequences of concrete values of integer "
                        f"type (or an int), got {shape!r}.") from None
    out = []
    for d in shape:
        if is_symbolic_dim(d):      # kept as it is: shape polymorphism (jax.export)
            out.append(d)
            continue
        if getattr(d, "ndim", 0) != 0 or isinstance(d, (bool, float, complex, str)) or \
                not hasattr(d, "__index__"):
            raise TypeError(f"{where}: Shapes must be 1D sequences of concrete values of "
                            f"integer type, got {tuple(shape)!r}. Use Python ints (e.g. "
                            "`int(n)` or `x.shape[0]`); under jit, mark size arguments "
                            "static with `static_argnums`.")
        try:
            out.append(operator.index(d))
        except TypeError as e:   # a traced size: JAX's message, then where it came from
            raise TypeError(f"{where}: Shapes must be 1D sequences of concrete values of "
                            f"integer type, got {tuple(shape)}.\nIf using `jit`, try using "
                            "`static_argnums` or applying `jit` to smaller subfunctions.\n"
                            f"{origin_of(d) or e}") from e
    if nonnegative and any(not is_symbolic_dim(d) and d < 0 for d in out):
        raise negative_error(f"{where}: negative dimensions are not allowed, got shape "
                             f"{tuple(out)}.")
    return tuple(out)


def safe_zip(*seqs):
    n = len(seqs[0])
    for s in seqs[1:]:
        if len(s) != n:
            raise ValueError(f"length mismatch: {[len(s) for s in seqs]}")
    return list(zip(*seqs))


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


def check_callable(fun, name):
    """The checks JAX makes of the function a transformation `name` is given (JAX's
    messages first, then what pyjax adds)."""
    if isinstance(fun, staticmethod):
        raise TypeError(f"staticmethod arguments are not supported, got {fun!r}: apply "
                        f"{name} to the function, then make the result a staticmethod.")
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r} of type "
                        f"{type(fun).__name__}: {name} transforms a function.")
    if inspect.isgeneratorfunction(fun):
        raise TypeError(f"Expected a function, got a generator function: {fun!r}. {name} "
                        "needs a function that returns its results.")


def fun_name(fun):
    """A callable's name for messages (its type's name when it has none, e.g. a partial)."""
    return getattr(fun, "__name__", type(fun).__name__)


def renamed(fun, name):
    """A copy of the Python function `fun` whose name is `name`: JAX defines an alias
    (jnp.abs of jnp.absolute, jnp.acos of jnp.arccos) as a function of its own, and
    tests and tools that name functions by `__name__` tell the two apart. A wrapper
    of a function with a `renamed` method (a jitted library function) renames itself."""
    if not isinstance(fun, types.FunctionType):
        return fun.renamed(name)
    copy = types.FunctionType(fun.__code__, fun.__globals__, name, fun.__defaults__,
                              fun.__closure__)
    copy.__kwdefaults__ = fun.__kwdefaults__
    copy.__dict__.update(fun.__dict__)
    copy.__annotations__ = dict(fun.__annotations__)
    copy.__doc__ = fun.__doc__
    copy.__module__ = fun.__module__
    copy.__qualname__ = name
    return copy


def _name_to_wrap(fun):
    name = getattr(fun, "__name__", None)
    if name is not None:
        return name
    return _name_to_wrap(fun.func) if isinstance(fun, functools.partial) \
        else "<unnamed function>"


def wraps(wrapped, docstr=None, **kwargs):
    """functools.wraps as JAX's transformations use it: the wrapper takes `wrapped`'s
    __dict__, annotations, name (a partial's function's), module, qualname and
    __wrapped__ (which libraries follow to the function a transformation wraps), and as
    its docstring `docstr` formatted with fun=<name>, doc=<wrapped's docstring> and
    `kwargs` (else wrapped's docstring). A callable whose attributes do not fit a
    function (a __name__ that is no string) leaves the remaining ones unset, as in JAX,
    instead of failing the transformation."""
    def wrapper(fun):
        try:
            name = _name_to_wrap(wrapped)
            doc = getattr(wrapped, "__doc__", "") or ""
            fun.__dict__.update(getattr(wrapped, "__dict__", {}))
            fun.__annotations__ = getattr(wrapped, "__annotations__", {})
            fun.__name__ = name
            fun.__module__ = getattr(wrapped, "__module__", "<unknown module>")
            fun.__doc__ = doc if docstr is None else docstr.format(fun=name, doc=doc, **kwargs)
            fun.__qualname__ = getattr(wrapped, "__qualname__", fun.__name__)
            fun.__wrapped__ = wrapped
        except Exception:
            pass
        return fun
    return wrapper


def scipy_special(name):
    """scipy.special.<name> as a function that imports SciPy on its first call: importing
    it costs ~170 ms, too much for `import pyjax`."""
    def f(*args):
        import scipy.special
        return getattr(scipy.special, name)(*args)
    f.__name__ = name
    return f


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


def _make_quietly():
    """quietly(f): f with NumPy's floating-point warnings off (XLA and JAX never warn on
    overflow or nan). Entering np.errstate costs ~1 us per eager op, so on NumPy 2 the
    wrapper sets its context variable directly, falling back to errstate elsewhere."""
    import numpy as np
    try:
        from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
        ignore_all = _make_extobj(all="ignore")
    except (ImportError, TypeError):
        def quietly(f):
            def call(*args, **params):
                with np.errstate(all="ignore"):
                    return f(*args, **params)
            return call
        return quietly
    set_mode, reset_mode = _extobj_contextvar.set, _extobj_contextvar.reset

    def quietly(f):
        def call(*args, **params):   # every eager op runs this: kept to the bare minimum
            token = set_mode(ignore_all)
            try:
                return f(*args, **params)
            finally:
                reset_mode(token)
        return call
    return quietly


quietly = _make_quietly()
