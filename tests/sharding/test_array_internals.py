"""The Array members JAX's own tests and libraries reach for (`_npy_value`, `_arrays`,
`_check_if_deleted`, `unsafe_buffer_pointer`, `_fully_replicated_shard`), where pmap's
results live, and the sharding checks JAX offers (`check_compatible_aval`). The checks run
in one subprocess with eight CPU devices; expected values are JAX 0.10.2's for the same
programs."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.sharding import Mesh, NamedSharding, PartitionSpec as P

from harness import checks_in_process

N = 8


def _sharded(spec, shape=(8, 2)):
    mesh = jax.make_mesh((4, 2), ("x", "y"))
    value = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    return jax.device_put(value, NamedSharding(mesh, spec)), value


# --- checks run with eight devices --------------------------------------------------------

def check_deleted_arrays_drop_their_values():
    for x in (_sharded(P("x", "y"))[0], jax.device_put(np.arange(3), jax.devices()[0])):
        x.delete()
        with pytest.raises(RuntimeError, match=r"Array has been deleted with shape="):
            x._check_if_deleted()
        assert x._npy_value is None and x._arrays is None


def check_arrays_are_the_blocks():
    x, value = _sharded(P("x"))
    blocks = x._arrays
    assert len(blocks) == N
    for block, shard in zip(blocks, x.addressable_shards):
        assert block.devices() == {shard.device}
        np.testing.assert_array_equal(block, value[shard.index])


def check_fully_replicated_shard():
    x, value = _sharded(P())
    one = x._fully_replicated_shard()
    assert one.shape == (8, 2) and one.sharding.num_devices == 1
    np.testing.assert_array_equal(one, value)
    with pytest.raises(ValueError, match="not fully replicated"):
        _sharded(P("x"))[0]._fully_replicated_shard()


def check_buffer_pointers():
    x = jnp.arange(3)
    assert isinstance(x.unsafe_buffer_pointer(), int)
    sharded, _ = _sharded(P("x"))
    with pytest.raises(jax.errors.JaxRuntimeError, match="only for unsharded arrays"):
        sharded.unsafe_buffer_pointer()
    pointers = {s.data.unsafe_buffer_pointer() for s in sharded.addressable_shards}
    assert len(pointers) == N


def check_shards_keep_commitment():
    x = jnp.array([1, 2, 3])
    assert [s.data._committed for s in x.addressable_shards] == [False]
    y = jax.device_put(x, jax.devices()[1])
    assert [s.data._committed for s in y.addressable_shards] == [True]


def check_copies_stay_where_the_array_is():
    x, _ = _sharded(P("x", "y"))
    copy = jnp.array(x, copy=True)
    assert copy._committed and copy.sharding == x.sharding
    for a, c in zip(x.addressable_shards, copy.addressable_shards):
        assert (a.device, a.index) == (c.device, c.index)
        assert a.data.unsafe_buffer_pointer() != c.data.unsafe_buffer_pointer()
    on_one = jax.device_put(jnp.arange(3.0), jax.devices()[2])
    assert jnp.copy(on_one).devices() == {jax.devices()[2]} and jnp.copy(on_one)._committed


def check_scalars_go_on_a_mesh():
    mesh = jax.make_mesh((8,), ("x",))
    x = jax.device_put(np.float32(3), NamedSharding(mesh, P()))
    assert float(x) == 3.0 and float(x + 1) == 4.0


def check_pmap_results_are_sharded_over_the_replicas():
    # JAX: NamedSharding(mesh=Mesh('x': n), spec=P('x',)) whatever the out axis's position
    for shape, axis, n in [((4, 2), 0, 4), ((4, 2), 1, 2), ((4, 2, 4), 2, 4)]:
        out = jax.pmap(lambda v: v, in_axes=axis, axis_name="x")(
            jnp.arange(np.prod(shape)).reshape(shape))
        assert out.sharding == NamedSharding(Mesh(jax.devices()[:n], "x"), P("x"))
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    moved = jax.pmap(lambda v: v, out_axes=1, axis_name="x")(x)
    assert moved.sharding.spec == P(None, "x") and moved.shape == (8, 8)
    np.testing.assert_array_equal(moved, x.T)
    unmapped = jax.pmap(lambda v: v, out_axes=None, axis_name="x")(x)
    assert unmapped.sharding == NamedSharding(Mesh(jax.devices(), "x"), P())
    # each device keeps its own replica's value, as in JAX
    assert [np.asarray(s.data).tolist() for s in unmapped.addressable_shards] == x.tolist()
    anonymous = jax.pmap(lambda v: v)(np.zeros(3))
    assert repr(anonymous.sharding.spec) == "P('_internal_pmap_axis_name',)"
    f = jax.pmap(lambda v: v)
    assert f(f(np.zeros(8))).sharding is f(np.zeros(8)).sharding


def check_pmap_passes_float0_values():
    from pyjax._src import dtypes
    same = jax.pmap(lambda v: v)(np.zeros(N, dtypes.float0))
    assert same.dtype == dtypes.float0 and same.shape == (N,)
    made = jax.pmap(lambda v: jnp.array(b"", dtype=dtypes.float0))(np.ones(N))
    assert made.dtype == dtypes.float0 and made.shape == (N,)


def check_jit_of_pmap_takes_sharded_arguments():
    foo = jax.jit(jax.pmap(lambda v: v + v))
    x = np.ones((2, 2, 2), np.float32)
    for _ in range(3):
        x = foo(x)
    np.testing.assert_array_equal(x, np.full((2, 2, 2), 8.0))
    assert x.sharding.spec == P("_internal_pmap_axis_name")


def check_xla_sharding_of_a_named_sharding():
    mesh = jax.make_mesh((4, 2), ("x", "y"))
    hlo = NamedSharding(mesh, P("y", "x"))._to_xla_hlo_sharding(2)
    assert hlo.is_tiled()
    assert hlo.tile_assignment_dimensions() == [2, 4]
    assert hlo.tile_assignment_devices() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert mesh._flat_devices_tuple == tuple(jax.devices())


def check_single_device_arrays_must_be_blocks():
    mesh = jax.make_mesh((2,), ("x",))
    s = NamedSharding(mesh, P("x"))
    x = jax.device_put(jnp.arange(10), s)
    with pytest.raises(ValueError, match=r"must have one shard each. An argument array "
                                         r"had 2 shard\(s\)"):
        jax.make_array_from_single_device_arrays(x.shape, s, [x, x])
    one = jnp.arange(10)
    with pytest.raises(ValueError, match="requires a list of concrete arrays"):
        jax.jit(lambda v: jax.make_array_from_single_device_arrays(
            v.shape, one.sharding, [v]))(one)


def check_callbacks_of_traced_values_are_refused():
    mesh = jax.make_mesh((2,), ("x",))
    s = NamedSharding(mesh, P("x"))
    with pytest.raises(jax.errors.UnexpectedTracerError,
                       match="cannot be called within a traced context"):
        jax.jit(lambda v: jax.make_array_from_callback(v.shape, s, lambda i: v[i]))(
            jnp.arange(4))


def check_rows_stay_where_the_array_is():
    # JAX: rows of a committed array are committed to its device; on a one-device (or
    # replicated) mesh they stay on it; rows of split blocks come uncommitted.
    x = jax.device_put(np.arange(6).reshape(3, 2), jax.devices()[1])
    assert all(r._committed and r.devices() == {jax.devices()[1]} for r in x)
    assert [r._committed for r in jnp.arange(6).reshape(3, 2)] == [False] * 3
    one = Mesh(np.array(jax.devices()[1:2]), ("x",))
    y = jax.device_put(np.arange(16).reshape(8, 2), NamedSharding(one, P("x")))
    rows = list(y)
    assert all(r._committed and r.devices() == {jax.devices()[1]} for r in rows)
    np.testing.assert_array_equal(rows[3], [6, 7])
    split, _ = _sharded(P("x", "y"))
    assert [r._committed for r in split] == [False] * 8


def check_shape_dtype_struct_like():
    assert jax.ShapeDtypeStruct.like(jnp.arange(8)).sharding is None   # uncommitted
    on_zero = jax.device_put(jnp.arange(8), jax.devices()[0])
    assert jax.ShapeDtypeStruct.like(on_zero).sharding == \
        jax.sharding.SingleDeviceSharding(jax.devices()[0])
    mesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
    x = jax.device_put(jnp.arange(8), NamedSharding(mesh, P("x")))
    assert jax.ShapeDtypeStruct.like(x).sharding == NamedSharding(mesh, P("x"))

    @jax.jit
    def ones_like_it(a):
        sds = jax.ShapeDtypeStruct.like(a)   # the type's sharding, on the abstract mesh
        assert sds.sharding.spec == P("x")
        return jnp.ones(sds.shape, sds.dtype, out_sharding=sds.sharding)
    with jax.set_mesh(mesh):
        out = ones_like_it(x)
    assert out.sharding == NamedSharding(mesh, P("x"))
    np.testing.assert_array_equal(out, np.ones(8))


def check_cotangents_of_device_put_go_back_to_the_source():
    d0, d1 = jax.devices()[:2]
    x = jax.device_put(2.0, d0)
    y, x_bar = jax.value_and_grad(lambda v: jax.device_put(v, d1))(x)
    assert y.devices() == {d1} and y._committed
    assert x_bar.devices() == {d0} and x_bar._committed and float(x_bar) == 1.0


def check_empty_index_results_stay_on_device():
    d1 = jax.devices()[1]
    x = jnp.asarray([1], device=d1)
    for empty in (x[jnp.asarray([False], device=d1)], x[1:1]):
        assert empty.shape == (0,) and empty.device == d1 and empty._committed


def check_key_arrays_from_blocks():
    mesh = jax.make_mesh((N,), ("x",))
    s = NamedSharding(mesh, P("x"))
    keys = jax.random.split(jax.random.key(0), N)
    blocks = [jax.device_put(keys[i:i + 1], d) for i, d in enumerate(jax.devices())]
    made = jax.make_array_from_single_device_arrays((N,), s, blocks)
    assert made.dtype == keys.dtype and made.sharding == s
    np.testing.assert_array_equal(jax.random.key_data(made), jax.random.key_data(keys))
    called = jax.make_array_from_callback((N,), s, lambda index: keys[index])
    np.testing.assert_array_equal(jax.random.key_data(called), jax.random.key_data(keys))


CHECKS = sorted(name for name in dict(globals()) if name.startswith("check_"))


@pytest.fixture(scope="module")
def eight_device_results():
    return checks_in_process("test_array_internals", N)


@pytest.mark.parametrize("name", CHECKS)
def test_on_eight_devices(eight_device_results, name):
    result = eight_device_results[name]
    assert result == "ok", result


# --- in this process ---------------------------------------------------------------------

def test_host_values_and_deletion():
    x = jnp.arange(4.0)
    np.asarray(x)
    assert x._npy_value is None or np.array_equal(x._npy_value, np.arange(4.0))
    x.delete()
    assert x._npy_value is None and x._arrays is None
    # JAX 0.10.2 refuses to wait on it: "BlockHostUntilReady() called on deleted or donated
    # buffer" (a RuntimeError), from the method and from jax.block_until_ready alike.
    for wait in (x.block_until_ready, lambda: jax.block_until_ready(x),
                 lambda: jax.block_until_ready([x])):
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            wait()


def test_dtype_of_an_array_is_deprecated():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert np.dtype(jnp.arange(3)) == np.dtype("int32")
    assert [w.category for w in caught] == [DeprecationWarning]
    assert "Implicit conversion of an array to a dtype is deprecated" in str(caught[0].message)


def test_check_compatible_aval():
    mesh = jax.make_mesh((1, 1, 1), ("replica", "data", "mdl"))
    NamedSharding(mesh, P("mdl")).check_compatible_aval((8, 2))
    with pytest.raises(ValueError, match=r"is only valid for values of rank at least 4, "
                                         r"but was applied to a value of rank 2\.$"):
        NamedSharding(mesh, P(None, ("mdl",), None, None)).check_compatible_aval((8, 2))
    with pytest.raises(ValueError, match=r"For scalars the PartitionSpec should be P\(\)"):
        NamedSharding(mesh, P("mdl")).check_compatible_aval(())
    jax.sharding.SingleDeviceSharding(jax.devices()[0]).check_compatible_aval((1, 2, 3))


def test_process_local_data_is_a_pytree():
    data = {"a": np.arange(10).reshape(2, 5)}
    for global_shape in (None, (2, 5), {"a": (2, 5)}):
        out = jax.make_array_from_process_local_data(jax.devices()[0], data, global_shape)
        np.testing.assert_array_equal(out["a"], data["a"])
    for global_shape in ((2, 8), {"a": (2, 6)}, {"a": (2, 5), "b": (3, 5)}):
        with pytest.raises(ValueError):
            jax.make_array_from_process_local_data(jax.devices()[0], data, global_shape)


def test_abstract_shardings_name_a_memory():
    mesh = jax.sharding.AbstractMesh((2,), ("x",))
    assert NamedSharding(mesh, P()).memory_kind is None
    pinned = NamedSharding(mesh, P(), memory_kind="pinned_host")
    assert pinned.memory_kind == "pinned_host" and pinned != NamedSharding(mesh, P())
    assert repr(pinned) == ("NamedSharding(mesh=AbstractMesh('x': 2, axis_types=(Auto,)), "
                            "spec=P(), memory_kind=pinned_host)")
    with pytest.raises(ValueError, match="Got invalid memory kind: weird_device. Valid "
                                         "memory kinds are: device, pinned_host"):
        NamedSharding(mesh, P(), memory_kind="weird_device")


def test_types_keep_only_explicit_axes():
    A = jax.sharding.AxisType
    mesh = jax.sharding.AbstractMesh((2, 2, 2, 2), ("a", "b", "c", "d"),
                                     axis_types=(A.Explicit, A.Explicit, A.Auto, A.Manual))
    aval = jax.core.ShapedArray((16, 8, 4, 2), np.float32)
    # JAX 0.10.2's specs for the same updates
    for spec, typed in [(P(("a", "b", "c"), "d"), P(("a", "b"), None, None, None)),
                        (P(("a", "c"), "b", "d"), P("a", "b", None, None)),
                        (P(("c", "a"), None, "b"), P("a", None, "b", None)),
                        (P("c"), P(None, None, None, None))]:
        assert aval.update(sharding=NamedSharding(mesh, spec)).sharding.spec == typed


def test_manual_axis_types_are_frozen():
    from pyjax._src.core.avals import ManualAxisType
    mat = ManualAxisType(varying={"x"})
    with pytest.raises(AttributeError):
        mat.varying = {"y"}
    assert mat == ManualAxisType(varying=("x",)) and mat.varying == {"x"}
