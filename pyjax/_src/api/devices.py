"""Devices and data placement: devices(), device_count(), default_backend(),
default_device(...), device_put, device_get and block_until_ready. Arrays are uncommitted
on the default device unless device_put(x, device) commits them. Imports backends,
array, core and tree_util."""
from __future__ import annotations

import numpy as np

from pyjax._src import dtypes, errors
from pyjax._src import layout as layout_mod
from pyjax._src import sharding as sharding_mod
from pyjax._src import tree_util
from pyjax._src.array import Array, sharded_array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Var
from pyjax._src.core.avals import MemorySpace, get_aval
from pyjax._src.core.trace import Trace, Tracer, current_trace
from pyjax._src.interpreters import ad
from pyjax._src.lax import sharding_constraint, transfers


def devices(backend=None):
    """The devices of the default backend (or of `backend`: 'cpu', 'gpu', ...)."""
    return list(devices_mod.devices(backend))


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices process `process_index` (default: this one) drives."""
    index = host_id if process_index is None else process_index
    if index is None:
        index = devices_mod.process_index()
    if not 0 <= index < devices_mod.process_count():
        raise ValueError(f"Unknown process_index {index}: there are "
                         f"{devices_mod.process_count()} processes.")
    return [d for d in devices(backend) if d.process_index == index]


def device_count(backend=None):
    return len(devices_mod.devices(backend))


def local_device_count(backend=None):
    """How many devices this process drives."""
    return len(local_devices(backend=backend))


def process_index(backend=None):
    return devices_mod.process_index()


def process_count(backend=None):
    return devices_mod.process_count()


def default_backend():
    """'cpu', 'gpu' or 'tpu': the platform of devices()[0]."""
    return devices_mod.default_backend()


def default_device(device):
    """Context manager: uncommitted arrays and computations go to `device` inside it (a
    Device, a single-device sharding, or a platform name such as 'cpu': its first local
    device)."""
    if isinstance(device, str):
        device = local_devices(backend=device)[0]
    return devices_mod.default_device_context(_as_device(device))


def _as_device(device):
    """A Device from a Device or a single-device sharding."""
    if device is None or hasattr(device, "platform"):
        return device
    found = getattr(device, "device_set", None)
    if found is not None and len(found) == 1:
        return next(iter(found))
    raise ValueError(f"Expected a Device or a single-device Sharding, got {device!r}. Use "
                     "one of jax.devices().")


def _source_device(x):
    """The device a traced value's concrete primal is committed to (None if it has no
    such primal): as JAX infers device_put's src, so that a cotangent goes back there."""
    while isinstance(x, ad.JVPTracer):
        x = x.primal
    return x._device if type(x) is Array and x.committed and x._sharding is None else None


def _put_leaf(x, device, src=None, semantics=transfers.ArrayCopySemantics.REUSE_INPUT):
    if isinstance(x, Tracer):   # recorded in the traced program, as JAX does
        if src is None:
            src = _source_device(x)
        return transfers.device_put_p.bind(x, devices=(device,), srcs=(src,),
                                           copy_semantics=(semantics,))[0]
    xla = devices_mod.xla_runtime()
    if type(x) is Array and dtypes.is_string_dtype(x.dtype):
        return _string_array(x._value, x.aval, device or x._device)
    if type(x) is Array:
        reuse = semantics is transfers.ArrayCopySemantics.REUSE_INPUT
        if reuse and (device is None or (x.committed and x._device is device)):
            return x
        # Otherwise a new Array; without may_alias, one with a buffer of its own (that
        # donating x later leaves alive), as JAX's copy semantics say.
        committed = x.committed if device is None else True
        device = device or x._device
        buffer = None
        if xla is not None and device is not None:
            # an uncommitted array without a device is on the default one (as in JAX)
            held = (x._device or devices_mod.default_device(),) if x._sharding is None \
                else x._sharding._device_assignment
            if held != (device,):
                devices_mod.check_transfer("device_to_device", True, x.aval)
            buffer = x._buffer if reuse and x._device is device and x._buffer is not None \
                else xla.put(x._value, x.aval, device, copy=True)
        # on one device, the value's type names no mesh (as in JAX)
        return Array(x._npy, aval=sharding_mod.typed_aval(x.aval, None), device=device,
                     committed=committed, buffer=buffer)
    try:
        aval = get_aval(x)
    except TypeError:
        raise TypeError(f"device_put: {x!r:.100} of type {type(x)} is not a valid JAX "
                        "value (arrays, NumPy arrays and Python scalars are).") from None
    if dtypes.is_string_dtype(aval.dtype):
        return _string_array(x, aval, device)
    devices_mod.check_transfer("host_to_device", True, aval)
    target = devices_mod.default_device() if device is None else device
    if xla is not None:   # XLA copies (NumPy arrays can change later): one copy, not two
        buffer = xla.put(np.asarray(x, dtype=aval.dtype), aval, target, copy=True)
        return Array(None, aval=aval, device=target, committed=device is not None,
                     buffer=buffer)
    value = np.array(x, dtype=aval.dtype, copy=True)
    return Array(value, aval=aval, device=device, committed=device is not None)


def _put_sharded_leaf(x, sharding, semantics=transfers.ArrayCopySemantics.REUSE_INPUT):
    """x laid out over the devices of the NamedSharding `sharding` (in new buffers
    unless `semantics` lets an array already laid out so be reused)."""
    if isinstance(x, Tracer) or current_trace() is not Trace.root:
        # staged, constants too (as JAX's device_put under a trace); retypes x (no
        # assert, as with_sharding_constraint)
        return sharding_constraint.constrain(x, sharding)
    if type(x) is Array and x._sharding is not None and x.committed and \
            semantics is transfers.ArrayCopySemantics.REUSE_INPUT and \
            sharding_mod.same_layout(x._sharding, sharding, x.ndim):
        return x if x._sharding == sharding else _relabel(x, sharding)
    try:
        aval = x.aval if type(x) is Array else get_aval(x)
    except TypeError:
        raise TypeError(f"device_put: {x!r:.100} of type {type(x)} is not a valid JAX "
                        "value (arrays, NumPy arrays and Python scalars are).") from None
    sharding.shard_shape(aval.shape)   # an indivisible shape raises here
    if dtypes.is_string_dtype(aval.dtype):
        return _string_array(x._value if type(x) is Array else x, aval, sharding)
    if sharding.spec.unreduced and type(x) is Array and x._sharding is not None:
        # partial sums of x as it is laid out (each device keeps its block), as JAX's
        # reshard computation gives them
        return dispatch.run_sharded(_identity_jaxpr(aval), [x], out_shardings=(sharding,),
                                    where="device_put")[0]
    if not _reorders_devices(x, sharding):   # (JAX permutes those in a computation)
        devices_mod.check_transfer(
            "device_to_device" if type(x) is Array else "host_to_device", True, aval)
    value = x._value if type(x) is Array else np.asarray(x, dtype=aval.dtype)
    return sharded_array(value, aval, sharding)


def _string_array(value, aval, target):
    """An array of strings placed on `target` (a CPU device or a sharding over CPU
    devices, as JAX requires): XLA has no string type, so it holds its (copied) host
    value only; the sharding is recorded."""
    devices = getattr(target, "_device_assignment", None) or ([target] if target else [])
    if not devices or devices[0].platform != "cpu":
        raise TypeError("String arrays can only be sharded to CPU devices. Received "
                        f"unsupported device or sharding: {target}")
    value = np.array(value, dtype=aval.dtype, copy=True)
    if isinstance(target, sharding_mod.NamedSharding):
        return Array(value, aval=aval, committed=True, sharding=target)
    return Array(value, aval=aval, device=devices[0], committed=True)


def _reorders_devices(x, sharding) -> bool:
    """Whether x is an array laid out over the devices of `sharding` (several) in
    another order: JAX's efficient reshard, a computation over those devices that no
    transfer guard sees."""
    held = x._sharding if type(x) is Array else None
    return held is not None and sharding.num_devices > 1 and \
        held._device_assignment != sharding._device_assignment and \
        held.device_set == sharding.device_set


def _identity_jaxpr(aval):
    var = Var(aval)
    return ClosedJaxpr(Jaxpr((), [var], [var], []), ())


def _relabel(x, sharding):
    """x under another name for the same layout (e.g. P('x') for P('x', None))."""
    return Array(x._npy, aval=x.aval, committed=True, sharding=sharding,
                 global_buffer=x._global_buffer)


def _put_formatted(leaf, fmt):
    """A leaf placed as the Format `fmt` says: on its sharding, laid out in memory as its
    layout says (a layout other than the default takes a program that copies it so)."""
    layout, target = fmt.layout, fmt.sharding
    if layout is None and target is None:
        return _put_leaf(leaf, None)
    aval = get_aval(leaf)
    if not isinstance(target, sharding_mod.Sharding) or \
            not isinstance(layout, (layout_mod.Layout, type(None))):
        raise ValueError("sharding and layout in `Layout` instance should be concrete. Got "
                         f"layout: {fmt} for input {dispatch.jax_type_str(aval)}")
    if layout is None:
        return _put_one(leaf, target)
    layout.check_compatible_aval(aval.shape)
    if type(leaf) is Array and leaf.committed and leaf.format == fmt:
        return leaf
    if layout_mod.same_layout(layout, layout_mod.default_layout(len(aval.shape))) and not (
            type(leaf) is Array and leaf._sharding is not None
            and not layout_mod.is_default(leaf.format.layout, leaf.ndim)):
        return _put_one(leaf, target)
    x = leaf if type(leaf) is Array else dispatch.host_to_array(leaf, aval)
    [out] = dispatch.run_sharded(_identity_jaxpr(aval), [x], (False,), (None,), (fmt,),
                                 where="device_put")
    return out


def _put_one(leaf, target):
    if not (target is None or hasattr(target, "platform") or isinstance(
            target, (sharding_mod.Sharding, sharding_mod.PartitionSpec, layout_mod.Format,
                     MemorySpace))):
        raise ValueError("`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, "
                         "`jax.Device`, `Format`, `jax.memory.Space` or a pytree of these "
                         f"values. Received invalid value: {target}")   # (JAX's words)
    if isinstance(target, layout_mod.Format):
        return _put_formatted(leaf, target)
    if isinstance(target, sharding_mod.PartitionSpec):
        target = sharding_mod.canonical_sharding(target, "device_put")
    if isinstance(target, sharding_mod.NamedSharding):
        return _put_sharded_leaf(leaf, target)
    return _put_leaf(leaf, _as_device(target))


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Places every array of the pytree x on `device` (a Device or a Sharding, or a
    pytree prefix of x of them), committing them there. Without a device, arrays stay
    where they are and other values go uncommitted to the default device."""
    if isinstance(device, sharding_mod.PartitionSpec):
        device = sharding_mod.canonical_sharding(device, "device_put")
    if isinstance(device, MemorySpace):
        if device is not MemorySpace.Device:
            raise NotImplementedError(
                f"device_put to {device!r}: pyjax keeps every array in device memory "
                "(no host memory kinds such as pinned_host); use MemorySpace.Device or "
                "jax.device_get for a host copy.")
        device = None    # device memory of the device each array is on
    if isinstance(device, layout_mod.Format):
        return tree_util.tree_map(lambda leaf: _put_formatted(leaf, device), x)
    if device is None or hasattr(device, "platform") or isinstance(
            device, sharding_mod.Sharding):
        leaves, treedef = tree_util.tree_flatten(x)
        semantics = _copy_semantics(donate, may_alias, treedef)
        if isinstance(device, sharding_mod.NamedSharding):
            return tree_util.tree_unflatten(treedef, [
                _put_sharded_leaf(leaf, device, how) for leaf, how in zip(leaves, semantics)])
        if device is not None and sharding_mod.in_eager_shard_map():
            # (under jit, placements inside a program are left to it, as in JAX)
            raise ValueError("device_put with explicit device not allowed within "
                             f"shard_map-decorated functions, but got device {device}")
        device = _as_device(device)
        return tree_util.tree_unflatten(treedef, [_put_leaf(leaf, device, src, how)
                                                  for leaf, how in zip(leaves, semantics)])
    leaves, treedef = tree_util.tree_flatten(x)
    targets = tree_util.prefix_broadcast(device, treedef, "device_put device")
    return tree_util.tree_unflatten(treedef, [_put_one(leaf, target)
                                              for leaf, target in zip(leaves, targets)])


def _copy_semantics(donate, may_alias, treedef):
    """Per leaf of `treedef`, what device_put may do with its buffer: from `donate` and
    `may_alias` (each a bool, or a pytree prefix of bools), as JAX decides."""
    donate = tree_util.prefix_broadcast(donate, treedef, "device_put donate") \
        if not isinstance(donate, bool) else [donate] * treedef.num_leaves
    may_alias = tree_util.prefix_broadcast(may_alias, treedef, "device_put may_alias") \
        if not isinstance(may_alias, bool) else [may_alias] * treedef.num_leaves
    if any(d and m for d, m in zip(donate, may_alias)):
        raise ValueError("may_alias and donate cannot be True at the same time.")
    return [transfers.copy_semantics(d, m) for d, m in zip(donate, may_alias)]


def device_get(x):
    """The pytree x with every array replaced by a NumPy value on the host. Tracers pass
    through unchanged, as in JAX: under a transformation there is no host value yet
    (chex's without_device variant calls this on the arguments of traced code)."""
    def get(leaf):
        if type(leaf) is Array:
            devices_mod.check_transfer("device_to_host", True, leaf.aval)
            return leaf._value
        return leaf
    return tree_util.tree_map(get, x)


def block_until_ready(x):
    """Waits until every array in the pytree x is computed; returns x."""
    if type(x) is Array:   # the common case (a step's result): no pytree walk
        return x.block_until_ready()
    for leaf in tree_util.tree_leaves(x):
        wait = getattr(leaf, "block_until_ready", None)
        if wait is not None:
            wait()
    return x


# --- arrays assembled from per-device blocks ------------------------------------------------

def _assemble(shape, sharding, blocks, dtype, what):
    """An Array of `shape` laid out as `sharding` from per-device host or device blocks
    (one per device of this process, in sharding._device_assignment's order)."""
    shape = tuple(int(d) for d in shape)
    keys = _extended_dtype(blocks)
    if keys is not None:   # key arrays: assembled from their data (trailing dims whole)
        data = [keys.to_physical(block) for block in blocks]
        extra = tuple(np.shape(data[0])[len(np.shape(blocks[0])):])
        return keys.from_physical(_assemble(shape + extra, sharding, data, None, what))
    expected = sharding.shard_shape(shape)
    for device, block in zip(sharding._addressable_assignment, blocks):
        if tuple(np.shape(block)) != expected:
            dtype_name = np.dtype(dtype or np.asarray(block).dtype).name
            raise ValueError(f"Expected shard shape {expected} doesn't match the single "
                             f"device array shape {tuple(np.shape(block))} (the block "
                             f"for {device}, from {what}). Shape of Array is "
                             f"{dtype_name}[{','.join(map(str, shape))}] with sharding "
                             f"{sharding}")
    first = blocks[0]
    aval = get_aval(first).update(shape=shape, weak_type=False) if dtype is None else \
        get_aval(np.zeros((), dtype)).update(shape=shape, weak_type=False)
    if isinstance(sharding, sharding_mod.SingleDeviceSharding):
        return _put_leaf(first if dtype is None else np.asarray(first, dtype),
                         sharding.device)
    xla = devices_mod.xla_runtime()
    shard_aval = aval.update(shape=expected)
    if xla is None:
        value = np.empty(shape, aval.dtype)
        for block, index in zip(blocks, sharding._indices(shape)):
            value[index] = np.asarray(block)
        return Array(value, aval=aval, committed=True, sharding=sharding)
    buffers = []
    for device, block in zip(sharding._addressable_assignment, blocks):
        if type(block) is Array:
            buffers.append(block.buffer_on(device) if block.dtype == aval.dtype
                           else xla.put(np.asarray(block, aval.dtype), shard_aval, device))
        else:
            buffers.append(xla.put(np.asarray(block, aval.dtype), shard_aval, device,
                                   copy=True))
    return Array(None, aval=aval, committed=True, sharding=sharding,
                 global_buffer=xla.assemble(aval, sharding, buffers))


def _extended_dtype(arrays):
    """The extended dtype (key<fry>) of a list of key arrays, else None."""
    dtype = getattr(arrays[0], "dtype", None) if arrays else None
    return dtype if isinstance(dtype, dtypes.ExtendedDType) else None


def _as_sharding(sharding, what):
    """A Sharding from a Sharding, a Device, or a PartitionSpec on the current mesh."""
    if hasattr(sharding, "platform"):
        return sharding_mod.SingleDeviceSharding(sharding)
    if isinstance(sharding, sharding_mod.PartitionSpec):
        return sharding_mod.canonical_sharding(sharding, what)
    if not isinstance(sharding, sharding_mod.Sharding):
        raise TypeError(f"{what} expects a jax.sharding.Sharding, got {sharding!r}.")
    return sharding


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An Array of `shape` laid out as `sharding`, each device's block being
    data_callback(index) (index: a tuple of slices into the global array). A Format
    for `sharding` also lays the Array out in memory as its layout says."""
    fmt = None
    if isinstance(sharding, layout_mod.Format):
        if isinstance(sharding.layout, layout_mod.AutoLayout):
            raise TypeError("`Layout.AUTO` cannot be used in place of a device-local layout "
                            f"when calling `jax.make_array_from_callback`. Got {sharding}")
        if not isinstance(sharding.sharding, sharding_mod.Sharding):
            raise TypeError("sharding should be an instance of `jax.sharding`. Got "
                            f"{sharding.sharding} of type {type(sharding.sharding)}")
        fmt, sharding = sharding, sharding.sharding
    sharding = _as_sharding(sharding, "make_array_from_callback")
    indices = sharding.devices_indices_map(tuple(shape))
    blocks = [data_callback(indices[d]) for d in sharding._addressable_assignment]
    if any(isinstance(b, Tracer) for b in blocks):
        raise errors.UnexpectedTracerError(
            "jax.make_array_from_callback cannot be called within a traced context: its "
            "callback returned a traced value. Call it outside jit and other "
            "transformations, or use jax.lax.with_sharding_constraint inside them.")
    out = _assemble(shape, sharding, blocks, dtype, "make_array_from_callback")
    return out if fmt is None or fmt.layout is None else _put_formatted(out, fmt)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """An Array of `shape` laid out as `sharding` from one single-device Array per device
    (each holding that device's block)."""
    sharding = _as_sharding(sharding, "make_array_from_single_device_arrays")
    if not isinstance(arrays, (list, tuple)):
        raise TypeError("jax.make_array_from_single_device_arrays `arrays` argument must "
                        f"be a list or tuple, but got {type(arrays)}.")
    if not arrays and dtype is None:
        raise ValueError("If the Array has no addressable shards, `dtype` must be provided "
                         "via the `dtype` argument to "
                         "`jax.make_array_from_single_device_arrays`.")
    if dtype is not None and arrays and any(np.dtype(dtype) != a.dtype for a in arrays):
        raise ValueError("If `dtype` is provided to `jax.make_array_from_single_device_"
                         "arrays`, it must match the dtype of the addressable shards. Got "
                         f"dtype={np.dtype(dtype)} and shards of dtype {arrays[0].dtype}.")
    arrays = list(arrays)
    keys = _extended_dtype(arrays)
    if keys is not None:   # key arrays: made from their data (trailing dims whole)
        data = [keys.to_physical(a) for a in arrays]
        extra = tuple(np.shape(data[0])[len(np.shape(arrays[0])):])
        return keys.from_physical(make_array_from_single_device_arrays(
            tuple(shape) + extra, sharding, data))
    traced = {type(a) for a in arrays if isinstance(a, Tracer)}
    if traced:
        raise ValueError("jax.make_array_from_single_device_arrays requires a list of "
                         f"concrete arrays as input, but got types {traced}. Call it "
                         "outside jit and other transformations.")
    by_device = {}
    for a in arrays:
        if type(a) is not Array:
            raise TypeError(f"Unsupported type for elements in `arrays`: {type(a)}. Pass "
                            "single-device jax.Arrays (e.g. jax.device_put(x, device)).")
        if a._sharding is not None and a._sharding.num_devices > 1:
            raise ValueError("When making an array from single-device arrays the input "
                             "arrays must have one shard each. An argument array had "
                             f"{a._sharding.num_devices} shard(s). Pass its blocks "
                             "(x.addressable_data(i)) instead.")
        by_device[a.device if a._sharding is None else a._sharding._device_assignment[0]] = a
    devices = sharding._addressable_assignment
    missing = [d for d in devices if d not in by_device]
    if missing or len(arrays) != len(devices):
        raise ValueError(f"make_array_from_single_device_arrays: {sharding} lays the array "
                         f"out over {len(devices)} devices, but {len(arrays)} arrays were "
                         f"given (devices without one: {missing}). Pass one array per "
                         "device, committed to it (e.g. x.addressable_data(i)).")
    return _assemble(shape, sharding, [by_device[d] for d in devices], dtype,
                     "make_array_from_single_device_arrays")


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """Arrays laid out as `sharding` from the data this process holds: for each leaf of
    the pytree `local_data`, the part of the global array covering this process's
    devices' blocks (all of it with one process). `sharding` and `global_shape` (a shape,
    None, or a pytree of them) are prefixes of `local_data`'s tree."""
    leaves, treedef = tree_util.tree_flatten(local_data)
    shardings = treedef.flatten_up_to(tree_util.tree_broadcast(sharding, local_data))
    shapes = treedef.flatten_up_to(tree_util.tree_broadcast(
        global_shape, local_data, is_leaf=lambda x: x is None or isinstance(x, tuple)))
    return treedef.unflatten([_from_process_local_data(s, data, shape)
                              for s, data, shape in zip(shardings, leaves, shapes)])


def _from_process_local_data(sharding, local_data, global_shape):
    sharding = _as_sharding(sharding, "make_array_from_process_local_data")
    local_shape = tuple(np.shape(local_data))
    if devices_mod.process_count() == 1:
        if global_shape is not None and tuple(global_shape) != local_shape:
            raise ValueError(f"make_array_from_process_local_data: this process holds "
                             f"data of shape {local_shape}, but global_shape is "
                             f"{tuple(global_shape)}; with one process they must be "
                             "equal.")
        return device_put(local_data, sharding)
    ndim = len(local_shape)
    positions = sharding._block_positions(ndim)
    mine = [b for d, (b, _) in zip(sharding._device_assignment, positions)
            if d in set(sharding._addressable_assignment)]
    pieces = [1 + max(b[k] for b, _ in positions) for k in range(ndim)]
    first = [min(b[k] for b in mine) for k in range(ndim)]
    held = [1 + max(b[k] for b in mine) - first[k] for k in range(ndim)]
    if any(size % h for size, h in zip(local_shape, held)):
        raise ValueError(f"make_array_from_process_local_data: local data of shape "
                         f"{local_shape} does not split into this process's {held} blocks.")
    block = [size // h for size, h in zip(local_shape, held)]
    shape = tuple(b * p for b, p in zip(block, pieces)) if global_shape is None \
        else tuple(global_shape)
    local_data = np.asarray(local_data)
    offset = [f * b for f, b in zip(first, block)]

    def local_block(index):
        return local_data[tuple(slice(i.start - o, i.stop - o) if i.start is not None
                                else slice(None) for i, o in zip(index, offset))]
    return make_array_from_callback(shape, sharding, local_block)
