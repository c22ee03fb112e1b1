"""The names the ops of a lowered module carry (MLIR name locations, XLA's op_name
metadata in `Lowered.as_text("hlo", debug_info=True)`): the name stack of the equation
each op was lowered from (jit's function, jax.named_scope names, transformations, the
scopes of control flow) and its primitive, as JAX 0.10.2 names them. Every expected name
was recorded on JAX with the same program."""
import re

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax


def _op_names(f, *args):
    text = jax.jit(f).lower(*args).as_text("hlo", debug_info=True)
    return set(re.findall(r'op_name="([^"]*)"', text))


def test_op_names_carry_named_scopes_and_transformations():
    @jax.named_scope("foo")
    def f(x):
        with jax.named_scope("bar"):
            return 2 * jnp.sin(x)
    names = _op_names(jax.value_and_grad(f), 1.0)
    assert {"jit(f)/jvp(foo)/bar/sin", "jit(f)/jvp(foo)/bar/cos",
            "jit(f)/jvp(foo)/bar/mul"} <= names
    # (XLA fuses the backward pass's two multiplies: JAX shows
    # 'jit(f)/transpose(jvp(foo))/bar/mul;jit(f)/transpose(jvp(foo))/bar/mul')
    assert any("jit(f)/transpose(jvp(foo))/bar/mul" in n for n in names)


def test_a_jit_call_is_named_under_its_callers_stack_and_its_body_from_its_start():
    @jax.named_scope("foo")
    def f(x):
        @jax.jit
        @jax.named_scope("bar")
        def _f(x):
            return x + 1
        return _f(x)
    assert {"bar/add", "jit(f)/foo/jit(_f)"} <= _op_names(f, 2)

    @jax.value_and_grad
    @jax.jit
    def h(x):
        @jax.jit
        def g(y):
            return jnp.sin(y)
        return g(x)
    assert {"jit(h)/jvp(jit(h))", "jit(h)/transpose(jvp(jit(h)))", "jit(g)", "sin",
            "cos", "mul"} <= _op_names(h, 2.0)


def test_control_flow_bodies_are_named_under_their_scopes():
    @jax.named_scope("foo")
    def loop(x):
        @jax.named_scope("bar")
        def body(x):
            return x + 1.0

        @jax.named_scope("bar_cond")
        def cond(x):
            return x < 5.0
        return lax.while_loop(cond, body, x)
    assert {"jit(loop)/foo/while", "jit(loop)/foo/while/body/bar/add",
            "jit(loop)/foo/while/cond/bar_cond/lt"} <= _op_names(loop, 1.0)
    # a per-lane predicate (vmap): the body recomputes it under 'body_pred'
    assert {"jit(loop)/vmap(foo)/while", "jit(loop)/vmap(foo)/while/body/bar/add",
            "jit(loop)/vmap(foo)/while/body_pred/bar_cond/lt",
            "jit(loop)/vmap(foo)/while/cond/bar_cond/lt"} <= _op_names(
        jax.vmap(loop), jnp.arange(2.0))

    @jax.named_scope("foo")
    def branch(x, y):
        return lax.cond(y, jax.named_scope("true")(lambda x: x + 1),
                        jax.named_scope("false")(lambda x: x - 1), x)
    assert {"jit(branch)/foo/cond", "jit(branch)/foo/cond/branch_0_fun/false/sub",
            "jit(branch)/foo/cond/branch_1_fun/true/add"} <= _op_names(branch, 1, True)

    @jax.named_scope("foo")
    def scan(x):
        @jax.named_scope("scan_body")
        def body(carry, x):
            return carry + x, carry + x
        return lax.scan(body, x, jnp.arange(5, dtype="float32"))
    names = _op_names(scan, 1.0)
    assert "jit(scan)/foo/while" in names
    assert any(n.startswith("jit(scan)/foo/while/body/") and n.endswith("scan_body/add")
               for n in names)


def test_checkpoint_and_its_recomputation_are_named():
    @jax.remat
    def f(x):
        return jnp.sin(x)
    assert "jit(f)/checkpoint/sin" in _op_names(f, 2.0)
    # JAX: 'jit(f)/transpose(jvp(jvp()))/checkpoint/rematted_computation/cos'
    assert any(n.endswith("/checkpoint/rematted_computation/cos")
               for n in _op_names(jax.grad(f), 2.0))


def test_op_names_show_only_with_debug_info():
    lowered = jax.jit(jnp.sin).lower(1.0)
    assert "op_name" not in lowered.as_text("hlo")
    assert "loc(" not in lowered.as_text()
    assert 'loc("jit(sin)/sin"' in lowered.as_text(debug_info=True)


def test_transpose_of_a_jit_keeps_its_name():
    # JAX 0.10.2 names both jit equations of value_and_grad(jit(f)) 'f'
    @jax.value_and_grad
    @jax.jit
    def f(x):
        return lax.sin(x)
    eqns = jax.make_jaxpr(f)(1.0).eqns
    assert [e.params["name"] for e in eqns] == ["f", "f"]
