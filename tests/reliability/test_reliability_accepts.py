"""Reliability, code JAX accepts: mixed-dtype lax.dot, float fori_loop bounds,
Array.view, and results recorded from JAX 0.10.2 as literals."""
import itertools

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

DTYPES = [jnp.bool_, jnp.int8, jnp.uint8, jnp.int16, jnp.uint32, jnp.int32, jnp.bfloat16,
          jnp.float16, jnp.float32, jnp.complex64]
# JAX 0.10.2's lax.dot(ones(3, row dtype), ones(3, column dtype)).dtype
DOT_DTYPES = [  # noqa: E501
    ['bool', 'int8', 'uint8', 'int16', 'uint32', 'int32', 'bfloat16', 'float16', 'float32', 'complex64'],  # noqa: E501
    ['int8', 'int8', 'int8', 'int16', 'uint32', 'int32', 'bfloat16', 'float16', 'float32', 'complex64'],  # noqa: E501
    ['uint8', 'int8', 'uint8', 'int16', 'uint32', 'int32', 'bfloat16', 'float16', 'float32', 'complex64'],  # noqa: E501
    ['int16', 'int16', 'int16', 'int16', 'uint32', 'int32', 'bfloat16', 'float16', 'float32', 'complex64'],  # noqa: E501
    ['uint32', 'uint32', 'uint32', 'uint32', 'uint32', 'int32', 'bfloat16', 'float16', 'float32', 'complex64'],  # noqa: E501
    ['int32', 'int32', 'int32', 'int32', 'int32', 'int32', 'bfloat16', 'float16', 'float32', 'complex64'],  # noqa: E501
    ['bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'bfloat16', 'float32', 'complex64'],  # noqa: E501
    ['float16', 'float16', 'float16', 'float16', 'float16', 'float16', 'bfloat16', 'float16', 'float32', 'complex64'],  # noqa: E501
    ['float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'float32', 'complex64'],  # noqa: E501
    ['complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64', 'complex64'],  # noqa: E501
]


def test_dot_of_mixed_dtypes_takes_the_higher_precision_type_as_jax():
    for (i, a), (j, b) in itertools.product(enumerate(DTYPES), enumerate(DTYPES)):
        x, y = jnp.arange(3).astype(a), jnp.arange(1, 4).astype(b)
        eager, jitted = lax.dot(x, y), jax.jit(lax.dot)(x, y)
        assert str(eager.dtype) == str(jitted.dtype) == DOT_DTYPES[i][j], (a, b)
        assert np.array_equal(np.asarray(eager), np.asarray(jitted)), (a, b)


def test_dot_mixed_values_and_gradients():
    a, b = jnp.array([1, 2, 3], jnp.int32), jnp.array([1., 2., 3.], jnp.float32)
    assert lax.dot(a, b) == 14.0 and lax.dot(a, b).dtype == jnp.float32
    gx, gy = jax.grad(lambda p, q: lax.dot(p, q).astype(jnp.float32), argnums=(0, 1))(
        jnp.ones(3, jnp.float32), jnp.ones(3, jnp.float16))
    assert gx.dtype == jnp.float32 and gy.dtype == jnp.float16   # as JAX
    assert jax.vmap(lax.dot)(jnp.ones((2, 3), jnp.int32), jnp.ones((2, 3))).tolist() == [3, 3]


@pytest.mark.parametrize("lower, upper, want", [
    (0.0, 3.0, 3.0), (0.5, 3.0, 3.0), (jnp.float32(0.5), jnp.float32(2.7), 1.0),
    (jnp.int16(0), jnp.int16(3), 3.0), (jnp.int16(0), 3, 3.0)])
def test_fori_loop_bounds_as_jax(lower, upper, want):
    """JAX 0.10.2: concrete bounds (floats too) run int(lower)..int(upper) with a weak
    int32 index."""
    seen = []

    def body(i, c):
        seen.append((str(i.dtype), i.aval.weak_type))
        return c + i
    assert lax.fori_loop(lower, upper, body, 0.0) == want
    assert seen[0] == ("int32", True)


def test_fori_loop_traced_float_bounds():
    f = jax.jit(lambda a, b: lax.fori_loop(a, b, lambda i, c: c + i, 0.0))
    assert f(0.5, 3.0) == 4.5     # JAX 0.10.2: 0.5 + 1.5 + 2.5


@pytest.mark.parametrize("source, dtype, want", [
    (np.array([1., 2., 3.], np.float32), jnp.int32, [1065353216, 1073741824, 1077936128]),
    (np.array([1., 2., 3.], np.float32), jnp.uint8,
     [0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64]),
    (np.array([1., 2., 3.], np.float32), jnp.float16, [0., 1.875, 0., 2., 0., 2.125]),
    (np.ones(4, np.uint8), jnp.bool_, [True] * 4),
    (np.ones((2, 2), np.float32), jnp.uint16, [[0, 16256, 0, 16256], [0, 16256, 0, 16256]]),
    (np.array([1 + 2j], np.complex64), jnp.float32, [1., 2.]),
])
def test_view_as_jax(source, dtype, want):
    x = jnp.asarray(source)
    assert x.view(dtype).tolist() == want
    assert jax.jit(lambda a: a.view(dtype))(x).tolist() == want
    assert x.view() is x


def test_view_errors_as_jax():
    with pytest.raises(ValueError, match="0d array"):
        jnp.float32(1).view(jnp.uint8)
    with pytest.raises(ValueError, match="divisor"):
        jnp.ones(3, jnp.uint8).view(jnp.int16)
