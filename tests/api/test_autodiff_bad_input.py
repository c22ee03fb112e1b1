"""Bad input to autodiff (grad, vjp, jvp, jacfwd/jacrev, linear_transpose, custom_jvp and
custom_vjp rules, checkpoint), table-driven: each case raises a named exception whose
message names the problem, never an internal error (see harness.assert_named_error)."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import assert_named_error, bad_input_case as case
from pyjax import lax

x = jnp.ones((2, 3))
xi = jnp.arange(6).reshape(2, 3)


def bad_custom_vjp(bwd):
    f = jax.custom_vjp(lambda a: a)
    f.defvjp(lambda a: (a, None), bwd)
    return jax.grad(f)(1.0)


def bad_custom_jvp(rule):
    f = jax.custom_jvp(lambda a: a)
    f.defjvp(rule)
    return jax.jvp(f, (1.0,), (1.0,))


def pair_rule_custom_jvp():
    f = jax.custom_jvp(lambda a: a)
    f.defjvp(lambda p, t: ((p[0], p[0]), (t[0], t[0])))
    return f


def two_output_custom_jvp():
    f = jax.custom_jvp(lambda a, b: (a, b))
    f.defjvp(lambda p, t: (p, (jnp.ones(2), jnp.ones(3))))
    return f


def wide_fwd_custom_vjp():
    f = jax.custom_vjp(lambda a: a)
    f.defvjp(lambda a: (jnp.zeros(3), None), lambda r, c: (c,))
    return f


CASES = [
    case("grad_non_scalar", TypeError, "scalar-output", lambda: jax.grad(lambda a: a)(x)),
    case("grad_complex_output", TypeError, "real-valued outputs",
         lambda: jax.grad(lambda a: a * 1j)(1.0)),
    case("grad_int_input", TypeError, "real- or complex-valued inputs",
         lambda: jax.grad(lambda a: a * 1.0)(1)),
    case("grad_int_output", TypeError, "real-valued outputs",
         lambda: jax.grad(lambda a: (a > 0).astype(jnp.int32))(1.0)),
    case("grad_bool_output", TypeError, "real-valued outputs",
         lambda: jax.grad(lambda a: a > 0)(1.0)),
    case("grad_argnums_out_of_range", TypeError, "argnums=3",
         lambda: jax.grad(lambda a: a, argnums=3)(1.0)),
    case("grad_argnums_string", TypeError, "argnums must be an integer",
         lambda: jax.grad(lambda a: a, argnums="a")(1.0)),
    case("grad_argnums_repeated", ValueError, "duplicates",
         lambda: jax.grad(lambda a, b: a + b, argnums=(0, 0))(1.0, 2.0)),
    case("grad_string_argument", TypeError,   # JAX 0.10.2's words
         "^Argument 'a' of type <class 'str'> is not a valid JAX type",
         lambda: jax.grad(lambda a: 1.0)("a")),
    case("grad_returns_string", TypeError, "not a valid JAX type",
         lambda: jax.grad(lambda a: "a")(1.0)),
    case("grad_returns_tuple", TypeError, "scalar-output", lambda: jax.grad(lambda a: (a, a))(1.0)),
    case("grad_has_aux_not_pair", TypeError, "two-element tuple",
         lambda: jax.grad(lambda a: a, has_aux=True)(1.0)),
    case("grad_not_callable", TypeError, "callable", lambda: jax.grad(5)),
    case("grad_of_while_loop", ValueError, "Reverse-mode differentiation does not work",
         lambda: jax.grad(lambda a: lax.while_loop(lambda c: c < 3, lambda c: c + a, 0.0))(1.0)),
    # JAX 0.10.2's words for each
    case("vjp_cotangent_shape", ValueError, r"unexpected JAX type .*got float32\[3\], but "
         r"expected float32\[2,3\]",
         lambda: jax.vjp(lambda a: a * 2, x)[1](jnp.ones(3))),
    case("vjp_pullback_two_arguments", TypeError,
         "applied to <lambda> was called with 2 arguments",
         lambda: jax.vjp(lambda a: a * 2, x)[1](x, x)),
    case("vjp_cotangent_tree", ValueError, "unexpected tree structure",
         lambda: jax.vjp(lambda a: a * 2, x)[1]((x, x))),
    case("vjp_cotangent_dtype", ValueError, "unexpected JAX type",
         lambda: jax.vjp(lambda a: a * 2, x)[1](xi)),
    case("jvp_tangent_shape", ValueError, "different primal and tangent shapes",
         lambda: jax.jvp(lambda a: a, (x,), (jnp.ones(3),))),
    case("jvp_tangent_dtype", TypeError, "dtypes must be equal",
         lambda: jax.jvp(lambda a: a, (x,), (xi,))),
    case("jvp_tuple_primals_list_tangents", TypeError, "same tree structure",   # JAX 0.10.2
         lambda: jax.jvp(lambda a, b: a * b, (x,), [x])),
    case("linearized_tangent_shape", ValueError,
         r"linearized function called on tangent values inconsistent with the original "
         r"primal values: got tangent aval float32\[3,2\] for primal aval int32\[3\] but "
         r"expected float0\[3\]",
         lambda: jax.linearize(jnp.sum, jnp.arange(3))[1](jnp.ones((3, 2)))),
    case("jvp_tangent_tree", TypeError, "same tree structure",
         lambda: jax.jvp(lambda a: a, (x,), (x, x))),
    case("jvp_primals_not_tuple", TypeError, "tuples or lists",
         lambda: jax.jvp(lambda a: a, x, x)),
    case("jacfwd_int", TypeError, "real-valued inputs", lambda: jax.jacfwd(lambda a: a)(1)),
    case("jacrev_int", TypeError, "real- or complex-valued", lambda: jax.jacrev(lambda a: a)(1)),
    case("linear_transpose_nonlinear", ValueError, "not linear",
         lambda: jax.linear_transpose(lambda a: a * a, 1.0)(1.0)),
    case("custom_jvp_rule_not_pair", TypeError, "must produce a pair",
         lambda: bad_custom_jvp(lambda p, t: (p[0], t[0], 1))),
    case("custom_jvp_tangent_shape", TypeError, "corresponding shapes and dtypes",
         lambda: bad_custom_jvp(lambda p, t: (p[0], jnp.ones(3)))),
    case("custom_jvp_primal_structure", TypeError, "the JVP rule output's first element "
         "had container/pytree structure:\n    \\(float32\\[\\], float32\\[\\]\\)\nwhile the "
         "custom_jvp-decorated function <lambda> had output container/pytree structure",
         lambda: jax.jvp(jax.jit(pair_rule_custom_jvp()), (1.0,), (1.0,))),
    case("custom_jvp_tangent_shapes", TypeError, "corresponding shapes and dtypes, but got:\n"
         "  primal float32\\[\\] with tangent float32\\[2\\], expecting tangent float32",
         lambda: jax.jvp(two_output_custom_jvp(), (1.0, 2.0), (1.0, 1.0))),
    case("custom_vjp_fwd_primal_shape", TypeError, "the fwd rule output's first element had "
         "shapes/dtypes of:\n    float32\\[3\\]\nwhile the custom_vjp-decorated function",
         lambda: jax.grad(jax.jit(wide_fwd_custom_vjp()))(1.0)),
    case("custom_vjp_bwd_too_long", TypeError, "one entry per differentiable argument",
         lambda: bad_custom_vjp(lambda r, g: (g, g))),
    case("custom_vjp_bwd_shape", ValueError, "so the shapes do not match",
         lambda: bad_custom_vjp(lambda r, g: (jnp.ones(3),))),
    case("custom_vjp_bwd_not_tuple", TypeError, "must produce a tuple",
         lambda: bad_custom_vjp(lambda r, g: g)),
    case("checkpoint_bad_policy", TypeError, "policy",
         lambda: jax.checkpoint(lambda a: a, policy=5)(1.0)),
    case("checkpoint_static_argnums", ValueError, "static_argnums",
         lambda: jax.checkpoint(lambda a: a, static_argnums=5)(1.0)),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)
