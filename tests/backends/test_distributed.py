"""jax.distributed with real processes on loopback: 2 processes x 2 CPU devices join
through jaxlib's coordination service and run XLA collectives between processes over
Gloo (a psum over all 4 devices, a sharded matmul, multihost_utils); a process that dies
makes the other fail with the runtime's message within the heartbeat timeout; bad uses of
initialize raise. Every process is started here, on 127.0.0.1 with a free port, under a
timeout."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from repo_paths import REPO_ROOT

WORKER = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    import pyjax as jax
    from pyjax import lax
    from pyjax.experimental import multihost_utils
    from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P
    pid, port, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    jax.config.update("jax_num_cpu_devices", 2)
    jax.distributed.initialize(f"127.0.0.1:{port}", 2, pid, initialization_timeout=60,
                               heartbeat_timeout_seconds=5)
    if mode == "die" and pid == 1:
        os._exit(3)   # a crash: no shutdown
    out = {"index": jax.process_index(), "count": jax.process_count(),
           "devices": [d.id for d in jax.devices()],
           "local": [d.id for d in jax.local_devices()],
           "initialized": jax.distributed.is_initialized()}
    try:
        jax.distributed.initialize(f"127.0.0.1:{port}", 2, pid)
    except RuntimeError as err:
        out["twice"] = str(err)
    mesh = jax.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))
    rows = NamedSharding(mesh, P("i"))
    data = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    x = jax.make_array_from_callback((4, 3), rows, lambda idx: data[idx])
    out["addressable_rows"] = [s.index[0].start for s in x.addressable_shards]
    out["repr"] = repr(x)
    total = jax.jit(jax.shard_map(lambda a: lax.psum(a, "i"), mesh=mesh, in_specs=P("i"),
                                  out_specs=P()))(x)
    out["psum"] = np.asarray(total).tolist()
    a = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    b = np.arange(24.0, dtype=np.float32).reshape(4, 6) / 10
    A = jax.make_array_from_callback((8, 4), rows, lambda idx: a[idx])
    B = jax.device_put(b, NamedSharding(mesh, P()))
    C = jax.jit(lambda p, q: p @ q, out_shardings=NamedSharding(mesh, P()))(A, B)
    out["matmul_error"] = float(np.abs(np.asarray(C) - a @ b).max())
    local = jax.make_array_from_process_local_data(rows, a[4 * pid:4 * pid + 4])
    out["local_data_shape"] = list(local.shape)
    out["gathered"] = multihost_utils.process_allgather(local).tolist() == a.tolist()
    out["allgather"] = multihost_utils.process_allgather(np.array([pid, 10 * pid])).tolist()
    out["broadcast"] = int(multihost_utils.broadcast_one_to_all(np.array(pid + 5)))
    multihost_utils.sync_global_devices("done")
    jax.distributed.shutdown()
    print("RESULT " + json.dumps(out), flush=True)
""")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(code, *args):
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), TF_CPP_MIN_LOG_LEVEL="1")
    env.pop("XLA_FLAGS", None)
    env.pop("PYJAX_EXECUTOR", None)
    return subprocess.Popen([sys.executable, "-c", code, *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc, timeout):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"a process hung past {timeout} s:\n{err[-3000:]}")
    return proc.returncode, out, err


def _result(out):
    line = next(line for line in out.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def test_two_processes_compute_together():
    port = _free_port()
    procs = [_start(WORKER, pid, port, "ok") for pid in (0, 1)]
    finished = [_finish(p, 240) for p in procs]
    for rc, _, err in finished:
        assert rc == 0, err[-3000:]
    results = [_result(out) for _, out, _ in finished]
    for pid, r in enumerate(results):
        assert (r["index"], r["count"]) == (pid, 2) and r["initialized"]
        assert r["devices"] == [0, 1, 2048, 2049]
        assert r["local"] == [[0, 1], [2048, 2049]][pid]
        assert "should only be called once" in r["twice"]
        assert r["addressable_rows"] == [[0, 1], [2, 3]][pid]
        assert r["repr"] == "Array(shape=(4, 3), dtype=float32)"
        assert r["psum"] == [[18.0, 22.0, 26.0]]
        assert r["matmul_error"] < 1e-4
        assert r["local_data_shape"] == [8, 4] and r["gathered"]
        assert r["allgather"] == [[0, 0], [1, 10]]
        assert r["broadcast"] == 5


def test_a_dead_process_makes_the_other_fail_not_hang():
    port = _free_port()
    procs = [_start(WORKER, pid, port, "die") for pid in (0, 1)]
    start = time.monotonic()
    rc, _, err = _finish(procs[0], 120)
    _finish(procs[1], 30)
    assert rc != 0
    assert "stopped sending heartbeats" in err or "JAX distributed service detected " \
        "fatal errors" in err, err[-3000:]
    assert time.monotonic() - start < 120


UNREACHABLE = textwrap.dedent("""
    import sys
    import pyjax as jax
    jax.distributed.initialize(f"127.0.0.1:{sys.argv[1]}", 2, 1, initialization_timeout=3)
    print("RESULT joined nobody", flush=True)
""")

LATE = textwrap.dedent("""
    import sys
    import pyjax as jax
    import pyjax.numpy as jnp
    jax.jit(lambda v: v + 1)(jnp.ones(2)).block_until_ready()
    try:
        jax.distributed.initialize(f"127.0.0.1:{sys.argv[1]}", 2, 0)
    except RuntimeError as err:
        print("RESULT", err, flush=True)
""")


def test_unreachable_coordinator_fails_within_the_timeout():
    start = time.monotonic()
    rc, out, err = _finish(_start(UNREACHABLE, _free_port()), 90)
    assert rc != 0 and "RESULT" not in out
    assert "RegisterTask" in err and "Terminating process" in err, err[-3000:]
    assert time.monotonic() - start < 90


def test_initialize_after_a_computation_raises():
    rc, out, err = _finish(_start(LATE, _free_port()), 60)
    assert rc == 0, err[-3000:]
    assert "must be called before any JAX computations" in out


def test_initialize_needs_its_arguments():
    import pyjax as jax
    with pytest.raises(ValueError, match="coordinator_address"):
        jax.distributed.initialize()
    with pytest.raises(ValueError, match="process_id 3 must be in"):
        jax.distributed.initialize("127.0.0.1:1", 2, 3)


LEFT_CONNECTED = textwrap.dedent("""
    import sys
    import pyjax as jax
    jax.distributed.initialize(f"127.0.0.1:{sys.argv[1]}", num_processes=1, process_id=0)
    print("initialized")
""")


def test_exit_without_shutdown_leaves_the_group_and_logs_as_jax(monkeypatch):
    # As in JAX, the interpreter's exit shuts the runtime down (else the coordination
    # service aborts the process); under jax_logging_level=INFO the Python and C++ INFO
    # lines of JAX 0.10.2 reach stderr.
    monkeypatch.setenv("JAX_LOGGING_LEVEL", "INFO")
    port = _free_port()
    rc, out, err = _finish(_start(LEFT_CONNECTED, port), 60)
    assert rc == 0, err[-3000:]
    assert out == "initialized\n"
    assert "jax._src.distributed:" in err
    assert f"Starting JAX distributed service on 127.0.0.1:{port}" in err
    assert f"Connecting to JAX distributed service on 127.0.0.1:{port}" in err
    assert "Initializing CoordinationService" in err
    assert "Terminating process" not in err
