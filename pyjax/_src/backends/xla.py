"""The XLA adapter, the only module that imports jaxlib: a lazily created client, compiling
StableHLO text (in-memory and on-disk caches), host<->device transfers, execution, and
runtime errors as Python exceptions. Imports backends, array, config, errors and jaxlib."""
from __future__ import annotations

import collections
import hashlib
import logging
import os
import re
import tempfile
import threading
import time
import warnings

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")   # XLA's start-up log lines

import jaxlib  # noqa: E402
import jaxlib.xla_client as xc  # noqa: E402
from jaxlib import _jax  # noqa: E402

from pyjax._src import array as array_mod  # noqa: E402
from pyjax._src import config, errors, tree_util  # noqa: E402
from pyjax._src.array import Array  # noqa: E402
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
    for name in names:
        if name == "cpu":
            count = config.num_cpu_devices.value
            kwargs = {"num_devices": count} if count and count > 0 else {}
            return xc.make_cpu_client(
                asynchronous=bool(config.cpu_enable_async_dispatch.value), **kwargs)
    raise RuntimeError(
        f"Unable to initialize backend {requested!r} (from jax_platforms / JAX_PLATFORMS): "
        "pyjax drives XLA's CPU client only ('cpu'). Set JAX_PLATFORMS=cpu.")


def devices():
    found = _state.get("devices")
    if found is None:
        with _lock:
            found = _state.get("devices")
            if found is None:
                found = _state["devices"] = list(client().devices())
    return found


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
                                       enable_x64=config.enable_x64.value)
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
    return fetch(x._buffer)


def _sharding_of(x):
    return sharding(x.device)


array_mod.backend_hooks.fetch = _fetch_array
array_mod.backend_hooks.sharding_of = _sharding_of


# --- compiling ------------------------------------------------------------------------------

_memory_cache = collections.OrderedDict()
_MEMORY_CACHE_SIZE = 1024
_MAGIC = b"pyjax-xla-executable-1\n"


def _cache_key(text, devices, num_replicas):
    h = hashlib.sha256()
    for part in (JAXLIB_VERSION, str(xc._version), devices[0].platform,
                 devices[0].device_kind, ",".join(str(d.id) for d in devices),
                 str(num_replicas), os.environ.get("XLA_FLAGS", ""), text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _compile_options(devices, num_replicas):
    options = xc.CompileOptions()
    options.num_replicas = num_replicas
    options.device_assignment = xc.DeviceAssignment.create(
        np.array([[d.id] for d in devices]))
    return options


def compile(lowered, devices, name="main", num_replicas=1):
    """A LoadedExecutable for a stablehlo.LoweredModule on `devices` (one per replica),
    from the in-memory cache, the persistent cache, or XLA's compiler."""
    if lowered.host_callbacks:   # the text does not identify the Python functions: no cache
        return _compile_with_callbacks(lowered, devices, name, num_replicas)
    key = _cache_key(lowered.text, devices, num_replicas)
    with _lock:
        exe = _memory_cache.get(key)
        if exe is not None:
            _memory_cache.move_to_end(key)
            stats["memory_hits"] += 1
            return exe
    if "lapack_" in lowered.text:   # lax.linalg lowers to jaxlib's LAPACK custom calls
        _register_lapack()
    device_list = _jax.DeviceList(tuple(devices))
    cache_dir = config.compilation_cache_dir.value
    exe = _read_persistent(cache_dir, key, device_list, devices, num_replicas) \
        if cache_dir else None
    if exe is None:
        start = time.perf_counter()
        try:
            exe = client().compile_and_load(lowered.text, device_list,
                                            _compile_options(devices, num_replicas))
        except _jax.JaxRuntimeError as err:
            raise _compile_error(err, lowered, name) from None
        stats["compiles"] += 1
        if config.log_compiles.value:
            logger.warning("Finished XLA compilation of jit(%s) in %.4f sec", name,
                           time.perf_counter() - start)
        if cache_dir:
            _write_persistent(cache_dir, key, exe)
    with _lock:
        _memory_cache[key] = exe
        if len(_memory_cache) > _MEMORY_CACHE_SIZE:
            _memory_cache.popitem(last=False)
    return exe


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
    from jaxlib.mlir.dialects import chlo, stablehlo
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    return ctx


def _compile_with_callbacks(lowered, devices, name, num_replicas):
    """Compiles a module whose custom calls run Python (jax.debug.print, pure_callback,
    io_callback): XLA's CPU callback target calls lowered.host_callbacks[index]."""
    from jaxlib.mlir import ir
    if "lapack_" in lowered.text:
        _register_lapack()
    with _mlir_context():
        module = ir.Module.parse(lowered.text)
    try:
        exe = client().compile_and_load(module, _jax.DeviceList(tuple(devices)),
                                        _compile_options(devices, num_replicas),
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


def _cache_path(cache_dir, key):
    return os.path.join(cache_dir, f"pyjax-{key}.xla")


def _read_persistent(cache_dir, key, device_list, devices, num_replicas):
    """An executable from the on-disk cache; a missing, torn or corrupt entry gives None
    (and corrupt ones a warning), so the caller compiles afresh."""
    path = _cache_path(cache_dir, key)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head = len(_MAGIC) + 32
    blob = data[head:]
    if not data.startswith(_MAGIC) or hashlib.sha256(blob).digest() != data[len(_MAGIC):head]:
        warnings.warn(f"pyjax: ignoring corrupt compilation cache entry {path}; "
                      "recompiling.", RuntimeWarning, stacklevel=2)
        return None
    try:
        exe = client().deserialize_executable(blob, device_list,
                                               _compile_options(devices, num_replicas))
    except Exception as err:   # noqa: BLE001 - any failure means: compile instead
        warnings.warn(f"pyjax: could not load compilation cache entry {path} ({err}); "
                      "recompiling.", RuntimeWarning, stacklevel=2)
        return None
    stats["persistent_hits"] += 1
    return exe


def _write_persistent(cache_dir, key, exe):
    """Writes atomically (a temporary file renamed into place), so concurrent writers and
    readers never see half an entry. Failures only warn: the cache is an optimisation."""
    try:
        blob = exe.serialize()
        os.makedirs(cache_dir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".tmp-pyjax-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_MAGIC + hashlib.sha256(blob).digest() + blob)
            os.replace(tmp, _cache_path(cache_dir, key))
        except BaseException:
            os.unlink(tmp)
            raise
        stats["persistent_writes"] += 1
    except (OSError, _jax.JaxRuntimeError) as err:
        warnings.warn(f"pyjax: could not write the compilation cache in {cache_dir}: "
                      f"{err}", RuntimeWarning, stacklevel=2)


# --- executing ------------------------------------------------------------------------------

_FLOAT0 = np.dtype([("float0", np.void, 0)])


def _result_handler(aval, device, committed):
    try:
        return _jax.array_result_handler(aval, sharding(device), committed, _skip_checks=True)
    except TypeError:   # jaxlib >= 0.12 has no _skip_checks
        return _jax.array_result_handler(aval, sharding(device), committed)


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
                 "single_output")

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
        dispatch.runner_for), or None for programs with host callbacks or float0
        outputs (their general entry handles those)."""
        if self._callbacks or self._any_float0:
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
                # Wait for the callbacks, so their effects (prints, writes) happen in call
                # order and before this call returns.
                done = self.loaded.execute_sharded(bufs, with_tokens=True)
                token = done.consume_token()
                outs = done.consume_with_handlers(self._handlers[committed])
                token.block_until_ready()
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
