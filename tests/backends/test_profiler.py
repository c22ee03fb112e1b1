"""jax.profiler: a trace of a jitted program holds its compile and execute events and the
user's annotations, with timestamps, in files TensorBoard and Perfetto read."""
import gzip
import json
import pathlib

import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src.backends import devices as devices_mod

pytestmark = pytest.mark.skipif(devices_mod.xla_runtime() is None,
                                reason="the profiler is jaxlib's")


def _events(log_dir):
    (trace_file,) = pathlib.Path(log_dir).glob("plugins/profile/*/*.trace.json.gz")
    with gzip.open(trace_file) as f:
        trace = json.load(f)
    return [e for e in trace["traceEvents"] if e.get("ph") == "X"]


def test_trace_records_compile_execute_and_annotations(tmp_path):
    x = jnp.arange(64.0).reshape(8, 8)
    scale = 1.0 + hash(str(tmp_path)) % 1000   # a new program: compiled in this trace

    @jax.profiler.annotate_function
    def step(a):
        return jax.jit(lambda b: (b @ b).sum() * scale)(a)

    with jax.config._flags["jax_enable_compilation_cache"](False):
        with jax.profiler.trace(tmp_path, create_perfetto_trace=True):
            with jax.profiler.StepTraceAnnotation("train", step_num=3):
                with jax.profiler.TraceAnnotation("my_label", detail="x"):
                    step(x).block_until_ready()
    run, = (tmp_path / "plugins" / "profile").iterdir()
    names = sorted(p.name.split(".", 1)[-1] for p in run.iterdir())
    assert names == ["json.gz", "trace.json.gz", "xplane.pb"]   # perfetto_trace.json.gz
    events = _events(tmp_path)
    by_name = {e["name"]: e for e in events}
    assert "pyjax compile jit(<lambda>)" in by_name             # pyjax's compile annotation
    assert "PjRtCpuClient::Compile" in by_name                  # XLA's own compile event
    assert any(n.startswith("CommonPjRtLoadedExecutable::Execute") for n in by_name)
    assert by_name["train"]["args"] == {"step_num": "3"}
    assert by_name["my_label"]["args"] == {"detail": "x"}
    assert any(n.endswith("<locals>.step") for n in by_name)   # annotate_function
    for e in events:
        assert e["ts"] >= 0 and e["dur"] >= 0
    # nested in time: the step spans the label, which spans the compile and the execution
    train, label = by_name["train"], by_name["my_label"]
    compile_event = by_name["pyjax compile jit(<lambda>)"]
    assert train["ts"] <= label["ts"] <= compile_event["ts"]
    assert compile_event["ts"] + compile_event["dur"] <= label["ts"] + label["dur"]


def test_one_trace_at_a_time_and_stop_without_start(tmp_path):
    jax.profiler.start_trace(tmp_path)
    try:
        with pytest.raises(RuntimeError, match="already been started"):
            jax.profiler.start_trace(tmp_path)
    finally:
        jax.profiler.stop_trace()
    with pytest.raises(RuntimeError, match="No profile started"):
        jax.profiler.stop_trace()


def test_device_memory_profile_is_gzipped_pprof(tmp_path):
    keep = jnp.ones((128, 128)) + 1
    profile = jax.profiler.device_memory_profile()
    assert profile[:2] == b"\x1f\x8b" and len(gzip.decompress(profile)) > 0
    jax.profiler.save_device_memory_profile(tmp_path / "mem.prof")
    assert (tmp_path / "mem.prof").read_bytes()[:2] == b"\x1f\x8b"
    del keep


def test_annotations_outside_a_trace_are_inert():
    @jax.profiler.annotate_function
    def f(a):
        return a + 1
    with jax.profiler.TraceAnnotation("idle"):
        assert f(1) == 2
    assert f.__name__ == "f"
