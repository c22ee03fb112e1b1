"""Data- and model-parallel training of the demo's MLP on a 4 x 2 mesh of CPU devices:
the batch is split over 'data', the hidden layer over 'model'. XLA's SPMD partitioner
turns the one jitted step into per-device programs with the collectives they need. Each
step's loss is printed beside the same step run on one device.

    python examples/sharded_mlp.py                  # one process, 8 CPU devices
    python examples/sharded_mlp.py --processes 2    # 2 processes x 4 devices (loopback)
"""
import argparse
import os
import socket
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pyjax as jax  # noqa: E402
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P  # noqa: E402

from demo import init_params, loss_fn, make_spirals  # noqa: E402

STEPS, BATCH, LEARNING_RATE = 18, 64, 0.1   # 18 full batches of the 1200 points


def sgd_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads), loss


def shardings(mesh):
    """Parameters: the hidden layer's units over 'model'; the batch over 'data'."""
    named = lambda *spec: NamedSharding(mesh, P(*spec))
    params = [{"w": named(None, "model"), "b": named("model")},
              {"w": named("model", None), "b": named()},
              {"w": named(), "b": named()}]
    return params, named("data"), named("data")


def train(step, params, batches):
    losses = []
    for x, y in batches:
        params, loss = step(params, x, y)
        losses.append(float(np.asarray(loss)))
    return losses


def main(processes):
    if processes > 1 and "PYJAX_EXAMPLE_PROCESS" not in os.environ:
        return launch(processes)
    devices_per_process = 8 // processes
    jax.config.update("jax_num_cpu_devices", devices_per_process)
    if processes > 1:
        jax.distributed.initialize(os.environ["PYJAX_EXAMPLE_COORDINATOR"], processes,
                                   int(os.environ["PYJAX_EXAMPLE_PROCESS"]),
                                   initialization_timeout=120)
    mesh = jax.make_mesh((4, 2), ("data", "model"),
                         axis_types=(AxisType.Auto, AxisType.Auto))
    x_all, y_all = make_spirals()
    batches = [(x_all[i * BATCH:(i + 1) * BATCH], y_all[i * BATCH:(i + 1) * BATCH])
               for i in range(STEPS)]
    params = jax.tree_util.tree_map(np.asarray, init_params(jax.random.key(0)))

    param_sharding, x_sharding, y_sharding = shardings(mesh)
    sharded_step = jax.jit(sgd_step, in_shardings=(param_sharding, x_sharding, y_sharding),
                           out_shardings=(param_sharding, NamedSharding(mesh, P())))
    place = lambda value, sharding: jax.make_array_from_callback(
        value.shape, sharding, lambda index: value[index])
    sharded_batches = [(place(x, x_sharding), place(y, y_sharding)) for x, y in batches]
    sharded_params = jax.tree_util.tree_map(place, params, param_sharding)
    sharded = train(sharded_step, sharded_params, sharded_batches)
    single = train(jax.jit(sgd_step), params, batches)   # on this process's first device

    if jax.process_index() == 0:
        print(f"{jax.process_count()} process(es), {len(jax.devices())} devices, mesh "
              f"{dict(mesh.shape)}")
        for i, (a, b) in enumerate(zip(sharded, single)):
            print(f"step {i:2d}  loss {a:.6f}  (one device: {b:.6f})")
        worst = max(abs(a - b) for a, b in zip(sharded, single))
        print(f"largest difference from the one-device run: {worst:.2e}")
        if worst > 1e-5:
            raise SystemExit("the sharded run diverged from the one-device run")
    if processes > 1:
        jax.distributed.shutdown()


def launch(processes):
    """Starts `processes` copies of this program on loopback and waits for them."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    children = []
    for pid in range(processes):
        env = dict(os.environ, PYJAX_EXAMPLE_PROCESS=str(pid), TF_CPP_MIN_LOG_LEVEL="2",
                   PYJAX_EXAMPLE_COORDINATOR=f"127.0.0.1:{port}")
        env.pop("XLA_FLAGS", None)
        children.append(subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--processes", str(processes)],
            env=env, stderr=subprocess.DEVNULL if pid else None))
    codes = [child.wait(timeout=600) for child in children]
    if any(codes):
        raise SystemExit(f"a process failed (exit codes {codes})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=1, choices=(1, 2))
    main(parser.parse_args().processes)
