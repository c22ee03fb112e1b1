"""jax.experimental.multihost_utils: moving small values between the processes that
jax.distributed joined, as jitted programs over every device (XLA's collectives between
processes do the moving). Imports sharding, backends and api."""
from __future__ import annotations

import numpy as np

from pyjax._src import tree_util
from pyjax._src.api import jit as jit_mod
from pyjax._src.api.devices import (device_put, make_array_from_callback,
                                    make_array_from_process_local_data)
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


def _per_leaf(inputs, pspecs, what):
    """(leaves, treedef, one PartitionSpec per leaf): pspecs is a prefix of inputs."""
    leaves, treedef = tree_util.tree_flatten(inputs)
    return leaves, treedef, tree_util.prefix_broadcast(pspecs, treedef, what)


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """The global arrays over `global_mesh` (split as `pspecs`, a prefix of the pytree)
    whose part on this process's devices is each local input. Arrays already spanning
    other processes are returned as they are."""
    leaves, treedef, specs = _per_leaf(local_inputs, pspecs, "host_local_array_to_global")
    return tree_util.tree_unflatten(treedef, [
        x if type(x) is Array and not x.is_fully_addressable else
        make_array_from_process_local_data(NamedSharding(global_mesh, spec), x)
        for x, spec in zip(leaves, specs)])


def _local_mesh(mesh):
    """The sub-mesh of this process's devices (the whole mesh with one process)."""
    grid = np.asarray(mesh.devices)
    mine = np.vectorize(lambda d: d.process_index == devices_mod.process_index())(grid)
    rows = [np.unique(axis) for axis in np.nonzero(mine)]
    return Mesh(grid[np.ix_(*rows)], mesh.axis_names, mesh.axis_types)


def _local_value(x):
    """This process's part of the global array x: the region its shards cover."""
    shards = x.addressable_shards
    starts = [min(s.index[k].indices(n)[0] for s in shards) for k, n in enumerate(x.shape)]
    stops = [max(s.index[k].indices(n)[1] for s in shards) for k, n in enumerate(x.shape)]
    out = np.empty([b - a for a, b in zip(starts, stops)], x.dtype)
    for s in shards:
        out[tuple(slice(i.indices(n)[0] - a, i.indices(n)[1] - a)
                  for i, n, a in zip(s.index, x.shape, starts))] = np.asarray(s.data)
    return out


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    """Each global array's part on this process's devices, as an array over those
    devices split as `pspecs` (a prefix of the pytree). With one process an array laid
    out so is returned as it is."""
    leaves, treedef, specs = _per_leaf(global_inputs, pspecs, "global_array_to_host_local")
    local_mesh = _local_mesh(global_mesh)
    outs = []
    for x, spec in zip(leaves, specs):
        sharding = NamedSharding(local_mesh, spec)
        if type(x) is Array and x.is_fully_addressable:
            outs.append(x if x.sharding == sharding else device_put(x, sharding))
        else:
            outs.append(device_put(_local_value(x), sharding))
    return tree_util.tree_unflatten(treedef, outs)
