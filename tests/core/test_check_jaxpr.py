"""jax.extend.core.check_jaxpr on jaxprs edited into inconsistency: JaxprTypeError with
JAX 0.10.2's messages (what is wrong, the equation, the jaxpr around it)."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.extend import core


def test_well_formed_jaxprs_pass():
    core.check_jaxpr(jax.make_jaxpr(lambda x: jnp.sin(x) + jnp.cos(x))(1.).jaxpr)
    core.check_jaxpr(jax.make_jaxpr(
        lambda x: lax.switch(0, [jnp.sin, jnp.cos], x))(1.).jaxpr)


def test_let_binder_of_another_type():
    jaxpr = jax.make_jaxpr(lambda x: jnp.sin(x) + jnp.cos(x))(jnp.float32(1.)).jaxpr
    jaxpr.eqns[0].outvars[0].aval = core.ShapedArray((), np.dtype(np.int32))
    with pytest.raises(core.JaxprTypeError) as info:
        core.check_jaxpr(jaxpr)
    message = str(info.value)
    assert message.startswith(
        "Value for variable 'b' inconsistently typed as f32[] for let-binder of type "
        "i32[]\n\nin equation:\n\nb:i32[] = sin a\n\nfrom source: ")
    assert message.endswith(
        "while checking jaxpr:\n\n{ lambda ; a:f32[]. let\n    b:i32[] = sin a\n"
        "    c:f32[] = cos a\n    d:f32[] = add b c\n  in (d,) }")
    assert isinstance(info.value, TypeError)


def test_jit_equation_with_too_few_operands():
    jaxpr = jax.make_jaxpr(jax.jit(lambda x, y: x + 1))(1., 2.).jaxpr
    jaxpr._eqns[0] = jaxpr.eqns[0].replace(invars=())
    with pytest.raises(core.JaxprTypeError,
                       match="^Call primitive jit with 0 operands cannot call jaxpr with "
                             "2 inputs\n\nin equation:\n\nc:f32"):
        core.check_jaxpr(jaxpr)


def test_long_jaxpr_shows_only_equations_near_the_error():
    def f(x):
        for _ in range(30):
            x = x + x
        x = lax.switch(0, [jnp.sin, jnp.cos], x)
        for _ in range(30):
            x = x + x
        return x

    jaxpr = jax.make_jaxpr(f)(1.).jaxpr
    cond = next(eqn for eqn in jaxpr.eqns if eqn.primitive.name == "cond")
    cond.params["branches"][0].jaxpr._invars = ()
    with pytest.raises(core.JaxprTypeError) as info:
        core.check_jaxpr(jaxpr)
    message = str(info.value)
    assert message.startswith("cond branch 0 takes 0 inputs, branch 1 takes 1\n\n"
                              "in equation:\n\n")
    body = message.split("while checking jaxpr:\n\n")[1].splitlines()
    # JAX shows the 10 equations either side, the rest elided
    assert body[:3] == ["{ lambda ; a:f32[]. let", "    ...", "    w:f32[] = add v v"]
    assert body[-3:] == ["    bt:f32[] = add bs bs", "    ...", "  in (co,) }"]


def test_variable_names_after_z_continue_as_jax_names_them():
    def f(x):
        for _ in range(28):
            x = x + 1.0
        return x

    text = str(jax.make_jaxpr(f)(1.))
    assert "z:f32[] = add y 1.0:f32[]" in text
    assert "ba:f32[] = add z 1.0:f32[]" in text
    assert text.endswith("bc:f32[] = add bb 1.0:f32[]\n  in (bc,) }")


def test_jax_errors_names_the_classes_pyjax_raises():
    # JAX 0.10.2's jax.errors: check_jaxpr's JaxprTypeError, and the bases of the others
    from pyjax import errors
    assert errors.JaxprTypeError is core.JaxprTypeError
    assert issubclass(errors.JaxprTypeError, TypeError)
    for error in (errors.UnexpectedTracerError, errors.ConcretizationTypeError,
                  errors.TracerBoolConversionError):
        assert issubclass(error, errors.JAXTypeError)
    assert issubclass(errors.NonConcreteBooleanIndexError, errors.JAXIndexError)
