"""The PyTorch side of benchmarks/run.py, when torch is installed: the same workloads,
written the way a PyTorch user would. PyTorch has no counterpart of jax.jit here (these
run eagerly, with autograd for gradients and torch.func for per-example gradients), so
its rows show what the same work costs without tracing; the MLP first-call row has no
PyTorch entry."""
from __future__ import annotations

import numpy as np


def torch_workloads(run):
    """{title: function() -> {entry: seconds}} for the titles of run.WORKLOADS."""
    import torch
    torch.set_num_threads(1)
    median_time = run.median_time

    def eager_add(n):
        a = torch.ones(n)
        return {"torch": median_time(lambda: a + a)}

    def tiny_call():
        def f(x, y):
            return x * y + 1.0
        a, b = torch.ones(3), torch.ones(3)
        return {"torch": median_time(lambda: f(a, b))}

    def pytree_call():
        def apply(params, x, training=False):
            for layer in params["layers"]:
                x = torch.tanh(x @ layer["w"] + layer["b"])
            return x * 0.5 if training else x
        params = {"layers": [{"w": torch.ones(4, 4), "b": torch.zeros(4)} for _ in range(3)]}
        x = torch.ones(2, 4)
        return {"torch": median_time(lambda: apply(params, x, training=True))}

    def numpy_batch_call():
        batch = np.random.default_rng(0).standard_normal((128, 784)).astype(np.float32)
        w = torch.ones(784, 10) * 0.01
        return {"torch": median_time(lambda: torch.tanh(torch.from_numpy(batch) @ w))}

    def mlp_params():
        return [(torch.from_numpy(np.asarray(w)).requires_grad_(),
                 torch.from_numpy(np.asarray(b)).requires_grad_())
                for w, b in run.mlp_init(np, [784, 512, 512, 10])]

    def mlp_train_step():
        params = mlp_params()
        x, y = (torch.from_numpy(v) for v in run.mlp_data(np))

        def step():
            h = x
            for w, b in params[:-1]:
                h = torch.relu(h @ w + b)
            w, b = params[-1]
            log_probs = torch.log_softmax(h @ w + b, dim=1)
            loss = -(log_probs * y).sum(1).mean()
            grads = torch.autograd.grad(loss, [p for layer in params for p in layer])
            with torch.no_grad():
                for p, g in zip((p for layer in params for p in layer), grads):
                    p -= 0.01 * g
        return {"torch": median_time(step)}

    def elementwise_chain(n=10_000_000):
        x = torch.linspace(0, 1, n)
        return {"torch": median_time(lambda: torch.tanh(x * 2.0 + 1.0) * torch.exp(-x),
                                     repeat=5)}

    def matmul(n=2048):
        a = torch.from_numpy(np.random.default_rng(0).normal(size=(n, n)).astype(np.float32))
        return {"torch": median_time(lambda: a @ a, repeat=3)}

    def per_example_grads(batch=128):
        from torch.func import grad, vmap
        rng = np.random.default_rng(0)
        w = torch.from_numpy(rng.normal(size=(20, 5)).astype(np.float32))
        x = torch.from_numpy(rng.normal(size=(batch, 20)).astype(np.float32))
        y = torch.from_numpy(rng.integers(0, 5, batch).astype(np.int64))

        def loss(w, xi, yi):
            logits = xi @ w
            picked = logits.gather(0, yi.unsqueeze(0))[0]   # vmap cannot index by a tensor
            return -(picked - torch.logsumexp(logits, 0))
        f = vmap(grad(loss), in_dims=(None, 0, 0))
        return {"torch": median_time(lambda: f(w, x, y))}

    def scan_rnn(steps=100, hidden=64):
        rng = np.random.default_rng(0)
        wh = torch.from_numpy(rng.normal(0, 0.1, (hidden, hidden)).astype(np.float32))
        wx = torch.from_numpy(rng.normal(0, 0.1, (8, hidden)).astype(np.float32))
        xs = torch.from_numpy(rng.normal(size=(steps, 8)).astype(np.float32))
        wh.requires_grad_()
        wx.requires_grad_()

        def value_and_grad():
            h, total = torch.zeros(hidden), 0.0
            for x in xs:
                h = torch.tanh(h @ wh + x @ wx)
                total = total + h.sum()
            loss = total + h.sum()
            return loss.detach(), torch.autograd.grad(loss, [wh, wx])
        return {"torch": median_time(value_and_grad)}

    def recurrence(steps=10_000):
        def python_loop():
            v = torch.tensor(1.0)
            for _ in range(steps):
                v = v * 0.999 + 0.001
            return v
        return {"torch python loop of jit": median_time(python_loop, repeat=3,
                                                        min_batch_seconds=0)}

    return {
        "eager x+y n=10": lambda: eager_add(10),
        "eager x+y n=1000": lambda: eager_add(1000),
        "jit tiny call": tiny_call,
        "jit call: pytree + static": pytree_call,
        "jit call: NumPy batch": numpy_batch_call,
        "MLP train step": mlp_train_step,
        "elementwise chain 10M": elementwise_chain,
        "matmul 2048": matmul,
        "jit(vmap(grad)) b=128": per_example_grads,
        "scan RNN vg T=100": scan_rnn,
        "10k-step recurrence": recurrence,
        "import": lambda: run.import_cost({"torch": None}),
    }
