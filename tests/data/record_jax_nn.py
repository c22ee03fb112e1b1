"""Records jax.nn outputs of JAX 0.10.2 for pyjax's tests (run with real JAX, outside the
repo's environment): python record_jax_nn.py -> jax_nn_reference.json."""
import json
import pathlib

import numpy as np
import jax
import jax.numpy as jnp
from jax.nn import initializers as I

out = {}


def rec(name, value):
    v = np.asarray(value)
    out[name] = {"dtype": str(v.dtype), "shape": list(v.shape),
                 "values": v.astype(np.float64).reshape(-1).tolist()}


x = jnp.linspace(-4.0, 4.0, 17)
for name in ["celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_tanh",
             "leaky_relu", "log_sigmoid", "mish", "relu", "relu6", "selu", "sigmoid",
             "silu", "soft_sign", "softplus", "sparse_plus", "sparse_sigmoid",
             "squareplus", "tanh", "identity"]:
    fn = getattr(jax.nn, name)
    rec(name, fn(x[:16]) if name == "glu" else fn(x))
    if name != "glu":
        rec(f"grad_{name}", jax.vmap(jax.grad(fn))(x + 0.05))
rec("log1mexp", jax.nn.log1mexp(jnp.array([1e-3, 0.5, 1.0, 5.0, 30.0])))
m = jnp.arange(12.0).reshape(3, 4) / 3
rec("logmeanexp", jax.nn.logmeanexp(m, axis=1))
rec("standardize", jax.nn.standardize(m, axis=1))
rec("standardize_where", jax.nn.standardize(m, axis=1, where=m > 1))

k = jax.random.PRNGKey(3)
kq, kk, kv, kb = jax.random.split(k, 4)
q = jax.random.normal(kq, (2, 5, 4, 8))
kk_ = jax.random.normal(kk, (2, 6, 2, 8))
vv = jax.random.normal(kv, (2, 6, 2, 8))
bias = jax.random.normal(kb, (2, 4, 5, 6))
mask = jax.random.bernoulli(kb, 0.7, (2, 1, 5, 6))
rec("attention", jax.nn.dot_product_attention(q, kk_, vv))
rec("attention_bias_mask", jax.nn.dot_product_attention(q, kk_, vv, bias=bias, mask=mask))
rec("attention_causal_scale", jax.nn.dot_product_attention(q, kk_, vv, is_causal=True,
                                                           scale=0.5))
rec("attention_seqlens", jax.nn.dot_product_attention(
    q, kk_, vv, query_seq_lengths=jnp.array([3, 5]), key_value_seq_lengths=jnp.array([4, 6])))
rec("attention_window", jax.nn.dot_product_attention(q, kk_, vv, local_window_size=(1, 2)))
rec("attention_unbatched", jax.nn.dot_product_attention(q[0], kk_[0], vv[0]))

key = jax.random.PRNGKey(0)
rec("init_glorot_normal", I.glorot_normal()(key, (3, 4)))
rec("init_glorot_uniform", I.glorot_uniform()(key, (3, 4)))
rec("init_he_normal_conv", I.he_normal()(key, (3, 3, 2, 4)))
rec("init_lecun_uniform", I.lecun_uniform()(key, (2, 3)))
rec("init_variance_scaling_fan_out_normal",
    I.variance_scaling(0.5, "fan_out", "normal", in_axis=0, out_axis=1)(key, (4, 5, 6)))
rec("init_variance_scaling_geo", I.variance_scaling(2.0, "fan_geo_avg", "uniform")(key,
                                                                                    (5, 2)))
rec("init_orthogonal", I.orthogonal()(key, (3, 5)))
rec("init_orthogonal_axis0", I.orthogonal(scale=2.0, column_axis=0)(key, (4, 2, 2)))
rec("init_delta_orthogonal", I.delta_orthogonal()(key, (3, 3, 2, 2)))
rec("init_normal", I.normal(0.5)(key, (4,)))
rec("init_uniform", I.uniform(2.0)(key, (4,)))
rec("init_truncated_normal", I.truncated_normal(1.0, lower=-1.0, upper=1.5)(key, (4,)))
rec("init_constant", I.constant(-1.5)(key, (2, 2)))

path = pathlib.Path(__file__).with_name("jax_nn_reference.json")
path.write_text(json.dumps(out, separators=(",", ":")))
print(len(out), "records")
