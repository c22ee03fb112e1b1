"""jax_debug_nans / jax_debug_infs: FloatingPointError (as JAX raises) naming the primitive,
as JAX does, and, beyond JAX, the user's source line and jitted function, and the cause
when it is 0 * inf or the FAQ's jnp.where trap under grad, with the fix."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src import config


@pytest.fixture(params=["xla", "numpy"])
def executor(request):
    if request.param == "xla":
        pytest.importorskip("jaxlib")
    with config.executor(request.param):
        yield request.param


@pytest.fixture
def debug_nans():
    with config.debug_nans(True):
        yield


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _inner(x):
    return jnp.log(x) * 2


def _middle(x):
    return _inner(x) + 1


def _outer(x):
    y = x * 3
    return _middle(y - 3)


def test_jitted_nan_names_the_helper_line_two_calls_deep(executor, debug_nans):
    f = jax.jit(_outer)
    assert float(f(2.0)) == pytest.approx(np.log(3.0) * 2 + 1, rel=1e-6)   # no NaN: runs
    with pytest.raises(FloatingPointError) as info:
        f(-1.0)
    message = str(info.value)
    assert message.startswith("invalid value (nan) encountered in log\n")   # JAX's words
    assert (f"  at {__file__}:{_line_of(_inner, 'jnp.log')} in _inner: "
            "return jnp.log(x) * 2") in message
    if executor == "xla":
        assert f"while running jit(_outer at {__file__}:" in message


def test_nan_inside_a_jitted_loop_body(executor, debug_nans):
    def body(i, c):
        return jnp.sqrt(c) - i

    f = jax.jit(lambda x: jax.lax.fori_loop(0, 3, body, x))
    assert np.isfinite(float(f(100.0)))
    with pytest.raises(FloatingPointError, match="encountered in sqrt") as info:
        f(-1.0)
    assert f"{__file__}:{_line_of(body, 'sqrt')} in body" in str(info.value)


def test_where_trap_under_grad_says_so_and_shows_the_fix(debug_nans):
    line = inspect.currentframe().f_lineno + 1
    my_log = lambda x: jnp.where(x > 0, jnp.log(x), 0.)   # noqa: E731
    for grad in (jax.grad(my_log), jax.jit(jax.grad(my_log))):
        with pytest.raises(FloatingPointError) as info:
            grad(0.)
        message = str(info.value)
        assert message.startswith("invalid value (nan) encountered in div\n")
        assert f"in grad's backward pass, differentiating the operation at {__file__}:" \
               f"{line} in <lambda>" in message
        assert "This NaN is 0 / 0: a zero cotangent times an infinite derivative" in message
        assert "jnp.where (select_n) that was not selected" in message
        assert "jnp.where(x > 0., jnp.log(jnp.where(x > 0., x, 1.)), 0.)" in message
    safe = lambda x: jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.)), 0.)   # noqa: E731
    assert float(jax.grad(safe)(0.)) == 0.0 and float(jax.jit(jax.grad(safe))(0.)) == 0.0


def test_where_trap_with_arrays_names_the_where_line(debug_nans):
    def loss(x):
        clipped = jnp.where(x > 0, jnp.sqrt(x), 0.0)
        return clipped.sum()

    x = jnp.array([4.0, 0.0, 1.0])
    with pytest.raises(FloatingPointError) as info:
        jax.grad(loss)(x)
    message = str(info.value)
    where = f"{__file__}:{_line_of(loss, 'jnp.where')} in loss"
    assert "select_n) that was not selected:\n  " + where in message
    assert "The FAQ's fix" in message


def test_zero_times_inf_outside_a_where(executor, debug_nans):
    def f(x, y):
        return x * y

    with pytest.raises(FloatingPointError) as info:
        jax.jit(f)(jnp.zeros(2), jnp.array([1.0, np.inf]))
    assert "encountered in mul" in str(info.value)
    assert "This NaN is 0 * inf" in str(info.value)
    assert "select_n" not in str(info.value)


def test_debug_infs_and_off_by_default(executor):
    f = jax.jit(lambda x: 1.0 / x)
    assert float(f(0.0)) == np.inf and np.isnan(float(jax.jit(jnp.log)(-1.0)))   # off
    with config.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered "
                                                     r"in div"):
            f(0.0)
        assert float(f(2.0)) == 0.5


def test_eager_ops_keep_jax_message(debug_nans):
    with pytest.raises(FloatingPointError, match=r"^invalid value \(nan\) encountered in "
                                                 r"log$"):
        jnp.log(-1.0)


def test_nan_passed_in_is_blamed_on_the_argument(executor, debug_nans):
    f = jax.jit(lambda x, y: (x, y + 1))
    with pytest.raises(FloatingPointError, match="an argument holds a nan, which no "
                                                 "operation of the function produced"):
        f(np.nan, 1.0)


def test_nan_literal_output_says_so_in_jax_words(debug_nans):
    # the compiled program returns a NaN literal: the re-run finds no operation making it
    # (JAX's message, recorded on 0.10.2, for the same function)
    f = jax.jit(lambda x: (jnp.nan, x + 2))
    with pytest.raises(FloatingPointError, match=r"the de-optimized function did not "
                       r"produce invalid values during its execution\. .*It may also arise "
                       r"from having nan/inf literals as inputs or outputs"):
        f(3)
