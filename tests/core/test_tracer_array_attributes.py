"""Array attributes and methods on traced arrays as JAX 0.10.2 has them: itemsize and
nbytes are static, round() is jnp.round, and tobytes()/tolist() name themselves and the
traced shape in their ConcretizationTypeError."""
import inspect

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import errors

X = np.arange(12, dtype=np.int16).reshape(3, 4)


def test_itemsize_and_nbytes_of_a_traced_array():
    assert jax.jit(lambda x: x.itemsize)(X) == 2
    assert jax.jit(lambda x: x.nbytes)(X) == 24


def test_round_of_an_array_is_jnp_round():
    np.testing.assert_allclose(jax.jit(round, static_argnums=1)(jnp.float32(1.234), 2), 1.23)
    np.testing.assert_allclose(round(jnp.array(7.5, jnp.float32), 1), 7.5)
    assert float(round(jnp.float32(1.6))) == 2.0


@pytest.mark.parametrize("method", ["tobytes", "tolist"])
def test_value_methods_name_the_traced_shape(method):
    with pytest.raises(errors.ConcretizationTypeError,
                       match=rf"The {method}\(\) method was called on traced array with "
                             r"shape int16\[3,4\]"):
        jax.jit(lambda x: getattr(x, method)())(X)


def test_verbose_tracer_text_names_the_trace_and_contents():
    # JAX 0.10.2's texts (a tracer's _pretty_print(verbose=True).format())
    texts = []

    def f(x):
        texts.append((x._pretty_print(verbose=True).format(), x._pretty_print().format()))
        return x.sum()

    jax.jit(f)(jnp.arange(3.0, dtype="float32"))
    assert texts[-1] == ("Traced<float32[3]>with<DynamicJaxprTrace>", "JitTracer(float32[3])")
    jax.vmap(f)(jnp.arange(2, dtype="int32"))
    assert texts[-1] == ("Traced<int32[]>with<BatchTrace> with\n"
                         "  val = Array([0, 1], dtype=int32)\n  batch_dim = 0",
                         "VmapTracer(aval=int32[], batched=int32[2])")
    jax.grad(f)(jnp.float16(1.0))
    assert texts[-1][0].startswith("Traced<float16[]>with<JVPTrace> with\n"
                                   "  primal = Array(1., dtype=float16)\n  tangent = ")


def test_var_method_under_jit():
    # a jit tracer's own fields must not hide Array methods (its jaxpr variable was `var`)
    x = jnp.array([[1.0, 2.0], [3.0, 5.0]], jnp.float32)
    out = jax.jit(lambda x: x.var(axis=0, ddof=1, keepdims=True))(x)
    np.testing.assert_allclose(out, [[2.0, 4.5]])   # JAX 0.10.2


def test_array_methods_stay_methods_on_traced_arrays():
    x = jnp.arange(4.0, dtype=jnp.float32)
    methods = [n for n in dir(jax.core.Tracer) if not n.startswith("_")
               and inspect.isfunction(inspect.getattr_static(jax.core.Tracer, n))]
    assert "var" in methods
    shadowed = []

    def f(t):
        shadowed.extend(n for n in methods if not callable(getattr(t, n)))
        return t

    jax.jit(f)(x)
    jax.vmap(f)(x)
    jax.jvp(f, (x,), (x,))
    assert shadowed == []
