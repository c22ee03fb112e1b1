"""Edge cases of jnp.split, put, take and unwrap (values observed on JAX 0.10.2)."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import errors


def test_split_sections_from_a_concrete_number():
    assert len(jnp.split(jnp.zeros(3), jnp.array([1, 2]))) == 3
    assert len(jnp.split(jnp.zeros(6), 2.5)) == 2   # int() of the number, as JAX
    outs = jax.jvp(lambda idx: jnp.split(jnp.zeros((12, 2)), idx), (2.0,), (1.0,))[0]
    assert [o.shape for o in outs] == [(6, 2), (6, 2)]
    outs = jax.jvp(lambda idx: jnp.split(jnp.zeros((12, 2)), (1, idx.astype(np.int32))),
                   (2.0,), (1.0,))[0]
    assert [o.shape for o in outs] == [(1, 2), (1, 2), (10, 2)]
    for split in [lambda idx: jnp.split(jnp.zeros((12, 2)), idx),
                  lambda idx: jnp.split(jnp.zeros((12, 2)), [2, idx])]:
        with pytest.raises(errors.ConcretizationTypeError):
            jax.jit(split)(2.0)


@pytest.mark.parametrize("a,ind,v,expected", [
    (np.zeros(0), np.zeros(0, np.int32), np.ones(8), []),
    (np.zeros(3), np.zeros(0, np.int32), np.ones(8), [0, 0, 0]),
    (np.zeros(3), np.array([1, 2]), np.zeros(0), [0, 0, 0]),
    (np.zeros(3), np.array([1, 2]), np.ones(5), [0, 1, 1])])
def test_put_with_nothing_to_put(a, ind, v, expected):
    assert jnp.put(a, ind, v, inplace=False).tolist() == expected


def test_take_empty():
    assert jnp.take(jnp.array([], jnp.float32), jnp.array([], jnp.int32)).shape == (0,)
    assert jnp.take(jnp.ones((2, 0, 4)), jnp.array([], jnp.int32), axis=1).shape == (2, 0, 4)


@pytest.mark.parametrize("dtype,period,out_dtype,expected", [
    ("int16", 2 * np.pi, "float32", [1.0, -1.283185, -3.56637, -2.999999, -5.56637]),
    ("int16", 2, "int16", [1, 1, 1, 1, 1]),
    ("int32", 4, "int32", [1, 1, 1, 1, 3]),
    ("float16", 2 * np.pi, "float16", [1.0, -1.28125, -3.5625, -3.0, -5.5625]),
    ("uint8", 4, "uint8", [1, 1, 1, 1, 3])])
def test_unwrap_promotes_with_the_period(dtype, period, out_dtype, expected):
    x = np.array([1, 5, 9, -3, 7]).astype(dtype)
    out = jnp.unwrap(x, period=period)
    assert out.dtype == out_dtype
    np.testing.assert_allclose(np.asarray(out, np.float64), expected, atol=1e-3)


def test_piecewise_traces_its_functions_once():
    def g(v):
        g.traces += 1
        return v
    g.traces = 0
    x = jnp.arange(10.0)
    for _ in range(5):
        out = jnp.piecewise(x, [x < 0], [g, 0.0])
    assert g.traces == 1 and out.tolist() == [0.0] * 10
    x = jnp.arange(-3, 4)
    assert jnp.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v * 3, 7]).tolist() == \
        [3, 2, 1, 7, 7, 6, 9]
    assert jnp.piecewise(x, [x < 0], [lambda v, k=1: v * k], k=5).tolist() == \
        [-15, -10, -5, 0, 0, 0, 0]
    grad = jax.grad(lambda v: jnp.piecewise(v, [v < 0], [jnp.sin, jnp.cos]).sum())
    np.testing.assert_allclose(grad(jnp.array([-1.0, 1.0])), [0.540302, -0.841471], rtol=1e-5)
