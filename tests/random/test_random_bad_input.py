"""Bad input to jax.random (keys that are not keys, shapes, dtypes, seeds, sampler
parameters), table-driven: each case raises a named exception whose message names the
problem (see harness.assert_named_error)."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import assert_named_error, bad_input_case as case
from pyjax import random
from pyjax.errors import ConcretizationTypeError

x = jnp.ones((2, 3))


def key():
    return random.PRNGKey(0)


CASES = [
    case("random_int_key", TypeError, "PRNG key", lambda: random.normal(5, (2,))),
    case("random_key_shape", TypeError, "invalid PRNG key data",
         lambda: random.normal(jnp.zeros((3,), jnp.uint32), (2,))),
    case("random_key_dtype", TypeError, "invalid PRNG key data",
         lambda: random.normal(jnp.zeros((2,)), (2,))),
    case("random_key_batch", ValueError, "single key",
         lambda: random.normal(random.split(key(), 3), (2,))),
    case("random_negative_shape", TypeError, "negative dimensions",
         lambda: random.normal(key(), (-1,))),
    case("random_float_shape", TypeError, r"jax.random.normal: .*got \(2\.5,\)",
         lambda: random.normal(key(), (2.5,))),
    case("random_string_shape", TypeError, "jax.random.normal: Shapes must",
         lambda: random.normal(key(), "ab")),
    case("random_int_dtype", ValueError, "float or complex dtype",
         lambda: random.normal(key(), (2,), dtype=jnp.int32)),
    case("randint_float_dtype", TypeError, "integer dtypes",
         lambda: random.randint(key(), (2,), 0, 5, dtype=jnp.float32)),
    case("random_bits_float", ValueError, "unsigned int dtype",
         lambda: random.bits(key(), (2,), jnp.float32)),
    case("split_negative", TypeError, "negative dimensions", lambda: random.split(key(), -1)),
    case("split_float", TypeError, "jax.random.split", lambda: random.split(key(), 2.5)),
    case("prngkey_float_seed", TypeError, "must be an integer", lambda: random.PRNGKey(1.5)),
    case("prngkey_array_seed", TypeError, "scalar seed", lambda: random.PRNGKey(jnp.ones(3))),
    case("prngkey_seed_too_big", OverflowError, "64-bit", lambda: random.PRNGKey(2 ** 70)),
    case("key_unknown_impl", ValueError, "unrecognized PRNG implementation",
         lambda: random.key(0, impl="foo")),
    case("choice_too_many", ValueError, "larger sample",
         lambda: random.choice(key(), 3, (5,), replace=False)),
    case("choice_p_size", ValueError, "p must be None or a 1D vector",
         lambda: random.choice(key(), 3, (2,), p=jnp.ones(4))),
    case("categorical_axis", ValueError, "out of bounds",
         lambda: random.categorical(key(), x, axis=5)),
    case("permutation_axis", ValueError, "out of bounds",
         lambda: random.permutation(key(), x, axis=5)),
    case("permutation_int_axis", ValueError, "axis 3 is out of bounds",
         lambda: random.permutation(key(), 10, axis=3)),
    case("permutation_traced_int", ConcretizationTypeError, "argument x of jax.random",
         lambda: jax.jit(random.permutation)(key(), 10)),
    case("traced_shape", TypeError, r"Shapes must be 1D sequences .*\nIf using `jit`",
         lambda: jax.jit(lambda n: random.normal(key(), (n, 2)))(3)),
    case("uniform_parameter_shape", ValueError, "broadcast-compatible",
         lambda: random.uniform(key(), (2,), minval=jnp.zeros(3))),
    case("multivariate_normal_cov", ValueError, "cov.shape",
         lambda: random.multivariate_normal(key(), jnp.zeros(3), jnp.eye(2))),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)


def test_ball_takes_a_traced_p():
    # JAX 0.10.2's values: p is traced under jit, only d is static
    b = jax.jit(lambda k, p: random.ball(k, 3, p, (2,)))(random.key(123), 1.5)
    assert b.tolist() == [[0.7449297308921814, 0.33324432373046875, 0.04611147195100784],
                          [0.4355982542037964, -0.26391923427581787, 0.6529917120933533]]


def test_orthogonal_complex():
    q = random.orthogonal(random.key(0), 3, (), jnp.complex64)
    assert q.dtype == jnp.complex64
    assert abs(complex(q[0, 0]) - (0.3126 - 0.7606j)) < 1e-4   # JAX 0.10.2's value
    assert float(jnp.abs(jnp.conj(q).T @ q - jnp.eye(3)).max()) < 1e-5
