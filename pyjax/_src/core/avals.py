"""Abstract values: ShapedArray(shape, dtype, weak_type) is the one aval class, and
get_aval maps any valid JAX value to it. Imports level 0 only."""
from __future__ import annotations

import enum

import numpy as np

from pyjax._src import dtypes


_interned: dict[tuple, ShapedArray] = {}
_INTERNED_LIMIT = 100_000


class ShapedArray:
    """What tracing knows about an array: its shape, dtype, and whether its dtype is weak
    (came from a Python scalar and yields to the other operand's dtype in jnp)."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash")
    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool
    _hash: int

    def __new__(cls, shape, dtype, weak_type=False):
        # Interned: equal avals are one object, so the checks on every jitted call and
        # eager op are identity tests. The table is only an accelerator: dropping it when
        # it grows large (shapes that never repeat) costs nothing but later misses.
        key = (tuple(shape), np.dtype(dtype), bool(weak_type))
        aval = _interned.get(key)
        if aval is None:
            if len(_interned) >= _INTERNED_LIMIT:
                _interned.clear()
            aval = object.__new__(cls)
            aval.shape, aval.dtype, aval.weak_type = key
            aval._hash = hash(key)
            # setdefault is atomic: threads building the same aval at once all get the
            # first one stored, so identity still means equality.
            aval = _interned.setdefault(key, aval)
        return aval

    def __reduce__(self):
        return ShapedArray, (self.shape, self.dtype, self.weak_type)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    ndim = property(lambda self: len(self.shape))

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __eq__(self, other):
        return self is other or (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return self._hash

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self):
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def str_short(self):
        """Compact form used in jaxprs: f32[3,4]."""
        return f"{dtypes.dtype_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def _dtype_and_shape(self):
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"

    def __str__(self):   # as JAX: float32[3], ~float32[] for a weak type
        return ("~" if self.weak_type else "") + self._dtype_and_shape()

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self._dtype_and_shape()}{weak})"

    def same_type(self, other):
        """Equal shape and dtype, ignoring weak types (what carries and branches need)."""
        return self.shape == other.shape and self.dtype == other.dtype


_scalar_avals: dict[type, ShapedArray] = {}


def get_aval(x):
    """The ShapedArray of any valid JAX value; TypeError for anything else."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if isinstance(x, np.ndarray):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))
    if isinstance(x, np.generic):
        return ShapedArray((), dtypes.canonicalize_dtype(x.dtype))
    if dtypes.is_python_scalar(x):
        key = (type(x), dtypes.x64_enabled())
        aval = _scalar_avals.get(key)
        if aval is None:
            dtype, weak = dtypes.dtype_and_weak_type(x)
            aval = _scalar_avals[key] = ShapedArray((), dtype, weak)
        return aval
    raise TypeError(f"Argument '{x!r:.200}' of type {type(x)} is not a valid JAX type.")


def is_valid_jax_type(x):
    return (hasattr(x, "aval") or isinstance(x, (np.ndarray, np.generic))
            or dtypes.is_python_scalar(x))


def to_numpy(x, aval=None):
    """A host numpy array for a non-tracer value, in its canonical dtype."""
    value = getattr(x, "_value", None)
    if value is not None:
        return value
    aval = aval or get_aval(x)
    return np.asarray(x, dtype=aval.dtype)


class MemorySpace(enum.Enum):
    """Where an array's buffer lives (jax.memory.Space): device memory, host memory, or
    any. pyjax keeps every array in device memory."""
    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self):
        return f"MemorySpace.{self.name}"

    __hash__ = object.__hash__
