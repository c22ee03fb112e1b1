"""The XLA adapter, the only module that imports jaxlib: a lazily created client, compiling
StableHLO text (in-memory and on-disk caches), host<->device transfers, execution, and
runtime errors as Python exceptions. Imports backends, array, config, errors and jaxlib."""
from __future__ import annotations

import collections
import logging
import math
import os
import re
import threading
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")   # XLA's start-up log lines

import jaxlib  # noqa: E402
import jaxlib.xla_client as xc  # noqa: E402
from jaxlib import _jax  # noqa: E402
from jaxlib import _profiler  # noqa: E402

from pyjax._src import array as array_mod  # noqa: E402
from pyjax._src import config, errors, tree_util  # noqa: E402
from pyjax._src import sharding as sharding_mod  # noqa: E402
from pyjax._src.array import Array  # noqa: E402
from pyjax._src.backends import compile_cache  # noqa: E402
from pyjax._src.backends import dispatch  # noqa: E402
from pyjax._src.core.avals import ShapedArray  # noqa: E402

logger = logging.getLogger("pyjax")

JAXLIB_VERSION = getattr(getattr(jaxlib, "version", None), "__version__", "unknown")

# How often each route to an executable was taken (tests and benchmarks read these).
stats = collections.Counter()


# --- the client ---------------------------------------------------------------------------

_state = {"client": None}
# Guards the one-time set-ups below (client, devices, MLIR context, LAPACK kernels) and
# the in-memory executable cache: threads making their first XLA call at once must share
# one client (two clients' devices look alike but are not interchangeable).
_lock = threading.RLock()


def client():
    found = _state["client"]
    if found is None:
        with _lock:
            if _state["client"] is None:
                _state["client"] = _make_client()
            found = _state["client"]
    return found


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


def devices():
    """Every device, of every process."""
    found = _state.get("devices")
    if found is None:
        with _lock:
            found = _state.get("devices")
            if found is None:
                found = _state["devices"] = list(client().devices())
    return found


def local_devices():
    """The devices this process drives."""
    found = _state.get("local_devices")
    if found is None:
        found = _state["local_devices"] = list(client().local_devices())
    return found


# --- several processes: jaxlib's distributed runtime ----------------------------------------

def initialize_distributed(coordinator_address, num_processes, process_id,
                           initialization_timeout, heartbeat_timeout, shutdown_timeout):
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
            service = _jax.get_distributed_runtime_service(
                coordinator_address, num_processes, heartbeat_timeout=heartbeat_timeout,
                shutdown_timeout=shutdown_timeout)
        runtime_client = _jax.get_distributed_runtime_client(
            coordinator_address, process_id, init_timeout=initialization_timeout,
            use_compression=True, heartbeat_timeout=heartbeat_timeout)
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


def shutdown_distributed():
    """Leaves the group (process 0 stops the service once every process has left)."""
    runtime = _state.pop("distributed", None)
    if runtime is None:
        return
    runtime["client"].shutdown()
    if runtime["service"] is not None:
        runtime["service"].shutdown()


def distributed_initialized():
    return _state.get("distributed") is not None


def distributed_state():
    """(process index, process count) of this process."""
    runtime = _state.get("distributed")
    if runtime is None:
        return 0, 1
    return runtime["process_id"], runtime["num_processes"]


def wait_at_barrier(name, timeout_seconds):
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

_REPLICATED = xc.HloSharding.replicate()   # asked for on every transfer: made once


class SingleDeviceSharding(_jax.SingleDeviceSharding):
    """An array placed whole on one device. jaxlib's C++ class needs these Python-side
    members, which JAX itself would normally add."""

    def _to_xla_hlo_sharding(self, ndim):
        return _REPLICATED

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


_shardings = {}


def sharding(device):
    s = _shardings.get(device)
    if s is None:   # setdefault: threads racing here all get the first one stored
        s = _shardings.setdefault(device, SingleDeviceSharding(device))
    return s


def put(value, aval, device, copy=False):
    """A device buffer holding `value` (a numpy array of aval's dtype). Without `copy` the
    buffer may alias `value` (XLA does so for 64-byte aligned memory)."""
    semantics = (xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL if copy
                 else xc.HostBufferSemantics.ZERO_COPY)
    if aval.dtype == _FLOAT0:
        value = np.zeros(aval.shape, np.bool_)
    try:
        return _jax.batched_device_put(aval, sharding(device), [value], [device],
                                       committed=True, force_copy=copy,
                                       host_buffer_semantics=semantics,
                                       # a 64-bit aval with x64 off: an explicit request
                                       # (jax_explicit_x64_dtypes=allow) that stays 64-bit
                                       enable_x64=config.enable_x64.value
                                       or aval.dtype.itemsize == 8)
    except _jax.JaxRuntimeError as err:
        raise errors.JaxRuntimeError(f"moving a {aval.str_short()} array to {device!r} "
                                     f"failed: {err}") from None


def fetch(buffer):
    """The host value of a device buffer: a read-only view when XLA allows it."""
    to_host = getattr(buffer, "_single_device_array_to_np_array_did_copy", None)
    if to_host is not None:
        return to_host()[0]
    return np.asarray(buffer)


def device_buffer(x, device):
    """x's buffer on `device`, transferring (and remembering, when x lives there) if
    needed."""
    buf = x._buffer
    if buf is not None and x._device is device:
        return buf
    value = x._value              # raises if x was donated or deleted
    buf = put(value, x.aval, device)
    if x._buffer is None and (x._device is None or x._device is device):
        x._buffer, x._device = buf, device
    return buf


def _fetch_array(x):
    if x._global_buffer is not None:
        return gather(x)
    return fetch(x._buffer)


_public_shardings = {}


def _sharding_of(x):
    device = x.device
    s = _public_shardings.get(device)
    if s is None:
        s = _public_shardings[device] = sharding_mod.SingleDeviceSharding(device)
    return s


def _shards_of(x):
    """x's blocks on this process's devices as Shards, each holding a committed
    single-device Array."""
    if x._global_buffer is None:
        buf = x._buffer if x._buffer is not None else device_buffer(x, x.device)
        return [array_mod.Shard(x.device, (slice(None),) * x.ndim, 0,
                                Array(x._npy, aval=x.aval, device=x.device, committed=True,
                                      buffer=buf))]
    shard_aval = x.aval.update(shape=x._sharding.shard_shape(x.shape))
    return [array_mod.Shard(d, index, replica,
                            Array(None, aval=shard_aval, device=d, committed=True,
                                  buffer=buf))
            for (d, index, replica), buf in zip(local_blocks(x._sharding, x.shape),
                                                local_buffers(x))]


def local_buffers(x):
    """The single-device buffers of a sharded Array, one per device of this process.
    (jaxlib tries, and fails, to import jax for each: kept off the hot paths.)"""
    return x._global_buffer._arrays


def local_blocks(sharding, shape):
    """(device, index, replica id) of each block of an array of `shape` laid out as
    `sharding` that this process holds, in the sharding's device order."""
    here = distributed_state()[0]
    return [(d, index, replica) for d, index, replica in zip(
        sharding._device_assignment, sharding._indices(shape),
        sharding.replica_ids(len(shape))) if d.process_index == here]


array_mod.backend_hooks.fetch = _fetch_array
array_mod.backend_hooks.sharding_of = _sharding_of
array_mod.backend_hooks.shards_of = _shards_of


# --- arrays over several devices ------------------------------------------------------------

def put_sharded(value, aval, sharding):
    """A backend array laid out as the NamedSharding `sharding`, each device of this
    process holding its block of the host array `value` (copied: `value` may change
    later)."""
    shard_aval = aval.update(shape=sharding.shard_shape(aval.shape))
    value = np.asarray(value)
    return assemble(aval, sharding, [
        put(np.ascontiguousarray(value[index]), shard_aval, device, copy=True)
        for device, index, _ in local_blocks(sharding, aval.shape)])


def assemble(aval, sharding, buffers):
    """One backend array of type `aval` from the single-device buffers of its blocks on
    this process's devices (in the sharding's device order)."""
    return _jax.ArrayImpl(aval, _container(sharding, aval.ndim), list(buffers), True, True)


_containers = {}


def _container(sharding, ndim):
    """jaxlib's sharding object for a NamedSharding on arrays of rank `ndim`: the mesh's
    devices in order, and the tiling as an XLA HloSharding."""
    key = (sharding, ndim)
    found = _containers.get(key)
    if found is None:
        found = _containers[key] = _jax.GSPMDSharding(
            _jax.DeviceList(sharding._device_assignment), _hlo_sharding(sharding, ndim))
    return found


def _hlo_sharding(sharding, ndim):
    """The XLA sharding of a NamedSharding: tiles per dimension (and the replicas as a
    last tile dimension), each listing the partition (mesh position) holding it."""
    positions = sharding._block_positions(ndim)
    pieces = [1 + max(b[k] for b, _ in positions) for k in range(ndim)]
    replicas = 1 + max(r for _, r in positions)
    if math.prod(pieces) == 1:
        return _REPLICATED
    grid = np.zeros(pieces + [replicas], np.int64)
    for partition, (blocks, replica) in enumerate(positions):
        grid[tuple(blocks) + (replica,)] = partition
    dims = pieces + [replicas] if replicas > 1 else pieces
    text = (f"{{devices=[{','.join(map(str, dims))}]{','.join(map(str, grid.ravel()))}"
            + (" last_tile_dim_replicate}" if replicas > 1 else "}"))
    return xc.HloSharding.from_string(text)


def gather(x):
    """The host value of a sharded Array: each block copied from one device of this
    process holding it."""
    s, aval = x._sharding, x.aval
    out = np.empty(aval.shape, aval.dtype)
    copied = set()
    for buf, (_, index, _) in zip(local_buffers(x), local_blocks(s, aval.shape)):
        key = tuple((i.start, i.stop) for i in index)
        if key not in copied:
            copied.add(key)
            out[index] = fetch(buf)
    if len(copied) != len(set(tuple((i.start, i.stop) for i in index)
                               for index in s._indices(aval.shape))):
        raise RuntimeError(
            f"Fetching value for `jax.Array` that spans non-addressable (non process "
            f"local) devices is not possible: {aval.str_short()} laid out as {s} has "
            "blocks on other processes' devices. Use "
            "jax.experimental.multihost_utils.process_allgather to gather it, or "
            "x.addressable_shards for this process's blocks.")
    out.flags.writeable = False
    return out


def sharded_array(value, aval, sharding):
    return Array(None, aval=aval, committed=True, sharding=sharding,
                 global_buffer=put_sharded(value, aval, sharding))


def _result_sharding(proto, mesh, ndim):
    """A result's sharding: on one device where XLA placed it there alone (a host
    callback's result, as JAX's maximal sharding), else its NamedSharding."""
    hlo = xc.HloSharding.from_proto(proto)
    if hlo.is_maximal() and not hlo.is_replicated():   # (XLA counts replicated as maximal)
        return sharding_mod.SingleDeviceSharding(
            mesh._flat_devices[hlo.tile_assignment_devices()[0]])
    return named_sharding_from_hlo(proto, mesh, ndim)


def named_sharding_from_hlo(proto, mesh, ndim):
    """The NamedSharding over `mesh` equal to the XLA sharding `proto` (an OpSharding of
    a program compiled with mesh's devices as its partitions, in mesh order)."""
    hlo = xc.HloSharding.from_proto(proto)
    if hlo.is_replicated() or ndim == 0:
        return sharding_mod.NamedSharding(mesh, sharding_mod.PartitionSpec())
    dims = list(hlo.tile_assignment_dimensions())
    blocks = [None] * mesh.size
    for position, partition in enumerate(hlo.tile_assignment_devices()):
        blocks[partition] = np.unravel_index(position, dims)[:ndim]
    spec = sharding_mod.spec_from_tiling(mesh, ndim, blocks) if not hlo.is_manual() \
        else None
    if spec is None:
        raise NotImplementedError(
            f"XLA chose the sharding {hlo} for an array of rank {ndim}, which no "
            f"PartitionSpec over {mesh} expresses; give this result an explicit "
            "out_shardings entry (or a with_sharding_constraint).")
    return sharding_mod.NamedSharding(mesh, spec)


# --- compiling ------------------------------------------------------------------------------

_memory_cache = collections.OrderedDict()
_MEMORY_CACHE_SIZE = 1024


def _cache_key(text, devices, options):
    """What identifies an executable: the program, the compile options (which hold the
    device assignment), jaxlib's version and the devices, and XLA_FLAGS."""
    return compile_cache.make_key(
        JAXLIB_VERSION, str(xc._version), devices[0].platform, devices[0].device_kind,
        ",".join(str(d.id) for d in devices), os.environ.get("XLA_FLAGS", ""),
        options.SerializeAsString(), text)


def _compile_options(devices, num_replicas, num_partitions=None):
    options = xc.CompileOptions()
    options.num_replicas = num_replicas
    if num_partitions is not None:   # one SPMD program partitioned over the devices (Shardy)
        options.num_partitions = num_partitions
        options.device_assignment = xc.DeviceAssignment.create(
            np.array([[d.id for d in devices]]))
        build = options.executable_build_options
        build.use_spmd_partitioning = True
        build.use_shardy_partitioner = True
        return options
    options.device_assignment = xc.DeviceAssignment.create(
        np.array([[d.id] for d in devices]))
    return options


def compile(lowered, devices, name="main", num_replicas=1, num_partitions=None):
    """A LoadedExecutable for a stablehlo.LoweredModule on `devices` (one per replica, or
    one per partition), from the in-memory cache, the persistent cache (compile_cache),
    or XLA's compiler."""
    if lowered.host_callbacks:   # the text does not identify the Python functions: no cache
        return _compile_with_callbacks(lowered, devices, name, num_replicas, num_partitions)
    options = _compile_options(devices, num_replicas, num_partitions)
    key = _cache_key(lowered.text, devices, options)
    with _lock:
        exe = _memory_cache.get(key)
        if exe is not None:
            _memory_cache.move_to_end(key)
            stats["memory_hits"] += 1
            return exe
    if "lapack_" in lowered.text:   # lax.linalg lowers to jaxlib's LAPACK custom calls
        _register_lapack()
    device_list = _jax.DeviceList(tuple(devices))
    exe = _load_persistent(key, device_list, options)
    if exe is None:
        start = time.perf_counter()
        try:
            with TraceMe(f"pyjax compile jit({name})"):   # named in profiler traces
                exe = client().compile_and_load(lowered.text, device_list, options)
        except _jax.JaxRuntimeError as err:
            raise _compile_error(err, lowered, name) from None
        seconds = time.perf_counter() - start
        stats["compiles"] += 1
        if config.log_compiles.value:
            logger.warning("Finished XLA compilation of jit(%s) in %.4f sec", name, seconds)
        _store_persistent(key, exe, seconds)
    with _lock:
        _memory_cache[key] = exe
        if len(_memory_cache) > _MEMORY_CACHE_SIZE:
            _memory_cache.popitem(last=False)
    return exe


def _load_persistent(key, device_list, options):
    """An executable from the persistent cache, or None (a miss, or an entry XLA cannot
    load: that one is discarded, with a warning, so the caller compiles afresh)."""
    blob = compile_cache.load(key)
    if blob is None:
        return None
    try:
        exe = client().deserialize_executable(blob, device_list, options)
    except Exception as err:   # noqa: BLE001 - any failure means: compile instead
        compile_cache.discard(key, f"XLA could not load it ({err})")
        return None
    stats["persistent_hits"] += 1
    return exe


def _store_persistent(key, exe, compile_seconds):
    try:
        blob = exe.serialize()
    except _jax.JaxRuntimeError:   # an executable XLA cannot serialize: just not cached
        return
    if compile_cache.store(key, blob, compile_seconds):
        stats["persistent_writes"] += 1


def _mlir_context():
    """An MLIR context with the StableHLO dialects, to parse modules that need host
    callbacks (compile_and_load takes those only with a parsed module)."""
    ctx = _state.get("mlir_context")
    if ctx is None:
        with _lock:
            ctx = _state.get("mlir_context")
            if ctx is None:
                ctx = _state["mlir_context"] = _new_mlir_context()
    return ctx


def _new_mlir_context():
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mlir.dialects import chlo, sdy, stablehlo
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    sdy.register_dialect(ctx)   # partitioned modules (shard_map, shardings) use Shardy
    return ctx


def _compile_with_callbacks(lowered, devices, name, num_replicas, num_partitions):
    """Compiles a module whose custom calls run Python (jax.debug.print, pure_callback,
    io_callback): XLA's CPU callback target calls lowered.host_callbacks[index]."""
    from jaxlib.mlir import ir
    if "lapack_" in lowered.text:
        _register_lapack()
    with _mlir_context():
        module = ir.Module.parse(lowered.text)
    try:
        exe = client().compile_and_load(module, _jax.DeviceList(tuple(devices)),
                                        _compile_options(devices, num_replicas,
                                                         num_partitions),
                                        host_callbacks=lowered.host_callbacks)
    except _jax.JaxRuntimeError as err:
        raise _compile_error(err, lowered, name) from None
    stats["compiles"] += 1
    return exe


def _register_lapack():
    """Registers jaxlib's LAPACK FFI kernels (lapack_spotrf_ffi, ...) with XLA:CPU, once.
    They call SciPy's LAPACK, so SciPy is imported only when a module needs them."""
    if _state.get("lapack"):
        return
    with _lock:
        if _state.get("lapack"):
            return
        from jaxlib.cpu import _lapack
        _lapack.initialize()
        for target, fn in _lapack.registrations().items():
            xc.register_custom_call_target(target, fn, platform="cpu", api_version=1)
        _state["lapack"] = True


def _compile_error(err, lowered, name):
    message = str(err)
    quoted = []
    for match in re.finditer(r"-:(\d+):\d+: error: ([^\n]*)", message):
        line = lowered.describe_line(int(match.group(1)))
        if line:
            quoted.append(f"{match.group(2)}\n  failing op: {line}")
    detail = "\n".join(quoted) if quoted else message
    return errors.JaxRuntimeError(
        f"XLA could not compile jit({name}): {detail}\n(full XLA message: "
        f"{message.strip()})")


# --- executing ------------------------------------------------------------------------------

_FLOAT0 = np.dtype([("float0", np.void, 0)])


def _result_handler(aval, device, committed):
    return _result_handler_for(aval, sharding(device), committed)


def _result_handler_for(aval, jaxlib_sharding, committed=True):
    try:
        return _jax.array_result_handler(aval, jaxlib_sharding, committed, _skip_checks=True)
    except TypeError:   # jaxlib >= 0.12 has no _skip_checks
        return _jax.array_result_handler(aval, jaxlib_sharding, committed)


class _ScalarSlot:
    """A jit argument passed as a Python or NumPy scalar of one type. The device copies of
    its latest values are kept (unless the argument is donated), so a loop passing the
    same 0.5 every step transfers it once."""

    __slots__ = ("type", "aval", "device", "recent")

    def __init__(self, type_, aval, device, remember):
        self.type, self.aval, self.device = type_, aval, device
        self.recent = {} if remember and not issubclass(type_, (complex, np.complexfloating)) \
            else None   # complex zeros with either sign compare equal: no safe key

    def buffer(self, x):
        """x on the device, or None when it is of another type or does not fit the dtype
        (the caller's general path then raises the error)."""
        if type(x) is not self.type:
            return None
        recent = self.recent
        key = x if x else str(x)   # 0.0 == -0.0, but their buffers differ
        if recent is not None:
            buf = recent.get(key)
            if buf is not None:
                return buf
        try:
            value = np.asarray(x, self.aval.dtype)
        except OverflowError:
            return None
        buf = put(value, self.aval, self.device)
        if recent is not None:
            if len(recent) >= 64:
                recent.clear()
            recent[key] = buf
        return buf


class _HostArraySlot:
    """A jit argument passed as a NumPy array of one dtype and shape (a HostArrayKind)."""

    __slots__ = ("kind", "aval", "device")

    def __init__(self, kind, aval, device):
        self.kind, self.aval, self.device = kind, aval, device

    def buffer(self, x):
        """x on the device (in the aval's canonical dtype), or None when x is not of the
        kind."""
        if not self.kind.fits(x):
            return None
        return put(x if x.dtype == self.aval.dtype else x.astype(self.aval.dtype),
                   self.aval, self.device)


def _other_buffer(x, slot, device, committed):
    """The device buffer for an argument the fast check did not pass through: a host
    value the slot takes, or an Array of the slot's aval and commitment held elsewhere
    (a committed one only on `device`); None if it does not fit (the caller then takes
    jit's general path)."""
    if type(x) is Array:
        if x.committed != committed or x.aval != slot or (
                committed and x._device is not device):
            return None
        return device_buffer(x, device)
    if type(slot) is ShapedArray:
        return None
    return slot.buffer(x)


class _Runner:
    """An Executable's lean entry for one signature of argument leaves (what jit's cached
    calls run): an Array of the expected aval and commitment whose buffer is on the device
    passes straight through, a host value goes through its slot; the result is the output
    pytree (committed when an argument is), or dispatch.NO_FIT when a leaf does not fit.
    This is the hot path of every jitted call: each extra Python step costs a few % of a
    tiny call."""

    __slots__ = ("name", "device", "slots", "committed_args", "consts", "execute",
                 "handlers", "out_avals", "donated", "committed", "out_tree",
                 "single_output", "callbacks")

    def __init__(self, executable, slots, committed_args, donated, committed, out_tree):
        self.name, self.device = executable.name, executable.device
        self.slots, self.committed_args = slots, committed_args
        self.consts = executable._consts
        self.execute = executable.loaded.execute_sharded
        self.handlers = executable._handlers[committed]
        self.out_avals, self.donated, self.committed = executable.out_avals, donated, committed
        self.out_tree = out_tree
        self.single_output = (len(self.out_avals) == 1
                              and tree_util.treedef_is_leaf(out_tree))
        self.callbacks = executable._callbacks

    def __call__(self, leaves):
        device = self.device
        bufs = [*self.consts]
        for x, slot, committed in zip(leaves, self.slots, self.committed_args):
            # avals are interned: an equal one is the same object
            if (type(x) is Array and x.aval is slot and x.committed is committed
                    and x._device is device and x._buffer is not None):
                bufs.append(x._buffer)
            else:
                buf = _other_buffer(x, slot, device, committed)
                if buf is None:
                    return dispatch.NO_FIT
                bufs.append(buf)
        try:
            if self.callbacks:
                outs = _execute_and_wait(self.execute, bufs, self.handlers)
            else:
                outs = self.execute(bufs).consume_with_handlers(self.handlers)
        except _jax.JaxRuntimeError as err:
            raise errors.JaxRuntimeError(f"running jit({self.name}) failed: {err}") from None
        for i in self.donated:
            if type(leaves[i]) is Array:
                leaves[i].delete("donated")
        if self.single_output:   # most programs: no list, no pytree
            return Array(None, False, device, self.committed, self.out_avals[0], outs[0])
        committed = self.committed
        return tree_util.tree_unflatten(self.out_tree, [
            Array(None, False, device, committed, a, o) for a, o in zip(self.out_avals, outs)])


def _execute_and_wait(execute_sharded, bufs, handlers):
    """Runs a program with host callbacks and waits for them, so their effects (prints,
    writes) happen in call order and before the call returns; its output arrays."""
    done = execute_sharded(bufs, with_tokens=True)
    token = done.consume_token()
    outs = done.consume_with_handlers(handlers)
    token.block_until_ready()
    return outs


class Executable:
    """A compiled jaxpr on one device: a callable from Arrays to Arrays."""

    def __init__(self, lowered, device, consts, name):
        self.lowered, self.device, self.name = lowered, device, name
        self.loaded = compile(lowered, [device], name)
        self.out_avals = lowered.out_avals
        self._consts = [put(np.asarray(getattr(c, "_value", c), a.dtype), a, device)
                        for c, a in zip(consts, lowered.const_avals)]
        self._handlers = {c: [_result_handler(a, device, c) for a in self.out_avals]
                          for c in (False, True)}
        self._float0 = [a.dtype == _FLOAT0 for a in self.out_avals]
        self._any_float0 = any(self._float0)
        self._callbacks = bool(lowered.host_callbacks)

    def runner(self, kinds, in_avals, donated, committed, out_tree):
        """The lean runner of this executable for argument leaves of `kinds` (see
        dispatch.runner_for), or None for programs with float0 outputs (the general
        entry handles those)."""
        if self._any_float0:
            return None
        slots, committed_args = [], []
        for i, (kind, aval) in enumerate(zip(kinds, in_avals)):
            committed_args.append(type(kind) is dispatch.CommittedKind)
            if type(kind) is ShapedArray:
                slots.append(kind)
            elif type(kind) is dispatch.CommittedKind:
                slots.append(kind.aval)
            elif type(kind) is dispatch.HostArrayKind:
                slots.append(_HostArraySlot(kind, aval, self.device))
            else:
                slots.append(_ScalarSlot(kind, aval, self.device, remember=i not in donated))
        return _Runner(self, tuple(slots), tuple(committed_args), donated, committed,
                       out_tree)

    def __call__(self, args, committed=False):
        # The general entry (arguments a runner does not take, host callbacks, float0
        # outputs); jit's cached calls go through `runner`'s object.
        device = self.device
        bufs = self._consts + [
            x._buffer if x._buffer is not None and x._device is device
            else device_buffer(x, device) for x in args]
        try:
            if self._callbacks:
                outs = _execute_and_wait(self.loaded.execute_sharded, bufs,
                                         self._handlers[committed])
            else:
                outs = self.loaded.execute_sharded(bufs).consume_with_handlers(
                    self._handlers[committed])
        except _jax.JaxRuntimeError as err:
            raise errors.JaxRuntimeError(f"running jit({self.name}) failed: {err}") from None
        results = [Array(None, False, device, committed, a, o)
                   for a, o in zip(self.out_avals, outs)]
        if self._any_float0:
            results = [Array(np.zeros(a.shape, _FLOAT0), aval=a, device=device,
                             committed=committed) if z else r
                       for r, a, z in zip(results, self.out_avals, self._float0)]
        return results

    def cost_analysis(self):
        return self.loaded.cost_analysis()

    def as_text(self):
        """The optimised HLO XLA compiled."""
        return self.loaded.hlo_modules()[0].to_string()


class ReplicatedExecutable:
    """A module compiled with one replica per device (what pmap runs; the module says
    mhlo.num_replicas = len(devices)). Called with, per argument, one Array per device;
    returns, per output, one Array per device, committed there."""

    def __init__(self, lowered, devices, consts, name):
        self.devices, self.name = list(devices), name
        self.loaded = compile(lowered, self.devices, name, num_replicas=len(self.devices))
        self.out_avals = lowered.out_avals
        # A container that hands shard i to replica i (the ArrayImpl's sharding and shape
        # are not consulted beyond that).
        self._spread = _jax.GSPMDSharding(_jax.DeviceList(tuple(self.devices)),
                                          xc.HloSharding.replicate())
        self._consts = []
        for c, a in zip(consts, lowered.const_avals):
            value = np.asarray(getattr(c, "_value", c), a.dtype)
            self._consts.append([Array(value, aval=a, device=d, committed=True,
                                       buffer=put(value, a, d)) for d in self.devices])

    def __call__(self, per_argument):
        arrays = []
        for shards in self._consts + list(per_argument):
            if len(shards) != len(self.devices):
                raise ValueError(f"pmapped {self.name} needs one value per device "
                                 f"({len(self.devices)}), got {len(shards)}")
            bufs = [device_buffer(x, d) for x, d in zip(shards, self.devices)]
            aval = shards[0].aval
            arrays.append(_jax.ArrayImpl(aval.update(shape=(len(bufs),) + aval.shape),
                                         self._spread, bufs, True, True))
        try:
            per_output = self.loaded.execute_sharded(arrays) \
                .disassemble_into_single_device_arrays()
        except _jax.JaxRuntimeError as err:
            raise errors.JaxRuntimeError(f"running pmap({self.name}) failed: {err}") \
                from None
        return [[Array(None, aval=a, device=d, committed=True, buffer=b)
                 for b, d in zip(bufs, self.devices)]
                for a, bufs in zip(self.out_avals, per_output)]


def hlo_text(lowered):
    """The HLO text of a lowered StableHLO module (Lowered.as_text(dialect="hlo"))."""
    return _jax.mlir.mlir_module_to_xla_computation(lowered.text).as_hlo_text()


def memory_analysis(loaded):
    """XLA's memory statistics of a compiled executable (argument, output, temp sizes)."""
    return loaded.get_compiled_memory_stats()


class ShardedExecutable:
    """A module partitioned by XLA's SPMD partitioner over a mesh's devices (partition i
    on mesh.devices.flat[i]). `in_shardings`/`out_shardings` are what XLA settled on (the
    module's annotations, and its propagation where none was given), as NamedShardings;
    arguments must arrive laid out as `in_shardings` say."""

    def __init__(self, lowered, mesh, consts, name):
        self.mesh, self.name = mesh, name
        self.devices = list(mesh._flat_devices)
        self.loaded = compile(lowered, self.devices, name, num_partitions=mesh.size)
        self.out_avals = lowered.out_avals
        self._device_list = _jax.DeviceList(tuple(self.devices))
        avals = list(lowered.const_avals) + list(lowered.in_avals)
        # (XLA reports no shardings for a program on one device: all replicated.)
        params = self.loaded.get_parameter_shardings() or \
            [_REPLICATED.to_proto()] * len(avals)
        outs = self.loaded.get_output_shardings() or \
            [_REPLICATED.to_proto()] * len(lowered.out_avals)
        shardings = [named_sharding_from_hlo(p, mesh, a.ndim) for p, a in zip(params, avals)]
        # Containers handing each partition its buffer (their sharding is what XLA chose).
        nconsts = len(lowered.const_avals)
        self.in_shardings = shardings[nconsts:]
        self.out_shardings = [_result_sharding(p, mesh, a.ndim)
                              for p, a in zip(outs, self.out_avals)]
        self._consts = [put_sharded(np.asarray(getattr(c, "_value", c), a.dtype), a, s)
                        for c, a, s in zip(consts, lowered.const_avals, shardings)]
        self._handlers = [
            _result_handler_for(a, _jax.GSPMDSharding(self._device_list,
                                                      xc.HloSharding.from_proto(p)))
            for a, p in zip(self.out_avals, outs)]

    def __call__(self, args):
        """Runs on Arrays laid out as self.in_shardings; returns sharded Arrays."""
        try:
            outs = self.loaded.execute_sharded(
                self._consts + [x._global_buffer for x in args]).consume_with_handlers(
                    self._handlers)
        except _jax.JaxRuntimeError as err:
            raise errors.JaxRuntimeError(f"running jit({self.name}) failed: {err}") \
                from None
        return [Array(None, aval=a, committed=True, device=s.device, buffer=o)
                if type(s) is sharding_mod.SingleDeviceSharding else
                Array(None, aval=a, committed=True, sharding=s, global_buffer=o)
                for a, s, o in zip(self.out_avals, self.out_shardings, outs)]

    def cost_analysis(self):
        return self.loaded.cost_analysis()

    def as_text(self):
        return self.loaded.hlo_modules()[0].to_string()


# --- profiling (jax.profiler) -------------------------------------------------------------
# jaxlib's profiler records XLA's own events (compiles, executions, transfers), the
# Python tracer's and TraceMe annotations; a session exports them as XSpace
# (<host>.xplane.pb) and Chrome trace-event JSON (<host>.trace.json.gz), the files
# TensorBoard's profile plugin and Perfetto read.

ProfileOptions = _profiler.ProfileOptions
TraceMe = _profiler.TraceMe


def start_profiler_session(options):
    client()   # the backend exists before the session, so its tracers are included
    return _profiler.ProfilerSession(options)


def set_profiler_metadata(key, value):
    _profiler.set_metadata(key, value)


def clear_profiler_metadata():
    _profiler.clear_metadata()


def start_profiler_server(port):
    return _profiler.start_server(port)


def register_profiler_subprocess(pid, port):
    return _profiler.register_subprocess(pid, port)


def heap_profile():
    """The client's live buffers and executables as a pprof protocol buffer."""
    return client().heap_profile()
