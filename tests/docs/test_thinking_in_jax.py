"""The examples of "How to Think in JAX" that need no autodiff, each as a test."""
from functools import partial

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import errors, jit, lax


def test_numpy_and_jnp_agree():
    x_np = np.linspace(0, 10, 1000)
    y_np = 2 * np.sin(x_np) * np.cos(x_np)
    x_jnp = jnp.linspace(0, 10, 1000)
    y_jnp = 2 * jnp.sin(x_jnp) * jnp.cos(x_jnp)
    assert isinstance(y_jnp, jax.Array)
    np.testing.assert_allclose(y_jnp, y_np, atol=1e-5)


def test_arrays_are_immutable_and_at_returns_a_copy():
    x = jnp.arange(10)
    with pytest.raises(TypeError, match="immutable.*at\\[idx\\].set"):
        x[0] = 10
    y = x.at[0].set(10)
    assert str(x) == "[0 1 2 3 4 5 6 7 8 9]"
    assert str(y) == "[10  1  2  3  4  5  6  7  8  9]"


def test_jnp_promotes_but_lax_is_strict():
    assert repr(jnp.add(1, 1.0)) == "Array(2., dtype=float32, weak_type=True)"
    with pytest.raises(TypeError, match="add requires arguments to have the same dtypes, "
                                        "got int32, float32.*jnp.add"):
        lax.add(1, 1.0)
    assert repr(lax.add(jnp.float32(1), 1.0)) == "Array(2., dtype=float32)"


def test_norm_compiled_matches_eager():
    def norm(X):
        X = X - X.mean(0)
        return X / X.std(0)

    np.random.seed(1701)
    X = jnp.array(np.random.rand(10000, 10))
    assert np.allclose(norm(X), jit(norm)(X), atol=1e-6)


def test_boolean_mask_works_eagerly_and_fails_under_jit():
    def get_negatives(x):
        return x[x < 0]

    x = jnp.array(np.random.default_rng(0).standard_normal(10))
    np.testing.assert_array_equal(get_negatives(x), np.asarray(x)[np.asarray(x) < 0])
    with pytest.raises(errors.NonConcreteBooleanIndexError,
                       match=r"^Array boolean indices must be concrete; got bool\[10\]\n"):
        jit(get_negatives)(x)
    assert issubclass(errors.NonConcreteBooleanIndexError, IndexError)


def test_tracers_print_their_abstract_value(capsys):
    @jit
    def f(x, y):
        print("Running f():")
        print(f"  x = {x}")
        print(f"  y = {y}")
        result = jnp.dot(x + 1, y + 1)
        print(f"  result = {result}")
        return result

    x, y = np.random.randn(3, 4), np.random.randn(4)
    out = f(x, y)
    np.testing.assert_allclose(out, np.dot(x + 1, y + 1), rtol=1e-5)
    assert capsys.readouterr().out.splitlines() == [
        "Running f():",
        "  x = JitTracer(float32[3,4])",
        "  y = JitTracer(float32[4])",
        "  result = JitTracer(float32[3])"]
    f(np.random.randn(3, 4), np.random.randn(4))   # cached: nothing printed
    assert capsys.readouterr().out == ""


def test_make_jaxpr_printout():
    def f(x, y):
        return jnp.dot(x + 1, y + 1)

    text = str(jax.make_jaxpr(f)(np.ones((3, 4)), np.ones(4)))
    assert text.splitlines()[0] == "{ lambda ; a:f32[3,4] b:f32[4]. let"
    assert "c:f32[3,4] = add a 1.0" in text
    assert "d:f32[4] = add b 1.0" in text
    # the page's printout is an older JAX's; JAX 0.10.2 prints the dimension numbers as
    # lists and leaves out precision=None
    assert ("e:f32[3] = dot_general[\n      dimension_numbers=(([1], [0]), ([], []))\n"
            "      preferred_element_type=float32\n    ] c d") in text
    assert text.splitlines()[-1] == "  in (e,) }"


def test_python_branch_on_traced_value_and_static_fix():
    @jit
    def f(x, neg):
        return -x if neg else x

    with pytest.raises(errors.ConcretizationTypeError) as info:
        f(1, True)
    message = str(info.value)
    # JAX 0.10.2's words
    assert message.startswith("Attempted boolean conversion of traced array with shape "
                              "bool[].")
    assert "bool" in message and "static_argnums" in message
    assert "depends on the value of the argument neg." in message and "lax.cond" in message

    @partial(jit, static_argnums=(1,))
    def g(x, neg):
        return -x if neg else x

    assert repr(g(1, True)) == "Array(-1, dtype=int32, weak_type=True)"
    assert repr(g(1, False)) == "Array(1, dtype=int32, weak_type=True)"


def test_reshape_needs_static_shape_and_np_prod_works(capsys):
    @jit
    def bad(x):
        return x.reshape(jnp.array(x.shape).prod())

    x = jnp.ones((2, 3))
    with pytest.raises(errors.ConcretizationTypeError) as info:
        bad(x)
    message = str(info.value)
    assert "jax.numpy.reshape" in message
    assert "reduce_prod" in message

    @jit
    def show(x):
        print(f"x = {x}")
        print(f"x.shape = {x.shape}")
        print(f"jnp.array(x.shape).prod() = {jnp.array(x.shape).prod()}")

    show(x)
    assert capsys.readouterr().out.splitlines() == [
        "x = JitTracer(float32[2,3])",
        "x.shape = (2, 3)",
        "jnp.array(x.shape).prod() = JitTracer(int32[])"]

    @jit
    def good(x):
        return x.reshape((np.prod(x.shape),))

    assert repr(good(x)) == "Array([1., 1., 1., 1., 1., 1.], dtype=float32)"
