"""Devices and the default device. With XLA (jaxlib importable and the 'xla' executor
selected) the devices are XLA's; otherwise there is one host CPU device. Imports config;
loads XLA's runtime (backends/xla_runtime.py) on first use, so importing this never
imports jaxlib."""
from __future__ import annotations

import contextlib
import threading
import warnings
from typing import Any, Protocol, TypedDict

import numpy as np

from pyjax._src import config


class _DeviceType(type):
    """isinstance/issubclass by protocol: a device class carries platform, id,
    device_kind and process_index."""

    _REQUIRED = ("platform", "id", "device_kind", "process_index")

    def __instancecheck__(cls, obj):
        return cls.__subclasscheck__(type(obj))

    def __subclasscheck__(cls, other):
        return all(any(name in vars(k) for k in other.__mro__) for name in cls._REQUIRED)


class Device(metaclass=_DeviceType):
    """The type of the entries of jax.devices(): isinstance(d, jax.Device) holds for XLA's
    devices and for the NumPy executor's host device."""


class HostCpuDevice:
    """The CPU device of the NumPy executor (used when XLA is not in play)."""

    platform = "cpu"
    device_kind = "cpu"
    id = 0
    process_index = 0
    host_id = 0

    def __repr__(self):
        return "CpuDevice(id=0)"

    def __str__(self):
        return "cpu:0"


HOST = HostCpuDevice()


class DeviceRuntime(Protocol):
    """What pyjax asks of a runtime that holds arrays on devices (backends/xla_runtime.py
    implements it for XLA; the NumPy executor has none: its arrays live on the host).
    Buffers are the runtime's own objects; an Array holds them and asks this to read,
    place and split them."""

    def devices(self) -> list:
        """Every device, of every process."""

    def local_devices(self) -> list:
        """The devices this process drives."""

    def made_client(self) -> Any:
        """The runtime's client (XLA's PjRt client) if one has been made, else None."""

    def initialize_distributed(self, coordinator_address: str, num_processes: int,
                               process_id: int, initialization_timeout: int,
                               heartbeat_timeout: int, shutdown_timeout: int) -> None:
        """Joins this process to a group of processes (before any computation)."""

    def shutdown_distributed(self) -> None:
        """Leaves the group."""

    def distributed_initialized(self) -> bool:
        """Whether this process joined a group."""

    def distributed_state(self) -> tuple[int, int]:
        """(process index, process count) of this process."""

    def wait_at_barrier(self, name: str, timeout_seconds: float) -> None:
        """Blocks until every process of the group reached the barrier `name`."""

    def put(self, value: np.ndarray, aval: Any, device: Any, copy: bool = False) -> Any:
        """A buffer on `device` holding `value` (an ndarray of aval's dtype)."""

    def fetch(self, buffer: Any) -> np.ndarray:
        """The host value of a single-device buffer."""

    def buffer_pointer(self, buffer: Any) -> int:
        """The device address of a single-device buffer's data."""

    def layout_of(self, buffer: Any) -> Any:
        """The jax.experimental.layout.Layout of a buffer's data in device memory."""

    def put_sharded(self, value: np.ndarray, aval: Any, sharding: Any) -> Any:
        """One buffer spanning the devices of the NamedSharding `sharding`, each of this
        process's devices holding its block of `value`."""

    def gather(self, global_buffer: Any, s: Any, aval: Any) -> np.ndarray:
        """The host value of a buffer laid out as the NamedSharding `s` (made by
        put_sharded or by a program partitioned over several devices)."""

    def local_buffers(self, global_buffer: Any) -> list:
        """The single-device buffers of a spanning buffer, one per device here."""

    def local_blocks(self, sharding: Any, shape: tuple) -> list:
        """(device, index, replica id) of each block this process holds."""

    def hlo_sharding(self, sharding: Any, ndim: int) -> Any:
        """XLA's HloSharding of a NamedSharding for arrays of rank `ndim`."""

    def register_custom_call_target(self, name: str, fn: Any, platform: str,
                                    api_version: int, **kwargs: Any) -> None:
        """Registers an FFI handler with XLA as the custom-call target `name`."""

    def register_custom_type(self, name: str, type_registration: dict,
                             platform: str) -> None:
        """Registers a user type of FFI handlers with XLA."""

    def register_custom_call_as_batch_partitionable(self, name: str) -> None:
        """Lets XLA's partitioner split calls of the target `name` along their batch
        dimension."""


class _XlaState(TypedDict):
    module: DeviceRuntime | None
    failed: ImportError | None


_xla_state: _XlaState = {"module": None, "failed": None}


def xla_runtime() -> DeviceRuntime | None:
    """XLA's runtime (backends/xla_runtime.py) when XLA is the selected executor and
    jaxlib imports, else None. A failed import warns once and the NumPy executor takes
    over."""
    if config.executor.value != "xla":
        return None
    module = _xla_state["module"]
    if module is not None or _xla_state["failed"]:
        return module
    try:
        from pyjax._src.backends import xla_runtime as xla_module
    except ImportError as err:
        _xla_state["failed"] = err
        warnings.warn(
            f"pyjax could not import jaxlib ({err}); jit runs on the NumPy executor "
            "instead. Install jaxlib (e.g. `pip install jaxlib==0.10.2`) to compile with "
            "XLA, or set PYJAX_EXECUTOR=numpy to choose the NumPy executor and silence "
            "this warning.", RuntimeWarning, stacklevel=3)
        return None
    runtime: DeviceRuntime = xla_module   # the module implements the protocol
    _xla_state["module"] = runtime
    return runtime


def buffer_runtime() -> DeviceRuntime | None:
    """The runtime holding the device buffers that exist: XLA's once it has been loaded,
    whichever executor is selected now (None while there are none)."""
    return _xla_state["module"]


def backend_name():
    """'xla' or 'numpy': which executor runs jitted code right now."""
    return "xla" if xla_runtime() is not None else "numpy"


def devices(backend=None):
    """All devices of the backend (or of the platform named by `backend`)."""
    xla = xla_runtime()
    found = xla.devices() if xla is not None else [HOST]
    if backend is not None:
        wanted = {"gpu": "cuda"}.get(backend, backend)
        found = [d for d in found if d.platform in (backend, wanted)]
        if not found:
            raise RuntimeError(
                f"Unknown backend {backend}. Available backends are "
                f"{sorted({d.platform for d in devices()})}")
    return found


def local_devices():
    """The devices this process drives (all of them unless jax.distributed joined this
    process to others)."""
    xla = xla_runtime()
    return xla.local_devices() if xla is not None else [HOST]


def process_index():
    """This process's index among those jax.distributed joined (0 alone)."""
    xla = _xla_state["module"]
    return xla.distributed_state()[0] if xla is not None else 0


def process_count():
    xla = _xla_state["module"]
    return xla.distributed_state()[1] if xla is not None else 1


def default_backend():
    """The platform of the default device: 'cpu', 'gpu' or 'tpu'."""
    platform = devices()[0].platform
    return "gpu" if platform in ("cuda", "rocm") else platform


class _DefaultDevice(threading.local):
    override = None


# The thread's `default_device(...)` context (jit's fast path reads .override inline).
default_device_state = _DefaultDevice()


def _set_global_default_device(device):
    """jax_default_device: the default device of every thread not inside a
    `default_device(...)` block (a Device, a platform name such as 'cpu', or None)."""
    if isinstance(device, str):
        device = devices(device)[0]
    elif device is not None and not hasattr(device, "platform"):
        raise TypeError(f"jax_default_device expects a Device, a platform name or None, "
                        f"got {device!r}")
    _DefaultDevice.override = device


config.config.define(
    "jax_default_device", None, str,
    "The device uncommitted arrays and computations go to (a Device or a platform name; "
    "None: the first device).", on_change=_set_global_default_device)


class _OpenBlocks:
    """How many `default_device` blocks are open, in all threads: a new Array reads its
    thread's override only while one is (a thread-local read would slow every Array)."""

    __slots__ = ("open", "lock")

    def __init__(self):
        self.open, self.lock = 0, threading.Lock()

    def add(self, n):
        with self.lock:
            self.open += n


default_device_blocks = _OpenBlocks()


def default_device():
    """Where uncommitted computations run: the innermost `default_device(...)` context,
    else the first device of the backend."""
    device = default_device_state.override
    if device is not None:
        return device
    return local_devices()[0]


_FOLLOW_GLOBAL = object()


@contextlib.contextmanager
def default_device_context(device):
    """Within the block, uncommitted arrays and computations go to `device`."""
    if device is not None and not hasattr(device, "platform"):
        raise TypeError(f"default_device expects a Device or None, got {device!r}")
    # The thread's own setting, if any: without one it follows jax_default_device.
    saved = vars(default_device_state).get("override", _FOLLOW_GLOBAL)
    default_device_state.override = device
    default_device_blocks.add(1)
    try:
        yield device
    finally:
        if saved is _FOLLOW_GLOBAL:
            del default_device_state.override
        else:
            default_device_state.override = saved
        default_device_blocks.add(-1)


def common_device(arrays, where="a computation"):
    """The device that committed `arrays` agree on, or None when none is committed.
    Committed arrays on two devices are an error (JAX's) naming both and `where`, what
    they are passed to."""
    device, first = None, None
    for i, x in enumerate(arrays):
        if getattr(x, "committed", False):
            if device is None:
                device, first = x._device, (i, x)
            elif x._device is not device and x._device != device:
                j, y = first
                raise ValueError(
                    "Received incompatible devices for jitted computation. Got "
                    f"{_placed_argument(j, y, where)} and {_placed_argument(i, x, where)}. "
                    "Move them to one device with jax.device_put(x, device) first.")
    return device


def _placed_argument(i, x, where):
    """An argument and its device as JAX's message names them."""
    return (f"argument {i} of {where} with shape {x.aval._dtype_and_shape()} and with "
            f"device ids [{x._device.id}] on platform {x._device.platform.upper()}")


# --- transfer guards ------------------------------------------------------------------------

_GUARDS = {"host_to_device": config.transfer_guard_host_to_device,
           "device_to_device": config.transfer_guard_device_to_device,
           "device_to_host": config.transfer_guard_device_to_host}


def transfer_guard_level(direction):
    """The transfer guard's level for `direction` ('allow', 'log', 'disallow', ...)."""
    return _GUARDS[direction].value


def check_transfer(direction, explicit, aval):
    """Applies the transfer guard of `direction` ('host_to_device', 'device_to_device' or
    'device_to_host') to one transfer of a value of type `aval`: 'log' levels log it,
    'disallow' levels raise RuntimeError (the '_explicit' levels cover explicit
    transfers, device_put and device_get, too)."""
    level = _GUARDS[direction].value
    if level == "allow" or (explicit and level in ("log", "disallow")):
        return
    kind = ("explicit " if explicit else "") + direction.replace("_", "-")
    if level.startswith("disallow"):
        raise RuntimeError(
            f"Disallowed {kind} transfer: aval={aval!r}. The transfer guard (jax_transfer_"
            f"guard_{direction} = {level!r}) forbids it; move the value with "
            "jax.device_put / jax.device_get explicitly, or relax the guard.")
    import logging  # only here: importing it costs ~6 ms at startup
    logging.getLogger("pyjax").warning("%s transfer: aval=%r", kind, aval)
