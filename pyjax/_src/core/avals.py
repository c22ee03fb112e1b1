"""Abstract values: ShapedArray(shape, dtype, weak_type, sharding, mat) is the aval of
every array, and get_aval maps any valid JAX value to it; AbstractRef is the type of a
mutable reference (jax.Ref) to one. Imports level 0 only."""
from __future__ import annotations

from typing import Any
import enum
import threading
import weakref

import numpy as np

from pyjax._src import dtypes
from pyjax._src.shape_poly import is_symbolic_dim


_interned: dict[tuple, ShapedArray] = {}
_KEEP = object()   # update(): leave this field as it is
_INTERNED_LIMIT = 100_000


class ManualAxisType:
    """How a value inside a shard_map body relates to its manual mesh axes (JAX's
    aval.mat): the axes along which it varies from device to device, and those over
    which it is a partial sum still to be reduced / a value already reduced. Interned
    and immutable, as in JAX: equal ones are one object (also through pickle and copy)."""

    __slots__ = ("varying", "unreduced", "reduced", "varying_order", "_key", "__weakref__")
    varying: frozenset
    unreduced: frozenset
    reduced: frozenset
    varying_order: tuple
    _key: tuple
    _instances: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
    _lock = threading.Lock()

    def __new__(cls, varying=frozenset(), unreduced=frozenset(), reduced=frozenset()):
        # `varying_order`: how types print the varying axes: in the order given
        # (creators pass mesh order), or sorted when given as a set.
        order = (tuple(varying) if isinstance(varying, (tuple, list))
                 else tuple(sorted(varying, key=str)))
        key = (frozenset(varying), frozenset(unreduced), frozenset(reduced))
        with cls._lock:
            found = cls._instances.get((order, *key[1:]))
            if found is None:
                found = object.__new__(cls)
                for name, value in zip(("varying", "unreduced", "reduced"), key):
                    object.__setattr__(found, name, value)
                object.__setattr__(found, "varying_order", order)
                object.__setattr__(found, "_key", key)
                cls._instances[(order, *key[1:])] = found
        return found

    def __setattr__(self, name, value):
        raise AttributeError(f"ManualAxisType is immutable: cannot set {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"ManualAxisType is immutable: cannot delete {name!r}")

    def __reduce__(self):
        return ManualAxisType, (self.varying_order, self.unreduced, self.reduced)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def update(self, **changes) -> ManualAxisType:
        """This type with the given fields (varying, unreduced, reduced) replaced."""
        fields = dict(varying=self.varying_order, unreduced=self.unreduced,
                      reduced=self.reduced)
        fields.update(changes)
        return ManualAxisType(**fields)

    def invarying(self, mesh) -> frozenset:
        """The manual axes of `mesh` along which the value is the same on every device."""
        return frozenset(mesh.manual_axes) - (self.varying | self.unreduced | self.reduced)

    def __eq__(self, other):
        return isinstance(other, ManualAxisType) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return (f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
                f"reduced={self.reduced})")


NO_MANUAL_AXES = ManualAxisType()

# ndim -> the sharding of an aval placed by no mesh: NamedSharding(AbstractMesh((), ()),
# P(None, ...)). The sharding module (a higher layer) provides it.
_unsharded: dict[int, object] = {}
_unsharded_factory = None


def set_unsharded_sharding_factory(factory):
    """Called once by the sharding module: `factory(ndim)` makes the unsharded sharding."""
    global _unsharded_factory
    _unsharded_factory = factory
    _unsharded.clear()


def cotangent_sharding(sharding):
    """The type sharding of a cotangent of a value typed `sharding` (a NamedSharding):
    the cotangent of a value reduced (equal on every device) over a mesh axis is a
    partial sum over it, and that of a partial sum is reduced (JAX's to_ct_spec)."""
    spec = sharding.spec
    if not spec.unreduced and not spec.reduced:
        return sharding
    return type(sharding)(sharding.mesh, spec.update(unreduced=spec.reduced,
                                                     reduced=spec.unreduced))
def unsharded_sharding(ndim):
    """The sharding in the type of a value of rank `ndim` placed by no mesh."""
    found = _unsharded.get(ndim)
    if found is None:
        found = _unsharded.setdefault(ndim, _unsharded_factory(ndim))
    return found


def _checked_type_sharding(shape, sharding):
    """`sharding` (a NamedSharding) with its spec padded to the rank of `shape` and only
    its mesh's Explicit axes kept (as JAX's types: Auto and Manual axes are not part of
    one); a ValueError where a split does not divide its dimension."""
    explicit = frozenset(sharding.mesh.explicit_axes)
    if len(explicit) < len(sharding.mesh.axis_names):
        spec = sharding.spec
        kept = [tuple(n for n in ((e,) if isinstance(e, str) else e) if n in explicit)
                if isinstance(e, (str, tuple)) else e for e in spec.partitions]
        sharding = type(sharding)(sharding.mesh, type(spec)(
            *kept, unreduced=spec.unreduced & explicit, reduced=spec.reduced & explicit))
    parts = tuple(sharding.spec.partitions)
    if len(parts) < len(shape):
        spec = type(sharding.spec)(*parts, *[None] * (len(shape) - len(parts)),
                                   unreduced=sharding.spec.unreduced,
                                   reduced=sharding.spec.reduced)
        sharding = type(sharding)(sharding.mesh, spec)
    sizes = dict(zip(sharding.mesh.axis_names, sharding.mesh.axis_sizes))
    for i, (d, entry) in enumerate(zip(shape, sharding.spec.partitions)):
        names = () if entry is None else (entry,) if isinstance(entry, str) else entry
        pieces = 1
        for n in names:
            pieces *= sizes.get(n, 1)
        if d % pieces:
            raise ValueError(
                f"Sharding spec {tuple(names)} implies that array axis {i} is partitioned "
                f"{pieces} times, but does not evenly divide the dimension size {d}. Got "
                f"shape: {tuple(shape)} and sharding {sharding}")
    return sharding


class AbstractValue:
    """The base of every aval (JAX's jax.core.AbstractValue; flax asserts it)."""

    __slots__ = ()
    is_high = False   # a hijax type (core/hijax.py), lowered to arrays where it enters
    has_qdd = False   # a mutable hijax type

    # As a part of a hijax value (core/hijax.py), a low-level value lowers to itself.
    def lo_ty(self) -> list:
        return [self]

    def lower_val(self, val) -> list:
        return [val]

    def raise_val(self, val):
        return val


class ShapedArray(AbstractValue):
    """What tracing knows about an array: its shape, dtype, whether its dtype is weak
    (came from a Python scalar and yields to the other operand's dtype in jnp), its
    sharding in the types (a NamedSharding over an AbstractMesh with Explicit axes; None
    stored for an unsharded value) and, inside shard_map, its ManualAxisType (None
    stored for none)."""

    __slots__ = ("shape", "dtype", "weak_type", "_sharding", "_mat", "_hash")
    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool
    _sharding: object
    _mat: ManualAxisType | None
    _hash: int

    def __new__(cls, shape, dtype, weak_type=False, sharding=None, manual_axis_type=None):
        mat = manual_axis_type
        # Interned: equal avals are one object, so the checks on every jitted call and
        # eager op are identity tests. The table is only an accelerator: dropping it when
        # it grows large (shapes that never repeat) costs nothing but later misses.
        # Unsharded values store None, so the common case costs nothing more.
        if mat is not None and mat == NO_MANUAL_AXES:
            mat = None
        try:
            key = (tuple(shape), np.dtype(dtype), bool(weak_type), sharding, mat)
        except TypeError:
            if isinstance(dtype, dtypes.ExtendedDType):   # typed keys have their own aval
                return dtype.aval(shape)
            raise
        aval = _interned.get(key)
        if aval is None:
            if sharding is not None:
                sharding = _checked_type_sharding(key[0], sharding)
                key = key[:3] + (sharding, mat)
            if len(_interned) >= _INTERNED_LIMIT:
                _interned.clear()
            aval = object.__new__(cls)
            aval.shape, aval.dtype, aval.weak_type, aval._sharding, aval._mat = key
            aval._hash = hash(key)
            # setdefault is atomic: threads building the same aval at once all get the
            # first one stored, so identity still means equality.
            aval = _interned.setdefault(key, aval)
        return aval

    def __reduce__(self):
        return ShapedArray, (self.shape, self.dtype, self.weak_type, self._sharding,
                             self._mat)

    @property
    def sharding(self):
        """The NamedSharding in this type (JAX's aval.sharding)."""
        if self._sharding is not None:
            return self._sharding
        return unsharded_sharding(len(self.shape))

    @property
    def mat(self) -> ManualAxisType:
        return NO_MANUAL_AXES if self._mat is None else self._mat

    manual_axis_type = mat   # JAX's name

    @property
    def vma(self) -> frozenset:
        """The manual axes this value varies along (shard_map's check_vma)."""
        return self.mat.varying

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
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self._sharding == other._sharding and self._mat == other._mat)

    def __hash__(self):
        return self._hash

    def update(self, shape=None, dtype=None, weak_type=None, sharding=_KEEP, mat=_KEEP):
        """This aval with the given fields replaced. A new shape drops the sharding
        unless one is given with it (the old one names other dimensions)."""
        if sharding is _KEEP:
            sharding = self._sharding if shape is None else None
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type,
                           sharding, self._mat if mat is _KEEP else mat)

    def strip_weak_type(self):
        return self if not self.weak_type else self.update(weak_type=False)

    def to_tangent_aval(self) -> ShapedArray:
        return tangent_aval(self)

    def _dims(self):
        """3,4 or, for dimensions split over mesh axes, 8@x,4@(x,y)."""
        if self._sharding is None:
            return ",".join(map(str, self.shape))
        dims = []
        for d, entry in zip(self.shape, self._sharding.spec._normalized(len(self.shape))):
            names = () if not isinstance(entry, tuple) else entry
            dims.append(str(d) if not names else f"{d}@{names[0]}" if len(names) == 1
                        else f"{d}@({','.join(names)})")
        return ",".join(dims)

    def _axes_suffix(self):
        """JAX's {V:x, U:y, R:(x,z)}: the manual axes along which the value varies, and
        the mesh axes over which it is a partial sum still to be reduced, or is already
        reduced (in mesh order)."""
        spec = self._sharding.spec if self._sharding is not None else None
        mat = self._mat if self._mat is not None else NO_MANUAL_AXES
        unreduced = mat.unreduced | (spec.unreduced if spec is not None else frozenset())
        reduced = mat.reduced | (spec.reduced if spec is not None else frozenset())
        if not (mat.varying or unreduced or reduced):
            return ""
        order = self._sharding.mesh.axis_names if self._sharding is not None else ()
        parts = []
        for prefix, names in (
                ("V", list(mat.varying_order)),
                ("U", [n for n in order if n in unreduced] + sorted(unreduced - set(order))),
                ("R", [n for n in order if n in reduced] + sorted(reduced - set(order)))):
            if names:
                parts.append(f"{prefix}:{names[0]}" if len(names) == 1
                             else f"{prefix}:({','.join(map(str, names))})")
        return "{" + ", ".join(parts) + "}"

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        """Compact form: float32[8@x,8]{U:y}, float32[3]{V:i} inside shard_map;
        `short_dtypes` (as jaxprs print it): f32[3,4]; `mesh_axis_types`: the mesh's
        axes by type after it, as JAX's ({Explicit: ('x',)})."""
        dtype = dtypes.dtype_name(self.dtype) if short_dtypes else self.dtype.name
        axis_types = ""
        if mesh_axis_types and self._sharding is not None:
            mesh = self._sharding.mesh
            by_type = {}
            for name, kind in zip(mesh.axis_names, mesh.axis_types):
                by_type.setdefault(kind.name, []).append(name)
            axis_types = "({" + ", ".join(f"{kind}: {tuple(names)}"
                                         for kind, names in by_type.items()) + "})"
        return f"{dtype}[{self._dims()}]{self._axes_suffix()}{axis_types}"

    def _dtype_and_shape(self):
        return f"{self.dtype.name}[{self._dims()}]{self._axes_suffix()}"

    def __str__(self):   # as JAX: float32[3], ~float32[] for a weak type
        return ("~" if self.weak_type else "") + self._dtype_and_shape()

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self._dtype_and_shape()}{weak})"

    def same_type(self, other):
        """Equal shape and dtype, ignoring weak types (what carries and branches need)."""
        return self.shape == other.shape and self.dtype == other.dtype


class AbstractRef(AbstractValue):
    """The abstract type of a Ref: a reference to an array of type `inner_aval`."""

    __slots__ = ("inner_aval", "memory_space", "kind")
    # The class of the references themselves (jax.Ref), installed by state/refs.py when
    # it is imported: jit wraps the traced value of a Ref argument in one; and that of
    # their views (ref.at[idx]), which vmap refuses as JAX does.
    ref_type: type | None = None
    view_type: type | None = None

    def __init__(self, inner_aval: ShapedArray, memory_space=None, kind=None):
        self.inner_aval, self.memory_space, self.kind = inner_aval, memory_space, kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: self.inner_aval.ndim)
    sharding = property(lambda self: self.inner_aval.sharding)

    def __eq__(self, other):
        return isinstance(other, AbstractRef) and other.inner_aval == self.inner_aval

    def __hash__(self):
        return hash((AbstractRef, self.inner_aval))

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return f"Ref{{{self.inner_aval._dtype_and_shape()}}}"   # JAX's: Ref{float32[3]}

    __repr__ = __str__ = str_short


_scalar_avals: dict[type, ShapedArray] = {}


def refuse_masked(x):
    """JAX's ValueError for a NumPy masked array, whose mask converting it would drop."""
    if type(x) is not np.ndarray and isinstance(x, np.ma.MaskedArray):
        raise ValueError("numpy masked arrays are not supported as direct inputs to JAX "
                         "functions. Use arr.filled() to convert the value to a standard "
                         "numpy array.")


def tangent_aval(aval):
    """The type of the tangents of values of type `aval` (one with a shape and dtype):
    float0 for integer, bool and extended dtypes; `aval` itself otherwise, weak_type
    included (as in JAX, so tangents through control flow stay weak)."""
    if dtypes.is_inexact(aval.dtype):
        return aval
    return ShapedArray(aval.shape, dtypes.float0)


# value class -> its type, for the hijax value classes (core/hijax.py: register_hitype);
# written at import time by the libraries that define them, read by get_aval
_value_types: dict[type, Any] = {}


def register_value_type(cls, typeof_fn):
    """`typeof_fn(x)` is the aval of values of class `cls` (a hijax type)."""
    _value_types[cls] = typeof_fn


def registered_type_of(x):
    """The aval of a value of a registered class (register_value_type), else None."""
    typeof_fn = _value_types.get(type(x)) if _value_types else None
    return None if typeof_fn is None else typeof_fn(x)


# classes of values that describe an array without being one (jax.ShapeDtypeStruct,
# registered by api/shapes.py) -> the type they describe: jax.typeof gives it, though no
# computation takes them
_described_types: dict[type, Any] = {}


def register_described_type(cls, aval_fn):
    _described_types[cls] = aval_fn


def is_description(x):
    """Whether x only describes an array (a ShapeDtypeStruct): it has a type, no value."""
    return any(isinstance(x, cls) for cls in _described_types)


def typeof(x):
    """jax.typeof: the aval of a value (get_aval), or the type a description of one
    (a ShapeDtypeStruct) gives, as JAX's primitives see their operands."""
    for cls, aval_fn in _described_types.items():
        if isinstance(x, cls):
            return aval_fn(x)
    return get_aval(x)


def get_aval(x):
    """The ShapedArray of any valid JAX value (a hijax value: its registered type);
    TypeError for anything else."""
    if _value_types:   # before `.aval`: a hijax value may forward attribute reads
        aval = registered_type_of(x)
        if aval is not None:
            return aval
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if isinstance(x, np.ndarray):
        refuse_masked(x)
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
    if is_symbolic_dim(x):   # a dimension size used as a value: a weakly typed int
        return ShapedArray((), dtypes.default_int_dtype(), weak_type=True)
    if getattr(x, "__jax_array__", None) is not None:
        raise ValueError(JAX_ARRAY_ABSTRACTIFIED)
    raise TypeError(f"Argument '{x!s:.200}' of type {type(x)} is not a valid JAX type.")


# JAX's words for a value with a __jax_array__ method where a JAX value is needed (a jit
# argument) that is no pytree: only jnp.array / jnp.asarray convert such values.
JAX_ARRAY_ABSTRACTIFIED = (
    "Triggering __jax_array__() during abstractification is no longer supported. To "
    "avoid this error, either explicitly convert your object using jax.numpy.array(), or "
    "register your object as a pytree.")


def refuse_strings(x, aval):
    """As JAX's valid_jaxtype: an array of strings is a JAX value (device_put, vmap of
    the identity) but no computation (jit, grad) takes it."""
    if dtypes.is_string_dtype(getattr(aval, "dtype", None)):   # (tokens have none)
        raise TypeError(f"Argument '{x!s:.200}' of type {type(x)} is not a valid JAX type.")


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


# --- converting an array to a Python scalar (JAX's checks, before any value is read) ----

def check_scalar_conversion(shape):
    """int(), float(), complex() take only 0-d arrays (traced ones too: their shape
    is the problem before their value is)."""
    if len(shape) > 0:
        raise TypeError(f"Only scalar arrays can be converted to Python scalars; got "
                        f"arr.ndim={len(shape)}")


def check_integer_conversion(shape, dtype):
    """operator.index() (hex, oct, slicing) takes only 0-d integer arrays."""
    if not (shape == () and dtypes.issubdtype(dtype, np.integer)):
        raise TypeError("Only integer scalar arrays can be converted to a scalar index.")


def check_bool_conversion(shape):
    """bool() takes only arrays of one element."""
    size = int(np.prod(shape))
    if size == 0:
        raise ValueError("The truth value of an empty array is ambiguous. Use `array.size "
                         "> 0` to check that an array is not empty.")
    if size > 1:
        raise ValueError("The truth value of an array with more than one element is "
                         "ambiguous. Use a.any() or a.all()")
