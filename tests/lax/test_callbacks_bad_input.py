"""Bad input to the callbacks (jax.pure_callback, jax.debug.print): a callback result of the
wrong shape or dtype and a bad result spec raise a named exception whose message names the
problem (see harness.assert_named_error), eagerly and under jit on both executors."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import assert_named_error, bad_input_case as case

x = jnp.ones((2, 3))

CASES = [
    case("pure_callback_shape", RuntimeError, "incorrect output shape",
         lambda: jax.pure_callback(lambda a: np.ones(3), jax.ShapeDtypeStruct((2,), jnp.float32),
                                   x)),
    case("pure_callback_dtype", RuntimeError, "incorrect output dtype",
         lambda: jax.pure_callback(lambda a: np.ones(2, np.int32),
                                   jax.ShapeDtypeStruct((2,), jnp.float32), x)),
    case("pure_callback_result_spec", TypeError, "result_shape_dtypes",
         lambda: jax.pure_callback(lambda: 1.0, 5)),
    case("pure_callback_sharding_not_one_device", NotImplementedError,
         "takes a SingleDeviceSharding",
         lambda: jax.pure_callback(lambda a: a, x, x, sharding=jax.sharding.NamedSharding(
             jax.make_mesh((1,), ("d",)), jax.P("d")))),
    # As in JAX: str.format's own errors for a placeholder without a value.
    case("debug_print_missing_keyword", KeyError, "y",
         lambda: jax.debug.print("{x} {y}", x=x)),
    case("debug_print_missing_positional", IndexError, "out of range",
         lambda: jax.debug.print("{} {}", x)),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)


def test_pure_callback_wrong_shape_under_jit(executor):
    spec = jax.ShapeDtypeStruct((2,), jnp.float32)
    f = jax.jit(lambda a: jax.pure_callback(lambda v: np.ones(3, np.float32), spec, a))
    with pytest.raises(RuntimeError, match="incorrect output shape"):
        f(x)
