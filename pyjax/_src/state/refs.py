"""Mutable array references (`jax.new_ref`, `jax.Ref`): a box holding an array whose
contents are read with `ref[...]` (or an index) and replaced with `ref[idx] = value`.
pyjax runs refs eagerly; a ref reaching a transformation (jit, grad, vmap ...) is an error
that says so, since JAX's stateful primitives for refs are not implemented. Imports jnp."""
from __future__ import annotations

from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import lax_numpy as jnp


class AbstractRef:
    """The abstract type of a Ref: a reference to an array of type `inner_aval`."""

    __slots__ = ("inner_aval", "memory_space", "kind")

    def __init__(self, inner_aval: ShapedArray, memory_space=None, kind=None):
        self.inner_aval, self.memory_space, self.kind = inner_aval, memory_space, kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: self.inner_aval.ndim)

    def __eq__(self, other):
        return isinstance(other, AbstractRef) and other.inner_aval == self.inner_aval

    def __hash__(self):
        return hash((AbstractRef, self.inner_aval))

    def str_short(self):
        return f"Ref{{{self.inner_aval.str_short()}}}"

    __repr__ = __str__ = str_short


class Ref:
    """A mutable reference to an array (make one with `jax.new_ref(value)`)."""

    __slots__ = ("_stored", "__weakref__")

    def __init__(self, value):
        self._stored = value

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
        if isinstance(value, Tracer):
            raise TypeError(
                "Ref: pyjax runs mutable references eagerly only; storing a traced value "
                "(inside jit, grad, vmap ...) into a Ref is not supported.")
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
    if isinstance(init_val, Tracer):
        raise TypeError("jax.new_ref: pyjax creates mutable references eagerly only, not "
                        "inside jit, grad, vmap or other transformations.")
    return Ref(jnp.array(init_val))


def empty_ref(ty, memory_space=None) -> Ref:
    """A new mutable reference of the type `ty` (a ShapeDtypeStruct, an array or an aval)
    whose contents are unspecified until written (pyjax fills it with zeros)."""
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
