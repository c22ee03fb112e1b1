"""Runs a set of small programs on XLA's GPU path and prints one JSON line per program:
its result summary and median time per call. Run it twice on a CUDA machine, once per
implementation, and compare:

    JAX_PLATFORMS=cuda python benchmarks/gpu_check.py pyjax > pyjax.jsonl
    JAX_PLATFORMS=cuda python benchmarks/gpu_check.py jax > jax.jsonl
    python benchmarks/gpu_check.py --compare pyjax.jsonl jax.jsonl

pyjax reaches the GPU through the PJRT plugin of the jax-cuda13-pjrt (or -cuda12-) wheel.
"""
import importlib
import json
import sys
import time
import traceback

import numpy as np


def _median_time(fn, *args, repeat=20):
    out = fn(*args)
    _block(out)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        _block(fn(*args))
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def _block(tree):
    for leaf in _leaves(tree):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    if isinstance(tree, dict):
        return [x for t in tree.values() for x in _leaves(t)]
    return [tree]


def _summary(tree):
    return [float(np.asarray(x, dtype=np.float64).sum()) for x in _leaves(tree)]


def programs(jax):
    jnp, lax = jax.numpy, jax.lax
    rng = np.random.default_rng(0)

    def chain(x):
        return jnp.sin(x) * 2.0 + jnp.cos(x) ** 2
    x10m = rng.standard_normal(10_000_000).astype(np.float32)
    yield "elementwise chain 10M", jax.jit(chain), (jax.device_put(x10m),)

    a = rng.standard_normal((4096, 4096)).astype(np.float32) / 64
    yield "matmul 4096 f32", jax.jit(jnp.matmul), (jax.device_put(a), jax.device_put(a))
    b = jnp.asarray(rng.standard_normal((8192, 8192)) / 90, dtype=jnp.bfloat16)
    yield "matmul 8192 bf16", jax.jit(jnp.matmul), (b, b)

    sizes = [(784, 512), (512, 512), (512, 10)]
    params = [(jnp.asarray(rng.standard_normal(s).astype(np.float32) / np.sqrt(s[0])),
               jnp.zeros(s[1])) for s in sizes]
    batch = jnp.asarray(rng.standard_normal((1024, 784)).astype(np.float32))
    labels = jax.nn.one_hot(jnp.asarray(rng.integers(0, 10, 1024)), 10)

    def loss(params, x, y):
        for w, b_ in params[:-1]:
            x = jax.nn.relu(x @ w + b_)
        w, b_ = params[-1]
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(x @ w + b_) * y, axis=-1))

    @jax.jit
    def train_step(params, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return [(w - 0.01 * gw, b_ - 0.01 * gb)
                for (w, b_), (gw, gb) in zip(params, grads)], value
    yield "MLP train step 1024x784", train_step, (params, batch, labels)

    def rnn_loss(w, xs):
        def cell(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h.sum()
        _, ys = lax.scan(cell, jnp.zeros(128), xs)
        return ys.sum()
    w = jnp.asarray(rng.standard_normal((128, 128)).astype(np.float32) / 12)
    xs = jnp.asarray(rng.standard_normal((100, 128)).astype(np.float32))
    yield "scan RNN value_and_grad T=100", jax.jit(jax.value_and_grad(rnn_loss)), (w, xs)

    per_example = jax.jit(jax.vmap(jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w))),
                                   in_axes=(None, 0)))
    yield "vmap(grad) b=256", per_example, (w, jnp.asarray(
        rng.standard_normal((256, 128)).astype(np.float32)))

    def loop(x):
        return lax.fori_loop(0, 1000, lambda i, c: c * 0.999 + jnp.sin(c), x)
    yield "fori_loop 1000", jax.jit(loop), (jnp.ones(1024),)

    def sample(key):
        return jax.random.normal(key, (1_000_000,)).mean()
    yield "random.normal 1M", jax.jit(sample), (jax.random.PRNGKey(0),)

    def cond_switch(x):
        return lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x)
    yield "lax.cond", jax.jit(cond_switch), (jnp.arange(8.0),)

    spd = rng.standard_normal((256, 256)).astype(np.float32)
    spd = spd @ spd.T + 256 * np.eye(256, dtype=np.float32)
    yield "linalg.solve 256 (jit)", jax.jit(jnp.linalg.solve), (
        jnp.asarray(spd), jnp.ones(256))

    yield "eager x+1 then sum", lambda v: (v + 1).sum(), (jnp.ones(1000),)


def run(impl):
    jax = importlib.import_module(impl)
    importlib.import_module(impl + ".numpy")
    print(json.dumps({"program": "devices", "impl": impl,
                      "devices": [str(d) for d in jax.devices()],
                      "platform": jax.devices()[0].platform}), flush=True)
    for name, fn, args in programs(jax):
        row = {"program": name, "impl": impl}
        try:
            seconds, out = _median_time(fn, *args)
            row.update(seconds=seconds, summary=_summary(out),
                       device=str(getattr(_leaves(out)[0], "devices", lambda: "?")()))
        except Exception as err:   # report every program, whatever fails
            row["error"] = f"{type(err).__name__}: {str(err)[:400]}"
            row["where"] = traceback.format_exc().splitlines()[-3:]
        print(json.dumps(row), flush=True)


def compare(ours_path, theirs_path):
    def load(path):
        return {r["program"]: r for r in map(json.loads, open(path)) if r}
    ours, theirs = load(ours_path), load(theirs_path)
    print(f"{'program':34s} {'pyjax':>11s} {'jax':>11s} {'ratio':>6s}  values")
    for name, row in ours.items():
        other = theirs.get(name, {})
        if "seconds" not in row or "seconds" not in other:
            print(f"{name:34s} {row.get('error', row.get('devices', ''))!s:.60} | "
                  f"{other.get('error', other.get('devices', ''))!s:.40}")
            continue
        close = np.allclose(row["summary"], other["summary"], rtol=2e-2, atol=1e-3)
        print(f"{name:34s} {row['seconds'] * 1e3:9.3f}ms {other['seconds'] * 1e3:9.3f}ms "
              f"{row['seconds'] / other['seconds']:5.2f}x  {'match' if close else 'DIFFER'} "
              f"{row['summary'][:2]} vs {other['summary'][:2]}")


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        run(sys.argv[1])
