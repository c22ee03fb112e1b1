"""jax.sharding on 8 CPU devices: meshes and shardings as data, sharded arrays, eager ops
and jit partitioned by XLA's SPMD partitioner (Shardy), with_sharding_constraint. The
checks run in one subprocess with eight devices (the count is fixed when XLA starts);
each is reported as its own test. Expected reprs and shardings are JAX 0.10.2's for the
same programs."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P
from pyjax.sharding import SingleDeviceSharding

from harness import checks_in_process, close
from repo_paths import REPO_ROOT

N = 8
AUTO = (AxisType.Auto, AxisType.Auto)


def _mesh(names=("x", "y")):
    return jax.make_mesh((4, 2), names, axis_types=AUTO)


def _named(spec, names=("x", "y")):
    return NamedSharding(_mesh(names), spec)


def _spec_of(x):
    return repr(x.sharding.spec)


# --- checks run with eight devices ------------------------------------------------------

def check_reprs_match_jax():
    mesh = _mesh()
    assert repr(mesh) == ("Mesh(axis_sizes=(4, 2), axis_names=('x', 'y'), "
                          "axis_types=(Auto, Auto))")
    assert str(mesh) == "Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))"
    assert repr(jax.make_mesh((8,), ("d",))) == \
        "Mesh(axis_sizes=(8,), axis_names=('d',), axis_types=(Explicit,))"
    assert repr(NamedSharding(mesh, P("x", "y"))) == (
        "NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), "
        "spec=P('x', 'y'), memory_kind=device)")
    assert repr(SingleDeviceSharding(jax.devices()[1])) == \
        "SingleDeviceSharding(device=CpuDevice(id=1), memory_kind=device)"
    assert repr(jnp.ones(3).sharding) == \
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    reversed_mesh = jax.make_mesh((2, 4), ("a", "b"), devices=jax.devices()[::-1])
    assert reversed_mesh.device_ids.tolist() == [[7, 6, 5, 4], [3, 2, 1, 0]]


def check_mesh_and_sharding_data():
    mesh = _mesh()
    assert list(mesh.shape.items()) == [("x", 4), ("y", 2)]
    assert mesh.axis_sizes == (4, 2) and mesh.size == 8 and mesh.devices.shape == (4, 2)
    same = Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    assert same == mesh and hash(same) == hash(mesh)
    a, b = NamedSharding(mesh, P("x")), NamedSharding(mesh, P("x", None))
    assert a != b and hash(a) == hash(b) and a.is_equivalent_to(b, 2)
    assert a == NamedSharding(same, P("x"))
    assert a.shard_shape((8, 2)) == (2, 2) and a.num_devices == 8
    assert a.device_set == set(jax.devices()) and a.memory_kind == "device"
    assert not a.is_fully_replicated and NamedSharding(mesh, P()).is_fully_replicated
    xy = NamedSharding(mesh, P("x", "y"))
    assert xy.devices_indices_map((8, 4))[jax.devices()[1]] == (slice(0, 2), slice(2, 4))
    assert xy.devices_indices_map((8, 4))[jax.devices()[6]] == (slice(6, 8), slice(0, 2))
    assert SingleDeviceSharding(jax.devices()[0]).devices_indices_map((2, 3)) == \
        {jax.devices()[0]: (slice(None), slice(None))}


def check_spec_errors_match_jax():
    mesh = _mesh()
    with pytest.raises(ValueError, match=r"Resource axis: z of P\('z',\) is not found in "
                                         r"mesh: \('x', 'y'\)."):
        NamedSharding(mesh, P("z"))
    with pytest.raises(ValueError, match="has duplicate entries for `x`"):
        NamedSharding(mesh, P("x", "x"))
    with pytest.raises(ValueError, match=r"implies that array axis 0 is partitioned 4 "
                                         r"times, but the dimension size is 5"):
        jax.device_put(np.ones((5, 3)), NamedSharding(mesh, P("x")))


def check_device_put_and_shards():
    data = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    x = jax.device_put(data, _named(P("x")))
    assert x.committed and x.shape == (8, 2) and x.dtype == np.float32
    assert repr(x.sharding) == repr(_named(P("x")))
    assert x.device == x.sharding and x.devices() == set(jax.devices())
    np.testing.assert_array_equal(np.asarray(x), data)
    assert str(x) == str(data)
    shard = x.addressable_shards[3]
    assert (shard.device, shard.index, shard.replica_id) == \
        (jax.devices()[3], (slice(2, 4), slice(None)), 1)
    assert repr(shard) == ("Shard(device=CpuDevice(id=3), index=(slice(2, 4, None), "
                           "slice(None, None, None)), replica_id=1, data=[[4. 5.]\n [6. 7.]])")
    part = x.addressable_data(3)
    assert part.tolist() == [[4.0, 5.0], [6.0, 7.0]]
    assert part.sharding == SingleDeviceSharding(jax.devices()[3])
    assert x.is_fully_addressable and not x.is_fully_replicated
    model = jax.device_put(np.ones(8), _named(P("y")))
    assert [(s.device.id, s.index, s.replica_id) for s in model.addressable_shards] == [
        (0, (slice(0, 4),), 0), (1, (slice(4, 8),), 0), (2, (slice(0, 4),), 1),
        (3, (slice(4, 8),), 1), (4, (slice(0, 4),), 2), (5, (slice(4, 8),), 2),
        (6, (slice(0, 4),), 3), (7, (slice(4, 8),), 3)]
    replicated = jax.device_put(x, _named(P()))
    assert replicated.is_fully_replicated and _spec_of(replicated) == "P()"
    np.testing.assert_array_equal(replicated, data)
    single = jax.device_put(x, jax.devices()[3])
    assert single.sharding == SingleDeviceSharding(jax.devices()[3])
    np.testing.assert_array_equal(single, data)
    tree = jax.device_put({"a": data, "b": data}, {"a": _named(P("x")), "b": _named(P())})
    assert _spec_of(tree["a"]) == "P('x',)" and _spec_of(tree["b"]) == "P()"


def check_make_array_helpers():
    data = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    s = _named(P("x"))
    a = jax.make_array_from_callback((8, 2), s, lambda index: data[index])
    assert a.sharding == s and a.dtype == np.float32
    np.testing.assert_array_equal(a, data)
    b = jax.make_array_from_single_device_arrays(
        (8, 2), s, [shard.data for shard in a.addressable_shards])
    assert b.sharding == s and float(np.asarray(b).sum()) == 120.0
    c = jax.make_array_from_process_local_data(s, data)
    assert c.sharding == s
    np.testing.assert_array_equal(c, data)
    with pytest.raises(ValueError, match="Expected shard shape"):
        jax.make_array_from_single_device_arrays(
            (8, 2), s, [jax.device_put(jnp.ones((3, 2)), d) for d in jax.devices()])


def check_eager_ops_propagate_like_jax():
    data = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    x = jax.device_put(data, _named(P("x", "y")))
    close(jnp.sin(x), np.sin(data))
    assert _spec_of(jnp.sin(x)) == "P('x', 'y')" and _spec_of(x * 2) == "P('x', 'y')"
    assert _spec_of(jnp.sum(x, 0)) == "P('y',)" and _spec_of(jnp.sum(x, 1)) == "P('x',)"
    close(jnp.sum(x, 0), data.sum(0))
    rows = jax.device_put(data[:, :2], _named(P("x")))
    assert _spec_of(rows.T) == "P(None, 'x')" and _spec_of(jnp.sum(rows)) == "P()"
    assert _spec_of(rows + np.ones((8, 2), np.float32)) == "P('x',)"
    on_one = jax.device_put(np.ones((8, 2), np.float32), jax.devices()[0])
    with pytest.raises(ValueError, match=r"Received incompatible devices for jitted "
                                         r"computation.*device ids \[0\]"):
        rows + on_one


def check_jit_with_shardings():
    mesh = _mesh()
    a, b = NamedSharding(mesh, P("x")), NamedSharding(mesh, P(None, "y"))
    data = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    x = jax.device_put(data, a)
    host = np.ones((8, 2), np.float32)
    assert _spec_of(jax.jit(lambda p, q: p + q)(x, host)) == "P('x',)"
    assert jax.jit(lambda p: p * 2)(host).sharding == SingleDeviceSharding(jax.devices()[0])
    assert _spec_of(jax.jit(lambda p: p * 2, out_shardings=a)(host)) == "P('x',)"
    assert _spec_of(jax.jit(lambda p: p * 2, in_shardings=a)(host)) == "P('x',)"
    assert _spec_of(jax.jit(lambda p: p.sum(0))(x)) == "P()"
    close(jax.jit(lambda p: p.sum(0))(x), data.sum(0))
    with pytest.raises(ValueError, match="(?s)Sharding passed to jit does not match the "
                                         "sharding on the respective arg.*float32"):
        jax.jit(lambda v: v * 2, in_shardings=b)(x)
    pair = jax.jit(lambda p: (p + 1, p), out_shardings=(a, None)).lower(x).compile()
    assert [_spec(s) for s in pair.output_shardings] == ["P('x',)", "P('x',)"]
    (ins,), kwargs = pair.input_shardings
    assert kwargs == {} and ins == a
    out, same = pair(x)
    close(out, data + 1)
    close(same, data)
    replicated = jax.jit(lambda v: v, out_shardings=NamedSharding(mesh, P(None)))
    assert _spec(replicated.lower(np.ones(4)).compile().output_shardings) == "P(None,)"


def _spec(sharding):
    return repr(sharding.spec)


def check_lowered_text_carries_shardy_shardings():
    mesh = _mesh()
    permuted = Mesh(np.array(jax.devices()).reshape(2, 4)[:, ::-1], ("a", "b"))
    text = jax.jit(lambda p: p + 1, in_shardings=NamedSharding(permuted, P("b"))).lower(
        np.ones((8,), np.float32)).as_text()
    assert "mhlo.num_partitions = 8 : i32" in text
    assert 'sdy.mesh @mesh = <["a"=2, "b"=4]>' in text
    assert '%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}' in text
    out = jax.jit(lambda p: p + 1, in_shardings=NamedSharding(permuted, P("b")))(
        np.arange(8, dtype=np.float32))
    close(out, np.arange(1, 9, dtype=np.float32))
    flat = NamedSharding(mesh, P(("x", "y")))
    text = jax.jit(lambda p: p + 1, out_shardings=flat).lower(np.ones(8, np.float32)).as_text()
    assert ('-> (tensor<8xf32> {jax.result_info = "result", '
            'sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>})') in text


def check_with_sharding_constraint():
    mesh = _mesh()
    a, b = NamedSharding(mesh, P("x")), NamedSharding(mesh, P(None, "y"))
    data = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    x = jax.device_put(data, a)
    f = jax.jit(lambda p: jax.lax.with_sharding_constraint(p * 2, b) + 1)
    assert _spec_of(f(x)) == "P(None, 'y')"
    close(f(x), data * 2 + 1)
    assert 'sdy.sharding_constraint' in f.lower(x).as_text()
    assert '<@mesh, [{}, {"y"}]>' in f.lower(x).as_text()
    # uncommitted input: the constraint alone makes the program partitioned
    g = jax.jit(lambda p: jax.lax.with_sharding_constraint(p, a) * 3)
    assert _spec_of(g(data)) == "P('x',)"
    close(g(data), data * 3)
    eager = jax.lax.with_sharding_constraint(data, a)
    assert eager.sharding == a
    with jax.set_mesh(mesh):
        assert _spec_of(jax.jit(lambda p: jax.lax.with_sharding_constraint(
            p, P("x", "y")))(data)) == "P('x', 'y')"
    close(jax.grad(lambda p: jnp.sum(jax.lax.with_sharding_constraint(p, a) ** 2))(data),
          2 * data)
    close(jax.vmap(lambda r: jax.lax.with_sharding_constraint(r, NamedSharding(
        mesh, P("y"))))(data), data)


def check_data_and_model_parallel_mlp_grad():
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=AUTO)
    xs = NamedSharding(mesh, P("data", None))
    ws = NamedSharding(mesh, P(None, "model"))
    rng = np.random.RandomState(0)
    xv, wv = rng.randn(8, 4).astype(np.float32), rng.randn(4, 6).astype(np.float32)
    x, w = jax.device_put(xv, xs), jax.device_put(wv, ws)
    assert _spec_of(x @ w) == "P('data', 'model')"

    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    g = jax.jit(jax.grad(loss))(w, x)
    assert _spec_of(g) == "P(None, 'model')"
    assert _spec_of(jax.jit(loss)(w, x)) == "P()"
    close(g, jax.grad(loss)(wv, xv))
    close(jax.jit(loss)(w, x), loss(wv, xv))


def check_donation_and_caching():
    s = _named(P("x"))
    f = jax.jit(lambda v: v * 2, in_shardings=s, out_shardings=s, donate_argnums=0)
    x = jax.device_put(np.ones((8, 2), np.float32), s)
    y = f(x)
    assert x.is_deleted()
    close(y, np.full((8, 2), 2.0))
    assert f._cache_size() == 1
    f(jax.device_put(np.ones((8, 2), np.float32), s))
    assert f._cache_size() == 1


def check_bare_specs_follow_the_current_mesh():
    # jit keeps its leaf shardings per trace and per current mesh: the same jitted
    # function under another mesh lays its arguments out over that mesh.
    f = jax.jit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P("x"))
    wide = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    reversed_mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,),
                                  devices=jax.devices()[::-1])
    for mesh in (_mesh(), wide, reversed_mesh, _mesh()):
        with jax.set_mesh(mesh):
            out = f(np.arange(16.0))
        assert out.sharding == NamedSharding(mesh, P("x")), (out.sharding, mesh)
        assert [s.device.id for s in out.addressable_shards] == \
            [d.id for d in mesh.devices.flat]
        np.testing.assert_array_equal(np.asarray(out), np.arange(16.0) * 2)


def check_lower_from_shape_dtype_structs_like_jax():
    # A ShapeDtypeStruct's sharding is the argument's; one without is uncommitted. The
    # shardings below are what JAX 0.10.2 gives for the same program.
    s = _named(P("x", "y"))
    sds = jax.ShapeDtypeStruct((8, 2), np.int32, sharding=s)
    assert repr(sds) == ("ShapeDtypeStruct(shape=(8, 2), dtype=int32, sharding=NamedSharding("
                         "mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)), spec=P('x', "
                         "'y'), memory_kind=device))")
    assert sds != jax.ShapeDtypeStruct((8, 2), np.int32)
    lowered = jax.jit(lambda a, b: (a * 2, b * 2)).lower(
        sds, jax.ShapeDtypeStruct((8, 2), np.int32))
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>' in lowered.as_text()
    assert lowered.out_info[0].sharding is None
    compiled = lowered.compile()
    data = np.arange(16, dtype=np.int32).reshape(8, 2)
    a, b = compiled(jax.device_put(data, s), data)
    assert a.sharding == s and b.sharding == _named(P())
    close(a, data * 2)
    close(b, data * 2)
    assert compiled.out_info[0].sharding == s and compiled.out_info[1].shape == (8, 2)
    traced = jax.jit(lambda v, w: v).trace(np.arange(3.0), w=np.int32(1))
    assert repr(traced.in_avals) == \
        "((ShapedArray(float32[3]),), {'w': ShapedArray(int32[])})"
    with pytest.raises(TypeError, match="ShapeDtypeStruct"):   # calls need values
        jax.jit(lambda v: v)(sds)


def check_sharding_argument_errors_match_jax():
    mesh = _mesh()
    with pytest.raises(ValueError, match="Unconstrained dims are not allowed when passed "
                                         "to jit's in_shardings"):
        jax.jit(lambda v: v, in_shardings=NamedSharding(mesh, P(P.UNCONSTRAINED, "x")))
    with pytest.raises(ValueError, match="Unconstrained dims are not allowed"):
        jax.jit(lambda v: v, out_shardings=P(P.UNCONSTRAINED))
    with pytest.raises(TypeError, match="Unexpected None"):
        NamedSharding(mesh, None)
    with pytest.raises(ValueError, match="only valid for values of rank at least 3, but "
                                         "was applied to a value of rank 2"):
        jax.ShapeDtypeStruct((8, 8), np.float32, sharding=P(None, "x", None))
    sds = jax.ShapeDtypeStruct((8, 2), np.float32, sharding=P("x"))
    with jax.set_mesh(mesh):   # a bare spec names the mesh where it is read
        assert sds.sharding == NamedSharding(mesh, P("x"))
    with pytest.raises(TypeError, match="the context mesh cannot be empty"):
        assert sds.sharding is None   # raises
    # eager with_sharding_constraint onto other devices than x's (JAX's message)
    first_two = jax.sharding.Mesh(jax.devices()[:2], "x")
    swapped = jax.sharding.Mesh([jax.devices()[1], jax.devices()[0]], "x")
    x = jax.device_put(np.arange(8), NamedSharding(first_two, P()))
    with pytest.raises(ValueError, match=r"Received incompatible devices for jitted "
                       r"computation. Got argument x of with_sharding_constraint with shape "
                       r"int32\[8\] and with device ids \[0, 1\] on platform CPU and "
                       r"explicit output sharding with device ids \[1, 0\]"):
        jax.lax.with_sharding_constraint(x, NamedSharding(swapped, P("x")))
    moved = jax.lax.with_sharding_constraint(np.arange(8), NamedSharding(swapped, P("x")))
    assert [s.device.id for s in moved.addressable_shards] == [1, 0]


def check_visualize_and_inspect_array_sharding():
    import contextlib
    import io
    x = jax.device_put(np.arange(8.0), _named(P("y")))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        jax.debug.visualize_array_sharding(x)
    # JAX 0.10.2 prints these diagrams
    assert printed.getvalue() == ("┌───────────┬───────────┐\n"
                                  "│CPU 0,2,4,6│CPU 1,3,5,7│\n"
                                  "└───────────┴───────────┘\n")
    grid = io.StringIO()
    with contextlib.redirect_stdout(grid):
        jax.debug.visualize_array_sharding(jax.device_put(np.ones((8, 4)), _named(P("x", "y"))))
    assert grid.getvalue().splitlines()[-2:] == ["│ CPU 6 │ CPU 7 │", "└───────┴───────┘"]
    seen = []
    jax.debug.inspect_array_sharding({"a": x}, callback=seen.append)
    assert seen == [x.sharding]
    with pytest.raises(ValueError, match="1 and 2 dimensions"):
        jax.debug.visualize_array_sharding(jnp.ones((2, 2, 2)))


def check_inspect_array_sharding_inside_jit():
    # the shardings XLA's partitioner chose, as JAX 0.10.2 reports them for this program
    mesh = _mesh()
    seen = []

    def f(x):
        jax.debug.inspect_array_sharding(x, callback=seen.append)
        y = jnp.sin(x) @ x.T
        jax.debug.inspect_array_sharding(y, callback=seen.append)
        return y

    x = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("x", "y")))
    jax.jit(f)(x)
    assert [s.spec for s in seen] == [P("x", "y"), P("x")] and seen[0].mesh == mesh
    seen.clear()
    jax.jit(jax.grad(lambda x: f(x).sum()))(x)
    assert [s.spec for s in seen] == [P("x", "y"), P("x")]
    seen.clear()
    batch = jax.device_put(np.ones((2, 8, 4), np.float32), NamedSharding(mesh, P(None, "x", "y")))
    jax.jit(jax.vmap(f))(batch)
    assert [s.spec for s in seen] == [P(None, "x", "y"), P(None, "x")]
    seen.clear()
    body = jax.shard_map(f, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", None),
                         check_vma=False)
    jax.jit(body)(x)    # manual values: P() over the mesh
    assert [(s.spec, s.mesh) for s in seen] == [(P(), mesh)] * 2
    seen.clear()
    on_three = jax.device_put(np.ones((8, 4), np.float32), jax.devices()[3])
    jax.jit(f)(on_three)
    assert [s.device_set for s in seen] == [{jax.devices()[3]}] * 2


def check_partitioned_debug_print_shows_each_devices_block():
    import contextlib
    import io
    mesh = jax.make_mesh((2,), ("z",), axis_types=(AxisType.Auto,))
    x = jax.device_put(np.arange(24).reshape(2, 3, 4), NamedSharding(mesh, P(None, None, "z")))

    def show(f, *args):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            f(*args)
            jax.effects_barrier()
        return printed.getvalue()

    # JAX 0.10.2: one print per device with its (2, 3, 2) block, in either order
    out = show(jax.jit(lambda x: jax.debug.print("b: {}", x[0], partitioned=True)), x)
    assert sorted(out.split("b: ")[1:]) == ["[[ 2  3]\n [ 6  7]\n [10 11]]\n",
                                           "[[0 1]\n [4 5]\n [8 9]]\n"]
    # vmapped: once per example and device
    out = show(jax.jit(jax.vmap(lambda r: jax.debug.print("r: {}", r[0], partitioned=True))), x)
    assert sorted(out.splitlines()) == ["r: [0 1]", "r: [12 13]", "r: [14 15]", "r: [2 3]"]
    # outside jit the whole value, as without partitioned
    assert show(lambda: jax.debug.print("e: {}", x[0, 0], partitioned=True)) == "e: [0 1 2 3]\n"
    seen = []
    jax.jit(lambda x: jax.debug.callback(lambda v: seen.append(v.shape), x,
                                         partitioned=True))(x)
    jax.effects_barrier()
    assert seen == [(2, 3, 2)] * 2


def check_shard_map_over_one_device_runs_callbacks():
    # manual axes of size 1 need no manual computation (as in JAX, whose module has none)
    from pyjax.experimental import io_callback
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    seen = []

    def body(ids, x):
        io_callback(lambda i, v: seen.append((int(i[0]), v.tolist())), None, ids, x,
                    ordered=True)
        return x * 2

    f = jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    out = jax.jit(f)(jnp.arange(1), jnp.arange(4))
    jax.effects_barrier()
    assert out.tolist() == [0, 2, 4, 6] and seen == [(0, [0, 1, 2, 3])]


def check_host_local_and_global_arrays_in_one_process():
    from pyjax.experimental import multihost_utils
    mesh = _mesh()
    local = np.arange(16.0).reshape(8, 2)
    tree = multihost_utils.host_local_array_to_global_array(
        {"a": local, "b": [local]}, mesh, P("x"))
    # JAX 0.10.2: {'a': ((8, 2), P('x',)), 'b': [((8, 2), P('x',))]}
    assert jax.tree.map(lambda v: (v.shape, v.sharding.spec), tree) == \
        {"a": ((8, 2), P("x")), "b": [((8, 2), P("x"))]}
    np.testing.assert_array_equal(tree["b"][0], local)
    arr = jax.device_put(local, NamedSharding(mesh, P("x", "y")))
    assert multihost_utils.global_array_to_host_local_array(arr, mesh, P("x", "y")) is arr
    moved = multihost_utils.global_array_to_host_local_array(arr, mesh, P())
    assert moved.sharding.spec == P() and np.array_equal(moved, local)
    with pytest.raises(ValueError, match="not found in mesh"):
        multihost_utils.host_local_array_to_global_array(local, mesh, P("z"))


CHECKS = [name for name in dict(globals()) if name.startswith("check_")]


@pytest.fixture(scope="module")
def eight_device_results():
    return checks_in_process("test_sharding", N)


@pytest.mark.parametrize("name", CHECKS)
def test_on_eight_devices(eight_device_results, name):
    result = eight_device_results[name]
    assert result == "ok", result


# --- in this process (whatever its device count) ----------------------------------------

def test_partition_spec_is_jax_like():
    assert repr(P("x", None)) == "P('x', None)" and repr(P(("x", "y"),)) == "P(('x', 'y'),)"
    assert repr(P()) == "P()" and repr(P(None, "x")) == "P(None, 'x')"
    assert P("x") != P("x", None) and hash(P("x")) == hash(P("x", None))
    assert tuple(P("x", None)) == ("x", None) and len(P("x", None)) == 2
    assert repr(P("x", P.UNCONSTRAINED)) == "P('x', UNCONSTRAINED)"
    assert not isinstance(P("x"), tuple)


def test_spec_with_unreduced_axes_joins_specs_but_not_tuples():
    # JAX 0.10.2's results and TypeErrors
    assert P("x", unreduced={"z"}) + P("a", unreduced={"b"}) == P("x", "a",
                                                                  unreduced={"z", "b"})
    assert P("x") + (None,) == P("x", None) and (None,) + P("x") == P(None, "x")
    with pytest.raises(TypeError, match=r"^other \(None, None\) cannot be of instance "
                       r"`tuple` when self P\('x', unreduced=\{'z'\}\) has unreduced "
                       r"in `__add__` of PartitionSpec\.$"):
        P("x", unreduced={"z"}) + (None,) * 2
    with pytest.raises(TypeError, match="has reduced in `__radd__` of PartitionSpec"):
        (None,) * 2 + P("x", reduced={"y"})


def test_aval_takes_manual_axis_type_and_prints_long_dtypes():
    mesh = jax.sharding.AbstractMesh((2, 2, 2), ("a", "b", "c"), axis_types=(
        AxisType.Explicit, AxisType.Explicit, AxisType.Manual))
    aval = jax.core.ShapedArray(
        (1, 1), np.float32, sharding=NamedSharding(mesh, P(unreduced={"a"}, reduced={"b"})),
        manual_axis_type=jax.core.ManualAxisType(varying={"c"}))
    assert aval.manual_axis_type.varying == {"c"}
    assert aval.str_short(True) == "f32[1,1]{V:c, U:a, R:b}"   # JAX 0.10.2's texts
    assert jax.core.ShapedArray((8,), np.float32).str_short(False) == "float32[8]"


def test_bare_spec_needs_a_mesh():
    with pytest.raises(ValueError, match="not under a mesh context is not allowed"):
        jax.lax.with_sharding_constraint(np.ones(2), P("x"))
    with pytest.raises(ValueError, match="Please set a mesh via `jax.set_mesh` if a "
                       "PartitionSpec is passed to device_put"):
        jax.device_put(np.arange(8), P("x"))


def test_mesh_needs_enough_devices():
    n = jax.device_count() * 2
    with pytest.raises(ValueError, match=f"jax_num_cpu_devices', {n}"):
        jax.make_mesh((n,), ("x",))


def test_make_mesh_takes_one_axis_name_as_a_string():
    # as Mesh does (JAX 0.10.2 prints the same)
    mesh = jax.make_mesh((1,), "data", (AxisType.Auto,))
    assert mesh.axis_names == ("data",)
    assert str(mesh) == "Mesh('data': 1, axis_types=(Auto,))"


def test_the_sharded_mlp_example_matches_one_device():
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    env.pop("XLA_FLAGS", None)
    env.pop("PYJAX_EXECUTOR", None)
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "examples" / "sharded_mlp.py")],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("largest difference from the one-device run:")
    assert float(last.split()[-1]) <= 1e-5
    assert "mesh {'data': 4, 'model': 2}" in proc.stdout


def test_named_sharding_update_replaces_fields():
    # flax's scan drops the batch axis of its carry's sharding with update(spec=...)
    s = NamedSharding(jax.make_mesh((1,), ("x",)), P("x", None))
    assert repr(s.update(spec=P(None))) == ("NamedSharding(mesh=Mesh('x': 1, axis_types="
                                            "(Explicit,)), spec=P(None,), memory_kind=device)")
    assert s.update(spec=("x",)).spec == P("x") and s.update().spec == s.spec
    assert s.update(memory_kind="device").memory_kind == "device"


def test_a_memory_kind_the_device_lacks_is_refused():
    # JAX 0.10.2 raises this ValueError for both kinds of sharding (it lists the CPU's
    # pinned_host and unpinned_host memories too, which pyjax does not keep arrays in)
    message = ("Could not find memory addressable by device cpu. Device cpu can address "
               "the following memory kinds: .*Got memory kind: hbm")
    with pytest.raises(ValueError, match=message):
        SingleDeviceSharding(jax.devices()[0], memory_kind="hbm")
    with pytest.raises(ValueError, match=message):
        NamedSharding(jax.make_mesh((1,), ("x",)), P("x"), memory_kind="hbm")
    assert SingleDeviceSharding(jax.devices()[0], memory_kind="device").memory_kind == \
        "device"
