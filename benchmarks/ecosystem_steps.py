"""The ecosystem table of issue 19: for each program of tests/ecosystem_programs.py
(optax, equinox, flax linen and nnx, numpyro, blackjax, chex, einops), whether it runs on
pyjax, whether its numbers match JAX's in the same run, and its steady-state jitted step
time on pyjax and on JAX.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 TF_CPP_MIN_LOG_LEVEL=1 \\
        python benchmarks/ecosystem_steps.py --jax-python /path/to/jax-venv/bin/python \\
        [--pyjax-python PYTHON] [--rounds N] [--cpu-time] [--only TEXT] [--paired]

The pyjax side runs with `pyjax.alias_jax()` in an interpreter that has the libraries
(./dev installs them with --no-deps); the JAX side in one that has JAX 0.10.2 and the
same library versions. Each framework runs in its own process, in turn, for N rounds
(3 by default); a step time is the median over the rounds of run.py's median_time, and
the last column gives the median and range of the rounds' own pyjax / JAX ratios (on a
loaded machine use --cpu-time and 7 or more rounds). --paired gives only the step times,
from the two frameworks' processes alive at once (paired.py): steadier on a shared
machine."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import paired

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# table row -> (program, the factory of its step (a callable running one jitted step),
# the factory's arguments)
PROGRAMS = {
    "optax: MLP, Adam + clipping, 50 param leaves": (
        "optax_mlp_training", "optax_mlp_step", {"layers": 25}),
    "equinox: MLP, filter_jit + error_if": ("equinox_mlp_training", "equinox_mlp_step", {}),
    "flax linen: MLP + optax SGD": ("flax_linen_training", "flax_linen_step", {}),
    "flax nnx: MLP + nnx.Optimizer, nnx.jit": ("flax_nnx_training", "flax_nnx_step", {}),
    "numpyro: NUTS + SVI (step: SVI update)": ("numpyro_regression", "numpyro_svi_step", {}),
    "blackjax: NUTS (step: jitted 100-step scan)": ("blackjax_nuts", "blackjax_nuts_run", {}),
    "chex: assertions (step: jitted call)": ("chex_assertions", "chex_jitted_call", {}),
    "einops + jaxtyping (step: jitted reduce)": (
        "einops_and_jaxtyping", "einops_jitted_call", {}),
}


def _import_programs(framework):
    """(jax, the ecosystem_programs module, run.py) in a child, `jax` being pyjax's alias
    on the pyjax side."""
    sys.path[:0] = [HERE, os.path.join(ROOT, "tests", "ecosystem")]
    if framework == "pyjax":
        import pyjax
        pyjax.alias_jax()
    import jax
    import ecosystem_programs
    import run
    return jax, ecosystem_programs, run


def run_child(framework, only, cpu_time):
    """Runs every program and times its step in this process; prints {row: {"result":
    ..., "step": seconds} or {"error": message}} as JSON."""
    jax, ecosystem_programs, run = _import_programs(framework)
    if cpu_time:
        run.clock = time.process_time
    out = {}
    for row, (program, step_factory, kwargs) in PROGRAMS.items():
        if only and not any(o in row for o in only):
            continue
        try:
            result = getattr(ecosystem_programs, program)()
            step = getattr(ecosystem_programs, step_factory)(**kwargs)
            paired.settle(lambda step=step: jax.block_until_ready(step()))
            seconds = run.median_time(lambda step=step: jax.block_until_ready(step()))
        except Exception as err:   # report and go on: one broken program must not hide
            out[row] = {"error": f"{type(err).__name__}: {err}"[:300]}
            continue
        out[row] = {"result": result, "step": seconds}
    print(json.dumps(out))


def serve_steps(framework, only, cpu_time):
    """For --paired: serves the steps of the programs that run here (paired.serve)."""
    jax, ecosystem_programs, _ = _import_programs(framework)
    steps = {}
    for row, (_, step_factory, kwargs) in PROGRAMS.items():
        if not only or any(o in row for o in only):
            step = getattr(ecosystem_programs, step_factory)(**kwargs)
            steps[row] = lambda step=step: jax.block_until_ready(step())
    paired.serve(steps, time.process_time if cpu_time else time.perf_counter)


def run_paired(args):
    """The step-time columns with pyjax's and JAX's processes alive at once, timing
    alternate batches (paired.py)."""
    servers = []
    for framework, python in (("pyjax", args.pyjax_python), ("jax", args.jax_python)):
        cmd = [python, os.path.abspath(__file__), "--jax-python", args.jax_python,
               "--serve", framework] + (["--cpu-time"] if args.cpu_time else [])
        for o in args.only or ():
            cmd += ["--only", o]
        env = dict(os.environ, PYTHONPATH=ROOT if framework == "pyjax" else "")
        servers.append(paired.Server(cmd, env=env, cwd=ROOT))
    print(paired.describe(args.cpu_time) + "\n")
    print("| library program | step pyjax | step JAX | pyjax / JAX (quartiles) |")
    print("|---|---|---|---|")
    for row, mine, theirs, (q1, median, q3) in paired.compare(*servers):
        print(f"| {row} | {mine * 1e6:.1f} us | {theirs * 1e6:.1f} us | {median:.3f}x "
              f"({q1:.3f}-{q3:.3f}) |")
    for server in servers:
        server.close()


def _matches(got, want, rtol=1e-4):
    """Whether two programs' results agree (floats to rtol, everything else exactly)."""
    if got.keys() != want.keys():
        return False
    for key in want:
        a, b = got[key], want[key]
        floats = b if isinstance(b, list) else [b]
        if all(isinstance(v, float) for v in floats):
            if not np.allclose(a, b, rtol=rtol, atol=0):
                return False
        elif a != b:
            return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyjax-python", default=sys.executable,
                        help="interpreter with pyjax's dependencies and the libraries")
    parser.add_argument("--jax-python", required=True,
                        help="interpreter with JAX 0.10.2 and the same library versions")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpu-time", action="store_true",
                        help="time steps by the process's CPU time, not wall time")
    parser.add_argument("--only", action="append", help="rows whose title contains this")
    parser.add_argument("--paired", action="store_true",
                        help="only the step times, from alternate batches of the two "
                             "frameworks' processes alive at once (see paired.py)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return run_child(args.child, args.only, args.cpu_time)
    if args.serve:
        return serve_steps(args.serve, args.only, args.cpu_time)
    if args.paired:
        return run_paired(args)
    runs = {"pyjax": [], "jax": []}
    for _ in range(args.rounds):
        for framework, python in (("pyjax", args.pyjax_python), ("jax", args.jax_python)):
            cmd = [python, os.path.abspath(__file__), "--jax-python", args.jax_python,
                   "--child", framework]
            cmd += ["--cpu-time"] if args.cpu_time else []
            for o in args.only or ():
                cmd += ["--only", o]
            env = dict(os.environ, PYTHONPATH=ROOT if framework == "pyjax" else "")
            done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
            if done.returncode:
                sys.exit(f"{framework} child failed:\n{done.stderr[-3000:]}")
            runs[framework].append(json.loads(done.stdout.splitlines()[-1]))
    clock = "CPU time" if args.cpu_time else "wall time"
    print(f"{args.rounds} rounds, step time: median ({clock}); load average "
          f"{os.getloadavg()[0]:.1f}\n")
    print("| library program | runs | matches JAX | step pyjax | step JAX | pyjax / JAX | "
          "rounds' ratios |")
    print("|---|---|---|---|---|---|---|")
    for row in runs["pyjax"][0]:
        mine, theirs = runs["pyjax"][0][row], runs["jax"][0].get(row, {})
        if "error" in mine:
            print(f"| {row} | no: {mine['error']} | | | | |")
            continue
        if "error" in theirs:
            print(f"| {row} | yes | JAX failed: {theirs['error']} | | | |")
            continue
        step = {f: statistics.median(r[row]["step"] for r in runs[f]) for f in runs}
        # each round's two children ran back to back, under about the same load: their
        # ratio drifts less with the machine's load than either time
        ratios = sorted(p[row]["step"] / j[row]["step"] for p, j in zip(*runs.values()))
        same = "yes" if _matches(mine["result"], theirs["result"]) else (
            f"no: {mine['result']} vs {theirs['result']}")
        print(f"| {row} | yes | {same} | {step['pyjax'] * 1e6:.1f} us | "
              f"{step['jax'] * 1e6:.1f} us | {step['pyjax'] / step['jax']:.2f}x | median "
              f"{statistics.median(ratios):.2f}x, {ratios[0]:.2f}x-{ratios[-1]:.2f}x |")


if __name__ == "__main__":
    main()
