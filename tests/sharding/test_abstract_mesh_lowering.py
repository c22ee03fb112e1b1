"""use_abstract_mesh over a concrete mesh: it may rename and reshape the mesh's axes
(not change its size), the values made under it are laid out on the context's devices
under the new names, a jit lowers each mesh it names as its own Shardy mesh, results
are named by the mesh of their type, and a trace under an Explicit abstract mesh
lowers (for named platforms) partitioned over it. Also the meshes that bare specs
name in jit, the memory kind an out_sharding type refuses, device_put's device-order
reshard (which no transfer guard sees), device_put inside jit and uneven constraints.
Checks run in one subprocess with eight devices; the expected shardings, texts and
errors are JAX 0.10.2's."""
from __future__ import annotations

import re

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.sharding import (AbstractMesh, AxisType, NamedSharding, PartitionSpec as P,
                            reshard, use_abstract_mesh)

from harness import checks_on_devices


def _mesh(shape, names, axis_type):
    return jax.make_mesh(shape, names, axis_types=(axis_type,) * len(shape),
                         devices=jax.devices()[:int(np.prod(shape))])


def check_use_abstract_mesh_keeps_the_size_and_renames_eager_values():
    mesh = _mesh((2,), ("x",), AxisType.Explicit)
    with jax.set_mesh(mesh):
        with pytest.raises(ValueError, match="use_abstract_mesh cannot change the size of "
                           "the mesh. Got new mesh: AbstractMesh.'x': 4"):
            with use_abstract_mesh(AbstractMesh((4,), ("x",))):
                pass
        with use_abstract_mesh(AbstractMesh((2,), ("y",))):
            out = jnp.arange(8)
        assert out.sharding == NamedSharding(
            mesh.update(axis_names=("y",), axis_types=(AxisType.Auto,)), P())
        with use_abstract_mesh(AbstractMesh((2,), ("x",), (AxisType.Explicit,))):
            assert jnp.arange(8).sharding == NamedSharding(mesh, P(None))


def _renamed(f_body, axis_type):
    mesh = _mesh((2, 2), ("x", "y"), axis_type)
    renamed = mesh.abstract_mesh.update(axis_sizes=(4, 1), axis_names=("a", "b"))

    @jax.jit
    def f(x):
        x = jnp.sin(x)
        with use_abstract_mesh(renamed):
            out = f_body(x)
        return out
    return mesh, f


def check_a_renamed_mesh_lowers_as_a_second_shardy_mesh():
    mesh, f = _renamed(lambda x: reshard(x, P(("a", "b"), None)) * 2, AxisType.Explicit)
    with jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(16.).reshape(8, 2), P("x", "y"))
        text = f.lower(arr).as_text()
        out = f(arr)
    assert 'sdy.mesh @mesh = <["x"=2, "y"=2]>' in text
    assert 'sdy.mesh @mesh_0 = <["a"=4, "b"=1]>' in text
    assert len(re.findall(r'sdy.sharding_constraint .*<@mesh_0, \[\{"a", "b"\}, \{\}\]>',
                          text)) == 3
    assert 'sdy.sharding = #sdy.sharding<@mesh_0, [{"a", "b"}, {}]>' in text
    assert out.sharding == NamedSharding(
        jax.sharding.Mesh(mesh.devices.reshape(4, 1), ("a", "b"), mesh.axis_types),
        P(("a", "b"), None))
    np.testing.assert_allclose(out, np.sin(np.arange(16.).reshape(8, 2)) * 2, rtol=1e-6)


def check_grad_through_a_renamed_mesh_returns_to_the_argument_split():
    mesh, f = _renamed(lambda x: reshard(x, P(("a", "b"), None)) * 2, AxisType.Explicit)
    with jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(16.).reshape(8, 2), P("x", "y"))
        g = jax.jit(jax.grad(lambda x: reshard(f(x), P("y", None)).sum()))(arr)
    assert g.sharding == arr.sharding
    np.testing.assert_allclose(g, 2 * np.cos(np.arange(16.).reshape(8, 2)), rtol=1e-6)


def check_a_result_of_auto_axes_is_named_by_its_type_mesh():
    mesh, f = _renamed(
        lambda x: jax.lax.with_sharding_constraint(x, P(("a", "b"), None)) * 2,
        AxisType.Auto)
    with jax.set_mesh(mesh):
        out = f(jax.device_put(np.arange(16.).reshape(8, 2), P("x", "y")))
    assert out.sharding.mesh.axis_names == ("a", "b")
    assert out.sharding.spec == P("a")


def check_a_spec_constraint_under_set_mesh_names_the_abstract_mesh():
    mesh = _mesh((2, 2), ("x", "y"), AxisType.Auto)
    with jax.set_mesh(mesh):
        f = jax.jit(lambda x: jax.lax.with_sharding_constraint(x, P("x", "y")))
        jaxpr = f.trace(np.zeros((4, 4), np.int32)).jaxpr
        assert isinstance(jaxpr.eqns[0].params["sharding"].mesh, AbstractMesh)
        out = f(jax.device_put(np.zeros((4, 4), np.int32), P("x")))
    assert out.sharding == NamedSharding(mesh, P("x", "y"))


def check_a_reshard_under_a_renamed_context_mesh_takes_its_names():
    mesh = _mesh((2, 1), ("x", "y"), AxisType.Explicit)
    with jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(16).reshape(8, 2), P("x", "y"))
    with jax.set_mesh(mesh.update(axis_names=("a", "b"))):
        assert jax.typeof(arr).sharding.spec == P("x", "y")
        arr = reshard(arr, P("a", "b"))
    assert jax.typeof(arr).sharding.spec == P("a", "b")
    np.testing.assert_array_equal(arr, np.arange(16).reshape(8, 2))


def check_a_trace_under_an_explicit_abstract_mesh_is_partitioned_over_it():
    explicit = AbstractMesh((2,), ("x",), (AxisType.Explicit,))
    f = jax.jit(lambda x: x * 2)
    spec = jax.ShapeDtypeStruct((8, 2), np.float32)
    with use_abstract_mesh(explicit):
        traced = f.trace(spec)
        with pytest.raises(ValueError, match="Passing lowering_platforms via jax.export"):
            traced.lower()
    assert "mhlo.num_partitions = 2 " in traced.lower(lowering_platforms=("tpu",)).as_text()
    with use_abstract_mesh(explicit):
        for lowered in (
                jax.jit(lambda: jnp.arange(8.)).trace().lower(lowering_platforms=("tpu",)),
                f.trace(jax.ShapeDtypeStruct((8, 2), np.float32, sharding=NamedSharding(
                    explicit, P("x")))).lower(lowering_platforms=("tpu",))):
            assert "mhlo.num_partitions = 2 " in lowered.as_text()
    traced_outside = f.trace(spec)
    with use_abstract_mesh(AbstractMesh((2,), ("x",), (AxisType.Auto,))):
        auto = f.trace(spec)
    for traced in (auto, traced_outside):
        assert "mhlo.num_partitions = 1 " in traced.lower(
            lowering_platforms=("tpu",)).as_text()
    for other in (NamedSharding(AbstractMesh((1,), ("x",), (AxisType.Explicit,)), P("x")),
                  NamedSharding(_mesh((1,), ("x",), AxisType.Explicit), P("x"))):
        with pytest.raises(ValueError), use_abstract_mesh(explicit):
            f.trace(jax.ShapeDtypeStruct((8, 2), np.float32, sharding=other)).lower(
                lowering_platforms=("tpu",))


def check_jit_specs_need_set_mesh_not_with_mesh():
    mesh = _mesh((1,), ("x",), AxisType.Auto)
    message = ("jit requires a non-empty mesh in context if you are passing "
               "`PartitionSpec`s to in_shardings. You can define a context mesh via "
               "`jax.set_mesh(mesh)`.")
    with pytest.raises(RuntimeError, match=re.escape(message)):
        with pytest.warns(DeprecationWarning), mesh:
            jax.jit(lambda x: x, in_shardings=P("x"), out_shardings=P("x"))(jnp.arange(8))
    with jax.set_mesh(mesh):
        out = jax.jit(lambda x: x, in_shardings=P("x"), out_shardings=P("x"))(jnp.arange(8))
    assert out.sharding == NamedSharding(mesh, P("x"))


def check_an_out_sharding_type_takes_no_memory_kind():
    mesh = _mesh((2,), ("x",), AxisType.Explicit)
    with jax.set_mesh(mesh):
        with pytest.raises(ValueError, match=re.escape(
                "sharding with memory_kind is not allowed. Please use `jax.device_put` to "
                "transfer to different memory spaces. Got sharding=NamedSharding(mesh="
                "AbstractMesh('x': 2, axis_types=(Explicit,), device_kind=cpu, "
                "num_cores=None, platform=cpu), spec=P('x',), memory_kind=pinned_host)")):
            jnp.full((2,), fill_value=0, out_sharding=NamedSharding(
                mesh.abstract_mesh, P("x"), memory_kind="pinned_host"))
        out = jnp.full((2,), fill_value=0, out_sharding=NamedSharding(mesh, P("x")))
    assert out.sharding == NamedSharding(mesh, P("x"))


def check_device_put_reordering_devices_is_no_guarded_transfer():
    devices = jax.devices()[:4]
    mesh = jax.sharding.Mesh(np.array(devices).reshape(2, 2), ("x", "y"))
    reordered = jax.sharding.Mesh(np.array(devices[::-1]).reshape(2, 2), ("x", "y"))
    x = jax.device_put(np.arange(16).reshape(8, 2), NamedSharding(mesh, P("x", "y")))
    with jax.transfer_guard("disallow_explicit"):
        out = jax.device_put(x, NamedSharding(reordered, P("x")))
    assert out.sharding == NamedSharding(reordered, P("x"))
    np.testing.assert_array_equal(out, np.arange(16).reshape(8, 2))
    for target in (NamedSharding(mesh, P("x")), jax.devices()[0],
                   NamedSharding(jax.sharding.Mesh(np.array(jax.devices()[4:]).reshape(
                       2, 2), ("x", "y")), P("x"))):
        with pytest.raises(Exception, match="Disallowed"), \
                jax.transfer_guard("disallow_explicit"):
            jax.device_put(x, target)


def check_a_constraint_inside_jit_may_split_unevenly_over_auto_axes():
    mesh = _mesh((2, 1), ("data", "model"), AxisType.Auto)

    @jax.jit
    def fn():
        x = jax.lax.with_sharding_constraint(jnp.arange(113003), P("data"))
        z = jnp.concatenate([x, jnp.arange(4)], axis=0)
        return x, jax.lax.with_sharding_constraint(z, P("data"))

    with pytest.warns(DeprecationWarning), mesh:
        x, z = fn()
    assert x.sharding == z.sharding == NamedSharding(mesh, P())   # (as JAX gives them)
    assert (int(x.max()), int(z.max())) == (113002, 113002)
    with pytest.raises(ValueError, match="implies that array axis 0 is partitioned 2 "
                       "times"):
        jax.lax.with_sharding_constraint(jnp.arange(5), NamedSharding(mesh, P("data")))
    explicit = _mesh((2,), ("x",), AxisType.Explicit)
    with jax.set_mesh(explicit), pytest.raises(ValueError, match="partitioned 2 times"):
        jax.jit(lambda: reshard(jnp.arange(5), P("x")))()


def check_an_array_made_on_a_sharding_inside_jit_is_laid_out_so():
    mesh = _mesh((2, 2), ("x", "y"), AxisType.Auto)
    s = NamedSharding(mesh, P("x", "y"))
    inp = np.arange(16).reshape(8, 2)
    made = jax.jit(lambda: jnp.array(inp, dtype=np.float32, device=s))()
    converted = jax.jit(lambda x: jnp.array(x, dtype=np.float32, device=s))(inp)
    for out in (made, converted):
        assert out.sharding == s and out.dtype == np.float32
        np.testing.assert_array_equal(out, inp.astype(np.float32))


test_on_eight_devices = checks_on_devices(globals(), 8)
