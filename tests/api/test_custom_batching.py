"""jax.custom_batching: custom_vmap and sequential_vmap (behaviour observed in JAX 0.10.2)."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import custom_batching

from harness import close


def _with_rule(calls):
    @custom_batching.custom_vmap
    def f(x, y):
        return {"s": x + y["a"], "t": x * 2}

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        calls.append((axis_size, in_batched, jnp.shape(x), jnp.shape(y["a"])))
        return {"s": x + y["a"] + 100, "t": x * 2}, {"s": True, "t": in_batched[0]}
    return f


def test_custom_vmap_runs_the_rule_only_under_vmap():
    calls = []
    f = _with_rule(calls)
    assert float(f(1.0, {"a": 2.0})["s"]) == 3.0 and calls == []
    out = jax.vmap(f)(jnp.ones(3), {"a": jnp.ones(3)})
    assert out["s"].tolist() == [102.0] * 3 and calls == [(3, [True, {"a": True}], (3,), (3,))]
    out = jax.vmap(f, in_axes=(None, 0))(1.0, {"a": jnp.ones(2)})
    assert calls[-1] == (2, [False, {"a": True}], (), (2,))
    assert out["t"].tolist() == [2.0, 2.0]                     # unbatched: broadcast
    for g in (jax.jit(jax.vmap(f)), jax.vmap(jax.jit(f))):
        assert g(jnp.ones(2), {"a": jnp.ones(2)})["s"].tolist() == [102.0, 102.0]
    assert "custom_vmap_call" in str(jax.make_jaxpr(f)(1.0, {"a": 2.0}))
    # forward mode differentiates the body; reverse mode cannot linearize it
    assert float(jax.jvp(lambda x: f(x, {"a": 1.0})["s"], (1.0,), (1.0,))[1]) == 1.0
    with pytest.raises(ValueError, match="Linearization failed to produce known values"):
        jax.grad(lambda x: f(x, {"a": 1.0})["s"])(1.0)


def test_custom_vmap_jvp_is_batched_by_the_rules_jvp():
    @custom_batching.custom_vmap
    def f(x):
        return jnp.sin(x)
    f.def_vmap(lambda n, batched, xs: (jnp.cos(xs), batched[0]))
    xs = jnp.arange(3.0)
    jvp_f = lambda x, t: jax.jvp(f, (x,), (t,))   # noqa: E731
    ys, ts = [1.0, 0.5403023, -0.41614684], [0.0, -1.6829419, -3.6371896]
    for g in (jax.vmap(jvp_f), jax.jit(jax.vmap(jvp_f)),
              lambda x, t: jax.jvp(jax.vmap(f), (x,), (t,))):
        y, t = g(xs, 2 * xs)
        close(y, ys)
        close(t, ts)
    # only the primal, or only the tangent, batched: the rule's JVP vmapped over it
    y, t = jax.vmap(lambda x: jvp_f(x, 1.0))(xs)
    close(y, ys)
    close(t, [0.0, -0.84147096, -0.9092974])
    y, t = jax.vmap(lambda t: jvp_f(1.0, t))(xs)
    close(y, [0.5403023] * 3)
    close(t, [0.0, -0.84147096, -1.6829419])


def test_sequential_vmap_loops():
    g = custom_batching.sequential_vmap(lambda x, n: x.sum() * n)
    assert jax.vmap(g, in_axes=(0, None))(jnp.ones((3, 4)), 2.0).tolist() == [8.0] * 3
    assert "scan" in str(jax.make_jaxpr(jax.vmap(g, in_axes=(0, None)))(jnp.ones((3, 4)), 2.0))
    # JAX 0.10.2: the loop maps the sequential_vmap function itself, so a nested vmap
    # loops again (two scans, the innermost call still custom)
    h = custom_batching.sequential_vmap(lambda x: x + 1.0)
    jaxpr = str(jax.make_jaxpr(jax.vmap(jax.vmap(h)))(jnp.ones((2, 3))))
    assert jaxpr.count("scan") == 2 and jaxpr.count("custom_vmap_call") == 1


def test_custom_vmap_rule_errors():
    @custom_batching.custom_vmap
    def no_rule(x):
        return x
    with pytest.raises(AttributeError, match="No batching rule defined"):
        no_rule(1.0)   # JAX checks at every call, not only under vmap

    @custom_batching.custom_vmap
    def bad_spec(x):
        return x
    bad_spec.def_vmap(lambda n, batched, x: (x, [True]))
    with pytest.raises(ValueError, match="output batching specification"):
        jax.vmap(bad_spec)(jnp.ones(2))

    @custom_batching.custom_vmap
    def bad_tree(x):
        return x
    bad_tree.def_vmap(lambda n, batched, x: ([x], [True]))
    with pytest.raises(ValueError, match=r"structure of output returned by custom vmap rule "
                       r"\(<lambda>\) does not match that of original custom-vmapped "
                       r"function.\nOriginal output: PyTreeDef\(\*\)\nRule output: "
                       r"PyTreeDef\(\[\*\]\)"):
        jax.vmap(bad_tree)(jnp.ones(2))

    # shapes are not checked: an output marked unbatched is broadcast, as in JAX
    @custom_batching.custom_vmap
    def unbatched(x):
        return x
    unbatched.def_vmap(lambda n, batched, x: (jnp.ones(7), False))
    assert jax.vmap(unbatched)(jnp.ones(2)).shape == (2, 7)


def test_custom_vmap_resolves_keyword_arguments():
    # JAX 0.10.2: keywords bound to positions (defaults filled in) before the rule sees them
    @custom_batching.custom_vmap
    def f(x, y=2.0, *, z=None):
        return jnp.sin(x) * y
    f.def_vmap(lambda n, batched, xs, ys: (jnp.cos(xs) * ys, batched[0] or batched[1]))
    close(f(x=1.0), 1.6829419)
    close(jax.vmap(lambda x: f(x=x))(jnp.arange(3.0)), [2.0, 1.0806046, -0.8322937])
    with pytest.raises(TypeError, match="custom_vmap-decorated function f could not be "
                       "resolved to positional-only arguments. Binding failed with the "
                       "error:\nmissing a required argument: 'x'"):
        f()
    with pytest.raises(TypeError, match="The following keyword arguments could not be "
                       "resolved to positions: z"):
        f(0.5, 0.1, z=1.0)
