"""lax.composite: one composite_p equation, lowered to stablehlo.composite whose
decomposition is a private function; keyword arguments become composite_attributes.
Expected texts and errors are JAX 0.10.2's for the same programs (as_text() prints
what jaxlib's MLIR prints, as JAX's does)."""
from functools import partial

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.errors import UnexpectedTracerError


def test_composite_runs_its_decomposition_and_lowers_to_a_composite_op():
    my_square = lax.composite(lambda x: x ** 2, name="my.square")
    x = jnp.array(2.0, dtype=jnp.float32)
    assert float(my_square(x)) == 4.0 and float(jax.jit(my_square)(x)) == 4.0
    eqn, = jax.make_jaxpr(my_square)(x).eqns
    assert eqn.primitive.name == "composite" and eqn.params["name"] == "my.square"
    text = jax.jit(my_square).lower(x).as_text()
    assert 'stablehlo.composite "my.square" %arg0 {decomposition = @my.square} : ' \
        '(tensor<f32>) -> tensor<f32>' in text
    assert "func.func private @my.square(%arg0: tensor<f32>) -> tensor<f32> {" in text
    assert "stablehlo.multiply %arg0, %arg0 : tensor<f32>" in text
    np.testing.assert_array_equal(jax.vmap(my_square)(jnp.arange(3.0)), [0.0, 1.0, 4.0])


def test_attributes_version_and_constants():
    @jax.jit
    def tangent(x):
        return lax.composite(lambda x, **_: lax.sin(x) / lax.cos(x), "my.tangent", version=2)(
            x, dtype=np.dtype(np.float32), int=1, omit=None, str="bar", f=0.5, b=True,
            tensor=np.zeros((1, 2), dtype=np.float32))

    np.testing.assert_allclose(tangent(jnp.arange(3.0)), np.tan(np.arange(3.0)), rtol=1e-6)
    assert ('stablehlo.composite "my.tangent" %arg0 {composite_attributes = {b = true, '
            'dtype = f32, f = 5.000000e-01 : f64, int = 1 : i64, str = "bar", '
            'tensor = dense<0.000000e+00> : tensor<1x2xf32>}, '
            'decomposition = @my.tangent, version = 2 : i32}') in \
        tangent.lower(jnp.arange(3.0)).as_text()

    @partial(lax.composite, name="my.consts")
    def my_consts(x, /, *, scale):
        return jnp.round(x / scale)

    scale = np.array([0.5, 0.4, 0.3], dtype=np.float32)
    text = jax.jit(partial(my_consts, scale=scale)).lower(jnp.ones(3)).as_text()
    # the constant is the decomposition's first argument, as in JAX
    assert "@my.consts(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>)" in text


def test_no_derivatives_and_no_traced_constants_or_attributes():
    my_square = lax.composite(lambda x: x ** 2, name="my.square")
    message = "JVP rule for composite not implemented. You can use `jax.custom_jvp`"
    with pytest.raises(ValueError, match=message):
        jax.jvp(my_square, (1.0,), (2.0,))
    with pytest.raises(ValueError, match=message):
        jax.grad(my_square)(1.0)

    def fun(x, scale):
        return lax.composite(lambda y: jnp.round(y / scale), name="my.consts")(x)

    np.testing.assert_array_equal(fun(jnp.ones(3), jnp.ones(3)), [1.0, 1.0, 1.0])
    with pytest.raises(UnexpectedTracerError, match="Found a JAX Tracer as a constant in "
                       "the decomposition for the composite op 'my.consts'"):
        jax.jit(fun)(jnp.ones(3), jnp.ones(3))
    with pytest.raises(UnexpectedTracerError, match="use numpy arrays instead"):
        jax.jit(lambda x: lax.composite(lambda x, **_: x, "t")(x, t=jnp.zeros(2) + x))(1.0)
