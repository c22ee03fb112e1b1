"""jax.profiler: traces of what pyjax and XLA do (compiles, executions, transfers, Python
calls and user annotations), recorded by jaxlib's profiler and written under
`log_dir/plugins/profile/<run>/` as `<host>.xplane.pb` and `<host>.trace.json.gz`
(TensorBoard's profile plugin and Perfetto open them); device memory profiles in pprof
format. Needs the XLA backend (jaxlib). Imports level 0 and backends."""
from __future__ import annotations

import contextlib
import functools
import gzip
import json
import os
import pathlib
import threading

from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch
from pyjax._src.version import __version__


def _xla(what):
    return dispatch.required_xla_backend(f"jax.profiler.{what}", RuntimeError)


def ProfileOptions():   # noqa: N802  (JAX's class name; jaxlib's options object)
    """Options of a trace (host_tracer_level, python_tracer_level, duration_ms, ...)."""
    return _xla("ProfileOptions").ProfileOptions()


class _ProfileState:
    def __init__(self):
        self.lock = threading.Lock()
        self.session = None
        self.log_dir = None
        self.create_perfetto_trace = False


_state = _ProfileState()
_server = {"server": None}


def start_trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options=None) -> None:
    """Starts recording a trace, saved to `log_dir` by stop_trace. One trace at a time.
    create_perfetto_trace also writes `perfetto_trace.json.gz` (the trace without its
    metadata, as Perfetto's UI takes it); pyjax serves no Perfetto link, so
    create_perfetto_link only does the same."""
    with _state.lock:
        if _state.session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time.")
        xla = _xla("start_trace")
        xla.clear_profiler_metadata()
        xla.set_profiler_metadata("pyjax_version", __version__)
        xla.set_profiler_metadata("jaxlib_version", xla.JAXLIB_VERSION)
        options = profiler_options if profiler_options is not None else xla.ProfileOptions()
        _state.session = xla.start_profiler_session(options)
        _state.log_dir = str(log_dir)
        _state.create_perfetto_trace = create_perfetto_trace or create_perfetto_link


def stop_trace() -> None:
    """Stops the running trace and writes it under the log_dir given to start_trace."""
    with _state.lock:
        if _state.session is None:
            raise RuntimeError("No profile started")
        try:
            _state.session.stop_and_export(_state.log_dir)
            if _state.create_perfetto_trace:
                _write_perfetto_trace(_state.log_dir)
        finally:
            _state.session = None
            _xla("stop_trace").clear_profiler_metadata()


def _write_perfetto_trace(log_dir):
    runs = (pathlib.Path(log_dir).absolute() / "plugins" / "profile").iterdir()
    latest = max(runs, key=os.path.getmtime)
    found = list(latest.glob("*.trace.json.gz"))
    if len(found) != 1:
        raise ValueError(f"Invalid trace folder: {latest}")
    with gzip.open(found[0], "rb") as f:
        trace = json.load(f)
    trace.pop("metadata", None)   # Perfetto refuses the metadata field
    with gzip.open(latest / "perfetto_trace.json.gz", "w") as f:
        f.write(json.dumps(trace).encode("utf-8"))


@contextlib.contextmanager
def trace(log_dir: os.PathLike | str, create_perfetto_link=False,
          create_perfetto_trace=False, profiler_options=None):
    """A trace of the enclosed block (start_trace ... stop_trace)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


def start_server(port: int):
    """Starts a profiler server on `port`, for TensorBoard to capture traces on demand."""
    if _server["server"] is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    _server["server"] = _xla("start_server").start_profiler_server(port)
    return _server["server"]


def stop_server():
    """Stops the server start_server started."""
    if _server["server"] is None:
        raise ValueError("No active profiler server.")
    _server["server"] = None   # jaxlib stops it when it is released


def register_subprocess(pid: int, port: int):
    """Has traces include the subprocess `pid`, whose profiler server listens on `port`."""
    return _xla("register_subprocess").register_profiler_subprocess(pid, port)


class TraceAnnotation:
    """`with TraceAnnotation(name, **kwargs):` marks the block as an event `name` (with
    the keyword arguments as its metadata) on the timeline of a running trace."""

    def __init__(self, name: str, **kwargs):
        self.name, self.kwargs = name, kwargs
        self._scopes = threading.local()

    def __enter__(self):
        xla = dispatch.xla_backend()
        scope = None if xla is None else xla.TraceMe(self.name, **self.kwargs)
        stack = self._scopes.__dict__.setdefault("stack", [])
        stack.append(scope)
        if scope is not None:
            scope.__enter__()
        return self

    def __exit__(self, *exc):
        scope = self._scopes.stack.pop()
        if scope is not None:
            scope.__exit__(*exc)
        return False


class StepTraceAnnotation(TraceAnnotation):
    """A TraceAnnotation marking one step (e.g. of training): the profiler's step
    analysis groups events by these. Pass step_num=... to number the steps."""

    def __init__(self, name: str, **kwargs):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func, name: str | None = None, **decorator_kwargs):
    """`func` that runs inside TraceAnnotation(name or its qualified name)."""
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


def device_memory_profile(backend: str | None = None) -> bytes:
    """The live arrays and executables on the devices, with the Python stacks that made
    them, as a gzipped pprof protocol buffer (view it with `pprof`)."""
    if backend not in (None, devices_mod.default_backend()):
        raise ValueError(f"device_memory_profile: unknown backend {backend!r}; pyjax runs "
                         f"on {devices_mod.default_backend()!r}.")
    return gzip.compress(_xla("device_memory_profile").heap_profile())


def save_device_memory_profile(filename, backend: str | None = None) -> None:
    """Writes device_memory_profile(backend) to `filename`."""
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)


__all__ = ["ProfileOptions", "start_trace", "stop_trace", "trace", "start_server",
           "stop_server", "register_subprocess", "TraceAnnotation", "StepTraceAnnotation",
           "annotate_function", "device_memory_profile", "save_device_memory_profile"]
