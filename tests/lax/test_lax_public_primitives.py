"""lax names of JAX 0.10.2 added for full coverage: stack_p/unstack_p, the total-order
comparisons eq_to/le_to/lt_to, stage, dce_sink, broadcast_like, approx_top_k_p,
select_and_scatter_p, device_put_p and pcast. Expected values were recorded from JAX
0.10.2 running the same programs."""
import functools

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.lax.windowed_reductions import _select_and_scatter


def test_total_order_comparisons_match_jax():
    x = jnp.array([-0.0, 0.0, np.nan, -np.nan, 1.0, -np.inf])
    y = jnp.array([0.0, -0.0, np.nan, np.nan, 1.0, np.inf])
    expected = {"eq_to": [False, False, True, False, True, False],
                "le_to": [True, False, True, True, True, True],
                "lt_to": [True, False, False, True, False, True]}
    for prim in (lax.eq_to_p, lax.le_to_p, lax.lt_to_p):
        assert prim.bind(x, y).tolist() == expected[prim.name]
        assert jax.jit(prim.bind)(x, y).tolist() == expected[prim.name]
    assert str(jax.make_jaxpr(lambda a: lax.eq_to_p.bind(a, a))(x)) == (
        "{ lambda ; a:f32[6]. let b:bool[6] = eq_to a a in (b,) }")
    assert "TOTALORDER" in jax.jit(lax.eq_to_p.bind).lower(x, y).as_text()


def test_stack_and_unstack_bind_their_primitives():
    x = jnp.arange(6.0)
    assert str(jax.make_jaxpr(lambda a, b: lax.stack([a, b]))(x, x)) == (
        "{ lambda ; a:f32[6] b:f32[6]. let c:f32[2,6] = stack[axis=0] a b in (c,) }")
    m = jnp.zeros((2, 3))
    assert str(jax.make_jaxpr(lambda a: lax.unstack(a, 1))(m)) == (
        "{ lambda ; a:f32[2,3]. let\n    b:f32[2] c:f32[2] d:f32[2] = unstack[axis=1] a\n"
        "  in (b, c, d) }")
    assert lax.stack([1.0, 2.0]).tolist() == [1.0, 2.0]
    assert lax.unstack(jnp.zeros((0, 3))) == ()
    with pytest.raises(ValueError):
        lax.stack([jnp.ones(2), jnp.ones(3)])
    with pytest.raises(TypeError, match="same dtypes"):
        lax.stack([jnp.ones(2), jnp.ones(2, "int32")])
    grad = jax.grad(lambda a: (lax.stack([a, 2 * a], 1)
                               * jnp.arange(12.0).reshape(2, 2, 3)).sum())(m + 1)
    assert grad.tolist() == [[6.0, 9.0, 12.0], [24.0, 27.0, 30.0]]


def test_stage_lifts_without_an_equation():
    x = jnp.arange(6.0)
    assert str(jax.make_jaxpr(lambda a: lax.stage(a))(x)) == (
        "{ lambda ; a:f32[6]. let  in (a,) }")
    assert repr(lax.stage(2.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(lax.stage(np.arange(3))) == "Array([0, 1, 2], dtype=int32)"


def test_dce_sink_keeps_a_computation():
    x = jnp.arange(6.0)
    assert str(jax.make_jaxpr(lambda a: lax.dce_sink(a))(x)) == (
        "{ lambda ; a:f32[6]. let dce_sink[prevent_mlir_dce=False] a in () }")
    text = str(jax.make_jaxpr(lambda a: (lax.dce_sink(a * 2), a)[1])(x))
    assert "mul a 2.0:f32[]" in text and "dce_sink[prevent_mlir_dce=False] b" in text
    assert jax.jit(lambda a: (lax.dce_sink(a * 2), a)[1])(x).tolist() == x.tolist()


def test_broadcast_like():
    out = lax.broadcast_like(jnp.array([1, 2, 3]), jnp.zeros((2, 3)))
    assert out.tolist() == [[1, 2, 3], [1, 2, 3]] and out.dtype == jnp.int32
    weak = lax.broadcast_like(2.0, jnp.ones(2))
    assert weak.tolist() == [2.0, 2.0] and weak.weak_type
    with pytest.raises(ValueError, match=r"Incompatible types for broadcasting: input "
                       r"type=float32\[3\] and requested type=float32\[2,2\]"):
        lax.broadcast_like(jnp.ones(3), jnp.ones((2, 2)))


def test_approx_top_k_matches_jax():
    x = np.random.RandomState(0).rand(3, 5).astype("float32")
    v, i = lax.approx_max_k(x, 2)
    np.testing.assert_allclose(v, [[0.7151893377304077, 0.6027633547782898],
                                   [0.9636627435684204, 0.891772985458374],
                                   [0.9255966544151306, 0.7917250394821167]])
    assert i.tolist() == [[1, 2], [3, 2], [3, 0]]
    v, i = jax.jit(lambda a: lax.approx_min_k(a, 2, reduction_dimension=0))(x)
    assert i.tolist() == [[0, 1, 2, 0, 2], [1, 2, 0, 2, 1]]
    assert v[1, 3] == np.float32(0.9255966544151306)
    assert jax.grad(lambda a: lax.approx_max_k(a, 2)[0].sum())(x).tolist() == [
        [0.0, 1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 1.0, 0.0]]
    assert "approx_top_k[" in str(jax.make_jaxpr(lambda a: lax.approx_max_k(a, 2))(x))
    # aggregate_to_topk=False keeps as many candidates as XLA's approximate pass would
    for (n, k, recall, override), size in [((4096, 16, 0.95, -1), 512),
                                           ((3000, 10, 0.99, -1), 1536),
                                           ((50000, 100, 0.9, -1), 1664),
                                           ((20000, 5, 0.95, 40000), 128)]:
        out = jax.eval_shape(functools.partial(
            lax.approx_max_k, k=k, recall_target=recall, aggregate_to_topk=False,
            reduction_input_size_override=override), jax.ShapeDtypeStruct((2, n), "float32"))
        assert out[0].shape == (2, size)
    with pytest.raises(ValueError, match="operand must be a floating type"):
        lax.approx_max_k(jnp.arange(4), 2)
    with pytest.raises(ValueError, match="k must be smaller than the size of reduction_dim"):
        lax.approx_max_k(jnp.zeros(3), 4)
    with pytest.raises(ValueError, match="k must be positive, got 0"):
        lax.approx_max_k(jnp.zeros(3), 0)


def test_select_and_scatter_matches_jax():
    x = jnp.array([[1.0, 5, 2, 0], [3, 4, 8, 1], [2, 2, 9, 7]])

    def f(op, src):
        return _select_and_scatter(op, lax.ge, (2, 2), (1, 2), ((0, 0), (0, 0)), src,
                                   jnp.float32(0), lax.add)

    def g(op, src):
        return _select_and_scatter(op, lax.le, (2, 3), (1, 1), ((1, 0), (1, 1)), src,
                                   jnp.float32(-1), lax.max)

    def h(op, src):
        return _select_and_scatter(op, lax.ge, (3,), (1,), ((2, 2),), src, jnp.float32(100),
                                   lax.sub)
    s = jnp.array([[10.0, 20], [30, 40]])
    s2 = jnp.arange(12.0).reshape(3, 4)
    expected_f = [[0, 10, 0, 0], [0, 30, 20, 0], [0, 0, 40, 0]]
    expected_g = [[5, -1, -1, 7], [-1, -1, -1, 11], [9, -1, -1, -1]]
    for run in (lambda fun, *a: fun(*a), lambda fun, *a: jax.jit(fun)(*a)):
        assert run(f, x, s).tolist() == expected_f
        assert run(g, x, s2).tolist() == expected_g
        assert run(h, jnp.array([1.0, 3, 2]), jnp.arange(1.0, 6)).tolist() == [99, 91, 95]
    assert jax.vmap(f)(jnp.stack([x, x + 1]), jnp.stack([s, s])).tolist() == [expected_f] * 2
    text = str(jax.make_jaxpr(f)(x, s))
    # JAX 0.10.2 prints the params sorted: scatter_jaxpr (named first) before select_jaxpr
    assert "select_and_scatter[" in text and "add d e" in text and "ge g h" in text


def test_device_put_is_recorded_under_jit_and_transformations():
    x = jnp.ones(3)

    def eqns(fun):
        return [(e.primitive.name, e.params) for e in jax.make_jaxpr(fun)(x).jaxpr.eqns]
    (name, params), = eqns(lambda a: jax.device_put(a, donate=True))
    assert name == "device_put" and params["devices"] == (None,)
    assert repr(params["copy_semantics"]) == "(ArrayCopySemantics.DONATE_INPUT,)"
    (_, params), = eqns(lambda a: jax.device_put(a, jax.devices()[0]))
    assert params["devices"] == (jax.devices()[0],)
    assert repr(params["copy_semantics"]) == "(ArrayCopySemantics.REUSE_INPUT,)"
    grad_eqns = eqns(jax.grad(lambda a: jax.device_put(a).sum()))
    assert [n for n, _ in grad_eqns] == ["device_put", "reduce_sum", "broadcast_in_dim",
                                         "device_put"]
    assert repr(grad_eqns[-1][1]["copy_semantics"]) == "(ArrayCopySemantics.ALWAYS_COPY,)"
    assert jax.jit(jax.grad(lambda a: (jax.device_put(a) ** 2).sum()))(x).tolist() == [2.0] * 3
    out, = lax.device_put_p.bind(x, devices=(jax.devices()[0],), srcs=(None,),
                                 copy_semantics=grad_eqns[0][1]["copy_semantics"])
    assert out.committed


def test_pcast():
    x = jnp.arange(4.0)
    assert lax.pcast(x, (), to="varying") is x
    assert jax.vmap(lambda a: lax.pcast(a, "i", to="varying"), axis_name="i")(x).tolist() == [
        0.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="Allowed `to` values"):
        jax.vmap(lambda a: lax.pcast(a, "i", to="bad"), axis_name="i")(x)
    with pytest.raises(TypeError, match="must be a tuple or a str"):
        lax.pcast(x, {"i"}, to="varying")
    with pytest.raises(ValueError, match="pvary should be called under jax.shard_map"):
        lax.pcast(x, "i", to="varying")   # eagerly, as JAX 0.10.2
    with pytest.raises(NameError, match="Found an unbound axis name: i"):
        jax.jit(lambda a: lax.pcast(a, "i", to="varying"))(x)
