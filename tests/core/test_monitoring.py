"""jax.monitoring: listeners of each kind, and the compile events pyjax records at the
moments JAX records them (observed on JAX 0.10.2 for a first jit call)."""
import threading

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import monitoring


@pytest.fixture
def log():
    """Every record of every kind, as (kind, event, metadata); listeners removed after."""
    records = []
    listeners = [
        (monitoring.register_event_listener, monitoring.unregister_event_listener,
         lambda e, **kw: records.append(("event", e, kw))),
        (monitoring.register_event_duration_secs_listener,
         monitoring.unregister_event_duration_listener,
         lambda e, d, **kw: records.append(("duration", e, kw))),
        (monitoring.register_event_time_span_listener,
         monitoring.unregister_event_time_span_listener,
         lambda e, s, t, **kw: records.append(("time_span", e, kw))),
        (monitoring.register_scalar_listener, monitoring.unregister_scalar_listener,
         lambda e, v, **kw: records.append(("scalar", e, kw)))]
    for register, _, callback in listeners:
        register(callback)
    yield records
    for _, unregister, callback in listeners:
        unregister(callback)


def test_each_kind_reaches_its_listeners(log):
    monitoring.record_event("/a", n=1)
    monitoring.record_event_duration_secs("/b", 2.5)
    monitoring.record_event_time_span("/c", 1.0, 2.0, tag="t")
    monitoring.record_scalar("/d", 5e5)
    assert log == [("event", "/a", {"n": 1}), ("duration", "/b", {}),
                   ("time_span", "/c", {"tag": "t"}), ("scalar", "/d", {})]


def test_values_and_unregistering():
    seen = []

    def listener(event, duration, **kwargs):
        seen.append((event, duration))

    monitoring.register_event_duration_secs_listener(listener)
    thread = threading.Thread(target=monitoring.record_event_duration_secs, args=("/t", 3))
    thread.start()
    thread.join()
    monitoring.record_event_duration_secs("/u", 1.5)
    monitoring.unregister_event_duration_listener(listener)
    monitoring.record_event_duration_secs("/v", 1)
    assert sorted(seen) == [("/t", 3), ("/u", 1.5)]
    with pytest.raises(AssertionError, match="is not a registered event duration listener"):
        monitoring.unregister_event_duration_listener(listener)


def test_clear_event_listeners():
    seen = []
    monitoring.register_event_listener(seen.append)
    monitoring.clear_event_listeners()
    monitoring.record_event("/gone")
    assert seen == []


def test_a_first_jit_call_records_trace_lowering_and_compile(log):
    def scale_by_odd_constants(x):
        return x * 1234.5 + 0.125

    out = jax.jit(scale_by_odd_constants)(jnp.ones(7))
    np.testing.assert_array_equal(out, np.full(7, 1234.625, np.float32))
    timed = [(kind, event, kw) for kind, event, kw in log
             if event.startswith("/jax/core/compile/")]
    expected = []
    for event, name in [("jaxpr_trace_duration", "scale_by_odd_constants"),
                        ("jaxpr_to_mlir_module_duration", "jit(scale_by_odd_constants)"),
                        ("backend_compile_duration", "jit(scale_by_odd_constants)")]:
        expected += [(kind, "/jax/core/compile/" + event, {"fun_name": name})
                     for kind in ("scalar", "duration", "time_span")]
    assert timed == expected
    log.clear()
    jax.jit(scale_by_odd_constants)(jnp.ones(7))   # a cached call records nothing
    assert log == []
