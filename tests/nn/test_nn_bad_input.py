"""Bad input to jax.nn (axes of softmax, log_softmax, glu and logsumexp; initializer shapes;
one_hot's class count): each case raises a named exception whose message names the problem
(see harness.assert_named_error)."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import assert_named_error, bad_input_case as case
from pyjax import random

x = jnp.ones((2, 3))
q4, kv = jnp.ones((1, 4, 4, 8)), jnp.ones((1, 4, 2, 8))


def key():
    return random.PRNGKey(0)


CASES = [
    case("softmax_axis", ValueError, "axis 5 is out of bounds",
         lambda: jax.nn.softmax(x, axis=5)),
    case("log_softmax_axis", ValueError, "out of bounds", lambda: jax.nn.log_softmax(x, axis=5)),
    case("glu_axis", ValueError, "out of bounds", lambda: jax.nn.glu(x, axis=5)),
    case("logsumexp_axis", ValueError, "out of bounds",
         lambda: jax.scipy.special.logsumexp(x, axis=5)),
    case("initializer_negative_shape", TypeError, "negative dimensions",
         lambda: jax.nn.initializers.normal()(key(), (-1, 2))),
    case("initializer_1d_fans", ValueError,
         "Can't compute input and output sizes of a 1-dimensional weights tensor with "
         "default in_axis. Must be at least 2D or specify in_axis explicitly.",
         lambda: jax.nn.initializers.glorot_uniform()(key(), (3,))),
    # dot_product_attention's checks, JAX 0.10.2's messages (flax's GQA tests match them)
    case("attention_heads_not_a_multiple", ValueError,
         "The number of query heads must be a multiple of key/value heads, but got 5 vs 2",
         lambda: jax.nn.dot_product_attention(jnp.ones((1, 4, 5, 8)), kv, kv)),
    case("attention_value_shape", ValueError,
         r"value shape should be \[1, 4, 2, 8\]: but got \(1, 4, 2, 7\)",
         lambda: jax.nn.dot_product_attention(q4, kv, jnp.ones((1, 4, 2, 7)))),
    case("attention_query_dtype", ValueError, "query dtype should be float32, but got bfloat16",
         lambda: jax.nn.dot_product_attention(q4.astype(jnp.bfloat16), kv, kv)),
    case("attention_mask_dtype", ValueError, "mask dtype should be bool, but got int32",
         lambda: jax.nn.dot_product_attention(q4, kv, kv, mask=jnp.ones((1, 4, 4, 4), int))),
    case("attention_seq_lengths_shape", ValueError,
         r"query_seq_lengths shape should be \[1\]: but got \(2,\)",
         lambda: jax.nn.dot_product_attention(q4, kv, kv,
                                              query_seq_lengths=jnp.array([1, 2]))),
    case("attention_seq_lengths_dtype", ValueError,
         "key_value_seq_lengths dtype should be int32, but got float32",
         lambda: jax.nn.dot_product_attention(q4, kv, kv,
                                              key_value_seq_lengths=jnp.array([1.0]))),
    case("one_hot_float_classes", TypeError, "num_classes must be an integer",
         lambda: jax.nn.one_hot(jnp.array([0, 1]), 2.5)),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)
