"""shard_map's collectives over several mesh axes at once and within axis_index_groups,
in_specs (static None entries, inferred from the arguments' shardings) and JAX's messages
for bad specs, on 8 CPU devices. Expected values are JAX 0.10.2's for the same programs
(recorded in a scratch install); XLA and the NumPy executor must both give them. The
checks run in one subprocess with eight devices; each is reported as its own test."""
from __future__ import annotations

import re

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P

from harness import checks_in_process, close

N = 8


def _on_both_executors(f, *args):
    on_xla = f(*args)
    with config.executor("numpy"):
        on_numpy = f(*args)
    for a, b in zip(jax.tree_util.tree_leaves(on_xla), jax.tree_util.tree_leaves(on_numpy)):
        close(a, b)
    return on_xla


def _several_axes_body(a):
    n = lax.axis_size(("x", "y"))
    return (lax.ppermute(a, ("x", "y"), [(j, (j + 1) % n) for j in range(n)]),
            lax.ppermute(a, ("z", "x"), [(0, 3), (3, 1), (1, 0)]),
            lax.all_gather(a, ("y", "z"), axis=1, tiled=True),
            lax.all_gather(a, ("z", "x"), axis=0),
            lax.psum_scatter(a, ("x", "z"), scatter_dimension=1, tiled=True),
            lax.all_to_all(a, ("y", "z"), 1, 0, tiled=True),
            lax.all_gather(a, ("y", "z"), axis_index_groups=((0, 3), (2, 1)), axis=1,
                           tiled=True),
            # (broadcast against a (2, 2) block)
            lax.psum_scatter(a, "z", scatter_dimension=1, tiled=True) * 0
            + lax.psum_scatter(a, ("x", "y", "z"), scatter_dimension=1, tiled=True,
                               axis_index_groups=((0, 2, 4, 6), (1, 3, 5, 7))),
            lax.all_to_all(a, ("x", "y"), 1, 1, axis_index_groups=((0, 1), (3, 2)),
                           tiled=True))


def check_collectives_over_several_axes_match_jax():
    mesh = jax.make_mesh((2, 2, 2), ("x", "y", "z"), axis_types=(AxisType.Auto,) * 3)
    x = np.arange(4 * 16, dtype=np.float32).reshape(4, 16)
    spec = P("x", ("y", "z"))
    f = jax.shard_map(_several_axes_body, mesh=mesh, in_specs=spec, out_specs=spec,
                      check_vma=False)
    outs = _on_both_executors(f, x)
    for out, expected in zip(outs, JAX_SEVERAL_AXES):
        close(out, np.array(expected, np.float32))
    close(jax.jit(f)(x)[4], np.array(JAX_SEVERAL_AXES[4], np.float32))
    loss = lambda a: sum((o * o).sum() for o in f(a))   # noqa: E731
    close(_on_both_executors(jax.jit(jax.grad(loss)), x), np.array(JAX_GRAD, np.float32))


def check_static_in_specs():
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    marker = object()

    def f(settings, b):
        assert settings["tag"] is marker
        return b * settings["k"]

    g = jax.shard_map(f, mesh=mesh, in_specs=({"tag": None, "k": None}, P("x")),
                      out_specs=P("x"))
    close(g({"tag": marker, "k": 3.0}, np.arange(8.0)), 3 * np.arange(8.0))
    close(jax.shard_map(lambda v: v, mesh=mesh, in_specs=None, out_specs=P())(3.0), 3.0)


def check_in_specs_inferred_from_explicit_shardings():
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    a = jax.device_put(np.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("x", "y")))
    f = jax.shard_map(lambda b: b * 2 + lax.axis_index("x"), mesh=mesh,
                      out_specs=P("x", "y"))
    out = f(a)
    close(out, np.arange(32.0).reshape(8, 4) * 2 + np.repeat(np.arange(4), 2)[:, None])
    assert repr(out.sharding) == ("NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types="
                                  "(Explicit, Explicit)), spec=P('x', 'y'), "
                                  "memory_kind=device)")
    with jax.set_mesh(mesh):
        g = jax.smap(lambda b: b + lax.axis_index("x"), out_axes=0, axis_name="x")
        close(g(a), np.arange(32.0).reshape(8, 4) + np.repeat(np.arange(4), 2)[:, None])


def check_errors_are_jaxs():
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = np.arange(8.0)
    with pytest.raises(TypeError, match=r"but it was `None` when axis_names=frozenset\("
                                        r".*\) are of type AxisType.Auto, AxisType.Auto"):
        jax.shard_map(lambda b: b, mesh=mesh, out_specs=P("x"))(x)
    with pytest.raises(ValueError, match=re.escape(
            "in_specs is P('x', 'y') which has length 2, but the passed args[0], where "
            "args[0] is bound to <lambda>'s parameter 'b', has shape float32[8], which "
            "has rank 1 (and 1 < 2)")):
        jax.shard_map(lambda b: b, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"))(x)
    with pytest.raises(ValueError, match=re.escape(
            "the passed args[0] of shape float32[6], where args[0] is bound to <lambda>'s "
            "parameter 'b', corresponds to in_specs of value P('x',), which maps array "
            "axis 0 (of size 6) to mesh axis 'x' (of size 4), but 4 does not evenly "
            "divide 6")):
        jax.shard_map(lambda b: b, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(
            np.arange(6.0))
    with pytest.raises(ValueError, match=re.escape(
            "out_specs is P('x',) which implies that the corresponding output value is "
            "replicated across mesh axis 'y', but could not infer replication over any "
            "axes")):
        jax.shard_map(lambda b: b, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"))(
            np.ones((8, 2)))
    cube = jax.make_mesh((2, 2, 2), ("x", "y", "z"), axis_types=(AxisType.Auto,) * 3)
    with pytest.raises(ValueError, match=re.escape(
            "out_specs is P('x',) which implies that the corresponding output value is "
            "only varying across mesh axes {x} and not {y,z}, but it was inferred to be "
            "possibly varying over {x,y,z}")):
        jax.shard_map(lambda b: b, mesh=cube, in_specs=P("x", ("y", "z")),
                      out_specs=P("x"))(np.ones((8, 4)))
    with pytest.raises(NameError, match=re.escape(
            "Found an unbound axis name: x. To fix this, please call psum under "
            "`jax.shard_map`")):
        jax.jit(lambda b: lax.psum(b, "x"))(x)
    with pytest.raises(ValueError, match="axis_index_groups must cover all indices"):
        jax.shard_map(lambda b: lax.all_gather(b, "x", axis_index_groups=((0, 1), (1, 2))),
                      mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)


def check_replication_is_typed_as_jax_types_it():
    # A cond's result varies as its branches' do (its predicate does not count), and a
    # custom_vjp function's as its primal body: JAX accepts these out_specs.
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = np.arange(4.0)

    def f(a, b):
        return lax.cond(jnp.any(b > 0), lambda a, b: a, lambda a, b: a + 1, a, b)

    close(jax.shard_map(f, mesh=mesh, in_specs=(P("x"), P("y")), out_specs=P("x"))(x, x),
          x)
    with pytest.raises(ValueError, match="require replication"):
        jax.shard_map(f, mesh=mesh, in_specs=(P("x"), P("y")), out_specs=P())(x, x)

    @jax.custom_vjp
    def g(a):
        return jnp.tan(a)

    g.defvjp(lambda a: (lax.psum(a, "x"), (a,)), lambda res, ct: (jnp.cos(res[0]) * ct,))
    h = jax.jit(jax.shard_map(lambda a: jax.remat(g)(a) ** 2, mesh=mesh, in_specs=P(),
                              out_specs=P()))
    close(h(x), np.tan(x) ** 2)


def check_pcast_outside_shard_map():
    # As JAX 0.10.2: eagerly a ValueError, traced an unbound axis (NameError), unless
    # jax_remove_size_one_mesh_axis_from_type drops the size-1 axis from the cast.
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
    vary = lambda v: lax.pcast(v, "x", to="varying")   # noqa: E731
    with jax.set_mesh(mesh):
        out = jax.shard_map(vary, in_specs=P(), out_specs=P("x"))(np.arange(4.0))
        close(out, np.concatenate([np.arange(4.0)] * 2))
        with pytest.raises(ValueError, match="pvary should be called under jax.shard_map"):
            vary(np.arange(4.0))
    with jax.set_mesh(jax.make_mesh((1,), ("x",), axis_types=(AxisType.Explicit,))):
        with pytest.raises(NameError, match="Found an unbound axis name: x"):
            jax.jit(vary)(np.arange(4.0))
        with config.remove_size_one_mesh_axis_from_type(True):
            close(jax.jit(vary)(np.arange(4.0)), np.arange(4.0))


def check_vmap_spmd_axis_name_splits_the_batch():
    # As JAX: the batch dimension is split over spmd_axis_name's mesh axes in the
    # shard_map's specs, and the values are those of the plain vmap.
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    f = jax.shard_map(lambda a: jnp.sin(a) * lax.axis_index("x"), mesh=mesh,
                      in_specs=P("x"), out_specs=P("x"))
    xs = np.arange(16.0).reshape(4, 4)
    eqn, = jax.make_jaxpr(jax.vmap(f, spmd_axis_name="y"))(xs).jaxpr.eqns
    assert eqn.params["in_specs"] == (P("y", "x"),)
    assert eqn.params["out_specs"] == (P("y", "x"),)
    eqn, = jax.make_jaxpr(jax.vmap(f, spmd_axis_name=("y",)))(xs).jaxpr.eqns
    assert eqn.params["in_specs"] == (P("y", "x"),)
    expected = jax.vmap(f)(xs)
    close(jax.vmap(f, spmd_axis_name="y")(xs), expected)
    close(jax.jit(jax.vmap(f, spmd_axis_name="y"))(xs), expected)
    grad = jax.vmap(jax.grad(lambda a: f(a).sum()), spmd_axis_name="y")(xs)
    close(grad, jax.vmap(jax.grad(lambda a: f(a).sum()))(xs))


CHECKS = [name for name in dict(globals()) if name.startswith("check_")]


@pytest.fixture(scope="module")
def eight_device_results():
    return checks_in_process("test_shard_map_collectives", N)


@pytest.mark.parametrize("name", CHECKS)
def test_on_eight_devices(eight_device_results, name):
    result = eight_device_results[name]
    assert result == "ok", result


# JAX 0.10.2's outputs of check_collectives_over_several_axes_match_jax's program.
JAX_SEVERAL_AXES = [
    [[40, 41, 42, 43, 44, 45, 46, 47, 0, 1, 2, 3, 4, 5, 6, 7], [56, 57, 58, 59, 60, 61, 62, 63,
    16, 17, 18, 19, 20, 21, 22, 23], [8, 9, 10, 11, 12, 13, 14, 15, 32, 33, 34, 35, 36, 37, 38,
    39], [24, 25, 26, 27, 28, 29, 30, 31, 48, 49, 50, 51, 52, 53, 54, 55]],
    [[4, 5, 6, 7, 36, 37, 38, 39, 12, 13, 14, 15, 44, 45, 46, 47], [20, 21, 22, 23, 52, 53, 54,
    55, 28, 29, 30, 31, 60, 61, 62, 63], [0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 8, 9, 10, 11], [0,
    0, 0, 0, 16, 17, 18, 19, 0, 0, 0, 0, 24, 25, 26, 27]],
    [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5,
    6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
    29, 30, 31, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19,
    20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
    27, 28, 29, 30, 31], [32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 32,
    33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 32, 33, 34, 35, 36, 37, 38, 39,
    40, 41, 42, 43, 44, 45, 46, 47, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46,
    47], [48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 48, 49, 50, 51, 52,
    53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,
    60, 61, 62, 63, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]],
    [[[0, 1, 2, 3], [16, 17, 18, 19], [0, 1, 2, 3], [16, 17, 18, 19], [8, 9, 10, 11], [24, 25,
    26, 27], [8, 9, 10, 11], [24, 25, 26, 27]], [[32, 33, 34, 35], [48, 49, 50, 51], [32, 33,
    34, 35], [48, 49, 50, 51], [40, 41, 42, 43], [56, 57, 58, 59], [40, 41, 42, 43], [56, 57,
    58, 59]], [[4, 5, 6, 7], [20, 21, 22, 23], [4, 5, 6, 7], [20, 21, 22, 23], [12, 13, 14, 15],
    [28, 29, 30, 31], [12, 13, 14, 15], [28, 29, 30, 31]], [[36, 37, 38, 39], [52, 53, 54, 55],
    [36, 37, 38, 39], [52, 53, 54, 55], [44, 45, 46, 47], [60, 61, 62, 63], [44, 45, 46, 47],
    [60, 61, 62, 63]], [[0, 1, 2, 3], [16, 17, 18, 19], [0, 1, 2, 3], [16, 17, 18, 19], [8, 9,
    10, 11], [24, 25, 26, 27], [8, 9, 10, 11], [24, 25, 26, 27]], [[32, 33, 34, 35], [48, 49,
    50, 51], [32, 33, 34, 35], [48, 49, 50, 51], [40, 41, 42, 43], [56, 57, 58, 59], [40, 41,
    42, 43], [56, 57, 58, 59]], [[4, 5, 6, 7], [20, 21, 22, 23], [4, 5, 6, 7], [20, 21, 22, 23],
    [12, 13, 14, 15], [28, 29, 30, 31], [12, 13, 14, 15], [28, 29, 30, 31]], [[36, 37, 38, 39],
    [52, 53, 54, 55], [36, 37, 38, 39], [52, 53, 54, 55], [44, 45, 46, 47], [60, 61, 62, 63],
    [44, 45, 46, 47], [60, 61, 62, 63]]],
    [[72, 76, 104, 108], [136, 140, 168, 172], [80, 84, 112, 116], [144, 148, 176, 180]],
    [[0, 1, 2, 3], [16, 17, 18, 19], [4, 5, 6, 7], [20, 21, 22, 23], [8, 9, 10, 11], [24, 25,
    26, 27], [12, 13, 14, 15], [28, 29, 30, 31], [32, 33, 34, 35], [48, 49, 50, 51], [36, 37,
    38, 39], [52, 53, 54, 55], [40, 41, 42, 43], [56, 57, 58, 59], [44, 45, 46, 47], [60, 61,
    62, 63]],
    [[0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2,
    3, 12, 13, 14, 15], [16, 17, 18, 19, 28, 29, 30, 31, 24, 25, 26, 27, 20, 21, 22, 23, 24, 25,
    26, 27, 20, 21, 22, 23, 16, 17, 18, 19, 28, 29, 30, 31], [32, 33, 34, 35, 44, 45, 46, 47,
    40, 41, 42, 43, 36, 37, 38, 39, 40, 41, 42, 43, 36, 37, 38, 39, 32, 33, 34, 35, 44, 45, 46,
    47], [48, 49, 50, 51, 60, 61, 62, 63, 56, 57, 58, 59, 52, 53, 54, 55, 56, 57, 58, 59, 52,
    53, 54, 55, 48, 49, 50, 51, 60, 61, 62, 63]],
    [[80, 80, 96, 96, 84, 84, 100, 100], [144, 144, 160, 160, 148, 148, 164, 164], [88, 88, 104,
    104, 92, 92, 108, 108], [152, 152, 168, 168, 156, 156, 172, 172]],
    [[0, 1, 8, 9, 4, 5, 12, 13, 2, 3, 10, 11, 6, 7, 14, 15], [16, 17, 24, 25, 20, 21, 28, 29,
    18, 19, 26, 27, 22, 23, 30, 31], [42, 43, 34, 35, 46, 47, 38, 39, 40, 41, 32, 33, 44, 45,
    36, 37], [58, 59, 50, 51, 62, 63, 54, 55, 56, 57, 48, 49, 60, 61, 52, 53]]]
JAX_GRAD = (
    [[464, 516, 568, 620, 640, 692, 744, 796, 752, 804, 856, 908, 928, 980, 1032, 1084], [1296,
    1348, 1400, 1452, 1472, 1524, 1576, 1628, 1584, 1636, 1688, 1740, 1760, 1812, 1864, 1916],
    [1296, 1346, 1396, 1446, 1536, 1588, 1640, 1692, 1568, 1618, 1668, 1718, 1824, 1876, 1928,
    1980], [2096, 2146, 2196, 2246, 2368, 2420, 2472, 2524, 2368, 2418, 2468, 2518, 2656, 2708,
    2760, 2812]])
