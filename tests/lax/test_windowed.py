"""lax.reduce_window (the sum/max/min fast paths and the general computation), max-pool
gradients (select_and_scatter_add), lax.reduce with a general reducer, and the derivatives
of cummax/cummin/cumlogsumexp: values against loop references, check_grads, vmap against a
loop, jit on both executors, JAX's errors."""
import itertools

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.test_util import check_grads

from harness import EXECUTORS, jit_on, rand



def reference_window(x, init, fn, dims, strides, padding, base_dilation, window_dilation):
    """Windows visited one by one: pads and dilation holes hold init."""
    shape = [(n - 1) * d + 1 for n, d in zip(x.shape, base_dilation)]
    spread = np.full(shape, init, x.dtype)
    spread[tuple(slice(None, None, d) for d in base_dilation)] = x
    padded = np.pad(spread, [(max(lo, 0), max(hi, 0)) for lo, hi in padding],
                    constant_values=init)
    padded = padded[tuple(slice(max(-lo, 0), padded.shape[i] - max(-hi, 0))
                          for i, (lo, hi) in enumerate(padding))]
    span = [(w - 1) * d + 1 for w, d in zip(dims, window_dilation)]
    out_shape = [max(0, (p - s) // st + 1) for p, s, st in zip(padded.shape, span, strides)]
    out = np.empty(out_shape, x.dtype)
    for pos in itertools.product(*[range(n) for n in out_shape]):
        acc = init
        for tap in itertools.product(*[range(w) for w in dims]):
            acc = fn(acc, padded[tuple(p * s + t * d for p, s, t, d in
                                       zip(pos, strides, tap, window_dilation))])
        out[pos] = acc
    return out


WINDOWS = [
    # dims, strides, padding, base_dilation, window_dilation
    ((2, 2), (2, 2), "VALID", None, None),
    ((3, 3), (1, 1), "SAME", None, None),
    ((2, 3), (1, 2), [(1, 0), (2, -1)], (1, 2), (2, 1)),
]


@pytest.mark.parametrize("window", WINDOWS, ids=range(len(WINDOWS)))
@pytest.mark.parametrize("kind", ["sum", "max", "min", "general"])
@pytest.mark.parametrize("executor", ["eager"] + EXECUTORS)
def test_reduce_window_matches_loops(window, kind, executor):
    dims, strides, padding, bd, wd = window
    x = rand((5, 6))
    computation, init, fn = {
        "sum": (lax.add, 0.0, np.add), "max": (lax.max, -np.inf, np.maximum),
        "min": (lax.min, np.inf, np.minimum),
        # a reducer no fast path knows: keep the value of larger magnitude
        "general": (lambda a, b: lax.select(lax.abs(a) >= lax.abs(b), a, b), 0.0,
                    lambda a, b: a if abs(a) >= abs(b) else b)}[kind]

    def f(x):
        return lax.reduce_window(x, init, computation, dims, strides, padding, bd, wd)
    primitive = jax.make_jaxpr(f)(x).eqns[0].primitive.name
    assert primitive == ("reduce_window" if kind == "general" else f"reduce_window_{kind}")
    pads = padding if not isinstance(padding, str) else lax.padtype_to_pads(
        x.shape, [(w - 1) * d + 1 for w, d in zip(dims, wd or (1, 1))], strides, padding)
    expected = reference_window(x, np.float32(init), fn, dims, strides, pads,
                                bd or (1, 1), wd or (1, 1))
    run = f if executor == "eager" else jit_on(executor, f)
    np.testing.assert_allclose(run(x), expected, rtol=1e-5, atol=1e-5)


def test_reduce_window_variadic_and_non_identity_init():
    x = rand((4, 6))
    idx = np.arange(24, dtype=np.int32).reshape(4, 6)

    def argmax_pool(x, idx):
        return lax.reduce_window((x, idx), (-np.inf, np.int32(-1)),
                                 lambda a, b: (lax.max(a[0], b[0]),
                                               lax.select(a[0] >= b[0], a[1], b[1])),
                                 (2, 3), (2, 3), "VALID")
    for run in (argmax_pool, jit_on("xla", argmax_pool), jit_on("numpy", argmax_pool)):
        values, where = run(x, idx)
        blocks = x.reshape(2, 2, 2, 3).transpose(0, 2, 1, 3).reshape(2, 2, 6)
        np.testing.assert_allclose(values, blocks.max(-1))
        np.testing.assert_array_equal(x.reshape(-1)[np.asarray(where)], blocks.max(-1))
    # A sum starting at 1 is not the fast path: the init counts once per window.
    f = lambda x: lax.reduce_window(x, 1.0, lax.add, (2, 2), (1, 1), "VALID")  # noqa: E731
    assert jax.make_jaxpr(f)(x).eqns[0].primitive.name == "reduce_window"
    expected = reference_window(x, np.float32(0), np.add, (2, 2), (1, 1), [(0, 0)] * 2,
                                (1, 1), (1, 1)) + 1
    np.testing.assert_allclose(f(x), expected, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(f)(x), expected, rtol=1e-5)


# (reverse mode of a window-dilated max pool is refused, as in JAX: tested below)
@pytest.mark.parametrize("kind,window", [
    (kind, w) for kind in ("sum", "max", "general") for w in WINDOWS
    if not (kind == "max" and w[4] is not None)])
def test_reduce_window_gradients(kind, window):
    dims, strides, padding, bd, wd = window
    computation, init = {"sum": (lax.add, 0.0), "max": (lax.max, -np.inf),
                         "general": (lambda a, b: a * b, 1.0)}[kind]

    def f(x):
        return lax.reduce_window(x, init, computation, dims, strides, padding, bd, wd)
    with jax.enable_x64(True):
        x = np.random.default_rng(1).permutation(30).reshape(5, 6) / 10.0 + 0.5
        check_grads(f, (x,), 2 if kind != "general" else 1, eps=1e-4)


def test_max_pool_gradient_goes_to_the_max():
    x = rand((4, 4))

    def pool(x):
        return jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID"))
    g = jax.grad(pool)(x)
    expected = np.zeros_like(x)
    for i, j in itertools.product(range(2), range(2)):
        block = x[2 * i:2 * i + 2, 2 * j:2 * j + 2]
        a, b = np.unravel_index(np.argmax(block), (2, 2))
        expected[2 * i + a, 2 * j + b] = 1
    np.testing.assert_array_equal(g, expected)
    np.testing.assert_array_equal(jax.jit(jax.grad(pool))(x), expected)
    assert "select_and_scatter_add" in str(jax.make_jaxpr(jax.grad(pool))(x))


def test_window_dilated_max_pool_reverse_mode_is_refused():
    def pool(x):
        return jnp.sum(lax.reduce_window(x, -jnp.inf, lax.max, (2,), (1,), "VALID",
                                         window_dilation=(2,)))
    x = rand((6,))
    jax.jvp(pool, (x,), (np.ones_like(x),))     # forward mode works
    with pytest.raises(NotImplementedError, match="window dilation"):
        jax.grad(pool)(x)


@pytest.mark.parametrize("kind", ["max", "general"])
def test_reduce_window_vmap_matches_loop(kind):
    computation, init = {"max": (lax.max, -np.inf),
                         "general": (lambda a, b: lax.max(a, b) + 0 * b, -np.inf)}[kind]
    xs = rand((3, 5, 6))

    def f(x):
        return lax.reduce_window(x, init, computation, (2, 2), (1, 2), "SAME")
    for axis in (0, 1, 2):
        out = jax.vmap(f, in_axes=axis)(np.moveaxis(xs, 0, axis))
        np.testing.assert_allclose(out, np.stack([f(x) for x in xs]), rtol=1e-6)


def test_reduce_window_errors():
    x = rand((4, 4))
    with pytest.raises(TypeError, match="one entry per operand dimension"):
        lax.reduce_window(x, 0.0, lax.add, (2,), (1, 1), "VALID")
    with pytest.raises(TypeError, match="init value dtype"):
        lax.reduce_window(x, np.int32(0), lax.max, (2, 2), (1, 1), "VALID")
    # ... but an init that is its own dtype's identity takes the monoid path, as in JAX
    assert lax.reduce_window(x, np.int32(0), lax.add, (2, 2), (1, 1), "VALID").dtype == np.float32
    with pytest.raises(ValueError, match="same tree structure as the operands"):
        lax.reduce_window(x, 0.0, lambda a, b: (a, b), (2, 2), (1, 1), "VALID")
    with pytest.raises(ValueError, match="reduce_window output must have the same tree "
                                         r"structure as the operands PyTreeDef\(\*\) vs"):
        lax.reduce_window(x, 0.0, lambda a, b: [a + b], (2, 2), (1, 1), "VALID")
    # lax.reduce takes any container of one value per operand, as JAX's does
    assert lax.reduce(x, 0.0, lambda a, b: [a + b], (0,)).shape == (4,)
    with pytest.raises(ValueError, match="Unknown padding type"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "CAUSAL")

    def closes_over(w):
        return lax.reduce_window(x, 0.0, lambda a, b: a + b * w, (2, 2), (1, 1), "VALID")
    with pytest.raises(NotImplementedError, match="closes over traced values"):
        jax.jit(closes_over)(2.0)


@pytest.mark.parametrize("jitted", [False, True])
def test_infinite_init_on_integer_operand(jitted):
    # equinox's MaxPool passes -inf for any dtype: JAX sees max's identity (in the init's
    # own dtype) and reduces with the operand's identity; values from JAX 0.10.2.
    x = jnp.arange(6, dtype=jnp.int32).reshape(1, 6)
    wrap = jax.jit if jitted else (lambda f: f)
    window_max = wrap(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2), (1, 2), "VALID"))
    window_min = wrap(lambda x: lax.reduce_window(x, jnp.inf, lax.min, (1, 2), (1, 2), "VALID"))
    assert window_max(x).tolist() == [[1, 3, 5]] and window_max(x).dtype == np.int32
    assert window_min(x).tolist() == [[0, 2, 4]]
    assert wrap(lambda x: lax.reduce(x, -jnp.inf, lax.max, (1,)))(x).tolist() == [5]
    assert lax.reduce(x > 2, -jnp.inf, lax.max, (1,)).tolist() == [True]
    with pytest.raises(TypeError, match="not representable in the operand dtype int32"):
        lax.reduce_window(x, -jnp.inf, lambda a, b: a + b, (1, 2), (1, 2), "VALID")


# --- lax.reduce -------------------------------------------------------------------------------

def test_reduce_fast_paths():
    x = rand((3, 4))
    for computation, init, name, ref in [(lax.add, 0.0, "reduce_sum", np.sum),
                                         (lax.mul, 1.0, "reduce_prod", np.prod),
                                         (lax.max, -np.inf, "reduce_max", np.max),
                                         (lax.min, np.inf, "reduce_min", np.min)]:
        def f(x, init=init, computation=computation):
            return lax.reduce(x, init, computation, (1,))
        assert jax.make_jaxpr(f)(x).eqns[0].primitive.name == name
        np.testing.assert_allclose(f(x), ref(x, axis=1), rtol=1e-6)
    b = np.array([[True, False], [True, True]])
    np.testing.assert_array_equal(lax.reduce(b, True, lax.bitwise_and, (0,)), [True, False])


@pytest.mark.parametrize("executor", ["eager"] + EXECUTORS)
def test_reduce_general_and_variadic(executor):
    x = rand((3, 5))
    idx = np.broadcast_to(np.arange(5, dtype=np.int32), (3, 5))

    def argmax(x, idx):
        return lax.reduce((x, idx), (-np.inf, np.int32(-1)),
                          lambda a, b: (lax.max(a[0], b[0]),
                                        lax.select(a[0] >= b[0], a[1], b[1])), (1,))

    def sum_plus_ten(x):
        return lax.reduce(x, 10.0, lax.add, (0, 1))
    run = (lambda f: f) if executor == "eager" else (lambda f: jit_on(executor, f))
    values, where = run(argmax)(x, idx)
    np.testing.assert_allclose(values, x.max(1))
    np.testing.assert_array_equal(where, x.argmax(1))
    assert jax.make_jaxpr(argmax)(x, idx).eqns[0].primitive.name == "reduce"
    np.testing.assert_allclose(run(sum_plus_ten)(x), x.sum() + 10, rtol=1e-5)


def test_reduce_general_gradients_and_vmap():
    def smooth_max(x):   # not a monoid lax knows, so the general reduce (and its JVP)
        return lax.reduce(x, -np.inf, lambda a, b: jnp.logaddexp(a, b), (0,))
    with jax.enable_x64(True):
        x = rand((4, 3)).astype(np.float64)
        np.testing.assert_allclose(smooth_max(x), np.logaddexp.reduce(x, axis=0))
        check_grads(smooth_max, (x,), 2, eps=1e-4)
    xs = rand((2, 4, 3))
    np.testing.assert_allclose(jax.vmap(smooth_max)(xs),
                               np.stack([smooth_max(x) for x in xs]), rtol=1e-6)


# --- cumulative reductions --------------------------------------------------------------------

@pytest.mark.parametrize("op", [lax.cummax, lax.cummin, lax.cumlogsumexp])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_gradients(op, reverse):
    with jax.enable_x64(True):
        x = np.random.default_rng(2).permutation(12).reshape(3, 4) / 4.0
        check_grads(lambda x: op(x, axis=1, reverse=reverse), (x,), 2)


def test_cummax_gradient_follows_the_running_max():
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0], np.float32)
    jac = jax.jacrev(lax.cummax)(x)
    expected = np.zeros((5, 5), np.float32)
    for i, j in enumerate([0, 1, 1, 3, 3]):
        expected[i, j] = 1
    np.testing.assert_array_equal(jac, expected)


def test_cumlogsumexp_is_stable_and_its_gradient_finite():
    x = np.array([-1000.0, 0.0, 3.0], np.float32)
    np.testing.assert_allclose(lax.cumlogsumexp(x), np.logaddexp.accumulate(x), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(lax.cumlogsumexp)(x), np.logaddexp.accumulate(x),
                               rtol=1e-6)
    jac = jax.jacfwd(lax.cumlogsumexp)(x)
    lower = np.tri(3, dtype=bool)    # d out[i] / d x[j] = exp(x[j] - out[i]) for j <= i
    w = np.exp(np.where(lower, x - np.logaddexp.accumulate(x)[:, None], -np.inf))
    np.testing.assert_allclose(jac, w, atol=1e-6)
    jac = jax.jacrev(lax.cumlogsumexp)(np.array([-np.inf, 0.0, 1.0], np.float32))
    assert np.isfinite(jac).all()


@pytest.mark.parametrize("jit", [False, True])
def test_non_associative_reducer_folds_in_window_order_skipping_padding(jit):
    """XLA folds acc = f(acc, x) from the init value over each window in row-major order,
    skipping padding and base-dilation holes; eager and the JVP do the same (values from
    JAX 0.10.2)."""
    def reduce(x):
        return lax.reduce_window(x, np.float32(1), lambda a, y: a * 2 - y * y, (1, 2), (1, 1),
                                 [(0, 0), (1, 1)], (1, 2))
    if jit:
        reduce = jax.jit(reduce)
    x = np.arange(1., 7., dtype=np.float32).reshape(2, 3) / 4
    out, tangent = jax.jvp(reduce, (x,), (np.ones_like(x),))
    np.testing.assert_array_equal(reduce(x), [[1.9375, 1.9375, 1.75, 1.75, 1.4375, 1.4375],
                                              [1, 1, 0.4375, 0.4375, -0.25, -0.25]])
    np.testing.assert_array_equal(out, reduce(x))
    np.testing.assert_array_equal(tangent, [[-0.5, -0.5, -1, -1, -1.5, -1.5],
                                            [-2, -2, -2.5, -2.5, -3, -3]])
    subtract = lambda x: lax.reduce_window(x, np.float32(1), lambda a, y: a - y, (3,), (1,),  # noqa: E731
                                           [(1, 1)])
    np.testing.assert_array_equal(subtract(np.arange(1., 5., dtype=np.float32)),
                                  [-2, -5, -8, -6])
