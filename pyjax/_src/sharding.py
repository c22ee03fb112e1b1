"""Shardings as plain data: Mesh (a named grid of devices), PartitionSpec (which mesh axes
split which array dimension), NamedSharding, SingleDeviceSharding, and the index
arithmetic every layer shares (which block of an array each device holds). XLA's SPMD
partitioner does the partitioning; this module only describes it (and prints it in
Shardy's notation for the StableHLO text). Imports numpy, config and backends.devices."""
from __future__ import annotations

import collections
import contextlib
import enum
import functools
import itertools
import math
import operator
import threading
import warnings
import weakref
from typing import Any

import numpy as np

from pyjax._src import config, tree_util
from pyjax._src.backends import devices as devices_mod
from pyjax._src.core import avals
from pyjax._src.core.trace import trace_context
from pyjax._src.interpreters import batching


class AxisType(enum.Enum):
    """How a mesh axis is partitioned: by XLA's propagation (Auto), in the types
    (Explicit), or by hand inside shard_map (Manual)."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name

    __str__ = __repr__


class _Unconstrained:
    """PartitionSpec.UNCONSTRAINED: the partitioner may choose this dimension's split."""

    def __repr__(self):
        return "UNCONSTRAINED"

    def __reduce__(self):
        return (_unconstrained, ())


UNCONSTRAINED = _Unconstrained()


def _unconstrained():
    return UNCONSTRAINED


class PartitionSpec:
    """Per array dimension: None (not split), a mesh axis name, or a tuple of names
    (split over their product, the first outermost). Trailing dimensions left out are
    not split. `unreduced`/`reduced`: mesh axes over which the value is a partial sum
    still to be reduced / a value already reduced. Equal specs are one object (as in
    JAX, which interns them)."""

    __slots__ = ("_partitions", "unreduced", "reduced", "__weakref__")
    UNCONSTRAINED = UNCONSTRAINED
    _interned: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
    _interning = threading.Lock()

    def __new__(cls, *partitions, unreduced=frozenset(), reduced=frozenset()):
        key = (tuple(_canonical_partition(p) for p in partitions),
               _axis_set("unreduced", unreduced), _axis_set("reduced", reduced))
        with PartitionSpec._interning:
            found = PartitionSpec._interned.get(key)
            if found is None:
                _check_reductions(*key)
                found = object.__new__(PartitionSpec)
                found._partitions, found.unreduced, found.reduced = key
                PartitionSpec._interned[key] = found
        return found

    def __init_subclass__(cls, *args, **kwargs):
        raise TypeError("Subclassing `jax.P` is prohibited.")

    partitions = property(lambda self: self._partitions)

    def __repr__(self):
        inner = repr(self._partitions)[1:-1]
        if not self.unreduced and not self.reduced:
            return f"P({inner})"
        if inner:
            inner += " " if inner.endswith(",") else ", "
        sets = [f"{name}={set(axes)!r}" for name, axes in
                (("unreduced", self.unreduced), ("reduced", self.reduced)) if axes]
        return f"P({inner}{', '.join(sets)})"

    __str__ = __repr__

    def __len__(self):
        return len(self._partitions)

    def _plain(self, what):
        if self.unreduced or self.reduced:
            raise ValueError(f"Using {what} is dangerous when PartitionSpec has non-empty "
                             "unreduced/reduced set. Please use spec.partitions instead.")
        return self._partitions

    def __iter__(self):
        return iter(self._plain("*pspec"))

    def __getitem__(self, i):
        return self._plain("pspec[...]")[i]

    def __add__(self, other):
        if isinstance(other, PartitionSpec):
            return PartitionSpec(*self._partitions, *other._partitions,
                                 unreduced=self.unreduced | other.unreduced,
                                 reduced=self.reduced | other.reduced)
        if isinstance(other, tuple):
            return PartitionSpec(*self._plain_for_tuple(other, "__add__"), *other)
        return NotImplemented

    def __radd__(self, other):
        if isinstance(other, tuple):
            return PartitionSpec(*other, *self._plain_for_tuple(other, "__radd__"))
        return NotImplemented

    def _plain_for_tuple(self, other, method):
        """The partitions, to join with a tuple: which has no place for the unreduced
        and reduced axes (JAX's TypeError)."""
        for name, axes in (("unreduced", self.unreduced), ("reduced", self.reduced)):
            if axes:
                raise TypeError(f"other {other} cannot be of instance `tuple` when self "
                                f"{self} has {name} in `{method}` of PartitionSpec.")
        return self._partitions

    def index(self, value):
        return self._partitions.index(_canonical_partition(value))

    def count(self, value):
        return self._partitions.count(_canonical_partition(value))

    def update(self, partitions=None, unreduced=None, reduced=None):
        return PartitionSpec(*(self._partitions if partitions is None else partitions),
                             unreduced=self.unreduced if unreduced is None else unreduced,
                             reduced=self.reduced if reduced is None else reduced)

    def padded(self, ndim):
        """This spec with unsplit (None) entries appended up to rank `ndim`."""
        missing = ndim - len(self._partitions)
        return self if missing <= 0 else self.update(
            partitions=self._partitions + (None,) * missing)

    def __eq__(self, other):
        if isinstance(other, PartitionSpec):
            return self is other
        return NotImplemented

    def __hash__(self):   # P('x') != P('x', None), yet they hash alike (as JAX's)
        return hash(_strip_trailing_none(self._partitions))

    def __reduce__(self):
        return (_rebuild_spec, (self._partitions, self.unreduced, self.reduced))

    def _normalized(self, ndim):
        """ndim entries, each a tuple of axis names (or UNCONSTRAINED)."""
        parts = list(self._partitions) + [None] * (ndim - len(self._partitions))
        return tuple(p if p is UNCONSTRAINED else () if p is None
                     else (p,) if isinstance(p, str) else p for p in parts)


def _rebuild_spec(partitions, unreduced, reduced):
    return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)


def _canonical_partition(p):
    """One PartitionSpec entry: None, UNCONSTRAINED, an axis name, or a tuple of names
    (one name and the empty tuple normalize to the name and None)."""
    if isinstance(p, (list, tuple)):
        if any(isinstance(n, (list, tuple)) for n in p):
            raise ValueError(f"A tuple inside PartitionSpec cannot contain a nested tuple. "
                             f"Got {p}.")
        p = tuple(p)
        return None if not p else p[0] if len(p) == 1 else p
    if p is not None and p is not UNCONSTRAINED and not isinstance(p, str):
        raise TypeError(f"PartitionSpec entries must be None, a mesh axis name (str), or a "
                        f"tuple of names; got {p!r} of type {type(p)}.")
    return p


def _axis_set(name, axes):
    if not isinstance(axes, (set, frozenset)):
        raise TypeError(f"{name} argument of PartitionSpec should of type `frozenset` or "
                        f"`set`. Got type {type(axes)}")
    return frozenset(axes)


def _check_reductions(partitions, unreduced, reduced):
    for name, axes in (("unreduced", unreduced), ("reduced", reduced)):
        if None in axes:
            raise ValueError(f"{name} cannot contain None. All elements in {name} should "
                             "refer to the mesh axes.")
    if unreduced & reduced:
        raise ValueError("`unreduced` and `reduced` argument to PartitionSpec cannot "
                         f"overlap. Got unreduced: {unreduced} and reduced: {reduced}")
    for entry in partitions:
        for n in entry if isinstance(entry, tuple) else (entry,):
            for name, axes in (("unreduced", unreduced), ("reduced", reduced)):
                if n in axes:
                    raise ValueError(f"partitions cannot overlap with {name} axes passed "
                                     f"to PartitionSpec. Got partitions: {partitions} and "
                                     f"{name} axes: {axes}")


P = PartitionSpec


def _strip_trailing_none(parts):
    parts = list(parts)
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


class DuplicateSpecError(ValueError):
    pass


class IndivisibleError(ValueError):
    pass


# --- meshes ---------------------------------------------------------------------------------

class _AxesOfMesh:
    """What Mesh and AbstractMesh share: named axes, each of a size and an AxisType."""

    axis_names: tuple
    axis_sizes: tuple
    axis_types: tuple

    shape = property(lambda self: collections.OrderedDict(zip(self.axis_names,
                                                              self.axis_sizes)))
    shape_tuple = property(lambda self: tuple(zip(self.axis_names, self.axis_sizes)))
    size = property(lambda self: math.prod(self.axis_sizes) if self.axis_names else 0)
    empty = property(lambda self: self.size == 0)

    def _axes_of_type(self, kind):
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t == kind)

    auto_axes = property(lambda self: self._axes_of_type(AxisType.Auto))
    explicit_axes = property(lambda self: self._axes_of_type(AxisType.Explicit))
    manual_axes = property(lambda self: self._axes_of_type(AxisType.Manual))
    def _all_axes_of_type(self, kind):   # (False for a mesh without axes, as in JAX)
        return bool(self.axis_types) and all(t == kind for t in self.axis_types)

    are_all_axes_auto = property(lambda self: self._all_axes_of_type(AxisType.Auto))
    are_all_axes_explicit = property(lambda self: self._all_axes_of_type(AxisType.Explicit))
    are_all_axes_manual = property(lambda self: self._all_axes_of_type(AxisType.Manual))


def _checked_axes(axis_sizes, axis_names, axis_types, what):
    """(names, types) validated against sizes, types defaulting to Auto (a single
    AxisType is the type of a single axis, as in JAX)."""
    if len(set(axis_names)) != len(axis_names):
        raise ValueError(f"Mesh axis names must be unique, got {axis_names}.")
    if axis_types is None:
        axis_types = (AxisType.Auto,) * len(axis_names)
    elif not isinstance(axis_types, (tuple, list)):
        axis_types = (axis_types,)
    axis_types = tuple(axis_types)
    if any(not isinstance(t, AxisType) for t in axis_types):
        raise TypeError(f"axis_types passed to {what} must be of type "
                        f"`jax.sharding.AxisType`. Got {axis_types} of type "
                        f"{tuple(type(t) for t in axis_types)}")
    if len(axis_types) != len(axis_names):
        raise ValueError(f"Number of axis names should match the number of axis_types. "
                         f"Got axis_names={axis_names} and axis_types={axis_types}")
    if axis_sizes is not None and len(axis_sizes) != len(axis_names):
        raise ValueError(f"Number of axis_sizes {len(axis_sizes)} should match the "
                         f"number of axis_names {len(axis_names)}.")
    return axis_names, axis_types


class AbstractMesh(_AxesOfMesh):
    """A mesh's shape, names and axis types without its devices: what tracing needs
    (jax.sharding.get_abstract_mesh). A concrete mesh's abstract mesh also records its
    devices' kind and platform."""

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
        axis_sizes = tuple(int(s) for s in axis_sizes)
        axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        self.axis_names, self.axis_types = _checked_axes(axis_sizes, axis_names,
                                                         axis_types, "AbstractMesh")
        self.axis_sizes = axis_sizes
        self.abstract_device = abstract_device   # (device_kind, num_cores, platform)
        self._key = (axis_sizes, axis_names, self.axis_types, abstract_device)

    abstract_mesh = property(lambda self: self)

    def update(self, axis_sizes=None, axis_names=None, axis_types=None):
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types,
                            abstract_device=self.abstract_device)

    def update_axis_types(self, name_to_type: dict):
        return self.update(axis_types=tuple(name_to_type.get(n, t) for n, t in
                                            zip(self.axis_names, self.axis_types)))

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        sizes = ", ".join(f"{n!r}: {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        device = "" if self.abstract_device is None else \
            ", device_kind={}, num_cores={}, platform={}".format(*self.abstract_device)
        return (f"AbstractMesh({sizes or '()'}, axis_types="
                f"{_types_str(self.axis_types)}{device})")

    __str__ = __repr__


EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


class Mesh(_AxesOfMesh):
    """An n-dimensional array of devices with a name per axis. As a context manager
    (deprecated in JAX for jax.set_mesh), it is the mesh bare PartitionSpecs refer to."""

    _interned: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
    _interning = threading.Lock()

    def __new__(cls, devices, axis_names, axis_types=None):
        """Equal meshes are one object (as in JAX, which interns them)."""
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if any(name is None for name in axis_names):
            raise ValueError(f"Mesh axis names cannot be None. Got: {axis_names}")
        devices = np.asarray(devices, dtype=object) if not isinstance(devices, np.ndarray) \
            else devices
        if devices.ndim != len(axis_names):
            raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to "
                             f"equal the length of its second argument (`axis_names`), "
                             f"but got devices.ndim == {devices.ndim} and "
                             f"len(axis_names) == {len(axis_names)}.")
        axis_names, axis_types = _checked_axes(None, axis_names, axis_types, "Mesh")
        flat = list(devices.flat)
        empty = not axis_names and flat[0] is None   # Mesh(np.empty((), object), ())
        if not empty and len({id(d) for d in flat}) != len(flat):
            raise ValueError(f"Mesh devices must be unique, got {devices}.")
        key = (() if empty else tuple(d.id for d in flat), devices.shape, axis_names,
               axis_types)
        with Mesh._interning:
            mesh = Mesh._interned.get(key)
            if mesh is None:
                mesh = object.__new__(cls)
                mesh.devices = devices.copy()
                mesh.devices.flags.writeable = False
                mesh.axis_names, mesh.axis_types = axis_names, axis_types
                mesh._empty = empty
                mesh._key, mesh._hash = key, hash(key)   # hashed on every sharded call
                Mesh._interned[key] = mesh
        return mesh

    def __reduce__(self):
        return (Mesh, (self.devices, self.axis_names, self.axis_types))

    def update(self, devices=None, axis_names=None, axis_types=None):
        """This mesh with its devices, axis names or axis types replaced."""
        return Mesh(self.devices if devices is None else devices,
                    self.axis_names if axis_names is None else axis_names,
                    self.axis_types if axis_types is None else axis_types)

    size = property(lambda self: 0 if self._empty else math.prod(self.axis_sizes))
    axis_sizes = property(lambda self: tuple(self.devices.shape))
    device_ids = property(lambda self: np.vectorize(lambda d: d.id, otypes=[int])(
        self.devices))
    local_devices = property(lambda self: [d for d in self.devices.flat
                                           if d.process_index == _process_index()])
    local_mesh = property(lambda self: self)

    @functools.cached_property
    def abstract_mesh(self) -> AbstractMesh:
        first = self.devices.flat[0] if self.size else None
        device = None if first is None else (
            getattr(first, "device_kind", first.platform), None, first.platform)
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types,
                            abstract_device=device)

    @functools.cached_property
    def _flat_devices(self):
        return tuple(self.devices.flat)

    _flat_devices_tuple = property(lambda self: self._flat_devices)   # JAX's spelling

    @property
    def device_set(self):
        return set(self.devices.flat)

    def __eq__(self, other):
        return self is other or isinstance(other, Mesh) and self._key == other._key

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={_types_str(self.axis_types)})")

    def __str__(self):
        sizes = ", ".join(f"{n!r}: {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        return f"Mesh({sizes}, axis_types={_types_str(self.axis_types)})"

    def __enter__(self):
        warnings.warn("`with mesh:` context manager has been deprecated. Please use "
                      "`with jax.set_mesh(mesh):` instead.", DeprecationWarning,
                      stacklevel=2)
        _mesh_state.stack.append(self)
        config.config.changed()
        return self

    def __exit__(self, *exc):
        _mesh_state.stack.pop()
        config.config.changed()
        return False

    def _position(self, device_index):
        """The mesh coordinates of the device at flat position device_index."""
        return np.unravel_index(device_index, self.devices.shape)


def _types_str(types):
    return "(" + ", ".join(t.name for t in types) + ("," if len(types) == 1 else "") + ")"


def _process_index():
    return devices_mod.process_index()


class _MeshState(threading.local):
    def __init__(self):
        self.stack = []   # `with mesh:` and jax.set_mesh meshes, innermost last
        self.context = []   # jax.set_mesh meshes only (JAX's concrete context mesh)
        self.manual = []   # (mesh, manual axes) per shard_map body being traced, innermost last
        self.vma_typed = []   # per body in `manual`: whether its values' types carry vma
        self.eager = []       # per body in `manual`: whether its shard_map runs eagerly


_mesh_state = _MeshState()


def current_mesh():
    """The innermost mesh set with `with mesh:` or jax.set_mesh in this thread, or None:
    the mesh bare PartitionSpecs name."""
    stack = _mesh_state.stack
    return stack[-1] if stack else None


def context_mesh():
    """The innermost mesh set with jax.set_mesh in this thread, or None: the mesh values
    with no sharded input are placed on (the deprecated `with mesh:` places nothing)."""
    context = _mesh_state.context
    return context[-1] if context else None


def mesh_context_set() -> bool:
    """Whether a mesh (jax.set_mesh, use_abstract_mesh or a shard_map body) may type the
    values made now; False costs three thread-local reads."""
    state = _mesh_state
    return bool(state.context or state.manual or _abstract_override() is not None)


class set_mesh:
    """jax.set_mesh(mesh): the mesh bare PartitionSpecs refer to; a context manager, or
    (called alone) the thread's mesh from now on."""

    def __init__(self, mesh):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh expects a jax.sharding.Mesh, got {mesh!r}.")
        if mesh.manual_axes:
            raise ValueError(f"mesh {mesh} contains manual axes which is not allowed when "
                             "using `jax.set_mesh`. Please use `jax.shard_map` to enter "
                             "into `Manual` mode instead.")
        self.mesh = mesh
        self._previous = list(_mesh_state.stack), list(_mesh_state.context)
        _mesh_state.stack.append(mesh)
        _mesh_state.context.append(mesh)
        config.config.changed()   # jit's cache keys on the context mesh: fast calls recheck

    def __enter__(self):
        return self.mesh

    def __exit__(self, *exc):
        _mesh_state.stack[:], _mesh_state.context[:] = self._previous
        config.config.changed()
        return False


def get_mesh():
    return current_mesh()


def tracing_context():
    """What besides a function's arguments changes what tracing it stages: the tracing
    options, set_xla_metadata's context, the context mesh (which types results, e.g.
    out_sharding=P('x')) and the named axes of enclosing vmaps and pmaps (their sizes:
    lax.axis_size). Part of every cache key of traces (jit's, checkpoint's, control
    flow's)."""
    return (config.config.trace_state(), trace_context().eqn_ctx, get_abstract_mesh(),
            batching.bound_axes())


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh of the mesh set in this thread with jax.set_mesh (or
    use_abstract_mesh), or an empty AbstractMesh when none is. Inside a shard_map body it
    is that shard_map's mesh with its manual axes typed Manual."""
    manual = current_manual()
    if manual is not None:
        mesh, axes = manual
        return mesh.abstract_mesh.update_axis_types({n: AxisType.Manual for n in axes})
    abstract = _abstract_override()
    if abstract is not None:
        return abstract
    mesh = context_mesh()
    return EMPTY_ABSTRACT_MESH if mesh is None else mesh.abstract_mesh


@contextlib.contextmanager
def use_abstract_mesh(mesh: AbstractMesh):
    """jax.sharding.use_abstract_mesh: inside, get_abstract_mesh() is `mesh` (the shape,
    names and axis types tracing sees), without devices to run on."""
    if not isinstance(mesh, AbstractMesh):
        raise ValueError(f"Expected mesh of type `jax.sharding.AbstractMesh`. Got "
                         f"{type(mesh)}")
    previous = get_abstract_mesh()
    if not previous.empty and not mesh.empty and previous.size != mesh.size:
        raise ValueError(f"use_abstract_mesh cannot change the size of the mesh. Got new "
                         f"mesh: {mesh} with size={mesh.size} and prev mesh: {previous} "
                         f"with size={previous.size}")
    # (kept in the tracing context: equations staged inside record it)
    context = trace_context()
    saved = context.eqn_ctx
    context.eqn_ctx = saved.with_abstract_mesh(mesh)
    config.config.changed()
    try:
        yield mesh
    finally:
        context.eqn_ctx = saved
        config.config.changed()


def _abstract_override():
    """The mesh use_abstract_mesh sets here (or that of the equation being re-traced),
    or None."""
    return trace_context().eqn_ctx.abstract_mesh


def abstract_context_mesh():
    """The innermost mesh set with use_abstract_mesh when all its axes are Explicit and
    it has several devices, or None: a trace under it lowers (for named platforms)
    partitioned over that mesh, as JAX's does (one device needs no partitioning)."""
    found = _abstract_override()
    return found if found is not None and found.are_all_axes_explicit and found.size > 1 \
        else None


def current_manual():
    """(mesh, the axes made manual so far) of the innermost shard_map body being traced
    in this thread, or None outside any."""
    manual = _mesh_state.manual
    return manual[-1] if manual else None


def vma_axes() -> tuple:
    """The manual axes whose variation values' types record (their `vma`), in mesh order:
    those of the innermost shard_map body being traced with check_vma=True (but for
    size-1 axes under jax_remove_size_one_mesh_axis_from_type); () outside any, or in a
    body with check_vma=False."""
    state = _mesh_state
    if not (state.vma_typed and state.vma_typed[-1]):
        return ()
    mesh, axes = state.manual[-1]
    if config.remove_size_one_mesh_axis_from_type.value:
        return tuple(n for n in axes if mesh.shape[n] != 1)
    return axes


def order_wrt_mesh(names) -> tuple:
    """`names` (manual axis names) in the order of the innermost shard_map's mesh."""
    manual = current_manual()
    order = manual[0].axis_names if manual is not None else ()
    return tuple(n for n in order if n in names) + tuple(
        sorted((n for n in names if n not in order), key=str))


@contextlib.contextmanager
def manual_axes(mesh, axes, vma_typed=False, eager=False):
    """While tracing a shard_map body over `mesh`: `axes` (with those of the shard_maps
    around it) are manual; with `vma_typed` (check_vma) values' types record the manual
    axes they vary along; `eager`: the shard_map is called outside any transformation."""
    _mesh_state.manual.append((mesh, tuple(axes)))
    _mesh_state.vma_typed.append(vma_typed)
    _mesh_state.eager.append(eager)
    try:
        yield
    finally:
        _mesh_state.manual.pop()
        _mesh_state.vma_typed.pop()
        _mesh_state.eager.pop()


def in_eager_shard_map() -> bool:
    """Whether the innermost shard_map body being traced belongs to a shard_map called
    eagerly (outside jit and every other transformation)."""
    return bool(_mesh_state.eager) and _mesh_state.eager[-1]


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A Mesh of `axis_shapes` over the first prod(axis_shapes) devices (or `devices`),
    with Explicit axes unless axis_types says otherwise (as JAX 0.10.2). One axis may be
    named by a bare string, as Mesh allows."""
    if isinstance(axis_names, str):
        axis_names = (axis_names,)
    try:
        axis_shapes = tuple(operator.index(s) for s in axis_shapes)
    except TypeError:
        raise ValueError("`axis_shapes` passed to `make_mesh` should be a sequence of "
                         f"ints. Got {axis_shapes}") from None
    axis_names = tuple(axis_names)
    if len(axis_shapes) != len(axis_names):
        raise ValueError(f"Length of axis_shapes {axis_shapes} and axis_names "
                         f"{axis_names} must be equal.")
    devices = list(devices_mod.devices()) if devices is None else list(devices)
    size = math.prod(axis_shapes)
    if size > len(devices):
        raise ValueError(
            f"Number of devices {len(devices)} must be >= the product of mesh_shape "
            f"{axis_shapes}. Ask for more CPU devices before first use with "
            f"jax.config.update('jax_num_cpu_devices', {size}) or "
            f"XLA_FLAGS=--xla_force_host_platform_device_count={size}.")
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_names)
    grid = np.empty(size, dtype=object)
    grid[:] = devices[:size]
    return Mesh(grid.reshape(axis_shapes), axis_names, axis_types)


# --- shardings ------------------------------------------------------------------------------

class Sharding:
    """How an array's blocks are laid out over devices (JAX's jax.sharding.Sharding)."""

    memory_kind = None

    @property
    def _device_assignment(self) -> tuple:
        raise NotImplementedError

    @property
    def device_set(self) -> set:
        return set(self._device_assignment)

    @property
    def num_devices(self) -> int:
        return len(self._device_assignment)

    @property
    def _addressable_assignment(self) -> tuple:
        """The devices of this process, in device-assignment order."""
        here = _process_index()
        return tuple(d for d in self._device_assignment if d.process_index == here)

    @property
    def addressable_devices(self) -> set:
        return {d for d in self.device_set if d.process_index == _process_index()}

    @property
    def is_fully_addressable(self) -> bool:
        return all(d.process_index == _process_index() for d in self._device_assignment)

    def devices_indices_map(self, global_shape) -> dict:
        """{device: the index (a tuple of slices) of the block it holds}."""
        return dict(zip(self._device_assignment, self._indices(tuple(global_shape))))

    def addressable_devices_indices_map(self, global_shape) -> dict:
        return {d: i for d, i in self.devices_indices_map(global_shape).items()
                if d.process_index == _process_index()}

    def shard_shape(self, global_shape) -> tuple:
        raise NotImplementedError

    def is_equivalent_to(self, other, ndim) -> bool:
        return same_layout(self, other, ndim)

    def with_memory_kind(self, kind):
        return self


def _check_memory_kind(memory_kind, device):
    """JAX's error for a memory kind the device cannot address (pyjax keeps arrays in
    device memory only)."""
    if memory_kind not in (None, "device"):
        platform = getattr(device, "platform", "cpu")
        raise ValueError(f"Could not find memory addressable by device {platform}. Device "
                         f"{platform} can address the following memory kinds: device. Got "
                         f"memory kind: {memory_kind}")


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device, *, memory_kind=None):
        _check_memory_kind(memory_kind, device)
        self._device = device

    device = property(lambda self: self._device)
    _device_assignment = property(lambda self: (self._device,))
    is_fully_replicated = property(lambda self: True)
    spec = property(lambda self: PartitionSpec())
    memory_kind = property(lambda self: "device")

    @property
    def mesh(self):
        return Mesh(np.array([self._device], dtype=object), ("_single",))

    def _indices(self, shape):
        return [(slice(None),) * len(shape)]

    def _block_positions(self, ndim):
        return [((0,) * ndim, 0)]

    def replica_ids(self, ndim):
        return [0]

    def shard_shape(self, global_shape):
        return tuple(global_shape)

    def check_compatible_aval(self, aval_shape) -> None:
        """Every shape fits on one device whole."""

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(("SingleDeviceSharding", self._device))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"


def make_single_device_sharding(device, *, memory_kind=None):
    return SingleDeviceSharding(device, memory_kind=memory_kind)


_single_device_shardings: dict[Any, SingleDeviceSharding] = {}


def single_device_sharding(device):
    """The SingleDeviceSharding of `device`, made once (every Array's .sharding asks)."""
    s = _single_device_shardings.get(device)
    if s is None:   # setdefault: threads racing here all get the first one stored
        s = _single_device_shardings.setdefault(device, SingleDeviceSharding(device))
    return s


MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")   # what JAX's CPU names


class NamedSharding(Sharding):
    """Blocks of an array laid out over a Mesh by a PartitionSpec."""

    def __init__(self, mesh, spec=PartitionSpec(), *, memory_kind=None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding expects a jax.sharding.Mesh or AbstractMesh "
                            f"as `mesh`, got {mesh!r} of type {type(mesh)}.")
        if spec is None:
            raise TypeError("NamedSharding: Unexpected None for `spec`; pass a "
                            "PartitionSpec (P() for a replicated array).")
        if not isinstance(spec, PartitionSpec):
            if isinstance(spec, (tuple, list)):
                spec = PartitionSpec(*spec)
            else:
                raise TypeError(f"NamedSharding expects a PartitionSpec as `spec`, got "
                                f"{spec!r} of type {type(spec)}.")
        abstract = isinstance(mesh, AbstractMesh)
        if abstract and memory_kind not in (None, *MEMORY_KINDS):
            raise ValueError(f"Got invalid memory kind: {memory_kind}. Valid memory kinds "
                             f"are: {', '.join(MEMORY_KINDS)}")
        if not abstract:
            _check_memory_kind(memory_kind, mesh._flat_devices[0] if mesh.size else None)
        # An AbstractMesh's sharding (a type) only names a memory; arrays live in "device"
        self._memory_kind = memory_kind if abstract else "device"
        self.mesh, self.spec = mesh, spec
        _check_reduced_axes(mesh, spec)
        seen = set()
        for entry in spec.partitions:
            names = () if entry is None or entry is UNCONSTRAINED else \
                (entry,) if isinstance(entry, str) else entry
            for name in names:
                if name not in mesh.axis_names:
                    raise ValueError(f"Resource axis: {name} of {spec} is not found in "
                                     f"mesh: {mesh.axis_names}.")
                if name in seen:
                    raise DuplicateSpecError(
                        f"A single NamedSharding spec specification can map every mesh "
                        f"axis to at most one positional dimension, but {spec} has "
                        f"duplicate entries for `{name}`")
                seen.add(name)
        if UNCONSTRAINED in spec.partitions and AxisType.Auto not in mesh.axis_types:
            raise ValueError(f"{spec} cannot contain `P.UNCONSTRAINED` when no mesh "
                             f"axis_types are `Auto`. Got mesh axis_types: "
                             f"{_types_str(mesh.axis_types)}")

    memory_kind = property(lambda self: self._memory_kind)

    def update(self, *, mesh=None, spec=None, memory_kind=None) -> NamedSharding:
        """This sharding with the given fields replaced (a spec may be a tuple)."""
        spec = self.spec if spec is None else spec
        return NamedSharding(self.mesh if mesh is None else mesh,
                             spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec),
                             memory_kind=self.memory_kind if memory_kind is None
                             else memory_kind)

    @property
    def _device_assignment(self):
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError(f"{self} is over an AbstractMesh, which has no devices; use "
                             "a NamedSharding over a concrete jax.sharding.Mesh.")
        return self.mesh._flat_devices

    @property
    def is_fully_replicated(self):
        used = {n for entry in self.spec._normalized(len(self.spec))
                if entry is not UNCONSTRAINED for n in entry}
        if self.mesh.size > 1 and self.spec.unreduced:   # partial sums differ (as JAX)
            return False
        return all(self.mesh.shape[n] == 1 for n in used)

    def __eq__(self, other):
        return self is other or (isinstance(other, NamedSharding) and
                                 self.spec == other.spec and self.mesh == other.mesh
                                 and self._memory_kind == other._memory_kind)

    def __hash__(self):
        return hash((self.mesh, self.spec))

    def __repr__(self):
        if isinstance(self.mesh, AbstractMesh):   # a type's sharding: a memory if named
            memory = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
            return f"NamedSharding(mesh={self.mesh}, spec={self.spec}{memory})"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec}, memory_kind=device)"

    def check_compatible_aval(self, aval_shape) -> None:
        """Raises ValueError when the spec names more dimensions than `aval_shape` has."""
        if len(aval_shape) < len(self.spec):
            scalar = " For scalars the PartitionSpec should be P()" if not aval_shape else ""
            raise ValueError(f"Sharding {self} is only valid for values of rank at least "
                             f"{len(self.spec)}, but was applied to a value of rank "
                             f"{len(aval_shape)}.{scalar}")

    def _to_xla_hlo_sharding(self, ndim):
        """XLA's HloSharding of this layout for arrays of rank `ndim` (needs XLA)."""
        runtime = devices_mod.xla_runtime()
        if runtime is None:
            raise RuntimeError("NamedSharding._to_xla_hlo_sharding needs XLA: jaxlib and "
                               "the 'xla' executor (config pyjax_executor).")
        return runtime.hlo_sharding(self, ndim)

    def _entries(self, ndim):
        if len(self.spec) > ndim:
            raise ValueError(f"One of the arguments has a sharding {self} whose spec has "
                             f"{len(self.spec)} entries, more than the array's rank "
                             f"{ndim}. The PartitionSpec must have at most as many "
                             "entries as the array has dimensions.")
        return [() if e is UNCONSTRAINED else e for e in self.spec._normalized(ndim)]

    def _tiling(self, ndim):
        """(pieces per dimension, replica count), with size-1 axes dropped."""
        sizes = self.mesh.shape
        pieces = tuple(math.prod(sizes[n] for n in e) for e in self._entries(ndim))
        return pieces, self.mesh.size // math.prod(pieces)

    def shard_shape(self, global_shape):
        global_shape = tuple(global_shape)
        pieces, _ = self._tiling(len(global_shape))
        check_divisible(self, global_shape, pieces)
        return tuple(d // p for d, p in zip(global_shape, pieces))

    def _block_positions(self, ndim):
        """Per device (in mesh order): its block's position along each dimension and
        its replica id (its position among the devices holding the same block)."""
        sizes = self.mesh.shape
        names = self.mesh.axis_names
        entries = self._entries(ndim)
        used = {n for e in entries for n in e}
        free = [n for n in names if n not in used]
        out = []
        for coords in itertools.product(*[range(s) for s in self.mesh.axis_sizes]):
            at = dict(zip(names, coords))
            blocks = tuple(_mixed_radix([at[n] for n in e], [sizes[n] for n in e])
                           for e in entries)
            replica = _mixed_radix([at[n] for n in free], [sizes[n] for n in free])
            out.append((blocks, replica))
        return out

    def _partial_positions(self):
        """Per device (in mesh order): its position along the spec's unreduced axes
        (mixed radix, mesh order; 0 on the devices that hold a placed value whole) and
        its replica id among the devices holding the same block and partial."""
        sizes = self.mesh.shape
        names = self.mesh.axis_names
        used = {n for e in self._entries(len(self.spec)) for n in e}
        unreduced = [n for n in names if n in self.spec.unreduced]
        free = [n for n in names if n not in used and n not in self.spec.unreduced]
        out = []
        for coords in itertools.product(*[range(s) for s in self.mesh.axis_sizes]):
            at = dict(zip(names, coords))
            out.append((_mixed_radix([at[n] for n in unreduced], [sizes[n] for n in unreduced]),
                        _mixed_radix([at[n] for n in free], [sizes[n] for n in free])))
        return out

    def _indices(self, shape):
        if self.spec.unreduced:
            raise NotImplementedError(
                "device_indices_map doesn't work with unreduced. Please file a bug at "
                "https://github.com/jax-ml/jax/issues")
        return self._block_indices(shape)

    def _block_indices(self, shape):
        """Per device, the slices of its block (an unreduced axis splits nothing)."""
        pieces, _ = self._tiling(len(shape))
        check_divisible(self, shape, pieces)
        result = []
        for blocks, _ in self._block_positions(len(shape)):
            result.append(tuple(
                slice(None) if p == 1 else slice(b * (d // p), (b + 1) * (d // p))
                for b, p, d in zip(blocks, pieces, shape)))
        return result

    def replica_ids(self, ndim):
        return [r for _, r in self._block_positions(ndim)]

    def to_shardy(self, ndim, mesh_name="mesh", open_dims=False, as_type=False):
        """The Shardy attribute text, e.g. #sdy.sharding<@mesh, [{"x"}, {}]>. With
        `open_dims`, the partitioner may split every dimension further (over the axes
        the spec leaves out): #sdy.sharding<@mesh, [{"x", ?}, {?}]>. With `as_type`,
        as JAX lowers a type's sharding: on a mesh with Auto axes every dimension is
        open to them, and the Explicit axes the type leaves out are kept replicated."""
        replicated = []
        if as_type and self.mesh.auto_axes:
            open_dims = True
            used = {n for e in self.spec._normalized(ndim) if e is not UNCONSTRAINED
                    for n in e} | self.spec.unreduced | self.spec.reduced
            replicated = [n for n in self.mesh.explicit_axes if n not in used]
        dims = []
        for e in self.spec._normalized(ndim):
            if e is UNCONSTRAINED:
                dims.append("{?}")
            else:
                names = [f'"{n}"' for n in e] + (["?"] if open_dims else [])
                dims.append("{" + ", ".join(names) + "}")
        unreduced = [n for n in self.mesh.axis_names if n in self.spec.unreduced]
        return (f"#sdy.sharding<@{mesh_name}, [{', '.join(dims)}]"
                f"{_shardy_axes('replicated', replicated)}"
                f"{_shardy_axes('unreduced', unreduced)}>")


def _shardy_axes(label, names):
    """`, label={"a", "b"}` of a Shardy sharding attribute; nothing for no names."""
    quoted = ", ".join(f'"{n}"' for n in names)
    return f", {label}={{{quoted}}}" if names else ""


def _check_reduced_axes(mesh, spec):
    """JAX's checks of a spec's unreduced/reduced axes. A value reduced over an axis
    agrees along it (it is laid out as replicated there); a value unreduced over an axis
    is the sum of the partial values its devices along that axis hold."""
    for name, axes in (("Unreduced", spec.unreduced), ("Reduced", spec.reduced)):
        for u in axes:
            if u not in mesh.axis_names:
                raise ValueError(f"{name} axes {u} is not found in "
                                 f"mesh.axis_names={mesh.axis_names}. Got pspec={spec}")
            if mesh.axis_types[mesh.axis_names.index(u)] != AxisType.Explicit:
                raise ValueError(f"{name} axes can only refer to mesh axes that is of type "
                                 f"`Explicit`. Got {name.lower()} axes: {axes} and mesh: "
                                 f"{mesh}")


def _mixed_radix(digits, radices):
    value = 0
    for d, r in zip(digits, radices):
        value = value * r + d
    return value


def check_divisible(sharding, shape, pieces):
    if any(d % p for d, p in zip(shape, pieces)):
        bad = next(i for i, (d, p) in enumerate(zip(shape, pieces)) if d % p)
        raise IndivisibleError(
            f"Sharding {sharding} implies that array axis {bad} is partitioned "
            f"{pieces[bad]} times, but the dimension size is {shape[bad]} (full shape: "
            f"{tuple(shape)}, per-dimension tiling factors: {list(pieces)} should evenly "
            "divide the shape)")


def shardy_mesh(mesh):
    """The value of a module-level Shardy mesh declaration for `mesh` (devices in mesh
    order): <["x"=2, "y"=4]>."""
    axes = ", ".join(f'"{n}"={s}' for n, s in zip(mesh.axis_names, mesh.axis_sizes))
    return f"<[{axes}]>"


def spec_from_tiling(mesh, ndim, tile_of_device):
    """The PartitionSpec over `mesh` whose blocks match `tile_of_device` (per device in
    mesh order, the block position along each dimension), or None when no spec does.
    Used to name the shardings XLA chose for a program's outputs."""
    names = [n for n, s in zip(mesh.axis_names, mesh.axis_sizes) if s > 1]
    wanted = [tuple(t) for t in tile_of_device]
    for choice in itertools.product(range(ndim + 1), repeat=len(names)):
        groups = [[n for n, c in zip(names, choice) if c == d] for d in range(ndim)]
        for order in itertools.product(*[list(itertools.permutations(g)) for g in groups]):
            spec = PartitionSpec(*[tuple(g) if g else None for g in order])
            spec = PartitionSpec(*_strip_trailing_none(spec))
            candidate = NamedSharding(mesh, spec)
            if [b for b, _ in candidate._block_positions(ndim)] == wanted:
                return spec
    return None


def unreduced_spec_from_partials(mesh, spec, partials):
    """`spec` made unreduced over the mesh axes (among those it leaves unsplit) whose
    coordinates number the partial sums as `partials` does (per device, mesh order);
    None when no such axes do."""
    used = {n for e in spec._normalized(len(spec)) for n in e}
    free = [n for n, s in zip(mesh.axis_names, mesh.axis_sizes) if s > 1 and n not in used]
    for k in range(1, len(free) + 1):
        for axes in itertools.combinations(free, k):
            candidate = NamedSharding(mesh, spec.update(unreduced=frozenset(axes)))
            if [u for u, _ in candidate._partial_positions()] == list(partials):
                return candidate.spec
    return None


def check_constrained(shardings, what):
    """JAX's error for a pytree of shardings (jit's in/out_shardings) in which a
    dimension is PartitionSpec.UNCONSTRAINED: only sharding constraints may leave one
    to the partitioner."""
    is_leaf = lambda x: x is None or isinstance(x, (Sharding, PartitionSpec))
    leaves = [] if shardings is None else tree_util.tree_leaves(shardings, is_leaf=is_leaf)
    for leaf in leaves:
        spec = leaf.spec if isinstance(leaf, NamedSharding) else leaf
        if isinstance(spec, PartitionSpec) and UNCONSTRAINED in spec.partitions:
            raise ValueError(f"Unconstrained dims are not allowed when passed to {what}: "
                             f"{leaf}")


def canonical_sharding(value: Any, what: str, abstract: bool = False):
    """`value` as a Sharding: a Sharding, or a bare PartitionSpec on the current mesh
    (the abstract one use_abstract_mesh sets, which auto_axes/explicit_axes retype; in a
    shard_map body, the shard_map's). With `abstract` (a sharding constraint: it names a
    type), a spec under jax.set_mesh is over the context's AbstractMesh, as JAX's is."""
    if isinstance(value, Sharding):
        return value
    if isinstance(value, PartitionSpec):
        state = _mesh_state
        mesh = _abstract_override()
        manual = current_manual()
        if mesh is None and manual:
            mesh = manual[0]
        elif mesh is None:
            mesh = state.context[-1].abstract_mesh if abstract and state.context \
                and state.context[-1] is current_mesh() else current_mesh()
        if mesh is None:
            if what == "device_put":   # JAX's words, per API
                raise ValueError("Please set a mesh via `jax.set_mesh` if a PartitionSpec "
                                 "is passed to device_put")
            raise ValueError("Using PartitionSpec when you are not under a mesh context is "
                             "not allowed. Please pass a NamedSharding instance or enter "
                             f"into a mesh context via `jax.set_mesh`. Got {value} (passed "
                             f"to {what})")
        return NamedSharding(mesh, value)
    raise TypeError(f"{what} must be a jax.sharding.Sharding (e.g. NamedSharding) or a "
                    f"PartitionSpec, got {value!r} of type {type(value)}.")


def jit_spec_sharding(spec, what):
    """A bare PartitionSpec given to jit (`what`: "in_shardings"/"out_shardings") over
    the mesh JAX's jit resolves it on: jax.set_mesh's, else one set with
    use_abstract_mesh that has an Explicit axis (the deprecated `with mesh:` is not
    one); JAX's RuntimeError without such a mesh."""
    mesh = context_mesh()
    override = _abstract_override()
    if mesh is None and override is not None and override.explicit_axes:
        mesh = override
    if mesh is None:
        raise RuntimeError(
            f"jit requires a non-empty mesh in context if you are passing `PartitionSpec`s "
            f"to {what}. You can define a context mesh via `jax.set_mesh(mesh)`. "
            f"Alternatively, provide `Sharding`s to {what} and then the mesh context "
            "manager is not required.")
    return NamedSharding(mesh, spec)


def same_layout(a, b, ndim):
    """Whether shardings a and b put the same blocks on the same devices."""
    if a is b or a == b:
        return True
    if getattr(getattr(a, "spec", None), "unreduced", frozenset()) != \
            getattr(getattr(b, "spec", None), "unreduced", frozenset()):
        return False   # partial sums and whole values are laid out alike, yet differ
    return (isinstance(a, Sharding) and isinstance(b, Sharding)
            and a._device_assignment == b._device_assignment
            and a._block_positions(ndim) == b._block_positions(ndim))


# --- sharding in types ----------------------------------------------------------------------

def _unsharded_type_sharding(ndim):
    return NamedSharding(EMPTY_ABSTRACT_MESH, PartitionSpec(*[None] * ndim))


avals.set_unsharded_sharding_factory(_unsharded_type_sharding)


def type_sharding(sharding, ndim):
    """The sharding an array laid out as `sharding` carries in its type (aval), or None
    for none: over the abstract mesh, the spec padded to ndim with only the mesh's
    Explicit axes kept (Auto axes are XLA's business, not the type's: over a mesh of
    Auto axes the type names the mesh alone, as JAX's)."""
    if not isinstance(sharding, NamedSharding):
        return None
    mesh = sharding.mesh.abstract_mesh
    if mesh.empty:
        return None
    explicit = set(mesh.explicit_axes)
    if config.remove_size_one_mesh_axis_from_type.value:   # such an axis splits nothing
        explicit = {n for n in explicit if mesh.shape[n] != 1}
    entries = []
    for entry in sharding.spec._normalized(ndim):
        names = () if entry is UNCONSTRAINED else tuple(n for n in entry if n in explicit)
        entries.append(None if not names else names[0] if len(names) == 1 else names)
    if all(e is None for e in entries) and not sharding.spec.unreduced \
            and not sharding.spec.reduced:
        spec = PartitionSpec(*entries)
    else:
        spec = PartitionSpec(*entries, unreduced=sharding.spec.unreduced & explicit,
                             reduced=sharding.spec.reduced & explicit)
    return NamedSharding(mesh, spec)


_context_type_shardings: dict[tuple, NamedSharding] = {}


def context_type_sharding(ndim):
    """The sharding in the type of a value of rank `ndim` made now from no sharded
    operand: split nowhere over the context's abstract mesh (jax.set_mesh,
    use_abstract_mesh, or a shard_map body's mesh with its manual axes), as JAX types
    it; None without one."""
    if not mesh_context_set():
        return None
    mesh = get_abstract_mesh()
    key = (mesh, ndim)
    found = _context_type_shardings.get(key)
    if found is None:
        found = _context_type_shardings.setdefault(
            key, NamedSharding(mesh, PartitionSpec(*[None] * ndim)))
    return found


def context_placement(mesh, type_sharding_, ndim):
    """Where a value typed `type_sharding_` (or untyped: None) with no sharded input is
    laid out on the context `mesh`: as its type splits it over Explicit axes, else whole
    on every device, spelled P(None, ...) when the mesh has Explicit axes and P() when
    XLA places everything (all axes Auto), as JAX spells it."""
    if not mesh.explicit_axes:
        return NamedSharding(mesh, PartitionSpec())
    if type_sharding_ is None:
        return NamedSharding(mesh, PartitionSpec(*[None] * ndim))
    return NamedSharding(mesh, type_sharding_.spec)


def typed_aval(aval, sharding):
    """`aval` carrying the type-level sharding of an array laid out as `sharding`."""
    found = type_sharding(sharding, len(aval.shape))
    return aval if found is aval._sharding or found == aval._sharding else \
        aval.update(sharding=found)


def concrete_mesh_of(abstract_mesh, context):
    """The concrete mesh an AbstractMesh stands for: `context` (a Mesh, or None) laid
    out as the abstract mesh says (JAX's use_abstract_mesh may rename, reshape and retype
    the context mesh's axes, keeping its devices), or None for a mesh of another size."""
    if context is None or context.size != abstract_mesh.size:
        return None
    if context.shape_tuple == abstract_mesh.shape_tuple and \
            context.axis_types == abstract_mesh.axis_types:
        return context
    return concretize_mesh(abstract_mesh, context._flat_devices)


def concretize_mesh(mesh, devices):
    """An AbstractMesh laid over `devices` (in order; as many as the mesh has): the
    concrete Mesh it stands for once a computation's devices are known. A Mesh stays."""
    if not isinstance(mesh, AbstractMesh):
        return mesh
    grid = np.empty(len(devices), dtype=object)
    grid[:] = list(devices)
    return Mesh(grid.reshape(mesh.axis_sizes), mesh.axis_names, mesh.axis_types)


def concretize_sharding(sharding, devices):
    """A NamedSharding over an AbstractMesh laid over `devices` (JAX's error when their
    number differs); any other sharding (or None) stays."""
    if not (isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, AbstractMesh)):
        return sharding
    if sharding.mesh.size != len(devices):
        raise ValueError(f"The size of abstract mesh {sharding.mesh.size} in {sharding} "
                         f"must match the length of device assignment: {len(devices)}")
    return NamedSharding(concretize_mesh(sharding.mesh, devices), sharding.spec,
                         memory_kind=sharding.memory_kind)


def concrete_sharding(type_sharding_, mesh):
    """The NamedSharding over the concrete `mesh` that a type's sharding names."""
    return NamedSharding(mesh, type_sharding_.spec)
