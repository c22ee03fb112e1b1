"""jax.custom_batching: custom_vmap and sequential_vmap (behaviour observed in JAX 0.10.2)."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import custom_batching


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
    # differentiation sees the function's body
    assert float(jax.grad(lambda x: f(x, {"a": 1.0})["s"])(1.0)) == 1.0
    assert jax.vmap(jax.grad(lambda x: f(x, {"a": 1.0})["t"]))(jnp.ones(2)).tolist() == [2, 2]


def test_sequential_vmap_loops():
    g = custom_batching.sequential_vmap(lambda x, n: x.sum() * n)
    assert jax.vmap(g, in_axes=(0, None))(jnp.ones((3, 4)), 2.0).tolist() == [8.0] * 3
    assert "scan" in str(jax.make_jaxpr(jax.vmap(g, in_axes=(0, None)))(jnp.ones((3, 4)), 2.0))


def test_custom_vmap_rule_errors():
    @custom_batching.custom_vmap
    def no_rule(x):
        return x
    with pytest.raises(AttributeError, match="No batching rule defined"):
        jax.vmap(no_rule)(jnp.ones(2))

    @custom_batching.custom_vmap
    def bad_spec(x):
        return x
    bad_spec.def_vmap(lambda n, batched, x: (x, [True]))
    with pytest.raises(ValueError, match="output batching specification"):
        jax.vmap(bad_spec)(jnp.ones(2))

    @custom_batching.custom_vmap
    def bad_shape(x):
        return x
    bad_shape.def_vmap(lambda n, batched, x: (x, False))
    with pytest.raises(ValueError, match=r"must have shape \(\)"):
        jax.vmap(bad_shape)(jnp.ones(2))
