"""Bad input to device placement and queries (device_put, devices, local_devices): each case
raises a named exception whose message names the problem (see
harness.assert_named_error)."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import assert_named_error, bad_input_case as case

x = jnp.ones((2, 3))

CASES = [
    # JAX 0.10.2's words
    case("device_put_string_device", ValueError,
         r"^`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, "
         r"`Format`, `jax.memory.Space` or a pytree of these values. Received invalid "
         r"value: gpu", lambda: jax.device_put(x, "gpu")),
    case("device_put_int_device", ValueError, "Received invalid value: 5",
         lambda: jax.device_put(x, 5)),
    case("device_put_string_value", TypeError, "not a valid JAX value",
         lambda: jax.device_put("abc")),
    case("devices_unknown_backend", RuntimeError, "Unknown backend foo. Available backends are",
         lambda: jax.devices("foo")),
    case("local_devices_process", ValueError, "process_index 5",
         lambda: jax.local_devices(process_index=5)),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)
