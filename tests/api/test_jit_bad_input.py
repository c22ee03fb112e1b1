"""Bad input to jit and tracing (static and donated arguments, arguments and results that
are not JAX types, traced values where static ones are needed, leaked tracers, deleted and
donated buffers, make_jaxpr, eval_shape), table-driven: each case raises a named exception
whose message names the problem, never an internal error (see harness.assert_named_error)."""
import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import assert_named_error, bad_input_case as case
from pyjax import errors

x = jnp.ones((2, 3))


def quiet(f):
    """Runs f with jit's `device`/`backend` deprecation warning silenced."""
    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return f()
    return run


def _positional_only(a, /, b, c, *args, **kwargs):
    return a


def _generator(a):
    yield a


def _adds_zero(x, y):
    return x + 0


def _returns_itself(a):
    return (2.0, _returns_itself)


class _NoSignature:
    @property
    def __signature__(self):
        raise TypeError("no signature")

    def __call__(self, *args):
        return None


CASES = [
    case("static_argnums_out_of_range", ValueError, r"static_argnums=\(3,\)",
         lambda: jax.jit(lambda a: a, static_argnums=(3,))(1)),
    case("static_argnums_string", TypeError, "static_argnums must be an int",
         lambda: jax.jit(lambda a: a, static_argnums="a")),
    case("static_argnums_float", TypeError, "static_argnums must be an int",
         lambda: jax.jit(lambda a: a, static_argnums=1.5)),
    case("static_argnames_unknown", ValueError, r"invalid argnames \['b'\]",
         lambda: jax.jit(lambda a: a, static_argnames="b")),
    # JAX 0.10.2 refuses names that cannot be passed by keyword, **kwargs or not, and
    # donate_argnames for a callable whose signature Python cannot read
    case("static_argnames_positional_only", ValueError, r"\['a'\].*positional-only",
         lambda: jax.jit(_positional_only, static_argnames=("a", "c"))),
    case("donate_argnames_var_positional", ValueError, r"\['args'\].*positional-only",
         lambda: jax.jit(_positional_only, donate_argnames=("args", "c"))),
    case("donate_argnames_without_signature", ValueError,
         "signature of function .* failed. Pass donate_argnums",
         lambda: jax.jit(_NoSignature(), donate_argnames="a")),
    case("donate_argnums_out_of_range", ValueError, r"donate_argnums=\(3,\)",
         lambda: jax.jit(lambda a: a, donate_argnums=(3,))),
    case("donate_argnames_unknown", ValueError, "donate_argnames",
         lambda: jax.jit(lambda a: a, donate_argnames="b")),
    # a Python int out of int32's range, named by its path (JAX 0.10.2's words), before
    # and after the function has a trace
    case("int_argument_overflows", OverflowError,
         r"^An overflow was encountered while parsing an argument to a jitted computation, "
         r"whose argument path is y\['a'\]\[0\]. Got <class 'int'> with value "
         r"1099511627776",
         lambda: jax.jit(_adds_zero)(1, {"a": [2 ** 40]})),
    case("int_argument_overflows_after_a_trace", OverflowError,
         r"whose argument path is x. Got <class 'int'> with value -2147483649",
         lambda: (jax.jit(_adds_zero)(1, 2), jax.jit(_adds_zero)(-2 ** 31 - 1, 2))),
    case("static_and_donated", ValueError,   # JAX 0.10.2's words
         "static_argnames and donate_argnames cannot intersect. Argument names {'a'} "
         "appear in both",
         lambda: jax.jit(lambda a: a, static_argnums=0, donate_argnums=0)),
    case("unhashable_static_list", ValueError, "Non-hashable static arguments",
         lambda: jax.jit(lambda a, b: a, static_argnums=1)(x, [1, 2])),
    case("unhashable_static_ndarray", ValueError, "Non-hashable static arguments",
         lambda: jax.jit(lambda a, b: a, static_argnums=1)(x, np.ones(2))),
    case("jit_string_argument", TypeError, "not a valid JAX type",
         lambda: jax.jit(lambda a: a)("abc")),
    case("jit_object_argument", TypeError, "not a valid JAX type",
         lambda: jax.jit(lambda a: a)(object())),
    case("jit_returns_string", TypeError, "returned a value of type <class 'str'>",
         lambda: jax.jit(lambda a: "abc")(x)),
    case("jit_returns_object", TypeError, "not a valid JAX type",
         lambda: jax.jit(lambda a: object())(x)),
    case("jit_returns_function", TypeError, "not a valid JAX type",
         lambda: jax.jit(lambda a: (lambda: 1))(x)),
    # JAX 0.10.2's words
    case("eval_shape_returns_function", TypeError,
         r"^function _returns_itself at .* traced for jit returned a value of type "
         r"<class 'function'> at output component \[1\], which is not a valid JAX type",
         lambda: jax.eval_shape(_returns_itself, 1)),
    case("jit_not_callable", TypeError, "Expected a callable value, got 5",
         lambda: jax.jit(5)),
    # JAX 0.10.2's words, as its api_test checks them
    case("jit_generator_function", TypeError, "Expected a function, got a generator",
         lambda: jax.jit(_generator)),
    case("jit_staticmethod", TypeError, "staticmethod arguments are not supported",
         lambda: jax.jit(staticmethod(lambda a: a))),
    case("jit_classmethod", TypeError, "Expected a callable value",
         lambda: jax.jit(classmethod(lambda cls, a: a))),
    # JAX 0.10.2's messages for ShapeDtypeStructs where values are needed
    case("jit_shape_dtype_struct_argument", TypeError,
         r"Argument 'x\['b'\]\['c'\]' of shape int32\[4,2\] of type .*ShapeDtypeStruct.* "
         "is not a valid JAX type.",
         lambda: jax.jit(lambda x: x)({"a": 1, "b": {"c": jax.ShapeDtypeStruct((4, 2),
                                                                            np.int32)}})),
    case("jit_returns_shape_dtype_struct", TypeError,
         "A ShapeDtypeStruct does not have a value and cannot be used as a constant",
         lambda: jax.jit(lambda a: (a, jax.ShapeDtypeStruct((8,), jnp.int32)))(x)),
    case("jit_string_in_a_tree", TypeError, r"at path x\['b'\]: 'abc'",
         lambda: jax.jit(lambda x: x)({"a": 1, "b": "abc"})),
    # JAX 0.10.2: "Function compiled with input pytree does not match ... There are 1
    # mismatches, including:\n    * at args[0], seen <class 'dict'> with 1 child but now
    # given <class 'dict'> with 2 children, so the numbers of children do not match, with
    # the symmetric difference of key sets: {'c'}"
    case("compiled_other_tree", TypeError,
         r"There are 1 mismatches, including:\n    \* at args\[0\], seen <class 'dict'> "
         "with 1 child but now given <class 'dict'> with 2 children, so the numbers of "
         "children do not match, with the symmetric difference of key sets: {'c'}",
         lambda: jax.jit(lambda t: t).lower({"a": {"c": 5, "d": 6}}).compile()(
             {"a": 1, "c": {"b": 5, "e": 7}})),
    case("compiled_other_leaf_type", TypeError,
         r"The mismatches are:\nArgument 'tree\['a'\]\['d'\]' compiled with int32\[\] "
         r"and called with float32\[\]",
         lambda: jax.jit(lambda tree: tree).lower({"a": {"c": 5, "d": 6}}).compile()(
             {"a": {"c": 5, "d": 6.0}})),
    case("out_shardings_not_a_prefix", ValueError,
         r"Mismatch details \(2 found\):\n  pytree structure error: different types at key "
         r"path\n    jit out_shardings\['a'\]",
         lambda: jax.jit(lambda t: t, out_shardings={"a": [None, None], "b": (None, None)})(
             {"a": x, "b": x})),
    case("jit_wrong_arity", TypeError, "positional argument", lambda: jax.jit(lambda a: a)(x, x)),
    case("jit_bad_device", TypeError, "jit device must be a Device",
         quiet(lambda: jax.jit(lambda a: a, device="cpu"))),
    case("jit_unknown_backend", RuntimeError, "Unknown backend foo. Available backends are",
         quiet(lambda: jax.jit(lambda a: a, backend="foo"))),
    # JAX 0.10.2: TypeError "Shapes must be 1D sequences of concrete values of integer type"
    case("traced_value_as_shape", TypeError, "Shapes must be 1D sequences of concrete",
         lambda: jax.jit(lambda n: jnp.zeros(n))(3)),
    case("traced_value_in_shape", TypeError, "If using `jit`, try using `static_argnums`",
         lambda: jax.jit(lambda n: jnp.zeros((n, 2)))(3)),
    case("traced_array_as_shape", TypeError, "Shapes must be 1D sequences of concrete",
         lambda: jax.jit(lambda s: jnp.zeros(s))(jnp.array([2, 3]))),
    case("traced_reshape", errors.ConcretizationTypeError, "new shape must be static",
         lambda: jax.jit(lambda a, n: a.reshape(n, -1))(x, 2)),
    case("traced_arange", errors.ConcretizationTypeError, "jnp.arange",
         lambda: jax.jit(lambda n: jnp.arange(n))(3)),
    # JAX 0.10.2's words
    case("traced_bool", errors.TracerBoolConversionError,
         r"^Attempted boolean conversion of traced array with shape bool\[\]\.\n",
         lambda: jax.jit(lambda a: 1 if a.sum() > 0 else 2)(x)),
    case("traced_int", errors.ConcretizationTypeError,
         r"^Abstract tracer value encountered where concrete value is expected: traced "
         r"array with shape float32\[\]\nThe problem arose with the `int` function\. If "
         r"trying to convert the data type of a value, try using `x\.astype\(int\)` or "
         r"`jnp\.array\(x, int\)` instead\.",
         lambda: jax.jit(lambda a: int(a.sum()))(x)),
    # a traced array's shape is checked before its value is asked for (JAX 0.10.2's words)
    case("traced_int_of_vector", TypeError,
         r"^Only scalar arrays can be converted to Python scalars; got arr\.ndim=1\n",
         lambda: jax.jit(lambda a: float(a))(jnp.ones(3))),
    case("traced_index_of_float", TypeError,
         r"^Only integer scalar arrays can be converted to a scalar index\.",
         lambda: jax.jit(lambda a: hex(a))(jnp.float32(1))),
    case("traced_bool_of_empty", ValueError, r"^The truth value of an empty array is ambiguous",
         lambda: jax.jit(lambda a: bool(a))(jnp.ones(0))),
    case("index_of_bool", TypeError, "Only integer scalar arrays",
         lambda: [1, 2][jnp.bool_(True)]),
    case("traced_to_numpy", errors.TracerArrayConversionError, "__array__",
         lambda: jax.jit(lambda a: np.asarray(a))(x)),
    case("traced_range", errors.TracerIntegerConversionError, "__index__",
         lambda: jax.jit(lambda n: list(range(n)))(3)),
    case("leaked_jit_tracer", errors.UnexpectedTracerError, "unexpected tracer",
         lambda: (lambda kept: (jax.jit(lambda a: kept.append(a) or a)(x), kept[0] + 1))([])),
    # JAX 0.10.2's words: "... disallow saving intermediate values to global state",
    # and a leaked tracer passed to a jitted function at top level is the same error
    case("leaked_jit_tracer_global_state", errors.UnexpectedTracerError, "global state",
         lambda: (lambda kept: (jax.jit(lambda a: kept.append(a) or a)(x), kept[0] + 1))([])),
    case("leaked_tracer_to_jit", errors.UnexpectedTracerError, "was created on line",
         lambda: (lambda kept: (jax.jit(lambda a: kept.append(a * 2) or a)(x),
                                jax.jit(lambda a: a)(kept[0])))([])),
    case("leaked_vmap_tracer", errors.UnexpectedTracerError, "unexpected tracer",
         lambda: (lambda kept: (jax.vmap(lambda a: kept.append(a) or a)(x), kept[0] + 1))([])),
    case("use_after_delete", RuntimeError, "deleted",
         lambda: (lambda a: (a.delete(), a + 1))(jnp.ones(3))),
    case("use_after_donation", RuntimeError, "donated",
         lambda: (lambda a: (jax.jit(lambda b: b + 1, donate_argnums=0)(a), a + 1))(
             jnp.ones(3))),
    case("make_jaxpr_static_argnums", ValueError, "out of range",
         lambda: jax.make_jaxpr(lambda a: a, static_argnums=5)(1.0)),
    case("eval_shape_not_callable", TypeError, "callable", lambda: jax.eval_shape(5)),
    case("eval_shape_string", TypeError, "not a valid JAX type",
         lambda: jax.eval_shape(lambda a: a, "abc")),
    # JAX: "Cannot apply JAX transformations to a function lowered and compiled for a
    # particular signature. Detected argument of Tracer type <class '...BatchTracer'>."
    case("compiled_under_vmap", TypeError,
         "Cannot apply JAX transformations to a function lowered and compiled .*BatchTracer",
         lambda: jax.vmap(jax.jit(lambda a: a + 4).lower(1.0).compile())(jnp.ones(3))),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)


def test_traced_shape_says_where_the_value_came_from():
    # JAX's words: the tracer's origin follows the shape error
    with pytest.raises(TypeError, match=r"(?s)Shapes must be 1D sequences.*This concrete "
                       "value was not available in Python because it depends on the value "
                       "of the argument n\\."):
        jax.jit(lambda n: jnp.zeros(shape=(2, n)))(1)
    with pytest.raises(TypeError, match="(?s)Shapes must be 1D sequences.*This BatchTracer "
                                        "with object id"):
        jax.vmap(lambda n: jnp.zeros(shape=(2, n)))(jnp.ones((1,)))


def test_a_traced_value_has_no_sharding_attribute():
    # JAX's AttributeError (hasattr stays False), under jit, vmap and grad alike
    seen = []

    def f(a):
        with pytest.raises(AttributeError, match=(
                r"The 'sharding' attribute is not available on traced array with shape "
                r"float32\[2\]. To query sharding information on tracers, use "
                r"`jax.typeof\(x\)`.")):
            _ = a.sharding
        seen.append(hasattr(a, "sharding"))
        return a
    jax.jit(f)(jnp.arange(2.0))
    jax.vmap(f)(jnp.ones((3, 2)))
    jax.grad(lambda a: f(a).sum())(jnp.arange(2.0))
    assert seen == [False, False, False]
