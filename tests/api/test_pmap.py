"""pmap: one replicated XLA program with real collectives. The multi-device checks run in
one subprocess with four CPU devices (the device count is fixed when XLA starts); each
check is reported as its own test. Errors and the NumPy executor are also tested here."""
from __future__ import annotations

import functools

import re

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax.experimental import io_callback

from harness import checks_in_process, close

N = 4


def _data(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


# --- checks run with four devices (see _run_checks) -------------------------------------

def check_reductions_match_numpy():
    x = _data(N, 3, 2)
    f = jax.pmap(lambda v: (lax.psum(v, "i"), lax.pmean(v, "i"), lax.pmax(v, "i"),
                            lax.pmin(v, "i"), lax.psum(1, "i")), axis_name="i")
    total, mean, high, low, count = f(x)
    for got, want in ((total, x.sum(0)), (mean, x.mean(0)), (high, x.max(0)),
                      (low, x.min(0))):
        assert isinstance(got, jax.Array) and got.shape == x.shape
        close(got, np.broadcast_to(want, x.shape))
    assert np.asarray(count).tolist() == [N] * N
    ints = np.arange(N * 2, dtype=np.int32).reshape(N, 2)
    g = jax.pmap(lambda v: (lax.psum(v, "i"), lax.pmax(v, "i"), lax.psum(v > 3, "i")),
                 axis_name="i")
    total, high, count = g(ints)
    assert total.dtype == np.int32
    np.testing.assert_array_equal(total, np.broadcast_to(ints.sum(0), ints.shape))
    np.testing.assert_array_equal(high, np.broadcast_to(ints.max(0), ints.shape))
    np.testing.assert_array_equal(count, np.broadcast_to((ints > 3).sum(0), ints.shape))
    pytree = jax.pmap(lambda d: lax.psum(d, "i"), axis_name="i")({"a": x, "b": [ints]})
    close(pytree["a"][2], x.sum(0))
    np.testing.assert_array_equal(pytree["b"][0][1], ints.sum(0))
    z = (np.arange(N) + 1j * np.arange(N)[::-1]).astype(np.complex64)
    assert complex(jax.pmap(lambda v: lax.pmax(v, "i"), axis_name="i")(z)[0]) == 3 + 0j


def check_all_gather_and_axis_index():
    x = _data(N, 3, 2)
    stacked = jax.pmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(x)
    close(stacked, np.broadcast_to(x, (N,) + x.shape))
    inner = jax.pmap(lambda v: lax.all_gather(v, "i", axis=2), axis_name="i")(x)
    close(inner[1], np.moveaxis(x, 0, 2))
    tiled = jax.pmap(lambda v: lax.all_gather(v, "i", axis=1, tiled=True),
                     axis_name="i")(x)
    close(tiled[3], np.concatenate(list(x), axis=1))
    index = jax.pmap(lambda v: lax.axis_index("i") * 10, axis_name="i")(x)
    assert index.dtype == np.int32 and np.asarray(index).tolist() == [0, 10, 20, 30]
    sizeless = jax.pmap(lambda: lax.axis_index("i"), axis_name="i", axis_size=N)()
    assert np.asarray(sizeless).tolist() == list(range(N))


def check_in_axes_out_axes_and_kwargs():
    x, s = _data(3, N, 2), np.float32(2.0)
    f = jax.pmap(lambda v, k: lax.psum(v * k, "i") + lax.axis_index("i"), axis_name="i",
                 in_axes=(1, None), out_axes=1)
    out = f(x, s)
    assert out.shape == (3, N, 2)
    want = (x * s).sum(1, keepdims=True) + np.arange(N)[None, :, None]
    close(out, want)
    g = jax.pmap(lambda v: (v * 2, lax.psum(v, "i")), axis_name="i", in_axes=-1,
                 out_axes=(-1, None))
    doubled, total = g(x)
    assert doubled.shape == (3, N, 2) and total.shape == (3, N)
    close(doubled, np.moveaxis(np.moveaxis(x, -1, 0) * 2, 0, -1))
    close(total, x.sum(-1))
    h = jax.pmap(lambda a, b: a["w"] * b, in_axes=({"w": 0}, None))
    close(h({"w": x[0]}, 3.0), x[0] * 3)
    kw = jax.pmap(lambda a, scale: a * scale)
    close(kw(x[0], scale=np.arange(N, dtype=np.float32)),
           x[0] * np.arange(N)[:, None])


def check_static_broadcasted_argnums_and_caching():
    from pyjax._src.backends import xla
    calls = []

    def f(v, power, shift):
        calls.append(power)
        return v ** power + shift

    p = jax.pmap(f, static_broadcasted_argnums=(1,), in_axes=(0, 1, None))
    x = _data(N, 2)
    close(p(x, 2, 1.0), x ** 2 + 1)
    before = xla.stats["compiles"]
    close(p(x + 1, 2, 3.0), (x + 1) ** 2 + 3)
    assert xla.stats["compiles"] == before and p._cache_size() == 1 and calls == [2]
    close(p(x, 3, 0.0), x ** 3)
    assert p._cache_size() == 2 and calls == [2, 3]


def check_data_parallel_sgd_matches_full_batch():
    def loss(w, xb, yb):
        return jnp.mean((jnp.tanh(xb @ w["a"]) @ w["b"] - yb) ** 2)

    def step(w, xb, yb):
        grads = jax.grad(loss)(w, xb, yb)
        grads = lax.pmean(grads, "batch")
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, w, grads), \
            lax.pmean(loss(w, xb, yb), "batch")

    rng = np.random.RandomState(1)
    X, Y = rng.randn(16, 3).astype(np.float32), rng.randn(16).astype(np.float32)
    w = {"a": rng.randn(3, 5).astype(np.float32), "b": rng.randn(5).astype(np.float32)}
    parallel = jax.pmap(step, axis_name="batch", in_axes=(None, 0, 0),
                        out_axes=(None, 0))
    new_w, losses = parallel(w, X.reshape(N, 4, 3), Y.reshape(N, 4))
    grads = jax.grad(loss)(w, X, Y)
    for k in w:
        close(new_w[k], w[k] - 0.1 * np.asarray(grads[k]))
    close(losses, np.full(N, float(loss(w, X, Y))))


def check_grad_and_jvp_of_pmap():
    x = _data(N, 3)
    w = _data(3, seed=2)

    def total(x, w):
        per_device = jax.pmap(lambda v, u: jnp.sin(v * u) + lax.psum(v, "i") * u,
                              axis_name="i", in_axes=(0, None))(x, w)
        return per_device.sum()

    gx, gw = jax.grad(total, argnums=(0, 1))(x, w)
    close(gx, np.cos(x * w) * w + N * w[None, :])
    close(gw, (np.cos(x * w) * x).sum(0) + N * x.sum(0))
    replicated = jax.pmap(lambda v: lax.psum(v ** 2, "i"), axis_name="i", out_axes=None)
    close(jax.grad(lambda v: replicated(v).sum())(x), 2 * x)
    f = jax.pmap(lambda v: lax.psum(jnp.sin(v), "i"), axis_name="i")
    primal, tangent = jax.jvp(f, (x,), (np.ones_like(x),))
    close(primal, np.broadcast_to(np.sin(x).sum(0), x.shape))
    close(tangent, np.broadcast_to(np.cos(x).sum(0), x.shape))


def check_remat_of_pmap_on_arrays_placed_by_a_context_mesh():
    # jnp.ones under set_mesh is laid out on the mesh; remat's eager call of a pmap then
    # recursed (each run of its one-equation program bound it again)
    mesh = jax.make_mesh((2,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
    with jax.set_mesh(mesh):
        g = jax.grad(lambda x: jax.remat(jax.pmap(jnp.sin))(x).sum())(jnp.ones(N))
    close(g, np.full(N, np.cos(1.0)))


def check_vmap_and_jit_compose():
    x = _data(2, N, 3)
    vp = jax.vmap(jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i"))(x)
    close(vp, np.broadcast_to(x.sum(1, keepdims=True), x.shape))
    pv = jax.pmap(jax.vmap(lambda v: lax.psum(v, ("i", "j")) + lax.axis_index("j"),
                           axis_name="j"), axis_name="i")(np.moveaxis(x, 0, 1))
    close(pv, np.broadcast_to(x.sum((0, 1)) + np.arange(2)[:, None], (N, 2, 3)))
    jp = jax.jit(lambda v: jax.pmap(lambda u: lax.psum(u, "i"), axis_name="i")(v) * 2)
    close(jp(x[0]), 2 * np.broadcast_to(x[0].sum(0), x[0].shape))
    pj = jax.pmap(jax.jit(lambda v: lax.psum(v, "i") * lax.axis_index("i")),
                  axis_name="i")(x[0])
    close(pj, x[0].sum(0)[None] * np.arange(N)[:, None])
    looped = jax.pmap(lambda v: lax.fori_loop(0, 3, lambda i, c: lax.psum(c, "i") / N, v),
                      axis_name="i")(x[0])
    close(looped, np.broadcast_to(x[0].mean(0), x[0].shape))


def check_numpy_executor_agrees_with_xla():
    x, w = _data(N, 3, 2), _data(2, seed=3)
    funs = [
        (lambda v, u: lax.psum(v * u, "i"), {}),
        (lambda v, u: (lax.all_gather(v, "i", axis=1, tiled=True), lax.axis_index("i")), {}),
        (lambda v, u: jax.grad(lambda a: (lax.pmean(a, "i") * u).sum())(v), {}),
        (lambda v, u: lax.pmax(v, "i") - lax.pmin(v, "i"), {"out_axes": None}),
    ]
    for fun, kwargs in funs:
        p = jax.pmap(fun, axis_name="i", in_axes=(0, None), **kwargs)
        compiled = p(x, w)
        with config.executor("numpy"):
            reference = p(x, w)
            staged = jax.jit(p)(x, w)
        for a, b, c in zip(jax.tree_util.tree_leaves(compiled),
                           jax.tree_util.tree_leaves(reference),
                           jax.tree_util.tree_leaves(staged)):
            close(a, b)
            close(c, b)


def check_compiled_module_is_replicated():
    x = _data(N, 3)
    text = jax.pmap(lambda v: (lax.psum(v, "i"), lax.all_gather(v, "i"),
                               lax.axis_index("i")), axis_name="i").lower(x).as_text()
    assert f"mhlo.num_replicas = {N} : i32" in text, text
    for op in ("stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.replica_id"):
        assert op in text, (op, text)
    assert "replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>" in text, text


def check_lower_compile():
    f = jax.pmap(lambda x, s: x * s - lax.pmean(x, "i"), axis_name="i",
                 static_broadcasted_argnums=1)
    x = _data(N, 3)
    lowered = f.lower(x, 2.0)
    assert "HloModule" in lowered.as_text(dialect="hlo")
    compiled = lowered.compile()
    close(compiled(x), f(x, 2.0))
    assert "flops" in compiled.cost_analysis()
    assert compiled.memory_analysis() is not None
    assert compiled.runtime_executable() is not None and compiled.as_text()
    for bad, message in (([x], "input pytree does not match"),
                         (x.astype(np.int32), "Argument 'flat_args\\[0\\]' compiled with "
                                              "float32\\[4,3\\] and called with int32")):
        try:
            compiled(bad)
            raise AssertionError("no error for " + message)
        except TypeError as err:
            assert re.search(message, str(err)), err
    # As JAX's stages: the argument types, compiler IR, and XLA's compiler options.
    ((aval,), kwargs) = lowered.in_avals
    assert aval.shape == (N, 3) and kwargs == {} and not lowered._no_kwargs
    ((info,), _) = lowered.args_info
    assert info.shape == (N, 3) and not info.donated
    assert "stablehlo.all_reduce" in str(lowered.compiler_ir())
    assert "all-reduce" in lowered.compiler_ir(dialect="hlo").as_hlo_text()
    tuned = lowered.compile(compiler_options={"xla_embed_ir_in_executable": True})
    assert tuned is not compiled
    close(tuned(x), f(x, 2.0))
    for options, message in (({"invalid_key": 1}, "No such compile option: 'invalid_key'"),
                             ({"xla_embed_ir_in_executable": "maybe"},
                              "is not a valid bool value")):
        try:
            lowered.compile(compiler_options=options)
            raise AssertionError("no error for " + message)
        except jax.errors.JaxRuntimeError as err:
            assert message in str(err), err
    g = jax.pmap(lambda v: v - lax.pmean(v, "i"), axis_name="i")
    for spec in (jax.ShapeDtypeStruct((N, 3), np.float32),
                 jax.core.ShapedArray((N, 3), np.dtype(np.float32))):
        close(g.lower(spec).compile()(x), g(x))


def check_errors_with_four_devices():
    try:
        jax.pmap(lambda v: v)(np.zeros((2 * N, 3)))
        raise AssertionError("no error for too many shards")
    except ValueError as err:
        assert f"requires {2 * N} logical devices" in str(err), err
        assert f"only {N} XLA devices" in str(err), err
    try:
        jax.pmap(lambda v: v, devices=jax.devices()[:2])(np.zeros((3, 1)))
        raise AssertionError("no error for a devices= mismatch")
    except ValueError as err:
        assert "devices= lists 2 devices" in str(err), err
    two = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i",
                   devices=jax.devices()[2:])(np.ones((2, 3)))
    close(two, np.full((2, 3), 2.0))
    try:
        jax.pmap(lambda v: lax.cond(v > 1, lambda: lax.psum(v, "i"), lambda: v),
                 axis_name="i")(np.arange(float(N)))
        raise AssertionError("no error for a collective under a divergent cond")
    except ValueError as err:
        assert "lax.cond" in str(err) and "waiting forever" in str(err), err
    uniform = jax.pmap(lambda v: lax.cond(lax.pmax(v, "i") > 1,
                                          lambda: lax.psum(v, "i"), lambda: v),
                       axis_name="i")(np.arange(float(N)))
    close(uniform, np.full(N, 6.0))


def check_donation_deletes_arguments():
    x = jnp.ones((N, 3))
    y = jax.pmap(lambda v: v + 1, donate_argnums=0)(x)
    close(y, np.full((N, 3), 2.0))
    assert x.is_deleted()


def check_axis_index_groups_match_jax():
    # Expected values: JAX 0.10.2 on four CPU devices, same program.
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    f = jax.pmap(lambda v: (
        lax.psum(v, "i", axis_index_groups=[[0, 1], [2, 3]]),
        lax.psum(v, "i", axis_index_groups=[[0], [1, 2, 3]]),     # uneven groups
        lax.pmax(v, "i", axis_index_groups=[[0, 3], [1, 2]]),
        lax.pmean(v, "i", axis_index_groups=[[0, 1], [2, 3]]),
        lax.all_gather(v, "i", axis_index_groups=[[0, 2], [1, 3]]),
        lax.all_to_all(v, "i", 0, 0, axis_index_groups=[[0, 2], [1, 3]]),
        lax.psum_scatter(v, "i", axis_index_groups=[[0, 2], [1, 3]], tiled=True)),
        axis_name="i")
    expected = [
        [[2, 4], [2, 4], [10, 12], [10, 12]],
        [[0, 1], [12, 15], [12, 15], [12, 15]],
        [[6, 7], [4, 5], [4, 5], [6, 7]],
        [[1, 2], [1, 2], [5, 6], [5, 6]],
        [[[0, 1], [4, 5]], [[2, 3], [6, 7]], [[0, 1], [4, 5]], [[2, 3], [6, 7]]],
        [[0, 4], [2, 6], [1, 5], [3, 7]],
        [[4], [8], [6], [10]]]
    for got, want in zip(f(x), expected):
        assert np.asarray(got).tolist() == want
    g = jax.pmap(jax.grad(lambda v, w: (lax.all_gather(
        v, "i", axis_index_groups=[[0, 1], [2, 3]]) * w).sum()), axis_name="i")
    assert np.asarray(g(x, np.arange(16, dtype=np.float32).reshape(4, 2, 2))).tolist() == \
        [[4, 6], [8, 10], [20, 22], [24, 26]]


def check_io_callbacks_finish_before_the_call_returns():
    # Results unused: the call must still have run the callbacks when it returns, on
    # the replicated (pmap) and the partitioned (sharded jit) paths.
    seen = []

    def record(v):
        seen.append(int(np.asarray(v).sum()))

    def body(v):
        io_callback(record, None, v, ordered=False)
        return v

    jax.pmap(body, axis_name="i")(np.arange(N, dtype=np.int32))
    assert sorted(seen) == list(range(N)), seen
    try:   # replicas run in no order among themselves (JAX's error)
        jax.pmap(lambda v: jax.debug.print("{}", v, ordered=True))(np.arange(N))
        raise AssertionError("ordered print in a pmap over several devices ran")
    except ValueError as err:
        assert "ordered effects are not supported for more than 1 device" in str(err)
    seen.clear()
    mesh = jax.make_mesh((N,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    sharded = jax.jit(body, in_shardings=jax.NamedSharding(mesh, jax.P("d")),
                      out_shardings=jax.NamedSharding(mesh, jax.P()))
    sharded(jnp.arange(N))
    sharded(jnp.arange(N) + 1)
    assert seen == [6, 10], seen
    # sharding= names the device the callback runs on (JAX's maximal sharding).
    last = jax.sharding.SingleDeviceSharding(jax.devices()[-1])
    blocks = jax.NamedSharding(mesh, jax.P("d"))
    on_last = jax.jit(lambda v: jax.pure_callback(lambda a: a * 2, v, v, sharding=last),
                      in_shardings=blocks, out_shardings=blocks)
    assert np.asarray(on_last(jnp.arange(float(N)))).tolist() == [0, 2, 4, 6]
    text = on_last.lower(jnp.arange(float(N))).as_text()
    assert f"sdy.mesh @maximal_mesh_{N - 1} = <[], device_ids=[{N - 1}]>" in text, text


CHECKS = sorted(name for name in dict(globals()) if name.startswith("check_"))


@pytest.fixture(scope="module")
def four_device_results():
    return checks_in_process("test_pmap", N)


@pytest.mark.parametrize("name", CHECKS)
def test_on_four_devices(four_device_results, name):
    result = four_device_results[name]
    assert result == "ok", result


# --- in this process (whatever its device count) ----------------------------------------

def test_more_shards_than_devices_names_both_counts():
    n = jax.device_count() + 1
    with config.executor("xla"):
        with pytest.raises(ValueError, match=f"requires {n} logical devices.*only "
                                             f"{n - 1} XLA devices"):
            jax.pmap(lambda v: v * 2)(np.zeros((n, 2)))


def test_unbound_axis_names_raise_name_error():
    with pytest.raises(NameError, match="unbound axis name: j"):
        jax.pmap(lambda v: lax.psum(v, "j"), axis_name="i")(np.zeros((1, 2)))
    with pytest.raises(NameError, match="unbound axis name: i"):
        jax.jit(lambda v: lax.psum(v, "i"))(np.zeros(2))
    with pytest.raises(NameError, match="unbound axis name: i"):
        jax.pmap(lambda v: lax.axis_index("i"))(np.zeros((1, 2)))


def test_nested_pmap_is_not_supported():
    inner = jax.pmap(lambda v: v)
    with pytest.raises(NotImplementedError, match="nested pmap"):
        jax.pmap(lambda v: inner(v[None]))(np.zeros((1, 2)))


def test_argument_errors():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        jax.pmap(lambda a, b: a + b)(np.zeros((1, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="along axis 2"):
        jax.pmap(lambda a: a, in_axes=2)(np.zeros((1, 2)))
    with pytest.raises(ValueError,   # JAX 0.10.2's words
                       match="^pmap requires at least one argument with a mapped axis."):
        jax.pmap(lambda a: a, in_axes=None)(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="at least one argument with a mapped axis"):
        jax.pmap(lambda x: x)({})
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jax.pmap(lambda a, b: a, static_broadcasted_argnums=1)(np.zeros((1, 2)), [1])
    # a static argument passed by keyword: JAX 0.10.2's words
    with pytest.raises(ValueError, match=re.escape(
            "pmapped function has static_broadcasted_argnums=(1,) but was called with only "
            "1 positional argument. All static broadcasted arguments must be passed "
            "positionally.")):
        jax.pmap(lambda a, b: a + b, static_broadcasted_argnums=(1,))(np.ones((1, 1)), b=1)
    with pytest.raises(ValueError, match=re.escape("with only 2 positional arguments.")):
        jax.pmap(lambda a, b, c: a, static_broadcasted_argnums=(1, 2))(np.ones((1, 1)), 1)
    with pytest.raises(ValueError, match="out_axes 3 is out of bounds"):
        jax.pmap(lambda a: a, out_axes=3)(np.zeros((1, 2)))
    with pytest.raises(TypeError, match="not a valid JAX type"):
        jax.pmap(lambda a: "text")(np.zeros((1, 2)))


def test_pmapped_method_binds_its_instance():
    class Model:
        scale = 3.0

        @functools.partial(jax.pmap, static_broadcasted_argnums=0)
        def apply(self, x):
            return x * self.scale

    close(Model().apply(np.ones((1, 2), np.float32)), np.full((1, 2), 3.0))


def test_numpy_executor_simulates_any_number_of_replicas():
    x = _data(6, 2)
    with config.executor("numpy"):
        out = jax.pmap(lambda v: (lax.psum(v, "i"), lax.axis_index("i")), axis_name="i")(x)
    close(out[0], np.broadcast_to(x.sum(0), x.shape))
    assert np.asarray(out[1]).tolist() == list(range(6))


def test_jaxpr_shows_one_pmap_equation():
    text = str(jax.make_jaxpr(jax.pmap(lambda v: lax.psum(v, "i") * 2, axis_name="i"))(
        np.zeros((1, 3), np.float32)))
    assert "xla_pmap[\n      axis_name=i\n      axis_size=1" in text, text
    assert "psum[axes=('i',) axis_index_groups=None]" in text, text   # as JAX prints it


def test_lowered_and_compiled_pmap_are_jax_stages():
    # JAX 0.10.2: pmap(f).lower(...) is a jax.stages.Lowered, .compile() a Compiled
    lowered = jax.pmap(lambda x, y: 2 * x + y).lower(jnp.array([3]), jnp.array([4]))
    assert isinstance(lowered, jax.stages.Lowered)
    assert lowered.out_info.shape == (1,) and lowered.out_info.dtype == jnp.int32
    compiled = lowered.compile()
    assert isinstance(compiled, jax.stages.Compiled)
    assert compiled(jnp.array([3]), jnp.array([4])).tolist() == [10]
    assert compiled.out_info.shape == (1,)
