"""jax.monitoring (level 0): named events that code marks, and the listeners called
when it reaches them (to send them to a metrics collector). pyjax records JAX's compile
events: the time to trace a function for jit (JAXPR_TRACE_EVENT), to lower its jaxpr to
a StableHLO module (JAXPR_TO_MLIR_MODULE_EVENT) and to compile that module with XLA
(BACKEND_COMPILE_EVENT), each as a scalar (its start time), a duration and a time span,
with the function's name as `fun_name`.

Listeners are process-wide, as in JAX. Each kind is held as a tuple that registering
replaces under a lock, so recording (from any thread) reads it without one."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
JAXPR_TO_MLIR_MODULE_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

_lock = threading.Lock()
_listeners: dict[str, tuple[Callable, ...]] = {
    "event": (), "duration": (), "time_span": (), "scalar": ()}


def _register(kind, callback):
    with _lock:
        _listeners[kind] = _listeners[kind] + (callback,)


def _unregister(kind, callback, what):
    with _lock:
        current = list(_listeners[kind])
        if callback not in current:
            raise AssertionError(f"{callback!r} is not a registered {what} listener")
        current.remove(callback)
        _listeners[kind] = tuple(current)


def record_event(event: str, **kwargs: str | int) -> None:
    """Record an event. Keyword metadata, if any, must be passed in the same order on
    every call for the same event."""
    for callback in _listeners["event"]:
        callback(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Record an event's duration in seconds (float)."""
    for callback in _listeners["duration"]:
        callback(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Record an event's start and end times in seconds (float)."""
    for callback in _listeners["time_span"]:
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Record a scalar summary value."""
    for callback in _listeners["scalar"]:
        callback(event, value, **kwargs)


def register_event_listener(callback) -> None:
    """Register a callback to be invoked during record_event()."""
    _register("event", callback)


def register_event_duration_secs_listener(callback) -> None:
    """Register a callback to be invoked during record_event_duration_secs()."""
    _register("duration", callback)


def register_event_time_span_listener(callback) -> None:
    """Register a callback to be invoked during record_event_time_span()."""
    _register("time_span", callback)


def register_scalar_listener(callback) -> None:
    """Register a callback to be invoked during record_scalar()."""
    _register("scalar", callback)


def unregister_event_listener(callback) -> None:
    """Unregister an event listener (AssertionError if it is not registered)."""
    _unregister("event", callback, "event")


def unregister_event_duration_listener(callback) -> None:
    """Unregister an event duration listener (AssertionError if it is not registered)."""
    _unregister("duration", callback, "event duration")


def unregister_event_time_span_listener(callback) -> None:
    """Unregister an event time span listener (AssertionError if it is not registered)."""
    _unregister("time_span", callback, "event time span")


def unregister_scalar_listener(callback) -> None:
    """Unregister a scalar listener (AssertionError if it is not registered)."""
    _unregister("scalar", callback, "scalar")


def get_event_listeners() -> list[Callable]:
    return list(_listeners["event"])


def get_event_duration_listeners() -> list[Callable]:
    return list(_listeners["duration"])


def get_event_time_span_listeners() -> list[Callable]:
    return list(_listeners["time_span"])


def get_scalar_listeners() -> list[Callable]:
    return list(_listeners["scalar"])


def clear_event_listeners() -> None:
    """Unregister every listener."""
    with _lock:
        for kind in _listeners:
            _listeners[kind] = ()


class timed_event:
    """A context manager that records `event` for the code it holds, as JAX's compile
    steps do: its start time as a scalar on entry, its duration and time span on exit
    (an exception included, as in JAX)."""
    __slots__ = ("event", "fun_name", "start")

    def __init__(self, event: str, fun_name: str):
        self.event = event
        self.fun_name = fun_name

    def __enter__(self):
        self.start = time.time()
        record_scalar(self.event, self.start, fun_name=self.fun_name)

    def __exit__(self, exc_type, exc_value, traceback):
        end = time.time()
        record_event_duration_secs(self.event, end - self.start, fun_name=self.fun_name)
        record_event_time_span(self.event, self.start, end, fun_name=self.fun_name)
