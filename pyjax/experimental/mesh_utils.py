"""jax.experimental.mesh_utils: arrays of devices shaped for jax.sharding.Mesh. pyjax's
devices (CPU, GPU) have no physical torus to follow, so a mesh is the devices in order
(GPUs by id), reshaped, as JAX builds it for them."""
from __future__ import annotations

import collections
import math
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.api.devices import devices as _all_devices

# device_kind -> handler(mesh_shape, devices, contiguous_submeshes=...) returning the mesh,
# or None to fall back to the default layout (as in JAX, for device kinds with a topology)
device_kind_handler_dict: dict[str, Callable[..., np.ndarray | None]] = {}


def _axis_sizes(mesh_shape, where: str) -> tuple[int, ...]:
    try:
        return tuple(int(s) for s in mesh_shape)
    except (TypeError, ValueError):
        raise ValueError(f"`mesh_shape` passed to `{where}` should be a sequence of ints. "
                         f"Got {mesh_shape}") from None


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None, *,
                       contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False) -> np.ndarray:
    """An ndarray of `devices` (default jax.devices()) of shape `mesh_shape`."""
    if devices is None:
        devices = _all_devices()
    shape = _axis_sizes(mesh_shape, "create_device_mesh")
    if math.prod(shape) != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                         f"mesh_shape {shape}")
    handler = device_kind_handler_dict.get(devices[-1].device_kind)
    if handler is not None:
        mesh = handler(shape, devices, contiguous_submeshes=contiguous_submeshes)
        if mesh is not None:
            return mesh
    if devices[-1].platform == "gpu":
        devices = sorted(devices, key=lambda d: d.id)
    return np.asarray(devices).reshape(shape)


def create_hybrid_device_mesh(mesh_shape: Sequence[int], dcn_mesh_shape: Sequence[int],
                              devices: Sequence[Any] | None = None, *,
                              process_is_granule: bool = False,
                              should_sort_granules_by_key: bool = True,
                              allow_split_physical_axes: bool = False) -> np.ndarray:
    """A mesh of shape mesh_shape * dcn_mesh_shape: one create_device_mesh(mesh_shape)
    block per slice (or per process, with `process_is_granule`), the blocks laid out in
    the shape `dcn_mesh_shape`."""
    if devices is None:
        devices = _all_devices()
    attr = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devices[0], attr):
        raise ValueError(f"Device {devices[0]} does not have attribute {attr}. See "
                         "`process_is_granule` option.")
    by_granule = collections.defaultdict(list)
    for device in devices:
        by_granule[getattr(device, attr)].append(device)
    granules = ([by_granule[k] for k in sorted(by_granule)] if should_sort_granules_by_key
                else list(by_granule.values()))
    dcn_shape = _axis_sizes(dcn_mesh_shape, "create_hybrid_device_mesh")
    if math.prod(dcn_shape) != len(granules):
        raise ValueError(f"Number of slices {len(granules)} must equal the product of "
                         f"dcn_mesh_shape {dcn_mesh_shape}")
    blocks = [create_device_mesh(mesh_shape, g) for g in granules]
    layout = np.empty(len(blocks), dtype=object)
    layout[:] = blocks
    return np.block(layout.reshape(dcn_shape).tolist())
