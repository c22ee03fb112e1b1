"""Devices and data placement: devices(), device_count(), default_backend(),
default_device(...), device_put, device_get and block_until_ready. Arrays are uncommitted
on the default device unless device_put(x, device) commits them. Imports backends,
array, core and tree_util."""
from __future__ import annotations

import numpy as np

from pyjax._src import tree_util
from pyjax._src.array import Array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Tracer


def devices(backend=None):
    """The devices of the default backend (or of `backend`: 'cpu', 'gpu', ...)."""
    return list(devices_mod.devices(backend))


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices this process drives (all of them: pyjax runs in one process)."""
    index = host_id if process_index is None else process_index
    if index not in (None, 0):
        raise ValueError(f"Unknown process_index {index}: pyjax runs in one process "
                         "(process_index 0).")
    return devices(backend)


def device_count(backend=None):
    return len(devices_mod.devices(backend))


def local_device_count(backend=None):
    """Equal to device_count(): pyjax runs in one process."""
    return device_count(backend)


def process_index(backend=None):
    return 0


def process_count(backend=None):
    return 1


def default_backend():
    """'cpu', 'gpu' or 'tpu': the platform of devices()[0]."""
    return devices_mod.default_backend()


def default_device(device):
    """Context manager: uncommitted arrays and computations go to `device` inside it."""
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


def _put_leaf(x, device):
    if isinstance(x, Tracer):
        return x
    xla = devices_mod.xla_backend()
    if type(x) is Array:
        if device is None or (x.committed and x._device is device):
            return x
        out = Array(x._npy, aval=x.aval, device=device, committed=True)
        if xla is not None:
            if x._device is not None and x._device is not device:
                devices_mod.check_transfer("device_to_device", True, x.aval)
            out._buffer = x._buffer if x._device is device and x._buffer is not None \
                else xla.put(x._value, x.aval, device)
        return out
    try:
        aval = get_aval(x)
    except TypeError:
        raise TypeError(f"device_put: {x!r:.100} of type {type(x)} is not a valid JAX "
                        "value (arrays, NumPy arrays and Python scalars are).") from None
    devices_mod.check_transfer("host_to_device", True, aval)
    target = devices_mod.default_device() if device is None else device
    if xla is not None:   # XLA copies (NumPy arrays can change later): one copy, not two
        buffer = xla.put(np.asarray(x, dtype=aval.dtype), aval, target, copy=True)
        return Array(None, aval=aval, device=target, committed=device is not None,
                     buffer=buffer)
    value = np.array(x, dtype=aval.dtype, copy=True)
    return Array(value, aval=aval, device=device, committed=device is not None)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Places every array of the pytree x on `device`, committing them to it. Without a
    device, arrays stay where they are and other values go uncommitted to the default
    device."""
    device = _as_device(device)
    return tree_util.tree_map(lambda leaf: _put_leaf(leaf, device), x)


def device_get(x):
    """The pytree x with every array replaced by a NumPy value on the host."""
    def get(leaf):
        if type(leaf) is Array:
            devices_mod.check_transfer("device_to_host", True, leaf.aval)
            return leaf._value
        if isinstance(leaf, Tracer):
            return np.asarray(leaf)     # raises the tracer conversion error
        return leaf
    return tree_util.tree_map(get, x)


def block_until_ready(x):
    """Waits until every array in the pytree x is computed; returns x."""
    for leaf in tree_util.tree_leaves(x):
        wait = getattr(leaf, "block_until_ready", None)
        if wait is not None:
            wait()
    return x
