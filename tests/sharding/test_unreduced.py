"""Unreduced and reduced values (sharding in types): a value unreduced over a mesh axis
is the sum of the partial values its devices hold along it; one reduced over an axis is
the same on each of them, and its cotangent is unreduced there. The checks run in one
subprocess with eight CPU devices; each is its own test. Expected values and messages
are JAX 0.10.2's for the same programs."""
import functools

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.core import ShardingTypeError
from pyjax.sharding import AxisType, NamedSharding, reshard
from pyjax.sharding import PartitionSpec as P

from harness import checks_on_devices


def _mesh(shape, names):
    return jax.make_mesh(shape, names, axis_types=(AxisType.Explicit,) * len(names))


def _shards(x):
    return [np.asarray(s.data).tolist() for s in x.addressable_shards]


def check_types_print_and_place_partial_sums_as_jax():
    mesh = _mesh((2, 2), ("x", "y"))
    with jax.set_mesh(mesh):
        a = reshard(jnp.arange(8.), P(unreduced={"y", "x"}))
        assert str(jax.typeof(a)) == "float32[8]{U:(x,y)}"
        # replicated -> unreduced: the first device keeps the value, the others zeros
        assert _shards(a) == [list(range(8))] + [[0.0] * 8] * 3
        assert not a.sharding.is_fully_replicated
        with pytest.raises(NotImplementedError, match="doesn't work with unreduced"):
            a.sharding.devices_indices_map((8,))
        b = jax.device_put(np.arange(8.).reshape(4, 2), P("x", reduced={"y"}))
        assert str(jax.typeof(b)) == "float32[4@x,2]{R:y}"
        assert not b.sharding.is_fully_replicated
        np.testing.assert_array_equal(reshard(a, P()), np.arange(8.))


def check_einsum_leaves_partial_sums_and_reshard_reduces_them():
    mesh = _mesh((2, 2), ("x", "y"))
    np_inp = np.arange(16.).reshape(8, 2)
    with jax.set_mesh(mesh):
        x = jax.device_put(np_inp, P("x", "y"))
        y = jax.device_put(np_inp.T, P("y", None))

        @jax.jit
        def f(x, y):
            m1 = jnp.einsum("xy,yz->xz", x, y, out_sharding=P("x", unreduced={"y"}))
            assert str(jax.typeof(m1)) == "float32[8@x,8]{U:y}"
            return m1

        out = f(x, y)
        assert out.sharding == NamedSharding(mesh, P("x", None, unreduced={"y"}))
        # each device's partial product (first rows), as JAX's
        assert [row[0] for row in _shards(out)] == [
            [0.0] * 8, [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0],
            [0.0, 16.0, 32.0, 48.0, 64.0, 80.0, 96.0, 112.0],
            [9.0, 27.0, 45.0, 63.0, 81.0, 99.0, 117.0, 135.0]]
        np.testing.assert_array_equal(reshard(out, P("x")), np_inp @ np_inp.T)

        @jax.jit
        def g(x, y, a, b):   # partial sums add up; reshard is the one all-reduce
            m1 = jnp.einsum("xy,yz->xz", x, y, out_sharding=P("x", unreduced={"y"}))
            m2 = jnp.einsum("xy,yz->xz", a, b, out_sharding=P("x", unreduced={"y"}))
            return reshard(m1 + m2, P("x"))

        np.testing.assert_array_equal(g(x, y, x, y), 2 * (np_inp @ np_inp.T))
        assert g.lower(x, y, x, y).as_text().count('unreduced={"y"}') == 3


def check_reduce_sum_out_sharding_leaves_partial_sums():
    mesh = _mesh((2,), ("x",))
    with jax.set_mesh(mesh):
        x = jax.device_put(np.arange(8, dtype=np.float32), P("x"))

        @jax.jit
        def f(x):
            return jax.lax.reduce_sum(x, axes=(0,), out_sharding=P(unreduced={"x"}))

        assert f.lower(x).as_text().count('unreduced={"x"}') == 2
        out = f(x)
        assert out.sharding == NamedSharding(mesh, P(unreduced={"x"}))
        assert _shards(out) == [6.0, 22.0]
        # a partial sum prints its type, never one shard's value (as JAX)
        text = ("Array(shape=(), dtype=float32, sharding=NamedSharding(mesh=Mesh('x': 2, "
                "axis_types=(Explicit,)), spec=P(unreduced={'x'}), memory_kind=device))")
        assert repr(out) == str(out) == f"{out}" == text
        assert float(reshard(out, P())) == 28.0
        assert jax.jit(jax.grad(f))(x).sharding == NamedSharding(mesh, P("x"))


def check_cotangent_of_a_reduced_value_is_unreduced():
    mesh = _mesh((2,), ("x",))
    with jax.set_mesh(mesh):
        w = jax.device_put(np.arange(8.).reshape(2, 4), P(reduced={"x"}))
        x = jax.device_put(np.ones((4, 2)), P("x", None))
        g = jax.jit(jax.grad(lambda w, x: (x @ w).sum()))(w, x)
        assert g.sharding == NamedSharding(mesh, P(None, None, unreduced={"x"}))
        np.testing.assert_array_equal(reshard(g, P()), np.full((2, 4), 4.0))

        arr = jax.device_put(np.arange(4.), P(reduced={"x"}))
        out = jax.jit(jax.grad(lambda x: jnp.sin(x * 2).sum()))(arr)
        assert out.sharding == NamedSharding(mesh, P(None, unreduced={"x"}))
        np.testing.assert_allclose(reshard(out, P()), 2 * np.cos(2 * np.arange(4.)),
                                   rtol=1e-6)


def check_unreduced_errors_are_jaxs():
    mesh = _mesh((2, 2, 1), ("x", "y", "z"))
    np_inp = np.arange(16).reshape(8, 2)
    with jax.set_mesh(mesh):
        x = jax.device_put(np_inp, P("x", "y"))
        y = jax.device_put(np_inp.T, P("y", None))
        u = jnp.einsum("xy,yz->xz", x, y, out_sharding=P("x", unreduced={"y"}))
        with pytest.raises(NotImplementedError, match="unreduced rule for sin"):
            jnp.sin(u.astype(np.float32))
        with pytest.raises(ShardingTypeError,
                           match="lhs is unreduced while rhs is not"):
            u + 1
        with pytest.raises(ShardingTypeError,
                           match="unreduced axes should be equal to the contracting"):
            jnp.einsum("xy,yz->xz", x, y, out_sharding=P("x", unreduced={"z"}))
        with pytest.raises(ShardingTypeError,
                           match="lhs or rhs passed to dot_general cannot be unreduced"):
            jnp.einsum("xy,yz->xz", u, x)
        with pytest.raises(ValueError, match="cannot contain unreduced"):
            jnp.reshape(np.arange(8), (4, 2), out_sharding=P(unreduced={"x"}))


def check_shard_map_partial_sums_in_and_out():
    mesh = _mesh((2,), ("x",))
    with jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(8.), P("x"))

        @jax.shard_map(out_specs=P(unreduced={"x"}))
        def f(x):
            return jax.lax.pcast(x, "x", to="unreduced")

        out = f(arr)
        assert out.sharding == NamedSharding(mesh, P(unreduced={"x"}))
        np.testing.assert_array_equal(reshard(out, P()), np.arange(4.) + np.arange(4., 8.))

        partial = reshard(jnp.arange(8.), P(unreduced={"x"}))

        @jax.shard_map(out_specs=P("x"))
        def g(x):
            return jax.lax.psum_scatter(x, "x", tiled=True)

        np.testing.assert_array_equal(g(partial), np.arange(8.))
        grad = jax.grad(lambda x: g(x).sum())(partial)
        assert grad.sharding == NamedSharding(mesh, P(None, reduced={"x"}))
        np.testing.assert_array_equal(grad, np.ones(8))
        with pytest.raises(ValueError, match="should be equal to the unreduced present"):
            jax.shard_map(lambda x: x, in_specs=P(), out_specs=P())(partial)


def check_a_scan_accumulates_unreduced_gradients_and_reduces_once():
    mesh = _mesh((2,), ("x",))

    def model(ws, xs):
        for w in ws:
            xs = jnp.dot(xs, w)
        return jnp.sum(xs)

    @jax.jit
    def step(ws, xs):
        def body(acc, x):
            grad = jax.grad(model)(ws, x)
            assert all(g.aval.sharding.spec.unreduced == {"x"} for g in grad + acc)
            return jax.tree.map(jnp.add, acc, grad), None
        acc = reshard(jax.tree.map(jnp.zeros_like, ws), P(unreduced={"x"}))
        acc, _ = jax.lax.scan(body, acc, xs)
        return reshard(acc, P())

    with jax.set_mesh(mesh):
        ws = tuple(jax.device_put(jnp.ones((4, 4)), P(reduced={"x"})) for _ in range(4))
        xs = jax.device_put(jnp.ones((2, 2, 4)), P(None, "x", None))
        grads = step(ws, xs)
        assert step.lower(ws, xs).compile().as_text().count("all-reduce(") == 1
    for g in grads:   # the loop's partial sums reach the one all-reduce as partial sums
        np.testing.assert_array_equal(g, np.full((4, 4), 256.))
        assert g.sharding == NamedSharding(mesh, P(None, None))


def check_a_remat_keeps_an_unreduced_cotangent_partial():
    mesh = _mesh((2,), ("x",))
    with jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(8.), P(reduced={"x"}))
        f = jax.remat(lambda x: x)
        g = jax.jit(jax.grad(lambda x: f(x).sum()))(arr)
        assert g.sharding == NamedSharding(mesh, P(None, unreduced={"x"}))
        assert _shards(g) == [[1.] * 8, [0.] * 8]
        np.testing.assert_array_equal(reshard(g, P()), np.ones(8))


def check_a_vmapped_scan_over_reduced_layers_gives_unreduced_gradients():
    mesh = _mesh((2,), ("fsdp",))
    with jax.set_mesh(mesh):
        inputs = jax.device_put(jnp.ones((4, 8, 16)), P(None, "fsdp"))
        targets = jax.device_put(jnp.ones((4, 8, 16)), P(None, "fsdp"))
        params = jax.device_put({"w_in": jnp.ones((2, 16, 64)),
                                 "w_out": jnp.ones((2, 64, 16))}, P(reduced={"fsdp"}))

        def layer(carry, p):
            h = jnp.dot(carry, p["w_in"], out_sharding=P("fsdp"))
            return jnp.dot(h, p["w_out"], out_sharding=P("fsdp")), None

        @jax.jit
        @functools.partial(jax.vmap, in_axes=(None, 0, 0))
        @jax.value_and_grad
        def loss_fn(params, inputs, targets):
            out, _ = jax.lax.scan(layer, inputs, params)
            return jnp.sum((out - targets) ** 2)

        loss, grads = loss_fn(params, inputs, targets)
        np.testing.assert_allclose(loss, [1.4073722e14] * 4, rtol=1e-6)
        for g in grads.values():
            assert g.sharding.spec == P(None, None, None, None, unreduced={"fsdp"})
            assert float(np.asarray(reshard(g, P())).sum()) == 2251798739943424.0


test_on_eight_devices = checks_on_devices(globals(), 8)
