"""Mutable array references (`jax.new_ref`, `jax.Ref`): a box holding an array whose
contents are read with `ref[...]` (or an index) and replaced with `ref[idx] = value`.
A ref made at top level holds a concrete array. Under a transformation a ref is
discharged as it is traced: jit passes a Ref argument's value in and its final value out
(and stores it back after the call), and so it does for a ref the function closes over
(the staging trace captures it on first use); a ref made inside a trace holds traced
values. Writing a value of another transformation (vmap, grad) into a ref made outside
it is an error that says so. Imports jnp."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src.core.avals import AbstractRef, get_aval
from pyjax._src.core.trace import Tracer, current_trace
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.numpy import lax_numpy as jnp


class _RefLike:
    """What a Ref and a view of one (`ref.at[idx]`) share: reading and writing through
    `_value`, indexing, and the array's type."""

    __slots__ = ()
    _value: Any

    @property
    def aval(self) -> AbstractRef:
        return AbstractRef(get_aval(self._value))

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)
    # the placement of the array it holds, as JAX's Ref reports it
    sharding = property(lambda self: self._value.sharding)
    committed = property(lambda self: self._value.committed)

    def addupdate(self, x, idx=()):
        """Adds `x` into `self[idx]` (jax.ref.addupdate)."""
        addupdate(self, idx, x)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, index):
        value = self._value
        return value if index is Ellipsis or index == () else value[index]

    def __setitem__(self, index, value):
        swap(self, index, value, "swap")

    @property
    def at(self):
        """`ref.at[idx]`: a view of part of the ref, read and written through it."""
        return _RefIndexer(self)


class Ref(_RefLike):
    """A mutable reference to an array (make one with `jax.new_ref(value)`)."""

    __slots__ = ("_stored", "_owner", "_origin", "_kind", "__weakref__")

    def __init__(self, value, owner=None, origin=None, kind=None):
        # `owner`: the trace the ref was made in (default: the current one). Traces
        # below it that stage a function (jit, make_jaxpr) capture the ref: it enters
        # them as an input and what they write into it comes back as an output.
        # `origin`: (file, line, function) of the user's line that made it, for errors.
        # `kind`: jax.new_ref's; 'no_grad_no_remat' stores a differentiated value's
        # primal (the write has no tangent).
        self._stored = value
        self._owner = current_trace() if owner is None else owner
        self._origin = origin
        self._kind = kind

    @property
    def aval(self) -> AbstractRef:
        return AbstractRef(get_aval(self._value), kind=self._kind)

    def _check_live(self):
        if self._stored is None:
            raise ValueError("Ref: this reference was freed (jax.free_ref) and can no longer "
                             "be read or written.")

    def _capture(self):
        """The innermost RefCapture holding this ref's value in the current trace, or
        None when the value is the ref's own. Every staging trace between the ref's
        owner and here captures it, outermost first, so each passes it to the next."""
        chain = []
        trace = current_trace()
        while trace is not None and trace is not self._owner:
            chain.append(trace)
            trace = trace.parent
        if trace is None:   # made in a trace that is not active here: its own value
            return None
        capture, value = None, self._stored
        for trace in reversed(chain):
            if getattr(trace, "ref_captures", None) is not None:
                capture = trace.capture_ref(self, value)
                value = capture.value
        return capture

    @property
    def _value(self):
        self._check_live()
        capture = self._capture()
        return self._stored if capture is None else capture.value

    @_value.setter
    def _value(self, value):
        self._check_live()
        capture = self._capture()
        holder = self._owner if capture is None else capture.tracer._trace
        if self._kind == "no_grad_no_remat":   # as JAX's: no tangent is written
            while type(value) is ad.JVPTracer and _foreign(value, holder):
                value = value.primal
        if _foreign(value, holder):
            raise _foreign_value_error(value._trace, self)
        if capture is None:
            self._stored = value
        else:
            capture.value, capture.written = value, True

    def __repr__(self):
        if self._stored is None:
            return "Ref(<freed>)"
        text = repr(self._value)   # as JAX's: the array's repr, named Ref
        return "Ref(" + text[len("Array("):] if text.startswith("Array(") else f"Ref({text})"


def _foreign(value, holder):
    """Whether `value` is traced by a transformation inside the trace `holder` of a ref
    (so the ref, made outside it, cannot hold it)."""
    return isinstance(value, Tracer) and value._trace is not holder \
        and not value._trace.is_ancestor_of(holder)


def _foreign_value_error(trace, ref):
    """JAX's error for storing a value of a transformation (vmap, jvp) into a ref made
    outside it."""
    ty = ref.aval.str_short(True)
    if isinstance(trace, batching.BatchTrace):
        return TypeError(
            f"performing a set/swap operation with vmapped value on an unbatched array "
            f"reference of type {ty}. Move the array reference to be an argument to the "
            "vmapped function?")
    if isinstance(trace, ad.JVPTrace):
        return TypeError(
            f"performing a set/swap operation with a differentiated value on a "
            f"non-differentiated array reference of type {ty}. Move the array reference "
            "to be an argument of the differentiated function?")
    return TypeError(
        f"performing a set/swap operation with a value traced by {type(trace).__name__} on "
        f"an array reference of type {ty} made outside that transformation. Move the "
        "array reference to be an argument of the transformed function?")


def _whole(index):
    return index is None or index is Ellipsis or index == ()


def get(ref: Ref, idx=None):
    """The value `ref[idx]` (the whole array when `idx` is None): jax.ref.get."""
    return ref[() if idx is None else idx]


def swap(ref: Ref, idx, value, _function_name="ref_swap"):
    """Stores `value` at `ref[idx]` and returns what was there: jax.ref.swap. The value
    must have exactly the shape of `ref[idx]` and the ref's dtype (an integer value, or
    a weakly typed float into a float ref, is cast to it, as in JAX)."""
    current = ref._value
    old = current if _whole(idx) else current[idx]
    value = _implicit_cast(current.dtype, jnp.asarray(value))
    if value.shape != old.shape:
        raise ValueError(
            f"Invalid shape for `{_function_name}`. Ref shape: {current.shape}. Expected "
            f"shape: {old.shape}. Value shape: {value.shape}. Index: {idx!r}.")
    if value.dtype != current.dtype:
        raise ValueError(f"Invalid dtype for `swap`. Ref dtype: {current.dtype}. Value "
                         f"dtype: {value.dtype}. ")
    ref._value = value if _whole(idx) else current.at[idx].set(value)
    return old


def _implicit_cast(dtype, value):
    """JAX's implicit cast of a stored value: integers to an integer ref's dtype, weakly
    typed floats to a float ref's."""
    if (get_aval(value).weak_type and dtypes.issubdtype(dtype, np.floating)
            and dtypes.issubdtype(value.dtype, np.floating)) or (
            dtypes.issubdtype(dtype, np.integer) and dtypes.issubdtype(value.dtype, np.integer)):
        return value.astype(dtype)
    return value


def set(ref: Ref, idx, value) -> None:
    """Stores `value` at `ref[idx]`: jax.ref.set (as `ref[idx] = value`)."""
    swap(ref, idx, value, "swap")


def addupdate(ref: Ref, idx, x) -> None:
    """Adds `x` into `ref[idx]`: jax.ref.addupdate. `x` must have exactly the shape of
    `ref[idx]`."""
    current = ref._value
    target = current if _whole(idx) else current[idx]
    x = jnp.asarray(x)
    if x.dtype != current.dtype and not get_aval(x).weak_type:
        raise ValueError(f"Invalid dtype for `addupdate`. Ref dtype: {current.dtype}. Value "
                         f"shape: {x.dtype}. ")   # (JAX's words)
    x = x.astype(current.dtype)
    if x.shape != target.shape:
        raise ValueError(
            f"Invalid shape for `addupdate`. Ref shape: {current.shape}. Expected shape: "
            f"{target.shape}. Value shape: {x.shape}. Index: {idx!r}.")
    ref._value = current + x if _whole(idx) else current.at[idx].add(x)


def new_ref(init_val, *, memory_space=None, kind=None) -> Ref:
    """A new mutable reference holding a copy of `init_val`."""
    _check_refs_allowed()
    return Ref(jnp.array(init_val), origin=pe.user_frame(), kind=kind)


def _check_refs_allowed():
    refused = current_trace().new_ref_error
    if refused is not None:
        raise ValueError(refused)


def empty_ref(ty, memory_space=None) -> Ref:
    """A new mutable reference of the type `ty` (a ShapeDtypeStruct, an array or an aval)
    whose contents are unspecified until written (pyjax fills it with zeros)."""
    _check_refs_allowed()
    if isinstance(ty, Tracer):
        ty = ty.aval
    try:
        shape, dtype = tuple(ty.shape), ty.dtype
    except AttributeError:
        raise TypeError(f"jax.empty_ref: expected a type with .shape and .dtype (e.g. "
                        f"jax.ShapeDtypeStruct), got {ty!r}") from None
    return Ref(jnp.zeros(shape, dtype))


def free_ref(ref: Ref):
    """Invalidates `ref`: reading or writing it afterwards raises. Returns ()."""
    if not isinstance(ref, Ref):
        raise TypeError(f"jax.free_ref: expected a Ref, got {type(ref).__name__}")
    ref._check_live()
    ref._stored = None
    return ()


def freeze(ref: Ref):
    """The array a Ref holds (the ref must not be used afterwards)."""
    return ref[...]


class _RefIndexer:
    __slots__ = ("ref",)

    def __init__(self, ref):
        self.ref = ref

    def __getitem__(self, index):
        ref = self.ref
        if isinstance(ref, TransformedRef):
            return TransformedRef(ref.ref, ref.indexers + (_as_tuple(index),))
        return TransformedRef(ref, (_as_tuple(index),))


def _as_tuple(index):
    return index if isinstance(index, tuple) else (index,)


class TransformedRef(_RefLike):
    """A view of a Ref through indexers (`ref.at[i]`, `ref.at[i].at[j]`): reads index
    the ref's value, and writes update that part of it. A pytree of the Ref and the
    indexers' array entries, so it passes into jit, cond and scan as the Ref does."""

    __slots__ = ("ref", "indexers")

    def __init__(self, ref, indexers):
        self.ref, self.indexers = ref, tuple(indexers)

    @property
    def _value(self):
        value = self.ref._value
        for index in self.indexers:
            value = value[index]
        return value

    @_value.setter
    def _value(self, new):
        values = [self.ref._value]
        for index in self.indexers[:-1]:
            values.append(values[-1][index])
        for index, value in zip(reversed(self.indexers), reversed(values)):
            new = value.at[index].set(new)
        self.ref._value = new

    def __repr__(self):
        return f"TransformedRef(ref={self.ref!r}, indexers={self.indexers!r})"


def _flatten_view(view):
    """Children: the Ref, then the array entries of the indexers; the rest (ints,
    slices, None, Ellipsis) is static."""
    dynamic, static = [], []
    for index in view.indexers:
        entries = []
        for e in index:
            if e is None or e is Ellipsis or isinstance(e, (int, np.integer)):
                entries.append(("static", None if e is None or e is Ellipsis else int(e),
                                e is Ellipsis))
            elif isinstance(e, slice):
                entries.append(("slice", e.start, e.stop, e.step))
            else:
                dynamic.append(e)
                entries.append(("array",))
        static.append(tuple(entries))
    return [view.ref] + dynamic, tuple(static)


def _unflatten_view(static, children):
    ref, dynamic = children[0], iter(children[1:])
    indexers = []
    for entries in static:
        index = []
        for e in entries:
            if e[0] == "static":
                index.append(Ellipsis if e[2] else e[1])
            elif e[0] == "slice":
                index.append(slice(*e[1:]))
            else:
                index.append(next(dynamic))
        indexers.append(tuple(index))
    return TransformedRef(ref, indexers)


tree_util.register_pytree_node(TransformedRef, _flatten_view, _unflatten_view)

AbstractRef.ref_type = Ref   # upward hooks
AbstractRef.view_type = TransformedRef
