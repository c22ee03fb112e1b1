"""XLA's runtime from jaxlib: the client (CPU, or CUDA through JAX's plugin wheels), its
devices, the multi-process runtime, and device buffers (putting host values on devices,
reading them back, arrays laid out over several devices). It knows nothing of Arrays or
programs: backends/devices.py loads it on first use, and Arrays and the executables of
backends/xla.py hold the buffers it makes. With backends/xla.py and mlir_bindings.py,
the only importers of jaxlib."""
from __future__ import annotations

import atexit
import gc
import logging
import math
import os
import threading
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")   # XLA's start-up log lines

import jaxlib.xla_client as xc  # noqa: E402
from jaxlib import _jax  # type: ignore[attr-defined]  # noqa: E402
from jaxlib import utils as _jaxlib_utils  # type: ignore[attr-defined]  # noqa: E402

from pyjax._src import config, errors  # noqa: E402
from pyjax._src import layout as layout_mod  # noqa: E402
from pyjax._src.core.avals import ShapedArray  # noqa: E402

# XLA's C++ log level follows jax_logging_level (config sets it on later changes)
if config.cpp_min_log_level() is not None:
    _jaxlib_utils.absl_set_min_log_level(config.cpp_min_log_level())


# jaxlib lets go of the Python objects its own threads held (the NumPy array a transfer
# read, a host callback's result) only when asked: as JAX does (jax-ml/jax#14882), it is
# asked at every garbage collection, so that a NumPy array given to device_put is freed
# with the array made from it.
def _xla_gc_callback(*args):
    _jax.collect_garbage()


gc.callbacks.append(_xla_gc_callback)

# --- the client ---------------------------------------------------------------------------

_state: dict[str, Any] = {"client": None}
# Guards the one-time set-up of the client and its devices: threads making their first
# XLA call at once must share one client (two clients' devices look alike but are not
# interchangeable).
_lock = threading.RLock()


def client() -> Any:
    found = _state["client"]
    if found is None:
        with _lock:
            if _state["client"] is None:
                _state["client"] = _make_client()
                config.config.backends_started()
            found = _state["client"]
    return found


def made_client() -> Any:
    """The XLA client if one has been made, else None (never makes one)."""
    return _state["client"]


def _make_client():
    # jaxlib records the Python stack on every array and executable it makes, for JAX's
    # messages; pyjax never reads those stacks, and taking one costs ~0.5 us a jit call.
    if hasattr(_jax, "set_tracebacks_enabled"):
        _jax.set_tracebacks_enabled(False)
    requested = config.platforms.value
    names = [p.strip().lower() for p in requested.split(",")] if requested else ["cpu"]
    problems = []
    for name in names:
        if name == "cpu":
            count = config.num_cpu_devices.value
            kwargs = {"num_devices": count} if count and count > 0 else {}
            runtime = _state.get("distributed")
            if runtime is not None:   # one client over every process's devices
                kwargs.update(
                    distributed_client=runtime["client"], node_id=runtime["process_id"],
                    num_nodes=runtime["num_processes"],
                    collectives=_jax.make_gloo_tcp_collectives(
                        distributed_client=runtime["client"]))
            return xc.make_cpu_client(
                asynchronous=bool(config.cpu_enable_async_dispatch.value), **kwargs)
        if name in ("cuda", "gpu"):
            made = _make_cuda_client()
            if not isinstance(made, str):
                return made
            problems.append(made)
    raise RuntimeError(
        f"Unable to initialize backend {requested!r} (from jax_platforms / JAX_PLATFORMS): "
        + " ".join(problems) + " pyjax drives XLA's CPU client ('cpu') and, when the "
        "jax-cuda13-pjrt or jax-cuda12-pjrt wheel is installed, its CUDA plugin ('cuda').")


# The PJRT plugin packages of JAX's CUDA wheels, newest first, with the NVIDIA libraries
# (pip packages under nvidia/) the plugin expects to find already loaded.
_CUDA_PLUGINS = (
    ("xla_cuda13", ("cu13/lib/libcudart.so.13", "cu13/lib/libnvrtc.so.13",
                    "cu13/lib/libcublasLt.so.13", "cu13/lib/libcublas.so.13",
                    "cu13/lib/libcusparse.so.12", "cu13/lib/libcusolver.so.12",
                    "cu13/lib/libcufft.so.12", "cu13/lib/libcupti.so.13",
                    "nccl/lib/libnccl.so.2", "cudnn/lib/libcudnn.so.9")),
    ("xla_cuda12", ("cuda_runtime/lib/libcudart.so.12", "cuda_nvrtc/lib/libnvrtc.so.12",
                    "cublas/lib/libcublasLt.so.12", "cublas/lib/libcublas.so.12",
                    "cusparse/lib/libcusparse.so.12", "cusolver/lib/libcusolver.so.11",
                    "cufft/lib/libcufft.so.11", "cuda_cupti/lib/libcupti.so.12",
                    "nccl/lib/libnccl.so.2", "cudnn/lib/libcudnn.so.9")),
)


def _make_cuda_client():
    """XLA's CUDA client through the PJRT plugin library that JAX's CUDA wheels install
    (found by its path: importing their Python package would import jax). Returns the
    client, or a sentence saying why there is none."""
    import ctypes
    import importlib.util
    try:
        nvidia_dirs = list(importlib.util.find_spec("nvidia").submodule_search_locations)
    except (ImportError, AttributeError):
        nvidia_dirs = []
    for package, libraries in _CUDA_PLUGINS:
        try:
            spec = importlib.util.find_spec(f"jax_plugins.{package}")
        except ImportError:
            spec = None
        if spec is None or not spec.submodule_search_locations:
            continue
        plugin = os.path.join(spec.submodule_search_locations[0], "xla_cuda_plugin.so")
        if not os.path.exists(plugin):
            continue
        for library in libraries:   # missing ones are left to the system's search path
            for folder in nvidia_dirs:
                path = os.path.join(folder, library)
                if os.path.exists(path):
                    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                    break
        try:
            xc.load_pjrt_plugin_dynamically("cuda", plugin)
            if not xc.pjrt_plugin_initialized("cuda"):
                xc.initialize_pjrt_plugin("cuda")
            return xc.make_c_api_client("cuda", xc.generate_pjrt_gpu_plugin_options())
        except (_jax.JaxRuntimeError, RuntimeError) as err:
            return f"The CUDA plugin {plugin} did not start: {err}."
    return "No CUDA plugin is installed (pip install jax-cuda13-pjrt==<jaxlib's version>)."


def devices() -> list:
    """Every device, of every process."""
    found = _state.get("devices")
    if found is None:
        with _lock:
            found = _state.get("devices")
            if found is None:
                found = _state["devices"] = list(client().devices())
    return found


def local_devices() -> list:
    """The devices this process drives."""
    found = _state.get("local_devices")
    if found is None:
        found = _state["local_devices"] = list(client().local_devices())
    return found


def register_custom_call_target(name: str, fn: Any, platform: str, api_version: int,
                                **kwargs: Any) -> None:
    """Registers an FFI handler (or custom-call function) with XLA (jax.ffi's)."""
    xc.register_custom_call_target(name, fn, platform, api_version, **kwargs)


def register_custom_type(name: str, type_registration: dict, platform: str) -> None:
    xc.register_custom_type(name, type_registration, platform=platform)


def register_custom_call_as_batch_partitionable(name: str) -> None:
    xc.register_custom_call_as_batch_partitionable(name)


# --- several processes: jaxlib's distributed runtime ----------------------------------------

_distributed_logger = logging.getLogger("jax._src.distributed")   # JAX's logger name

def initialize_distributed(coordinator_address: str, num_processes: int, process_id: int,
                           initialization_timeout: int, heartbeat_timeout: int,
                           shutdown_timeout: int) -> None:
    """Joins this process to a group of `num_processes` (process 0 also starts the
    coordination service at `coordinator_address`); later the CPU client spans every
    process's devices, with Gloo (over TCP) for collectives between processes."""
    if _state.get("distributed") is not None:
        raise RuntimeError("distributed.initialize should only be called once.")
    if _state["client"] is not None:
        raise RuntimeError("jax.distributed.initialize() must be called before any JAX "
                           "computations are executed (the XLA client of this process "
                           "already exists).")
    service = None
    try:
        if process_id == 0:
            _distributed_logger.info("Starting JAX distributed service on %s",
                                     coordinator_address)
            service = _jax.get_distributed_runtime_service(
                coordinator_address, num_processes, heartbeat_timeout=heartbeat_timeout,
                shutdown_timeout=shutdown_timeout)
        runtime_client = _jax.get_distributed_runtime_client(
            coordinator_address, process_id, init_timeout=initialization_timeout,
            use_compression=True, heartbeat_timeout=heartbeat_timeout)
        _distributed_logger.info("Connecting to JAX distributed service on %s",
                                 coordinator_address)
        runtime_client.connect()
    except _jax.JaxRuntimeError as err:
        if service is not None:
            service.shutdown()
        raise RuntimeError(
            f"jax.distributed.initialize: process {process_id} of {num_processes} could "
            f"not join the coordinator at {coordinator_address} within "
            f"{initialization_timeout} s: {err}. Check that process 0 runs, that the "
            "address and port are right and reachable, and that every process passes "
            "the same num_processes.") from None
    _state["distributed"] = {"service": service, "client": runtime_client,
                             "process_id": process_id, "num_processes": num_processes}
    # leave the group before the interpreter exits, as JAX does: a client destroyed while
    # still connected makes the coordination service abort the process
    atexit.register(shutdown_distributed)


def shutdown_distributed() -> None:
    """Leaves the group (process 0 stops the service once every process has left)."""
    runtime = _state.pop("distributed", None)
    if runtime is None:
        return
    runtime["client"].shutdown()
    if runtime["service"] is not None:
        runtime["service"].shutdown()


def distributed_initialized() -> bool:
    return _state.get("distributed") is not None


def distributed_state() -> tuple[int, int]:
    """(process index, process count) of this process."""
    runtime = _state.get("distributed")
    if runtime is None:
        return 0, 1
    return runtime["process_id"], runtime["num_processes"]


def wait_at_barrier(name: str, timeout_seconds: float) -> None:
    """Blocks until every process reached the barrier `name` (a RuntimeError after
    timeout_seconds, or when a process died)."""
    runtime = _state.get("distributed")
    if runtime is None:
        return
    try:
        runtime["client"].wait_at_barrier(name, int(timeout_seconds * 1000))
    except _jax.JaxRuntimeError as err:
        raise RuntimeError(f"sync_global_devices({name!r}): not every process reached the "
                           f"barrier within {timeout_seconds} s: {err}") from None


# --- shardings, transfers -------------------------------------------------------------------

REPLICATED = xc.HloSharding.replicate()   # asked for on every transfer: made once
# JAX's dtype of the tangents of integer values (a device buffer of it holds bools).
FLOAT0 = np.dtype([("float0", np.void, 0)])


class SingleDeviceSharding(_jax.SingleDeviceSharding):
    """An array placed whole on one device. jaxlib's C++ class needs these Python-side
    members, which JAX itself would normally add."""

    def _to_xla_hlo_sharding(self, ndim):
        return REPLICATED

    @property
    def device(self):
        return self._device

    @property
    def memory_kind(self):
        return None

    @property
    def _device_assignment(self):
        return (self._device,)

    @property
    def device_set(self):
        return {self._device}

    @property
    def num_devices(self):
        return 1

    @property
    def is_fully_replicated(self):
        return True

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"


_shardings: dict[Any, SingleDeviceSharding] = {}


def sharding(device: Any) -> SingleDeviceSharding:
    s = _shardings.get(device)
    if s is None:   # setdefault: threads racing here all get the first one stored
        s = _shardings.setdefault(device, SingleDeviceSharding(device))
    return s


def put(value: np.ndarray, aval: ShapedArray, device: Any, copy: bool = False) -> Any:
    """A device buffer holding `value` (a numpy array of aval's dtype). Without `copy` the
    buffer may alias `value` (XLA does so for 64-byte aligned memory)."""
    semantics = (xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL if copy
                 else xc.HostBufferSemantics.ZERO_COPY)
    if aval.dtype == FLOAT0:   # XLA has no float0: its buffers hold bools
        value, aval = np.zeros(aval.shape, np.bool_), aval.update(dtype=np.bool_)
    try:
        return _jax.batched_device_put(aval, sharding(device), [value], [device],
                                       committed=True, force_copy=copy,
                                       host_buffer_semantics=semantics,
                                       # a 64-bit aval with x64 off: an explicit request
                                       # (jax_explicit_x64_dtypes=allow) that stays 64-bit
                                       enable_x64=config.enable_x64.value
                                       or aval.dtype.itemsize == 8)
    except _jax.JaxRuntimeError as err:
        raise errors.JaxRuntimeError(f"moving a {aval.str_short(True)} array to {device!r} "
                                     f"failed: {err}") from None


def fetch(buffer: Any) -> np.ndarray:
    """The host value of a device buffer: a read-only view when XLA allows it."""
    to_host = getattr(buffer, "_single_device_array_to_np_array_did_copy", None)
    if to_host is not None:
        return to_host()[0]
    return np.asarray(buffer)


def buffer_pointer(buffer: Any) -> int:
    return buffer.unsafe_buffer_pointer()


def layout_of(buffer: Any) -> Any:
    return layout_mod.Layout.from_pjrt_layout(buffer._pjrt_layout)


def local_buffers(global_buffer: Any) -> list:
    """The single-device buffers of an array laid out over several devices, one per
    device of this process. (jaxlib tries, and fails, to import jax for each: kept off
    the hot paths.)"""
    return global_buffer._arrays


def local_blocks(sharding: Any, shape: tuple) -> list:
    """(device, index, replica id) of each block of an array of `shape` laid out as
    `sharding` that this process holds, in the sharding's device order."""
    here = distributed_state()[0]
    return [(d, index, replica) for d, index, replica in zip(
        sharding._device_assignment, sharding._block_indices(shape),
        sharding.replica_ids(len(shape))) if d.process_index == here]

# --- arrays over several devices ------------------------------------------------------------

def put_sharded(value: np.ndarray, aval: ShapedArray, sharding: Any) -> Any:
    """A backend array laid out as the NamedSharding `sharding`, each device of this
    process holding its block of the host array `value` (copied: `value` may change
    later)."""
    shard_aval = aval.update(shape=sharding.shard_shape(aval.shape))
    value = np.asarray(value)
    blocks = local_blocks(sharding, aval.shape)
    if getattr(sharding.spec, "unreduced", None):
        # Partial sums of `value`: the devices first along the unreduced axes hold it,
        # the others zeros (as JAX casts a value to unreduced).
        lead = {d for d, (u, _) in zip(sharding._device_assignment,
                                       sharding._partial_positions()) if u == 0}
        zeros = np.zeros(shard_aval.shape, aval.dtype)
        return assemble(aval, sharding, [
            put(np.asarray(value[index], order="C") if device in lead else zeros,
                shard_aval, device, copy=True) for device, index, _ in blocks])
    return assemble(aval, sharding, [
        put(np.asarray(value[index], order="C"), shard_aval, device, copy=True)
        for device, index, _ in blocks])


def assemble(aval: ShapedArray, sharding: Any, buffers: list) -> Any:
    """One backend array of type `aval` from the single-device buffers of its blocks on
    this process's devices (in the sharding's device order)."""
    if aval.dtype == FLOAT0:   # its buffers hold bools (see put)
        aval = aval.update(dtype=np.bool_)
    return _jax.ArrayImpl(aval, _container(sharding, aval.ndim), list(buffers), True, True)


_containers: dict[tuple, Any] = {}


def _container(sharding, ndim):
    """jaxlib's sharding object for a NamedSharding on arrays of rank `ndim`: the mesh's
    devices in order, and the tiling as an XLA HloSharding."""
    key = (sharding, ndim)
    found = _containers.get(key)
    if found is None:
        found = _containers[key] = _jax.GSPMDSharding(
            _jax.DeviceList(sharding._device_assignment), hlo_sharding(sharding, ndim))
    return found


def hlo_sharding(sharding: Any, ndim: int) -> Any:
    """The XLA sharding of a NamedSharding: tiles per dimension (and the replicas as a
    last tile dimension), each listing the partition (mesh position) holding it."""
    positions = sharding._block_positions(ndim)
    pieces = [1 + max(b[k] for b, _ in positions) for k in range(ndim)]
    replicas = 1 + max(r for _, r in positions)
    if getattr(sharding.spec, "unreduced", None):
        return _unreduced_hlo_sharding(sharding, positions, pieces)
    if math.prod(pieces) == 1:
        return REPLICATED
    grid = np.zeros(pieces + [replicas], np.int64)
    for partition, (blocks, replica) in enumerate(positions):
        grid[tuple(blocks) + (replica,)] = partition
    dims = pieces + [replicas] if replicas > 1 else pieces
    text = (f"{{devices=[{','.join(map(str, dims))}]{','.join(map(str, grid.ravel()))}"
            + (" last_tile_dim_replicate}" if replicas > 1 else "}"))
    return xc.HloSharding.from_string(text)


def _unreduced_hlo_sharding(sharding, positions, pieces):
    """XLA's sharding of partial sums: tiles, then the unreduced axes, then the
    replicas as last tile dimensions (as JAX's named_sharding_to_xla_hlo_sharding)."""
    partials = sharding._partial_positions()
    groups = [1 + max(u for u, _ in partials), 1 + max(r for _, r in partials)]
    grid = np.zeros(pieces + groups, np.int64)
    for partition, ((blocks, _), (u, r)) in enumerate(zip(positions, partials)):
        grid[tuple(blocks) + (u, r)] = partition
    dims = ",".join(map(str, pieces + groups))
    return xc.HloSharding.from_string(
        f"{{devices=[{dims}]{','.join(map(str, grid.ravel()))} "
        "last_tile_dims={unreduced, replicated}}")


def gather(global_buffer: Any, s: Any, aval: ShapedArray) -> np.ndarray:
    """The host value of an array of type `aval` laid out as the NamedSharding `s`: each
    block copied from one device of this process holding it (for partial sums over
    unreduced axes, their sum)."""
    blocks = local_blocks(s, aval.shape)
    if getattr(s.spec, "unreduced", None):
        return _gather_partials(global_buffer, s, aval, blocks)
    out = np.empty(aval.shape, aval.dtype)
    copied = set()
    for buf, (_, index, _) in zip(local_buffers(global_buffer), blocks):
        key = tuple((i.start, i.stop) for i in index)
        if key not in copied:
            copied.add(key)
            out[index] = fetch(buf)
    if len(copied) != len(set(tuple((i.start, i.stop) for i in index)
                               for index in s._block_indices(aval.shape))):
        _raise_not_addressable(s, aval)
    out.flags.writeable = False
    return out


def _gather_partials(global_buffer, s, aval, blocks):
    """The sum of the partial values an unreduced array's devices hold (one copy of
    each: the devices that replicate a partial hold the same one)."""
    if len(blocks) != len(s._device_assignment):
        _raise_not_addressable(s, aval)
    out = np.zeros(aval.shape, aval.dtype)
    for buf, (_, index, _), (_, replica) in zip(local_buffers(global_buffer), blocks,
                                                 s._partial_positions()):
        if replica == 0:
            out[index] += fetch(buf)
    out.flags.writeable = False
    return out


def _raise_not_addressable(s, aval):
    raise RuntimeError(
        f"Fetching value for `jax.Array` that spans non-addressable (non process "
        f"local) devices is not possible: {aval.str_short(True)} laid out as {s} has "
        "blocks on other processes' devices. Use "
        "jax.experimental.multihost_utils.process_allgather to gather it, or "
        "x.addressable_shards for this process's blocks.")


