"""jax.debug.print and jax.debug.callback in JAX 0.10.2's two-call form, and the format
checks JAX makes when print is called (unused arguments, f-strings by mistake), with
NumPy's print options taken at the call."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


def test_two_call_print_and_callback(capsys):
    seen = []

    def f(x):
        jax.debug.print(ordered=True)("x: {x}", x=x)
        jax.debug.callback(ordered=True)(seen.append, x)
    f(42)
    jax.effects_barrier()
    assert capsys.readouterr().out == "x: 42\n"
    assert seen == [42]


@pytest.mark.parametrize("call", [
    lambda: jax.debug.print(ordered=True, a=42),
    lambda: jax.debug.print(None, 42, ordered=True),
    lambda: jax.debug.callback(ordered=True, a=42),
])
def test_arguments_with_the_options_of_the_two_call_form_raise(call):
    with pytest.raises(TypeError, match="received unexpected arguments in the two-call form"):
        call()


@pytest.mark.parametrize("args, kwargs, message", [
    (("hello: {x}",), dict(x=1, y=2), "Unused keyword arguments"),
    (("hello", 1), {}, "Unused positional arguments"),
    (("hello: 3",), dict(x=3), "You may be passing an f-string"),
    (("hello {a}",), dict(a=1, partitioned=True), r"Unused keyword arguments .*'partitioned'"),
])
def test_unused_format_arguments_raise_when_print_is_called(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        jax.jit(lambda: jax.debug.print(ordered=True)(*args, **kwargs))()


def test_print_uses_numpy_print_options_of_the_call(capsys):
    with np.printoptions(precision=2, suppress=True):
        jax.jit(lambda x: jax.debug.print("{}", x))(jnp.array([1.2345, 1e-7]))
        jax.effects_barrier()
    assert capsys.readouterr().out == "[1.23 0.  ]\n"


def test_values_that_are_not_arrays_are_printed_as_they_are(capsys):
    # JAX passes leaves that are no JAX values (a dtype, a string) to the callback as is.
    @jax.jit
    def f(arr):
        jax.debug.print("arr {array}, dtype: {dtype}, arr {array2} {s}",
                        array=arr, dtype=arr.dtype, array2=arr, s="text")
    f(jnp.array([1, 2, 3], dtype=jnp.float32))
    jax.vmap(lambda x: jax.debug.print("{} {}", x, "lane"))(jnp.arange(2))
    jax.effects_barrier()
    assert capsys.readouterr().out == ("arr [1. 2. 3.], dtype: float32, arr [1. 2. 3.] text\n"
                                       "0 lane\n1 lane\n")


def test_print_formats_scalars_as_jax_does(capsys):
    # JAX 0.10.2 (its debugging.md page): a float32 0-d value formats through its NumPy
    # scalar, whose '{}' is the full float repr; arrays format as str() of the array
    jax.jit(lambda x: jax.debug.print("y -> {y}", y=jnp.sin(x)))(2.)
    jax.debug.print("{} {:.3f} {}", jnp.sin(2.), jnp.sin(2.), jnp.arange(3.) / 3)
    jax.effects_barrier()
    assert capsys.readouterr().out == (
        "y -> 0.9092974066734314\n"
        "0.9092974066734314 0.909 [0.         0.33333334 0.6666667 ]\n")
    assert f"{jnp.float16(0.1)}|{jnp.int32(3):>3}|{jnp.bfloat16(1.5)}" == \
        "0.0999755859375|  3|1.5"
