"""jnp's products as JAX traces them: one dot_general in the promoted (or preferred)
element type, mixed operands not converted first, size-1 batch axes squeezed (jaxprs
observed on JAX 0.10.2)."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


def _dots(fn, *args, **kwargs):
    jaxpr = jax.make_jaxpr(lambda *a: fn(*a, **kwargs))(*args)
    return [e for e in jaxpr.eqns if e.primitive.name == "dot_general"], jaxpr


@pytest.mark.parametrize("lhs,rhs,out", [
    ("int8", "float32", "float32"), ("bfloat16", "float16", "float32"),
    ("int32", "int32", "int32"), ("bool", "bool", "bool"),
    ("complex64", "float32", "complex64")])
def test_mixed_precision_dot_is_one_dot_general(lhs, rhs, out):
    dots, jaxpr = _dots(jnp.dot, jax.ShapeDtypeStruct((5,), lhs),
                        jax.ShapeDtypeStruct((5,), rhs))
    assert [e.primitive.name for e in jaxpr.eqns] == ["dot_general"]
    assert dots[0].params["preferred_element_type"] == out
    assert jaxpr.out_avals[0].dtype == out


@pytest.mark.parametrize("name", ["inner", "matmul", "dot", "vdot", "tensordot", "vecdot"])
def test_preferred_element_type_recorded(name):
    fn = getattr(jnp, name)
    kwargs = dict(axes=0) if name == "tensordot" else {}
    i32, f32 = np.ones(2, "int32"), np.ones(2, "float32")
    for args, extra, expected in [((i32, i32), {}, "int32"), ((f32, f32), {}, "float32"),
                                  ((f32, f32), {"preferred_element_type": "bfloat16"},
                                   "bfloat16"), ((i32, f32), {}, "float32")]:
        dots, _ = _dots(fn, *args, **kwargs, **extra)
        assert dots and all(e.params["preferred_element_type"] == expected for e in dots)


def test_mixed_precision_values_and_gradients():
    a, b = np.arange(4, dtype=np.int8), np.linspace(0, 1, 4, dtype=np.float32)
    out = jnp.dot(a, b)
    assert out.dtype == jnp.float32 and float(out) == pytest.approx(4.6666665)
    assert jax.jit(jnp.dot)(a, b).tolist() == pytest.approx(4.6666665)
    grad = jax.grad(lambda b: jnp.dot(a, b))(b)
    assert grad.dtype == jnp.float32 and grad.tolist() == [0.0, 1.0, 2.0, 3.0]
    half = jnp.matmul(jnp.ones((2, 3), jnp.bfloat16), jnp.ones((3,), jnp.float16))
    assert half.dtype == jnp.float32 and half.tolist() == [3.0, 3.0]


def test_matmul_squeezes_size_one_batch_axes_of_both():
    x = jax.ShapeDtypeStruct((1, 5, 4), jnp.float32)
    y = jax.ShapeDtypeStruct((1, 4, 3), jnp.float32)
    (dot,), jaxpr = _dots(jnp.matmul, x, y)
    assert dot.invars[0].aval.shape == (5, 4) and dot.invars[1].aval.shape == (4, 3)
    assert dot.params["dimension_numbers"] == (((1,), (0,)), ((), ()))
    assert jaxpr.out_avals[0].shape == (1, 5, 3)
    out = jnp.matmul(jnp.ones((2, 1, 5, 4)), jnp.ones((1, 4, 3)))
    assert out.shape == (2, 1, 5, 3) and float(out[1, 0, 4, 2]) == 4.0
