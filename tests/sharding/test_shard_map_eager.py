"""shard_map called outside jit runs its body op by op, as JAX 0.10.2's eager shard_map:
values the types say are the same on every device are concrete (Python control flow on
a psum works), printing a value shows every device's block, and jax.new_ref is refused.
Expected values, reprs and messages are JAX 0.10.2's for the same programs (recorded in
a scratch install). The checks run in one subprocess with eight devices; each is
reported as its own test."""
from __future__ import annotations

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.sharding import Mesh, NamedSharding, PartitionSpec as P

from harness import checks_on_devices, raises_with


def _mesh(n):
    return Mesh(np.array(jax.devices()[:n]), ("x",))


def _grid():
    return Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("x", "y"))


def check_python_control_flow_on_invariant_values():
    mesh = _mesh(4)

    def count():
        total = jax.lax.psum(jax.lax.axis_index("x"), "x")
        return 1. if total > 0 else -1.

    out = jax.shard_map(count, mesh=mesh, in_specs=(), out_specs=P())()
    assert repr(out) == "Array(1., dtype=float32, weak_type=True)", repr(out)
    assert out.sharding == NamedSharding(mesh, P()), out.sharding

    def scale(x):
        s = jax.lax.psum(x.sum(), "x")
        return x * (s > 20), jax.lax.psum(x.max(), "x")

    a, b = jax.shard_map(scale, mesh=mesh, in_specs=P("x"), out_specs=(P("x"), P()))(
        jnp.arange(8.))
    np.testing.assert_array_equal(np.asarray(a), np.arange(8.))
    assert repr(b) == "Array(16., dtype=float32)", repr(b)
    assert a.sharding == NamedSharding(mesh, P("x")), a.sharding

    def two_axes(x):   # JAX's test_eager_control_flow
        y = jax.lax.psum(x, ("x", "y"))
        return x if y < 0 else -x

    x = jnp.arange(4.).reshape(2, 2)
    out = jax.shard_map(two_axes, mesh=_grid(), in_specs=P("x", "y"),
                        out_specs=P("x", "y"))(x)
    np.testing.assert_array_equal(np.asarray(out), -np.asarray(x))


def check_varying_or_untyped_values_are_not_concrete():
    mesh = _mesh(4)

    def varying(x):
        bool(x.sum() > 0)

    raises_with(jax.errors.TracerBoolConversionError, "", jax.shard_map(
        lambda x: (varying(x), x)[1], mesh=mesh, in_specs=P("x"), out_specs=P("x")),
        jnp.arange(8.))

    def untyped(x):   # without check_vma nothing says a psum is the same everywhere
        bool(jax.lax.psum(x, "x").sum() > 0)
        return x

    raises_with(jax.errors.TracerBoolConversionError, "", jax.shard_map(
        untyped, mesh=mesh, in_specs=P("x"), out_specs=P("x"), check_vma=False),
        jnp.arange(8.))


def check_values_print_every_block():
    seen = {}

    def f(x):
        seen["sum"] = str(jax.lax.psum(x, "x"))
        seen["x"] = repr(x)
        return x

    jax.shard_map(f, mesh=_mesh(2), in_specs=P("x"), out_specs=P("x"))(jnp.arange(4))
    assert seen["sum"] == ("On cpu:0 at mesh coordinates (x,) = (0,):\n[2 4]\n\n"
                           "On cpu:1 at mesh coordinates (x,) = (1,):\n[2 4]\n"), seen
    assert seen["x"] == ("On cpu:0 at mesh coordinates (x,) = (0,):\n[0 1]\n\n"
                         "On cpu:1 at mesh coordinates (x,) = (1,):\n[2 3]\n"), seen

    def g(x):
        seen["2d"] = str(x)
        return x

    jax.shard_map(g, mesh=_grid(), in_specs=P("x", "y"), out_specs=P("x", "y"))(
        np.arange(4 * 4.).reshape(4, 4))
    assert seen["2d"] == (
        "On cpu:0 at mesh coordinates (x, y,) = (0, 0):\n[[0. 1.]\n [4. 5.]]\n\n"
        "On cpu:1 at mesh coordinates (x, y,) = (0, 1):\n[[2. 3.]\n [6. 7.]]\n\n"
        "On cpu:2 at mesh coordinates (x, y,) = (1, 0):\n[[ 8.  9.]\n [12. 13.]]\n\n"
        "On cpu:3 at mesh coordinates (x, y,) = (1, 1):\n[[10. 11.]\n [14. 15.]]\n"), seen


def check_results_match_jit():
    mesh = _mesh(4)

    def f(x):
        return (jnp.where(jax.lax.axis_index("x") == 0, x, -x),
                jax.lax.psum(jnp.sin(x) + 1, "x"))

    g = jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=(P("x"), P()))
    x = jnp.arange(8.)
    eager, jitted = g(x), jax.jit(g)(x)
    np.testing.assert_array_equal(np.asarray(eager[0]), [0., 1., -2., -3., -4., -5., -6., -7.])
    for e, j in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(e), np.asarray(j), rtol=1e-6)
        assert e.sharding == j.sharding, (e.sharding, j.sharding)
    # grad through the eager shard_map traces it (as JAX): same numbers as under jit
    loss = lambda x: g(x)[1].sum()   # noqa: E731
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(x)),
                               np.asarray(jax.jit(jax.grad(loss))(x)), rtol=1e-6)


def check_out_spec_replication_is_checked():
    raises_with(ValueError, "out_specs is P() which implies that the corresponding output "
            "value is replicated across mesh axis 'x', but could not infer replication",
            jax.shard_map(lambda x: x + jax.lax.psum(x, "x"), mesh=_mesh(4),
                          in_specs=P("x"), out_specs=P()), jnp.arange(8.))


def check_new_ref_is_refused_eagerly():
    def f(x):
        return jax.freeze(jax.new_ref(x))

    mesh = _mesh(4)
    raises_with(ValueError, "Eager shard_map cannot return a `jax.Ref`. Please wrap your "
            "shard_map in `jax.jit`.",
            jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x")), jnp.arange(8.))
    out = jax.shard_map(jax.jit(f), mesh=mesh, in_specs=P("x"), out_specs=P("x"))(
        jnp.arange(8.))
    np.testing.assert_array_equal(np.asarray(out), np.arange(8.))


def check_eager_bodies_run_from_threads():
    import threading
    mesh = _mesh(4)

    def f(x):
        total = jax.lax.psum(x.sum(), "x")
        return x * 2 if total > 0 else x

    g = jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    results = {}

    def work(i):
        results[i] = np.asarray(g(jnp.arange(8.) + i))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        np.testing.assert_array_equal(results[i], 2 * (np.arange(8.) + i))


test_on_eight_devices = checks_on_devices(globals(), 8)
