"""Public jax.profiler: traces (start_trace/stop_trace/trace), annotations and device
memory profiles. Re-exports only."""
from pyjax._src.profiler import (  # noqa: F401
    ProfileOptions, StepTraceAnnotation, TraceAnnotation, annotate_function,
    device_memory_profile, register_subprocess, save_device_memory_profile, start_server,
    start_trace, stop_server, stop_trace, trace,
)
