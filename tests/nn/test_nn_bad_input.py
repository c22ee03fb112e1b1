"""Bad input to jax.nn (axes of softmax, log_softmax, glu and logsumexp; initializer shapes;
one_hot's class count): each case raises a named exception whose message names the problem
(see harness.assert_named_error)."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import assert_named_error, bad_input_case as case
from pyjax import random

x = jnp.ones((2, 3))


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
    case("initializer_1d_fans", ValueError, "at least 2D",
         lambda: jax.nn.initializers.glorot_uniform()(key(), (3,))),
    case("one_hot_float_classes", TypeError, "num_classes must be an integer",
         lambda: jax.nn.one_hot(jnp.array([0, 1]), 2.5)),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)
