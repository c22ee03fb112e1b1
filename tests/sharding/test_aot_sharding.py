"""Ahead-of-time lowering and compilation with shardings on 8 CPU devices:
Traced.lower(lowering_platforms=...) over an AbstractMesh (devices given at
compile(device_assignment=...)), Lowered/Compiled.in_avals. The checks run in one
subprocess with eight devices; each is reported as its own test. Expected texts, values
and errors are JAX 0.10.2's for the same programs."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental.layout import Format, Layout
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P

from harness import checks_on_devices


def _mesh(shape, names, kind=AxisType.Auto):
    return jax.make_mesh(shape, names, axis_types=(kind,) * len(names),
                         devices=jax.devices()[:int(np.prod(shape))])


def _struct(shape, sharding):
    return jax.ShapeDtypeStruct(shape, jnp.float32, sharding=sharding)


def check_lowering_over_an_abstract_mesh_needs_devices_to_compile():
    mesh = _mesh((2,), ("x",))
    abstract = _struct((8, 2), NamedSharding(mesh.abstract_mesh, P("x")))
    lowered = jax.jit(lambda x: x * 2).trace(abstract).lower(lowering_platforms=("tpu",))
    text = lowered.as_text()
    assert "mhlo.num_partitions = 2" in text
    assert '%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}' \
        in text
    with pytest.raises(RuntimeError, match="device_assignment cannot be `None` during "
                       "compilation. Please pass a tuple of devices"):
        lowered.compile()
    with pytest.raises(ValueError, match=r"The size of abstract mesh 2 in NamedSharding\("
                       r"mesh=AbstractMesh\('x': 2.*must match the length of device "
                       "assignment: 1"):
        lowered.compile(device_assignment=(jax.devices()[0],))
    compiled = lowered.compile(device_assignment=tuple(mesh.devices.flat))
    assert compiled.input_shardings == ((NamedSharding(mesh, P("x")),), {})
    x = jax.device_put(np.arange(16, dtype=np.float32).reshape(8, 2),
                       NamedSharding(mesh, P("x")))
    out = compiled(x)
    np.testing.assert_array_equal(out, np.arange(16).reshape(8, 2) * 2)
    assert out.sharding == NamedSharding(mesh, P("x"))


def check_abstract_shardings_without_devices_need_lowering_platforms():
    mesh, one = _mesh((2,), ("x",)), _mesh((1,), ("x",))
    abstract = _struct((8, 2), NamedSharding(mesh.abstract_mesh, P("x")))
    g = jax.jit(lambda x, y: (x, y))
    with pytest.raises(ValueError, match="Passing lowering_platforms via jax.export or "
                       r"jit\(f\).trace\(\*args\).lower\(lowering_platforms=...\) is "
                       "required when only AbstractMesh exists in a jitted computation. "
                       r"Got context mesh: Mesh\(\)"):
        g.lower(abstract, np.arange(8))
    concrete = _struct((8,), NamedSharding(mesh, P("x")))
    with pytest.raises(ValueError, match="AbstractMesh size: 1 does not match the device "
                       "assignment size: 2"):
        g.lower(_struct((8, 2), NamedSharding(one.abstract_mesh, P("x"))), concrete)
    lowered = g.trace(abstract, np.arange(8)).lower(lowering_platforms=("cpu",))
    assert "mhlo.num_partitions = 2" in lowered.as_text()
    with pytest.raises(ValueError, match="each must be one of"):
        g.trace(abstract, np.arange(8)).lower(lowering_platforms=("abacus",))


def check_shardings_over_two_abstract_meshes_name_two_shardy_meshes():
    # JAX 0.10.2 declares `sdy.mesh @mesh_0 = <["y"=2]>` for the second one
    mesh_x, mesh_y = _mesh((2,), ("x",)), _mesh((2,), ("y",))
    a = _struct((8, 2), NamedSharding(mesh_x.abstract_mesh, P("x")))
    b = _struct((8, 2), NamedSharding(mesh_y.abstract_mesh, P("y")))
    lowered = jax.jit(lambda x, y: x * y).trace(a, b).lower(lowering_platforms=("cpu",))
    text = lowered.as_text()
    assert 'sdy.mesh @mesh = <["x"=2]>' in text and 'sdy.mesh @mesh_0 = <["y"=2]>' in text
    assert '{sdy.sharding = #sdy.sharding<@mesh_0, [{"y"}, {}]>}' in text
    compiled = lowered.compile(device_assignment=tuple(jax.devices()[:2]))
    assert compiled.input_shardings == ((NamedSharding(mesh_x, P("x")),
                                         NamedSharding(mesh_y, P("y"))), {})
    x = jax.device_put(np.ones((8, 2), np.float32), NamedSharding(mesh_x, P("x")))
    y = jax.device_put(np.full((8, 2), 3, np.float32), NamedSharding(mesh_y, P("y")))
    np.testing.assert_array_equal(compiled(x, y), np.full((8, 2), 3))


def check_in_avals_carry_the_in_shardings_types():
    mesh = _mesh((2,), ("x",), AxisType.Explicit)
    with jax.set_mesh(mesh):
        f = jax.jit(lambda x: x * 2, in_shardings=P("x"), out_shardings=P("x"))
        lowered = f.lower(np.arange(8))
        (aval,), kwargs = lowered.in_avals
        assert kwargs == {} and aval.sharding == NamedSharding(mesh.abstract_mesh, P("x"))
        compiled = lowered.compile()
        assert compiled.in_avals[0][0].sharding == NamedSharding(mesh.abstract_mesh, P("x"))
        np.testing.assert_array_equal(compiled(np.arange(8)), np.arange(8) * 2)


def test_shape_dtype_struct_takes_a_format():
    # JAX 0.10.2: the Format's sharding is the struct's, its layout the struct's format
    mesh = jax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))
    sh = NamedSharding(mesh, P())
    s = jax.ShapeDtypeStruct((2, 2), jnp.int32, sharding=Format(Layout((0, 1)), sh))
    assert s.sharding == sh and s.format == Format(Layout((0, 1)), sh)
    assert repr(s).endswith(f"sharding={sh}, format={Layout((0, 1))})")
    new = Format(Layout((1, 0)), NamedSharding(mesh, P("x")))
    updated = s.update(sharding=new)
    assert updated.sharding == new.sharding and updated.format == new
    assert s.update(shape=(4, 2)).format == Format(Layout((0, 1)), sh)
    with pytest.raises(ValueError, match="You are updating ShapeDtypeStruct with a "
                       ".*NamedSharding.* when the original ShapeDtypeStruct had a "
                       "concrete layout"):
        s.update(sharding=NamedSharding(mesh, P("x")))
    assert s == jax.ShapeDtypeStruct((2, 2), jnp.int32, sharding=Format(Layout((0, 1)), sh))
    assert s != jax.ShapeDtypeStruct((2, 2), jnp.int32, sharding=sh)
    assert jax.ShapeDtypeStruct((2,), jnp.int32).format == Format(None, None)
    with pytest.raises(TypeError, match="`Layout.AUTO` cannot be used in place of a "
                       "device-local layout in a `ShapeDtypeStruct`"):
        jax.ShapeDtypeStruct((2,), jnp.int32, sharding=Format(Layout.AUTO))


test_on_eight_devices = checks_on_devices(globals(), 8)
