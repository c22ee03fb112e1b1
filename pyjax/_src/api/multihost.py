"""jax.experimental.multihost_utils: moving small values between the processes that
jax.distributed joined, as jitted programs over every device (XLA's collectives between
processes do the moving). Imports sharding, backends and api."""
from __future__ import annotations

import numpy as np

from pyjax._src import tree_util
from pyjax._src.api import jit as jit_mod
from pyjax._src.api.devices import make_array_from_callback
from pyjax._src.array import Array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.lax import reductions
from pyjax._src.sharding import Mesh, NamedSharding, PartitionSpec


def _process_mesh():
    """A mesh of every device: one row per process ('processes'), its devices along
    'local'."""
    rows = [[d for d in devices_mod.devices() if d.process_index == p]
            for p in range(devices_mod.process_count())]
    if len({len(r) for r in rows}) != 1:
        raise ValueError(f"multihost_utils needs the same number of devices in every "
                         f"process, got {[len(r) for r in rows]}.")
    grid = np.empty((len(rows), len(rows[0])), dtype=object)
    for i, row in enumerate(rows):
        grid[i, :] = row
    return Mesh(grid, ("processes", "local"))


def _stacked(value):
    """A global array of shape (process_count, *value.shape) whose row p is process p's
    `value`."""
    mesh = _process_mesh()
    n = mesh.axis_sizes[0]
    return make_array_from_callback((n,) + value.shape,
                                    NamedSharding(mesh, PartitionSpec("processes")),
                                    lambda index: value[None]), mesh


def _host_value(x):
    if type(x) is Array and not x.is_fully_addressable:
        replicated = NamedSharding(x.sharding.mesh, PartitionSpec())
        return np.asarray(jit_mod.jit(lambda a: a, out_shardings=replicated)(x))
    return np.asarray(x)


def process_allgather(in_tree, tiled=False):
    """Every process's values of the pytree, stacked along a new axis 0 (concatenated
    along axis 0 when tiled), as NumPy arrays in every process. Global (sharded) arrays
    are gathered whole."""
    def gather(x):
        if type(x) is Array and not x.is_fully_addressable:
            return _host_value(x)
        value = np.asarray(x)
        if devices_mod.process_count() == 1:
            return value if tiled else value[None]
        stacked, mesh = _stacked(value)
        out = np.asarray(jit_mod.jit(lambda a: a, out_shardings=NamedSharding(
            mesh, PartitionSpec()))(stacked))
        return out.reshape((-1,) + value.shape[1:]) if tiled else out
    return tree_util.tree_map(gather, in_tree)


def broadcast_one_to_all(in_tree, is_source=None):
    """The source process's values of the pytree (process 0's unless is_source says),
    in every process."""
    if is_source is None:
        is_source = devices_mod.process_index() == 0

    def broadcast(x):
        value = np.asarray(x)
        if devices_mod.process_count() == 1:
            return value
        contribution = value if is_source else np.zeros_like(value)
        stacked, mesh = _stacked(contribution)
        total = jit_mod.jit(lambda a: reductions.reduce_sum(a, (0,)),
                            out_shardings=NamedSharding(mesh, PartitionSpec()))(
            stacked.astype(np.int32) if value.dtype == np.bool_ else stacked)
        return np.asarray(total).astype(value.dtype)
    return tree_util.tree_map(broadcast, in_tree)


def sync_global_devices(name, timeout_seconds=300):
    """Blocks until every process has called sync_global_devices(name)."""
    xla = devices_mod.xla_runtime()
    if xla is not None:
        xla.wait_at_barrier(f"sync_global_devices_{name}", timeout_seconds)
