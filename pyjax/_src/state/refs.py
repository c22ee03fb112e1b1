"""Mutable array references (`jax.new_ref`, `jax.Ref`): a box holding an array whose
contents are read with `ref[...]` (or an index) and replaced with `ref[idx] = value`.
A ref made at top level holds a concrete array. Under a transformation a ref is
discharged as it is traced: jit passes a Ref argument's value in and its final value out
(and stores it back after the call), and a ref made inside a trace holds traced values;
writing a traced value into a top-level ref that a traced function closes over is an
error that says so. Imports jnp."""
from __future__ import annotations

from pyjax._src.core.avals import AbstractRef, get_aval
from pyjax._src.core.trace import Trace, Tracer, current_trace
from pyjax._src.numpy import lax_numpy as jnp


class Ref:
    """A mutable reference to an array (make one with `jax.new_ref(value)`)."""

    __slots__ = ("_stored", "_traced", "__weakref__")

    def __init__(self, value, traced: bool = False):
        # `traced`: made inside a transformation, so it may hold that trace's values
        self._stored, self._traced = value, traced

    def _check_live(self):
        if self._stored is None:
            raise ValueError("Ref: this reference was freed (jax.free_ref) and can no longer "
                             "be read or written.")

    @property
    def _value(self):
        self._check_live()
        return self._stored

    @_value.setter
    def _value(self, value):
        self._check_live()
        self._stored = value

    @property
    def aval(self) -> AbstractRef:
        return AbstractRef(get_aval(self._value))

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)

    def __getitem__(self, index):
        return self._value if index is Ellipsis or index == () else self._value[index]

    def __setitem__(self, index, value):
        if isinstance(value, Tracer) and not self._traced:
            raise TypeError(
                "Ref: storing a traced value (inside jit, grad, vmap ...) into a Ref made "
                "outside the transformation is not supported by pyjax; pass the Ref to the "
                "jitted function as an argument instead of closing over it.")
        value = jnp.asarray(value, self._value.dtype)
        if index is Ellipsis or index == ():
            if value.shape != self._value.shape:
                raise ValueError(f"Ref: cannot store a value of shape {value.shape} in a ref "
                                 f"of shape {self._value.shape}")
            self._value = value
        else:
            self._value = self._value.at[index].set(value)

    def __repr__(self):
        return "Ref(<freed>)" if self._stored is None else f"Ref({self._value!r})"



def new_ref(init_val, *, memory_space=None, kind=None) -> Ref:
    """A new mutable reference holding a copy of `init_val`."""
    _check_refs_allowed()
    traced = isinstance(init_val, Tracer) or current_trace() is not Trace.root
    return Ref(jnp.array(init_val), traced)


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
    return Ref(jnp.zeros(shape, dtype), current_trace() is not Trace.root)


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


AbstractRef.ref_type = Ref   # upward hook: jit wraps Ref arguments' traced values
