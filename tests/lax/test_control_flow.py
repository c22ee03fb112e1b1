"""Structured control flow (lax.cond, switch, while_loop, fori_loop, scan, map,
associative_scan): values against Python references, jvp/grad (check_grads), vmap
against a loop, jit on both executors, nesting, JAX's errors, and jaxpr sizes."""
import re
import time

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import errors
from pyjax import grad, jvp, value_and_grad
from pyjax._src.core.jaxpr import JaxprTypeError, check_jaxpr
from pyjax._src.test_util import check_grads

from harness import EXECUTORS, jit_on

def loop_vmap(f, *args):
    """The reference for vmap: f per example, stacked."""
    n = len(jax.tree_util.tree_leaves(args[0])[0])
    outs = [f(*jax.tree_util.tree_map(lambda a, i=i: a[i], args)) for i in range(n)]
    return jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *outs)


def assert_tree_close(actual, expected, rtol=1e-5, atol=1e-6):
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    assert a_tree == e_tree
    for a, e in zip(a_leaves, e_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol)


def primitives_in(closed):
    return [e.primitive.name for e in closed.eqns]


X = np.array([0.5, -1.2, 2.0], np.float32)


# --- cond --------------------------------------------------------------------------------

def branchy(x):
    return lax.cond(jnp.sum(x) > 0, lambda v: jnp.sin(v) * 2.0, lambda v: jnp.cos(v) - v, x)


def test_cond_picks_the_branch():
    assert_tree_close(branchy(X), np.sin(X) * 2)
    assert_tree_close(branchy(-X), np.cos(-X) + X)
    assert float(lax.cond(3, lambda: 1.0, lambda: 2.0)) == 1.0       # nonzero int
    assert float(lax.cond(0.0, lambda: 1.0, lambda: 2.0)) == 2.0     # float zero
    out = lax.cond(True, lambda a, b: {"s": a + b}, lambda a, b: {"s": a - b}, 1.0, X)
    assert_tree_close(out, {"s": 1.0 + X})


def test_cond_legacy_operand_form_and_operand_keyword():
    out = lax.cond(False, X, lambda a: a * 10.0, X - 1, lambda b: b + 1.0)
    assert_tree_close(out, X)
    out = lax.cond(True, 2.0, lambda a: a * 10.0, 3.0, lambda b: b + 1.0)
    assert float(out) == 20.0
    assert_tree_close(lax.cond(True, jnp.sin, jnp.cos, operand=X), np.sin(X))
    # JAX 0.10.2: two functions then two operands, the second callable (a Partial, flax's
    # Variables), is the modern form: 3.0, -3.0
    add1 = jax.tree_util.Partial(jnp.add, 1.0)
    assert float(lax.cond(True, lambda a, p: p(a), lambda a, p: -p(a), 2.0, add1)) == 3.0
    assert float(lax.cond(False, lambda a, p: p(a), lambda a, p: -p(a), 2.0, add1)) == -3.0


@pytest.mark.parametrize("executor", EXECUTORS)
def test_cond_jit(executor):
    f = jit_on(executor, branchy)
    assert_tree_close(f(X), np.sin(X) * 2)
    assert_tree_close(f(-X), np.cos(-X) + X)


def test_cond_traces_each_branch_once():
    calls = []

    def true_fun(x):
        calls.append("t")
        return x + 1

    def false_fun(x):
        calls.append("f")
        return x - 1

    closed = jax.make_jaxpr(lambda x: lax.cond(x > 0, true_fun, false_fun, x))(1.0)
    assert sorted(calls) == ["f", "t"]
    assert primitives_in(closed) == ["gt", "convert_element_type", "cond"]


def test_cond_output_weak_types_are_branch_zeros():
    # JAX 0.10.2: cond's outputs have the types of branch 0 (cond's false_fun), weak types
    # included, whichever branch runs (blackjax's HMC state stays weak across steps)
    one = jnp.float32(1)
    weak_first = lambda p, x: lax.cond(p, lambda x: x + one, lambda x: x * 2, x)
    strong_first = lambda p, x: lax.cond(p, lambda x: x * 2, lambda x: x + one, x)
    for p in (True, False):
        assert weak_first(p, 1.0).weak_type and jax.jit(weak_first)(p, 1.0).weak_type
        assert not strong_first(p, 1.0).weak_type
        assert not jax.jit(strong_first)(p, 1.0).weak_type
    assert lax.switch(1, [lambda x: x * 2, lambda x: x + one], 1.0).weak_type
    assert not lax.switch(1, [lambda x: x + one, lambda x: x * 2], 1.0).weak_type
    assert not jax.vmap(weak_first)(jnp.array([True, False]), jnp.ones(2)).weak_type


def test_cond_grad_and_jvp():
    check_grads(branchy, (X,), order=2, modes=["fwd", "rev"])
    check_grads(branchy, (-X,), order=2, modes=["fwd", "rev"])
    g = grad(lambda x: jnp.sum(branchy(x)))
    assert_tree_close(g(X), 2 * np.cos(X))
    assert_tree_close(jax.jit(g)(-X), -np.sin(-X) - 1)


def test_cond_grad_wrt_closed_over_value():
    def f(w, x):
        return lax.cond(x > 0, lambda: w * x, lambda: w * w)
    assert float(grad(f)(3.0, 2.0)) == 2.0
    assert float(grad(f)(3.0, -2.0)) == 6.0
    check_grads(f, (3.0, 2.0), order=1, modes=["rev"])


def test_cond_vmap_with_batched_predicate_selects_both_branches():
    xs = np.array([[1.0, 2.0], [-3.0, 0.5], [-1.0, -1.0]], np.float32)
    assert_tree_close(jax.vmap(branchy)(xs), loop_vmap(branchy, xs))
    closed = jax.make_jaxpr(jax.vmap(branchy))(xs)
    names = primitives_in(closed)
    assert "cond" not in names and "select_n" in names
    assert_tree_close(jax.vmap(grad(lambda x: jnp.sum(branchy(x))))(xs),
                      loop_vmap(grad(lambda x: jnp.sum(branchy(x))), xs))


def test_grad_of_vmapped_cond_gets_no_nan_from_the_branch_not_taken():
    # sqrt's derivative at 0 is inf; the examples that take the constant branch must not
    # send it a cotangent (JAX selects each branch's operands against stop_gradient).
    eps = 1e-3

    def safe_sqrt(x):
        return lax.cond(x < eps, lambda _: eps, lambda _: jnp.sqrt(x), ())

    xs = np.array([0.0, 0.0, 4.0, 1e-4, 9.0], np.float32)
    out = grad(lambda x: jax.vmap(safe_sqrt)(x).sum())(xs)
    np.testing.assert_allclose(out, [0.0, 0.0, 0.25, 0.0, 0.16666667], rtol=1e-6)

    def pick(i, x):
        return lax.switch(i, [lambda x: x * 2.0, jnp.log, lambda x: x ** 3], x)

    out = grad(lambda x: jax.vmap(pick)(jnp.array([0, 1, 2, 1]), x).sum())(
        np.array([0.0, 2.0, 3.0, 4.0], np.float32))
    np.testing.assert_allclose(out, [2.0, 0.5, 27.0, 0.25], rtol=1e-6)


def test_switch_branches_share_residual_slots_of_the_same_type():
    # As JAX 0.10.2: sin's and cos's f32[] residuals take one slot; a branch needing two
    # adds one more. Counts and gradients recorded from JAX.
    sin_cos = [jnp.sin, jnp.cos]
    for branches, n_out, grads in (
            (sin_cos, 2, [0.7648422122001648, -0.6442176699638367]),
            (sin_cos + [jnp.sinh], 2, [0.7648422122001648, -0.6442176699638367,
                                       1.2551690340042114]),
            (sin_cos + [jnp.sinh, lambda x: jnp.sin(x) + jnp.cos(x)], 3,
             [0.7648422122001648, -0.6442176699638367, 1.2551690340042114,
              0.12062454223632812])):
        def f(x, i, branches=branches):
            return lax.switch(i, branches, x)
        closed = jax.make_jaxpr(grad(f))(0.0, 0)
        fwd, bwd = [e for e in closed.jaxpr.eqns if e.primitive.name == "cond"]
        assert len(fwd.params["branches"][0].jaxpr.outvars) == n_out
        assert len(bwd.params["branches"][0].jaxpr.invars) == n_out
        np.testing.assert_allclose([float(grad(f)(0.7, i)) for i in range(len(branches))],
                                   grads, rtol=1e-6)


def test_cond_vmap_with_unbatched_predicate_stays_a_cond():
    f = jax.vmap(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), in_axes=(None, 0))
    xs = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    assert_tree_close(f(True, xs), np.sin(xs))
    assert "cond" in primitives_in(jax.make_jaxpr(f)(True, xs))
    assert_tree_close(jax.jit(f)(False, xs), np.cos(xs))


def test_cond_outputs_every_branch_passes_through_are_the_operand():
    # JAX 0.10.2 prunes them from the cond: vmap keeps them unbatched (out_axes=None
    # works), and the jaxpr returns the operand itself
    def f(p, b, v):
        return lax.cond(p, lambda b, v: (b, v + 1), lambda b, v: (b, v), b, v)

    b, v = jax.vmap(f, in_axes=(0, None, 0), out_axes=(None, 0))(
        jnp.array([True, False]), jnp.float32(1.5), jnp.arange(2.))
    assert float(b) == 1.5 and v.tolist() == [1.0, 1.0]
    closed = jax.make_jaxpr(f)(True, 1., 2.)
    assert str(closed).endswith("] d b c\n  in (b, e) }")

    def s(i, a, b):   # forwarded only where every branch forwards the same operand
        return lax.switch(i, [lambda a, b: (a, b), lambda a, b: (a, b * 2),
                              lambda a, b: (a, a)], a, b)

    a, b = jax.vmap(s, in_axes=(0, None, 0), out_axes=(None, 0))(
        jnp.array([0, 1, 2]), 3.0, jnp.arange(3.))
    assert float(a) == 3.0 and a.weak_type and b.tolist() == [0.0, 2.0, 3.0]
    assert [len(e.params["branches"][0].out_avals) for e in
            jax.make_jaxpr(s)(1, 1., 2.).eqns if e.primitive.name == "cond"] == [1]


def test_cond_branch_type_mismatch_names_both_types():
    with pytest.raises(TypeError, match=r"(?s)cond branches must have equal output types.*"
                       r"true_fun is <lambda> at .*test_control_flow.py:\d+\n.*"
                       r"has type int32\[\].*has type float32\[\].*dtypes do not match"):
        lax.cond(True, lambda x: jnp.int32(1), lambda x: x, jnp.float32(1.0))
    # (JAX 0.10.2's words, found key by key)
    with pytest.raises(TypeError, match=r"(?s)same pytree structure.*\n\ntrue_fun output is a "
                       r"<class 'tuple'> but false_fun output is a pytree leaf, so their "
                       r"Python types differ.\n\nRevise true_fun and/or false_fun"):
        lax.cond(True, lambda x: (x, x), lambda x: x, 1.0)
    with pytest.raises(TypeError, match=re.escape(
            "  * true_fun output at path [0]['a'] is a pytree leaf but false_fun output at "
            "path [0]['a'] is a <class 'tuple'>, so their Python types differ;\n  * true_fun "
            "output at path [1] is a <class 'list'> but false_fun output at path [1] is a "
            "<class 'tuple'>, so their Python types differ.\n")):
        lax.cond(True, lambda: ({'a': 1.}, [2.]), lambda: ({'a': (1.,)}, (2.,)))
    with pytest.raises(TypeError, match=r"(?s)shapes do not match"):
        lax.cond(True, lambda x: x, lambda x: x[:2], X)


def test_cond_bad_predicates_and_functions():
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        lax.cond(np.array([True, False]), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="Pred type must be either boolean or number"):
        lax.cond(np.complex64(1), lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="cond predicate is None"):
        lax.cond(None, lambda: 1.0, lambda: 2.0)
    with pytest.raises(TypeError, match="lax.cond: true_fun and false_fun"):
        lax.cond(True, 1, lambda: 2.0)


def test_cond_under_disable_jit_runs_one_branch_in_python():
    calls = []
    with jax.disable_jit():
        out = lax.cond(True, lambda: calls.append("t") or 1.0,
                       lambda: calls.append("f") or 2.0)
    assert out == 1.0 and calls == ["t"]


def test_python_if_on_traced_value_suggests_lax_cond():
    def f(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(errors.ConcretizationTypeError, match="lax.cond"):
        jax.jit(f)(1.0)
    assert float(grad(f)(-2.0)) == -1.0      # concrete under grad: Python `if` works


# --- switch ------------------------------------------------------------------------------

BRANCHES = [lambda x: x * 2.0, jnp.sin, lambda x: x - 10.0]


def test_switch_values_and_clamping():
    expected = [X * 2, np.sin(X), X - 10, X - 10, X * 2]
    for index, e in zip([0, 1, 2, 7, -3], expected):
        assert_tree_close(lax.switch(index, BRANCHES, X), e)
        assert_tree_close(jax.jit(lambda i, x: lax.switch(i, BRANCHES, x))(index, X), e)
    assert_tree_close(lax.switch(5, [jnp.cos], X), np.cos(X))    # one branch: a call


@pytest.mark.parametrize("executor", EXECUTORS)
def test_switch_jit(executor):
    f = jit_on(executor, lambda i, x: lax.switch(i, BRANCHES, x))
    for index, e in zip([-1, 1, 9], [X * 2, np.sin(X), X - 10]):
        assert_tree_close(f(np.int32(index), X), e)


def test_switch_grad_and_vmap():
    for index in range(3):
        check_grads(lambda x, index=index: lax.switch(index, BRANCHES, x), (X,), order=2,
                    modes=["fwd", "rev"])
    idx = np.array([2, 0, 1, 5], np.int32)
    xs = np.stack([X, X + 1, X - 1, X * 3])
    f = lambda i, x: lax.switch(i, BRANCHES, x)   # noqa: E731
    assert_tree_close(jax.vmap(f)(idx, xs), loop_vmap(f, idx, xs))
    g = jax.vmap(grad(lambda i, x: jnp.sum(f(i, x)), argnums=1))
    assert_tree_close(g(idx, xs), loop_vmap(grad(lambda i, x: jnp.sum(f(i, x)),
                                                 argnums=1), idx, xs))


def test_switch_errors():
    with pytest.raises(TypeError, match="Index type must be an integer"):
        lax.switch(1.0, BRANCHES, X)
    with pytest.raises(TypeError, match="Branch index must be scalar"):
        lax.switch(np.array([0, 1]), BRANCHES, X)
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [], X)
    with pytest.raises(TypeError, match="lax.switch: branches argument should be"):
        lax.switch(0, [jnp.sin, 3], X)
    with pytest.raises(TypeError, match=r"(?s)switch branches must have equal output types"
                       r".*branch 0 is <lambda> at .*branch1 is <lambda> at "):
        lax.switch(0, [lambda x: x, lambda x: x.astype(jnp.int32)], X)


# --- select (lax's elementwise select, what a batched cond becomes) -----------------------

P = np.array([True, False, True])


def test_select_matches_where_and_differentiates_per_lane():
    assert_tree_close(lax.select(P, X, -X), np.where(P, X, -X))
    g = grad(lambda x: jnp.sum(lax.select(P, jnp.sin(x), x * 3.0)))(X)
    assert_tree_close(g, np.where(P, np.cos(X), 3.0))
    check_grads(lambda x: lax.select(P, jnp.sin(x), x * 3.0), (X,), order=2,
                modes=["fwd", "rev"])
    ps, xs = np.stack([P, ~P]), np.stack([X, 2 * X])
    f = lambda p, x: lax.select(p, x, -x)   # noqa: E731
    assert_tree_close(jax.vmap(f)(ps, xs), loop_vmap(f, ps, xs))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_select_jit(executor):
    assert_tree_close(jit_on(executor, lax.select)(P, X, -X), np.where(P, X, -X))


# --- while_loop --------------------------------------------------------------------------

def collatz_steps(n):
    def body(c):
        k, steps = c
        return lax.select(k % 2 == 0, k // 2, 3 * k + 1), steps + 1
    return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]


def test_while_loop_values():
    assert int(collatz_steps(6)) == 8
    assert int(collatz_steps(27)) == 111
    out = lax.while_loop(lambda c: c["i"] < 5, lambda c: {"i": c["i"] + 1, "x": c["x"] * 2},
                         {"i": 0, "x": X})
    assert int(out["i"]) == 5
    assert_tree_close(out["x"], X * 32)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_while_loop_jit(executor):
    f = jit_on(executor, collatz_steps)
    assert [int(f(n)) for n in (1, 6, 27)] == [0, 8, 111]
    g = jit_on(executor, lambda x, limit: lax.while_loop(lambda v: jnp.sum(v) < limit,
                                                         lambda v: v * 1.5 + 0.1, x))
    expected = np.abs(X)
    while expected.sum() < 100:
        expected = expected * np.float32(1.5) + np.float32(0.1)
    assert_tree_close(g(np.abs(X), 100.0), expected)


def grow(x):
    return lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] + 1.0, c[1] * x), (0.0, 1.0))[1]


def test_while_loop_forward_mode_and_reverse_mode_error():
    primal, tangent = jvp(grow, (1.5,), (1.0,))
    assert np.isclose(float(primal), 1.5 ** 10) and np.isclose(float(tangent), 10 * 1.5 ** 9)
    check_grads(grow, (1.5,), order=1, modes=["fwd"])
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                       "lax.while_loop or lax.fori_loop with dynamic start/stop values"):
        grad(grow)(1.5)


def test_while_loop_vmap_runs_until_every_lane_finishes():
    def count_up(x, limit):
        return lax.while_loop(lambda c: c[0] < limit, lambda c: (c[0] + 1, c[1] + x), (0, x))
    xs = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    limits = np.array([0, 3, 1, 6], np.int32)
    out = jax.vmap(count_up)(xs, limits)
    assert_tree_close(out, loop_vmap(count_up, xs, limits))
    assert list(np.asarray(out[0])) == [0, 3, 1, 6]
    assert_tree_close(jax.jit(jax.vmap(count_up))(xs, limits), out)
    # Batched body constants only: the predicate stays shared.
    f = jax.vmap(lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x),
                                          (0, 1.0)))
    assert_tree_close(f(xs)[1], xs ** 3)
    assert "reduce_or" not in str(jax.make_jaxpr(f)(xs))


def _grow_until(x, n):
    return lax.while_loop(lambda c: c[1] < n, lambda c: (c[0] * 1.5 + 1, c[1] + 1), (x, 0))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_while_loop_vmap_keeps_the_per_lane_predicate_in_cond_jaxpr(executor):
    # As JAX's: cond_jaxpr returns a bool per lane and the body is the batched body; the
    # loop means "while any lane's holds, finished lanes kept". Values recorded on JAX.
    xs, ns = jnp.arange(3.0), jnp.array([1, 3, 2])
    eqn = _while_eqn(jax.make_jaxpr(jax.vmap(_grow_until))(xs, ns))
    assert eqn.params["cond_jaxpr"].out_avals[0].str_short() == "bool[3]"
    assert [e.primitive.name for e in eqn.params["body_jaxpr"].eqns] == ["mul", "add", "add"]
    expected = (np.array([1.0, 8.125, 7.0]), np.array([1, 3, 2]))
    assert_tree_close(jax.vmap(_grow_until)(xs, ns), expected)
    assert_tree_close(jit_on(executor, jax.vmap(_grow_until))(xs, ns), expected)
    assert_tree_close(jax.vmap(jax.vmap(_grow_until))(
        jnp.arange(6.0).reshape(2, 3), jnp.array([[1, 3, 2], [0, 4, 1]])),
        (np.array([[1.0, 8.125, 7.0], [3.0, 28.375, 8.5]]), np.array([[1, 3, 2], [0, 4, 1]])))
    # an outer vmap that batches the limits only: its lanes go in front of the inner's
    outer = jax.vmap(jax.vmap(_grow_until, (0, None)), (None, 0))
    assert_tree_close(outer(xs, jnp.array([1, 3])),
                      (np.array([[1.0, 2.5, 4.0], [4.75, 8.125, 11.5]]),
                       np.array([[1, 1, 1], [3, 3, 3]])))
    eqn = _while_eqn(jax.make_jaxpr(outer)(xs, jnp.array([1, 3])))
    assert eqn.params["cond_jaxpr"].out_avals[0].str_short() == "bool[2]"
    # forward mode inside and outside (jacfwd vmaps the tangents only)
    assert_tree_close(jax.vmap(lambda x, n: jvp(lambda x: _grow_until(x, n)[0], (x,), (1.0,)))(
        xs, ns), (np.array([1.0, 8.125, 7.0]), np.array([1.5, 3.375, 2.25])))
    np.testing.assert_allclose(jax.jacfwd(lambda x: jax.vmap(_grow_until)(x, ns)[0])(xs),
                               np.diag([1.5, 3.375, 2.25]))


def _while_eqn(jaxpr):
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "while"]
    return eqn


def test_while_loop_errors():
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar, but got "
                       r"output type\(s\) \[ShapedArray\(float32\[\]\)\]"):
        lax.while_loop(lambda c: np.float32(1.0), lambda c: c, np.float32(0.0))
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar, but got "
                       "pytree"):
        lax.while_loop(lambda c: (True, True), lambda c: c, 0.0)
    with pytest.raises(TypeError, match=r"(?s)while_loop body function carry input and carry "
                       r"output must have equal types, but they differ:\n\nThe input carry "
                       r"component c\[1\] has type float32\[\] but the corresponding output "
                       r"carry component has type int32\[\]"):
        lax.while_loop(lambda c: False, lambda c: (c[0], jnp.int32(1)), (True, np.float32(0)))
    with pytest.raises(TypeError, match="while_loop body function carry input and carry "
                       "output must have the same pytree structure"):
        lax.while_loop(lambda c: False, lambda c: (c, c), 0.0)
    with pytest.raises(TypeError, match="lax.while_loop: body_fun and cond_fun arguments"):
        lax.while_loop(lambda c: False, 3, 0.0)


def test_while_loop_promotes_a_weak_initial_carry():
    out = lax.while_loop(lambda x: x < 10, lambda x: x + jnp.float32(1.5), 0)
    assert out.dtype == np.float32 and float(out) == 10.5


# --- fori_loop ---------------------------------------------------------------------------

def power_sum(x, n=6):
    return lax.fori_loop(0, n, lambda i, c: c * x + i, 1.0)


def test_while_loop_under_disable_jit_copies_a_mutable_carry():
    # A body's `x += 1` on a NumPy carry must not change the other carry leaf that shares
    # its buffer (JAX issue 27019): the Python loop makes every leaf an Array.
    def body(carry):
        x, y = carry
        x += 1
        return x, y + x

    val = np.array(1.0)
    with jax.disable_jit():
        x, y = lax.while_loop(lambda c: c[0] < 10, body, (val, val))
    assert (float(x), float(y)) == (10.0, 55.0)      # JAX 0.10.2, as the jitted loop
    assert val == 1.0 and isinstance(x, jax.Array) and x.dtype == np.float32


def test_fori_loop_static_bounds_is_a_scan_traced_bounds_a_while():
    assert primitives_in(jax.make_jaxpr(power_sum)(2.0)) == ["scan"]
    closed = jax.make_jaxpr(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, x))(2.0, 3)
    assert primitives_in(closed) == ["while"]


def test_fori_loop_values_grad_and_vmap():
    expected = 1.0
    for i in range(6):
        expected = expected * 1.5 + i
    assert np.isclose(float(power_sum(1.5)), expected)
    assert int(lax.fori_loop(3, 1, lambda i, c: c + i, 7)) == 7       # empty range
    check_grads(power_sum, (1.5,), order=2, modes=["fwd", "rev"])
    xs = np.array([0.5, 1.5, -2.0], np.float32)
    assert_tree_close(jax.vmap(power_sum)(xs), loop_vmap(power_sum, xs))
    assert_tree_close(jax.vmap(grad(power_sum))(xs), loop_vmap(grad(power_sum), xs))
    unrolled = lambda x: lax.fori_loop(0, 6, lambda i, c: c * x + i, 1.0, unroll=4)  # noqa
    assert np.isclose(float(jax.jit(unrolled)(1.5)), expected)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_fori_loop_jit(executor):
    f = jit_on(executor, lambda x, n: lax.fori_loop(0, n, lambda i, c: c + x * i, 0.0))
    assert float(f(2.0, 5)) == 20.0
    assert float(jit_on(executor, power_sum)(1.0)) == 16.0


def test_fori_loop_with_traced_bounds_is_forward_mode_only():
    f = lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, 1.0)   # noqa: E731
    assert np.isclose(float(jvp(lambda x: f(x, 4), (2.0,), (1.0,))[1]), 32.0)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        grad(jax.jit(f))(2.0, 4)
    with pytest.raises(ValueError, match="Can only use `unroll` in `fori_loop` if the loop "
                       "bounds are statically known"):
        jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c, 0.0, unroll=2))(3)


# --- scan --------------------------------------------------------------------------------

def scan_reference(f, init, xs, length=None, reverse=False):
    leaves = jax.tree_util.tree_leaves(xs)
    n = length if length is not None else len(leaves[0])
    carry, ys = init, []
    for i in (reversed(range(n)) if reverse else range(n)):
        x = jax.tree_util.tree_map(lambda a, i=i: a[i], xs) if xs is not None else None
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, jax.tree_util.tree_map(lambda *v: np.stack([np.asarray(a) for a in v]), *ys)


def cell(carry, x):
    h, total = carry
    h = jnp.tanh(h * x["w"] + x["b"])
    return (h, total + jnp.sum(h)), {"h": h, "sq": h * h}


XS = {"w": np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32),
      "b": np.linspace(0.5, -0.5, 4).astype(np.float32)}
INIT = (X, np.float32(0.0))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 3, True])
def test_scan_pytrees_reverse_unroll(reverse, unroll):
    expected = scan_reference(cell, INIT, XS, reverse=reverse)
    assert_tree_close(lax.scan(cell, INIT, XS, reverse=reverse, unroll=unroll), expected)
    for executor in EXECUTORS:
        f = jit_on(executor, lambda init, xs: lax.scan(cell, init, xs, reverse=reverse,
                                                        unroll=unroll))
        assert_tree_close(f(INIT, XS), expected)


def test_scan_forwards_read_only_carries_and_xs_it_returns_as_ys():
    # JAX 0.10.2: a carry the body returns unchanged becomes a const and comes back as
    # the initial value itself; a y that is the body's x is the xs, not a copy.
    carry, ys = lax.scan(lambda c, x: (c, x), 0, np.arange(3.0))
    assert carry == 0 and type(carry) is int
    assert isinstance(ys, jax.Array) and ys.dtype == np.float32
    np.testing.assert_array_equal(ys, [0.0, 1.0, 2.0])
    closed = jax.make_jaxpr(lambda x: lax.scan(lambda c, x: (c + 1, x), 0, x))(
        jnp.arange(3.0))
    eqn, = closed.jaxpr.eqns
    assert len(eqn.params["jaxpr"].jaxpr.outvars) == 1
    assert closed.jaxpr.outvars[1] is closed.jaxpr.invars[0]

    # so under a cond whose predicate vmap batches, both branches pass y through
    def f(x, y):
        def g(_, y):
            return lax.scan(lambda y, _: (y, None), y, None, length=1)[0]
        return lax.cond(x < 0, g, g, x, y)
    assert float(jax.vmap(f, (0, None), None)(jnp.arange(3.0), 3.0)) == 3.0


def test_while_loop_makes_read_only_carries_body_consts():
    # JAX 0.10.2 (flax issue 4700): w is unbatched under vmap with a batched predicate.
    def foo(w, x, c_max):
        def body(val):
            c, x, w = val
            return c + 1, x @ w, w
        _, x, w = lax.while_loop(lambda val: val[0] < c_max, body, (0, x, w))
        return w, x

    w = jnp.ones((2, 2))
    w_out, x_out = jax.vmap(foo, in_axes=(None, 0, 0), out_axes=(None, 0))(
        w, jnp.ones((4, 2)), jnp.arange(4))
    np.testing.assert_array_equal(w_out, np.ones((2, 2)))
    np.testing.assert_array_equal(x_out, [[1, 1], [2, 2], [4, 4], [8, 8]])
    closed = jax.make_jaxpr(lambda w, x: foo(w, x, 3))(w, jnp.ones(2))
    eqn, = [e for e in closed.jaxpr.eqns if e.primitive.name == "while"]
    assert eqn.params["body_nconsts"] == 1 and len(eqn.outvars) == 2
    c, x = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1]), (0, 5))
    assert int(c) == 3 and x == 5 and type(x) is int


def test_check_jaxpr_refuses_bad_scan_and_cond_params():
    # JAX 0.10.2's words for a hand-edited equation
    def edited(make, prim, name, value):
        jaxpr = make().jaxpr
        next(e for e in jaxpr.eqns if e.primitive.name == prim).params[name] = value
        return jaxpr

    def scan_jaxpr():
        return jax.make_jaxpr(lambda c, xs: lax.scan(lambda c, x: (c * x, x), c, xs))(
            1.0, jnp.ones(5))

    for name, value, required in (("reverse", 4, "bool"),
                                  ("num_consts", -3, "non-negative int"),
                                  ("unroll", -1, "non-negative int"),
                                  ("length", -1, "non-negative int")):
        with pytest.raises(JaxprTypeError, match=re.escape(
                f"invalid scan param {name} of type int, {required} required: {value}")):
            check_jaxpr(edited(scan_jaxpr, "scan", name, value))
    switch = lambda: jax.make_jaxpr(lambda x: lax.switch(0, [jnp.sin, jnp.cos], x))(1.0)
    with pytest.raises(JaxprTypeError, match=re.escape(
            "invalid cond param branches of type tuple, tuple of ClosedJaxpr required: "
            "(4, 2)")):
        check_jaxpr(edited(switch, "cond", "branches", (4, 2)))


def test_scan_without_xs_needs_length():
    f = lambda c, _: (c * 2.0, c)   # noqa: E731
    carry, ys = lax.scan(f, 1.0, None, length=5)
    assert float(carry) == 32.0 and list(np.asarray(ys)) == [1, 2, 4, 8, 16]
    assert_tree_close(jax.jit(lambda c: lax.scan(f, c, None, length=5))(1.0), (carry, ys))
    carry, ys = lax.scan(f, 1.0, None, length=0)
    assert float(carry) == 1.0 and ys.shape == (0,)


def test_scan_traces_its_body_once():
    calls = []

    def body(c, x):
        calls.append(1)
        return c + x, c

    lax.scan(body, 0.0, np.arange(100.0, dtype=np.float32))
    assert len(calls) == 1
    lax.fori_loop(0, 1000, lambda i, c: calls.append(1) or c + 1.0, 0.0)
    assert len(calls) == 2


def test_scan_grad_jvp_and_vmap():
    def f(init, xs):
        (h, total), ys = lax.scan(cell, init, xs)
        return jnp.sum(h) + total + jnp.sum(ys["sq"])
    check_grads(f, (INIT, XS), order=2, modes=["fwd", "rev"])
    check_grads(lambda i, x: lax.scan(cell, i, x, reverse=True)[0][0], (INIT, XS), order=1,
                modes=["rev"])
    batch_xs = jax.tree_util.tree_map(lambda a: np.stack([a, a * 0.5, -a]), XS)
    g = lambda xs: lax.scan(cell, INIT, xs)   # noqa: E731
    assert_tree_close(jax.vmap(g)(batch_xs), loop_vmap(g, batch_xs))
    inits = (np.stack([X, -X]), np.array([0.0, 1.0], np.float32))
    h = lambda i0, i1: lax.scan(cell, (i0, i1), XS)   # noqa: E731
    assert_tree_close(jax.vmap(h)(*inits), loop_vmap(h, *inits))
    gf = grad(f, argnums=1)
    assert_tree_close(jax.vmap(gf, in_axes=(None, 0))(INIT, batch_xs),
                      loop_vmap(lambda xs: gf(INIT, xs), batch_xs), rtol=1e-4, atol=1e-5)
    assert_tree_close(jax.jit(gf)(INIT, XS), gf(INIT, XS), rtol=1e-4, atol=1e-5)


def test_scan_grad_keeps_loop_invariant_residuals_unstacked():
    w = np.eye(3, dtype=np.float32) * 0.5

    def f(w, xs):
        return jnp.sum(lax.scan(lambda h, x: (jnp.tanh(w @ h + x), None), X, xs)[0])
    xs = np.ones((50, 3), np.float32)
    check_grads(f, (w, xs), order=1, modes=["rev"])
    closed = jax.make_jaxpr(grad(f))(w, xs)
    scans = [e for e in closed.eqns if e.primitive.name == "scan"]
    stacked = [v.aval.shape for e in scans for v in e.outvars if v.aval.shape[:1] == (50,)]
    assert (50, 3, 3) not in stacked


def test_fori_loop_bounds_of_different_types():
    assert int(lax.fori_loop(jnp.int16(0), 3, lambda i, c: c + i, 0)) == 3   # Python int: ok
    with pytest.raises(TypeError, match="lower and upper arguments to fori_loop must have "
                                        "equal types, got int16 and int32"):
        lax.fori_loop(jnp.int16(0), jnp.int32(3), lambda i, c: c + i, 0)


def test_scan_errors():
    with pytest.raises(TypeError, match=r"(?s)scan body function carry input and carry output"
                       r" must have equal types, but they differ:\n\nThe input carry c has "
                       r"type float32\[\] but the corresponding output carry component has "
                       r"type float32\[3\], so the shapes do not match"):
        lax.scan(lambda c, x: (c * x, x), np.float32(1), np.stack([X, X]))
    with pytest.raises(TypeError, match="scan body function carry input and carry output "
                       "must have the same pytree structure"):
        lax.scan(lambda c, x: ((c, c), x), 1.0, X)
    # (JAX 0.10.2's words: where the structures differ, key by key)
    with pytest.raises(TypeError, match=re.escape(
            "differ:\n\nThe input carry c is a tuple of length 2 but the corresponding "
            "component of the carry output is a tuple of length 3, so the lengths do not "
            "match.\n\nRevise")):
        lax.scan(lambda c, x: ((0, 0, 0), x), (1, (2, 3)), X)
    with pytest.raises(TypeError, match=re.escape(
            "  * the input carry component x[0] is a <class 'dict'> with 1 child but the "
            "corresponding component of the carry output is a <class 'dict'> with 2 "
            "children, so the numbers of children do not match, with the symmetric "
            "difference of key sets: {'b'};\n  * the input carry component x[1] is")):
        lax.scan(lambda x, _: (({'a': x[0]['a'], 'b': x[0]['a']},) * 2, None),
                 ({'a': jnp.array(0, 'int32')},) * 2, None, length=1)
    with pytest.raises(TypeError, match=re.escape(
            "  * the input carry component x[1] has type int32[] but the corresponding output "
            "carry component has type float32[1,1], so the dtypes do not match, and the "
            "shapes do not match.\n")):
        lax.scan(lambda x, _: ((x[0].astype('float32'), x[1].astype('float32').reshape(1, 1),
                                x[2]), None), (jnp.array(0, 'int32'),) * 3, None, length=1)
    with pytest.raises(TypeError, match=re.escape(
            "The input carry component loop_carry[1] is a <class 'dict'> with pytree metadata "
            "('t',) but the corresponding component of the carry output is a <class 'dict'> "
            "with pytree metadata ('T',), so the pytree node metadata does not match.")):
        lax.fori_loop(0, 1, lambda i, x: {'T': jnp.array([0.5])}, {'t': jnp.array([1.0])})
    # JAX 0.10.2: a traced unroll is a ConcretizationTypeError (a TypeError)
    scan_n = jax.jit(lambda n, x: lax.scan(lambda c, z: (c, z), x, (), 10, unroll=n))
    for unroll in (3, True):
        with pytest.raises(errors.ConcretizationTypeError, match="The `unroll` argument to "
                           "`scan` expects a concrete `int` or `bool` value."):
            scan_n(unroll, 1.0)
    with pytest.raises(TypeError, match="scan body output must be a pair"):
        lax.scan(lambda c, x: c, 1.0, X)
    with pytest.raises(ValueError, match="scan got `length` argument of 4 which disagrees"):
        lax.scan(lambda c, x: (c, x), 1.0, X, length=4)
    with pytest.raises(ValueError, match="scan got no values to scan over and `length` not"):
        lax.scan(lambda c, x: (c, x), 1.0, None)
    with pytest.raises(ValueError, match="scan got values with different leading axis sizes"):
        lax.scan(lambda c, x: (c, x), 1.0, (X, np.ones(2)))
    with pytest.raises(ValueError, match="scan got value with no leading axis"):
        lax.scan(lambda c, x: (c, x), 1.0, 3.0)
    with pytest.raises(ValueError, match="`unroll` must be a `bool` or a non-negative `int`"):
        lax.scan(lambda c, x: (c, x), 1.0, X, unroll=-1)
    assert_tree_close(lax.scan(lambda c, x: (c + x, None), 0.0, X, unroll=0)[0], 1.3)
    with pytest.raises(TypeError, match="lax.scan: f argument should be a callable"):
        lax.scan(3, 1.0, X)


def test_rnn_of_100_steps_value_and_grad_matches_python_loop():
    rng = np.random.default_rng(0)
    params = {"wh": (rng.standard_normal((8, 8)) * 0.3).astype(np.float32),
              "wx": (rng.standard_normal((8, 4)) * 0.3).astype(np.float32),
              "b": np.zeros(8, np.float32)}
    xs = rng.standard_normal((100, 4)).astype(np.float32)

    def step(p, h, x):
        return jnp.tanh(p["wh"] @ h + p["wx"] @ x + p["b"])

    def loss_scan(p, xs):
        def body(h, x):
            h = step(p, h, x)
            return h, jnp.sum(h ** 2)
        h, losses = lax.scan(body, jnp.zeros(8), xs)
        return jnp.sum(losses) + jnp.sum(h)

    def loss_loop(p, xs):
        h, total = jnp.zeros(8), 0.0
        for t in range(100):
            h = step(p, h, xs[t])
            total = total + jnp.sum(h ** 2)
        return total + jnp.sum(h)

    value, grads = value_and_grad(loss_scan)(params, xs)
    value_ref, grads_ref = value_and_grad(loss_loop)(params, xs)
    assert_tree_close(value, value_ref, rtol=1e-5, atol=1e-5)
    assert_tree_close(grads, grads_ref, rtol=1e-5, atol=1e-5)
    value_jit, grads_jit = jax.jit(value_and_grad(loss_scan))(params, xs)
    assert_tree_close((value_jit, grads_jit), (value_ref, grads_ref), rtol=1e-4, atol=1e-5)


# --- map and associative_scan ------------------------------------------------------------

def test_map_with_and_without_batch_size():
    xs = np.linspace(-2, 2, 7 * 3).reshape(7, 3).astype(np.float32)
    f = lambda x: {"s": jnp.sum(jnp.sin(x)), "v": x * 2}   # noqa: E731
    expected = loop_vmap(f, xs)
    for batch_size in (None, 0, 1, 3, 7, 10):
        assert_tree_close(lax.map(f, xs, batch_size=batch_size), expected)
    assert primitives_in(jax.make_jaxpr(lambda x: lax.map(f, x))(xs)) == ["scan"]
    # JAX 0.10.2: batch_size=0 is one vmap over the whole axis
    assert primitives_in(jax.make_jaxpr(
        lambda x: lax.map(jnp.sin, x, batch_size=0))(xs)) == ["sin"]
    assert_tree_close(jax.jit(lambda x: lax.map(f, x, batch_size=3))(xs), expected)
    g = grad(lambda x: jnp.sum(lax.map(jnp.sin, x, batch_size=2)))
    assert_tree_close(g(xs), np.cos(xs))
    check_grads(lambda x: lax.map(f, x, batch_size=3)["s"], (xs,), order=2,
                modes=["fwd", "rev"])
    stacked = np.stack([xs, -xs])
    h = lambda x: lax.map(f, x, batch_size=4)   # noqa: E731
    assert_tree_close(jax.vmap(h)(stacked), loop_vmap(h, stacked))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_map_jit(executor):
    xs = np.linspace(-2, 2, 5 * 2).reshape(5, 2).astype(np.float32)
    for batch_size in (None, 2):
        f = jit_on(executor, lambda x, b=batch_size: lax.map(jnp.cos, x, batch_size=b))
        assert_tree_close(f(xs), np.cos(xs))


def test_associative_scan():
    x = np.arange(1.0, 12.0, dtype=np.float32)
    assert_tree_close(lax.associative_scan(jnp.add, x), np.cumsum(x))
    assert_tree_close(lax.associative_scan(jnp.multiply, x[:6], reverse=True),
                      np.cumprod(x[:6][::-1])[::-1])
    m = np.arange(2 * 10, dtype=np.float32).reshape(2, 10)
    assert_tree_close(lax.associative_scan(jnp.maximum, m, axis=1),
                      np.maximum.accumulate(m, axis=1))
    # Non-commutative: composition of affine maps (a, b): x -> a x + b, applied in order.
    a = np.linspace(0.5, 1.5, 9).astype(np.float32)
    b = np.linspace(-1, 1, 9).astype(np.float32)
    compose = lambda f, g: (f[0] * g[0], g[0] * f[1] + g[1])   # noqa: E731
    pa, pb = lax.associative_scan(compose, (a, b))
    ra, rb, acc = [], [], (1.0, 0.0)
    for k in range(9):
        acc = compose(acc, (a[k], b[k]))
        ra.append(acc[0])
        rb.append(acc[1])
    assert_tree_close((pa, pb), (np.array(ra), np.array(rb)), rtol=1e-5, atol=1e-5)
    check_grads(lambda v: lax.associative_scan(jnp.multiply, v), (x[:5] / 4,), order=1,
                modes=["fwd", "rev"])
    rows = np.stack([x, x[::-1], 2 * x])
    f = lambda v: lax.associative_scan(compose, (v, v + 1.0))   # noqa: E731
    assert_tree_close(jax.vmap(f)(rows), loop_vmap(f, rows))
    with pytest.raises(TypeError, match="lax.associative_scan: fn argument should be callable"):
        lax.associative_scan(3, x)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_associative_scan_jit(executor):
    x = np.arange(1.0, 8.0, dtype=np.float32)
    f = jit_on(executor, lambda v: lax.associative_scan(jnp.add, v, reverse=True))
    assert_tree_close(f(x), np.cumsum(x[::-1])[::-1])


# --- nesting -----------------------------------------------------------------------------

def nested(x):
    """A scan inside a cond inside a while loop."""
    def inner(v):
        return lax.scan(lambda c, w: (c * w + 1.0, c), v, jnp.array([0.5, 1.5, -0.5]))[0]

    def body(c):
        i, v = c
        return i + 1, lax.cond(i % 2 == 0, inner, lambda u: u - 1.0, v)
    return lax.while_loop(lambda c: c[0] < 4, body, (0, x))[1]


def nested_reference(x):
    v = np.float32(x)
    for i in range(4):
        if i % 2 == 0:
            for w in (0.5, 1.5, -0.5):
                v = v * w + 1.0
        else:
            v = v - 1.0
    return v


@pytest.mark.parametrize("executor", EXECUTORS)
def test_nested_scan_in_cond_in_while(executor):
    for x in (0.3, 2.0):
        assert np.isclose(float(nested(x)), nested_reference(x))
        assert np.isclose(float(jit_on(executor, nested)(x)), nested_reference(x))
    xs = np.array([0.3, 2.0, -1.0], np.float32)
    assert_tree_close(jax.vmap(nested)(xs), loop_vmap(nested, xs))
    check_grads(nested, (0.7,), order=2, modes=["fwd"])


def test_transformed_jaxprs_type_check():
    """check_jaxpr recurses into the sub-jaxprs each rule builds."""
    cases = [(nested, 0.7), (jax.vmap(nested), np.array([0.3, 2.0], np.float32)),
             (lambda x: jvp(nested, (x,), (1.0,)), 0.7),
             (grad(lambda x: jnp.sum(branchy(x))), X),
             (jax.vmap(grad(power_sum)), np.array([0.5, 1.5], np.float32)),
             (grad(lambda x: jnp.sum(lax.scan(cell, (x, 0.0), XS)[1]["sq"])), X),
             (lambda x: jax.linearize(grow, x)[1](1.0), 1.5)]
    for f, x in cases:
        check_jaxpr(jax.make_jaxpr(f)(x).jaxpr)


def test_scan_length_must_be_concrete():
    with pytest.raises(errors.ConcretizationTypeError, match="The `length` argument to `scan` "
                       "expects a concrete `int` value"):
        jax.jit(lambda n: lax.scan(lambda c, _: (c, c), 0.0, None, length=n))(3)


def test_nested_grad_through_fori_cond_scan():
    def f(x):
        def body(i, v):
            return lax.cond(i % 2 == 0,
                            lambda u: lax.scan(lambda c, w: (jnp.sin(c * w), c), u,
                                               jnp.array([0.5, 1.5]))[0],
                            lambda u: u * x, v)
        return lax.fori_loop(0, 4, body, x)
    check_grads(f, (0.7,), order=2, modes=["fwd", "rev"])
    xs = np.array([0.7, -0.2], np.float32)
    assert_tree_close(jax.vmap(grad(f))(xs), loop_vmap(grad(f), xs))


# --- the FAQ's compile-time advice, made testable ----------------------------------------

def python_loop(x):
    for i in range(1000):
        x = x + i
    return x


def test_python_loop_jaxpr_grows_structured_loop_does_not():
    x = np.float32(1.0)
    assert len(jax.make_jaxpr(python_loop)(x).eqns) >= 1000
    for n in (10, 1000, 100000):
        fori = jax.make_jaxpr(lambda x, n=n: lax.fori_loop(0, n, lambda i, c: c + i, x))(x)
        scanned = jax.make_jaxpr(
            lambda x, n=n: lax.scan(lambda c, i: (c + i, None), x, jnp.arange(n))[0])(x)
        assert len(fori.eqns) <= 3 and len(scanned.eqns) <= 3
    assert float(jax.jit(lambda x: lax.fori_loop(0, 1000, lambda i, c: c + i, x))(x)) == \
        float(python_loop(x))


def test_compiled_program_size_does_not_grow_with_trip_count():
    def lowered(n):
        return jax.jit(lambda x: lax.fori_loop(0, n, lambda i, c: jnp.sin(c) + i, x)).lower(1.0)

    small, large = lowered(10), lowered(10 ** 6)
    assert abs(len(large.as_text()) - len(small.as_text())) <= 8   # the trip count's digits
    assert large.as_text().count("stablehlo.while") == 1
    unrolled = jax.jit(python_loop).lower(1.0)
    assert len(unrolled.as_text()) > 20 * len(small.as_text())
    start = time.perf_counter()
    large.compile()
    loop_seconds = time.perf_counter() - start
    start = time.perf_counter()
    unrolled.compile()
    assert loop_seconds < time.perf_counter() - start


def test_loops_and_branches_trace_a_function_once_per_types():
    """As JAX's cached trace_to_jaxpr: scan, while_loop and cond run again with the same
    function on the same types reuse its trace (flax's nnx.scan counts on it); new types
    trace it again. Counts and values recorded from JAX 0.10.2."""
    calls = []

    def body(c, x):
        calls.append("scan")
        return c + x, x * 2

    def cond_fun(c):
        calls.append("cond_fun")
        return c < 10

    def body_fun(c):
        calls.append("body_fun")
        return c + 3

    def yes(x):
        calls.append("yes")
        return x + 1

    def no(x):
        calls.append("no")
        return x - 1

    xs = jnp.arange(4.0)
    for _ in range(2):
        c, ys = lax.scan(body, 0.0, xs)
        w = lax.while_loop(cond_fun, body_fun, 0)
        r = lax.cond(True, yes, no, 1.0)
        assert (float(c), ys.tolist(), int(w), float(r)) == (6.0, [0.0, 2.0, 4.0, 6.0], 12,
                                                             2.0)
    assert sorted(calls) == ["body_fun", "cond_fun", "no", "scan", "yes"]
    calls.clear()
    lax.scan(body, 0, jnp.arange(4))
    assert calls == ["scan"]


def test_a_body_closing_over_tracers_is_traced_each_time():
    """A trace holding an enclosing trace's tracers is not reused (each jit trace of
    `outer` stages its own scan body); one closing over a concrete value is, as in JAX,
    which keeps the first value (counts and values recorded from JAX 0.10.2)."""
    calls, holder = [], {}
    xs = jnp.arange(4.0)

    def inner(c, x):
        calls.append("inner")
        return c + x * holder["y"], None

    def outer(y):
        holder["y"] = y
        return lax.scan(inner, 0.0, xs)[0]

    assert float(jax.jit(outer)(1.0)) == 6.0
    assert float(jax.jit(outer)(jnp.float16(2.0))) == 12.0
    assert len(calls) == 2
    assert float(outer(3.0)) == 18.0 and float(outer(4.0)) == 18.0
    assert float(outer(jnp.float32(5.0))) == 18.0 and len(calls) == 3
