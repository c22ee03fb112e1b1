"""The process and its resources: hosts (host_count, host_id, host_ids, process_indices),
print_environment_info, live_arrays, clear_caches, and single-device array assembly
(copy_to_host_async).
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
from pyjax._src.backends import dispatch, eager


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
    for cache in list(api_jit.live_caches):
        cache.clear()
    for wrapped in list(api_pmap.live_wrappers):
        wrapped._cache.clear()
    clear_weak_caches()   # jaxpr transformation caches, pmap's executables
    dispatch.clear_caches()
    eager.abstract_eval_cache.clear()


def copy_to_host_async(x):
    """Calls the `copy_to_host_async` method of every leaf of the pytree x that has one,
    as JAX does (an Array's starts copying it to the host; here the copy completes
    before returning); other leaves are left alone. Returns x."""
    for leaf in tree_util.tree_leaves(x):
        try:
            copy = leaf.copy_to_host_async
        except AttributeError:   # a leaf without the method
            continue
        copy()   # (an AttributeError the method raises is the caller's to see)
    return x


__all__ = ["host_count", "host_id", "host_ids", "process_indices", "print_environment_info",
           "live_arrays", "clear_caches", "copy_to_host_async"]
