"""pyjax from many threads at once: every thread starts at the root (eager) trace, and
the client, devices, caches and jit's traces are safe under concurrent first use. Every
wait is bounded: a deadlock fails the test instead of hanging it."""
import subprocess
import sys
import textwrap
import threading

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src.array import Array

TIMEOUT = 120   # seconds for any one group of threads


def _run_threads(target, count):
    """Runs target(i) in `count` threads started together; returns the errors raised."""
    errors = []
    start = threading.Barrier(count)

    def body(i):
        try:
            start.wait(TIMEOUT)
            target(i)
        except BaseException as err:   # noqa: BLE001 - reported by the test below
            errors.append(f"thread {i}: {type(err).__name__}: {err}")

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    hung = [i for i, t in enumerate(threads) if t.is_alive()]
    assert not hung, f"threads {hung} did not finish within {TIMEOUT} s"
    return errors


def test_a_new_thread_starts_at_the_root_trace():
    results = {}

    def work(_):
        results["eager"] = jnp.ones(3) + 1
        results["jit"] = jax.jit(lambda x: x * 2)(jnp.arange(3.0))
        results["grad"] = jax.grad(lambda x: x ** 3)(2.0)
        results["vmap"] = jax.vmap(lambda v: v.sum())(jnp.ones((2, 3)))

    assert _run_threads(work, 1) == []
    assert type(results["eager"]) is Array and results["eager"].tolist() == [2.0] * 3
    assert results["jit"].tolist() == [0.0, 2.0, 4.0]
    assert float(results["grad"]) == 12.0
    assert results["vmap"].tolist() == [3.0, 3.0]


def test_tracing_in_one_thread_leaves_other_threads_eager():
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def traced(x):
        inside.set()
        assert release.wait(TIMEOUT), "the eager thread never released the trace"
        return x + 1

    def trace_it():
        seen["jit"] = jax.jit(traced)(jnp.ones(2))

    def eager_meanwhile():
        assert inside.wait(TIMEOUT), "tracing never started"
        seen["eager"] = jnp.ones(2) * 3   # while the other thread is inside the trace
        release.set()

    threads = [threading.Thread(target=trace_it, daemon=True),
               threading.Thread(target=eager_meanwhile, daemon=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads)
    assert type(seen["eager"]) is Array and seen["eager"].tolist() == [3.0, 3.0]
    assert seen["jit"].tolist() == [2.0, 2.0]


def test_eight_threads_mixing_eager_jit_grad_and_vmap():
    traces = []
    # Shared functions, first called (and traced) by all threads at once.
    shared_affine = jax.jit(lambda x, a: x * a + 1.0)
    shared_grad = jax.jit(jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)))
    per_row = jax.vmap(lambda row: jnp.dot(row, row))

    def work(i):
        # a function of this thread's own, traced while the others trace theirs
        own = jax.jit(lambda x: traces.append(i) or jnp.sin(x) * i)
        x = jnp.arange(4.0) + i
        w = jnp.full((4, 2), 0.1 * (i + 1))
        rows = jnp.arange(6.0).reshape(2, 3) + i
        for step in range(15):
            eager = (jnp.ones(4) * i + step).sum()
            assert float(eager) == 4.0 * (i + step)
            np.testing.assert_allclose(shared_affine(x, float(step)),
                                       np.arange(4.0) * step + i * step + 1.0, rtol=1e-6)
            np.testing.assert_allclose(own(x), np.sin(np.arange(4.0) + i) * i, rtol=1e-5)
            xs = np.stack([np.arange(4.0) + i] * 3).astype(np.float32)
            h = np.tanh(xs @ np.full((4, 2), 0.1 * (i + 1), np.float32))
            want = xs.T @ (2 * h * (1 - h ** 2))
            np.testing.assert_allclose(shared_grad(w, jnp.asarray(xs)), want, rtol=2e-3)
            r = np.arange(6.0).reshape(2, 3) + i
            np.testing.assert_allclose(per_row(rows), (r * r).sum(1), rtol=1e-6)
            g = jax.grad(lambda v: jnp.sum(v ** 3))(x)
            np.testing.assert_allclose(g, 3 * (np.arange(4.0) + i) ** 2, rtol=1e-6)

    errors = _run_threads(work, 8)
    assert errors == []
    assert sorted(traces) == list(range(8))   # each thread's own function traced once
    assert shared_affine._cache_size() == 1


def test_one_function_traced_by_many_threads_at_once_keeps_one_trace():
    f = jax.jit(lambda x: x * 2)
    results = []
    assert _run_threads(lambda i: results.append(f(jnp.ones(3)).tolist()), 8) == []
    assert results == [[2.0] * 3] * 8 and f._cache_size() == 1


_FIRST_USE_PROGRAM = """
import threading
import pyjax as jax
import pyjax.numpy as jnp

errors, results = [], []
start = threading.Barrier(4)

def first_use(i):
    try:
        start.wait(60)
        # every thread's first XLA call: the client and devices are made here
        x = jax.device_put(jnp.arange(3.0) + i)
        results.append(jax.jit(lambda v: v * 2)(x).tolist())
    except BaseException as err:
        errors.append(f"{type(err).__name__}: {err}")

threads = [threading.Thread(target=first_use, args=(i,), daemon=True) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join(60)
assert not any(t.is_alive() for t in threads), "a thread hung"
assert not errors, errors
assert sorted(results) == [[2.0 * (k + i) for k in range(3)] for i in range(4)], results
print("ok", len(jax.devices()))
"""


def test_first_xla_use_from_four_threads_at_once_in_a_fresh_process():
    for _ in range(3):   # the race is timing-dependent: try it a few times
        proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_FIRST_USE_PROGRAM)],
                              capture_output=True, text=True, timeout=TIMEOUT)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.split() == ["ok", "1"]
