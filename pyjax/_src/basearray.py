"""The public `jax.Array` type: an abstract base class that every array value of JAX's
programming model is an instance of: concrete Arrays, the tracers that stand in for them
under any transformation, and typed PRNG key arrays (which register themselves). pyjax's
own code tests the concrete class (`pyjax._src.array.Array`) instead."""
import threading

from pyjax._src.array import Array as ArrayImpl
from pyjax._src.core.trace import Tracer


# held while a member tuple is extended: two threads registering (or subclassing) at once
# must not each drop the other's class
_members_lock = threading.Lock()


class _ArrayMeta(type):
    """jax.Array's metaclass: `isinstance(x, jax.Array)` is one C-level isinstance over
    the registered classes and the subclasses (libraries run it on every leaf of every
    call; abc.ABCMeta's weak-set caches cost ~3x as much per check)."""

    def __init__(cls, name, bases, namespace):
        super().__init__(name, bases, namespace)
        cls._members = ()
        with _members_lock:
            for base in cls.__mro__[1:]:   # a subclass is an instance of each of its bases
                if type(base) is _ArrayMeta:
                    base._members += (cls,)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls._members)

    def __subclasscheck__(cls, subclass):
        return subclass is cls or issubclass(subclass, cls._members)

    def register(cls, subclass):
        """Makes `subclass` (and its subclasses) count as a subclass, as ABCMeta's."""
        if not isinstance(subclass, type):
            raise TypeError("Can only register classes")
        with _members_lock:
            if not issubclass(subclass, cls):
                cls._members += (subclass,)
        return subclass


class Array(metaclass=_ArrayMeta):
    """A JAX array: `isinstance(x, jax.Array)` holds for arrays, for tracers inside a
    transformation (jit, grad, vmap ...), and for typed PRNG key arrays."""

    __slots__ = ()


Array.register(ArrayImpl)
Array.register(Tracer)
