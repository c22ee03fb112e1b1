"""vmap of with_sharding_constraint with and without spmd_axis_name on 8 CPU devices:
the batch dimension is split over the spmd axes (which the spec must not use), and only
NamedShardings can be batched so. Expected shardings and errors are JAX 0.10.2's."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P
from pyjax.sharding import SingleDeviceSharding

from harness import checks_on_devices


def _mesh():
    return jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2,
                         devices=jax.devices()[:4])


def check_spmd_axis_name_splits_the_batch_dimension():
    mesh = _mesh()
    x = jax.device_put(np.arange(16).reshape(8, 2), NamedSharding(mesh, P("x", "y")))

    def f(v):
        return jax.lax.with_sharding_constraint(
            v, NamedSharding(mesh.abstract_mesh, P("x"))) * 2

    out = jax.jit(jax.vmap(f))(x)
    assert out.sharding == NamedSharding(mesh, P(None, "x"))
    out = jax.jit(jax.vmap(f, spmd_axis_name="y"))(x)
    assert out.sharding == NamedSharding(mesh, P("y", "x"))
    np.testing.assert_array_equal(out, np.arange(16).reshape(8, 2) * 2)
    eager = jax.vmap(lambda v: jax.lax.with_sharding_constraint(
        v, NamedSharding(mesh, P("x"))), spmd_axis_name="y")(jnp.arange(64.).reshape(4, 16))
    assert eager.sharding == NamedSharding(mesh, P("y", "x"))


def check_spmd_axis_name_errors():
    mesh = _mesh()
    xs = jnp.arange(4 * 16.).reshape(4, 16)
    with pytest.raises(ValueError, match=r"vmap spmd_axis_name \('x',\) cannot appear in "
                       r"with_sharding_constraint spec, but got spec P\('x',\)"):
        jax.vmap(lambda v: jax.lax.with_sharding_constraint(
            v, NamedSharding(mesh, P("x"))), spmd_axis_name="x")(xs)
    s = SingleDeviceSharding(jax.devices()[0])
    with pytest.raises(ValueError, match="If you are using spmd_axis_name parameter of "
                       "jax.vmap, please make sure to run your jitted function inside the "
                       "mesh context manager.*SingleDeviceSharding"):
        jax.jit(jax.vmap(lambda v: jax.lax.with_sharding_constraint(v, s),
                         spmd_axis_name="x"))(jax.device_put(np.arange(8), s))


test_on_eight_devices = checks_on_devices(globals(), 8)
