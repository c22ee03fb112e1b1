"""pyjax benchmarks, side by side with NumPy and (when installed) JAX and PyTorch, in one
run.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        .venv/bin/python benchmarks/run.py [--rounds N] [--only NAME]

Each workload is timed as the median of repeated batches, in every one of N rounds (3 by
default); a round runs each framework once, in turn, so slow drift of the machine hits
all of them alike. The table gives the median over the rounds and the ratio pyjax / other
(below 1 means pyjax is faster). JAX and PyTorch are imported only here, and only if
installed; benchmarks/torch_workloads.py says what the PyTorch rows measure."""
from __future__ import annotations

import argparse
import functools
import importlib
import importlib.util
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import paired

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# What median_time reads: wall time, or with --cpu-time the CPU time of the process (all
# its threads, XLA's included), which time spent descheduled on a loaded machine does not
# inflate.
clock = time.perf_counter


def median_time(fn, *, repeat=7, min_batch_seconds=0.05, max_number=100_000):
    """Median seconds per call over `repeat` batches sized to run >= min_batch_seconds."""
    fn()
    number, elapsed = 1, 0.0
    while number < max_number:
        start = clock()
        for _ in range(number):
            fn()
        elapsed = clock() - start
        if elapsed >= min_batch_seconds:
            break
        number *= 4
    times = []
    for _ in range(repeat):
        start = clock()
        for _ in range(number):
            fn()
        times.append((clock() - start) / number)
    return statistics.median(times)


def available_frameworks():
    names = ["numpy", "pyjax"]
    names += [n for n in ("jax", "torch") if importlib.util.find_spec(n) is not None]
    return names


def load_framework(name):
    """{name: (module, its numpy)}; workloads always time NumPy itself, so "numpy" is {}."""
    if name == "numpy":
        return {}
    return {name: (importlib.import_module(name), importlib.import_module(name + ".numpy"))}


def ready(x):
    """Wait for a result (pytrees of arrays)."""
    for leaf in (x if isinstance(x, (list, tuple)) else [x]):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


# --- workloads: each returns {framework: seconds} -----------------------------------------

def eager_add(fw, n):
    out = {}
    x = np.ones(n, np.float32)
    out["numpy"] = median_time(lambda: x + x)
    for name, (_, jnp) in fw.items():
        a = jnp.ones(n)
        out[name] = median_time(lambda a=a: ready(a + a))
    return out



# What eager code does besides x+y: a Python scalar, a unary function, a reduction, an
# index and a small matrix product (n=10 vectors, 4x4 matrices).
EAGER_OPS = {
    "x * 2.0": lambda x, m, jnp: x * 2.0,
    "jnp.sin": lambda x, m, jnp: jnp.sin(x),
    "jnp.sum": lambda x, m, jnp: jnp.sum(x),
    "x[1]": lambda x, m, jnp: x[1],
    "m @ m": lambda x, m, jnp: m @ m,
}


def eager_ops(fw):
    out = {}
    x, m = np.ones(10, np.float32), np.ones((4, 4), np.float32)
    for label, op in EAGER_OPS.items():
        out[f"numpy {label}"] = median_time(lambda op=op: op(x, m, np))
    for name, (_, jnp) in fw.items():
        xj, mj = jnp.asarray(x), jnp.asarray(m)
        for label, op in EAGER_OPS.items():
            out[f"{name} {label}"] = median_time(
                lambda op=op, xj=xj, mj=mj, jnp=jnp: ready(op(xj, mj, jnp)))
    return out

def jit_tiny_call(fw):
    out = {}
    for name, (jax, jnp) in fw.items():
        f = jax.jit(lambda x, y: x * y + 1.0)
        a, b = jnp.ones(3), jnp.ones(3)
        ready(f(a, b))
        out[name] = median_time(lambda f=f, a=a, b=b: ready(f(a, b)))
    return out


def jit_inline_call(fw):
    """`jax.jit(f)(x, y)` written inline: a new jit object of one function every call
    (JAX keys its caches on the function, so only the first call traces)."""
    out = {}
    for name, (jax, jnp) in fw.items():
        def f(x, y):
            return x * y + 1.0
        a, b = jnp.ones(3), jnp.ones(3)
        ready(jax.jit(f)(a, b))
        out[name] = median_time(lambda jax=jax, f=f, a=a, b=b: ready(jax.jit(f)(a, b)))
    return out


def jit_numpy_call(fw):
    """A jitted call fed a NumPy batch (128x784 float32) as data loaders produce them."""
    out = {}
    batch = np.random.default_rng(0).standard_normal((128, 784)).astype(np.float32)
    for name, (jax, jnp) in fw.items():
        f = jax.jit(lambda x, w, jnp=jnp: jnp.tanh(x @ w))
        w = jnp.ones((784, 10)) * 0.01
        ready(f(batch, w))
        out[name] = median_time(lambda f=f, w=w: ready(f(batch, w)))
    return out


def jit_pytree_call(fw):
    """A jitted call the way training code makes them: a dict of parameters (3 layers of
    weight and bias), an input, and a static flag passed by keyword."""
    out = {}
    for name, (jax, jnp) in fw.items():
        def apply(params, x, training=False, jnp=jnp):
            for layer in params["layers"]:
                x = jnp.tanh(x @ layer["w"] + layer["b"])
            return x * 0.5 if training else x
        f = jax.jit(apply, static_argnames="training")
        params = {"layers": [{"w": jnp.ones((4, 4)), "b": jnp.zeros(4)} for _ in range(3)]}
        x = jnp.ones((2, 4))
        ready(f(params, x, training=True))
        out[name] = median_time(lambda f=f, p=params, x=x: ready(f(p, x, training=True)))
    return out


def mlp_init(jnp, sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [(jnp.asarray(rng.normal(0, np.sqrt(2 / m), (m, n)).astype(np.float32)),
             jnp.asarray(np.zeros(n, np.float32))) for m, n in zip(sizes[:-1], sizes[1:])]


def mlp_step_fn(jax, jnp):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp.maximum(h @ w + b, 0.0)
        w, b = params[-1]
        logits = h @ w + b
        shifted = logits - jnp.max(logits, axis=1, keepdims=True)
        log_probs = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=1, keepdims=True))
        return -jnp.mean(jnp.sum(log_probs * y, axis=1))

    def step(params, x, y):
        grads = jax.grad(loss)(params, x, y)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)]
    return step


def mlp_data(jnp, batch=128):
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.normal(size=(batch, 784)).astype(np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)])
    return x, y


def mlp_first_call(fw):
    """Trace, lower and compile of the MLP train step, measured separately."""
    out = {}
    for name, (jax, jnp) in fw.items():
        params = mlp_init(jnp, [784, 512, 512, 10])
        x, y = mlp_data(jnp)
        jitted = jax.jit(mlp_step_fn(jax, jnp))
        t0 = time.perf_counter()
        traced = jitted.trace(params, x, y)
        t1 = time.perf_counter()
        lowered = traced.lower()
        t2 = time.perf_counter()
        lowered.compile()
        t3 = time.perf_counter()
        out[name + " trace"] = t1 - t0
        out[name + " lower"] = t2 - t1
        out[name + " compile"] = t3 - t2
    return out


_FIRST_CALL_PROGRAM = """
import sys, time
sys.path.insert(0, {here!r})
import run
jax, jnp = run.load_framework({name!r})[{name!r}]
params = run.mlp_init(jnp, [784, 512, 512, 10])
x, y = run.mlp_data(jnp)
step = jax.jit(run.mlp_step_fn(jax, jnp))
jax.devices()   # the backend is up (pyjax starts XLA's client at first use, JAX at import)
start = time.perf_counter()
run.ready(run.jax_leaves(step(params, x, y)))
print(time.perf_counter() - start)
"""


def mlp_first_call_fresh_process(fw):
    """The first call of the MLP train step (trace, compile or load, run) in a new
    process, its backend started: pyjax with an empty persistent compilation cache, then
    with the one that run left (JAX's persistent cache is off by default: its cold call is
    what users get)."""
    out = {}
    here = os.path.dirname(os.path.abspath(__file__))
    for name in fw:
        code = _FIRST_CALL_PROGRAM.format(here=here, name=name)
        with tempfile.TemporaryDirectory() as cache_dir:
            env = dict(os.environ, PYJAX_CACHE_DIR=cache_dir)
            env.pop("JAX_COMPILATION_CACHE_DIR", None)

            def first_call(code=code, env=env):
                res = subprocess.run([sys.executable, "-c", code], env=env,
                                     capture_output=True, text=True, check=True)
                return float(res.stdout.split()[-1])
            out[name + " cold"] = first_call()
            if name == "pyjax":
                out[name + " warm cache"] = first_call()
                out[name + " warm / cold (x)"] = out[name + " warm cache"] / out[name + " cold"]
    return out


def image_sampler(jax, jnp, grid=5, code=10, pixels=28):
    """A generative model's sampler: normal codes, a small decoder, a bernoulli draw per
    pixel, the images tiled into a grid (the shape of examples/mnist_vae.py's
    image_sample; the tiling reads the random draw through many slices)."""
    def sample(key, params):
        code_key, pixel_key = jax.random.split(key)
        h = jax.random.normal(code_key, (grid * grid, code))
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            h = jnp.maximum(h, 0.0) if i < len(params) - 1 else h
        images = jax.random.bernoulli(pixel_key, jax.nn.sigmoid(h))
        images = images.reshape(grid * grid, pixels, pixels)
        return jnp.vstack([jnp.hstack([images[r * grid + c].T for c in range(grid)])
                           for r in range(grid)])
    return jax.jit(sample)


def random_heavy_compile(fw):
    """The first call (trace, lower, compile, run) of a jitted sampler that draws normal
    and bernoulli samples over a batch."""
    out = {}
    for name, (jax, jnp) in fw.items():
        params = mlp_init(jnp, [10, 256, 28 * 28])
        key = jax.random.key(0)
        sample = image_sampler(jax, jnp)
        start = time.perf_counter()
        ready(sample(key, params))
        out[name + " first call"] = time.perf_counter() - start
    return out


def numpy_mlp_step(params, x, y):
    hs, h = [x], x
    for w, b in params[:-1]:
        h = np.maximum(h @ w + b, 0.0)
        hs.append(h)
    w, b = params[-1]
    logits = h @ w + b
    logits = logits - logits.max(1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(1, keepdims=True)
    g = (p - y) / len(x)
    new = []
    for i in range(len(params) - 1, -1, -1):
        w, b = params[i]
        gw, gb = hs[i].T @ g, g.sum(0)
        if i:
            g = (g @ w.T) * (hs[i] > 0)
        new.append((w - 0.01 * gw, b - 0.01 * gb))
    return new[::-1]


def mlp_train_step(fw):
    out = {}
    params = mlp_init(np, [784, 512, 512, 10])
    x, y = mlp_data(np)
    out["numpy"] = median_time(lambda: numpy_mlp_step(params, x, y))
    for name, (jax, jnp) in fw.items():
        p = mlp_init(jnp, [784, 512, 512, 10])
        xj, yj = mlp_data(jnp)
        step = jax.jit(mlp_step_fn(jax, jnp))
        out[name] = median_time(lambda step=step, p=p, xj=xj, yj=yj: ready(
            jax_leaves(step(p, xj, yj))))
    return out


def deep_mlp_init(jnp, layers=25, width=16, seed=0):
    """A parameter pytree of 2 * layers small leaves: a list of {"w", "b"} dicts."""
    rng = np.random.default_rng(seed)
    return [{"w": jnp.asarray(rng.normal(0, 1 / np.sqrt(width), (width, width))
                              .astype(np.float32)),
             "b": jnp.asarray(np.zeros(width, np.float32))} for _ in range(layers)]


def deep_mlp_steps(jax, jnp):
    """(sgd, adam): jitted train steps over deep_mlp_init's parameters. sgd takes
    (params, x, y) and returns (new params, loss); adam takes (params, (m, v), x, y) and
    returns (new params, new (m, v), loss), as optax's update + apply_updates do."""
    def loss(params, x, y):
        for layer in params:
            x = jnp.tanh(x @ layer["w"] + layer["b"])
        return jnp.mean((x - y) ** 2)

    def sgd(params, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads), value

    def adam(params, state, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        m, v = state
        tree_map = jax.tree_util.tree_map
        m = tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
        v = tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
        params = tree_map(lambda p, m, v: p - 1e-3 * m / (jnp.sqrt(v) + 1e-8), params, m, v)
        return params, (m, v), value
    return jax.jit(sgd), jax.jit(adam)


def deep_mlp_step_calls(jax, jnp):
    """{"sgd": call, "adam": call}: one train step each, as a training loop runs it (each
    step's outputs are the next one's inputs), waiting for its loss (all outputs of one
    execution are ready together)."""
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.normal(size=(8, 16)).astype(np.float32))
    y = jnp.asarray(rng.normal(size=(8, 16)).astype(np.float32))
    params = deep_mlp_init(jnp)
    moments = tuple(jax.tree_util.tree_map(jnp.zeros_like, params) for _ in range(2))
    sgd, adam = deep_mlp_steps(jax, jnp)
    sgd_state, adam_state = [params], [params, moments]

    def sgd_step():
        sgd_state[0], loss = sgd(sgd_state[0], x, y)
        loss.block_until_ready()

    def adam_step():
        adam_state[0], adam_state[1], loss = adam(adam_state[0], adam_state[1], x, y)
        loss.block_until_ready()
    return {"sgd": sgd_step, "adam": adam_step}


def deep_mlp_train_step(fw):
    """A dispatch-bound train step: 25 small dense layers, 50 parameter leaves in, 50 and
    a loss out for SGD; with Adam's two moment trees, 150 in and 151 out."""
    out = {}
    for name, (jax, jnp) in fw.items():
        for label, call in deep_mlp_step_calls(jax, jnp).items():
            paired.settle(call)   # the steady state: pyjax packs it after 2 s
            out[f"{name} {label}"] = median_time(call)
    return out


def sharded_mlp_step(fw):
    """The MLP train step data-parallel over 8 CPU devices (batch split over 'data',
    parameters replicated): one SPMD program compiled by XLA's partitioner."""
    out = {}
    for name, (jax, jnp) in fw.items():
        sharding = importlib.import_module(f"{name}.sharding")
        mesh = jax.make_mesh((8,), ("data",), axis_types=(sharding.AxisType.Auto,))
        batch = sharding.NamedSharding(mesh, sharding.PartitionSpec("data"))
        replicated = sharding.NamedSharding(mesh, sharding.PartitionSpec())
        p = jax.device_put(mlp_init(jnp, [784, 512, 512, 10]), replicated)
        x, y = jax.device_put(mlp_data(jnp), batch)
        step = jax.jit(mlp_step_fn(jax, jnp), in_shardings=(replicated, batch, batch),
                       out_shardings=replicated)
        out[name] = median_time(lambda step=step, p=p, x=x, y=y: ready(
            jax_leaves(step(p, x, y))))
    return out


_TWO_PROCESS_PROGRAM = """
import statistics, sys, time
sys.path.insert(0, {here!r})
import numpy as np
import run
name, pid, port = {name!r}, int(sys.argv[1]), sys.argv[2]
jax, jnp = run.load_framework(name)[name]
sharding = run.importlib.import_module(name + ".sharding")
jax.config.update("jax_num_cpu_devices", 4)
if name == "jax":   # JAX's CPU collectives between processes (pyjax always uses Gloo)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(f"127.0.0.1:{{port}}", 2, pid, initialization_timeout=120)
mesh = jax.make_mesh((8,), ("data",), axis_types=(sharding.AxisType.Auto,))
batch = sharding.NamedSharding(mesh, sharding.PartitionSpec("data"))
replicated = sharding.NamedSharding(mesh, sharding.PartitionSpec())
place = lambda value, s: jax.make_array_from_callback(value.shape, s, lambda i: value[i])
p = [(place(w, replicated), place(b, replicated))
     for w, b in run.mlp_init(np, [784, 512, 512, 10])]
x, y = (place(v, batch) for v in run.mlp_data(np))
step = jax.jit(run.mlp_step_fn(jax, jnp), in_shardings=(replicated, batch, batch),
               out_shardings=replicated)
run_step = lambda: run.ready(run.jax_leaves(step(p, x, y)))
# Both processes must run the same number of steps (each step is a collective), so the
# batches have a fixed size rather than median_time's adaptive one.
for _ in range(3):
    run_step()
times = []
for _ in range({repeat}):
    start = time.perf_counter()
    for _ in range({number}):
        run_step()
    times.append((time.perf_counter() - start) / {number})
jax.distributed.shutdown()
print(statistics.median(times))
"""


def two_process_mlp_step(fw, repeat=7, number=4):
    """The data-parallel MLP step over 2 processes x 4 CPU devices on loopback (the batch
    split over all 8 devices; XLA's collectives cross the processes over Gloo). Each
    process times its steps; the row is process 0's median seconds per step."""
    out = {}
    here = os.path.dirname(os.path.abspath(__file__))
    for name in fw:
        code = _TWO_PROCESS_PROGRAM.format(here=here, name=name, repeat=repeat,
                                           number=number)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(os.environ)
        env.pop("XLA_FLAGS", None)
        workers = [subprocess.Popen([sys.executable, "-c", code, str(pid), str(port)],
                                    env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True) for pid in (0, 1)]
        try:
            results = [w.communicate(timeout=600) for w in workers]
        finally:
            for w in workers:
                w.kill()
        for w, (_, stderr) in zip(workers, results):
            if w.returncode:
                raise RuntimeError(f"a {name} process failed: {stderr.strip()[-500:]}")
        out[name] = float(results[0][0].split()[-1])
    return out


def elementwise_chain(fw, n=10_000_000):
    out = {}
    x = np.linspace(0, 1, n, dtype=np.float32)
    out["numpy"] = median_time(lambda: np.tanh(x * 2.0 + 1.0) * np.exp(-x), repeat=5)
    for name, (jax, jnp) in fw.items():
        xj = jnp.asarray(x)
        f = jax.jit(lambda v, jnp=jnp: jnp.tanh(v * 2.0 + 1.0) * jnp.exp(-v))
        out[name] = median_time(lambda f=f, xj=xj: ready(f(xj)), repeat=5)
    return out


def matmul(fw, n=2048):
    out = {}
    a = np.random.default_rng(0).normal(size=(n, n)).astype(np.float32)
    out["numpy"] = median_time(lambda: a @ a, repeat=3)
    for name, (jax, jnp) in fw.items():
        aj = jnp.asarray(a)
        f = jax.jit(lambda m: m @ m)
        out[name] = median_time(lambda f=f, aj=aj: ready(f(aj)), repeat=3)
    return out


def per_example_grads(fw, batch=128):
    out = {}
    rng = np.random.default_rng(0)
    for name, (jax, jnp) in fw.items():
        w = jnp.asarray(rng.normal(size=(20, 5)).astype(np.float32))
        x = jnp.asarray(rng.normal(size=(batch, 20)).astype(np.float32))
        y = jnp.asarray(rng.integers(0, 5, batch).astype(np.int32))

        def loss(w, xi, yi, jnp=jnp, jax=jax):
            logits = xi @ w
            return -(logits[yi] - jnp.log(jnp.sum(jnp.exp(logits))))

        f = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
        out[name] = median_time(lambda f=f, w=w, x=x, y=y: ready(f(w, x, y)))
    return out


def scan_rnn(fw, steps=100, hidden=64):
    out = {}
    rng = np.random.default_rng(0)
    for name, (jax, jnp) in fw.items():
        wh = jnp.asarray(rng.normal(0, 0.1, (hidden, hidden)).astype(np.float32))
        wx = jnp.asarray(rng.normal(0, 0.1, (8, hidden)).astype(np.float32))
        xs = jnp.asarray(rng.normal(size=(steps, 8)).astype(np.float32))

        def loss(wh, wx, xs, jax=jax, jnp=jnp):
            def cell(h, x):
                h = jnp.tanh(h @ wh + x @ wx)
                return h, jnp.sum(h)
            h, ys = jax.lax.scan(cell, jnp.zeros(hidden), xs)
            return jnp.sum(ys) + jnp.sum(h)

        f = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
        out[name] = median_time(lambda f=f, args=(wh, wx, xs): ready(jax_leaves(f(*args))))
    return out


def jax_leaves(x):
    import pyjax
    return pyjax.tree_util.tree_leaves(x)


def recurrence(fw, steps=10_000):
    out = {}
    for name, (jax, jnp) in fw.items():
        f = jax.jit(lambda x, jax=jax: jax.lax.fori_loop(0, steps, lambda i, v: v * 0.999 +
                                                         0.001, x))
        out[name + " fori_loop"] = median_time(lambda f=f: ready(f(1.0)), repeat=3)
        step = jax.jit(lambda v: v * 0.999 + 0.001)

        def python_loop(step=step, jnp=jnp):
            v = jnp.asarray(1.0)
            for _ in range(steps):
                v = step(v)
            return ready(v)
        out[name + " python loop of jit"] = median_time(python_loop, repeat=3,
                                                        min_batch_seconds=0)
    return out


def import_cost(fw):
    """Median wall time of `import X` in a fresh interpreter, and its resident memory
    (VmRSS: ru_maxrss would include what a forked parent had). Bytecode caching is left
    on, as for any installed package, and one warm-up run writes the caches."""
    out = {}
    code = ("import time; t = time.perf_counter(); import {m}; "
            "elapsed = time.perf_counter() - t; "
            "rss = open('/proc/self/status').read().split('VmRSS:')[1].split()[0]; "
            "print(elapsed, int(rss) / 1024)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for name in fw:
        runs = []
        for _ in range(6):
            res = subprocess.run([sys.executable, "-c", code.format(m=name)], cwd=root,
                                 env=env, capture_output=True, text=True, check=True)
            runs.append(tuple(map(float, res.stdout.split())))
        runs = runs[1:]   # the first run may have compiled bytecode
        out[name + " import (s)"] = statistics.median(r[0] for r in runs)
        out[name + " RSS after import (MB)"] = statistics.median(r[1] for r in runs)
    return out


WORKLOADS = {
    "eager x+y n=10": lambda fw: eager_add(fw, 10),
    "eager x+y n=1000": lambda fw: eager_add(fw, 1000),
    "eager ops": eager_ops,
    "jit tiny call": jit_tiny_call,
    "jit inline jit(f)(x)": jit_inline_call,
    "jit call: pytree + static": jit_pytree_call,
    "jit call: NumPy batch": jit_numpy_call,
    "MLP first call": mlp_first_call,
    "MLP first call, new process": mlp_first_call_fresh_process,
    "MLP train step": mlp_train_step,
    "jit train step, 50 leaves": deep_mlp_train_step,
    "MLP step, 8 devices (data)": sharded_mlp_step,
    "MLP step, 2 processes x 4": two_process_mlp_step,
    "random-heavy compile": random_heavy_compile,
    "elementwise chain 10M": elementwise_chain,
    "matmul 2048": matmul,
    "jit(vmap(grad)) b=128": per_example_grads,
    "scan RNN vg T=100": scan_rnn,
    "10k-step recurrence": recurrence,
    "import": import_cost,
}
EIGHT_DEVICE_WORKLOADS = {"MLP step, 8 devices (data)"}   # run with 8 CPU devices
# Rows that --paired times: title -> (jax, jnp) -> {label: one call}
PAIRED_CALLS = {"jit train step, 50 leaves": deep_mlp_step_calls}


def fmt(seconds):
    if seconds >= 1:
        return f"{seconds:8.3f} s "
    if seconds >= 1e-3:
        return f"{seconds * 1e3:8.3f} ms"
    return f"{seconds * 1e6:8.2f} us"


def run_child(name, only, devices, cpu_time):
    """Runs the workloads for one framework and prints {title: {entry: seconds}} as JSON.
    Each framework gets its own process, so two XLA clients never share one."""
    global clock
    if cpu_time:
        clock = time.process_time
    if name == "torch":
        from torch_workloads import torch_workloads
        workloads = torch_workloads(sys.modules[__name__])
    else:
        fw = load_framework(name)
        workloads = {title: functools.partial(w, fw) for title, w in WORKLOADS.items()}
    results = {}
    for title, workload in workloads.items():
        if only and not any(o in title for o in only):
            continue
        if (title in EIGHT_DEVICE_WORKLOADS) != (devices == 8):
            continue
        try:
            entries = workload()
        except Exception as err:   # report and go on: one broken workload must not hide
            results[title] = {"error": f"{name}: {type(err).__name__}: {err}"}
            continue
        results[title] = {k: v for k, v in entries.items() if k.split()[0] == name}
    print(json.dumps(results))


def child_env(cache_dir, devices):
    """A child's environment: a fresh persistent compilation cache (compile timings stay
    cold and the user's cache is left alone) and `devices` CPU devices."""
    env = dict(os.environ, PYJAX_CACHE_DIR=cache_dir,
               XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    return env


def serve_calls(name, title, cpu_time):
    """For --paired: serves one PAIRED_CALLS row's calls (paired.serve)."""
    jax, jnp = load_framework(name)[name]
    paired.serve(PAIRED_CALLS[title](jax, jnp), time.process_time if cpu_time else clock)


def run_paired(only, cpu_time):
    """Times each PAIRED_CALLS row with pyjax's and JAX's processes alive at once, in
    alternate batches (paired.py); prints the median seconds per call of each and the
    median of the pairs' ratios, with their quartiles."""
    if "jax" not in available_frameworks():
        raise SystemExit("--paired compares with JAX: install jax in this interpreter")
    print(paired.describe(cpu_time))
    print(f"{'workload':28s} {'entry':8s} {'pyjax':>12s} {'jax':>12s}  "
          "ratio pyjax/jax (quartiles)")
    for title in PAIRED_CALLS:
        if only and not any(o in title for o in only):
            continue
        with tempfile.TemporaryDirectory() as cache_dir:
            servers = [paired.Server([sys.executable, os.path.abspath(__file__), "--serve",
                                      name, "--only", title]
                                     + (["--cpu-time"] if cpu_time else []),
                                     env=child_env(cache_dir, 1))
                       for name in ("pyjax", "jax")]
            for label, mine, theirs, (q1, median, q3) in paired.compare(*servers):
                print(f"{title:28s} {label:8s} {fmt(mine):>12s} {fmt(theirs):>12s}  "
                      f"{median:6.3f}x ({q1:.3f}-{q3:.3f})")
            for server in servers:
                server.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append",
                        help="run only the workloads whose title contains this")
    parser.add_argument("--rounds", type=int, default=3,
                        help="run every framework this many times, in turn (default 3)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time repeated calls by the process's CPU time, not wall time "
                             "(fairer on a loaded machine; first-call rows stay wall time)")
    parser.add_argument("--paired", action="store_true",
                        help="time the rows of PAIRED_CALLS with pyjax and JAX in alternate "
                             "batches of two processes alive at once (see run_paired)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--devices", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return run_child(args.child, args.only, args.devices, args.cpu_time)
    if args.serve:
        return serve_calls(args.serve, args.only[0], args.cpu_time)
    if args.paired:
        return run_paired(args.only, args.cpu_time)
    names = available_frameworks()
    rounds = {}   # title -> entry -> [seconds per round], or "error" -> message
    for _ in range(args.rounds):
        for name in names:
            cmd = [sys.executable, os.path.abspath(__file__), "--child", name]
            for o in args.only or ():
                cmd += ["--only", o]
            if args.cpu_time:
                cmd.append("--cpu-time")
            # The sharded rows run in a child of their own with 8 CPU devices, so the
            # other rows keep XLA's default single-device client.
            results = {}
            for devices in (1, 8):
                with tempfile.TemporaryDirectory() as cache_dir:
                    out = subprocess.run(cmd + ["--devices", str(devices)],
                                         capture_output=True, text=True, check=True,
                                         env=child_env(cache_dir, devices)).stdout
                results.update(json.loads(out.splitlines()[-1]))
            for title, entries in results.items():
                for entry, value in entries.items():
                    if entry == "error":
                        rounds.setdefault(title, {})[entry] = value
                    else:
                        rounds.setdefault(title, {}).setdefault(entry, []).append(value)
    merged = {title: {entry: v if entry == "error" else statistics.median(v)
                      for entry, v in rounds[title].items()}
              for title in WORKLOADS if title in rounds}
    print(f"frameworks: {', '.join(names)} (one process each, {args.rounds} rounds); "
          f"threads: OMP={os.environ.get('OMP_NUM_THREADS')}; clock: "
          f"{'CPU time' if args.cpu_time else 'wall time'}")
    print(f"{'workload':28s} {'entry':34s} {'median':>12s}  ratio pyjax/other")
    for title, results in merged.items():
        for entry, value in results.items():
            if entry == "error":
                print(f"{title:28s} FAILED: {value}")
                continue
            # Entries are "framework[ label]"; compare each with pyjax's same label.
            framework, _, label = entry.partition(" ")
            base = results.get(f"pyjax {label}".strip())
            ratio = ""
            if base is not None and framework != "pyjax" and value:
                ratio = f"{base / value:6.2f}x"
            shown = f"{value:10.3f}   " if "(" in entry else fmt(value)
            print(f"{title:28s} {entry:34s} {shown:>12s}  {ratio}")


if __name__ == "__main__":
    main()
