"""A host callback that raises inside a program over several devices (jit over a mesh,
pmap): the call raises a RuntimeError naming the callback's error, as on one device,
instead of the other devices waiting for the failed one at a collective until XLA aborts
the process. Run on four CPU devices in a subprocess (harness.checks_on_devices)."""
import numpy as np
import pytest

import pyjax as jax
from harness import checks_on_devices
from pyjax.experimental import io_callback

SCALAR = jax.ShapeDtypeStruct((), np.float32)


def _fails_on_two(x):
    if float(x) == 2.0:
        raise ValueError("no twos here")
    return np.float32(x)


def check_failing_ordered_io_callback_over_a_mesh():
    f = jax.jit(lambda: io_callback(lambda x: np.ones(4, np.float32),
                                    jax.ShapeDtypeStruct((4,), np.float32), ordered=True))
    with jax.set_mesh(jax.make_mesh((4,), ("x",))):
        with pytest.raises(RuntimeError, match="(?s)CpuCallback error calling callback.*"
                                               "missing 1 required positional argument"):
            f()
        # the failure is reported once: the next call runs normally
        g = jax.jit(lambda: io_callback(lambda: np.ones(4, np.float32),
                                        jax.ShapeDtypeStruct((4,), np.float32), ordered=True))
        np.testing.assert_array_equal(g(), np.ones(4, np.float32))


def check_failing_callback_before_a_psum_in_pmap():
    f = jax.pmap(lambda x: jax.lax.psum(io_callback(_fails_on_two, SCALAR, x), "i"),
                 axis_name="i")
    with pytest.raises(RuntimeError, match="ValueError: no twos here"):
        f(np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(f(np.arange(4, dtype=np.float32) + 10), np.full(4, 46.0))


def check_failing_pure_callback_in_a_sharded_jit():
    mesh = jax.make_mesh((4,), ("x",))
    x = jax.device_put(np.arange(4, dtype=np.float32),
                       jax.sharding.NamedSharding(mesh, jax.P("x")))
    f = jax.jit(lambda x: jax.pure_callback(_fails_on_two, SCALAR, x.sum() - 4.0) + x.sum())
    with pytest.raises(RuntimeError, match="ValueError: no twos here"):
        f(x)


test_on_four_devices = checks_on_devices(globals(), 4)
