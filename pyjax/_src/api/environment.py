"""The process and its resources: hosts (host_count, host_id, host_ids, process_indices),
print_environment_info, live_arrays, clear_caches, and single-device array assembly
(make_array_from_callback, make_array_from_single_device_arrays, copy_to_host_async).
pyjax runs as one process. Imports api siblings, backends, array and tree_util."""
from __future__ import annotations

import gc
import sys

import numpy as np

from pyjax._src import tree_util
from pyjax._src.util import clear_weak_caches
from pyjax._src.version import __version__
from pyjax._src.api import devices as api_devices
from pyjax._src.api import jit as api_jit
from pyjax._src.api import pmap as api_pmap
from pyjax._src.array import Array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch, numpy_backend


# --- processes and hosts --------------------------------------------------------------------

def host_count(backend=None):
    """The number of processes (hosts): 1, as pyjax runs in one process."""
    return api_devices.process_count(backend)


def host_id(backend=None):
    """This process's index: 0."""
    return api_devices.process_index(backend)


def host_ids(backend=None):
    """The indices of all processes: [0]."""
    return list(range(api_devices.process_count(backend)))


def process_indices(backend=None):
    """The indices of all processes: [0]."""
    return list(range(api_devices.process_count(backend)))


def _version(package):
    import importlib.metadata  # only here: importing it costs ~25 ms
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def print_environment_info(return_string=False):
    """Prints (or returns) the versions of pyjax, jaxlib, numpy and Python, and the
    devices in use; the first thing to include in a bug report."""
    import platform

    found = api_devices.devices()
    lines = [f"pyjax:    {__version__}",
             f"jaxlib:   {_version('jaxlib')}",
             f"numpy:    {np.__version__}",
             f"python:   {sys.version.replace(chr(10), ' ')}",
             f"executor: {devices_mod.backend_name()}",
             f"device info: {found[0].device_kind}-{len(found)}, {len(found)} local devices",
             f"process_count: {api_devices.process_count()}",
             f"platform: {platform.uname()}"]
    text = "\n".join(lines) + "\n"
    if return_string:
        return text
    print(text, end="")
    return None


# --- arrays ---------------------------------------------------------------------------------

def live_arrays(platform=None):
    """Every Array alive in this process that has not been deleted (on devices of
    `platform` when given)."""
    found = [x for x in gc.get_objects() if type(x) is Array and not x.is_deleted()]
    if platform is not None:
        found = [x for x in found if x.device.platform == platform]
    return found


def clear_caches():
    """Drops every cached trace and compiled computation: jit and pmap trace caches, the
    executables, and the jaxpr transformation caches. Later calls trace and compile again."""
    for wrapped in list(api_jit.live_wrappers):
        wrapped.clear_cache()
    for wrapped in list(api_pmap.live_wrappers):
        wrapped._cache.clear()
    clear_weak_caches()   # jaxpr transformation caches, pmap's executables
    dispatch._executables.clear()
    dispatch._single_primitive_jaxprs.clear()
    numpy_backend._abstract_eval_cache.clear()
    xla = devices_mod._xla_state["module"]   # only if XLA was ever started
    if xla is not None:
        xla._memory_cache.clear()


def _single_device(sharding, api):
    found = getattr(sharding, "device_set", None)
    if found is None and hasattr(sharding, "platform"):   # a Device stands for itself
        return sharding
    if found is None or len(found) != 1:
        raise ValueError(f"{api}: pyjax places arrays on one device; expected a "
                         f"single-device sharding such as `x.sharding` or a Device, got "
                         f"{sharding!r}.")
    device = next(iter(found))
    if device not in api_devices.devices():
        raise ValueError(f"{api}: the sharding's device {device!r} is not one of "
                         f"jax.devices() = {api_devices.devices()}.")
    return device


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """The array of `shape` on the sharding's one device whose data is
    data_callback(index), with index the tuple of slices that covers the whole array."""
    shape = tuple(int(d) for d in shape)
    device = _single_device(sharding, "make_array_from_callback")
    data = data_callback(tuple(slice(None) for _ in shape))
    value = np.asarray(data, dtype=dtype)
    if value.shape != shape:
        raise ValueError(f"make_array_from_callback: the callback returned shape "
                         f"{value.shape} for the index covering the whole array, expected "
                         f"{shape}.")
    return api_devices.device_put(data if dtype is None else value, device)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """The global array assembled from its per-device pieces: with one device, `arrays`
    holds exactly one array of `shape`, which is placed on that device."""
    shape = tuple(int(d) for d in shape)
    device = _single_device(sharding, "make_array_from_single_device_arrays")
    arrays = list(arrays)
    if len(arrays) != 1:
        raise ValueError(f"make_array_from_single_device_arrays: a single-device sharding "
                         f"takes exactly one array, got {len(arrays)}.")
    piece = arrays[0]
    if tuple(np.shape(piece)) != shape:
        raise ValueError(f"make_array_from_single_device_arrays: the array has shape "
                         f"{tuple(np.shape(piece))}, expected {shape}.")
    if dtype is not None and np.dtype(dtype) != np.asarray(piece).dtype:
        raise ValueError(f"make_array_from_single_device_arrays: the array has dtype "
                         f"{np.asarray(piece).dtype}, expected {np.dtype(dtype)}.")
    return api_devices.device_put(piece, device)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """The global array from this process's data: with one process and one device, the
    local data is the whole array, placed on the sharding's device."""
    device = _single_device(sharding, "make_array_from_process_local_data")
    shape = tuple(np.shape(local_data))
    if global_shape is not None and tuple(global_shape) != shape:
        raise ValueError(f"make_array_from_process_local_data: with one process the local "
                         f"data is the whole array, so global_shape {tuple(global_shape)} "
                         f"must equal its shape {shape}.")
    return api_devices.device_put(local_data, device)


def copy_to_host_async(x):
    """Starts copying every Array of the pytree x to the host (here the copy completes
    before returning); later reads of their values need no transfer. Returns x."""
    for leaf in tree_util.tree_leaves(x):
        if type(leaf) is Array:
            leaf.copy_to_host_async()
    return x


__all__ = ["host_count", "host_id", "host_ids", "process_indices", "print_environment_info",
           "live_arrays", "clear_caches", "make_array_from_callback",
           "make_array_from_process_local_data",
           "make_array_from_single_device_arrays", "copy_to_host_async"]
