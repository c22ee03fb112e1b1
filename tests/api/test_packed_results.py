"""Packed results (api/packed_results.py): a jitted step whose results are passed back to
it keeps its parameters in one buffer; its results are views into it. Every view must
behave as the Array it stands for, and every step must compute what the unpacked step
computes, whatever the caller does with the views."""
import pickle
import threading

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src import config
from pyjax._src.api import packed_results
from pyjax._src.array import Array

pytestmark = pytest.mark.skipif(
    config.executor.value != "xla" or jax.devices()[0].platform != "cpu",
    reason="packed results are the XLA executor's, on the CPU")


@pytest.fixture(autouse=True)
def pack_at_once(monkeypatch):
    """Packing from the first calls on, not after 2 s of them."""
    monkeypatch.setattr(packed_results, "PACK_AFTER_SECONDS", 0.0)


def wait_for_packing(jitted):
    """Waits for the packed program of `jitted`'s latest signature, if one is compiling."""
    runner = jitted._jit.latest.__self__.runner.__self__
    if isinstance(runner, packed_results.PackingRunner) and runner.compiling is not None:
        runner.compiling.join()

LAYERS = 6   # 12 parameter leaves: past packed_results.MIN_LEAVES
STEPS = packed_results.WARM_CALLS + 6


def init(layers=LAYERS):
    rng = np.random.default_rng(0)
    return [{"w": jnp.asarray(rng.normal(size=(3, 3)).astype(np.float32)),
             "b": jnp.asarray(rng.normal(size=(3,)).astype(np.float32))}
            for _ in range(layers)]


def loss(params, x):
    """x @ w written elementwise: every leaf is read in place from the pack."""
    for p in params:
        x = jnp.tanh(jnp.sum(x[:, :, None] * p["w"], axis=1) + p["b"])
    return jnp.sum(x ** 2)


def dot_loss(params, x):
    for p in params:
        x = jnp.tanh(x @ p["w"] + p["b"])
    return jnp.sum(x ** 2)


def make_step(loss=loss):
    @jax.jit
    def step(params, count):
        value, grads = jax.value_and_grad(loss)(params, jnp.ones((2, 3)))
        params = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
        return params, count + 1, value
    return step


def train(steps=STEPS, each=None):
    step, params, count = make_step(), init(), jnp.int32(0)
    losses = []
    for i in range(steps):
        params, count, value = step(params, count)
        losses.append(float(value))
        wait_for_packing(step)
        if each is not None:
            params = each(i, params)
    return params, count, losses


def unpacked(**kw):
    with config.packed_results(False):
        return train(**kw)


def is_view(x):
    return type(x) is Array and x._pack is not None


def assert_same(a, b):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_a_step_fed_its_results_packs_them_and_computes_the_same():
    params, count, losses = train()
    ref_params, ref_count, ref_losses = unpacked()
    assert all(is_view(x) for x in jax.tree.leaves(params))
    assert not any(is_view(x) for x in jax.tree.leaves(ref_params))
    assert losses == ref_losses and int(count) == int(ref_count) == STEPS
    assert_same(params, ref_params)


def test_leaves_a_dot_reads_whole_stay_out_of_the_pack():
    # XLA would copy a dot's operand out of the pack on every call
    def run(packed):
        step, params, count = make_step(dot_loss), init(layers=10), jnp.int32(0)
        with config.packed_results(packed):
            for _ in range(STEPS):
                params, count, value = step(params, count)
                wait_for_packing(step)
        return params, value
    params, value = run(True)
    ref_params, ref_value = run(False)
    assert all(is_view(p["b"]) and not is_view(p["w"]) for p in params)
    assert float(value) == float(ref_value)
    assert_same(params, ref_params)


def test_views_behave_as_arrays():
    params, _, _ = train()
    w = params[0]["w"]
    assert is_view(w) and w.shape == (3, 3) and w.dtype == np.float32
    assert not w.weak_type and not w.committed and w.device == jax.devices()[0]
    assert w.sharding == jax.sharding.SingleDeviceSharding(jax.devices()[0])
    assert w.block_until_ready() is w and w.is_ready()
    value = np.asarray(w)
    assert not value.flags.writeable
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(w)), value)
    np.testing.assert_array_equal(w + 1, value + 1)                 # eager
    np.testing.assert_array_equal(jax.jit(lambda a: a * 2)(w), value * 2)
    np.testing.assert_array_equal(w.addressable_shards[0].data, value)
    assert w.unsafe_buffer_pointer() != 0
    donated = jax.jit(lambda a: a + 1, donate_argnums=0)(params[1]["w"])
    assert params[1]["w"].is_deleted() and donated.shape == (3, 3)
    params[2]["b"].delete()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(params[2]["b"])


def test_views_passed_back_out_of_order_are_not_read_as_the_pack():
    step = make_step()
    params, count = init(), jnp.int32(0)
    for _ in range(packed_results.WARM_CALLS + 4):
        params, count, _ = step(params, count)
        wait_for_packing(step)
    assert is_view(params[0]["w"])
    swapped = [params[1], params[0]] + params[2:]
    with config.packed_results(False):
        expected = make_step()(swapped, count)
    assert_same(step(swapped, count), expected)
    older = params   # the views of an older pack are values too
    params, count, _ = step(params, count)
    assert_same(step(older, count - 1)[0], params)


def test_a_step_whose_views_are_read_every_call_goes_back_to_plain_results():
    def read(i, params):
        np.asarray(params[0]["w"])   # a view used elsewhere: its pack is fetched
        return params
    params, _, losses = train(steps=STEPS + 10, each=read)
    assert not is_view(params[0]["w"])
    assert losses == unpacked(steps=STEPS + 10)[2]


def test_committed_arguments_give_committed_views():
    device = jax.devices()[0]
    step = make_step()
    params = jax.device_put(init(), device)
    count = jax.device_put(jnp.int32(0), device)
    for _ in range(STEPS):
        params, count, _ = step(params, count)
        wait_for_packing(step)
    assert is_view(params[0]["w"]) and params[0]["w"].committed
    assert params[0]["w"].device == device


def test_packed_steps_from_worker_threads():
    results = {}

    def work(k):
        results[k] = train()[2]
    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = unpacked()[2]
    assert [results[k] for k in range(3)] == [expected] * 3


def test_a_step_that_has_not_run_long_is_not_packed(monkeypatch):
    monkeypatch.setattr(packed_results, "PACK_AFTER_SECONDS", 2.0)
    params, _, _ = train()
    assert not is_view(params[0]["w"])


def test_a_step_under_a_transfer_guard_is_not_packed():
    with jax.transfer_guard("disallow"):
        params, _, losses = train()
    assert not is_view(params[0]["w"])
    assert losses == unpacked()[2]


def test_few_leaves_are_not_packed():
    step = jax.jit(lambda a, b: (a + 1, b * 2))
    a, b = jnp.ones(3), jnp.ones(2)
    for _ in range(STEPS):
        a, b = step(a, b)
    assert not is_view(a)   # two leaves: not worth a second program
    np.testing.assert_array_equal(a, np.full(3, 1.0 + STEPS, np.float32))


def test_a_step_on_another_platform_than_the_cpu_is_not_packed():
    # XLA's GPU compiler may round the packed program differently (seen on an H100)
    class GpuDevice:
        platform = "gpu"
    closed = jax.make_jaxpr(lambda xs: [x + 1 for x in xs])([jnp.ones(3)] * 10)
    kinds = tuple(closed.in_avals)
    plain = object()
    assert packed_results.packing_runner(plain, closed, kinds, (False,) * 10, None,
                                         GpuDevice(), None) is plain
    assert isinstance(packed_results.packing_runner(plain, closed, kinds, (False,) * 10,
                                                    None, None, None),
                      packed_results.PackingRunner)
