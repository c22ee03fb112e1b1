"""Dead-code elimination inside higher-order primitives (jit, cond, scan, while, checkpoint):
unused outputs disappear with the body work that only they needed, unread operands go,
values stay the same on both executors, and linearize/grad jaxprs come out pruned."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax._src.core.jaxpr import check_jaxpr, dce_jaxpr, eval_jaxpr
from pyjax._src.lax.control_flow.scan import scan_p

from harness import EXECUTORS


def only_eqn(jaxpr, name):
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == name]
    return eqn


def prims_in(jaxpr):
    """Names of every primitive in a jaxpr, sub-jaxprs included."""
    return set(_prims(jaxpr))


def _prims(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn.primitive.name
        for value in eqn.params.values():
            subs = value if isinstance(value, tuple) else (value,)
            for sub in subs:
                if hasattr(sub, "jaxpr") and hasattr(sub, "consts"):
                    yield from _prims(sub.jaxpr)


def dce_and_check(closed, used_outputs):
    """The DCE'd jaxpr, after checking it is well typed and computes the same used outputs
    as the original, eagerly and jitted on both executors."""
    pruned, _ = dce_jaxpr(closed.jaxpr, used_outputs)
    check_jaxpr(pruned)
    return pruned


def assert_same_values(closed, pruned, used_outputs, *args):
    expected = [o for o, u in zip(eval_jaxpr(closed.jaxpr, closed.consts, *args),
                                  used_outputs) if u]
    consts = [c for v, c in zip(closed.jaxpr.constvars, closed.consts)
              if v in pruned.constvars]
    runs = [eval_jaxpr(pruned, consts, *args)]
    for executor in EXECUTORS:
        with config.executor(executor):
            runs.append(jax.jit(lambda *a: eval_jaxpr(pruned, consts, *a))(*args))
    for outs in runs:
        assert len(outs) == len(expected)
        for a, e in zip(outs, expected):
            np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-5, atol=1e-6)


# --- scan -------------------------------------------------------------------------------

def test_scan_unused_ys_and_their_body_work_disappear():
    def f(c0, xs):
        def body(c, x):
            return jnp.sin(c) * x, jnp.exp(jnp.cos(c * x))
        return lax.scan(body, c0, xs)

    xs = jnp.linspace(0.1, 1., 5)
    closed = jax.make_jaxpr(f)(0.5, xs)
    assert "exp" in prims_in(closed.jaxpr)
    pruned = dce_and_check(closed, [True, False])
    eqn = only_eqn(pruned, "scan")
    assert len(eqn.outvars) == 1 and eqn.params["num_carry"] == 1
    assert not {"exp", "cos"} & prims_in(pruned)
    assert_same_values(closed, pruned, [True, False], 0.5, xs)


def test_scan_keeps_carries_that_needed_work_reads_and_drops_the_rest():
    def f(a, b, c, k, xs):
        def body(carry, x):
            a, b, c = carry
            # a is read by b's update; c is read by nothing that is used.
            return (a * 0.5 + x, b + jnp.sin(a) * k, c * jnp.tanh(c)), a * k
        return lax.scan(body, (a, b, c), xs)

    xs = jnp.linspace(0.1, 1., 4)
    args = (0.3, 0.2, 0.7, 2.0, xs)
    closed = jax.make_jaxpr(f)(*args)
    used = [False, True, False, False]      # only the final b
    pruned = dce_and_check(closed, used)
    eqn = only_eqn(pruned, "scan")
    assert eqn.params["num_carry"] == 2       # a (read by b's update) and b
    assert "tanh" not in prims_in(pruned)
    assert [type(v).__name__ for v in eqn.outvars] == ["DropVar", "Var"]
    assert len(eqn.params["linear"]) == len(eqn.invars)
    assert_same_values(closed, pruned, used, *args)


def test_scan_drops_consts_and_xs_only_pruned_work_reads():
    def f(c0, xs, zs, w):
        def body(c, xz):
            x, z = xz
            return c + x, jnp.sin(z) * w
        return lax.scan(body, c0, (xs, zs))

    xs, zs = jnp.arange(3.), jnp.arange(3.) * 2
    closed = jax.make_jaxpr(f)(1.0, xs, zs, 3.0)
    pruned = dce_and_check(closed, [True, False])
    eqn = only_eqn(pruned, "scan")
    assert eqn.params["num_consts"] == 0 and len(eqn.invars) == 2   # init and xs
    assert_same_values(closed, pruned, [True, False], 1.0, xs, zs, 3.0)


def scan_with_unused_ys(x):
    """A scan whose ys nobody reads: their tangents and residuals are dead work."""
    def body(c, xi):
        return jnp.sin(c) * xi, jnp.exp(jnp.cos(c * xi))
    c, _ = lax.scan(body, x, jnp.arange(1., 4.))
    return c


def test_linearize_of_scan_keeps_no_residuals_for_unused_tangents():
    f = scan_with_unused_ys

    def linear_jaxpr():
        _, f_jvp = jax.linearize(f, 0.5)
        return jax.make_jaxpr(f_jvp)(1.0), f_jvp

    pruned, f_jvp = linear_jaxpr()
    saved = scan_p.dce
    scan_p.dce = None
    try:
        whole, _ = linear_jaxpr()
    finally:
        scan_p.dce = saved
    # The tangent scan no longer computes the ys tangents, nor keeps their residuals.
    assert len(pruned.consts) < len(whole.consts)
    body = only_eqn(pruned.jaxpr, "scan").params["jaxpr"].jaxpr
    assert len(body.outvars) == 1 and "neg" not in prims_in(body)
    assert "neg" in prims_in(whole.jaxpr)
    np.testing.assert_allclose(f_jvp(1.0), jax.jvp(f, (0.5,), (1.0,))[1], rtol=1e-6)
    np.testing.assert_allclose(jax.grad(f)(0.5), jax.jvp(f, (0.5,), (1.0,))[1], rtol=1e-6)


def test_grad_backward_scan_is_pruned():
    f = scan_with_unused_ys
    closed = jax.make_jaxpr(jax.grad(f))(0.5)
    backward = [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"][-1]
    assert backward.params["reverse"]
    assert prims_in(backward.params["jaxpr"].jaxpr) <= {"mul", "convert_element_type"}


# --- cond -------------------------------------------------------------------------------

def test_cond_prunes_every_branch_and_unread_operands():
    def f(p, x, y):
        return lax.cond(p, lambda x, y: (jnp.sin(x), jnp.exp(y)),
                        lambda x, y: (x * 2., jnp.log(y)), x, y)

    args = (True, jnp.arange(1., 4.), jnp.arange(2., 5.))
    closed = jax.make_jaxpr(f)(*args)
    pruned = dce_and_check(closed, [True, False])
    eqn = only_eqn(pruned, "cond")
    assert len(eqn.invars) == 2 and len(eqn.outvars) == 1        # index and x
    assert all(len(b.jaxpr.invars) == 1 and len(b.jaxpr.outvars) == 1
               for b in eqn.params["branches"])
    assert not {"exp", "log"} & prims_in(pruned)
    for p in (True, False):
        assert_same_values(closed, pruned, [True, False], p, *args[1:])


def test_pruned_closed_jaxpr_prunes_inside_equations_it_keeps():
    # every output used, but the cond's second output is not: the cond stays, pruned
    from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, prune_closed_jaxpr

    def f(p, x):
        a, _ = lax.cond(p, lambda x: (jnp.cos(x), jnp.sin(x)),
                        lambda x: (x, jnp.exp(x)), x)
        return a * 2.

    closed = jax.make_jaxpr(f)(True, jnp.arange(1., 4.))
    pruned, used = prune_closed_jaxpr(closed, [True], [True, True])
    assert used == [True, True] and pruned is not closed
    assert not {"sin", "exp"} & prims_in(pruned.jaxpr)
    same, _ = prune_closed_jaxpr(
        ClosedJaxpr(Jaxpr([], pruned.jaxpr.invars, pruned.jaxpr.outvars,
                          pruned.jaxpr.eqns), []), [True], [True, True])
    assert same.jaxpr.eqns == pruned.jaxpr.eqns
    for p in (True, False):
        assert_same_values(closed, pruned.jaxpr, [True], p, jnp.arange(1., 4.))
    # a checkpoint of a cond recomputes only what the tangents need (JAX 0.10.2: the
    # linearized function of remat(cond(sin, sin)) computes no sin)
    g = lambda x: lax.cond(x > 0., lambda c: (jnp.sin(c), jnp.sin(c)),
                           lambda c: (jnp.sin(c), jnp.sin(c)), x)
    text = str(jax.make_jaxpr(jax.linearize(jax.checkpoint(g), 4.)[1])(1.))
    assert " sin " not in text and " cos " in text


def test_switch_branches_share_the_union_of_read_operands():
    def f(i, x, y):
        return lax.switch(i, [lambda x, y: (x + 1., y), lambda x, y: (y * 3., x),
                              lambda x, y: (x * y, y)], x, y)

    args = (1, jnp.float32(2.), jnp.float32(5.))
    closed = jax.make_jaxpr(f)(*args)
    pruned = dce_and_check(closed, [True, False])
    eqn = only_eqn(pruned, "cond")
    assert len(eqn.invars) == 3    # the index, x and y: some branch reads each
    assert len(eqn.outvars) == 1
    assert all(len(b.jaxpr.invars) == 2 and len(b.jaxpr.outvars) == 1
               for b in eqn.params["branches"])
    for i in range(3):
        assert_same_values(closed, pruned, [True, False], i, *args[1:])


# --- while ------------------------------------------------------------------------------

def test_while_drops_carries_neither_used_nor_read_by_the_predicate():
    def f(x, n):
        def body(state):
            i, x, acc, junk = state
            return i + 1, jnp.sin(x), acc + x * x, jnp.exp(junk)
        return lax.while_loop(lambda s: s[0] < n, body, (0, x, 0., x))

    args = (jnp.float32(0.7), 4)
    closed = jax.make_jaxpr(f)(*args)
    used = [False, True, False, False]
    pruned = dce_and_check(closed, used)
    eqn = only_eqn(pruned, "while")
    # The counter stays (the predicate reads it) though its output is unused.
    assert len(eqn.outvars) == 2 and type(eqn.outvars[0]).__name__ == "DropVar"
    assert not {"exp", "mul"} & prims_in(pruned)
    assert_same_values(closed, pruned, used, *args)


def test_linearize_of_while_prunes_unused_tangent_carries():
    def f(x):
        def body(state):
            i, x, acc = state
            return i + 1, jnp.sin(x), acc + jnp.exp(x)
        _, x, _ = lax.while_loop(lambda s: s[0] < 3, body, (0, x, 0.))
        return x

    _, f_jvp = jax.linearize(f, 0.4)
    closed = jax.make_jaxpr(f_jvp)(1.0)
    eqn = only_eqn(closed.jaxpr, "while")
    assert len(eqn.outvars) == 3          # counter, x and x's tangent
    assert "exp" not in prims_in(closed.jaxpr)
    np.testing.assert_allclose(f_jvp(1.0), jax.jvp(f, (0.4,), (1.0,))[1], rtol=1e-6)


# --- jit and checkpoint -----------------------------------------------------------------

@pytest.mark.parametrize("keep_unused", [False, True])
def test_jit_call_drops_unused_outputs_and_inputs(keep_unused):
    inner = jax.jit(lambda x, y: (jnp.sin(x), jnp.exp(y)), keep_unused=keep_unused)

    def f(x, y):
        return inner(x, y)

    args = (jnp.arange(3.), jnp.arange(3.) + 1)
    closed = jax.make_jaxpr(f)(*args)
    pruned = dce_and_check(closed, [True, False])
    eqn = only_eqn(pruned, "jit")
    assert len(eqn.outvars) == 1 and "exp" not in prims_in(pruned)
    assert len(eqn.invars) == (2 if keep_unused else 1)
    assert len(eqn.params["donated_invars"]) == len(eqn.invars)
    assert_same_values(closed, pruned, [True, False], *args)


def test_checkpoint_call_is_pruned():
    def f(x):
        return jax.checkpoint(lambda x: (jnp.sin(x), jnp.exp(x)))(x)

    x = jnp.arange(3.)
    closed = jax.make_jaxpr(lambda x: jax.jvp(f, (x,), (x,)))(x)
    used = [False, False, True, False]    # the tangent of sin only
    pruned = dce_and_check(closed, used)
    eqn = only_eqn(pruned, "checkpoint")
    assert len(eqn.outvars) == 1 and "exp" not in prims_in(pruned)
    assert_same_values(closed, pruned, used, x)


def test_nested_scan_in_cond_in_jit_is_pruned_through_every_level():
    @jax.jit
    def inner(p, x):
        def branch(x):
            c, ys = lax.scan(lambda c, xi: (c + xi, jnp.exp(xi) * c), 0., x)
            return c, ys
        return lax.cond(p, branch, lambda x: (jnp.sum(x), x * 2.), x)

    def f(p, x):
        return inner(p, x)

    args = (True, jnp.arange(4.))
    closed = jax.make_jaxpr(f)(*args)
    pruned = dce_and_check(closed, [True, False])
    assert "exp" not in prims_in(pruned)
    for p in (True, False):
        assert_same_values(closed, pruned, [True, False], p, args[1])


def test_effects_keep_equations_whole():
    def f(x):
        def body(c, xi):
            jax.debug.print("step {}", xi)
            return c + xi, jnp.exp(xi)
        return lax.scan(body, 0., x)

    closed = jax.make_jaxpr(f)(jnp.arange(3.))
    pruned = dce_and_check(closed, [True, False])
    eqn = only_eqn(pruned, "scan")
    assert len(eqn.outvars) == 2      # an effectful scan is kept as it is
