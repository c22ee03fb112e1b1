"""Where results of lax.full/full_like and of ops on committed arrays land, on 8 CPU
devices: lax.full(sharding=) lays the array out so, full_like follows a committed
argument (as JAX 0.10.2: same shape or a replicated argument), and arguments committed
to two devices raise JAX's error. Expected shardings are JAX's for the same programs.
The checks run in one subprocess with eight devices; each is reported as its own test."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
from pyjax import lax
from pyjax.sharding import Mesh, NamedSharding, PartitionSpec as P

from harness import checks_in_process, close

N = 8


def _on(device_id):
    return f"SingleDeviceSharding(device=CpuDevice(id={device_id}), memory_kind=device)"


def check_full_like_follows_a_committed_argument():
    devices = jax.devices()
    x = jax.device_put(np.ones((3, 3), np.float32), devices[1])
    assert repr(lax.full_like(x, 2).sharding) == _on(1)
    assert repr(lax.full_like(x, 2, shape=(2,)).sharding) == _on(1)   # replicated x
    close(lax.full_like(x, 2), np.full((3, 3), 2, np.float32))
    assert repr(lax.full_like(jax.numpy.ones(4), 2).sharding) == _on(0)   # uncommitted
    sharded = jax.device_put(np.arange(8.0), NamedSharding(Mesh(np.array(devices), ("i",)),
                                                           P("i")))
    assert repr(lax.full_like(sharded, 5).sharding) == repr(sharded.sharding)
    assert repr(lax.full_like(sharded, 5, shape=(4,)).sharding) == _on(0)


def check_full_with_a_sharding():
    sharding = NamedSharding(Mesh(np.array(jax.devices()), ("i",)), P("i"))
    z = lax.full((8, 2), 3.0, sharding=sharding)
    assert repr(z.sharding) == ("NamedSharding(mesh=Mesh('i': 8, axis_types=(Auto,)), "
                                "spec=P('i',), memory_kind=device)")
    close(z, np.full((8, 2), 3.0, np.float32))
    y = lax.full_like(lax.iota("float32", 8), 1, sharding=sharding)
    assert repr(y.sharding) == repr(sharding)
    close(jax.jit(lambda: lax.full((2,), 1.0, sharding=sharding))(), np.ones(2))


def check_arguments_on_two_devices_raise_jaxs_error():
    devices = jax.devices()
    x = jax.device_put(np.ones(2, np.float32), devices[2])
    y = jax.device_put(np.ones(2, np.float32), devices[3])
    with pytest.raises(ValueError, match=(
            r"Received incompatible devices for jitted computation. Got argument 0 of add "
            r"with shape float32\[2\] and with device ids \[2\] on platform CPU and "
            r"argument 1 of add with shape float32\[2\] and with device ids \[3\] on "
            "platform CPU")):
        x + y


CHECKS = [name for name in dict(globals()) if name.startswith("check_")]


@pytest.fixture(scope="module")
def eight_device_results():
    return checks_in_process("test_placement_follows_data", N)


@pytest.mark.parametrize("name", CHECKS)
def test_on_eight_devices(eight_device_results, name):
    result = eight_device_results[name]
    assert result == "ok", result
