"""Repeated calls of a jitted function, and repeated eager ops, partitioned over 8 CPU
devices: a call whose arguments are already laid out as the first call of its signature
had them runs straight to the executable (no sharding plan), with the same results,
shardings and types as the general route; anything else (another sharding, a deleted
argument, a host value, another mesh context, another thread's context) still takes the
general route and its errors. Expected shardings and errors are JAX 0.10.2's for the
same programs."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src.backends import dispatch
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P

from harness import checks_on_devices


def _auto_mesh():
    return jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))


def _explicit_mesh():
    return jax.make_mesh((8,), ("e",), axis_types=(AxisType.Explicit,))


class _GeneralRoute:
    """Counts the calls that take dispatch's general partitioned route."""

    def __enter__(self):
        self.count, self._original = 0, dispatch._run_sharded

        def counted(*args, **kwargs):
            self.count += 1
            return self._original(*args, **kwargs)
        dispatch._run_sharded = counted
        return self

    def __exit__(self, *exc):
        dispatch._run_sharded = self._original


def _mlp_step(params, x, y):
    def loss(params):
        h = x
        for w, b in params[:-1]:
            h = jnp.maximum(h @ w + b, 0.0)
        w, b = params[-1]
        return jnp.mean((h @ w + b - y) ** 2)
    grads = jax.grad(loss)(params)
    return [(w - 0.1 * gw, b - 0.1 * gb) for (w, b), (gw, gb) in zip(params, grads)]


def check_a_training_loop_runs_straight_to_its_executable():
    mesh = _auto_mesh()
    batch, replicated = NamedSharding(mesh, P("x")), NamedSharding(mesh, P())
    rng = np.random.default_rng(0)
    host = [(rng.normal(size=(6, 5)).astype(np.float32), np.zeros(5, np.float32)),
            (rng.normal(size=(5, 3)).astype(np.float32), np.zeros(3, np.float32))]
    xs, ys = rng.normal(size=(16, 6)).astype(np.float32), rng.normal(size=(16, 3))
    step = jax.jit(_mlp_step, in_shardings=(replicated, batch, batch),
                   out_shardings=replicated)
    params = jax.device_put(host, replicated)
    x, y = jax.device_put((xs, ys.astype(np.float32)), batch)
    unsharded = jax.jit(_mlp_step)
    expected = host
    with _GeneralRoute() as general:
        for _ in range(4):   # the results (laid out as the parameters) feed the next step
            params = step(params, x, y)
            expected = unsharded(expected, xs, ys.astype(np.float32))
    # the first step plans; the second meets its results' sharding once; then none
    assert general.count <= 2, general.count
    for (w, b), (ew, eb) in zip(params, expected):
        np.testing.assert_allclose(np.asarray(w), np.asarray(ew), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(b), np.asarray(eb), rtol=1e-5, atol=1e-6)
        assert w.sharding == replicated and b.sharding == replicated
        assert w.shape == ew.shape and w.dtype == ew.dtype and w.committed


def check_cached_calls_return_what_the_first_returned():
    mesh = _explicit_mesh()
    xe = jax.device_put(np.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("e")))
    f = jax.jit(lambda v: (v.sum(axis=1), v * 2))
    with _GeneralRoute() as general:
        first = f(xe)
        again = [f(xe) for _ in range(3)]
    assert general.count == 1
    for out in again:
        for a, b in zip(out, first):
            assert a.sharding == b.sharding and jax.typeof(a) == jax.typeof(b)
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert str(jax.typeof(again[0][0])) == "float32[8@e]"   # as JAX types it
    assert again[0][1].sharding.spec == P("e", None)


def check_another_mesh_context_takes_the_general_route():
    # A result made from no argument is laid out by the context mesh: P() without one,
    # P(None,) under jax.set_mesh (JAX 0.10.2 gives the same).
    mesh = _explicit_mesh()
    xe = jax.device_put(np.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("e")))
    f = jax.jit(lambda v: (v * 2, jnp.zeros(8)))
    for _ in range(2):
        _, z = f(xe)
    assert z.sharding.spec == P()
    with jax.set_mesh(mesh):
        for _ in range(2):
            _, z = f(xe)
            assert z.sharding.spec == P(None)
    _, z = f(xe)
    assert z.sharding.spec == P()
    # the mesh context is per thread: a call cached in a thread without one is not
    # this thread's under jax.set_mesh
    with jax.set_mesh(mesh):
        elsewhere = []
        thread = threading.Thread(target=lambda: elsewhere.extend([f(xe), f(xe)]))
        thread.start()
        thread.join()
        assert [z.sharding.spec for _, z in elsewhere] == [P(), P()]
        _, z = f(xe)
        assert z.sharding.spec == P(None)


def check_another_sharding_still_raises_jaxs_error():
    mesh = _auto_mesh()
    g = jax.jit(lambda v: v + 1, in_shardings=NamedSharding(mesh, P("x")))
    x = jax.device_put(np.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("x")))
    g(x)
    g(x)
    other = jax.device_put(np.arange(32.0).reshape(8, 4), NamedSharding(mesh, P(None, "y")))
    with pytest.raises(ValueError, match="Sharding passed to jit does not match the "
                                         "sharding on the respective arg"):
        g(other)
    np.testing.assert_array_equal(np.asarray(g(x)), np.arange(32.0).reshape(8, 4) + 1)


def check_host_values_after_cached_calls_are_laid_out():
    mesh = _auto_mesh()
    g = jax.jit(lambda v: v * 3, in_shardings=NamedSharding(mesh, P("x")))
    x = jax.device_put(np.arange(8.0), NamedSharding(mesh, P("x")))
    g(x)
    g(x)
    out = g(np.arange(8.0, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(out), np.arange(8.0) * 3)
    assert out.sharding == NamedSharding(mesh, P("x"))


def check_donated_arguments_are_deleted_on_the_cached_route():
    mesh = _auto_mesh()
    d = jax.jit(lambda v: v + 1, donate_argnums=0)
    x = jax.device_put(np.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("x")))
    y = d(x)
    z = d(y)   # cached: same signature as the first call
    assert x.is_deleted() and y.is_deleted() and not z.is_deleted()
    np.testing.assert_array_equal(np.asarray(z)[0], [2.0, 3.0, 4.0, 5.0])
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        d(y)


def check_cached_calls_from_other_threads():
    mesh = _explicit_mesh()
    xe = jax.device_put(np.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("e")))
    h = jax.jit(lambda v: v.sum(axis=1))
    expected = np.arange(32.0).reshape(8, 4).sum(axis=1)
    h(xe)
    results = []
    threads = [threading.Thread(target=lambda: results.append(h(xe))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for r in results:
        np.testing.assert_array_equal(np.asarray(r), expected)
        assert r.sharding == NamedSharding(mesh, P("e"))


def check_repeated_eager_ops_on_sharded_arrays():
    mesh = _auto_mesh()
    split_rows, split_cols = NamedSharding(mesh, P("x")), NamedSharding(mesh, P(None, "y"))
    host = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    x, y = jax.device_put(host, split_rows), jax.device_put(np.ones((8, 4), np.float32),
                                                             split_rows)
    with _GeneralRoute() as general:
        sums = [x + y for _ in range(3)]
        sines = [jnp.sin(x) for _ in range(3)]
    assert general.count == 2   # one plan per op, then straight to its executable
    for out in sums:
        np.testing.assert_array_equal(np.asarray(out), host + 1)
        assert out.sharding == split_rows and out.committed
    for out in sines:
        np.testing.assert_allclose(np.asarray(out), np.sin(host), rtol=1e-6)
        assert out.sharding == split_rows
    # other shardings of the same types: planned again, propagated as XLA chooses
    xc, yc = jax.device_put(host, split_cols), jax.device_put(np.ones((8, 4), np.float32),
                                                               split_cols)
    for _ in range(2):
        out = xc + yc
        np.testing.assert_array_equal(np.asarray(out), host + 1)
        assert out.sharding == split_cols
    out = x + y
    assert out.sharding == split_rows
    np.testing.assert_array_equal(np.asarray(out), host + 1)
    with pytest.raises(ValueError, match="incompatible"):
        x + jax.device_put(np.ones((8, 4), np.float32), jax.devices()[0])


test_partitioned_calls = checks_on_devices(globals(), 8)
