"""Paired timing: pyjax's and JAX's processes alive at once, timing alternate batches of
the same calls. The two batches of a pair meet the same state of the machine, where two
runs started seconds apart on a shared machine see its speed drift by tens of percent;
the median of the pairs' ratios is then steadier than the ratio of two medians. Used by
run.py --paired and ecosystem_steps.py --paired."""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time

PAIRS = 40             # pairs of batches per call
BATCH_SECONDS = 0.05   # about how long one batch runs
WARM_CALLS = 20        # calls before timing: compile, and reach the steady state
SETTLE_SECONDS = 2.5   # a step runs this long before timing: pyjax packs a step's
                       # results once it has run 2 s (docs/architecture.md)
PACKING_THREAD = "pyjax packed program"   # the thread compiling a packed program


def describe(cpu_time):
    """The line saying how a paired table was measured."""
    return (f"pyjax and JAX alive at once, {PAIRS} pairs of ~{BATCH_SECONDS * 1e3:.0f} ms "
            f"batches; clock: {'CPU time' if cpu_time else 'wall time'}")


def settle(call):
    """Runs `call` into its steady state: WARM_CALLS calls and SETTLE_SECONDS, then waits
    for the packed program pyjax compiles in the background for a long-running step
    (other frameworks' and libraries' threads are not waited for: a thread pool's
    workers never end) and runs WARM_CALLS more. The seconds count from the end of the
    first call: pyjax's clock for packing starts at the first call of a compiled step,
    so a slow first compile must not eat into them."""
    call()
    start = time.perf_counter()
    calls = 1
    while calls < WARM_CALLS or time.perf_counter() - start < SETTLE_SECONDS:
        call()
        calls += 1
    for thread in threading.enumerate():
        if thread.name == PACKING_THREAD:
            thread.join()
    for _ in range(WARM_CALLS):
        call()


def serve(calls, clock=time.perf_counter):
    """The framework process's side: warms each of `calls` ({label: callable}), prints
    their labels as one JSON list, then answers each "INDEX NUMBER" line on stdin with
    the seconds per call of NUMBER calls in a row of the INDEX-th call."""
    calls = list(calls.items())
    for _, call in calls:
        settle(call)
    print(json.dumps([label for label, _ in calls]), flush=True)
    for line in sys.stdin:
        index, number = map(int, line.split())
        call = calls[index][1]
        start = clock()
        for _ in range(number):
            call()
        print((clock() - start) / number, flush=True)


class Server:
    """A running `serve` process, started with `command` (subprocess.Popen's other
    arguments in `popen`)."""

    def __init__(self, command, **popen):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, **popen)
        ready = self.process.stdout.readline()
        if not ready:
            raise RuntimeError(f"{' '.join(command)} exited before serving "
                               f"(status {self.process.wait()})")
        self.labels = json.loads(ready)

    def batch(self, label, number):
        """Seconds per call of `number` calls of `label` in a row."""
        self.process.stdin.write(f"{self.labels.index(label)} {number}\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def compare(pyjax, jax):
    """For each label both Servers serve: (label, pyjax's and JAX's median seconds per
    call, and the quartiles (q1, median, q3) of the pairs' pyjax / JAX ratios), from
    PAIRS pairs of batches, which of the two goes first alternating."""
    rows = []
    for label in [label for label in pyjax.labels if label in jax.labels]:
        number = max(1, round(BATCH_SECONDS / pyjax.batch(label, 4)))
        times, ratios = ([], []), []
        for i in range(PAIRS):
            order = (0, 1) if i % 2 == 0 else (1, 0)
            pair = [0.0, 0.0]
            for side in order:
                pair[side] = (pyjax, jax)[side].batch(label, number)
                times[side].append(pair[side])
            ratios.append(pair[0] / pair[1])
        rows.append((label, statistics.median(times[0]), statistics.median(times[1]),
                     tuple(statistics.quantiles(ratios, n=4))))
    return rows
