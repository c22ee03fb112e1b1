"""jax.experimental.mesh_utils: device arrays shaped for Mesh, as JAX 0.10.2 builds them
for devices without a physical topology (flax's tests import it)."""
import dataclasses

import numpy as np
import pytest

import pyjax as jax
from pyjax.experimental import mesh_utils


@dataclasses.dataclass(frozen=True)
class FakeDevice:
    id: int
    process_index: int = 0
    platform: str = "cpu"
    device_kind: str = "cpu"


def test_create_device_mesh_reshapes_devices_in_order():
    mesh = mesh_utils.create_device_mesh((1, 1))
    assert mesh.shape == (1, 1) and mesh[0, 0] == jax.devices()[0]
    assert jax.sharding.Mesh(mesh, ("a", "b")).shape == {"a": 1, "b": 1}
    cpus = [FakeDevice(i) for i in (3, 0, 2, 1, 5, 4)]
    assert [d.id for d in mesh_utils.create_device_mesh((2, 3), cpus).ravel()] == [
        3, 0, 2, 1, 5, 4]
    gpus = [FakeDevice(i, platform="gpu", device_kind="H100") for i in (3, 0, 2, 1)]
    assert [[d.id for d in row] for row in mesh_utils.create_device_mesh([2, 2], gpus)] \
        == [[0, 1], [2, 3]]


def test_device_kind_handlers_choose_the_layout():
    devices = [FakeDevice(i, device_kind="custom") for i in range(4)]
    mesh_utils.device_kind_handler_dict["custom"] = \
        lambda shape, devs, contiguous_submeshes: np.asarray(devs[::-1]).reshape(shape)
    try:
        assert [d.id for d in mesh_utils.create_device_mesh((4,), devices)] == [3, 2, 1, 0]
    finally:
        del mesh_utils.device_kind_handler_dict["custom"]


def test_create_hybrid_device_mesh_lays_out_one_block_per_process():
    devices = [FakeDevice(i, process_index=i // 4) for i in range(8)]
    mesh = mesh_utils.create_hybrid_device_mesh((2, 2), (1, 2), devices,
                                                process_is_granule=True)
    assert [[d.id for d in row] for row in mesh] == [[0, 1, 4, 5], [2, 3, 6, 7]]


def test_bad_mesh_shapes_raise_jax_errors():
    with pytest.raises(ValueError, match=r"Number of devices 1 must equal the product of "
                       r"mesh_shape \(3, 2\)"):
        mesh_utils.create_device_mesh((3, 2))
    with pytest.raises(ValueError, match=r"should be a sequence of ints. Got \('a', 2\)"):
        mesh_utils.create_device_mesh(("a", 2))
    with pytest.raises(ValueError, match=r"Number of slices 1 must equal the product of "
                       r"dcn_mesh_shape \(2, 1\)"):
        mesh_utils.create_hybrid_device_mesh((1, 1), (2, 1), process_is_granule=True)
    with pytest.raises(ValueError, match="does not have attribute slice_index"):
        mesh_utils.create_hybrid_device_mesh((1, 1), (1, 1))
