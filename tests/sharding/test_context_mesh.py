"""Values made under a context mesh (jax.set_mesh) from no sharded input: where they are
laid out and how they are typed, eagerly and in jit; arrays on an Auto mesh typed by
that mesh; auto_axes/explicit_axes retyping their operands; broadcast_like taking its
model's split; results keeping the axis types their types name; types on one device,
without size-one axes, in eval_shape and out_info; pad and loops under an Explicit
context. The checks run in one subprocess with eight devices; the expected
shardings, types and messages are JAX 0.10.2's for the same programs."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P

from harness import checks_in_process

N = 8
EXPLICIT_X2 = ("AbstractMesh('x': 2, axis_types=(Explicit,), device_kind=cpu, "
               "num_cores=None, platform=cpu)")
AUTO_X2 = "AbstractMesh('x': 2, axis_types=(Auto,), device_kind=cpu, num_cores=None, platform=cpu)"


def _mesh(*types):
    return jax.make_mesh((2,), ("x",), axis_types=types or None)


def check_explicit_context_places_and_types_new_values():
    mesh = _mesh(AxisType.Explicit)
    with jax.set_mesh(mesh):
        ones = jnp.ones((4, 2))
        assert ones.sharding == NamedSharding(mesh, P(None, None))
        assert repr(jax.typeof(ones).sharding) == (
            f"NamedSharding(mesh={EXPLICIT_X2}, spec=P(None, None))")
        assert (ones + 1).sharding == NamedSharding(mesh, P(None, None))
        zeros = jax.jit(lambda: jnp.zeros(3))()
        assert zeros.sharding == NamedSharding(mesh, P(None))
        doubled = jax.jit(lambda x: x * 2)(np.arange(4.))
        assert doubled.sharding == NamedSharding(mesh, P(None))
        np.testing.assert_array_equal(doubled, [0., 2., 4., 6.])
        assert jax.lax.iota(np.int32, 4).sharding == NamedSharding(mesh, P(None))
        assert jnp.eye(2).sharding == NamedSharding(mesh, P(None, None))
        assert jax.random.uniform(jax.random.key(0), (4,)).sharding == \
            NamedSharding(mesh, P(None))
        assert jnp.sum(np.ones(3)).sharding == NamedSharding(mesh, P())
        # a NumPy array stays untyped until an operation makes a value of it
        assert jax.typeof(np.arange(3)).sharding.mesh.empty
    # out of the context the placed values keep their mesh, and ops on them too
    assert jax.typeof(ones).sharding.mesh == mesh.abstract_mesh
    assert (ones + 1).sharding == NamedSharding(mesh, P(None, None))
    assert jnp.ones(2).sharding == jax.sharding.SingleDeviceSharding(jax.devices()[0])


def check_jnp_ones_in_jit_is_typed_by_the_context_mesh():
    mesh = _mesh(AxisType.Explicit)
    seen = []

    @jax.jit
    def f():
        out = jnp.ones((2,))
        seen.append(out.aval.sharding)
        return out

    with jax.set_mesh(mesh):
        assert f().sharding == NamedSharding(mesh, P(None))
    assert repr(seen[0]) == f"NamedSharding(mesh={EXPLICIT_X2}, spec=P(None,))"


def check_auto_context_places_replicated_and_types_by_the_auto_mesh():
    mesh = _mesh(AxisType.Auto)
    with jax.set_mesh(mesh):
        ones = jnp.ones((4, 2))
        assert ones.sharding == NamedSharding(mesh, P())
        assert repr(jax.typeof(ones).sharding) == (
            f"NamedSharding(mesh={AUTO_X2}, spec=P(None, None))")
        out = jax.jit(lambda x: x * 2)(np.arange(4.))
        assert out.sharding == NamedSharding(mesh, P())
        assert jax.typeof(out).sharding.mesh == mesh.abstract_mesh


def check_mixed_context_spells_the_type():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    with jax.set_mesh(mesh):
        assert jnp.zeros((4, 4)).sharding == NamedSharding(mesh, P(None, None))
        assert jax.jit(lambda: jnp.zeros((4, 4)))().sharding == \
            NamedSharding(mesh, P(None, None))


def check_with_mesh_names_specs_but_places_nothing():
    mesh = _mesh(AxisType.Explicit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with mesh:
            assert jnp.zeros(3).sharding == jax.sharding.SingleDeviceSharding(
                jax.devices()[0])
            assert jax.sharding.get_abstract_mesh().empty


def check_auto_mesh_arrays_are_typed_by_their_mesh():
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    arr = jax.device_put(np.arange(16).reshape(8, 2), NamedSharding(mesh, P("x", None)))
    seen = []

    @jax.jit
    def f(x):
        seen.append((x.aval.sharding, (x * 2).aval.sharding))
        return x * 2

    out = f(arr)
    assert out.sharding == NamedSharding(mesh, P("x", None))
    assert out.aval.sharding.mesh == mesh.abstract_mesh
    for s in seen[0]:
        assert s.mesh == mesh.abstract_mesh and s.spec == P(None, None)


def check_auto_axes_retypes_its_operands():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    arr = jax.device_put(np.arange(16.).reshape(8, 2), NamedSharding(mesh, P("x", "y")))
    seen = []

    @jax.sharding.auto_axes(axes="x", out_sharding=NamedSharding(mesh, P("x", "y")))
    def h(y):
        seen.append((y.aval.sharding.spec, jnp.sin(y).aval.sharding.spec))
        return jnp.sin(y)

    for out in (jax.jit(h)(arr), h(arr)):
        assert out.sharding == NamedSharding(mesh, P("x", "y"))
        np.testing.assert_allclose(out, np.sin(np.arange(16.).reshape(8, 2)), rtol=1e-6)
    assert seen == [(P(None, "y"), P(None, "y"))] * 2


def check_explicit_axes_retypes_its_results():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    arr = jax.device_put(np.arange(16.).reshape(8, 2), NamedSharding(mesh, P("x", "y")))
    seen = []

    @jax.sharding.explicit_axes(in_sharding=P("x", "y"))
    def h(y):
        a = jnp.einsum("ab,bc->ac", y, y.T, out_sharding=P("x", None))
        seen.append((y.aval.sharding.spec, a.aval.sharding.spec))
        return a

    @jax.jit
    def f(x):
        a = h(x * 2)
        seen.append(a.aval.sharding.spec)
        return a

    with jax.set_mesh(mesh):
        out = f(arr)
    assert out.sharding == NamedSharding(mesh, P("x"))
    assert seen == [(P("x", "y"), P("x", None)), P(None, None)]
    x2 = np.arange(16.).reshape(8, 2) * 2
    np.testing.assert_allclose(out, x2 @ x2.T)


def check_auto_axes_without_a_context_takes_numpy_arguments():
    mesh = _mesh(AxisType.Explicit)
    seen = []

    @jax.jit
    def f(x):
        seen.append(x.aval.sharding.mesh.are_all_axes_auto)
        return x * 2

    with jax.set_mesh(mesh):
        out = jax.sharding.auto_axes(f, out_sharding=P("x"))(np.arange(8))
    assert out.sharding == NamedSharding(mesh, P("x"))
    np.testing.assert_array_equal(out, np.arange(8) * 2)
    assert seen == [True]


def check_broadcast_like_takes_the_split_of_its_model():
    mesh = _mesh(AxisType.Explicit)
    with jax.set_mesh(mesh):
        like = jax.device_put(np.arange(16).reshape(8, 2), P("x", None))
        out = jax.lax.broadcast_like(np.arange(2), like)
        assert out.sharding == NamedSharding(mesh, P("x", None))
        np.testing.assert_array_equal(out, np.broadcast_to(np.arange(2), (8, 2)))
        arr = jax.device_put(np.arange(2), P("x"))
        with pytest.raises(ValueError) as err:
            jax.lax.broadcast_like(arr, like)
        assert str(err.value) == ("Incompatible types for broadcasting: input "
                                  "type=int32[2@x] and requested type=int32[8@x,2]")



def check_results_keep_the_axis_types_their_types_name():
    explicit = _mesh(AxisType.Explicit)
    arr = jax.device_put(np.arange(16).reshape(8, 2), NamedSharding(explicit, P("x")))
    auto = _mesh(AxisType.Auto)
    with jax.set_mesh(auto):
        arr2 = jnp.ones(8)
    out1, out2 = jax.jit(lambda x, y: (x, y))(arr, arr2)
    assert out1.sharding.mesh.axis_types == (AxisType.Explicit,)
    assert out2.sharding.mesh.axis_types == (AxisType.Auto,)
    renamed = explicit.update(axis_names=("a",))
    assert renamed.axis_names == ("a",) and renamed.devices.tolist() == \
        explicit.devices.tolist()


def check_device_put_to_one_device_drops_the_mesh_from_the_type():
    mesh = _mesh(AxisType.Explicit)
    with jax.set_mesh(mesh):
        array = jnp.zeros(8)
        assert repr(jax.typeof(array).sharding) == (
            f"NamedSharding(mesh={EXPLICIT_X2}, spec=P(None,))")
        array = jax.device_put(array, jax.sharding.SingleDeviceSharding(jax.devices()[0]))
        assert jax.typeof(array).sharding.mesh.empty


def check_size_one_axes_leave_types_when_asked():
    mesh = jax.make_mesh((2, 1), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    seen = []
    jax.config.update("jax_remove_size_one_mesh_axis_from_type", True)
    try:
        with jax.set_mesh(mesh):
            arr = jax.device_put(np.arange(16).reshape(8, 2), P("x", "y"))

            @jax.jit
            def f(x):
                seen.append(x.aval.sharding.spec)
                return jax.lax.with_sharding_constraint(x * 2, P("x", "y"))

            out = f(arr)
    finally:
        jax.config.update("jax_remove_size_one_mesh_axis_from_type", False)
    assert seen == [P("x", None)]
    assert out.sharding == NamedSharding(mesh, P("x", None))


def check_eval_shape_and_out_info_carry_explicit_splits():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    with jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(16).reshape(8, 2), P("x", "y"))
        f = jax.jit(lambda x: x * 2)
        assert jax.eval_shape(f, arr).sharding == NamedSharding(mesh.abstract_mesh,
                                                                P("x", "y"))
        assert f.trace(arr).out_info.sharding == NamedSharding(mesh.abstract_mesh,
                                                               P("x", "y"))
    auto = _mesh(AxisType.Auto)
    with jax.set_mesh(auto):
        assert jax.jit(lambda: jnp.ones(2)).trace().out_info.sharding is None


def check_pad_and_loops_under_an_explicit_context():
    mesh = _mesh(AxisType.Explicit)
    with jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(16.).reshape(8, 2), P("x"))
        padded = jax.jit(lambda a: jnp.pad(a, ((0, 0), (2, 1))))(arr)
        assert padded.sharding == NamedSharding(mesh, P("x", None))
        np.testing.assert_array_equal(padded, np.pad(np.arange(16.).reshape(8, 2),
                                                     ((0, 0), (2, 1))))
        total = jax.jit(lambda a: jax.lax.fori_loop(0, 3, lambda i, c: c + a, a))(arr)
        assert total.sharding == NamedSharding(mesh, P("x", None))
        np.testing.assert_array_equal(total, 4 * np.arange(16.).reshape(8, 2))


def check_sharding_constraint_takes_a_format():
    # flax's nnx.Variable(out_sharding=Format(...)): the Format's sharding applies.
    # Values from JAX 0.10.2 (4 CPU devices).
    from pyjax.experimental.layout import Format, Layout
    mesh = jax.make_mesh((2, 2), ("data", "model"), (AxisType.Auto,) * 2)
    ns = NamedSharding(mesh, P("data", None))
    x = jnp.arange(16.0).reshape(4, 4)
    y = jax.lax.with_sharding_constraint(x, Format(Layout(major_to_minor=(1, 0)), ns))
    assert y.sharding == ns
    np.testing.assert_array_equal(y, np.arange(16.0).reshape(4, 4))
    z = jax.jit(lambda a: jax.lax.with_sharding_constraint(
        a * 2, Format(Layout(major_to_minor=(0, 1)), ns)))(x)
    np.testing.assert_array_equal(z, np.arange(16.0).reshape(4, 4) * 2)
    with pytest.raises(ValueError, match="got sharding None which is not allowed"):
        jax.lax.with_sharding_constraint(x, Format(Layout.AUTO))


CHECKS = [name for name in dict(globals()) if name.startswith("check_")]


@pytest.fixture(scope="module")
def eight_device_results():
    return checks_in_process("test_context_mesh", N)


@pytest.mark.parametrize("name", CHECKS)
def test_on_eight_devices(eight_device_results, name):
    result = eight_device_results[name]
    assert result == "ok", result
