"""shard_map bodies typed with check_vma: collectives and casts whose transposes follow the
types (psum_invariant <-> pvary, all_gather(to='invarying') -> each member's slice), and
partial sums / reduced values in the body's types (U:x, R:x: unreduced_psum, preduced,
unreduced_reduce_scatter, all_gather_reduced and the casts between them). Loops and
linearize check carries and tangents against the types; eager shard_maps follow JAX's
rules for eager bodies. Expected
jaxprs, types, values and shardings are JAX 0.10.2's for the same programs (recorded in
a scratch install). The checks run in one subprocess with eight devices."""
from __future__ import annotations

import re

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src import config
from pyjax.sharding import AxisType, PartitionSpec as P

from harness import checks_in_process, close

N = 8


def _body_primitives(closed):
    (eqn,) = closed.jaxpr.eqns
    return [str(e.primitive) for e in eqn.params["jaxpr"].eqns]


def _typed_program(w, x):
    y = jnp.sin(w * x)                       # w replicated, x split: an implicit pvary
    g = jax.lax.all_gather(y, "x", tiled=True, to="invarying")
    return jax.lax.psum(y * y, "x") + g.sum(), g


def check_transposes_follow_types():
    mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))

    def vjp_body(f, primal, ct):
        return _body_primitives(jax.make_jaxpr(jax.vjp(f, primal)[1])(ct))

    psum_to = lambda spec: jax.shard_map(lambda x: jax.lax.psum(x, "x"),  # noqa: E731
                                         mesh=mesh, in_specs=P("x"), out_specs=spec)
    ident_to = lambda spec: jax.shard_map(lambda x: x, mesh=mesh,  # noqa: E731
                                          in_specs=P(), out_specs=spec)
    assert vjp_body(psum_to(P()), jnp.arange(4.0), jnp.array([1.0])) == ["pvary"]
    assert vjp_body(psum_to(P("x")), jnp.arange(4.0), jnp.arange(4.0)) == [
        "psum_invariant", "pvary"]
    assert vjp_body(ident_to(P("x")), jnp.arange(1.0), jnp.arange(4.0)) == ["psum_invariant"]
    assert vjp_body(ident_to(P()), 1.0, 1.0) == []

    f = jax.shard_map(_typed_program, mesh=mesh, in_specs=(P(), P("x")),
                      out_specs=(P(), P()))
    w = np.linspace(0.5, 1.5, 3).astype(np.float32)
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3) / 7
    gw, gx = jax.grad(lambda w, x: f(w, x)[0].sum() + (f(w, x)[1] ** 2).sum(), (0, 1))(w, x)
    close(gw, JAX_GW)
    close(gx, JAX_GX)
    with config.executor("numpy"):
        gw_np, gx_np = jax.grad(lambda w, x: f(w, x)[0].sum(), (0, 1))(w, x)
    gw_xla, gx_xla = jax.grad(lambda w, x: f(w, x)[0].sum(), (0, 1))(w, x)
    close(gw_np, gw_xla)
    close(gx_np, gx_xla)


def check_partial_sums_and_reduced_values_in_types():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,))
    seen = {}

    @jax.shard_map(in_specs=(P(unreduced={"x"}), P(None, reduced={"x"})), out_specs=P())
    def add_up(z, r):
        seen["z"], seen["r"] = str(jax.typeof(z)), str(jax.typeof(r))
        zr = z * r                              # a partial sum times a whole value
        seen["zr"] = str(jax.typeof(zr))
        seen["sr"] = str(jax.typeof(jnp.sin(r)))
        with pytest.raises(NotImplementedError, match="unreduced rule for sin"):
            jnp.sin(z)
        out = jax.lax.psum(zr, "x")             # unreduced_psum
        seen["out"] = str(jax.typeof(out))
        return out

    def loss(a, b, r):
        z = jnp.einsum("ab,bc->ac", a, b, out_sharding=P(unreduced={"x"}))
        return add_up(z, r).sum()

    with jax.set_mesh(mesh):
        a = jax.device_put(np.arange(8.0).reshape(2, 4), P(None, "x"))
        b = jax.device_put(np.arange(24.0).reshape(4, 6), P("x", None))
        r = jax.device_put(np.arange(6.0) / 3, P(None, reduced={"x"}))
        close(jax.jit(loss)(a, b, r), 2073.333251953125)
        assert seen == JAX_SEEN, seen
        ga, gb, gr = jax.jit(jax.grad(loss, (0, 1, 2)))(a, b, r)
        assert (ga.sharding.spec, gb.sharding.spec, gr.sharding.spec) == (
            P(None, "x"), P("x", None), P(None, unreduced={"x"}))
        close(ga, JAX_GA)
        close(gb, JAX_GB)
        close(jax.sharding.reshard(gr, P()), [312.0, 340.0, 368.0, 396.0, 424.0, 452.0])

        arr = jax.device_put(np.arange(8.0), P("x"))

        @jax.shard_map(out_specs=P(reduced={"x"}))
        def gather(x):
            return jax.lax.all_gather(x, "x", tiled=True, to="reduced")

        out = gather(arr)
        assert out.sharding.spec == P(reduced={"x"})
        close(out, np.arange(8.0))
        g = jax.grad(lambda x: jnp.sin(gather(x)).sum())(arr)
        assert g.sharding.spec == P("x")
        close(g, np.cos(np.arange(8.0)))

        @jax.shard_map(out_specs=P(unreduced={"x"}))
        def partial_sums(x):
            return jax.lax.pcast(x, "x", to="unreduced")

        out = partial_sums(arr)
        assert out.sharding.spec == P(unreduced={"x"})
        close(jax.sharding.reshard(out, P()), [4.0, 6.0, 8.0, 10.0])
        g = jax.grad(lambda x: partial_sums(x).sum())(arr)
        assert g.sharding.spec == P("x")
        close(g, np.ones(8))
        with pytest.raises(ValueError, match="Unsupported pcast from=invarying, to='unreduced'"):
            jax.shard_map(lambda x: jax.lax.pcast(x, "x", to="unreduced"),
                          in_specs=P(), out_specs=P(unreduced={"x"}))(np.arange(4.0))


def check_reduced_operand_cast_to_vary():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)

    @jax.jit
    @jax.shard_map(in_specs=(P("x", "y"), P("y", None, reduced={"x"})), out_specs=P("x", None))
    def f(x, y):
        return jax.lax.psum(jnp.dot(x, y), axis_name="y")

    with jax.set_mesh(mesh):
        a1 = jax.device_put(np.arange(8.0).reshape(4, 2), P("x", "y"))
        a2 = jax.device_put(np.arange(12.0).reshape(2, 6), P("y", None, reduced={"x"}))
        assert str(jax.make_jaxpr(f)(a1, a2)).count("reduced_vary_cast") == 1
        g1, g2 = jax.jit(jax.grad(lambda x, y: f(x, y).sum(), (0, 1)))(a1, a2)
        assert (g1.sharding.spec, g2.sharding.spec) == (
            P("x", "y"), P("y", None, unreduced={"x"}))
        close(g1, [[15.0, 51.0]] * 4)
        close(jax.sharding.reshard(g2, P()), [[12.0] * 6, [16.0] * 6])


def check_loops_and_linearize_follow_types():
    mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))

    def powers(x):   # a loop whose predicate varies from device to device
        n = jax.lax.axis_index("x") + 1
        return jax.lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * x),
                                  (jnp.int32(0), jnp.ones_like(x)))[1]

    f = jax.shard_map(powers, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    expected = [1.0, 2.0, 9.0, 16.0, 125.0, 216.0, 2401.0, 4096.0]
    close(f(jnp.arange(1.0, 9.0)), expected)
    close(jax.jit(f)(jnp.arange(1.0, 9.0)), expected)

    # Samplers' loops start from carries varying as their keys and parameters do.
    g = jax.shard_map(lambda k, a: jax.random.beta(jax.lax.pcast(k, "x", to="varying"), a, a),
                      mesh=mesh, in_specs=(P(), P("x")), out_specs=P("x"))
    out = np.asarray(g(jax.random.key(0), jnp.full((8,), 2.0)))
    close(out[:2], out[2:4])   # the same key on every device

    def carries_swapped(x, y):
        return jax.lax.scan(lambda c, _: ((c[1], c[0]), ()), (x, y), (), length=2)[0]

    tiny = jax.make_mesh((1, 1), ("i", "j"), axis_types=(AxisType.Auto,) * 2)
    with pytest.raises(TypeError, match=re.escape(
            "This might be fixed by applying `jax.lax.pcast(..., ('i',), to='varying')`, "
            "to the initial carry value corresponding to the input carry component c[1]")):
        jax.shard_map(carries_swapped, mesh=tiny, in_specs=(P("i"), P()),
                      out_specs=P("i"))(jnp.arange(3.0), jnp.arange(3.0))
    out = jax.shard_map(lambda x, y: carries_swapped(x, jax.lax.pcast(y, "i", to="varying")),
                        mesh=tiny, in_specs=(P("i"), P()), out_specs=P("i"))(
        jnp.arange(3.0), jnp.arange(3.0) + 1)
    close(out[0], np.arange(3.0))

    def tangent_of_invariant_primal(t):
        _, f_jvp = jax.linearize(lambda x: jnp.mean(x ** 2), jnp.array([1.0]))
        return f_jvp(t)

    with pytest.raises(ValueError, match=re.escape(
            "Got tangent aval float32[1]{V:x} for primal aval float32[1] but expected "
            "float32[1]. \nThis might be fixed by:\n  * applying `jax.lax.pcast(..., "
            "('x',), to='varying')` to the primal value passed to `jax.linearize`;")):
        jax.shard_map(tangent_of_invariant_primal, mesh=mesh, in_specs=P("x"),
                      out_specs=P("x"))(jnp.ones((4,)))


def check_eager_shard_map_programs():
    from pyjax.extend.core import Primitive
    mesh = jax.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
    # Dead work in an eager body is not compiled (as jit drops it): a primitive with
    # no lowering and no used results runs nowhere.
    nothing = Primitive("does_nothing")
    nothing.multiple_results = True
    nothing.def_impl(lambda: [])
    nothing.def_abstract_eval(lambda: [])
    f = jax.shard_map(lambda: nothing.bind(), mesh=mesh, in_specs=(), out_specs=None,
                      check_vma=False)
    f()
    jax.jit(f)()

    # An eager body may not place values on one device; under jit placements are the
    # program's business (JAX's rule).
    g = jax.shard_map(lambda x: x + jax.device_put(1, jax.devices()[0]), mesh=mesh,
                      in_specs=P("i"), out_specs=P("i"))
    with pytest.raises(ValueError, match="device_put with explicit device not allowed "
                       "within shard_map-decorated functions, but got device"):
        g(jnp.arange(8.0))
    close(jax.jit(g)(jnp.arange(8.0)), np.arange(1.0, 9.0))
    h = jax.shard_map(lambda x: x + jax.device_put(1), mesh=mesh, in_specs=P("i"),
                      out_specs=P("i"))
    close(h(jnp.arange(8.0)), np.arange(1.0, 9.0))


CHECKS = [name for name in dict(globals()) if name.startswith("check_")]


@pytest.fixture(scope="module")
def eight_device_results():
    return checks_in_process("test_shard_map_typed_collectives", N)


@pytest.mark.parametrize("name", CHECKS)
def test_on_eight_devices(eight_device_results, name):
    result = eight_device_results[name]
    assert result == "ok", result


# JAX 0.10.2's values for the programs above.
JAX_GW = [10.802186012268066, 7.83524751663208, -4.177892684936523]
JAX_GX = [[1.5, 3.533125638961792, 6.360947608947754],
          [1.8812648057937622, 4.343033313751221, 4.677278518676758],
          [2.1203157901763916, 3.4395017623901367, -1.4926576614379883],
          [2.160217761993408, 0.9864962697029114, -6.184990882873535]]
JAX_SEEN = {"z": "float32[2,6]{U:x}", "r": "float32[6]{R:x}", "zr": "float32[2,6]{U:x}",
            "sr": "float32[6]{R:x}", "out": "float32[2,6]"}
JAX_GA = [[18.33333396911621, 48.333335876464844, 78.33333587646484, 108.33333587646484]] * 2
JAX_GB = [[0.0, 1.3333333730697632, 2.6666667461395264, 4.0, 5.333333492279053,
           6.666666507720947], [0.0, 2.0, 4.0, 6.0, 8.0, 10.0],
          [0.0, 2.6666667461395264, 5.333333492279053, 8.0, 10.666666984558105,
           13.333333015441895],
          [0.0, 3.3333334922790527, 6.6666669845581055, 10.0, 13.333333969116211,
           16.66666603088379]]
