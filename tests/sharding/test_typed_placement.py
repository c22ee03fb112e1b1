"""Where results land when their type or an AbstractMesh names the split: an eager
out_sharding= result is laid out on the context mesh, with_sharding_constraint to an
AbstractMesh names the mesh of its input (eagerly and under jit), a ShapeDtypeStruct's
sharding is in the type jit traces with, and elementwise broadcasts in a partitioned
program are constrained as JAX constrains them. The checks run in one subprocess with
eight devices; expected shardings, types and messages are JAX 0.10.2's for the same
programs."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.lax import with_sharding_constraint
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P, SingleDeviceSharding

from harness import checks_in_process

N = 8


def _raises(kind, fn):
    try:
        fn()
    except kind as err:
        return str(err)
    raise AssertionError(f"{kind.__name__} not raised")


# --- checks run with eight devices ------------------------------------------------------

def check_eager_reshape_out_sharding_is_laid_out_on_the_mesh():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
    with jax.set_mesh(mesh):
        eager = jnp.arange(16.).reshape(8, 2, out_sharding=P("x"))
        jitted = jax.jit(lambda: jnp.arange(16.).reshape(8, 2, out_sharding=P("x")))()
    for out in (eager, jitted):
        assert out.sharding == NamedSharding(mesh, P("x", None)), out.sharding
        assert str(jax.typeof(out)) == "float32[8@x,2]"
        assert [s.data.shape for s in out.addressable_shards] == [(4, 2), (4, 2)]
        np.testing.assert_array_equal(np.asarray(out), np.arange(16.).reshape(8, 2))


def check_jit_traces_again_under_another_context_mesh():
    # Recorded from JAX 0.10.2: two traces, each result laid out on its own context mesh.
    m1 = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Explicit,))
    m2 = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    traces = []

    @jax.jit
    def f(a):
        traces.append(1)
        return jnp.zeros((8, 4), out_sharding=P("x"))
    with jax.set_mesh(m1):
        r1 = f(1.)
    with jax.set_mesh(m2):
        r2 = f(1.)
    with jax.set_mesh(m1):
        r3 = f(1.)
    assert len(traces) == 2, traces
    assert r1.sharding.mesh == m1 and r3.sharding.mesh == m1 and r2.sharding.mesh == m2
    assert r2.sharding.spec == P("x", None)


def check_eager_reshard_names_its_result_by_the_type():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
    with jax.set_mesh(mesh):
        assert jax.reshard(np.ones((8, 2)), P("x")).sharding.spec == P("x", None)
        assert jnp.zeros((8, 2), out_sharding=P("x")).sharding.spec == P("x", None)
        # device_put keeps the spec as written
        assert jax.device_put(np.ones((8, 2)), P("x")).sharding.spec == P("x",)


def check_shape_dtype_struct_sharding_is_in_the_traced_type():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
    sds = jax.ShapeDtypeStruct((8, 2), np.float32, sharding=NamedSharding(mesh, P("x")))
    aval = jax.jit(lambda x: x).trace(sds).jaxpr.in_avals[0]
    assert repr(aval.sharding) == (
        "NamedSharding(mesh=AbstractMesh('x': 2, axis_types=(Explicit,), device_kind=cpu, "
        "num_cores=None, platform=cpu), spec=P('x', None))"), repr(aval.sharding)


def check_broadcast_operands_are_constrained_like_the_result():
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    sds = jax.ShapeDtypeStruct((8, 2), np.float32, sharding=NamedSharding(mesh, P("x", "y")))
    text = jax.jit(lambda x: (x * 2) * (x * 2)).lower(sds).as_text()
    assert text.count("sdy.sharding_constraint") == 5, text   # as JAX's text


def check_constraint_to_an_abstract_mesh_names_the_inputs_mesh():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    arr = jax.device_put(np.arange(16).reshape(8, 2), NamedSharding(mesh, P("x", "y")))
    target = NamedSharding(mesh.abstract_mesh, P("x"))
    jitted = jax.jit(lambda a: with_sharding_constraint(a, target) * 2)(arr)
    eager = with_sharding_constraint(arr, target) * 2
    for out in (jitted, eager):
        assert out.sharding == NamedSharding(mesh, P("x")), out.sharding
        np.testing.assert_array_equal(np.asarray(out), np.arange(16).reshape(8, 2) * 2)


def check_constraint_to_an_abstract_mesh_errors():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
    target = NamedSharding(mesh.abstract_mesh, P("x"))
    assert _raises(ValueError, lambda: with_sharding_constraint(np.arange(8), target)) \
        .startswith("Target sharding contains a `jax.sharding.AbstractMesh` which requires "
                    "the input passed should be a `jax.Array`.")
    assert _raises(TypeError, lambda: with_sharding_constraint(jnp.arange(8), target)) \
        .startswith("The sharding on the input must be a `NamedSharding` since the target "
                    "sharding has an `AbstractMesh` in it.")
    arr = jax.device_put(np.arange(8), NamedSharding(mesh, P("x")))
    other = jax.make_mesh((2,), ("y",), axis_types=(AxisType.Auto,)).abstract_mesh
    assert _raises(ValueError, lambda: with_sharding_constraint(
        arr, NamedSharding(other, P("y")))) == (
        "Mesh shape of the input (('x', 2),) does not match the mesh shape of the target "
        "sharding (('y', 2),) for shape int32[8]")


def check_constraint_to_one_device_or_none():
    device = jax.devices()[0]
    out = with_sharding_constraint(jnp.arange(10), SingleDeviceSharding(device))
    assert out.committed and out.sharding == SingleDeviceSharding(device)
    assert _raises(ValueError, lambda: with_sharding_constraint(jnp.arange(8), None)) == (
        "One of with_sharding_constraint arguments got sharding None which is not allowed. "
        "Please only pass `jax.sharding.Sharding` instances.")


def check_xla_chosen_results_are_named_as_an_argument_laid_out_alike():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    short = jax.device_put(np.arange(16.).reshape(8, 2), NamedSharding(mesh, P("x")))
    full = jax.device_put(np.arange(16.).reshape(8, 2), NamedSharding(mesh, P("x", None)))
    specs = [jax.jit(lambda x: x * 2)(short).sharding.spec,
             jax.jit(lambda x: x * 2)(full).sharding.spec,
             jax.jit(lambda x: x.T)(short).sharding.spec,
             jax.jit(lambda x: x @ x.T)(short).sharding.spec,
             jax.jit(lambda x, y: x @ y)(full, full.T).sharding.spec,
             jax.jit(jnp.sum)(short).sharding.spec]
    assert specs == [P("x"), P("x", None), P(None, "x"), P("x"), P("x", None), P()], specs


def check_constraint_of_a_scalar():
    mesh = jax.make_mesh((2,), ("x",))
    out = with_sharding_constraint(1., NamedSharding(mesh, P()))
    assert float(out) == 1.0 and out.shape == () and out.weak_type
    assert out.sharding == NamedSharding(mesh, P())


def check_api_errors_as_jax_words_them():
    auto = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = jax.device_put(np.ones((8, 2)), NamedSharding(auto, P("x", "y")))
    assert _raises(ValueError, lambda: jnp.einsum(
        "xy,yz->xz", x, x.T, out_sharding=NamedSharding(auto, P("x", "y")))) == (
        "PartitionSpec passed to einsum cannot contain axis names that are of type Auto or "
        "Manual. Got PartitionSpec: P('x', 'y') with axis name: x of type: AxisType.Auto.")
    assert _raises(ValueError, lambda: jnp.einsum(
        "xy,yz->xz", x, x.T, out_sharding=P("x", "y"))).startswith(
        "Using PartitionSpec when you are not under a mesh context is not allowed.")
    assert _raises(ValueError, lambda: jax.device_put(np.arange(8), P("x"))) == (
        "Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to device_put")
    manual = jax.sharding.Mesh(jax.devices(), "x", (AxisType.Manual,))
    assert "contains manual axes which is not allowed when using `jax.set_mesh`" in \
        _raises(ValueError, lambda: jax.set_mesh(manual))


def check_constraint_asserts_the_type_under_an_explicit_mesh():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
    with jax.set_mesh(mesh):
        f = jax.jit(lambda x: with_sharding_constraint(x, P("x")))
        assert _raises(AssertionError, lambda: f(jax.device_put(np.arange(8), P()))) == (
            "`with_sharding_constraint` acts as an assert when all axes of mesh are of "
            "type `Explicit`. The array sharding: P(None,) did not match the sharding "
            "provided: P('x',). Please use `jax.sharding.reshard` to shard your input to "
            "the sharding you want.")
        same = f(jax.device_put(np.arange(8), P("x")))
        assert same.sharding == NamedSharding(mesh, P("x"))
    assert _raises(ValueError, lambda: NamedSharding(mesh, P(P.UNCONSTRAINED))).startswith(
        "P(UNCONSTRAINED,) cannot contain `P.UNCONSTRAINED` when no mesh axis_types are "
        "`Auto`.")


def check_mesh_and_placement_arguments():
    assert _raises(ValueError, lambda: jax.make_mesh(((4,), 4), ("x", "y"))).startswith(
        "`axis_shapes` passed to `make_mesh` should be a sequence of ints.")
    assert jax.make_mesh((1, np.int32(1), np.int64(1)), ("x", "y", "z")).axis_sizes == \
        (1, 1, 1)
    one = SingleDeviceSharding(jax.devices()[1])
    out = jax.jit(lambda x: x, out_shardings=one)(jnp.arange(10))
    assert out.committed and out.sharding == one
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
    sds = jax.ShapeDtypeStruct((32,), np.float32,
                               sharding=NamedSharding(mesh.abstract_mesh, P("x")))
    with jax.set_mesh(mesh):
        assert jnp.zeros_like(sds).sharding == NamedSharding(mesh, P("x"))
    sds = jax.ShapeDtypeStruct((4, 4), np.float32, sharding=NamedSharding(mesh, P("x")))
    assert jnp.zeros_like(sds).sharding == NamedSharding(mesh, P("x"))



def check_like_functions_take_a_duck_typed_arrays_sharding():
    """An object with shape, dtype and sharding (a flax hijax Variable) gives its
    committed sharding to zeros_like, as JAX's full_like takes it; an uncommitted one
    (`_committed` False) does not."""
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
    arr = jax.device_put(jnp.ones((4, 2)), NamedSharding(mesh, P("x")))

    class Duck:
        shape, dtype, sharding = (4, 2), np.dtype("float32"), arr.sharding

    class Uncommitted(Duck):
        _committed = False

    assert jnp.zeros_like(Duck()).sharding == NamedSharding(mesh, P("x"))
    assert jnp.zeros_like(Duck(), shape=(4, 2)).sharding == NamedSharding(mesh, P("x"))
    assert jnp.zeros_like(Uncommitted()).sharding == \
        SingleDeviceSharding(jax.devices()[0])

CHECKS = [name for name in dict(globals()) if name.startswith("check_")]


@pytest.fixture(scope="module")
def eight_device_results():
    return checks_in_process("test_typed_placement", N)


@pytest.mark.parametrize("name", CHECKS)
def test_on_eight_devices(eight_device_results, name):
    result = eight_device_results[name]
    assert result == "ok", result

