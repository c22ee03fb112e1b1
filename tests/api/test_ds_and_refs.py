"""jax.ds (dynamic slice indices), jax.Ref under jit, grad and vmap, jax.empty_ref /
jax.free_ref, jax.ad (the with_refs markers of a vjp pullback) and jax.memory.Space.
Expected values recorded from JAX 0.10.2."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp


def test_ds_indexes_like_jax():
    x = jnp.arange(10)
    assert repr(jax.ds(4, 2)) == "Slice(start=4, size=2, stride=1)"
    assert jax.ds(None) == slice(None)
    assert repr(jax.ds(3)) == "Slice(start=0, size=3, stride=1)"
    assert x[jax.ds(4, 2)].tolist() == [4, 5]
    assert jax.jit(lambda a, i: a[jax.ds(i, 3)])(x, 5).tolist() == [5, 6, 7]
    assert jax.jit(lambda a, i: a[jax.ds(i, 3)])(x, 9).tolist() == [7, 8, 9]   # clamped
    assert jax.jit(lambda a, i: a[jax.ds(i, 3, 2)])(x, 1).tolist() == [1, 3, 5]
    assert x[jax.ds(1, 3, 2)].tolist() == [1, 3, 5]
    y = jnp.arange(12).reshape(3, 4)
    assert y[jax.ds(1, 2), jax.ds(0, 2)].tolist() == [[4, 5], [8, 9]]
    assert y[1:, jax.ds(2, 2)].tolist() == [[6, 7], [10, 11]]
    assert y[..., jax.ds(1, 2)].tolist() == [[1, 2], [5, 6], [9, 10]]
    assert jax.jit(lambda a, i: a.at[jax.ds(i, 3)].set(0))(x, 2).tolist() == [
        0, 1, 0, 0, 0, 5, 6, 7, 8, 9]
    # a traced start is a pytree child, a static one aux data
    assert len(jax.tree_util.tree_leaves(jax.ds(jnp.int32(2), 3))) == 1
    assert jax.tree_util.tree_leaves(jax.ds(2, 3)) == []
    with pytest.raises(ValueError, match="stride"):
        jax.ds(0, 2, -1)


def test_empty_ref_and_free_ref():
    r = jax.empty_ref(jax.ShapeDtypeStruct((2, 3), jnp.float32))
    assert (r.shape, r.dtype) == ((2, 3), jnp.float32)
    r[...] = jnp.ones((2, 3))
    assert r[...].tolist() == [[1.0] * 3] * 2
    assert jax.free_ref(r) == ()
    with pytest.raises(ValueError, match="freed"):
        r[...]
    with pytest.raises(ValueError, match="freed"):
        r[...] = jnp.ones((2, 3))
    assert jax.empty_ref(jnp.zeros(3, "int32")).dtype == jnp.int32


def test_vjp_with_refs():
    def f(x, y):
        return (x * y).sum()
    _, pullback = jax.vjp(f, jnp.ones(3), jnp.arange(3.0))
    skipped, grad = pullback.with_refs(jax.ad.DontWant(), jax.ad.GradValue())(1.0)
    assert repr(skipped) == "DidntWant()" and grad.tolist() == [1.0, 1.0, 1.0]
    ref = jax.new_ref(jnp.ones(3))
    grad, into_ref = pullback.with_refs(jax.ad.GradValue(), ref)(1.0)
    assert grad.tolist() == [0.0, 1.0, 2.0] and repr(into_ref) == "GradRef()"
    assert ref[...].tolist() == [2.0, 2.0, 2.0]        # accumulated into the ref
    assert jax.ad.DontWant() == jax.ad.DontWant()
    assert jax.tree_util.tree_leaves([jax.ad.DidntWant(), jax.ad.GradRef()]) == []
    assert str(jax.tree_util.tree_structure(jax.ad.DidntWant())) == (
        "PyTreeDef(CustomNode(DidntWant[()], []))")


def test_refs_passed_to_jit_are_read_and_written():
    r = jax.new_ref(jnp.arange(3.0))

    @jax.jit
    def f(r, x):
        assert isinstance(r, jax.Ref) and r.shape == (3,)
        r[1] += x
        return r[...].sum()

    assert (float(f(r, 1.0)), float(f(r, 2.0))) == (4.0, 6.0)   # the second from cache
    assert r[...].tolist() == [0.0, 4.0, 2.0]

    @jax.jit
    def outer(r, x):          # a Ref handed on to a nested jit
        y = f(r, x)
        r[0] = y
        return y

    assert float(outer(r, 1.0)) == 7.0 and r[...].tolist() == [7.0, 5.0, 2.0]
    counter = jax.new_ref(jnp.int32(0))
    step = jax.jit(lambda c, x: c.__setitem__(..., c[...] + 1) or x)
    for _ in range(3):
        step(counter, jnp.ones(2))
    assert int(counter[...]) == 3 and str(jax.typeof(counter)) == "Ref{int32[]}"


def test_refs_made_inside_transformations():
    def loss(x):
        q = jax.new_ref(jnp.zeros(3))
        q[...] += x * 2
        q[1] += x[0]
        return q[...].sum()

    assert jax.grad(loss)(jnp.ones(3)).tolist() == [3.0, 2.0, 2.0]
    assert jax.jit(jax.grad(loss))(jnp.ones(3)).tolist() == [3.0, 2.0, 2.0]
    assert jax.vmap(loss)(jnp.ones((2, 3))).tolist() == [7.0, 7.0]


def test_refs_in_jit_refuse_what_jax_refuses():
    r = jax.new_ref(jnp.ones(3))
    with pytest.raises(ValueError, match="Ref{float32\\[3\\]}, but mutable array references "
                       "cannot be returned"):
        jax.jit(lambda r: r)(r)
    with pytest.raises(ValueError, match="only one reference to a mutable array"):
        jax.jit(lambda a, b: 0)(r, r)


def test_closed_over_ref_written_in_jit_is_refused_clearly():
    # JAX makes a closed-over Ref an implicit argument; pyjax discharges only Refs passed
    # as arguments, and says so rather than leaking a tracer into the Ref.
    r = jax.new_ref(jnp.ones(3))

    def closes_over(x):
        r[...] += x
        return x
    with pytest.raises(TypeError, match="pass the Ref to the jitted function"):
        jax.jit(closes_over)(jnp.ones(3))
    assert r[...].tolist() == [1.0, 1.0, 1.0]


def test_memory_spaces():
    assert [repr(s) for s in jax.memory.Space] == [
        "MemorySpace.Device", "MemorySpace.Host", "MemorySpace.Any"]
    assert jax.device_put(jnp.ones(2), jax.memory.Space.Device).tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError, match="device memory"):
        jax.device_put(jnp.ones(2), jax.memory.Space.Host)


def test_shard_and_reshard_are_the_sharding_api():
    x = jnp.arange(4.0)
    shard, = x.addressable_shards
    assert isinstance(shard, jax.Shard) and shard.data.tolist() == x.tolist()
    assert jax.reshard is jax.sharding.reshard


def test_avals_are_abstract_values():
    # flax's linen scan asserts isinstance(aval, jax.core.AbstractValue)
    assert isinstance(jax.typeof(jnp.ones(2)), jax.core.AbstractValue)
    assert isinstance(jax.typeof(jax.new_ref(jnp.ones(2))), jax.core.AbstractValue)
    assert not isinstance(1, jax.core.AbstractValue)
