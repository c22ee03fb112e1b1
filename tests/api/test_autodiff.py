"""Autodiff API behaviour: jvp, linearize, vjp, grad/value_and_grad (argnums, has_aux,
holomorphic, allow_int), Jacobians, custom_jvp/custom_vjp, checkpoint, stop_gradient,
the FAQ examples (concrete tracers under grad, NaN through where), an MLP against
hand-written NumPy backprop, and jit(grad(f)) against grad(jit(f))."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import errors
from pyjax._src.api.custom_derivatives import CustomJVPException, CustomVJPException
from pyjax.test_util import check_grads

from harness import close


# --- the FAQ ----------------------------------------------------------------------------

def divide(x, y):
    return x / y if y >= 1. else 0.


def test_faq_grad_uses_concrete_tracers():
    close(jax.grad(divide)(3., 2.), 0.5)
    close(jax.grad(divide, argnums=1)(3., 2.), -0.75)
    close(jax.grad(divide)(3., 0.5), 0.)


def test_faq_jit_needs_concrete_values():
    with pytest.raises(errors.ConcretizationTypeError):
        jax.jit(divide)(3., 2.)
    with pytest.raises(errors.ConcretizationTypeError):
        jax.jit(jax.grad(divide))(3., 2.)
    close(jax.jit(divide, static_argnums=1)(3., 2.), 1.5)


def test_faq_where_gives_nan_gradient_and_double_where_fixes_it():
    def my_log(x):
        return jnp.where(x > 0., jnp.log(x), 0.)

    def safe_for_grad_log(x):
        return jnp.log(jnp.where(x > 0., x, 1.))

    assert float(my_log(0.)) == 0.
    assert np.isnan(jax.grad(my_log)(0.))
    assert float(safe_for_grad_log(0.)) == 0.
    assert float(jax.grad(safe_for_grad_log)(0.)) == 0.

    def my_log_or_y(x, y):
        return jnp.where(x > 0., jnp.log(jnp.where(x > 0., x, 1.)), y)
    assert float(jax.grad(my_log_or_y)(0., 2.)) == 0.
    assert float(jax.grad(my_log_or_y, argnums=1)(0., 2.)) == 1.


def test_faq_gradient_of_step_function_is_zero():
    def f(x):
        return (x > 0).astype(float)
    x = jnp.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    np.testing.assert_array_equal(jax.vmap(jax.grad(f))(x), np.zeros(5))


def test_faq_sigmoid_gradient_values():
    x = jnp.array([-10.0, -1.0, 0.0, 1.0, 10.0])
    dg = jax.vmap(jax.grad(jax.nn.sigmoid))(x)
    np.testing.assert_allclose(np.round(np.asarray(jax.nn.sigmoid(x)), 2),
                               [0., 0.27, 0.5, 0.73, 1.])
    np.testing.assert_allclose(np.round(np.asarray(dg), 2), [0., 0.2, 0.25, 0.2, 0.])


# --- grad and value_and_grad ---------------------------------------------------------------

def test_grad_of_scalar_functions():
    close(jax.grad(jnp.sin)(1.), np.cos(1.))
    close(jax.grad(jax.grad(jnp.sin))(1.), -np.sin(1.))
    close(jax.grad(jax.grad(jax.grad(jnp.sin)))(1.), -np.cos(1.))
    close(jax.grad(lambda x: x ** 3)(2.), 12.)


def test_grad_keeps_weak_types_of_python_scalars():
    g = jax.grad(lambda x: x ** 2)(3.)
    assert g.weak_type and g.dtype == np.float32
    g = jax.grad(lambda x: x ** 2)(jnp.float32(3.))
    assert not g.weak_type


def test_jacobians_of_weakly_typed_inputs_are_weakly_typed():
    # JAX 0.10.2 casts each jacrev block to its input's type (weak type included)
    for jac in (jax.jacrev, jax.jacfwd, jax.grad):
        assert jac(lambda x: x)(1.0).weak_type, jac.__name__
    assert jax.jacrev(lambda x: jnp.float32(3.) * x)(2.).weak_type   # a strong output
    assert not jax.jacrev(lambda x: x)(jnp.float32(1.0)).weak_type
    both = jax.jacrev(lambda x: (x, x))(2.)
    assert [b.weak_type for b in both] == [True, True]
    assert not jax.jacrev(lambda x: x)(jnp.ones(2)).weak_type


def test_gradient_weak_types_come_from_the_rules_as_in_jax():
    # The weak type of a gradient is what the backward pass computes, as JAX's is: the
    # rules' constants for a weakly typed scalar are weak, and real's and imag's
    # transposes build their complex cotangents with strong zeros (JAX 0.10.2 gives
    # Array(6.-8.j, dtype=complex64) here, not weakly typed).
    g = jax.grad(lambda z: jnp.real(z) ** 2 + jnp.imag(z) ** 2)(3. + 4j)
    assert complex(g) == 6 - 8j and g.dtype == np.complex64 and not g.weak_type
    weak = {"x**2": lambda x: x ** 2, "x**3": lambda x: x ** 3, "sin": jnp.sin,
            "cond": lambda x: lax.cond(x > 0, lambda y: y * 2, lambda y: y, x),
            "maximum": lambda x: jnp.maximum(x, 0.5)}
    for name, f in weak.items():
        assert jax.grad(f)(3.).weak_type, name               # as JAX 0.10.2
    assert not jax.vjp(lambda x: x * 2, 3.0)[1](jnp.float32(1.0))[0].weak_type
    # JAX's jvp of x ** 2 is 2 * x, with no x ** 1; a constant's zero tangent adds
    # nothing (no dead zeros in the jaxpr: JAX's Custom derivative rules page)
    eqns = jax.make_jaxpr(jax.grad(lambda x: jnp.log(1. + jnp.exp(x))))(100.).eqns
    assert [e.primitive.name for e in eqns] == ["exp", "add", "log", "div", "mul"]
    t = jax.jvp(lambda x: jnp.ones(3) - x, (1.,), (1.,))[1]
    np.testing.assert_array_equal(t, [-1., -1., -1.])
    eqns = jax.make_jaxpr(jax.grad(lambda x: x ** 2))(3.0).eqns
    assert [e.primitive.name for e in eqns] == ["integer_pow", "mul", "mul"]


def test_grad_argnums_and_pytrees():
    f = lambda x, y, z: x * y + jnp.sum(z["w"] ** 2)   # noqa: E731
    z = {"w": jnp.arange(3.)}
    gx, gz = jax.grad(f, argnums=(0, 2))(2., 3., z)
    close(gx, 3.)
    close(gz["w"], [0., 2., 4.])
    close(jax.grad(f, argnums=-2)(2., 3., z), 2.)
    close(jax.grad(lambda p: p[0] * p[1]["b"])((1., {"b": 2.}))[1]["b"], 1.)


def test_value_and_grad_and_has_aux():
    value, g = jax.value_and_grad(lambda x: jnp.sum(x ** 2))(jnp.arange(3.))
    close(value, 5.)
    close(g, [0., 2., 4.])
    (value, aux), g = jax.value_and_grad(lambda x: (x ** 2, {"x": x}), has_aux=True)(3.)
    close(value, 9.)
    close(aux["x"], 3.)
    close(g, 6.)
    g, aux = jax.grad(lambda x: (x ** 2, x * 10), has_aux=True)(3.)
    close(g, 6.)
    close(aux, 30.)
    with pytest.raises(TypeError, match="two-element tuple"):
        jax.grad(lambda x: x ** 2, has_aux=True)(3.)


def test_grad_errors_match_jax():
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions. "
                                        r"Output had shape: \(3,\)"):
        jax.grad(lambda x: x * 2)(jnp.ones(3))
    with pytest.raises(TypeError, match="grad requires real-valued outputs .* got int32"):
        jax.grad(lambda x: (x > 0).astype(jnp.int32))(1.)
    with pytest.raises(TypeError, match="pass holomorphic=True"):
        jax.grad(lambda x: x + 0j)(1.)
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs .*"
                                        "allow_int"):
        jax.grad(lambda x: x * 1.)(1)
    with pytest.raises(TypeError, match="requires at least 3 positional arguments"):
        jax.grad(lambda x, y: x, argnums=2)(1., 2.)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex"):
        jax.grad(lambda x: x, holomorphic=True)(1.)
    with pytest.raises(TypeError, match="callable"):
        jax.grad(3)


def test_integer_inputs_get_float0_tangents():
    gx, gn = jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2., 3)
    close(gx, 3.)
    assert gn.dtype == jax.float0 and gn.shape == ()
    out, t = jax.jvp(lambda x, n: x * n, (2., 3), (1., np.zeros((), jax.float0)))
    close(t, 3.)
    _, pullback = jax.vjp(lambda n: n * 2, 3)
    assert pullback(np.zeros((), jax.float0))[0].dtype == jax.float0


def test_holomorphic_grad():
    close(jax.grad(lambda z: z ** 2, holomorphic=True)(1. + 1j), 2. + 2j)


def test_real_and_imag_transpose_with_jax_signed_zeros():
    # JAX builds imag's cotangent as complex(0, -ct): a real part of +0.0, not -0.0
    z = jnp.complex64(3. + 4j)
    g = np.asarray(jax.grad(jnp.imag)(z))
    assert g == -1j and not np.signbit(g.real)
    g = np.asarray(jax.grad(lambda z: jnp.real(z) ** 2 + jnp.imag(z) ** 2)(z))
    assert g == 6. - 8j


# --- jvp, linearize, vjp -------------------------------------------------------------------

def test_jvp_and_its_errors():
    y, t = jax.jvp(jnp.sin, (1.,), (2.,))
    close(y, np.sin(1.))
    close(t, 2 * np.cos(1.))
    with pytest.raises(TypeError, match="must be tuples or lists"):
        jax.jvp(jnp.sin, 1., 1.)
    with pytest.raises(TypeError, match="expected tangent dtype float0, but got tangent dtype "
                                        "int32"):
        jax.jvp(lambda n: n * 2, (3,), (1,))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        jax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(2),))
    with pytest.raises(TypeError, match="same tree structure"):
        jax.jvp(lambda a, b: a, (1., 2.), (1.,))


def test_jvp_has_aux():
    y, t, aux = jax.jvp(lambda x: (x ** 2, x + 1), (3.,), (1.,), has_aux=True)
    close(y, 9.)
    close(t, 6.)
    close(aux, 4.)


def test_forward_mode_keeps_python_scalar_primals_and_tangents():
    # JAX 0.10.2: what passes through unchanged stays a Python scalar, and custom rules
    # see (and may return) Python scalars
    out = jax.jvp(lambda x: x, (2.0,), (1.0,))
    assert out == (2.0, 1.0) and [type(v) for v in out] == [float, float]
    p, t = jax.jvp(lambda x, y: (x, y), (2, 1.5), (np.zeros((), jax.dtypes.float0), 1.0))
    assert p == (2, 1.5) and [type(v) for v in p] == [int, float]
    y, f_jvp = jax.linearize(lambda x: x, 2.0)
    assert type(y) is float and y == 2.0 and f_jvp(1.0) == 1.0
    y, t = jax.jvp(lambda x: x * 2, (2.0,), (1.0,))
    assert isinstance(y, jax.Array) and y.weak_type and float(t) == 2.0

    seen = []

    @jax.custom_jvp
    def h(x):
        return x

    @h.defjvp
    def h_jvp(primals, tangents):
        seen.append(type(primals[0]))
        return primals[0] * 2, tangents[0] * 3

    out = jax.jvp(h, (2.0,), (1.0,))
    assert out == (4.0, 3.0) and [type(v) for v in out] == [float, float] and seen == [float]


def test_custom_vjp_python_scalar_residuals_reach_bwd_as_given():
    seen = []

    @jax.custom_vjp
    def f(x):
        return x * 2.0

    def f_bwd(res, g):
        seen.append((res[0] is True, type(res[1])))
        return (g * 2.0,)
    f.defvjp(lambda x: (x * 2.0, (True, 3)), f_bwd)
    close(jax.grad(f)(1.0), 2.0)
    close(jax.jit(jax.grad(f))(1.0), 2.0)
    assert seen == [(True, int), (True, int)]    # JAX: bool, TypedInt (an int)


def test_linearize_evaluates_the_jvp_without_rerunning_the_function():
    calls = []

    def f(x):
        calls.append(1)
        return jnp.sin(x) * x
    y, f_jvp = jax.linearize(f, 2.)
    assert len(calls) == 1
    close(y, np.sin(2.) * 2.)
    expected = np.cos(2.) * 2. + np.sin(2.)
    close(f_jvp(1.), expected)
    close(f_jvp(3.), 3 * expected)
    close(jax.jit(f_jvp)(1.), expected)
    assert len(calls) == 1


def test_linearized_function_is_a_partial_over_its_linear_jaxpr():
    # JAX 0.10.2: f_jvp is a tree_util.Partial whose func is a functools.partial with the
    # linear jaxpr first; the residuals are its pytree leaves.
    y, f_jvp = jax.linearize(lambda x: jnp.sin(jnp.sin(x)), 1.)
    assert isinstance(f_jvp, jax.tree_util.Partial)
    text = str(f_jvp.func.args[0])
    assert text.count(" mul ") == 2 and " sin " not in text and " cos " not in text
    close(f_jvp(2.), 0.7200789)
    close(jax.jit(lambda f, t: f(t))(f_jvp, 2.), 0.7200789)
    f = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)),
                       policy=lambda prim, *_, **__: str(prim) == "cos")
    _, f_jvp = jax.linearize(f, 1.)
    text = str(f_jvp.func.args[0])
    assert " sin " not in text and " cos " not in text
    with pytest.raises(TypeError, match="inconsistent with the original primal values"):
        f_jvp(1., 2.)


def test_vjp_returns_a_vjp_of_input_saved_and_opaque_residuals():
    # JAX 0.10.2: jax.vjp's function is a VJP whose residuals that are primal inputs are
    # `args_res` (one entry per positional primal) and the others `opaque_residuals`.
    _, f_vjp = jax.vjp(jnp.sin, 3.)
    assert type(f_vjp).__name__ == "VJP"
    assert len(f_vjp.opaque_residuals) == 1
    close(f_vjp.opaque_residuals[0], -0.9899925)
    assert str(f_vjp.jaxpr) == "{ lambda a:f32[]; b:f32[]. let c:f32[] = mul b a in (c,) }"

    def f2(x, w):
        return 2. * ((1. * x) @ w)
    x, w = jnp.ones((3, 4)), jnp.ones((4, 4))
    y, f2_vjp = jax.vjp(f2, x, w)
    assert f2_vjp.args_res[1] is w and f2_vjp.opaque_residuals
    f2_vjp.args_res[1] = None     # dropped, then given back before the call
    f2_vjp.args_res[1] = w
    x_grad, w_grad = f2_vjp(jnp.ones_like(y))
    close(x_grad, np.full((3, 4), 8.))
    close(w_grad, np.full((4, 4), 6.))
    with pytest.raises(ValueError, match="unexpected JAX type"):
        f2_vjp(jnp.ones((2, 4)))
    _, f_vjp = jax.vjp(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x), 3.)
    assert f_vjp.opaque_residuals

    @jax.jit
    def h(f_vjp):
        return f_vjp(jnp.ones((3, 4)))
    close(h(f2_vjp)[1], np.full((4, 4), 6.))
    assert any(leaf is w for leaf in jax.tree_util.tree_leaves(f2_vjp))


def test_vjp_and_cotangent_checks():
    y, pullback = jax.vjp(lambda x, y: (x * y, x + y), 2., 3.)
    close(y[0], 6.)
    gx, gy = pullback((1., 1.))
    close(gx, 4.)
    close(gy, 3.)
    with pytest.raises(ValueError, match="unexpected tree structure"):   # JAX 0.10.2
        pullback(1.)
    with pytest.raises(ValueError, match="unexpected JAX type"):
        pullback((jnp.ones(2), 1.))
    y, pullback, aux = jax.vjp(lambda x: (x * 2, x), 1., has_aux=True)
    close(aux, 1.)
    close(pullback(1.)[0], 2.)


def test_linear_transpose():
    f_t = jax.linear_transpose(lambda x: 3. * x[::-1], jnp.ones(3))
    (ct,) = f_t(jnp.arange(3.))
    close(ct, [6., 3., 0.])


def test_linear_transpose_skips_jit_outputs_without_cotangents():
    # JAX issue 15660: the comparison computing the unused output is not transposed
    f = jax.jit(lambda x: (2 * x, x > 0))
    (ct,) = jax.linear_transpose(lambda x: f(x)[0], 1.)(1.)
    assert float(ct) == 2.0 and ct.weak_type   # as JAX's


def test_linear_transpose_of_integer_functions_and_custom_jvp():
    assert jax.linear_transpose(lambda n: n * 2, 1)(2)[0].tolist() == 4   # int -> int
    with pytest.raises(TypeError, match="and integer -> integer functions"):
        jax.linear_transpose(lambda n: n.astype(jnp.float32), 1)
    f = jax.custom_jvp(lambda x: x * 2)
    f.defjvp(lambda p, t: (p[0] * 2, t[0] * 2))
    close(jax.linear_transpose(f, 1.0)(1.0)[0], 2.0)   # transposes the body


def test_edge_cases_of_the_differentiation_api_match_jax():
    g = jax.grad(lambda x: x)(3.0)   # the seed itself: an Array, not a Python float
    assert isinstance(g, jax.Array) and g.weak_type and float(g) == 1.0
    grads = jax.grad(lambda p: p["a"] * 2 + p["c"][0])({"a": 1.0, "b": None, "c": (3.0, None)})
    assert isinstance(grads["c"][0], jax.Array) and grads["b"] is None
    _, t = jax.jvp(lambda x: x * 2, (1.0,), (jnp.float32(1.0),))
    assert t.weak_type   # the tangent of a weakly typed primal is weak too
    for f in (lambda x: lax.cond(x > 0, lambda y: y * 2, lambda y: y, x),
              lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2, x)):
        assert jax.jvp(f, (1.0,), (1.0,))[1].weak_type   # through control flow as well
    (ct,) = jax.vjp(lambda x: (x * 2).astype(jnp.int32), 3.0)[1](jnp.int32(1))
    assert ct.dtype == np.float32 and float(ct) == 0.0   # an integer output's ct is ignored
    with pytest.raises(ValueError, match="unexpected tree structure"):
        jax.vjp(lambda x: (x, x), 1.0)[1](1.0)
    _, f_jvp = jax.linearize(jnp.sin, jnp.ones(3))
    with pytest.raises(ValueError, match=r"inconsistent with the original primal values: "
                                         r"got tangent aval int32\[3\]"):   # JAX 0.10.2
        f_jvp(jnp.ones(3, jnp.int32))


def test_jacobian_blocks_of_integer_values_are_integer_zeros():
    jac = jax.jacrev(lambda x: x * 2., allow_int=True)(jnp.arange(3, dtype=jnp.int8))
    assert jac.dtype == np.int8 and jac.tolist() == [[0] * 3] * 3
    jac = jax.jacfwd(lambda x: (x * 2).astype(jnp.int8))(jnp.arange(3.))
    assert jac.dtype == np.int8 and jac.tolist() == [[0] * 3] * 3
    for jac_fn in (jax.jacfwd, jax.jacrev):
        with pytest.raises(ValueError, match="requires at least 2 positional arguments"):
            jac_fn(lambda x: x, argnums=1)(jnp.ones(2))


# --- Jacobians and Hessians -----------------------------------------------------------------

def test_jacobians_of_pytrees():
    f = lambda x: {"a": x ** 2, "b": x[0]}   # noqa: E731
    x = jnp.arange(1., 3.)
    for jac in (jax.jacfwd(f)(x), jax.jacrev(f)(x)):
        close(jac["a"], np.diag([2., 4.]))
        close(jac["b"], [1., 0.])
    a = jnp.arange(6.).reshape(2, 3)
    close(jax.jacfwd(lambda v: a @ v)(jnp.ones(3)), a)
    close(jax.jacrev(lambda v: a @ v)(jnp.ones(3)), a)
    assert jax.jacfwd(lambda m: m * 2)(jnp.ones((2, 2))).shape == (2, 2, 2, 2)
    assert jax.jacrev(lambda m: m.sum(0))(jnp.ones((2, 3))).shape == (3, 2, 3)
    jx, jy = jax.jacrev(lambda x, y: x * y, argnums=(0, 1))(x, 2.)
    close(jx, 2 * np.eye(2))
    close(jy, x)


def test_jacobians_has_aux():
    for jac_fn in (jax.jacfwd, jax.jacrev):
        jac, aux = jac_fn(lambda x: (x ** 2, x.sum()), has_aux=True)(jnp.arange(2.))
        close(jac, np.diag([0., 2.]))
        close(aux, 1.)
    hess, aux = jax.hessian(lambda x: (jnp.sum(x ** 3), 7), has_aux=True)(jnp.arange(2.))
    close(hess, np.diag([0., 6.]))
    assert aux == 7


def test_hessian():
    close(jax.hessian(lambda x: jnp.sum(x ** 3))(jnp.arange(3.)), np.diag([0., 6., 12.]))
    close(jax.jit(jax.hessian(lambda x: jnp.sum(jnp.sin(x))))(jnp.arange(2.)),
          np.diag(-np.sin(np.arange(2.))))


# --- composition with jit, vmap and control flow ----------------------------------------------

def test_nested_derivatives_do_not_confuse_perturbations():
    close(jax.grad(lambda x: jax.grad(lambda y: x * y)(1.))(2.), 1.)
    close(jax.grad(lambda x: x * jax.grad(lambda y: x * y)(1.))(2.), 4.)


def test_jit_of_grad_is_one_program_and_agrees_with_grad_of_jit():
    def f(x):
        return jnp.sum(jnp.tanh(x) * x ** 2)
    x = jnp.linspace(-1., 1., 5)
    a, b, c = jax.jit(jax.grad(f))(x), jax.grad(jax.jit(f))(x), jax.grad(f)(x)
    close(a, c)
    close(b, c)
    one = jax.make_jaxpr(jax.grad(f))(x)
    assert all(e.primitive.name != "jit" for e in one.eqns)
    through = jax.make_jaxpr(jax.grad(jax.jit(f)))(x)
    assert [e.primitive.name for e in through.eqns if e.primitive.name == "jit"] == \
        ["jit", "jit"]   # the known (primal) jit and the transposed (tangent) jit


def test_grad_through_jit_closing_over_a_differentiated_value():
    close(jax.grad(lambda x: jax.jit(lambda y: x * y)(2.))(3.), 2.)
    close(jax.jit(jax.grad(lambda x: jax.jit(lambda y: x * y)(2.)))(3.), 2.)


def test_grad_jaxpr_shape():
    jaxpr = jax.make_jaxpr(jax.grad(lambda x: jnp.sin(x) * x))(1.5)
    names = [e.primitive.name for e in jaxpr.eqns]
    assert names == ["sin", "cos", "mul", "mul", "mul", "mul", "add_any"]


def test_grad_of_control_flow_and_vmap():
    close(jax.grad(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(1.), np.cos(1.))
    close(jax.grad(lambda x: lax.scan(lambda c, y: (c * y, c), x,
                                      jnp.arange(1., 4.))[0])(2.), 6.)
    close(jax.grad(lambda x: jnp.sum(jax.vmap(jnp.sin)(x)))(jnp.arange(3.)),
          np.cos(np.arange(3.)))


# --- a small MLP against hand-written NumPy backprop ------------------------------------------

def _mlp_params(rng):
    return {"w1": rng.standard_normal((4, 8)).astype(np.float32) * 0.5,
            "b1": rng.standard_normal(8).astype(np.float32) * 0.1,
            "w2": rng.standard_normal((8, 3)).astype(np.float32) * 0.5,
            "b2": rng.standard_normal(3).astype(np.float32) * 0.1}


def _mlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return jnp.mean(jnp.sum((logits - y) ** 2, axis=1))


def _numpy_backprop(p, x, y):
    pre = x @ p["w1"] + p["b1"]
    h = np.tanh(pre)
    logits = h @ p["w2"] + p["b2"]
    n = x.shape[0]
    d_logits = 2 * (logits - y) / n
    d_h = d_logits @ p["w2"].T
    d_pre = d_h * (1 - h ** 2)
    return {"w1": x.T @ d_pre, "b1": d_pre.sum(0), "w2": h.T @ d_logits,
            "b2": d_logits.sum(0)}


def test_mlp_gradient_matches_numpy_backprop():
    rng = np.random.default_rng(0)
    params = _mlp_params(rng)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    y = rng.standard_normal((5, 3)).astype(np.float32)
    expected = _numpy_backprop(params, x, y)
    for grads in (jax.grad(_mlp_loss)(params, x, y),
                  jax.jit(jax.grad(_mlp_loss))(params, x, y),
                  jax.grad(jax.jit(_mlp_loss))(params, x, y)):
        for k in expected:
            close(grads[k], expected[k])


# --- stop_gradient, custom rules, checkpoint ------------------------------------------------

def test_stop_gradient():
    x = jnp.arange(3.)
    close(jax.grad(lambda x: jnp.sum(lax.stop_gradient(x) * x))(x), x)
    assert "stop_gradient" in str(jax.make_jaxpr(lax.stop_gradient)(x))
    n, f = lax.stop_gradient((jnp.int32(1), 2.))
    assert n.dtype == np.int32


def test_custom_jvp_rule_is_used_everywhere():
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 2.0 * t

    close(f(1.), np.sin(1.))
    for g in (jax.grad(f), jax.jit(jax.grad(f)), jax.grad(jax.jit(f))):
        close(g(1.), 2.)
    close(jax.jvp(f, (1.,), (1.,))[1], 2.)
    assert "custom_jvp_call" in str(jax.make_jaxpr(f)(1.))


def test_custom_jvp_defjvps_and_nondiff_argnums():
    f = jax.custom_jvp(lambda x, y: x * y)
    f.defjvps(lambda g, ans, x, y: g * y * 10, None)
    close(jax.grad(f)(2., 3.), 30.)
    close(jax.grad(f, argnums=1)(2., 3.), 0.)

    # two contributions are summed (JAX's Custom_derivative_rules notebook; values
    # recorded from JAX 0.10.2)
    g = jax.custom_jvp(lambda x, y: jnp.sin(x) * y)
    g.defjvps(lambda x_dot, ans, x, y: jnp.cos(x) * x_dot * y,
              lambda y_dot, ans, x, y: jnp.sin(x) * y_dot)
    close(jax.jvp(g, (2., 3.), (1., 2.))[1], 0.5701543)
    close(jax.grad(g, (0, 1))(2., 3.), (-1.2484405, 0.9092974))

    from functools import partial

    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def app(fn, x):
        return fn(x)

    @app.defjvp
    def app_jvp(fn, primals, tangents):
        (x,), (t,) = primals, tangents
        return app(fn, x), t * 7.
    close(jax.grad(lambda x: app(jnp.sin, x))(1.), 7.)
    close(jax.jit(jax.grad(lambda x: app(jnp.sin, x)))(1.), 7.)


def test_custom_jvp_errors():
    f = jax.custom_jvp(lambda x: x)
    with pytest.raises(AttributeError, match="No JVP defined"):
        jax.grad(f)(1.)
    f.defjvp(lambda p, t: (p[0], t[0].astype(jnp.float16)))
    with pytest.raises(TypeError, match="corresponding shapes and dtypes"):
        jax.grad(f)(1.)
    f.defjvp(lambda p, t: p[0])
    with pytest.raises(TypeError, match="must produce a pair"):
        jax.grad(f)(1.)

    def closes_over(y):
        g = jax.custom_jvp(lambda x: x * y)
        g.defjvp(lambda p, t: (p[0] * y, t[0] * y))
        return jax.jit(g)(1.)
    with pytest.raises(CustomJVPException, match="closes over"):
        jax.grad(closes_over)(2.)


def test_custom_vjp():
    @jax.custom_vjp
    def f(x, y):
        return jnp.sin(x) * y

    def f_fwd(x, y):
        return f(x, y), (jnp.cos(x), jnp.sin(x), y)

    def f_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y * 10, None)

    f.defvjp(f_fwd, f_bwd)
    close(f(1., 2.), np.sin(1.) * 2)
    for g in (jax.grad(f), jax.jit(jax.grad(f)), jax.grad(jax.jit(f))):
        close(g(1., 2.), np.cos(1.) * 2 * 10)
    close(jax.grad(f, argnums=1)(1., 2.), 0.)
    for h in (lambda x: f(x, 2.), jax.jit(lambda x: f(x, 2.))):   # under jit too, as JAX
        with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
            jax.jvp(h, (1.,), (1.,))


def test_custom_vjp_bwd_may_give_a_float_input_another_float_dtype():
    """JAX's (temporary) exception: the cotangent keeps the bwd rule's dtype, through the
    transpose of a gather too; the shape must still match."""
    f = jax.custom_vjp(lambda x: x)
    f.defvjp(lambda x: (x, None), lambda res, g: (g.astype(jnp.bfloat16),))

    def sort_then_f(x):
        return f(x.at[jnp.argsort(x)].get())
    x = jnp.arange(8, dtype=jnp.float8_e4m3fn)
    for vjp in (lambda x, c: jax.vjp(sort_then_f, x)[1](c),
                jax.jit(lambda x, c: jax.vjp(sort_then_f, x)[1](c))):
        (ct,) = vjp(x, jnp.ones(8, jnp.float8_e4m3fn))
        assert ct.dtype == jnp.bfloat16
        np.testing.assert_array_equal(ct, np.ones(8))


def test_custom_vjp_bwd_leaves_stand_for_argument_subtrees():
    # As JAX 0.10.2 matches a bwd rule's output with the arguments: each leaf (None
    # included) covers the argument's subtree at its place. None matches a None argument
    # (equinox's partitions hold them), a cotangent for an empty subtree is dropped, and
    # one cotangent covers every leaf of a subtree; a container for a leaf is an error.
    @jax.custom_vjp
    def f(a, b):
        return a * 2.0 + b[1] * b[2]
    f.defvjp(lambda a, b: (f(a, b), (b[1], b[2])),
             lambda res, g: (g * 2.0, (None, g * res[1], g * res[0])))
    grads = jax.grad(lambda a, x, y: f(a, (None, x, y)), argnums=(0, 1, 2))(1.0, 3.0, 4.0)
    assert [float(g) for g in grads] == [2.0, 4.0, 3.0]

    @jax.custom_vjp
    def g(a, b):
        return a * b[1]
    g.defvjp(lambda a, b: (g(a, b), (a, b[1])),
             lambda r, ct: (ct * r[1], (ct * 7.0, ct * r[0])))
    grads = jax.grad(lambda a, x: g(a, (None, x)), argnums=(0, 1))(2.0, 5.0)
    assert [float(g) for g in grads] == [5.0, 2.0]

    @jax.custom_vjp
    def h(a, b):
        return a * (b[0] + b[1])
    h.defvjp(lambda a, b: (h(a, b), (a, b)),
             lambda r, ct: (ct * (r[1][0] + r[1][1]), ct * r[0]))
    grads = jax.grad(lambda a, x, y: h(a, (x, y)), argnums=(0, 1, 2))(2.0, 5.0, 6.0)
    assert [float(g) for g in grads] == [11.0, 2.0, 2.0]

    k = jax.custom_vjp(lambda a: a)
    k.defvjp(lambda a: (a, None), lambda r, ct: ((ct, ct),))
    with pytest.raises(TypeError, match=r"same container \(pytree\) structure"):
        jax.grad(k)(1.0)


def test_custom_vjp_errors_and_closure_convert():
    f = jax.custom_vjp(lambda x: x)
    with pytest.raises(AttributeError, match="No VJP defined"):
        jax.grad(f)(1.)
    f.defvjp(lambda x: (x, None), lambda res, g: (g, g))
    with pytest.raises(TypeError, match="one entry per differentiable argument"):
        jax.grad(f)(1.)
    f.defvjp(lambda x: (x, None), lambda res, g: (jnp.ones(3),))
    with pytest.raises(ValueError, match=r"at output\[0\] the bwd rule produced an output "
                       r"of type float32\[3\] corresponding to an input of type "
                       r"float32\[\], so the shapes do not match"):
        jax.grad(f)(1.)

    def closes_over(y):
        g = jax.custom_vjp(lambda x: x * y)
        g.defvjp(lambda x: (x * y, None), lambda res, ct: (ct * y,))
        return jax.jit(g)(1.)
    with pytest.raises(CustomVJPException, match="closure_convert"):
        jax.grad(closes_over)(2.)

    def closes_over_converted(y):
        inner = lambda x: x * y   # noqa: E731
        converted, consts = jax.closure_convert(inner, 1.)
        g = jax.custom_vjp(lambda x, *c: converted(x, *c))
        g.defvjp(lambda x, *c: (converted(x, *c), (x, c)),
                 lambda res, ct: (ct * res[1][0],
                                  *[ct * res[0] for _ in res[1]]))
        return g(1., *consts)
    close(jax.grad(closes_over_converted)(2.), 1.)


def test_checkpoint_recomputes_and_matches():
    def f(x):
        return jnp.sin(jnp.sin(x)) * x
    g = jax.checkpoint(f)
    x = jnp.linspace(0., 1., 4)
    expected = jax.grad(lambda x: jnp.sum(f(x)))(x)
    close(jax.grad(lambda x: jnp.sum(g(x)))(x), expected)
    close(jax.jit(jax.grad(lambda x: jnp.sum(g(x))))(x), expected)
    close(jax.grad(lambda x: jnp.sum(jax.remat(f)(x)))(x), expected)
    # The input is the only residual kept for the backward pass (without checkpoint,
    # cos(x), cos(sin(x)) and sin(sin(x)) are kept too).
    _, pullback = jax.vjp(lambda x: jnp.sum(g(x)), x)
    residuals = jax.tree_util.tree_leaves(pullback)   # the pullback is a pytree of them
    assert len(residuals) == 1
    close(residuals[0], x)
    _, pullback = jax.vjp(lambda x: jnp.sum(f(x)), x)
    assert len(jax.tree_util.tree_leaves(pullback)) == 4
    assert "checkpoint" in str(jax.make_jaxpr(jax.grad(lambda x: jnp.sum(g(x))))(x))


def test_checkpoint_static_argnums():
    def f(x, n):
        for _ in range(n):
            x = jnp.sin(x)
        return x
    g = jax.checkpoint(f, static_argnums=(1,))
    close(jax.grad(g)(1., 2), jax.grad(f)(1., 2))


def test_check_grads_on_compositions():
    with jax.enable_x64(True):
        x = np.linspace(0.2, 1.1, 4)
        check_grads(lambda x: jnp.sum(jnp.tanh(x) * jnp.exp(x)), (x,), 2)
        check_grads(lambda x: jax.jit(jnp.sin)(x) * x, (x,), 2)
        check_grads(jax.checkpoint(lambda x: jnp.sin(x) ** 2), (x,), 2)
        check_grads(lambda x: lax.cummax(x * jnp.array([1., -1., 2., 0.5]), 0), (x,), 2)


def test_check_grads_probes_jax_directions():
    # A float32 check at the edge of its tolerance passes or fails by the random
    # directions drawn: JAX's (RandomState(0) for tangent and cotangent) pass here, as
    # chex's assert_numerical_grads tests expect.
    x = np.array([0.17954302, 0.58546543, 0.91409326, 0.73427463, 0.29374015], np.float32)
    check_grads(lambda x: jnp.sum(11.0 - 2 * x), (x,), order=1, modes=["rev"], atol=0.05)


def test_check_grads_tolerances_follow_jax():
    # JAX's rules, recorded on JAX 0.10.2: a dict gives tolerances per dtype (others keep
    # the defaults, 2e-3 for float32), and tolerances scale with the number of elements.
    def off_by(factor):
        f = jax.custom_jvp(jnp.sin)
        f.defjvp(lambda p, t: (jnp.sin(p[0]), factor * jnp.cos(p[0]) * t[0]))
        return f
    x = np.float32(0.5)
    check_grads(off_by(1.01), (x,), 1, modes=["fwd"],
                atol={np.float32: 0.05}, rtol={np.float32: 0.05})
    with pytest.raises(AssertionError):
        check_grads(off_by(1.01), (x,), 1, modes=["fwd"],
                    atol={np.float16: 0.05}, rtol={np.float16: 0.05})
    with pytest.raises(AssertionError):
        check_grads(off_by(1.004), (x,), 1, modes=["fwd"])
    check_grads(off_by(1.004), (np.full(4, 0.5, np.float32),), 1, modes=["fwd"])


def test_check_grads_accepts_nan_where_the_function_is_nan():
    # JAX 0.10.2: finite differences of a NaN are NaN, which matches the NaN derivative
    check_grads(jnp.sqrt, (np.array([-1.0, 4.0], np.float32),), 2)


def test_custom_jvp_symbolic_zeros():
    from pyjax._src.api.custom_derivatives import SymbolicZero
    seen = []
    f = jax.custom_jvp(lambda x, y: x * y)

    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append((isinstance(tx, SymbolicZero), isinstance(ty, SymbolicZero)))
        t = 0. if isinstance(tx, SymbolicZero) else tx * y
        t = t if isinstance(ty, SymbolicZero) else t + ty * x
        return x * y, t
    f.defjvp(rule, symbolic_zeros=True)
    close(jax.grad(f)(2., 3.), 3.)
    assert seen[-1] == (False, True)
    close(jax.grad(f, argnums=(0, 1))(2., 3.), (3., 2.))
    assert seen[-1] == (False, False)


def test_leaked_tracer_is_reported():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2
    jax.grad(f)(1.)
    with pytest.raises(errors.UnexpectedTracerError):
        leaked[0] + 1


def test_custom_vjp_nondiff_argnums_and_pytrees():
    from functools import partial

    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def apply(fn, p):
        return fn(p["a"]) * p["b"]

    def fwd(fn, p):
        return apply(fn, p), (p["a"], p["b"])

    def bwd(fn, res, g):
        a, b = res
        return ({"a": g * b * 100., "b": None},)

    apply.defvjp(fwd, bwd)
    p = {"a": 2., "b": 3.}
    close(apply(jnp.sin, p), np.sin(2.) * 3.)
    grads = jax.grad(lambda p: apply(jnp.sin, p))(p)
    close(grads["a"], 300.)
    close(grads["b"], 0.)
    with pytest.raises(TypeError, match="nondiff_argnums"):
        jax.grad(lambda x: apply(x, p))(1.)


def test_fwd_and_bwd_compiles_each_half_once():
    x, w = jnp.ones(3), jnp.full(3, 2.0)

    def f(x, w, scale):
        return jnp.sin(x * w) * scale

    fwd, bwd = jax.fwd_and_bwd(f, argnums=[1])
    for _ in range(3):
        y, residuals = fwd(x, w, 3.0)
        (cot_w,) = bwd(residuals, jnp.ones(3))
    close(y, 3.0 * np.sin(2.0) * np.ones(3))
    close(cot_w, 3.0 * np.cos(2.0) * np.ones(3))
    assert fwd._cache_size() == 1 and bwd._cache_size() == 1   # residuals are a pytree
    assert all(isinstance(r, jax.Array) for r in jax.tree_util.tree_leaves(residuals))
    fwd, bwd = jax.fwd_and_bwd(f, argnums=0, jitted=False)     # an int: one cotangent
    close(bwd(fwd(x, w, 3.0)[1], jnp.ones(3)), 6.0 * np.cos(2.0) * np.ones(3))
    fwd, bwd = jax.fwd_and_bwd(lambda v: (v.sum(), {"a": v}), argnums=0, has_aux=True)
    total, residuals, aux = fwd(x)
    assert float(total) == 3.0 and aux["a"].tolist() == [1.0] * 3
    assert bwd(residuals, 1.0).tolist() == [1.0] * 3
    with pytest.raises(ValueError, match="unexpected JAX type"):
        bwd(residuals, jnp.ones(2))
    with pytest.raises(TypeError, match="at least 6 positional arguments"):
        jax.fwd_and_bwd(f, argnums=5)[0](x, w, 1.0)


def test_custom_vjp_symbolic_zeros_gives_fwd_perturbed_flags():
    f = jax.custom_vjp(lambda x, y: x * y)
    seen = []

    def fwd(x, y):
        seen.append((x.perturbed, y.perturbed))
        return x.value * y.value, y.value

    f.defvjp(fwd, lambda y, g: (g * y, None), symbolic_zeros=True)
    close(jax.grad(f)(2.0, 3.0), 3.0)
    assert seen == [(True, False)]
    close(jax.vmap(jax.grad(f))(jnp.ones(2), jnp.arange(2.)), [0.0, 1.0])


def test_custom_jvp_traced_nondiff_argnums_are_not_differentiated():
    f = jax.custom_jvp(lambda n, x: x * n, nondiff_argnums=(0,))
    f.defjvp(lambda n, p, t: (p[0] * n, t[0] * n * 10))
    close(jax.grad(lambda y: f(y, 2.0))(3.0), 0.0)       # only the rule's tangent counts
    close(jax.grad(lambda y: f(y, y))(3.0), 30.0)
    close(jax.hessian(lambda y: f(y, y))(3.0), 0.0)      # at every order
    close(jax.grad(jax.jit(f), argnums=1)(3.0, 2.0), 30.0)
    close(jax.vmap(jax.grad(f, argnums=1))(jnp.arange(3.), jnp.ones(3)), [0.0, 10.0, 20.0])
    close(jax.grad(lambda y: jax.vmap(f, in_axes=(0, None))(y, 2.0).sum())(jnp.arange(3.)),
          [0.0, 0.0, 0.0])


def test_custom_derivative_nondiff_argnums_are_checked_outside_transformations_too():
    f = jax.custom_jvp(lambda n, x: x * n, nondiff_argnums=(3,))
    f.defjvp(lambda n, p, t: (p[0] * n, t[0] * n))
    with pytest.raises(TypeError, match=r"nondiff_argnums=\(3,\) but was called with only 2"):
        f(1.0, 2.0)


def test_zero_and_passed_through_tangents_of_weak_primals_stay_weak():
    # JAX 0.10.2: jvp(lambda x: x + 1, (2.0,), (1.0,)) and the symbolic zero tangent of a
    # constant output are weakly typed float32, as the primals are
    _, t = jax.jvp(lambda x: x + 1, (2.0,), (1.0,))
    assert t.weak_type and t.dtype == np.float32 and float(t) == 1.0
    _, z = jax.jvp(lambda x: x * 0 + 1, (2.0,), (1.0,))
    assert z.weak_type and float(z) == 0.0
    _, c = jax.jvp(lambda x: 3.0, (2.0,), (1.0,))
    assert c.weak_type and float(c) == 0.0


def test_numpy_conversion_of_a_differentiated_value_is_an_error():
    # JAX 0.10.2: every tracer refuses __array__, so NumPy code under grad raises
    # instead of silently giving a zero derivative (its api_test's test_unwrapped_numpy).
    with pytest.raises(errors.TracerArrayConversionError, match="__array__"):
        jax.grad(lambda x: np.sum(np.exp(x)))(jnp.zeros(3))
    with pytest.raises(errors.TracerArrayConversionError):
        jax.jvp(lambda x: np.asarray(x), (1.,), (1.,))
    # comparisons give plain values, so Python control flow still works, as in JAX
    assert float(jax.grad(lambda x: x if x > 0 else -x)(2.)) == 1.


def test_closure_convert_hoists_what_may_be_perturbed():
    # JAX 0.10.2: concrete constants stay closed over; values being differentiated or
    # staged by jit are hoisted; a vmapped value (no tangent) is not
    s = jnp.float32(3.0)
    converted, consts = jax.closure_convert(lambda x: x * s, 1.0)
    assert consts == [] and float(converted(2.0)) == 6.0

    def count_hoisted(c):
        converted, consts = jax.closure_convert(lambda x: x * c * s, 1.0)
        counts.append(len(consts))
        return converted(2.0, *consts)
    for transform, arg in ((jax.grad, 5.0), (jax.jit, 5.0), (jax.vmap, jnp.ones(2))):
        counts = []
        transform(count_hoisted)(arg)
        assert counts == [0 if transform is jax.vmap else 1]
    with pytest.raises(TypeError, match=r"The inputs to the closure produced by "
                       r"closure_convert must have the same Pytree structure as the example "
                       r"arguments passed when closure_convert was called. Expected "
                       r"PyTreeDef\(\(\*,\)\), but got PyTreeDef\(\(\*, \[\*\]\)\)"):
        converted(2.0, [1.0])
