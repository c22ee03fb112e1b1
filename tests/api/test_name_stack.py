"""Name stacks of staged equations (`eqn.source_info.name_stack`), as JAX 0.10.2 prints
them: jax.named_scope names, wrapped by the transformations applied inside them (vmap, jvp,
transpose), and reset in each jaxpr traced for jit or a control-flow body. Every expected
list was recorded on JAX with the same program."""
import functools

import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax


def _stacks(jaxpr):
    return [str(e.source_info.name_stack) for e in jaxpr.eqns]


def _multiple():
    def f(x):
        with jax.named_scope("foo"):
            y = x + 1
        with jax.named_scope("bar"):
            with jax.named_scope("baz"):
                return y + 1
    return {"multiple": _stacks(jax.make_jaxpr(f)(2).jaxpr),
            "named_call": _stacks(jax.make_jaxpr(
                jax.named_call(lambda x: x + 1, name="f"))(2).jaxpr)}


def _jit():
    @jax.named_scope("foo")
    def g(x):
        @jax.jit
        @jax.named_scope("bar")
        def _f(x):
            return x + 1
        return _f(x)
    j = jax.make_jaxpr(g)(2).jaxpr
    return {"jit outer": _stacks(j), "jit inner": _stacks(j.eqns[0].params["jaxpr"])}


def _vmap():
    @jax.vmap
    def v(x):
        with jax.named_scope("foo"):
            return x + 1

    @jax.named_scope("foo")
    @jax.vmap
    def v2(x):
        with jax.named_scope("bar"):
            with jax.named_scope("baz"):
                return x + 1

    @jax.named_scope("foo")
    @jax.vmap
    def v3(x):
        @jax.jit
        @jax.named_scope("bar")
        def _f(x):
            return x + 1
        return _f(x)
    j = jax.make_jaxpr(v3)(jnp.ones(2)).jaxpr
    return {"vmap": _stacks(jax.make_jaxpr(v)(jnp.ones(2)).jaxpr),
            "vmap inner": _stacks(jax.make_jaxpr(v2)(jnp.ones(2)).jaxpr),
            "vmap jit": _stacks(j), "vmap jit inner": _stacks(j.eqns[0].params["jaxpr"])}


def _jvp():
    def f(x):
        with jax.named_scope("bar"):
            with jax.named_scope("baz"):
                return jnp.square(x)
    g = jax.named_scope("foo")(lambda x, t: jax.jvp(f, (x,), (t,)))
    fj = jax.jit(f)
    gj = jax.named_scope("foo")(lambda x, t: jax.jvp(fj, (x,), (t,)))
    j = jax.make_jaxpr(gj)(1., 1.).jaxpr
    return {"jvp": _stacks(jax.make_jaxpr(g)(1., 1.).jaxpr), "jvp jit": _stacks(j),
            "jvp jit inner": _stacks(j.eqns[0].params["jaxpr"])}


def _grad():
    @jax.value_and_grad
    def vg(x):
        with jax.named_scope("foo"):
            return 2 * jnp.sin(x)

    @jax.value_and_grad
    @jax.named_scope("foo")
    @jax.jit
    def vgj(x):
        with jax.named_scope("bar"):
            return jax.lax.sin(x)
    j = jax.make_jaxpr(vgj)(1.).jaxpr
    return {"grad": _stacks(jax.make_jaxpr(vg)(1.).jaxpr), "grad jit": _stacks(j),
            "grad jit inner0": _stacks(j.eqns[0].params["jaxpr"]),
            "grad jit inner1": _stacks(j.eqns[1].params["jaxpr"])}


def _control_flow():
    @jax.named_scope("foo")
    def w(x):
        @jax.named_scope("bar")
        def body(x):
            return x + 1

        @jax.named_scope("bar_cond")
        def cond(x):
            return x < 5
        return lax.while_loop(cond, body, x)

    @jax.named_scope("foo")
    def c(x, y):
        @jax.named_scope("true")
        def true_fn(x):
            return x + 1

        @jax.named_scope("false")
        def false_fn(x):
            return x - 1
        return lax.cond(y, true_fn, false_fn, x)

    @jax.named_scope("foo")
    def s(x):
        @jax.named_scope("scan_body")
        def body(carry, x):
            return carry + x, carry + x
        return lax.scan(body, x, jnp.arange(5, dtype="float32"))

    @jax.value_and_grad
    @jax.named_scope("foo")
    def gs(x):
        @jax.named_scope("scan_body")
        def body(carry, x):
            return 2 * carry * x, carry + x
        return lax.scan(body, x, jnp.arange(8., dtype="float32"))[0]

    jw = jax.make_jaxpr(w)(0).jaxpr
    jc = jax.make_jaxpr(c)(0, True).jaxpr
    js = jax.make_jaxpr(s)(jnp.float32(1)).jaxpr
    return {"while": _stacks(jw), "while body": _stacks(jw.eqns[0].params["body_jaxpr"]),
            "while cond": _stacks(jw.eqns[0].params["cond_jaxpr"]),
            "jvp while": _stacks(jax.make_jaxpr(
                lambda x, t: jax.jvp(w, (x,), (t,)))(1., 1.).jaxpr),
            "cond": _stacks(jc), "cond b0": _stacks(jc.eqns[-1].params["branches"][0]),
            "cond b1": _stacks(jc.eqns[-1].params["branches"][1]),
            "scan": _stacks(js), "scan body": _stacks(js.eqns[1].params["jaxpr"]),
            "grad scan": _stacks(jax.make_jaxpr(gs)(jnp.float32(2)).jaxpr)}


JAX_STACKS = [
    ('multiple', ['foo', 'bar/baz']),
    ('named_call', ['f']),
    ('jit outer', ['foo']),
    ('jit inner', ['bar']),
    ('vmap', ['vmap(foo)']),
    ('vmap inner', ['foo/vmap(bar)/baz']),
    ('vmap jit', ['foo/vmap()']),
    ('vmap jit inner', ['bar']),
    ('jvp', ['foo/jvp(bar)/baz', 'foo/jvp(bar)/baz', 'foo/jvp(bar)/baz']),
    ('jvp jit', ['foo/jvp()']),
    ('jvp jit inner', ['bar/baz', 'bar/baz', 'bar/baz']),
    ('grad', ['jvp(foo)', 'jvp(foo)', 'jvp(foo)', 'transpose(jvp(foo))', 'transpose(jvp(foo))']),
    ('grad jit', ['jvp(foo)', 'transpose(jvp(foo))']),
    ('grad jit inner0', ['bar', 'bar']),
    ('grad jit inner1', ['bar']),
    ('while', ['foo']),
    ('while body', ['bar']),
    ('while cond', ['bar_cond']),
    ('jvp while', ['jvp(foo)']),
    ('cond', ['foo', 'foo']),
    ('cond b0', ['false']),
    ('cond b1', ['true']),
    ('scan', ['foo', 'foo']),
    ('scan body', ['scan_body', 'scan_body']),
    ('grad scan', ['jvp(foo)', 'jvp(foo)', 'transpose(jvp(foo))']),
]
@functools.cache
def _all_stacks():
    return {name: stacks for group in (_multiple, _jit, _vmap, _jvp, _grad, _control_flow)
            for name, stacks in group().items()}


@pytest.mark.parametrize("name,expected", JAX_STACKS, ids=[n for n, _ in JAX_STACKS])
def test_name_stack(name, expected):
    assert _all_stacks()[name] == expected


def test_name_stack_of_grad_of_cond():
    @jax.value_and_grad
    @jax.named_scope("foo")
    def f(x, y):
        @jax.named_scope("true")
        def true_fn(x):
            return x * x * 2.

        @jax.named_scope("false")
        def false_fn(x):
            return x / jnp.square(x)
        return lax.cond(y, true_fn, false_fn, x)
    # JAX's first three equations (pyjax's jaxpr ends with one more)
    stacks = _stacks(jax.make_jaxpr(f)(1., True).jaxpr)
    assert stacks[:3] == ["jvp(foo)", "jvp(foo)", "transpose(jvp(foo))"]
