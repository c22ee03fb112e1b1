"""jax.errors as in JAX 0.10.2: its own error classes end their message with the page that
explains them, KeyReuseError is a JAXTypeError (a TypeError), and a Tracer subclass may call
super().__init__(trace, aval) (JAX's errors_test builds its errors from one)."""
import pytest

import pyjax as jax
from pyjax import core

_PAGE = "https://docs.jax.dev/en/latest/errors.html#jax.errors."


class FakeTracer(core.Tracer):
    def __init__(self, trace):
        super().__init__(trace, None)


@pytest.mark.parametrize("name", [
    "ConcretizationTypeError", "NonConcreteBooleanIndexError", "TracerArrayConversionError",
    "TracerBoolConversionError", "TracerIntegerConversionError", "UnexpectedTracerError",
    "KeyReuseError"])
def test_message_ends_with_the_errors_page(name):
    err = getattr(jax.errors, name)(FakeTracer(None))
    assert str(err).endswith(f"\nSee {_PAGE}{name}")


def test_base_classes():
    assert str(jax.errors.JAXTypeError("hi")) == f"hi\nSee {_PAGE}JAXTypeError"
    assert str(jax.errors.JAXIndexError("hi")) == f"hi\nSee {_PAGE}JAXIndexError"
    # JAX's own page-less errors keep their message as it is
    assert str(jax.errors.JaxRuntimeError("hi")) == "hi"
    assert issubclass(jax.errors.KeyReuseError, jax.errors.JAXTypeError)
    assert issubclass(jax.errors.KeyReuseError, TypeError)


def test_tracer_subclass_init():
    t = FakeTracer("trace")
    assert (t._trace, t.aval) == ("trace", None)
