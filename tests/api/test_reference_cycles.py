"""Tracing, transforming and jitted calls leave no reference cycles behind (as JAX's
core_test::test_reference_cycles checks): garbage only the cycle collector frees is
memory held until a collection, and per-structure garbage grew with every new trace."""
import collections
import gc

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

_Pair = collections.namedtuple("_Pair", "w b")


def _loss(params, x):
    return jnp.sum(params["a"] * x) + params["p"].w.sum() * params["p"].b


def _params():
    return {"a": jnp.ones(3), "p": _Pair(jnp.ones(2), jnp.float32(0.5))}


PROGRAMS = {
    "eager": lambda: (jnp.ones(3) * 2).sum(),
    "jit": lambda: jax.jit(lambda x: x.sum())(jnp.zeros([])).block_until_ready(),
    "jit of a pytree": lambda: jax.jit(_loss)(_params(), 2.0),
    "jit with a static keyword": lambda: jax.jit(
        lambda x, n: x * n, static_argnames="n")(jnp.ones(2), n=3),
    "linearize": lambda: jax.linearize(lambda x: x.sum(), jnp.zeros([])),
    "grad": lambda: jax.grad(_loss)(_params(), 2.0),
    "jit of value_and_grad": lambda: jax.jit(jax.value_and_grad(_loss))(_params(), 2.0),
    "vjp": lambda: jax.vjp(jnp.sum, jnp.ones(3))[1](1.0),
    "jvp": lambda: jax.jvp(jnp.sum, (jnp.ones(3),), (jnp.ones(3),)),
    "vmap": lambda: jax.vmap(lambda x: x * 2)(jnp.ones((2, 3))),
    "hessian": lambda: jax.hessian(lambda x: (x ** 3).sum())(jnp.ones(2)),
    "scan": lambda: jax.jit(lambda x: lax.scan(lambda c, y: (c + y, c), 0.0, x))(
        jnp.ones(4)),
    "cond": lambda: jax.jit(lambda x: lax.cond(x > 0, lambda: x, lambda: -x))(1.0),
    "while_loop": lambda: jax.jit(
        lambda x: lax.while_loop(lambda c: c < 5, lambda c: c + 1, x))(0),
    "make_jaxpr": lambda: jax.make_jaxpr(_loss)(_params(), 2.0),
    "custom_jvp": lambda: jax.grad(jax.nn.relu)(1.0),
    "checkpoint": lambda: jax.grad(jax.checkpoint(lambda x: jnp.sin(x) * 2))(1.0),
    "tree_flatten_with_path": lambda: jax.tree_util.tree_flatten_with_path(_params()),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_no_reference_cycles(name):
    program = PROGRAMS[name]
    program()   # pyjax's first-use work (module tables, caches) is done once
    gc.collect()
    debug = gc.get_debug()
    try:
        program()
        gc.set_debug(gc.DEBUG_SAVEALL)
        found = gc.collect()
        garbage = [type(g).__qualname__ for g in gc.garbage]
    finally:
        gc.set_debug(debug)
        gc.garbage.clear()
    assert found == 0, collections.Counter(garbage).most_common(8)


def test_the_check_sees_a_cycle():
    # the harness above would miss nothing: a self-referring closure is found
    def make():
        def f():
            return f
        return f
    gc.collect()
    debug = gc.get_debug()
    try:
        make()
        gc.set_debug(gc.DEBUG_SAVEALL)
        assert gc.collect() > 0
    finally:
        gc.set_debug(debug)
        gc.garbage.clear()


def test_jitted_calls_of_new_structures_leave_no_garbage():
    f = jax.jit(lambda tree: jax.tree_util.tree_map(lambda x: x + 1, tree))
    gc.collect()
    debug = gc.get_debug()
    try:
        for n in range(1, 6):   # a new structure each call: a trace and a fast call each
            out = f({f"k{i}": np.float32(i) for i in range(n)})
            f(out)
        gc.set_debug(gc.DEBUG_SAVEALL)
        assert gc.collect() == 0
    finally:
        gc.set_debug(debug)
        gc.garbage.clear()
