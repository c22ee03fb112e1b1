"""Examples of the older JAX FAQ and of "How to Think in JAX" that the dedicated test files
(test_faq_jit, test_thinking_in_jax, test_autodiff, test_convolution) do not already pin
down: concrete vs abstract tracers per transformation, the jnp.split concretization error,
the messages of the conversion errors, and tracer leak detection."""
import gc
from functools import partial

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import errors, lax


def divide(x, y):
    return x / y if y >= 1. else 0.


# --- FAQ: "jit changes the behavior of my function" (the snippet run verbatim) ------------

_IMPURE = """
y = 0

{decorator}
def impure_func(x):
  print("Inside:", y)
  return x + y

for y in range(3):
  print("Result:", impure_func(y))
"""


@pytest.mark.parametrize("decorator,expected", [
    ("# @jit   # Different behavior with jit",
     ["Inside: 0", "Result: 0", "Inside: 1", "Result: 2", "Inside: 2", "Result: 4"]),
    ("@jit", ["Inside: 0", "Result: 0", "Result: 1", "Result: 2"]),
], ids=["without-jit", "with-jit"])
def test_faq_impure_function_snippet(capsys, decorator, expected):
    exec(_IMPURE.format(decorator=decorator), {"jit": jax.jit})
    assert capsys.readouterr().out.splitlines() == expected


# --- FAQ: "Abstract tracer value encountered where concrete value is expected" -------------

def test_split_works_eagerly_and_names_its_argument_under_jit():
    assert [a.tolist() for a in jnp.split(np.zeros(2), 2, 0)] == [[0.0], [0.0]]
    with pytest.raises(errors.ConcretizationTypeError) as info:
        jax.jit(jnp.split)(np.zeros(4), 2, 0)
    message = str(info.value)
    assert message.startswith("Abstract tracer value encountered where concrete value is "
                              "expected")
    assert "jnp.split argument" in message and "static_argnums" in message
    # Only the section count traced: the error names that argument.
    with pytest.raises(errors.ConcretizationTypeError, match="'indices_or_sections'"):
        jax.jit(jnp.split, static_argnums=2)(np.zeros(4), 2, 0)


def test_split_fixes_static_argnums_and_closure():
    split = jax.jit(jnp.split, static_argnums=(1, 2))
    out = split(np.zeros(4), 2, 0)
    assert repr(out) == ("[Array([0., 0.], dtype=float32), Array([0., 0.], dtype=float32)]")
    split(np.ones(4), 2, 0)
    assert split._cache_size() == 1          # static_argnums: the compiled code is reused
    traced = []
    for _ in range(2):     # a new closure per call: a new jit cache, so a new trace
        out = jax.jit(lambda arr: traced.append(1) or jnp.split(arr, 2, 0))(np.zeros(4))
    assert [a.shape for a in out] == [(2,), (2,)] and len(traced) == 2


# --- FAQ: "Different kinds of JAX values" ---------------------------------------------------

def test_print_inside_jit_shows_a_tracer_and_the_result_is_correct(capsys):
    def func(x):
        print(x)
        return jnp.cos(x)

    res = jax.jit(func)(0.)
    assert float(res) == 1.0
    assert capsys.readouterr().out == (
        "JitTracer(~float32[])\n")


def test_shape_of_a_tracer_is_a_regular_value():
    shapes = []

    @jax.jit
    def f(x):
        shapes.append(x.shape)
        return x.reshape((np.prod(x.shape),))

    assert f(jnp.ones((2, 3))).shape == (6,)
    assert shapes == [(2, 3)] and type(shapes[0][0]) is int


def test_autodiff_introduces_concrete_tracers():
    assert float(jax.grad(divide)(3., 2.)) == 0.5
    primal, tangent = jax.jvp(divide, (3., 2.), (1., 0.))
    assert (float(primal), float(tangent)) == (1.5, 0.5)
    # Values computed from concrete tracers stay concrete; int()/astype/bool work on them.
    assert float(jax.grad(lambda x: x * int(x * 2.))(3.)) == 6.0
    assert float(jax.grad(lambda x: x.astype(float) if bool(x + 1. > 0) else -x)(3.)) == 1.0


@pytest.mark.parametrize("transform", [
    jax.jit,
    jax.make_jaxpr,
    jax.vmap,
    jax.pmap,
    lambda f: jax.jit(jax.grad(f)),     # autodiff inside an outer abstract transformation
    lambda f: jax.vmap(jax.grad(f)),
], ids=["jit", "make_jaxpr", "vmap", "pmap", "jit-of-grad", "vmap-of-grad"])
def test_other_transformations_introduce_abstract_tracers(transform):
    with pytest.raises(errors.TracerBoolConversionError,
                       match="`bool` function.*`lax.cond`.*`lax.fori_loop`"):
        transform(lambda x: divide(x, x))(jnp.full((1,), 2.))


def test_static_arguments_stay_regular_values():
    assert float(jax.jit(divide, static_argnums=1)(3., 2.)) == 1.5
    out = jax.pmap(divide, in_axes=(0, None), static_broadcasted_argnums=1)(jnp.ones(1), 2.)
    np.testing.assert_allclose(out, [0.5])


@pytest.mark.parametrize("run", [
    lambda: lax.cond(True, lambda x: x if x > 0 else -x, lambda x: x, 1.),
    lambda: lax.while_loop(lambda c: c < 3 if c < 10 else False, lambda c: c + 1, 0),
    lambda: lax.fori_loop(0, 3, lambda i, c: c + (1 if i > 0 else 0), 0),
    lambda: lax.scan(lambda c, x: (c + x if x > 0 else c, None), 0., jnp.ones(3)),
    lambda: jax.grad(lambda x: lax.cond(True, lambda: x if x > 0 else -x, lambda: x))(2.),
], ids=["cond", "while_loop", "fori_loop", "scan", "cond-under-grad"])
def test_control_flow_bodies_see_abstract_tracers_even_without_a_transformation(run):
    with pytest.raises(errors.ConcretizationTypeError):
        run()


@pytest.mark.parametrize("convert", [int, float, complex])
def test_int_float_complex_of_an_abstract_tracer(convert):
    name = convert.__name__
    with pytest.raises(errors.ConcretizationTypeError,
                       match=f"problem arose with the `{name}` function.*astype"):
        jax.jit(convert)(2.)


def test_traced_loop_count_suggests_fori_loop():
    with pytest.raises(errors.TracerIntegerConversionError, match="lax.fori_loop") as info:
        jax.jit(lambda n: sum(range(n)))(3)
    assert isinstance(info.value, TypeError)
    assert "depends on the value of the argument n." in str(info.value)
    assert int(lax.fori_loop(0, 3, lambda i, c: c + i, 0)) == 3


def test_numpy_functions_cannot_take_tracers_but_jnp_can():
    with pytest.raises(errors.TracerArrayConversionError, match="use `jax.numpy`"):
        jax.jit(lambda x: np.sin(x))(2.)
    # a NumPy ufunc itself cannot be weakly referenced: JAX 0.10.2 refuses to jit it
    with pytest.raises(TypeError, match="cannot create weak reference to 'numpy.ufunc'"):
        jax.jit(np.sin)(2.)
    np.testing.assert_allclose(jax.jit(jnp.sin)(2.), np.sin(2.), rtol=1e-6)


# --- tracer leaks -----------------------------------------------------------------------

_leaked = []


def _store_and_double(x):
    y = jnp.sin(x)
    _leaked.append(y)
    return x * 2


@pytest.fixture
def leaked():
    _leaked.clear()
    yield _leaked
    _leaked.clear()


@pytest.mark.parametrize("use", [
    lambda t: t + 1,
    lambda t: jnp.sin(t),
    lambda t: jax.jit(lambda y: y + t)(1.),
    lambda t: jax.grad(lambda y: y * t)(1.),
    lambda t: jax.vmap(lambda y: y * t)(jnp.ones(2)),
], ids=["eager-op", "jnp", "closed-over-by-jit", "grad", "vmap"])
def test_using_a_leaked_tracer_later_is_an_unexpected_tracer_error(leaked, use):
    jax.jit(lambda x: _store_and_double(x))(1.)   # a new function: traced (and leaks) anew
    with pytest.raises(errors.UnexpectedTracerError) as info:
        use(leaked[0])
    message = str(info.value)
    assert "has already ended" in message
    assert "_store_and_double" in message and "sin" in message   # where it was created
    assert "checking_leaks" in message


@pytest.mark.parametrize("transform", [jax.jit, jax.make_jaxpr, jax.vmap])
def test_checking_leaks_reports_an_unused_leak_when_the_trace_ends(leaked, transform):
    with jax.checking_leaks():
        with pytest.raises(errors.UnexpectedTracerError, match="Leaked trace") as info:
            transform(_store_and_double)(jnp.ones(2))
    message = str(info.value)
    assert "outlived it" in message and f"{__name__}._leaked" in message
    # Without the check the leak goes unnoticed until the tracer is used.
    leaked.clear()
    out = transform(_store_and_double)(jnp.ones(2))
    assert len(leaked) == 1 and out is not None


def test_checking_leaks_names_the_holder_and_origin_line(leaked):
    class Holder:
        pass

    holder = Holder()

    def f(x):
        holder.value = x + 1
        return x

    with jax.checking_leaks(), pytest.raises(errors.UnexpectedTracerError) as info:
        jax.jit(f)(1.)
    message = str(info.value)
    assert "became a tracer due to the operation" in message and "add" in message
    assert "is referred to by <Holder" in message


def test_checking_leaks_follows_a_closure_to_its_function(leaked):
    def f(x):
        y = x + 1
        leaked.append(lambda: y)
        return x

    with jax.checking_leaks(), pytest.raises(errors.UnexpectedTracerError) as info:
        jax.jit(f)(1.)
    assert "closure cell" in str(info.value) and "the function " in str(info.value)


def test_checking_leaks_accepts_pure_functions():
    with jax.checking_leaks():
        assert float(jax.jit(lambda x: x * 2)(1.)) == 2.0
        assert float(jax.grad(lambda x: jax.jit(jnp.sin)(x) * 2)(0.)) == 2.0
        np.testing.assert_array_equal(jax.vmap(lambda x: x * 2)(jnp.ones(2)), [2., 2.])
        carry, ys = lax.scan(lambda c, x: (c + x, c), 0., jnp.ones(3))
        assert float(carry) == 3.0 and ys.tolist() == [0., 1., 2.]
        assert float(lax.cond(True, jnp.sin, jnp.cos, 0.)) == 0.0
        assert str(jax.make_jaxpr(partial(jnp.add, 1.))(1.)).startswith("{ lambda")
    gc.collect()
