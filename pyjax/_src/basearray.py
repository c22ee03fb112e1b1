"""The public `jax.Array` type: an abstract base class that every array value of JAX's
programming model is an instance of: concrete Arrays, the tracers that stand in for them
under any transformation, and typed PRNG key arrays (which register themselves). pyjax's
own code tests the concrete class (`pyjax._src.array.Array`) instead."""
import abc

from pyjax._src.array import Array as ArrayImpl
from pyjax._src.core.trace import Tracer


class Array(metaclass=abc.ABCMeta):  # noqa: B024  (a pure type: nothing to implement)
    """A JAX array: `isinstance(x, jax.Array)` holds for arrays, for tracers inside a
    transformation (jit, grad, vmap ...), and for typed PRNG key arrays."""

    __slots__ = ()


Array.register(ArrayImpl)
Array.register(Tracer)
