"""JAX's warning when a jaxpr being lowered captures many bytes of constants
(jax_captured_constants_warn_bytes, -1 to silence), recorded on JAX 0.10.2."""
import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

_Y = jnp.ones((128, 128), dtype=np.float32)   # 65536 bytes


def _lower_new_function():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jax.jit(lambda x: x @ _Y)(jnp.zeros((128,), np.float32))
    return [str(w.message) for w in caught if "constants" in str(w.message)]


@pytest.mark.parametrize("threshold,expected", [
    (65536, ["A large amount of constants were captured during lowering (65.54KB total). If "
             "this is intentional, disable this warning by setting "
             "JAX_CAPTURED_CONSTANTS_WARN_BYTES=-1. To obtain a report of where these "
             "constants were encountered, set JAX_CAPTURED_CONSTANTS_REPORT_FRAMES=-1."]),
    (65537, []),
    (-1, []),
])
def test_captured_constants_warning(threshold, expected):
    saved = jax.config.jax_captured_constants_warn_bytes
    jax.config.update("jax_captured_constants_warn_bytes", threshold)
    try:
        assert _lower_new_function() == expected
    finally:
        jax.config.update("jax_captured_constants_warn_bytes", saved)


def test_captured_constants_report():
    saved = (jax.config.jax_captured_constants_warn_bytes,
             jax.config.jax_captured_constants_report_frames)
    jax.config.update("jax_captured_constants_warn_bytes", 100)
    jax.config.update("jax_captured_constants_report_frames", 1)
    try:
        (message,) = _lower_new_function()
    finally:
        jax.config.update("jax_captured_constants_warn_bytes", saved[0])
        jax.config.update("jax_captured_constants_report_frames", saved[1])
    assert "The subsequent report may be disabled by setting " \
        "JAX_CAPTURED_CONSTANTS_REPORT_FRAMES=0.\n\nLargest 1 allocation(s):\n" in message
    assert "float32[128,128], 65.54KB captured at:\n" in message
    assert "test_captured_constants.py" in message
