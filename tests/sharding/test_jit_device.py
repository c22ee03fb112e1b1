"""jit(device=d) with sharded arguments and sharding constraints on 8 CPU devices: as
JAX 0.10.2, the computation runs on d (sharded arguments move there) and a constraint
over other devices inside is an error; so is jnp.array(x, device=) of an array committed
to other devices."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P

from harness import checks_on_devices


def _jit_on(device, fun, **kwargs):
    with warnings.catch_warnings():   # jit's `device` is deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        return jax.jit(fun, device=device, **kwargs)


def check_sharded_arguments_move_to_the_jit_device():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,),
                         devices=jax.devices()[:2])
    x = jax.device_put(jnp.arange(4), NamedSharding(mesh, P("x")))
    out = _jit_on(jax.devices()[1], lambda v: v * 2)(x)
    assert out.devices() == {jax.devices()[1]}
    np.testing.assert_array_equal(out, [0, 2, 4, 6])


def check_constraint_over_other_devices_is_refused():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2,
                         devices=jax.devices()[:4])
    f = _jit_on(jax.devices()[0], lambda shape: jax.lax.with_sharding_constraint(
        jnp.zeros(shape), NamedSharding(mesh, P("x", "y"))), static_argnums=0)
    with pytest.raises(ValueError, match=r"Received incompatible devices for jitted "
                       r"computation. Got explicit output sharding with device ids \[0\] "
                       r"on platform CPU and sharding_constraint inside jit with device "
                       r"ids \[0, 1, 2, 3\]"):
        f((16, 8))


def check_jnp_array_of_a_committed_array_keeps_its_devices():
    # JAX 0.10.2: converting onto other devices is a jitted computation's device error
    d0, d1 = jax.devices()[:2]
    x = jax.device_put(np.arange(8), d0)
    for convert in (jnp.array, jnp.asarray):
        with pytest.raises(ValueError, match=r"Received incompatible devices for jitted "
                           r"computation. Got argument args\[0\] of convert_element_type "
                           r"with shape int32\[8\] and with device ids \[0\]"):
            convert(x, device=d1)
        assert convert(x, device=d0).devices() == {d0}
    assert jnp.array(np.arange(8), device=d1).devices() == {d1}


def check_transfer_guard_takes_uncommitted_arrays_as_on_the_default_device():
    # as in JAX 0.10.2: moving an uncommitted array to another device is a
    # device-to-device transfer, implicit under jit(device=), explicit by device_put
    d0, d1 = jax.devices()[:2]
    a, b = jnp.ones(1), jnp.ones(1)
    with jax.transfer_guard_device_to_device("disallow"):
        assert jax.device_put(a, device=d1).devices() == {d1}
        with pytest.raises(RuntimeError, match="Disallowed device-to-device transfer"):
            _jit_on(d1, lambda x: x)(b)
        assert _jit_on(d0, lambda x: x)(b).tolist() == [1.0]   # already there
    with jax.transfer_guard_device_to_device("disallow_explicit"):
        with pytest.raises(RuntimeError, match="Disallowed explicit device-to-device"):
            jax.device_put(jnp.ones(1), device=d1)
        assert jax.device_put(jnp.ones(1), device=d0).devices() == {d0}


test_on_eight_devices = checks_on_devices(globals(), 8)
