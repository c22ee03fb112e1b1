"""The XLA executor: compiling StableHLO text (in-memory and on-disk caches) and running
the programs, whose results are Arrays holding device buffers, with runtime errors as
Python exceptions. The client, devices and buffers come from backends/xla_runtime.py, MLIR
(parsing modules) from backends/mlir_bindings.py; with them, the only importer of jaxlib.
Loaded on first use (dispatch.xla_backend)."""
from __future__ import annotations

import collections
import os
import re
import threading
import time
from typing import Any

import numpy as np

# First: it sets XLA's log level before jaxlib loads.
from pyjax._src.backends.xla_runtime import FLOAT0, REPLICATED, client, layout_of, put
from pyjax._src.backends.xla_runtime import put_sharded
from pyjax._src.backends.xla_runtime import sharding as single_device_sharding

import jaxlib
import jaxlib.xla_client as xc
from jaxlib import _hlo, _jax  # type: ignore[attr-defined]
from jaxlib import _profiler  # type: ignore[attr-defined]

from pyjax._src import config, errors, monitoring, tree_util
from pyjax._src import layout as layout_mod
from pyjax._src import sharding as sharding_mod
from pyjax._src.array import Array, device_results, sharded_results
from pyjax._src.backends import compile_cache, mlir_bindings
from pyjax._src.backends.callback_threads import (inside_multi_device_callback,
                                                  reentrant_launch_error)
from pyjax._src.backends.argument_kinds import NO_FIT, CommittedKind, HostArrayKind
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.tokens import AbstractToken, Token


JAXLIB_VERSION = getattr(getattr(jaxlib, "version", None), "__version__", "unknown")

# How often each route to an executable was taken (tests and benchmarks read these).
stats: collections.Counter[str] = collections.Counter()

_state: dict[str, Any] = {}
# Guards the one-time set-ups below (LAPACK kernels) and the in-memory
# executable cache.
_lock = threading.RLock()


# --- shardings XLA chose --------------------------------------------------------------------

def _result_sharding(proto, mesh, ndim):
    """A result's sharding: on one device where XLA placed it there alone (a host
    callback's result, as JAX's maximal sharding), else its NamedSharding."""
    hlo = xc.HloSharding.from_proto(proto)
    if hlo.is_maximal() and not hlo.is_replicated():   # (XLA counts replicated as maximal)
        return sharding_mod.SingleDeviceSharding(
            mesh._flat_devices[hlo.tile_assignment_devices()[0]])
    return named_sharding_from_hlo(proto, mesh, ndim)


def _naming_mesh(aval, mesh):
    """The mesh that names a result's sharding: that of its type (over the program's
    devices, `mesh`'s), as JAX names it, unless the type has none or manual axes."""
    typed = aval._sharding
    if typed is None or typed.mesh.empty or typed.mesh.manual_axes:
        return mesh
    return sharding_mod.concrete_mesh_of(typed.mesh, mesh) or mesh


def named_sharding_from_hlo(proto, mesh, ndim):
    """The NamedSharding over `mesh` equal to the XLA sharding `proto` (an OpSharding of
    a program compiled with mesh's devices as its partitions, in mesh order)."""
    hlo = xc.HloSharding.from_proto(proto)
    if hlo.is_unreduced():   # partial sums over every (non-trivial) mesh axis
        return sharding_mod.NamedSharding(mesh, sharding_mod.PartitionSpec(
            unreduced=frozenset(n for n, s in zip(mesh.axis_names, mesh.axis_sizes)
                                if s > 1)))
    groups = list(hlo.subgroup_types())
    if hlo.is_replicated() or (ndim == 0 and xc.OpSharding.Type.UNREDUCED not in groups):
        return sharding_mod.NamedSharding(mesh, sharding_mod.PartitionSpec())
    dims = list(hlo.tile_assignment_dimensions())
    blocks, partials = [None] * mesh.size, [0] * mesh.size
    partial_dim = len(dims) - len(groups) + groups.index(xc.OpSharding.Type.UNREDUCED) \
        if xc.OpSharding.Type.UNREDUCED in groups else None
    for position, partition in enumerate(hlo.tile_assignment_devices()):
        coords = np.unravel_index(position, dims)
        blocks[partition] = coords[:ndim]
        if partial_dim is not None:
            partials[partition] = int(coords[partial_dim])
    spec = sharding_mod.spec_from_tiling(mesh, ndim, blocks) if not hlo.is_manual() \
        else None
    if spec is not None and partial_dim is not None:
        spec = sharding_mod.unreduced_spec_from_partials(mesh, spec, partials)
    if spec is None:
        raise NotImplementedError(
            f"XLA chose the sharding {hlo} for an array of rank {ndim}, which no "
            f"PartitionSpec over {mesh} expresses; give this result an explicit "
            "out_shardings entry (or a with_sharding_constraint).")
    return sharding_mod.NamedSharding(mesh, spec)


# --- compiling ------------------------------------------------------------------------------

_memory_cache: collections.OrderedDict[str, Any] = collections.OrderedDict()
_MEMORY_CACHE_SIZE = 1024


def clear_memory_cache():
    with _lock:
        _memory_cache.clear()


def _cache_key(text, devices, options):
    """What identifies an executable: the program, the compile options (which hold the
    device assignment), jaxlib's version and the devices, and XLA_FLAGS."""
    return compile_cache.make_key(
        JAXLIB_VERSION, str(xc._version), devices[0].platform, devices[0].device_kind,
        ",".join(str(d.id) for d in devices), os.environ.get("XLA_FLAGS", ""),
        options.SerializeAsString(), text)


# compiler_options that XLA reads from the build options rather than as overrides (as JAX).
_BUILD_OPTIONS = ("exec_time_optimization_effort", "memory_fitting_effort",
                  "optimization_level", "memory_fitting_level")


def _compile_options(devices, num_replicas, num_partitions=None, compiler_options=None):
    options = xc.CompileOptions()
    options.num_replicas = num_replicas
    if compiler_options:   # XLA checks names and values when it compiles
        overrides = dict(compiler_options)
        for name in _BUILD_OPTIONS:
            if name in overrides:
                setattr(options.executable_build_options, name, overrides.pop(name))
        options.env_option_overrides = list(overrides.items())
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


def compile(lowered, devices, name="main", num_replicas=1, num_partitions=None,
            compiler_options=None):
    """A LoadedExecutable for a stablehlo.LoweredModule on `devices` (one per replica, or
    one per partition), from the in-memory cache, the persistent cache (compile_cache),
    or XLA's compiler. `compiler_options` are XLA's (name -> value), as
    Lowered.compile(compiler_options=...) takes them."""
    options = _compile_options(devices, num_replicas, num_partitions, compiler_options)
    # a module whose callbacks run as it compiles, or whose text does not identify the
    # Python functions of its host callbacks, is never cached
    cached = not (lowered.sharding_inspections or lowered.host_callbacks)
    if cached:
        key = _cache_key(lowered.text, devices, options)
        with _lock:
            exe = _memory_cache.get(key)
            if exe is not None:
                _memory_cache.move_to_end(key)
                stats["memory_hits"] += 1
                return exe
    with monitoring.timed_event(monitoring.BACKEND_COMPILE_EVENT, f"jit({name})"):
        if lowered.sharding_inspections:
            return _compile_inspecting(lowered, devices, name, options)
        if lowered.host_callbacks:
            if compile_cache.directory() is not None:
                compile_cache.explain("Not writing persistent cache entry for '%s' because "
                                      "it uses host callbacks (e.g. from jax.debug.print or "
                                      "breakpoint)", _module_name(lowered))
            return _compile_with_callbacks(lowered, devices, name, options)
        exe = _compile_uncached(lowered, devices, name, options, key)
    with _lock:
        _memory_cache[key] = exe
        if len(_memory_cache) > _MEMORY_CACHE_SIZE:
            _memory_cache.popitem(last=False)
    return exe


def _compile_uncached(lowered, devices, name, options, key):
    """The executable from the persistent cache, or compiled by XLA (and stored there)."""
    if "lapack_" in lowered.text:   # lax.linalg lowers to jaxlib's LAPACK custom calls
        _register_lapack()
    device_list = _jax.DeviceList(tuple(devices))
    exe = _load_persistent(key, device_list, options)
    if exe is None:
        if compile_cache.directory() is not None:
            compile_cache.explain("PERSISTENT COMPILATION CACHE MISS for '%s' with key %r",
                                  _module_name(lowered), key)
        start = time.perf_counter()
        try:
            with TraceMe(f"pyjax compile jit({name})"):   # named in profiler traces
                exe = client().compile_and_load(_refined(lowered), device_list, options)
        except _jax.JaxRuntimeError as err:
            raise _compile_error(err, lowered, name) from None
        seconds = time.perf_counter() - start
        stats["compiles"] += 1
        _store_persistent(key, exe, seconds, _module_name(lowered))
    return exe


def _module_name(lowered):
    """The name of a lowered module (`jit_f`), as the cache's messages name programs."""
    head = lowered.text[:200]
    start = head.find("@") + 1
    return head[start:head.find(" ", start)] if start else "main"


def _refined(lowered):
    """The module to compile: its text, or for a module with dynamic dimensions (a
    shape-polymorphic export inlined) the bytecode with them refined from @main's
    static shapes."""
    if not lowered.dynamic_shapes:
        return lowered.text
    try:
        return _jax.mlir.refine_polymorphic_shapes(
            lowered.text.encode(), enable_shape_assertions=True,
            validate_static_shapes=True)
    except Exception as err:   # noqa: BLE001 - jaxlib raises its own types
        raise ValueError(f"Cannot refine the dynamic shapes of the module: {err}") from None


def _load_persistent(key, device_list, options):
    """An executable from the persistent cache, or None (a miss, or an entry XLA cannot
    load: that one is discarded, with a warning, so the caller compiles afresh)."""
    if compile_cache.directory() is not None:
        monitoring.record_event("/jax/compilation_cache/compile_requests_use_cache")
    blob = compile_cache.load(key)
    if blob is None:
        return None
    try:
        exe = client().deserialize_executable(blob, device_list, options)
    except Exception as err:   # noqa: BLE001 - any failure means: compile instead
        compile_cache.discard(key, f"XLA could not load it ({err})")
        return None
    stats["persistent_hits"] += 1
    monitoring.record_event("/jax/compilation_cache/cache_hits")
    return exe


def _store_persistent(key, exe, compile_seconds, name):
    try:
        blob = exe.serialize()
    except _jax.JaxRuntimeError:   # an executable XLA cannot serialize: just not cached
        return
    if compile_cache.store(key, blob, compile_seconds, name):
        stats["persistent_writes"] += 1


def _compile_inspecting(lowered, devices, name, options):
    """Compiles a module with jax.debug.inspect_array_sharding callbacks: on one device
    each gets that device's sharding now; over a mesh each InspectSharding custom call
    gets the key of a function that XLA's SPMD partitioner calls with the sharding it
    chose, which the callback receives as a NamedSharding over the mesh."""
    text, keep_alive = lowered.text, []
    for callback, ndim, placeholder in lowered.sharding_inspections:
        if placeholder is None:
            callback(sharding_mod.NamedSharding(lowered.mesh, sharding_mod.PartitionSpec())
                     if lowered.mesh is not None
                     else sharding_mod.SingleDeviceSharding(devices[0]))
            continue

        def report(hlo, callback=callback, ndim=ndim):
            callback(sharding_mod.NamedSharding(lowered.mesh, sharding_mod.PartitionSpec())
                     if hlo.is_manual()   # inside shard_map, as JAX reports it
                     else named_sharding_from_hlo(hlo.to_proto(), lowered.mesh, ndim))
        keep_alive.append(report)   # XLA holds only its address until compiling ends
        key = _mlir_string(_jax.encode_inspect_sharding_callback(report))
        text = text.replace(f'"{placeholder}"', key, 1)
    return _compile_with_callbacks(lowered, devices, name, options, text)


def _mlir_string(data):
    """Bytes as an MLIR string literal (printable ASCII kept, the rest \\XX escaped)."""
    return '"' + "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\{c:02X}"
                         for c in data) + '"'


def _compile_with_callbacks(lowered, devices, name, options, text=None):
    """Compiles a module whose custom calls run Python (jax.debug.print, pure_callback,
    io_callback): XLA's CPU callback target calls lowered.host_callbacks[index]. `text`
    replaces the module's text (with the keys of sharding inspections filled in)."""
    if "lapack_" in lowered.text:
        _register_lapack()
    module = mlir_bindings.parse(lowered.text if text is None else text)
    try:
        exe = client().compile_and_load(module, _jax.DeviceList(tuple(devices)), options,
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

def _result_handler(aval, device, committed):
    return _result_handler_for(aval, single_device_sharding(device), committed)


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
        return x.buffer_on(device)
    if type(slot) is ShapedArray:
        return None
    return slot.buffer(x)


class _Runner:
    """An Executable's lean entry for one signature of argument leaves (what jit's cached
    calls run): an Array of the expected aval and commitment whose buffer is on the device
    passes straight through, a host value goes through its slot; the result is the output
    pytree (committed when an argument is), or NO_FIT when a leaf does not fit.
    This is the hot path of every jitted call: each extra Python step costs a few % of a
    tiny call."""

    __slots__ = ("device", "slots", "committed_args", "consts", "execute", "handlers",
                 "out_avals", "donated", "committed", "build", "single_output", "callbacks")

    def __init__(self, executable, slots, committed_args, donated, committed, out_tree):
        self.device = executable.device
        self.slots, self.committed_args = slots, committed_args
        self.consts = executable._consts
        self.execute = executable.loaded.execute_sharded
        self.handlers = executable._handlers[committed]
        self.out_avals, self.donated, self.committed = executable.out_avals, donated, committed
        self.single_output = (len(self.out_avals) == 1
                              and tree_util.treedef_is_leaf(out_tree))
        # the result tree from its leaves
        self.build = tree_util.tree_builder(out_tree)
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
                    return NO_FIT
                bufs.append(buf)
        outs = _launch(self.execute, bufs, self.callbacks, self.handlers)
        for i in self.donated:
            if type(leaves[i]) is Array:
                leaves[i].delete("donated")
        if self.single_output:   # most programs: no list, no pytree
            return Array(None, False, device, self.committed, self.out_avals[0], outs[0])
        return self.build(device_results(self.out_avals, outs, device, self.committed))


def _launch(execute_sharded, bufs, host_calls, handlers):
    """Runs a compiled program on argument buffers: its output arrays (made by
    `handlers`), waiting for its host callbacks if it has any; XLA's runtime errors
    become pyjax's JaxRuntimeError with XLA's message, as JAX raises them."""
    try:
        if host_calls:
            return _execute_and_wait(execute_sharded, bufs, host_calls, handlers)
        return execute_sharded(bufs).consume_with_handlers(handlers)
    except _jax.JaxRuntimeError as err:
        raise errors.JaxRuntimeError(str(err)) from None


# Held while a program over several devices with callbacks runs: its callbacks keep
# their failures on themselves (HostCall.errors), so two threads running the same
# program at once would each see the other's. (Such a callback cannot start another
# program over several devices, so it never waits for this lock: callback_threads.py.)
_deferred_errors_lock = threading.Lock()


def _execute_and_wait(execute_sharded, bufs, host_calls, handlers=None):
    """Runs a program with host callbacks and waits for them, so their effects (prints,
    writes) happen in call order and before the call returns; its output arrays (with
    handlers None: per output, its per-device buffers). A failure the callbacks of a
    multi-device program kept in their `errors` (lax/callbacks.py's HostCall) is raised
    here, once every device has finished, as XLA words it."""
    if not any(call.defer_errors for call in host_calls):
        return _execute_with_token(execute_sharded, bufs, handlers)
    with _deferred_errors_lock:
        try:
            outs = _execute_with_token(execute_sharded, bufs, handlers)
        finally:
            failures = [failure for call in host_calls for failure in call.errors]
            for call in host_calls:
                call.errors.clear()
    if failures:
        raise _jax.JaxRuntimeError(
            f"INTERNAL: CpuCallback error calling callback: {failures[0]}")
    return outs


def _execute_with_token(execute_sharded, bufs, handlers):
    done = execute_sharded(bufs, with_tokens=True)
    token = done.consume_token()
    outs = done.disassemble_into_single_device_arrays() if handlers is None else \
        done.consume_with_handlers(handlers)
    token.block_until_ready()
    return outs


_TOKEN_BUFFER = ShapedArray((0,), np.dtype(np.bool_))
_token_buffers: dict[Any, Any] = {}


def _token_buffer(device):
    """The empty buffer XLA takes for a token argument on `device`."""
    buf = _token_buffers.get(device)
    if buf is None:
        buf = _token_buffers[device] = put(np.zeros((0,), np.bool_), _TOKEN_BUFFER, device)
    return buf


class Executable:
    """A compiled jaxpr on one device: a callable from Arrays to Arrays."""

    def __init__(self, lowered, device, consts, name, compiler_options=None):
        self.lowered, self.device, self.name = lowered, device, name
        self.loaded = compile(lowered, [device], name, compiler_options=compiler_options)
        self.out_avals = lowered.out_avals
        self._consts = [_token_buffer(device) if type(a) is AbstractToken
                        else put(np.asarray(getattr(c, "_value", c), a.dtype), a, device)
                        for c, a in zip(consts, lowered.const_avals)]
        # XLA passes tokens as empty buffers: outputs come back as such and become Tokens
        self._handlers = {c: [_result_handler(_TOKEN_BUFFER if type(a) is AbstractToken
                                              else a, device, c) for a in self.out_avals]
                          for c in (False, True)}
        self._float0 = [type(a) is not AbstractToken and a.dtype == FLOAT0
                        for a in self.out_avals]
        self._tokens = any(type(a) is AbstractToken
                           for a in (*lowered.in_avals, *self.out_avals))
        self._any_float0 = any(self._float0)
        self._callbacks = tuple(lowered.host_callbacks)

    def runner(self, kinds, in_avals, donated, committed, out_tree):
        """The lean runner of this executable for argument leaves of `kinds` (see
        dispatch.runner_for), or None for programs with float0 outputs or tokens (the
        general entry handles those)."""
        if self._any_float0 or self._tokens:
            return None
        slots, committed_args = [], []
        for i, (kind, aval) in enumerate(zip(kinds, in_avals)):
            committed_args.append(type(kind) is CommittedKind)
            if type(kind) is ShapedArray:
                slots.append(kind)
            elif type(kind) is CommittedKind:
                slots.append(kind.aval)
            elif type(kind) is HostArrayKind:
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
            _token_buffer(device) if type(x) is Token
            else x._buffer if x._buffer is not None and x._device is device
            else x.buffer_on(device) for x in args]
        outs = _launch(self.loaded.execute_sharded, bufs, self._callbacks,
                       self._handlers[committed])
        results = device_results(self.out_avals, outs, device, committed)
        if self._tokens:
            results = [Token() if type(a) is AbstractToken else r
                       for r, a in zip(results, self.out_avals)]
        if self._any_float0:
            results = [Array(np.zeros(a.shape, FLOAT0), aval=a, device=device,
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

    def __init__(self, lowered, devices, consts, name, compiler_options=None):
        self.devices, self.name = list(devices), name
        self.loaded = compile(lowered, self.devices, name, num_replicas=len(self.devices),
                              compiler_options=compiler_options)
        self.out_avals = lowered.out_avals
        self._callbacks = tuple(lowered.host_callbacks)
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
        if len(self.devices) > 1 and inside_multi_device_callback():
            raise reentrant_launch_error(f"pmap({self.name})", len(self.devices))
        arrays = []
        for shards in self._consts + list(per_argument):
            if len(shards) != len(self.devices):
                raise ValueError(f"pmapped {self.name} needs one value per device "
                                 f"({len(self.devices)}), got {len(shards)}")
            bufs = [x.buffer_on(d) for x, d in zip(shards, self.devices)]
            aval = shards[0].aval
            if aval.dtype == FLOAT0:   # its buffers hold bools (see put)
                aval = aval.update(dtype=np.bool_)
            arrays.append(_jax.ArrayImpl(aval.update(shape=(len(bufs),) + aval.shape),
                                         self._spread, bufs, True, True))
        try:
            if self._callbacks:
                per_output = _execute_and_wait(self.loaded.execute_sharded, arrays, self._callbacks)
            else:
                per_output = self.loaded.execute_sharded(arrays) \
                    .disassemble_into_single_device_arrays()
        except _jax.JaxRuntimeError as err:
            raise errors.JaxRuntimeError(str(err)) from None
        return [[Array(None, aval=a, device=d, committed=True, buffer=b)
                 for b, d in zip(bufs, self.devices)]
                for a, bufs in zip(self.out_avals, per_output)]


def hlo_text(lowered, debug_info=False):
    """The HLO text of a lowered StableHLO module (Lowered.as_text(dialect="hlo")), as
    JAX prints it; with debug_info, each instruction's metadata (its op_name: the name
    stack and primitive it was lowered from)."""
    options = _hlo.HloPrintOptions.short_parsable()
    options.print_metadata = debug_info
    return xla_computation(lowered).as_hlo_module().to_string(options)


def xla_computation(lowered):
    """A lowered StableHLO module as XLA's HLO computation (compiler_ir("hlo"))."""
    return _jax.mlir.mlir_module_to_xla_computation(lowered.text)


def mlir_module(lowered):
    """A lowered StableHLO module parsed into an MLIR module (compiler_ir())."""
    return mlir_bindings.parse(lowered.text)


def mlir_text(lowered, debug_info=False):
    """A lowered module as MLIR prints it (the custom assembly forms JAX's as_text shows,
    e.g. `stablehlo.add %arg0, %arg1 : tensor<f32>`), with locations if debug_info."""
    return mlir_bindings.parse(lowered.text).operation.get_asm(enable_debug_info=debug_info)


def portable_artifact(lowered):
    """A lowered module as a StableHLO portable artifact (versioned MLIR bytecode, as
    jax.export serializes modules: readable by StableHLO consumers at least 4 weeks
    older)."""
    from jaxlib.mlir.dialects import stablehlo
    version = stablehlo.get_version_from_compatibility_requirement(
        stablehlo.StablehloCompatibilityRequirement.WEEK_4)
    return _jax.mlir.serialize_portable_artifact(lowered.text, version, True)


def artifact_text(blob):
    """The MLIR text (as MLIR prints it) of a StableHLO portable artifact; ValueError for
    bytes that are not one."""
    with mlir_bindings.context():
        try:
            module = _jax.mlir.deserialize_portable_artifact(bytes(blob))
        except Exception as err:
            raise ValueError(f"not a StableHLO portable artifact: {err}") from None
        return module.operation.get_asm(enable_debug_info=False)


def memory_analysis(loaded):
    """XLA's memory statistics of a compiled executable (argument, output, temp sizes)."""
    return loaded.get_compiled_memory_stats()


def program_layouts(loaded):
    """The Layouts of a compiled program's parameters and of its results."""
    return ([layout_mod.Layout.from_pjrt_layout(p) for p in loaded.get_parameter_layouts()],
            [layout_mod.Layout.from_pjrt_layout(p) for p in loaded.get_output_layouts()])


def _non_default_layouts(pjrt_layouts, avals):
    """The Layouts of a program's parameters or results as XLA reports them, or None
    when each is the default (row-major, untiled)."""
    layouts = [layout_mod.Layout.from_pjrt_layout(p) for p in pjrt_layouts]
    default = all(layout_mod.is_default(x, len(a.shape)) for x, a in zip(layouts, avals))
    return None if default else tuple(layouts)


class ShardedExecutable:
    """A module partitioned by XLA's SPMD partitioner over a mesh's devices (partition i
    on mesh.devices.flat[i]). `in_shardings`/`out_shardings` are what XLA settled on (the
    module's annotations, and its propagation where none was given), as NamedShardings;
    arguments must arrive laid out as `in_shardings` say."""

    def __init__(self, lowered, mesh, consts, name, compiler_options=None):
        self.mesh, self.name = mesh, name
        self.devices = list(mesh._flat_devices)
        self.loaded = compile(lowered, self.devices, name, num_partitions=mesh.size,
                              compiler_options=compiler_options)
        self.out_avals = lowered.out_avals
        self._callbacks = tuple(lowered.host_callbacks)
        self._device_list = _jax.DeviceList(tuple(self.devices))
        avals = list(lowered.const_avals) + list(lowered.in_avals)
        # (XLA reports no shardings for a program on one device: all replicated.)
        params = self.loaded.get_parameter_shardings() or \
            [REPLICATED.to_proto()] * len(avals)
        outs = self.loaded.get_output_shardings() or \
            [REPLICATED.to_proto()] * len(lowered.out_avals)
        shardings = [named_sharding_from_hlo(p, mesh, a.ndim) for p, a in zip(params, avals)]
        # Containers handing each partition its buffer (their sharding is what XLA chose).
        nconsts = len(lowered.const_avals)
        self.in_shardings = shardings[nconsts:]
        self.out_shardings = [_result_sharding(p, _naming_mesh(a, mesh), a.ndim)
                              for p, a in zip(outs, self.out_avals)]
        self._consts = [put_sharded(np.asarray(getattr(c, "_value", c), a.dtype), a, s)
                        for c, a, s in zip(consts, lowered.const_avals, shardings)]
        # The layouts XLA settled on for the arguments and results (None: all default).
        self.in_layouts = _non_default_layouts(
            self.loaded.get_parameter_layouts()[nconsts:], lowered.in_avals)
        self.out_layouts = _non_default_layouts(self.loaded.get_output_layouts(),
                                                self.out_avals)
        if self.out_layouts is not None:
            layout_mod.seen["non_default"] = True
        self._handlers = [
            _result_handler_for(a.update(dtype=np.bool_) if a.dtype == FLOAT0 else a,
                                _jax.GSPMDSharding(self._device_list,
                                                   xc.HloSharding.from_proto(p)))
            for a, p in zip(self.out_avals, outs)]

    def __call__(self, args):
        """Runs on Arrays laid out as self.in_shardings; returns sharded Arrays."""
        if len(self.devices) > 1 and inside_multi_device_callback():
            raise reentrant_launch_error(f"jit({self.name})", len(self.devices))
        bufs = self._consts + [x._global_buffer for x in args]
        outs = _launch(self.loaded.execute_sharded, bufs, self._callbacks, self._handlers)
        # (XLA's float0 results are bools: the values are float0 zeros.)
        return [Array(np.zeros(a.shape, FLOAT0), aval=a, committed=True,
                      device=self.devices[0]) if a.dtype == FLOAT0 else
                Array(None, aval=a, committed=True, device=s.device, buffer=o)
                if type(s) is sharding_mod.SingleDeviceSharding else
                Array(None, aval=a, committed=True, sharding=s, global_buffer=o)
                for a, s, o in zip(self.out_avals, self.out_shardings, outs)]

    def cost_analysis(self):
        return self.loaded.cost_analysis()

    def as_text(self):
        return self.loaded.hlo_modules()[0].to_string()

    def runner(self, in_avals, in_shardings, out_avals, out_shardings, donated, out_tree,
               guarded=None):
        """The lean runner of this executable for arguments of `in_avals` held as
        `in_shardings` (each laid out as self.in_shardings says), whose results come back
        typed `out_avals` and named `out_shardings` (as the call that made it settled
        them), or None for results that are float0 or on one device. It returns the
        results as the pytree `out_tree` (None: their list). `guarded`: for a program over
        several processes, the call's name for config.check_thread_guard."""
        if any(a.dtype == FLOAT0 for a in out_avals) or any(
                type(s) is not sharding_mod.NamedSharding for s in out_shardings):
            return None
        return _ShardedRunner(self, in_avals, in_shardings, out_avals, out_shardings,
                              donated, out_tree, guarded)


def mesh_context():
    """What a partitioned call's plan depends on besides its arguments: this thread's
    meshes (`with mesh:`, jax.set_mesh, the abstract mesh)."""
    return (sharding_mod.current_mesh(), sharding_mod.context_mesh(),
            sharding_mod.get_abstract_mesh())


class _ShardedRunner:
    """A partitioned executable's lean entry for one signature (what jit's cached
    partitioned calls run): Arrays of the expected types, held as the signature's
    shardings, pass their buffers straight to XLA; the results come back as the call
    that made the runner settled them. NO_FIT for any other leaf, a deleted one, or
    another mesh context: the general route (dispatch.run_sharded) lays those out or
    raises JAX's errors."""

    __slots__ = ("name", "consts", "execute", "handlers", "callbacks", "in_avals",
                 "in_shardings", "out_avals", "out_shardings", "donated", "build",
                 "context", "guarded", "num_devices")

    def __init__(self, executable, in_avals, in_shardings, out_avals, out_shardings,
                 donated, out_tree, guarded):
        self.name, self.consts = executable.name, executable._consts
        self.execute = executable.loaded.execute_sharded
        self.handlers, self.callbacks = executable._handlers, executable._callbacks
        self.in_avals, self.in_shardings = tuple(in_avals), tuple(in_shardings)
        self.out_avals, self.out_shardings = tuple(out_avals), tuple(out_shardings)
        self.donated = tuple(donated)
        self.build = None if out_tree is None else tree_util.tree_builder(out_tree)
        self.context, self.guarded = mesh_context(), guarded
        self.num_devices = len(executable.devices)

    def __call__(self, leaves):
        if len(leaves) != len(self.in_avals):
            return NO_FIT
        if self.num_devices > 1 and inside_multi_device_callback():
            raise reentrant_launch_error(f"jit({self.name})", self.num_devices)
        bufs = [*self.consts]
        for x, aval, held in zip(leaves, self.in_avals, self.in_shardings):
            if not (type(x) is Array and (x.aval is aval or x.aval == aval)
                    and (x._sharding is held or x._sharding == held) and not x._deleted):
                return NO_FIT
            bufs.append(x._global_buffer)
        context = mesh_context()
        if context is not self.context and context != self.context:
            return NO_FIT
        if layout_mod.seen["non_default"] and not all(
                layout_mod.is_default(layout_of(x._global_buffer), x.ndim) for x in leaves):
            return NO_FIT   # compiled for arguments laid out by default
        if self.guarded is not None:
            config.check_thread_guard(self.guarded)
        outs = _launch(self.execute, bufs, self.callbacks, self.handlers)
        for i in self.donated:
            leaves[i].delete("donated")
        results = sharded_results(self.out_avals, self.out_shardings, outs)
        return results if self.build is None else self.build(results)


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
