"""pyjax demo: train a small MLP classifier on a generated three-armed spiral.

Uses jit (the whole epoch is one compiled program), grad (the loss gradient), scan (the
loop over minibatches inside the epoch) and vmap (per-example predictions and
per-example gradient norms). Finishes in seconds on two CPU cores."""
import time

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

NUM_CLASSES, POINTS_PER_CLASS, HIDDEN = 3, 400, 64
BATCH, EPOCHS, LEARNING_RATE, MOMENTUM = 64, 40, 0.05, 0.9


def make_spirals(seed=0):
    """Three interleaved spiral arms in the plane (deterministic, no downloads)."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for label in range(NUM_CLASSES):
        radius = np.linspace(0.05, 1.0, POINTS_PER_CLASS)
        angle = label * 2 * np.pi / NUM_CLASSES + radius * 5.0 + rng.normal(
            0, 0.2, POINTS_PER_CLASS)
        xs.append(np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1))
        ys.append(np.full(POINTS_PER_CLASS, label))
    x, y = np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.int32)
    order = rng.permutation(len(x))
    return x[order], y[order]


def init_params(key):
    sizes = [2, HIDDEN, HIDDEN, NUM_CLASSES]
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        w = jax.random.normal(sub, (fan_in, fan_out)) * jnp.sqrt(2.0 / fan_in)
        params.append({"w": w, "b": jnp.zeros(fan_out)})
    return params


def predict(params, x):
    """Logits for one example (vmap gives the batched version)."""
    for layer in params[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


batched_predict = jax.vmap(predict, in_axes=(None, 0))


def loss_fn(params, x, y):
    logits = batched_predict(params, x)
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.sum(log_probs * jax.nn.one_hot(y, NUM_CLASSES), axis=1))


@jax.jit
def train_epoch(params, velocity, xs, ys):
    """One pass over the data: scan applies an SGD-with-momentum step per minibatch."""
    def step(carry, batch):
        params, velocity = carry
        loss, grads = jax.value_and_grad(loss_fn)(params, *batch)
        velocity = jax.tree_util.tree_map(lambda v, g: MOMENTUM * v + g, velocity, grads)
        params = jax.tree_util.tree_map(lambda p, v: p - LEARNING_RATE * v, params,
                                        velocity)
        return (params, velocity), loss

    (params, velocity), losses = lax.scan(step, (params, velocity), (xs, ys))
    return params, velocity, jnp.mean(losses)


@jax.jit
def accuracy(params, x, y):
    return jnp.mean(jnp.argmax(batched_predict(params, x), axis=1) == y)


@jax.jit
def per_example_grad_norms(params, x, y):
    """How hard each example pulls on the weights: vmap of grad over the batch."""
    def one(xi, yi):
        grads = jax.grad(loss_fn)(params, xi[None], yi[None])
        leaves = jax.tree_util.tree_leaves(grads)
        return jnp.sqrt(sum(jnp.sum(g * g) for g in leaves))
    return jax.vmap(one)(x, y)


def main():
    x, y = make_spirals()
    split = int(0.8 * len(x))
    x_train, y_train, x_test, y_test = x[:split], y[:split], x[split:], y[split:]
    num_batches = len(x_train) // BATCH
    xs = jnp.asarray(x_train[:num_batches * BATCH].reshape(num_batches, BATCH, 2))
    ys = jnp.asarray(y_train[:num_batches * BATCH].reshape(num_batches, BATCH))
    params = init_params(jax.random.PRNGKey(0))
    velocity = jax.tree_util.tree_map(jnp.zeros_like, params)
    print(f"pyjax demo: MLP 2-{HIDDEN}-{HIDDEN}-{NUM_CLASSES} on {len(x_train)} spiral "
          f"points, {num_batches} minibatches of {BATCH} per epoch, devices: "
          f"{jax.devices()}")
    start = time.perf_counter()
    for epoch in range(1, EPOCHS + 1):
        t0 = time.perf_counter()
        params, velocity, loss = train_epoch(params, velocity, xs, ys)
        loss = float(loss)   # waits for the result
        elapsed = time.perf_counter() - t0
        if epoch == 1 or epoch % 5 == 0:
            acc = float(accuracy(params, x_test, y_test))
            note = " (includes tracing and compilation)" if epoch == 1 else ""
            print(f"epoch {epoch:3d}  loss {loss:.4f}  test accuracy {acc:6.1%}  "
                  f"epoch time {elapsed * 1e3:8.2f} ms  "
                  f"step time {elapsed / num_batches * 1e6:8.1f} us{note}")
    total = time.perf_counter() - start
    norms = per_example_grad_norms(params, jnp.asarray(x_test[:8]),
                                   jnp.asarray(y_test[:8]))
    print(f"per-example gradient norms (vmap of grad), first 8 test points: "
          f"{np.round(np.asarray(norms), 4)}")
    final = float(accuracy(params, x_test, y_test))
    print(f"done: {EPOCHS} epochs in {total:.2f} s, final test accuracy {final:.1%}")


if __name__ == "__main__":
    main()
