"""The immutable Array type. An Array owns its data: a host NumPy value (the eager fast
path) and, once XLA has touched it, a device buffer (or, laid out over several devices,
one buffer spanning them). It reads, moves and splits its buffers through the device
runtime interface of backends/devices.py (`DeviceRuntime`, which XLA's runtime
implements); it knows nothing of programs. Operators, methods and `.at[]` are installed by
jax.numpy at import (an upward hook)."""
from __future__ import annotations

import gc
import os
import sys
import threading
import traceback
import warnings
import weakref
from itertools import repeat
from typing import Any, NamedTuple

import numpy as np

from pyjax._src import config, dtypes, errors
from pyjax._src import layout as layout_mod
from pyjax._src import sharding as sharding_mod
from pyjax._src.backends import devices as devices_mod
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.avals import (check_bool_conversion, check_integer_conversion,
                                   check_scalar_conversion)


_default_device_state = devices_mod.default_device_state
_default_device_blocks = devices_mod.default_device_blocks


# --- jax_array_garbage_collection_guard ---------------------------------------------------
# While the option is 'log' or 'fatal', each new Array is watched: a finalizer that runs
# while Python's cycle collector is collecting (not on a reference count reaching zero)
# reports where the Array was made, as JAX's guard does.

_gc_guard = config.array_garbage_collection_guard
_GC_MESSAGE = ("`jax.Array` was deleted by the Python garbage collector instead of reference "
               "counting. Break the reference cycle that delays the deletion of this "
               "`jax.Array` to avoid hogging memory. Traceback: \n")
_collection = {"running": False, "hooked": False}
_collection_lock = threading.Lock()


def _on_collection(phase, info):
    _collection["running"] = phase == "start"


def _watch_collection(array):
    if _gc_guard.value not in ("log", "fatal"):
        return
    if not _collection["hooked"]:
        with _collection_lock:
            if not _collection["hooked"]:
                gc.callbacks.append(_on_collection)
                _collection["hooked"] = True
    frames = traceback.extract_stack()[-3::-1]   # from Array's maker out, as JAX lists them
    where = "".join(f"{f.filename}:{f.lineno} ({f.name})\n" for f in frames)
    weakref.finalize(array, _collected, where).atexit = False


def _collected(where):
    level = _gc_guard.value
    if not _collection["running"] or level not in ("log", "fatal"):
        return
    sys.stderr.write("RuntimeError: " + _GC_MESSAGE + where)
    sys.stderr.flush()
    if level == "fatal":
        os.abort()


class Array:
    """A JAX array: immutable, typed by its aval, placed on a device."""

    __slots__ = ("_npy", "aval", "_device", "committed", "_buffer", "_deleted",
                 "_sharding", "_global_buffer", "_pack", "_pack_index", "__weakref__",
                 "__dict__")
    __array_priority__ = 100
    _pack_index: int   # set on views only (pack_views)

    def __init__(self, value, weak_type=False, device=None, committed=False, aval=None,
                 buffer=None, sharding=None, global_buffer=None):
        self._npy = value
        self.aval = aval if aval is not None else ShapedArray(value.shape, value.dtype,
                                                              weak_type)
        if device is None and _default_device_blocks.open:
            # Made inside `default_device(d)`: it stays on d after the block, as in JAX.
            device = _default_device_state.override
        self._device = device        # where it (and _buffer) lives; None: the default device
        self.committed = committed
        self._buffer = buffer
        self._deleted = False        # or why it was deleted: "donated" / "deleted"
        # An array laid out over several devices (a NamedSharding): its pyjax Sharding and
        # one backend array spanning this process's devices of it. Such arrays are
        # committed, with no _device and no _buffer.
        self._sharding = sharding
        self._global_buffer = global_buffer
        self._pack = None            # a view into a Pack's buffer: the Pack (see Pack)
        if sharding is not None:   # a mesh's Explicit axes are part of the array's type
            self.aval = sharding_mod.typed_aval(self.aval, sharding)
        if _gc_guard.global_value is not None or _gc_guard._contexts:
            _watch_collection(self)

    # -- the value on the host --
    @property
    def _value(self):
        if self._npy is None:
            if self._deleted:
                raise deleted_error(self)
            self._npy = self._fetch()
        return self._npy

    @property
    def _npy_value(self) -> np.ndarray | None:
        """The host copy of the value if one is held (None once deleted), as JAX's."""
        return self._npy

    def _check_if_deleted(self) -> None:
        if self._deleted:
            raise deleted_error(self)

    def _fetch(self) -> np.ndarray:
        """The host value of the device buffer(s)."""
        if self._pack is not None:
            return self._pack.leaf_value(self._pack_index)
        runtime = devices_mod.buffer_runtime()
        if runtime is None or (self._buffer is None and self._global_buffer is None):
            raise errors.InvalidDonatedBufferError("Array has no host value and no buffer")
        if self._global_buffer is not None:
            return runtime.gather(self._global_buffer, self._sharding, self.aval)
        return runtime.fetch(self._buffer)

    def buffer_on(self, device: Any) -> Any:
        """The array's device buffer on `device`, transferred there if it is elsewhere
        (and kept, when the array lives there)."""
        buf = self._buffer
        if buf is not None and self._device is device:
            return buf
        value = self._value              # raises if the array was donated or deleted
        # from another device (an array without one is on the default device, as in JAX):
        # an implicit transfer, which the transfer guard may log or forbid
        if (self._device or devices_mod.default_device()) is not device:
            devices_mod.check_transfer("device_to_device", False, self.aval)
        # A buffer the array keeps is a copy that XLA owns, as every device array of
        # JAX's is: one aliasing the host value (XLA aliases 64-byte aligned memory)
        # could not be reused when the array is donated, so donation would silently
        # give a fresh buffer. One only passed to a program may alias.
        keep = self._buffer is None and (self._device is None or self._device is device)
        buf = _device_runtime().put(value, self.aval, device, copy=keep)
        if keep:
            self._buffer, self._device = buf, device
        return buf

    _committed = property(lambda self: self.committed)   # JAX's internal spelling
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)
    itemsize = property(lambda self: self.aval.dtype.itemsize)

    def __array__(self, dtype=None, copy=None):
        value = self._value
        if copy:
            return np.array(value, dtype=dtype)
        return value if dtype is None else value.astype(dtype, copy=False)

    @property
    def __numpy_dtype__(self):
        # np.dtype(x) asks for this (NumPy >= 2.4); JAX deprecates the conversion.
        warnings.warn("Implicit conversion of an array to a dtype is deprecated; rather "
                      "than dtype=arr use dtype=arr.dtype. In the future this will result "
                      "in an error.", DeprecationWarning, stacklevel=2)
        return self.dtype

    def _is_unreduced(self):
        """A partial sum awaiting its reduction (JAX prints its type, not its values)."""
        return (not self._deleted and type(self.sharding) is sharding_mod.NamedSharding
                and bool(self.sharding.spec.unreduced))

    def __repr__(self):
        if self._deleted:   # as JAX's: its repr reads the value
            raise deleted_error(self)
        if self._is_unreduced():
            weak = ", weak_type=True" if self.weak_type else ""
            return (f"Array(shape={self.shape}, dtype={self.dtype.name}{weak}, "
                    f"sharding={self.sharding})")
        if not (self.is_fully_addressable or self.is_fully_replicated):
            return f"Array(shape={self.shape}, dtype={self.dtype.name})"   # blocks elsewhere
        value = self._value
        tail = f"dtype={self.dtype.name}" + (", weak_type=True)" if self.weak_type else ")")
        if value.size == 0:
            return f"Array([], shape={value.shape}, {tail}"
        # JAX's layout: numpy wraps the values as if only "," followed them; the dtype
        # goes after one space, or after six when the last line is already long.
        width = np.get_printoptions()["linewidth"]
        body = np.array2string(value, prefix="Array(", suffix=",", separator=", ",
                               max_line_width=width)
        last_line = len(body) - body.rfind("\n") + 1
        gap = " " if last_line + len(tail) + 1 <= width else " " * len("Array(")
        return f"Array({body},{gap}{tail}"

    def __str__(self):
        return repr(self) if self._is_unreduced() else str(self._value)

    def __format__(self, spec):
        if self._is_unreduced():
            return repr(self)
        # as JAX (numpy#9883): a 0-d array formats as its NumPy scalar, so '{}' of a
        # float32 shows the float's full repr, as Python floats do
        return format(self._value if self.ndim else self._value[()], spec)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __bool__(self):
        check_bool_conversion(self.shape)
        return bool(self._value)

    def __int__(self):
        check_scalar_conversion(self.shape)
        return int(self._value)

    def __float__(self):
        check_scalar_conversion(self.shape)
        return float(self._value)

    def __complex__(self):
        check_scalar_conversion(self.shape)
        return complex(self._value)

    def __index__(self):
        check_integer_conversion(self.shape, self.dtype)
        return int(self._value)

    # Unhashable, as JAX's arrays: hash() raises and isinstance(x, Hashable) is False.
    __hash__ = None   # type: ignore[assignment]

    def __setitem__(self, index, value):
        raise TypeError(errors.IMMUTABLE_ARRAY_MESSAGE)

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        value, weak = self._value, self.weak_type
        s = self._sharding
        if s is not None and (s.num_devices == 1 or s.is_fully_replicated):
            # rows stay where the whole is, as JAX's (blocks split otherwise: rows of
            # those come uncommitted, as in JAX)
            row_sharding = sharding_mod.NamedSharding(
                s.mesh, sharding_mod.PartitionSpec(*s.spec.partitions[1:]))
            row_aval = self.aval.update(shape=self.shape[1:])
            return (sharded_array(row, row_aval, row_sharding) for row in value)
        if s is None and self.committed:
            return (Array(np.asarray(row), weak, device=self._device, committed=True)
                    for row in value)
        return (Array(np.asarray(row), weak) for row in value)

    def __reduce__(self):
        return (_rebuild, (self._value, self.weak_type))

    def item(self, *args):
        return self._value.item(*args)

    def tolist(self):
        return self._value.tolist()

    def to_py(self):
        return self._value

    def block_until_ready(self):
        if self._deleted:   # as JAX, which refuses to wait on a deleted or donated buffer
            raise deleted_error(self)
        buffer = self._buffer   # a device buffer waits for its computation; host values never
        if buffer is not None:
            buffer.block_until_ready()
        elif self._global_buffer is not None:
            self._global_buffer.block_until_ready()
        elif self._pack is not None:
            self._pack.array.block_until_ready()
        return self

    def copy_to_host_async(self):
        """Copies the value to the host (synchronously here): later reads need no
        transfer."""
        if self._npy is None and not self._deleted:
            self._npy = self._fetch()

    def is_ready(self):
        """Whether the value is computed (block_until_ready would not wait)."""
        if self._deleted:
            raise deleted_error(self)
        if self._global_buffer is not None:
            return self._global_buffer.is_ready()
        if self._buffer is None and self._pack is not None:
            return self._pack.array.is_ready()
        return self._buffer is None or self._buffer.is_ready()

    def on_device_size_in_bytes(self):
        return self.nbytes

    @property
    def is_fully_addressable(self):
        return self._sharding is None or self._sharding.is_fully_addressable

    @property
    def is_fully_replicated(self):
        return self._sharding is None or self._sharding.is_fully_replicated

    def tobytes(self, order="C"):
        return self._value.tobytes(order)

    @property
    def flat(self):
        raise NotImplementedError("JAX Arrays do not implement the arr.flat property: "
                                  "consider arr.flatten() instead.")

    def is_deleted(self):
        return bool(self._deleted)

    def delete(self, reason="deleted"):
        """Frees the array; any later use raises. (Donation deletes with "donated".)"""
        self._deleted = reason
        self._npy = None
        self._buffer = None
        self._global_buffer = None
        self._pack = None

    def devices(self):
        return self._sharding.device_set if self._sharding is not None else {self.device}

    @property
    def device(self):
        """The device holding the array (its Sharding when it spans several, as JAX)."""
        if self._sharding is not None:
            return self._sharding
        return self._device if self._device is not None else devices_mod.default_device()

    @property
    def sharding(self):
        if self._sharding is not None:
            return self._sharding
        return sharding_mod.single_device_sharding(self.device)

    @property
    def format(self):
        """How the Array lies in memory: its Layout (as XLA keeps its buffer; a value
        held on the host only is row-major) and its sharding, as a
        jax.experimental.layout.Format."""
        if self._deleted:
            return layout_mod.Format(None, self.sharding)
        buffer = self._global_buffer if self._global_buffer is not None else self._buffer
        layout = _device_runtime().layout_of(buffer) if buffer is not None else \
            layout_mod.default_layout(self.ndim)
        return layout_mod.Format(layout, self.sharding)

    @property
    def addressable_shards(self) -> list[Shard]:
        """One Shard (device, index, replica_id, data) per device of this process holding
        a block; each block's data is a committed single-device Array."""
        whole = (slice(None),) * self.ndim
        if self._global_buffer is not None:   # a block on each device of this process
            runtime = _device_runtime()
            shard_aval = self.aval.update(shape=self._sharding.shard_shape(self.shape))
            return [Shard(d, index, replica, _block(runtime, buf, shard_aval, d))
                    for (d, index, replica), buf in zip(
                        runtime.local_blocks(self._sharding, self.shape),
                        runtime.local_buffers(self._global_buffer))]
        if self._buffer is None and devices_mod.xla_runtime() is None:
            # host values on the NumPy executor: the array is its one block
            device = self._device if self._device is not None else devices_mod.default_device()
            return [Shard(device, whole, 0, self)]
        device = self.device
        return [Shard(device, whole, 0, Array(self._npy, aval=self.aval, device=device,
                                              committed=self.committed,
                                              buffer=self.buffer_on(device)))]

    global_shards = addressable_shards

    @property
    def _arrays(self) -> list[Array] | None:
        """The single-device Arrays of this process's blocks (None once deleted)."""
        if self._deleted:
            return None
        return [shard.data for shard in self.addressable_shards]

    def _fully_replicated_shard(self) -> Array:
        """One device's copy of a fully replicated array, as a single-device Array."""
        if not self.is_fully_replicated:
            raise ValueError(f"_fully_replicated_shard: the array is laid out as "
                             f"{self.sharding}, which is not fully replicated.")
        return self.addressable_data(0)

    def unsafe_buffer_pointer(self) -> int:
        """The address of the array's data: its device buffer, or (on the NumPy
        executor) its host value."""
        self._check_if_deleted()
        if self._global_buffer is not None:
            buffers = _device_runtime().local_buffers(self._global_buffer)
            if len(buffers) != 1:
                raise errors.JaxRuntimeError(
                    "INVALID_ARGUMENT: UnsafeBufferPointer() is supported only for "
                    f"unsharded arrays; this one spans {len(buffers)} devices. Use "
                    "x.addressable_data(i).unsafe_buffer_pointer() for one block.")
            return _device_runtime().buffer_pointer(buffers[0])
        if self._buffer is None and devices_mod.xla_runtime() is None:
            return self._value.ctypes.data
        return _device_runtime().buffer_pointer(self.buffer_on(self.device))

    def addressable_data(self, index):
        return self.addressable_shards[index].data

    @property
    def device_buffer(self):
        # The FAQ's `x.device_buffer.device()` predates jax.Array; say what replaced it.
        raise AttributeError("arr.device_buffer has been deprecated. Use "
                             "arr.addressable_data(0) (or arr.device for its device)")

    @property
    def __cuda_array_interface__(self):
        # CPU buffers only: as JAX's for a non-GPU array, an AttributeError (so hasattr
        # is False) naming the buffers it is defined for
        raise AttributeError("__cuda_array_interface__ is only defined for GPU buffers.")

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # The host value is exported; `stream` only orders work on GPU streams, so a host
        # buffer has nothing to wait for.
        del stream
        value = self._value
        if not value.flags.writeable and copy is not False and (
                max_version is None or tuple(max_version) < (1, 0)):
            value = value.copy()   # DLPack before 1.0 cannot mark a buffer read-only
        return value.__dlpack__(max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return self._value.__dlpack_device__()

    def __buffer__(self, flags):
        """The Python buffer protocol (PEP 688: memoryview(x) from Python 3.12; before it
        only C types can export buffers): a read-only view of the host value. The view
        keeps that value alive, as JAX's keeps the buffer after x.delete()."""
        if self.dtype.kind == "V":   # ml_dtypes' types: no buffer-protocol format code
            raise BufferError(f"INVALID_ARGUMENT: Buffers of type {_xla_type_name(self.dtype)}"
                              " are not supported by the Python buffer protocol.")
        if flags & _PYBUF_WRITABLE:
            raise BufferError("jax.Array is immutable: its buffer is read-only")
        return memoryview(self._value)

    def __release_buffer__(self, view):
        view.release()


_PYBUF_WRITABLE = 0x1   # inspect.BufferFlags.WRITABLE (Python 3.12)


def _xla_type_name(dtype) -> str:
    """XLA's name of a narrow float or integer type: BF16, F8E4M3FN, S4, U2."""
    name = np.dtype(dtype).name
    if name == "bfloat16":
        return "BF16"
    if name.startswith("float"):   # float8_e4m3fn -> F8E4M3FN
        bits, _, fmt = name[len("float"):].partition("_")
        return f"F{bits}{fmt.upper()}"
    return f"U{name[len('uint'):]}" if name.startswith("uint") else f"S{name[len('int'):]}"


def _block(runtime, buffer, aval, device):
    """The committed single-device Array of one block's buffer. A block laid out
    otherwise than by default becomes a host value (single-device programs take their
    arguments laid out by default; only partitioned ones follow an argument's layout)."""
    if layout_mod.seen["non_default"] and \
            not layout_mod.is_default(runtime.layout_of(buffer), len(aval.shape)):
        return Array(runtime.fetch(buffer), aval=aval, device=device, committed=True)
    return Array(None, aval=aval, device=device, committed=True, buffer=buffer)


class Shard:
    """A block of an array on one device: where it sits in the whole (`index`, a tuple
    of slices), which copy of that block it is (`replica_id`), and its `data`."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device, index, replica_id, data):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")


def deleted_error(array):
    shape = f"{array.dtype.name}[{','.join(map(str, array.shape))}]"   # as JAX: float32[2,3]
    if array._deleted == "donated":
        return errors.InvalidDonatedBufferError(
            f"Array has been deleted with shape={shape}: its buffer was donated to a jitted "
            "function (donate_argnums/donate_argnames), so it cannot be used afterwards. "
            "Do not donate arrays you still need, or keep a copy made before the call.")
    return errors.InvalidDonatedBufferError(
        f"Array has been deleted with shape={shape} (x.delete() was called); create a new "
        "array instead of reusing it.")


def _rebuild(value, weak_type):
    """An unpickled Array: its value in the dtype JAX uses now (a float64 array pickled
    with x64 on is float32 when unpickled with it off, as in JAX)."""
    value = np.asarray(value)
    dtype = dtypes.canonicalize_dtype(value.dtype)
    return Array(value if value.dtype == dtype else value.astype(dtype), weak_type)


def _device_runtime() -> devices_mod.DeviceRuntime:
    """The runtime that puts values on devices (asked only where XLA runs)."""
    runtime = devices_mod.buffer_runtime()
    if runtime is None:
        raise RuntimeError("Placing an array on a device needs XLA: jaxlib and the 'xla' "
                           "executor (config pyjax_executor / PYJAX_EXECUTOR).")
    return runtime


_new_object = object.__new__


def device_results(avals, buffers, device: Any, committed: bool) -> list[Array]:
    """Arrays for a program's results on one device (`buffers` on `device`, of `avals`):
    what every jitted call returns. Built without a call to __init__, which costs ~4x
    the field stores themselves; the fields are __init__'s for these arguments."""
    results = []
    for aval, buffer in zip(avals, buffers):
        x = _new_object(Array)
        # one store a statement: tuple assignments build and unpack a tuple (~15% slower)
        x._npy = None
        x.aval = aval
        x._device = device
        x.committed = committed
        x._buffer = buffer
        x._deleted = False
        x._sharding = None
        x._global_buffer = None
        x._pack = None
        results.append(x)
    return results


class PackLayout(NamedTuple):
    """Where each array of a Pack lies in its buffer: the arrays' avals (all of the
    buffer's dtype) and their start offsets, in elements."""
    avals: tuple
    offsets: tuple


class Pack:
    """One 1-D device buffer (`array`, an Array) holding several arrays of its dtype end
    to end, laid out by `layout`: the packed results of a jitted step
    (api/packed_results.py). Those arrays are views into it (their `_pack` and
    `_pack_index`), with no buffer of their own; the first read of any of them fetches
    the whole buffer to the host once (`host`), from which each view takes its value."""

    __slots__ = ("array", "layout", "host")

    def __init__(self, array: Array, layout: PackLayout):
        self.array, self.layout, self.host = array, layout, None

    def leaf_value(self, index: int) -> np.ndarray:
        host = self.host
        if host is None:
            host = self.array._value
            if host.flags.writeable:   # views' values are read-only, as fetched ones are
                host = host.view()
                host.flags.writeable = False
            self.host = host
        aval, start = self.layout.avals[index], self.layout.offsets[index]
        return host[start:start + aval.size].reshape(aval.shape)


def pack_views(pack: Pack) -> list[Array]:
    """The Arrays a Pack holds, as views into its buffer."""
    array = pack.array
    views = device_results(pack.layout.avals, repeat(None), array._device, array.committed)
    for index, x in enumerate(views):
        x._pack = pack
        x._pack_index = index
    return views


def sharded_results(avals, shardings, buffers) -> list[Array]:
    """Arrays for a partitioned program's results (`buffers`, each spanning the devices of
    its sharding), of `avals` already typed by `shardings` (what __init__ would compute):
    what every cached partitioned call returns. Built without a call to __init__."""
    results = []
    for aval, sharding, buffer in zip(avals, shardings, buffers):
        x = _new_object(Array)
        x._npy = None
        x.aval = aval
        x._device = None
        x.committed = True
        x._buffer = None
        x._deleted = False
        x._sharding = sharding
        x._global_buffer = buffer
        x._pack = None
        results.append(x)
    return results


def copied(x: Array) -> Array:
    """A new Array holding a copy of x's value where x is: same device (or sharding) and
    commitment, as JAX's copies."""
    value = np.array(x._value)
    if x._sharding is not None:
        return sharded_array(value, x.aval, x._sharding)
    return Array(value, aval=x.aval, device=x._device, committed=x.committed)


def sharded_array(value: np.ndarray, aval: ShapedArray, sharding: Any) -> Array:
    """An Array of type `aval` holding the host value `value` (copied) laid out over XLA's
    devices as the NamedSharding `sharding` (on the NumPy executor, one host value: the
    layout is only recorded)."""
    runtime = devices_mod.buffer_runtime()
    if runtime is None:
        return Array(np.array(value, aval.dtype), aval=aval, committed=True,
                     sharding=sharding)
    return Array(None, aval=aval, committed=True, sharding=sharding,
                 global_buffer=runtime.put_sharded(value, aval, sharding))


def as_array(x):
    """x itself if it is an Array or a tracer, else a new Array of its numpy value."""
    if hasattr(x, "aval"):
        return x
    aval = get_aval(x)
    return Array(np.asarray(x, aval.dtype), aval=aval)


