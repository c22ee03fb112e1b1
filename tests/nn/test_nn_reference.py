"""jax.nn (second part) and jax.nn.initializers against values recorded from JAX 0.10.2
(tests/data/jax_nn_reference.json, written by tests/data/record_jax_nn.py): every
activation and its gradient, log1mexp, logmeanexp, standardize, dot_product_attention with
masks/bias/causality/sequence lengths/windows, and the initializers."""
import json

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.nn import initializers as init
from repo_paths import DATA_DIR

REF = json.loads((DATA_DIR / "jax_nn_reference.json").read_text())


def check(name, got, rtol=2e-5, atol=2e-6):
    rec = REF[name]
    got = np.asarray(got)
    assert list(got.shape) == rec["shape"], (name, got.shape)
    assert str(got.dtype) == rec["dtype"], (name, got.dtype)
    np.testing.assert_allclose(got.astype(np.float64).reshape(-1), rec["values"], rtol=rtol,
                               atol=atol, err_msg=name)


ACTIVATIONS = ["celu", "elu", "gelu", "hard_sigmoid", "hard_silu", "hard_tanh",
               "leaky_relu", "log_sigmoid", "mish", "relu", "relu6", "selu", "sigmoid",
               "silu", "soft_sign", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
               "tanh", "identity"]
X = jnp.linspace(-4.0, 4.0, 17)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_and_gradient_match_jax(name):
    fn = getattr(jax.nn, name)
    check(name, fn(X))
    check(f"grad_{name}", jax.vmap(jax.grad(fn))(X + 0.05))
    check(name, jax.jit(fn)(X))


def test_aliases_and_glu():
    check("glu", jax.nn.glu(X[:16]))
    assert jax.nn.hard_swish is jax.nn.hard_silu and jax.nn.swish is jax.nn.silu
    with pytest.raises(ValueError, match="even size"):
        jax.nn.glu(jnp.ones(3))


def test_log1mexp_logmeanexp_standardize():
    check("log1mexp", jax.nn.log1mexp(jnp.array([1e-3, 0.5, 1.0, 5.0, 30.0])))
    np.testing.assert_allclose(jax.grad(jax.nn.log1mexp)(2.0), 1 / np.expm1(2.0), rtol=1e-6)
    m = jnp.arange(12.0).reshape(3, 4) / 3
    check("logmeanexp", jax.nn.logmeanexp(m, axis=1))
    check("standardize", jax.nn.standardize(m, axis=1))
    check("standardize_where", jax.nn.standardize(m, axis=1, where=m > 1))


def _attention_inputs():
    k = jax.random.PRNGKey(3)
    kq, kk, kv, kb = jax.random.split(k, 4)
    q = jax.random.normal(kq, (2, 5, 4, 8))
    key = jax.random.normal(kk, (2, 6, 2, 8))
    value = jax.random.normal(kv, (2, 6, 2, 8))
    bias = jax.random.normal(kb, (2, 4, 5, 6))
    mask = jax.random.bernoulli(kb, 0.7, (2, 1, 5, 6))
    return q, key, value, bias, mask


def test_dot_product_attention_matches_jax():
    q, k, v, bias, mask = _attention_inputs()
    attn = jax.nn.dot_product_attention
    check("attention", attn(q, k, v))
    check("attention_bias_mask", attn(q, k, v, bias=bias, mask=mask))
    check("attention_causal_scale", attn(q, k, v, is_causal=True, scale=0.5))
    check("attention_seqlens", attn(q, k, v, query_seq_lengths=jnp.array([3, 5]),
                                    key_value_seq_lengths=jnp.array([4, 6])))
    check("attention_window", attn(q, k, v, local_window_size=(1, 2)))
    check("attention_unbatched", attn(q[0], k[0], v[0]))
    check("attention", jax.jit(attn)(q, k, v))


def test_dot_product_attention_is_softmax_attention():
    """Against the formula, one head at a time, and differentiable."""
    q, k, v, _, _ = _attention_inputs()
    qn, kn, vn = (np.asarray(t, np.float64) for t in (q, k, v))
    out = np.asarray(jax.nn.dot_product_attention(q, k, v), np.float64)
    for head in range(4):
        logits = qn[:, :, head] @ kn[:, :, head // 2].transpose(0, 2, 1) / np.sqrt(8)
        p = np.exp(logits - logits.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        np.testing.assert_allclose(out[:, :, head], p @ vn[:, :, head // 2], rtol=1e-4,
                                   atol=1e-5)
    g = jax.grad(lambda qq: jax.nn.dot_product_attention(qq, k, v).sum())(q)
    assert g.shape == q.shape and bool(jnp.isfinite(g).all())
    with pytest.raises(ValueError, match="implementation"):
        jax.nn.dot_product_attention(q, k, v, implementation="cudnn")
    with pytest.raises(ValueError, match=r"query shape should be \[2, -1, -1, 4\]"):
        jax.nn.dot_product_attention(q, k[:, :, :1, :4], v[:, :, :1, :4])


def test_initializers_match_jax():
    key = jax.random.PRNGKey(0)
    check("init_glorot_normal", init.glorot_normal()(key, (3, 4)))
    check("init_glorot_uniform", init.glorot_uniform()(key, (3, 4)))
    check("init_he_normal_conv", init.he_normal()(key, (3, 3, 2, 4)))
    check("init_lecun_uniform", init.lecun_uniform()(key, (2, 3)))
    check("init_variance_scaling_fan_out_normal", init.variance_scaling(
        0.5, "fan_out", "normal", in_axis=0, out_axis=1)(key, (4, 5, 6)))
    check("init_variance_scaling_geo",
          init.variance_scaling(2.0, "fan_geo_avg", "uniform")(key, (5, 2)))
    check("init_orthogonal", init.orthogonal()(key, (3, 5)), atol=2e-5)
    check("init_orthogonal_axis0", init.orthogonal(scale=2.0, column_axis=0)(key, (4, 2, 2)),
          atol=2e-5)
    check("init_delta_orthogonal", init.delta_orthogonal()(key, (3, 3, 2, 2)), atol=2e-5)
    check("init_normal", init.normal(0.5)(key, (4,)))
    check("init_uniform", init.uniform(2.0)(key, (4,)))
    check("init_truncated_normal",
          init.truncated_normal(1.0, lower=-1.0, upper=1.5)(key, (4,)))
    check("init_constant", init.constant(-1.5)(key, (2, 2)))
    assert init.zeros(key, (2,), jnp.int32).dtype == jnp.int32
    assert float(init.ones(key, (3,)).sum()) == 3.0
    assert init.xavier_uniform is init.glorot_uniform and init.kaiming_normal is init.he_normal


def test_initializer_statistics_and_errors():
    key = jax.random.key(5)
    w = np.asarray(init.he_normal()(key, (400, 300)), np.float64)
    np.testing.assert_allclose(w.std(), np.sqrt(2 / 400), rtol=0.03)
    assert np.abs(w).max() <= 2 * np.sqrt(2 / 400) / 0.87962566 + 1e-6
    u = np.asarray(init.glorot_uniform()(key, (200, 300)), np.float64)
    np.testing.assert_allclose(u.var(), 2 / 500, rtol=0.05)
    c = np.asarray(init.lecun_normal(dtype=jnp.complex64)(key, (300, 200)))
    assert c.dtype == np.complex64
    np.testing.assert_allclose(np.mean(np.abs(c) ** 2), 1 / 300, rtol=0.05)
    o = np.asarray(init.orthogonal()(key, (6, 4)), np.float64)
    np.testing.assert_allclose(o.T @ o, np.eye(4), atol=1e-5)
    with pytest.raises(ValueError, match="at least 2D"):
        init.glorot_normal()(key, (3,))
    with pytest.raises(ValueError, match="invalid mode"):
        init.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        init.delta_orthogonal()(key, (2, 2))


def test_masked_softmax_logsumexp_and_dtypes_match_jax():
    x = jnp.array([[1., 2., 3.], [0., 0., 0.]])
    where = jnp.array([[True, False, True], [False, False, False]])
    np.testing.assert_allclose(jax.nn.softmax(x, where=where),
                               [[0.11920291, 0., 0.880797], [0., 0., 0.]], rtol=1e-6)
    np.testing.assert_array_equal(jax.nn.logsumexp(jnp.zeros((2, 0)), axis=1),
                                  [-np.inf, -np.inf])
    assert jax.nn.identity(np.array([1, 2])).dtype == np.int32
    assert jax.nn.identity(1.5).dtype == np.float32
    tanh = jax.nn.hard_tanh(np.array([-3, 0, 2]))
    assert tanh.dtype == np.int32 and tanh.tolist() == [-1, 0, 1]
    with jax.enable_x64(True):
        out, sign = jax.nn.logsumexp(np.arange(3, dtype=np.float32),
                                     b=np.array([1., -1., 2.]), return_sign=True)
        assert out.dtype == np.float64 and sign == 1.0
        np.testing.assert_allclose(out, 2.5695411352, rtol=1e-10)
