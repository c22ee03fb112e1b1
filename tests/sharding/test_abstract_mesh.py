"""jax.sharding's abstract meshes and mesh-context helpers on one device:
AbstractMesh (a mesh's shape, names and axis types without devices), get_abstract_mesh,
reshard, auto_axes and explicit_axes. Expected reprs, values and errors are JAX 0.10.2's
for the same programs."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec as P

ONE_DEVICE_EXPLICIT = "NamedSharding(mesh=Mesh('a': 1, axis_types=(Explicit,)), spec={}, " \
    "memory_kind=device)"


def _mesh():
    return jax.make_mesh((1,), ("a",))


def test_abstract_mesh_describes_axes_like_jax():
    m = AbstractMesh((2, 3), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    assert repr(m) == str(m) == "AbstractMesh('x': 2, 'y': 3, axis_types=(Explicit, Auto))"
    assert (m.axis_sizes, m.axis_names) == ((2, 3), ("x", "y"))
    assert m.axis_types == (AxisType.Explicit, AxisType.Auto)
    assert (m.auto_axes, m.explicit_axes, m.manual_axes) == (("y",), ("x",), ())
    assert not m.are_all_axes_auto and not m.are_all_axes_explicit
    assert (m.size, m.empty, m.shape_tuple) == (6, False, (("x", 2), ("y", 3)))
    assert dict(m.shape) == {"x": 2, "y": 3}
    assert m.abstract_mesh is m
    assert repr(m.update_axis_types({"y": AxisType.Manual})) == \
        "AbstractMesh('x': 2, 'y': 3, axis_types=(Explicit, Manual))"
    assert repr(AbstractMesh((2, 3), ("x", "y"))) == \
        "AbstractMesh('x': 2, 'y': 3, axis_types=(Auto, Auto))"
    assert repr(AbstractMesh((2,), ("x",), axis_types=AxisType.Explicit)) == \
        "AbstractMesh('x': 2, axis_types=(Explicit,))"



def test_avals_print_their_splits_like_jax():
    # JAX 0.10.2: str_short spells the dtype in full unless asked for short dtypes,
    # and names the mesh's axes by type when asked
    m = AbstractMesh((2, 2), ("model", "data"), axis_types=(AxisType.Explicit,) * 2)
    aval = jax.core.ShapedArray((128, 64), np.float32,
                                sharding=NamedSharding(m, P("model", "data")))
    assert aval.str_short() == "float32[128@model,64@data]"
    aval = aval.update(sharding=NamedSharding(m, P(("model", "data"), None)))
    assert aval.str_short() == str(aval) == "float32[128@(model,data),64]"
    assert aval.str_short(short_dtypes=True) == "f32[128@(model,data),64]"
    assert aval.str_short(True, True) == \
        "f32[128@(model,data),64]({Explicit: ('model', 'data')})"
    assert aval.update(sharding=NamedSharding(m, P(None, None))).str_short() == \
        "float32[128,64]"

def test_abstract_mesh_equality_and_hash():
    m = AbstractMesh((2, 3), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    assert m != AbstractMesh((2, 3), ("x", "y"))          # axis types differ
    assert m == AbstractMesh((2, 3), ("x", "y"), (AxisType.Explicit, AxisType.Auto))
    assert hash(AbstractMesh((4,), "x")) == hash(AbstractMesh((4,), ("x",)))
    assert len({AbstractMesh((4,), "x"), AbstractMesh((4,), ("x",))}) == 1


def test_abstract_mesh_rejects_mismatched_axes():
    with pytest.raises(ValueError, match="axis_sizes 1 should match the number of "
                                         "axis_names 2"):
        AbstractMesh((2,), ("x", "y"))
    with pytest.raises(ValueError, match="unique"):
        AbstractMesh((2, 2), ("x", "x"))


def test_mesh_abstract_mesh_records_device_kind():
    mesh = _mesh()
    assert repr(mesh.abstract_mesh) == ("AbstractMesh('a': 1, axis_types=(Explicit,), "
                                        "device_kind=cpu, num_cores=None, platform=cpu)")
    assert mesh.abstract_mesh == mesh.abstract_mesh
    assert mesh.abstract_mesh != AbstractMesh((1,), ("a",), (AxisType.Explicit,))
    assert mesh.are_all_axes_explicit and not mesh.empty
    auto = jax.make_mesh((1,), ("a",), axis_types=(AxisType.Auto,))
    assert repr(auto.abstract_mesh) == ("AbstractMesh('a': 1, axis_types=(Auto,), "
                                        "device_kind=cpu, num_cores=None, platform=cpu)")


def test_get_abstract_mesh_follows_the_mesh_context():
    empty = jax.sharding.get_abstract_mesh()
    assert repr(empty) == "AbstractMesh((), axis_types=())"
    assert empty.empty and empty.axis_sizes == () and empty == AbstractMesh((), ())
    mesh = _mesh()
    with jax.set_mesh(mesh):
        assert jax.sharding.get_abstract_mesh() == mesh.abstract_mesh
    assert jax.sharding.get_abstract_mesh().empty


def test_reshard_puts_and_constrains():
    mesh = _mesh()
    y = jax.sharding.reshard(jnp.ones(2), NamedSharding(mesh, P("a")))
    assert repr(y.sharding) == ONE_DEVICE_EXPLICIT.format("P('a',)")
    with jax.set_mesh(mesh):
        y = jax.sharding.reshard(jnp.ones(4), P("a"))
        assert repr(y.sharding) == ONE_DEVICE_EXPLICIT.format("P('a',)")
        tree = jax.sharding.reshard({"w": jnp.ones(2)}, P("a"))
        assert repr(tree["w"].sharding) == ONE_DEVICE_EXPLICIT.format("P('a',)")
        y = jax.jit(lambda x: jax.sharding.reshard(x * 2, P("a")))(jnp.arange(4.))
        np.testing.assert_array_equal(y, [0., 2., 4., 6.])
        assert jax.make_jaxpr(lambda x: jax.sharding.reshard(x, P("a")))(
            jnp.ones(2)).eqns[0].primitive.name == "reshard"
    with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a "
                                         "mesh context is not allowed"):
        jax.sharding.reshard(jnp.ones(4), P("a"))


def test_auto_axes_reshards_the_output():
    mesh = _mesh()
    with jax.set_mesh(mesh):
        out = jax.sharding.auto_axes(lambda x: x + 1, out_sharding=P(None))(jnp.ones(2))
        assert repr(out.sharding) == ONE_DEVICE_EXPLICIT.format("P(None,)")
        out = jax.sharding.auto_axes(lambda x: x + 1)(jnp.ones(2), out_sharding=P("a"))
        assert repr(out.sharding) == ONE_DEVICE_EXPLICIT.format("P('a',)")
        np.testing.assert_array_equal(out, [2., 2.])
        with pytest.raises(TypeError, match="Missing required keyword argument: "
                                            "'out_sharding'"):
            jax.sharding.auto_axes(lambda x: x)(jnp.ones(2))
    # Without a mesh anywhere, f just runs.
    np.testing.assert_array_equal(
        jax.sharding.auto_axes(lambda x: x + 1, out_sharding=P("a"))(jnp.ones(2)), [2., 2.])


def test_explicit_axes_reshards_the_arguments():
    with jax.set_mesh(_mesh()):
        out = jax.sharding.explicit_axes(lambda x: x * 3, in_sharding=P("a"))(jnp.ones(2))
        np.testing.assert_array_equal(out, [3., 3.])
    with pytest.raises(ValueError, match="Context mesh cannot be empty"):
        jax.sharding.explicit_axes(lambda x: x, in_sharding=P("a"))(jnp.ones(2))


def test_partition_specs_and_meshes_are_interned_like_jax():
    # Equal specs and meshes are one object; messages and reprs are JAX 0.10.2's.
    assert P(None, "x") is P((), "x") and P("x", "y", "z").index("z") == 2
    assert repr(P("a", "b", None, unreduced={"c"}, reduced={"d"})) == \
        "P('a', 'b', None, unreduced={'c'}, reduced={'d'})"
    assert P("x", unreduced={"z"}) + P("a", unreduced={"b"}) == \
        P("x", "a", unreduced={"z", "b"})
    assert P("x") + ("y",) == P("x", "y")
    with pytest.raises(ValueError, match="cannot contain a nested tuple"):
        P("x", ("z", ("a",)))
    with pytest.raises(TypeError, match="Subclassing `jax.P` is prohibited"):
        type("MyP", (P,), {})
    with pytest.raises(ValueError, match="unreduced cannot contain None"):
        P("x", unreduced={"y", None})
    mesh = jax.make_mesh((1, 1), ("x", "y"))
    assert jax.sharding.Mesh(mesh.devices, ("x", "y"), mesh.axis_types) is mesh
    with pytest.raises(ValueError, match="Unreduced axes a is not found in mesh"):
        NamedSharding(mesh, P("x", unreduced={"a"}))
    unreduced = NamedSharding(mesh, P("x", unreduced={"y"}))   # partial sums over y
    assert unreduced.shard_shape((4, 2)) == (4, 2) and unreduced != NamedSharding(mesh, P("x"))
    reduced = NamedSharding(mesh, P("x", reduced={"y"}))   # laid out as replicated on y
    assert reduced.shard_shape((4, 2)) == (4, 2) and reduced != NamedSharding(mesh, P("x"))
    with pytest.raises(ValueError, match="Number of axis names should match the number "
                                         "of axis_types"):
        jax.make_mesh((1, 1), ("data", "model"), axis_types=AxisType.Explicit)
    with pytest.raises(TypeError, match="axis_types passed to AbstractMesh must be of type"):
        AbstractMesh((2,), ("x",), axis_types="explicit")
    empty = jax.sharding.Mesh(np.empty((), dtype=object), ())
    assert empty.empty and empty.size == 0 and empty.abstract_mesh.empty
    assert AbstractMesh((), ()).size == 0
