"""shard_map on 8 CPU devices: each collective lowered to XLA's collectives between the
partitions of one SPMD program (Shardy's manual computation), against NumPy and against
the NumPy executor (which runs the body under one vmap per mesh axis); jit, grad, vmap
and scan through it; JAX's check_vma errors. The checks run in one subprocess with eight
devices; each is reported as its own test."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P

from harness import checks_in_process, close

N = 8


def _mesh():
    return jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))


def _data(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def _on_both_executors(f, *args):
    """f(*args) with XLA and with the NumPy executor, which must agree."""
    on_xla = f(*args)
    with config.executor("numpy"):
        on_numpy = f(*args)
    for a, b in zip(jax.tree_util.tree_leaves(on_xla), jax.tree_util.tree_leaves(on_numpy)):
        close(a, b)
    return on_xla


# --- checks run with eight devices ------------------------------------------------------

def check_reductions_and_axis_index():
    mesh, x = _mesh(), _data(8, 4)

    def body(a):
        return (lax.psum(a, "x"), lax.pmean(a, "y"), lax.pmax(a, ("x", "y")),
                lax.pmin(a, "x"), lax.axis_index("x") + 10 * lax.axis_index("y") + 0 * a)

    f = jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"),
                      out_specs=(P(None, "y"), P("x"), P(), P(None, "y"), P("x", "y")))
    total, mean, high, low, index = _on_both_executors(f, x)
    blocks = x.reshape(4, 2, 2, 2).transpose(0, 2, 1, 3)   # [x, y] -> (2, 2) block
    close(total, blocks.sum(0).transpose(1, 0, 2).reshape(2, 4))
    close(mean, blocks.mean(1).reshape(8, 2))
    close(high, blocks.max((0, 1)))
    close(low, blocks.min(0).transpose(1, 0, 2).reshape(2, 4))
    expected = np.add.outer(np.arange(4), 10 * np.arange(2))
    assert np.asarray(index)[::2, ::2].tolist() == expected.tolist()
    assert repr(total.sharding.spec) == "P(None, 'y')"


def check_gathers_permutes_and_scatters():
    mesh, x = _mesh(), _data(8, 4)

    def body(a):
        return (lax.all_gather(a, "x", tiled=True),
                lax.all_gather(a, "x"),
                lax.ppermute(a, "x", [(i, (i + 1) % 4) for i in range(4)]),
                lax.psum_scatter(a, "x", scatter_dimension=1, tiled=True),
                lax.all_to_all(a, "x", 1, 0, tiled=True))

    f = jax.shard_map(body, mesh=mesh, in_specs=P("x"),
                      out_specs=(P(), P(), P("x"), P("x"), P("x")), check_vma=False)
    gathered, stacked, shifted, scattered, swapped = _on_both_executors(f, x)
    close(gathered, x)
    close(stacked, x.reshape(4, 2, 4))
    close(shifted, np.roll(x, 2, axis=0))
    rows = x.reshape(4, 2, 4)
    close(scattered, np.concatenate([rows.sum(0)[:, i:i + 1] for i in range(4)]))
    assert swapped.shape == (32, 1)
    close(swapped, np.concatenate([np.concatenate([rows[j][:, i:i + 1] for j in range(4)])
                                   for i in range(4)]))
    assert repr(shifted.sharding.spec) == "P('x',)"   # JAX 0.10.2 gives the same


def check_lowered_as_a_manual_computation():
    mesh, x = _mesh(), _data(8, 4)
    f = jax.jit(jax.shard_map(lambda a: lax.psum(a, "x"), mesh=mesh, in_specs=P("x", "y"),
                              out_specs=P(None, "y")))
    text = f.lower(x).as_text()
    assert "sdy.manual_computation(%arg0)" in text and 'manual_axes={"x", "y"}' in text
    assert "replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]>" in text   # as JAX's
    assert "use_global_device_ids" in text and "channel_handle" in text
    out = f(x)
    assert repr(out.sharding.spec) == "P(None, 'y')"
    close(out, x.reshape(4, 2, 4).sum(0))


def check_jit_inside_and_outside_with_sharded_inputs():
    mesh = _mesh()
    x = jax.device_put(_data(8, 4), NamedSharding(mesh, P("x", "y")))
    inner = jax.jit(lambda a: jnp.sin(a) * 2)
    f = jax.shard_map(lambda a: lax.psum(inner(a), ("x", "y")), mesh=mesh,
                      in_specs=P("x", "y"), out_specs=P())
    expected = (np.sin(np.asarray(x)) * 2).reshape(4, 2, 2, 2).sum((0, 2))
    close(jax.jit(f)(x), expected)
    close(f(x), expected)


def check_grad_through_shard_map_equals_unsharded():
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    x, w = _data(8, 4), _data(4, 6, seed=1)

    def local_loss(xb, wb):
        return lax.psum(jnp.sum(jnp.tanh(xb @ wb) ** 2), ("data", "model"))

    loss = jax.shard_map(local_loss, mesh=mesh, in_specs=(P("data", None), P(None, "model")),
                         out_specs=P())

    def reference(x, w):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    close(loss(x, w), reference(x, w))
    want = jax.grad(reference, argnums=(0, 1))(x, w)
    for got in (jax.grad(loss, argnums=(0, 1))(x, w),
                jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w)):
        close(got[0], want[0])
        close(got[1], want[1])
    value, grad_w = jax.value_and_grad(loss, argnums=1)(x, w)
    close(value, reference(x, w))
    close(grad_w, want[1])
    # a replicated input and a replicated output: the mean/sum convention
    scale = jax.shard_map(lambda a, s: a * s, mesh=mesh, in_specs=(P("data"), P()),
                          out_specs=P("data"))
    close(jax.grad(lambda s: jnp.sum(scale(x, s)))(np.float32(2.0)), x.sum())


def check_vmap_and_scan_through_shard_map():
    mesh, x = _mesh(), _data(8, 4)
    f = jax.shard_map(lambda a: lax.psum(a, "x"), mesh=mesh, in_specs=P("x", "y"),
                      out_specs=P(None, "y"))
    stacked = np.stack([x, 2 * x, -x])
    got = jax.vmap(f)(stacked)
    close(got, np.stack([s.reshape(4, 2, 4).sum(0) for s in stacked]))

    def body(a):   # the carry varies along 'y' (JAX's TypeError without the pcast)
        def step(carry, row):
            return carry + lax.psum(row, "x"), carry
        init = lax.pcast(jnp.zeros(a.shape[1:]), "y", to="varying")
        return lax.scan(step, init, a)[0]

    g = jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("y"))
    close(_on_both_executors(g, x), x.sum(0))
    close(jax.jit(g)(x), x.sum(0))


def check_errors_match_jax():
    mesh, x = _mesh(), _data(8, 4)
    with pytest.raises(ValueError, match="out_specs which require replication which "
                                         "can't be statically inferred"):
        jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("x"), out_specs=P())(x)
    with pytest.raises(ValueError, match="but 4 does not evenly divide 6"):
        jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(
            np.ones((6, 2)))
    unchecked = jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("x"), out_specs=P(),
                              check_vma=False)
    close(unchecked(x), 2 * x[:2])   # device 0's block, as JAX
    from pyjax.experimental.shard_map import shard_map as old_shard_map
    old = old_shard_map(lambda a: lax.psum(a, "x"), mesh, in_specs=P("x"), out_specs=P(),
                        check_rep=True)
    close(old(x), x.reshape(4, 2, 4).sum(0))


def check_with_mesh_context():
    mesh, x = _mesh(), _data(8, 4)
    with jax.set_mesh(mesh):
        f = jax.shard_map(lambda a: lax.psum(a, ("x", "y")), in_specs=P("x", "y"),
                          out_specs=P())
        close(f(x), x.reshape(4, 2, 2, 2).sum((0, 2)))


def check_partial_auto_nested_matches_jax():
    # The outer shard_map makes 'x' manual and leaves 'y' to the partitioner; the inner
    # one (no mesh, no axis_names) takes the rest. Values, the output's sharding and the
    # abstract meshes seen inside are JAX 0.10.2's for the same program.
    mesh = _mesh()
    seen = []

    def inner(b):
        seen.append(repr(jax.sharding.get_abstract_mesh()))
        return b * lax.axis_index("y").astype(b.dtype)

    def outer(a):
        seen.append(repr(jax.sharding.get_abstract_mesh()))
        out = jax.shard_map(inner, in_specs=P(None, "y"), out_specs=P(None, "y"))(jnp.sin(a))
        return out + lax.axis_index("x").astype(out.dtype)

    f = jax.shard_map(outer, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                      axis_names={"x"})
    x = np.arange(32, dtype=np.float32).reshape(8, 4) / 10
    with jax.set_mesh(mesh):
        out = jax.jit(f)(x)
        grad = jax.grad(lambda v: jax.jit(f)(v).sum())(x)
    assert seen == [
        "AbstractMesh('x': 4, 'y': 2, axis_types=(Manual, Auto), device_kind=cpu, "
        "num_cores=None, platform=cpu)",
        "AbstractMesh('x': 4, 'y': 2, axis_types=(Manual, Manual), device_kind=cpu, "
        "num_cores=None, platform=cpu)"]
    assert repr(out.sharding) == ("NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, "
                                  "Auto)), spec=P('x', 'y'), memory_kind=device)")
    expected = np.sin(x) * (np.arange(4) >= 2) + np.arange(8)[:, None] // 2
    close(out, expected)
    close(grad, np.cos(x) * (np.arange(4) >= 2))
    with pytest.raises(ValueError, match="in_specs refers to 'y'"):
        jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("y"), out_specs=P("y"),
                      axis_names={"x"})(x)
    # a sharding constraint inside may not name a manual axis (JAX's message)
    pinned = jax.shard_map(
        lambda a: lax.with_sharding_constraint(a, NamedSharding(mesh, P("x", "y"))),
        mesh=mesh, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
    with pytest.raises(ValueError, match="contains a manual axes"):
        jax.jit(pinned)(x)
    # axis_index over a manual axis while others stay automatic, eagerly and on NumPy
    index = jax.shard_map(lambda: lax.axis_index("x").reshape(1, 1), mesh=mesh,
                          in_specs=(), out_specs=P("x", None), axis_names={"x"})
    close(_on_both_executors(index), np.arange(4).reshape(4, 1))


def check_axis_index_over_several_axes_like_jax():
    # The position in the product of the axes, the first outermost (JAX 0.10.2's values).
    mesh = _mesh()
    f = jax.shard_map(lambda: lax.axis_index(("x", "y")).reshape(1), mesh=mesh,
                      in_specs=(), out_specs=P(("x", "y")))
    assert np.asarray(_on_both_executors(f)).tolist() == list(range(8))
    g = jax.shard_map(lambda: lax.axis_index(("y", "x")).reshape(1, 1), mesh=mesh,
                      in_specs=(), out_specs=P("x", "y"))
    assert np.asarray(jax.jit(g)()).tolist() == [[0, 4], [1, 5], [2, 6], [3, 7]]
    nested = jax.vmap(jax.vmap(lambda v: lax.axis_index(("a", "b")), axis_name="b"),
                      axis_name="a")
    assert np.asarray(nested(np.ones((2, 3)))).tolist() == [[0, 1, 2], [3, 4, 5]]


def check_callbacks_in_partitioned_programs():
    # Inside a shard_map over every axis a callback runs on each device with its block;
    # in a partitioned jit it runs once, on the first device, whose result lives there
    # (JAX's maximal sharding); a shard_map leaving axes automatic refuses it, as JAX.
    mesh, x = _mesh(), np.arange(8.0, dtype=np.float32)
    seen = []

    def f(v):
        jax.debug.callback(lambda b: seen.append(np.asarray(b).tolist()), v)
        return jax.pure_callback(lambda b: np.asarray(b) * 2,
                                 jax.ShapeDtypeStruct(v.shape, v.dtype), v)

    out = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                                check_vma=False))(x)
    close(out, x * 2)
    assert sorted(seen) == sorted([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]] * 2)
    once = jax.jit(f, in_shardings=NamedSharding(mesh, P("x")))(x)
    close(once, x * 2)
    assert repr(once.sharding) == \
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    partial = jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                            axis_names={"x"})
    with pytest.raises(NotImplementedError, match="all mesh axes are partitioned "
                                                  "manually"):
        jax.jit(partial)(x)


CHECKS = [name for name in dict(globals()) if name.startswith("check_")]


@pytest.fixture(scope="module")
def eight_device_results():
    return checks_in_process("test_shard_map", N)


@pytest.mark.parametrize("name", CHECKS)
def test_on_eight_devices(eight_device_results, name):
    result = eight_device_results[name]
    assert result == "ok", result


# --- in this process (whatever its device count) ----------------------------------------

def test_needs_a_mesh():
    with pytest.raises(ValueError, match="The context mesh cannot be empty"):
        jax.shard_map(lambda a: a, in_specs=P(), out_specs=P())(np.ones(2))
