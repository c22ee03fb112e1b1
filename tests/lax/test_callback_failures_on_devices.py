"""A host callback that raises inside a program over several devices (jit over a mesh,
pmap): the call raises a RuntimeError naming the callback's error, as on one device,
instead of the other devices waiting for the failed one at a collective until XLA aborts
the process; a callback that starts another program over several devices fails at once
instead of waiting forever; two threads running one program see their own failures only.
Run on four CPU devices in a subprocess (harness.checks_on_devices)."""
import threading
import time

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


REENTRANT = "(?s)CpuCallback error calling callback.*cannot start it until that callback returns"


def _raises_at_once(f, *args):
    # XLA aborts the process after 40 s of devices waiting at a collective
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=REENTRANT):
        f(*args)
    assert time.monotonic() - start < 20


def check_callback_running_a_jit_over_the_mesh_fails_at_once():
    with jax.set_mesh(jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))):
        sine = jax.jit(jax.numpy.sin).lower(2.0).compile()   # over both devices
        _raises_at_once(jax.jit(lambda x: jax.pure_callback(sine, x, x)), 2.0)


def check_callback_running_a_cached_jit_over_the_mesh_fails_at_once():
    # the sharded jit's later calls take its cached route, which must refuse too
    sharded = jax.sharding.NamedSharding(jax.make_mesh((2,), ("x",)), jax.P("x"))
    x = jax.device_put(np.arange(2, dtype=np.float32), sharded)
    sine = jax.jit(jax.numpy.sin)
    sine(x), sine(x)
    f = jax.jit(lambda y: jax.pure_callback(
        lambda v: np.float32(np.asarray(sine(x)).sum() + v), SCALAR, y.sum()))
    _raises_at_once(f, x)


def check_callbacks_in_shard_map_running_a_jit_over_other_devices_fail_at_once():
    devices = jax.devices()
    other = jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(devices[2:4]), ("y",)),
                                       jax.P())
    sine = jax.jit(jax.numpy.sin, in_shardings=other, out_shardings=other)
    mesh = jax.sharding.Mesh(np.array(devices[:2]), ("x",))
    f = jax.jit(jax.shard_map(
        lambda y: jax.pure_callback(lambda z: np.asarray(sine(z[0]))[None], y, y),
        mesh=mesh, in_specs=jax.P("x"), out_specs=jax.P("x")))
    _raises_at_once(f, np.ones(2, np.float32))


def check_callback_in_pmap_running_a_pmap_fails_at_once():
    inner = jax.pmap(lambda x: x + 1, devices=jax.devices()[2:4])
    f = jax.pmap(lambda x: jax.pure_callback(lambda v: np.asarray(inner(np.stack([v, v]))[0]),
                                             SCALAR, x), devices=jax.devices()[:2])
    _raises_at_once(f, np.ones(2, np.float32))


def check_callback_over_a_mesh_may_run_a_program_on_one_device():
    sine = jax.jit(jax.numpy.sin)
    on_second = jax.devices()[1]
    f = jax.jit(lambda x: jax.pure_callback(
        lambda v: sine(v) + sine(jax.device_put(v, on_second)), x, x))
    with jax.set_mesh(jax.make_mesh((2,), ("x",))):
        np.testing.assert_allclose(f(np.float32(2.0)), 2 * np.sin(np.float32(2.0)),
                                   rtol=1e-6)


def check_threads_running_one_program_see_their_own_failures():
    mesh = jax.make_mesh((4,), ("x",))
    sharding = jax.sharding.NamedSharding(mesh, jax.P("x"))
    f = jax.jit(lambda x: jax.pure_callback(_fails_on_two, SCALAR, x.sum()) + x.sum())
    inputs = {"fails": jax.device_put(np.full(4, 0.5, np.float32), sharding),
              "works": jax.device_put(np.full(4, 1.0, np.float32), sharding)}
    outcomes = {name: [] for name in inputs}

    def run(name):
        for _ in range(40):
            try:
                outcomes[name].append(float(f(inputs[name])))
            except RuntimeError as err:
                outcomes[name].append("no twos here" in str(err))
    threads = [threading.Thread(target=run, args=(name,)) for name in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert outcomes == {"fails": [True] * 40, "works": [8.0] * 40}


test_on_four_devices = checks_on_devices(globals(), 4)
