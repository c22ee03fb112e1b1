"""jax.checkpoint (remat): values and gradients under every policy, with scan/cond/while
inside and under jit; which residuals each policy saves (saved_residuals and
print_saved_residuals, as in JAX's remat guide); checkpoint_name; per-step remat inside
scan; prevent_cse's optimization barrier; static_argnums and its errors."""
import logging
from functools import partial

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax.ad_checkpoint import checkpoint_name, print_saved_residuals, saved_residuals

from harness import EXECUTORS

cp = jax.checkpoint_policies

POLICIES = {
    "default": None,
    "nothing": cp.nothing_saveable,
    "everything": cp.everything_saveable,
    "dots": cp.dots_saveable,
    "checkpoint_dots": cp.checkpoint_dots,
    "dots_no_batch": cp.dots_with_no_batch_dims_saveable,
    "only_names": cp.save_only_these_names("h"),
    "any_names_but": cp.save_any_names_but_these("h"),
    "anything_except": cp.save_anything_except_these_names("h"),
    "both": cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("h")),
}


def close(a, b, rtol=1e-5, atol=1e-6):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def model(W, x):
    """Control flow and dots: a scan of dense layers, a cond and a fori_loop."""
    def layer(h, w_scale):
        h = jnp.tanh(jnp.dot(W * w_scale, h))
        return checkpoint_name(h, "h"), jnp.sum(jnp.sin(h))

    h, ys = lax.scan(layer, x, jnp.linspace(0.5, 1.0, 3))
    h = lax.cond(jnp.sum(h) > 0, lambda h: jnp.sin(h) * 2., lambda h: jnp.cos(h), h)
    h = lax.fori_loop(0, 2, lambda i, h: h * jnp.cos(h), h)
    return jnp.sum(h ** 2) + jnp.sum(ys)


W = jnp.array(np.random.default_rng(0).normal(size=(4, 4)) * 0.5, jnp.float32)
X = jnp.linspace(-1., 1., 4)


@pytest.mark.parametrize("name", list(POLICIES))
def test_grad_with_control_flow_matches_without_checkpoint(name):
    expected = jax.grad(model, argnums=(0, 1))(W, X)
    g = jax.checkpoint(model, policy=POLICIES[name])
    close(g(W, X), model(W, X))
    close(jax.grad(g, argnums=(0, 1))(W, X), expected)
    for executor in EXECUTORS:
        with config.executor(executor):
            close(jax.jit(jax.grad(g, argnums=(0, 1)))(W, X), expected, rtol=1e-4)
    close(jax.value_and_grad(g)(W, X), jax.value_and_grad(model)(W, X))


@pytest.mark.parametrize("name", ["default", "everything", "dots"])
def test_forward_mode_and_higher_order(name):
    g = jax.checkpoint(model, policy=POLICIES[name])
    t = jnp.ones_like(X)
    close(jax.jvp(lambda x: g(W, x), (X,), (t,)), jax.jvp(lambda x: model(W, x), (X,), (t,)))
    _, f_jvp = jax.linearize(lambda x: g(W, x), X)
    close(f_jvp(t), jax.jvp(lambda x: model(W, x), (X,), (t,))[1])
    close(jax.hessian(lambda x: g(W, x))(X), jax.hessian(lambda x: model(W, x))(X),
          rtol=1e-4, atol=1e-5)


def test_vmap_of_grad_of_checkpoint():
    xs = jnp.stack([X, X * 0.5, -X])
    g = jax.checkpoint(model, policy=cp.dots_saveable)
    close(jax.vmap(jax.grad(g), (None, 0))(W, xs),
          np.stack([jax.grad(model)(W, x) for x in xs]))


def test_checkpoint_around_scan_and_cond_under_grad():
    """The case that used to fail: the JVP of a checkpointed scan/cond splits into a known
    primal part and a staged tangent part."""
    def f(x):
        c, ys = lax.scan(lambda c, xi: (jnp.sin(c) * xi, jnp.cos(c)), x[0], x)
        return lax.cond(c > 0, lambda a: a * 2., jnp.sin, c) + jnp.sum(ys)

    x = jnp.arange(1., 4.)
    expected = jax.grad(f)(x)
    close(jax.grad(jax.checkpoint(f))(x), expected)
    close(jax.jit(jax.grad(jax.checkpoint(f)))(x), expected)
    close(jax.grad(jax.jit(jax.checkpoint(f)))(x), expected)


# --- which residuals are saved ----------------------------------------------------------

def _g(W, x):
    return jnp.sin(jnp.dot(W, x))


def _f(W1, W2, W3, x):
    return _g(W3, _g(W2, _g(W1, x)))


_Ws = (jnp.ones((5, 4)), jnp.ones((6, 5)), jnp.ones((7, 6)))
_x = jnp.ones(4)
_ARGS = ["f32[5,4] from the argument W1", "f32[6,5] from the argument W2",
         "f32[7,6] from the argument W3", "f32[4] from the argument x"]


def residual_lines(f, *args):
    return [f"{aval.str_short(True)} {desc}" for aval, desc in saved_residuals(f, *args)]


def test_print_saved_residuals_without_checkpoint(capsys):
    print_saved_residuals(_f, *_Ws, _x)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == _ARGS
    assert [line.split(" from ")[0] for line in lines[4:]] == [
        "f32[5] output of sin", "f32[5] output of cos", "f32[6] output of sin",
        "f32[6] output of cos", "f32[7] output of cos"]
    assert all(line.endswith("(_g)") and "test_checkpoint.py:" in line for line in lines[4:])


def test_checkpointed_sub_functions_save_only_their_inputs():
    def f2(W1, W2, W3, x):
        x = jax.checkpoint(_g)(W1, x)
        x = jax.checkpoint(_g)(W2, x)
        return jax.checkpoint(_g)(W3, x)

    lines = residual_lines(f2, *_Ws, _x)
    assert lines[:4] == _ARGS
    assert [line.split(" from ")[0] for line in lines[4:]] == [
        "f32[5] output of sin", "f32[6] output of sin"]
    close(jax.grad(lambda *a: jnp.sum(f2(*a)), argnums=(0, 1, 2, 3))(*_Ws, _x),
          jax.grad(lambda *a: jnp.sum(_f(*a)), argnums=(0, 1, 2, 3))(*_Ws, _x))


@pytest.mark.parametrize("name,extra", [
    ("nothing", []),
    ("everything", ["f32[5] output of sin", "f32[5] output of cos", "f32[6] output of sin",
                    "f32[6] output of cos", "f32[7] output of cos"]),
    ("dots", ["f32[5] output of dot_general", "f32[6] output of dot_general",
              "f32[7] output of dot_general"]),
    ("dots_no_batch", ["f32[5] output of dot_general", "f32[6] output of dot_general",
                       "f32[7] output of dot_general"]),
])
def test_saved_residuals_follow_the_policy(name, extra):
    lines = residual_lines(jax.checkpoint(_f, policy=POLICIES[name]), *_Ws, _x)
    assert lines[:4] == _ARGS
    assert [line.split(" from ")[0] for line in lines[4:]] == extra


def test_batched_dots_are_not_saved_by_the_no_batch_dims_policy():
    def f(a, b):
        return jnp.sum(jnp.sin(jnp.einsum("bij,bjk->bik", a, b)))

    a = jnp.ones((2, 3, 3))
    kinds = {name: [d for _, d in saved_residuals(jax.checkpoint(f, policy=POLICIES[name]),
                                                  a, a)]
             for name in ("dots", "dots_no_batch")}
    assert any("dot_general" in d for d in kinds["dots"])
    assert not any("dot_general" in d for d in kinds["dots_no_batch"])


def test_policies_see_inside_jitted_helpers():
    layer = jax.jit(lambda w, x: jnp.tanh(jnp.dot(w, x)))

    def f(w, x):
        return jnp.sum(jnp.sin(layer(w, x)))

    w, x = jnp.ones((3, 3)) * 0.3, jnp.arange(3.)
    descs = [d for _, d in saved_residuals(jax.checkpoint(f, policy=cp.dots_saveable), w, x)]
    assert descs[:2] == ["from the argument w", "from the argument x"]
    assert len(descs) == 3 and descs[2].startswith("output of dot_general from ")
    for policy in (None, cp.dots_saveable, cp.everything_saveable):
        g = jax.checkpoint(f, policy=policy)
        close(jax.grad(g, argnums=(0, 1))(w, x), jax.grad(f, argnums=(0, 1))(w, x))


def test_names_select_what_is_saved():
    def f4(W1, W2, W3, x):
        x = checkpoint_name(_g(W1, x), name="a")
        x = checkpoint_name(_g(W2, x), name="b")
        return checkpoint_name(_g(W3, x), name="c")

    only_a = residual_lines(jax.checkpoint(f4, policy=cp.save_only_these_names("a")),
                            *_Ws, _x)
    assert only_a[:4] == _ARGS and len(only_a) == 5
    assert only_a[4].startswith("f32[5] named 'a' from ") and only_a[4].endswith("(f4)")
    but_a = residual_lines(jax.checkpoint(f4, policy=cp.save_any_names_but_these("a")),
                           *_Ws, _x)
    assert [line.split(" from ")[0] for line in but_a[4:]] == ["f32[6] named 'b'"]
    offload_a = cp.save_and_offload_only_these_names(   # one memory space: offload = save
        names_which_can_be_saved=[], names_which_can_be_offloaded=["a"],
        offload_src="device", offload_dst="pinned_host")
    assert residual_lines(jax.checkpoint(f4, policy=offload_a), *_Ws, _x) == only_a
    expected = jax.grad(lambda *a: jnp.sum(_f(*a)), argnums=(0, 1, 2, 3))(*_Ws, _x)
    for policy in (cp.save_only_these_names("a"), cp.save_any_names_but_these("a"),
                   cp.save_anything_except_these_names("b")):
        loss = jax.checkpoint(lambda *a: jnp.sum(f4(*a)), policy=policy)
        close(jax.grad(loss, argnums=(0, 1, 2, 3))(*_Ws, _x), expected)


def test_checkpoint_name_is_the_identity_on_pytrees():
    tree = {"a": jnp.arange(3.), "b": (jnp.ones(2), 2.0)}
    out = checkpoint_name(tree, "t")
    close(out, tree)
    assert "name[name=t]" in str(jax.make_jaxpr(lambda x: checkpoint_name(x, "t"))(1.0))
    close(jax.grad(lambda x: checkpoint_name(jnp.sin(x), "s"))(0.3), np.cos(0.3))
    close(jax.vmap(lambda x: checkpoint_name(x * 2, "v"))(jnp.arange(3.)), np.arange(3.) * 2)


def test_pytree_argument_names():
    def loss(params, x):
        return jnp.sum(jnp.dot(params["w"], x) * params["b"][0])

    params = {"w": jnp.ones((2, 3)), "b": [jnp.ones(2)]}
    descs = [d for _, d in saved_residuals(jax.checkpoint(loss), params, jnp.ones(3))]
    assert descs == ["from the argument params['b'][0]", "from the argument params['w']",
                     "from the argument x"]


# --- per-step remat inside scan ---------------------------------------------------------

def _step(c, x):
    h = jnp.tanh(c * x + jnp.sin(c))
    return h, jnp.cos(h) * x


def _rnn(c0, xs, step):
    c, ys = lax.scan(step, c0, xs)
    return c + jnp.sum(ys)


def test_checkpoint_inside_scan_recomputes_each_step():
    xs = jnp.linspace(0.1, 1., 6)
    expected = jax.grad(_rnn, argnums=(0, 1))(0.3, xs, _step)
    remat_step = jax.checkpoint(_step)
    close(jax.grad(_rnn, argnums=(0, 1))(0.3, xs, remat_step), expected)
    for executor in EXECUTORS:
        with config.executor(executor):
            close(jax.jit(jax.grad(_rnn, argnums=(0, 1)), static_argnums=2)(
                0.3, xs, remat_step), expected, rtol=1e-4)
    # Only the carry of each step is kept (and the xs), instead of every intermediate.
    plain = saved_residuals(lambda c, x: _rnn(c, x, _step), 0.3, xs)
    remat = saved_residuals(lambda c, x: _rnn(c, x, remat_step), 0.3, xs)
    assert len(remat) < len(plain)
    assert sorted(a.str_short(True) for a, _ in remat) == ["f32[6]", "f32[6]"]
    # The backward scan recomputes the step inside a differentiated checkpoint.
    text = str(jax.make_jaxpr(jax.grad(_rnn), static_argnums=2)(0.3, xs, remat_step))
    assert "differentiated=True" in text


# --- prevent_cse, static_argnums, errors ------------------------------------------------

@pytest.mark.parametrize("prevent_cse", [True, False])
def test_prevent_cse_puts_an_optimization_barrier_in_the_backward_pass(prevent_cse):
    g = jax.checkpoint(lambda x: jnp.sum(jnp.sin(jnp.sin(x))), prevent_cse=prevent_cse)
    text = jax.jit(jax.grad(g)).lower(X).as_text()
    assert ("optimization_barrier" in text) == prevent_cse
    close(jax.jit(jax.grad(g))(X), jax.grad(lambda x: jnp.sum(jnp.sin(jnp.sin(x))))(X))


def test_static_argnums():
    calls = []

    def f(x, n, scale=1.0):
        calls.append(n)
        for _ in range(n):
            x = jnp.sin(x) * scale
        return x

    for nums in (1, (1,), (-1,)):
        g = jax.checkpoint(f, static_argnums=nums)
        close(jax.grad(g)(0.5, 3), jax.grad(f)(0.5, 3))
        close(jax.grad(g)(0.5, 2, scale=2.0), jax.grad(lambda x: f(x, 2, 2.0))(0.5))


def test_python_control_flow_on_a_traced_argument_points_at_static_argnums():
    def f(x, n):
        return x * (2. if n > 0 else 3.)

    with pytest.raises(jax.errors.ConcretizationTypeError) as info:
        jax.grad(jax.checkpoint(f))(1., 1.)
    assert any("static_argnums" in note for note in info.value.__notes__)
    assert jax.grad(jax.checkpoint(f, static_argnums=1))(1., 1.) == 2.


@pytest.mark.parametrize("nums,error", [((3,), ValueError), ((-3,), ValueError),
                                        ("1", TypeError), ((1.0,), TypeError)])
def test_bad_static_argnums(nums, error):
    with pytest.raises(error, match="static_argnums"):
        jax.grad(jax.checkpoint(lambda x, n: x * n, static_argnums=nums))(1., 2)


def test_bad_arguments():
    with pytest.raises(TypeError, match="callable"):
        jax.checkpoint(3)
    with pytest.raises(TypeError, match="policy"):
        jax.checkpoint(jnp.sin, policy="dots")


def test_effects_inside_a_checkpoint_run_once_per_pass(capsys):
    def f(x):
        jax.debug.print("x={}", x)
        return jnp.sum(jnp.sin(x))

    for policy in (None, cp.everything_saveable):
        close(jax.grad(jax.checkpoint(f, policy=policy))(X), np.cos(np.asarray(X)))
        jax.effects_barrier()
        assert capsys.readouterr().out.count("x=") == 1


def test_jaxpr_shows_the_checkpoint_and_its_params():
    text = str(jax.make_jaxpr(jax.checkpoint(jnp.sin, policy=cp.dots_saveable))(1.0))
    assert "checkpoint[" in text and "policy=dots_saveable" in text
    assert "prevent_cse=True" in text and "differentiated=False" in text


def test_eager_checkpoint_traces_its_arguments():
    # As JAX's: even outside any transformation, the function sees tracers for its
    # non-static arguments (flax's nn.remat relies on it), and returns Arrays.
    seen = []

    def f(x, flag):
        seen.append((isinstance(x, jax.Array), isinstance(flag, jax.Array)))
        return x * 2

    out = jax.checkpoint(f)(3, True)
    assert seen == [(True, True)]                      # JAX 0.10.2
    assert isinstance(out, jax.Array) and int(out) == 6 and out.dtype == jnp.int32
    assert out.weak_type                               # JAX 0.10.2: weak int32
    static_seen = []
    jax.checkpoint(lambda x, flag: static_seen.append(flag) or x,
                   static_argnums=(1,))(1.0, True)
    assert static_seen == [True]
    with pytest.raises(TypeError, match="not a valid JAX type"):
        jax.checkpoint(lambda s: s)("a")


def test_eager_checkpoint_runs_a_jitted_function_as_jit_does():
    # JAX runs an eager checkpoint's body equation by equation, so a jitted function
    # inside it runs compiled: its result is bit for bit the jitted function's.
    f = jax.jit(jnp.exp)
    x = np.float32(2.0) + np.float32(1e-4) * np.float32(0.978738)
    assert np.asarray(jax.checkpoint(f)(x)).item() == np.asarray(f(x)).item()
    if config.executor.value == "xla":
        assert np.asarray(jax.checkpoint(f)(x)).item() == 7.389780044555664  # JAX 0.10.2


def test_saved_bf16_residual_is_rounded_where_the_forward_pass_reads_it():
    # JAX 0.10.2's test_excess_precision_hell: XLA may keep the bf16 dot in f32 when it
    # fuses it with foo's cast, so a saved residual that the forward pass also reads is
    # rounded (reduce_precision) and both passes see the same value.
    @jax.custom_vjp
    def dot(x):
        return jnp.dot(x, x)
    dot.defvjp(lambda x: (dot(x), None), lambda _, g: (g,))

    @jax.custom_vjp
    def foo(x):
        return jnp.float32(1.) * x.astype("float32")
    foo.defvjp(lambda x: (foo(x), x), lambda x, _: (jnp.float32(1.) * x.astype("float32"),))

    def f(x):
        return foo(dot(x))
    f = jax.jit(jax.checkpoint(f, policy=lambda *_, **__: True))

    x = (jnp.bfloat16(1) + jnp.finfo("bfloat16").eps) * jnp.eye(2, dtype="bfloat16")
    y, vjp = jax.vjp(f, x)
    y_, = vjp(jnp.ones_like(y))
    want = np.diag([1.015625, 1.015625]).astype(np.float32)          # JAX 0.10.2
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(y_, want)
    text = str(jax.make_jaxpr(lambda x: jax.vjp(f, x)[0])(x))
    assert "reduce_precision[exponent_bits=8 mantissa_bits=7]" in text


def test_eager_checkpoint_traces_once_per_argument_types():
    # JAX 0.10.2 caches a checkpoint's trace per function, argument types and static
    # values: called eagerly ten times, the function is traced once.
    calls = []

    @jax.checkpoint
    def g(x):
        calls.append(1)
        return lax.sin(x), 3.

    for _ in range(10):
        g(2.)[0].block_until_ready()
    assert len(calls) == 1
    g(jnp.ones(2))
    assert len(calls) == 2

    calls.clear()

    def h(x, sign):
        calls.append(1)
        return x * sign if sign > 0 else -x

    h_static = jax.checkpoint(h, static_argnums=(1,))
    for _ in range(5):
        close(h_static(2., 1.), 2.)
        close(h_static(2., -1.), -2.)
    assert len(calls) == 2    # each static value traced once
    close(jax.grad(lambda y: jax.checkpoint(lambda x: x * y)(2.))(3.), 2.)
    # a function closing over an outer tracer is traced again each time
    y_box = []

    def closes_over(x):
        return x * y_box[-1]
    f_remat = jax.checkpoint(closes_over)

    def outer(y):
        y_box.append(y)
        return f_remat(2.)
    close(jax.grad(outer)(3.), 2.)
    close(jax.grad(outer)(4.), 2.)


def test_prevent_cse_per_argument():
    # JAX 0.10.2: a tuple prevent_cse (a tree prefix of the arguments) puts only the
    # flagged inputs (and the cotangents) of the recomputation behind the barrier.
    @partial(jax.checkpoint, prevent_cse=(False, True))
    def layer(W, x):
        return x @ W + jnp.array([1.0, 2.0, 3.0])

    def loss(Ws, x):
        for W in Ws:
            x = layer(W, x)
        return jnp.sum(x ** 2)

    Ws, x = [jnp.ones((3, 3))] * 2, jnp.ones(3)
    text = jax.jit(jax.grad(loss, (0, 1))).lower(Ws, x).as_text()
    barriers = [line.split("=")[0].strip() for line in text.splitlines()
                if "optimization_barrier" in line]
    assert [b.split(":")[1] for b in barriers] == ["2", "2"]
    gW, gx = jax.grad(loss, (0, 1))(Ws, x)
    close(gW[0], np.full((3, 3), 102.))
    close(gx, np.full(3, 306.))

    @partial(jax.checkpoint, prevent_cse=({"W": False, "x": True},))
    def layer2(d):
        return d["x"] @ d["W"]
    text = jax.jit(jax.grad(lambda W, x: jnp.sum(layer2({"W": W, "x": x}) ** 2), (0, 1))
                   ).lower(Ws[0], x).as_text()
    assert text.count("optimization_barrier") == 1
    with pytest.raises(TypeError, match="prevent_cse must be a bool or tuple of bools"):
        jax.checkpoint(lambda a: a, prevent_cse=1)


def test_differentiated_checkpoint_logs_what_it_saves(caplog):
    # JAX 0.10.2's log lines (DEBUG; WARNING under jax_log_checkpoint_residuals)
    def f(x):
        x = jnp.sin(x)
        return jnp.cos(x.sum())

    x = jnp.arange(3.)
    with caplog.at_level(logging.DEBUG, logger="jax"):
        jax.grad(jax.checkpoint(f))(x)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "remat-decorated function saving inputs with shapes:\n  float32[3]\n" in text
    assert "intermediates" not in text
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="jax"):
        jax.grad(jax.checkpoint(f, policy=lambda *_, **__: True))(x)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "saving inputs" not in text
    assert "remat-decorated function saving these intermediates:\n  float32[3] from output " \
           "of cos from " in text and " sin " in text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="jax"), \
            config.log_checkpoint_residuals(True):
        jax.grad(jax.checkpoint(f, policy=lambda p, *_, **__: str(p) == "cos"))(x)
    assert [r.getMessage().splitlines()[:4] for r in caplog.records] == [[
        "remat-decorated function saving inputs with shapes:", "  float32[3]",
        "and saving these intermediates:", caplog.records[0].getMessage().splitlines()[3]]]
    assert " cos " in caplog.records[0].getMessage()
    assert " sin " not in caplog.records[0].getMessage()


def test_policy_reaches_inside_a_cond():
    # dots_saveable saves the dots inside the cond's branch: the backward pass (the vjp's
    # jaxpr) recomputes only sin and cos from them. Counts and values recorded on JAX.
    x = jnp.ones((5,))

    @partial(jax.checkpoint, policy=jax.checkpoint_policies.checkpoint_dots)
    def f(W):
        def g(x):
            x = jnp.sin(jnp.dot(x, W, precision=lax.Precision.HIGHEST))
            return jnp.sin(jnp.dot(x, W, precision=lax.Precision.HIGHEST))
        return lax.cond(x.sum() > 0, g, lambda x: x, x)

    W = jnp.arange(25.0).reshape(5, 5) / 50
    y, f_vjp = jax.vjp(f, W)
    text = str(jax.make_jaxpr(f_vjp)(y))
    assert (text.count(" sin "), text.count(" cos "), text.count(" dot_")) == (1, 2, 3)
    np.testing.assert_allclose(f_vjp(jnp.ones(5))[0], [
        [0.518832, 0.540859, 0.52153, 0.459259, 0.35327],
        [0.547406, 0.565561, 0.542149, 0.47562, 0.365233],
        [0.570865, 0.58584, 0.559077, 0.489052, 0.375055],
        [0.588974, 0.601495, 0.572144, 0.499421, 0.382637],
        [0.601551, 0.612367, 0.581219, 0.506622, 0.387902]], rtol=1e-5)


def test_policy_reaches_inside_a_scan():
    # dots_saveable saves the dots of each step, stacked: the backward pass recomputes the
    # sins and coses from them, and the carry it reads. Counts and values recorded on JAX.
    x = jnp.ones((5,))

    @partial(jax.checkpoint, policy=jax.checkpoint_policies.checkpoint_dots)
    def f(W):
        def body(x, _):
            x = jnp.sin(jnp.dot(x, W, precision=lax.Precision.HIGHEST))
            return jnp.sin(jnp.dot(x, W, precision=lax.Precision.HIGHEST)), None
        return lax.scan(body, x, None, length=2)[0]

    W = jnp.arange(25.0).reshape(5, 5) / 50
    y, f_vjp = jax.vjp(f, W)
    text = str(jax.make_jaxpr(f_vjp)(y))
    assert (text.count(" sin "), text.count(" cos "), text.count(" dot_")) == (2, 2, 4)
    np.testing.assert_allclose(f_vjp(jnp.ones(5))[0], [
        [0.550023, 0.630654, 0.658664, 0.631466, 0.547363],
        [0.583192, 0.667575, 0.696618, 0.667606, 0.578756],
        [0.611645, 0.699121, 0.728968, 0.698359, 0.605442],
        [0.635146, 0.72503, 0.75544, 0.723463, 0.62719],
        [0.653503, 0.745083, 0.775809, 0.742703, 0.643817]], rtol=1e-5)


def test_scan_carry_is_recomputed_from_saved_values():
    # The carry's update (sin) is saved per step, so the linearized function computes
    # neither sin nor anything but the two coses the tangent needs (as JAX's does).
    save_sin = lambda prim, *_, **__: str(prim) == "sin"

    def g(x):
        def body(c, _):
            s = jnp.sin(c)
            return s, jnp.cos(c) * s
        c, ys = lax.scan(body, x, None, length=3)
        return c + ys.sum()

    g = jax.checkpoint(g, policy=save_sin)
    text = str(jax.make_jaxpr(jax.linearize(g, 4.)[1])(1.))
    assert (text.count(" sin "), text.count(" cos ")) == (0, 2)
    np.testing.assert_allclose([jax.grad(g)(0.7), jax.grad(jax.grad(g))(0.7)],
                               [1.1085466, -5.210665], rtol=1e-5)
