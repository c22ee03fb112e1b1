"""The FAQ's "How can I convert a JAX Tracer to a NumPy array?" as tests, and the callback
primitives behind its answers: jax.debug.print / jax.debug.callback, jax.pure_callback and
jax.experimental.io_callback, under jit (XLA host callbacks and the NumPy executor), vmap,
scan, while_loop and autodiff."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax.errors import TracerArrayConversionError
from pyjax.experimental import io_callback

def lines(capsys):
    return capsys.readouterr().out.splitlines()


# --- the FAQ ----------------------------------------------------------------------------------

def test_print_inside_jit_shows_a_tracer(capsys):
    @jax.jit
    def f(x):
        print(x)
        print(type(x).__name__)
        return x

    f(jnp.arange(5.0))
    out = lines(capsys)
    assert out[0] == "JitTracer(float32[5])"   # JAX 0.10.2 prints this
    assert out[1] == "DynamicJaxprTracer"
    f(jnp.arange(5.0))   # cached: the Python print does not run again
    assert lines(capsys) == []


def test_tracer_cannot_become_a_numpy_array():
    @jax.jit
    def f(x):
        return np.asarray(x)

    with pytest.raises(TracerArrayConversionError, match="__array__"):
        f(jnp.arange(5.0))


def test_debug_print_shows_the_value(capsys, executor):
    @jax.jit
    def f(x):
        jax.debug.print("x = {}", x)
        y = jnp.sin(x) * 0 + 2 * x
        jax.debug.print("y = {y}, total {t:.1f}", y=y, t=y.sum())
        return y

    f(jnp.arange(3.0))
    assert lines(capsys) == ["x = [0. 1. 2.]", "y = [0. 2. 4.], total 6.0"]
    f(jnp.arange(3.0) + 1)   # printed at every call, not only while tracing
    assert lines(capsys) == ["x = [1. 2. 3.]", "y = [2. 4. 6.], total 12.0"]


def test_pure_callback_calls_numpy_inside_jit_and_vmap(executor):
    def host_sin(x):
        assert isinstance(x, jax.Array)   # a concrete array, never a tracer
        return np.sin(np.asarray(x))

    def f(x):
        return jax.pure_callback(host_sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x,
                                 vmap_method="sequential")

    x = jnp.linspace(0.0, 1.0, 4)
    np.testing.assert_allclose(jax.jit(f)(x), np.sin(np.asarray(x)), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(f)(x.reshape(2, 2)),
                               np.sin(np.asarray(x)).reshape(2, 2), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.vmap(f))(x), np.sin(np.asarray(x)), rtol=1e-6)


def test_io_callback_runs_once_per_call_in_order(executor):
    log = []

    def record(tag, x):
        log.append((tag, float(np.asarray(x))))

    @jax.jit
    def f(x):
        io_callback(lambda v: record("a", v), None, x, ordered=True)
        y = x + 1
        io_callback(lambda v: record("b", v), None, y, ordered=True)
        return y

    f(1.0)
    f(10.0)
    assert log == [("a", 1.0), ("b", 2.0), ("a", 10.0), ("b", 11.0)]


# --- debug.print in transformations -----------------------------------------------------------

def test_debug_print_under_vmap_scan_and_while(capsys, executor):
    jax.vmap(lambda x: jax.debug.print("v {}", x))(jnp.arange(3))
    assert lines(capsys) == ["v 0", "v 1", "v 2"]

    def step(c, x):
        jax.debug.print("c={} x={}", c, x, ordered=True)
        return c + x, c

    jax.jit(lambda xs: lax.scan(step, 0, xs))(jnp.arange(3))
    assert lines(capsys) == ["c=0 x=0", "c=0 x=1", "c=1 x=2"]

    def loop(x):
        jax.debug.print("start {}", x, ordered=True)

        def body(i):
            jax.debug.print("i={}", i, ordered=True)
            return i + 1
        n = lax.while_loop(lambda i: i < 2, body, x)
        jax.debug.print("end {}", n, ordered=True)
        return n

    jax.jit(loop)(0)
    assert lines(capsys) == ["start 0", "i=0", "i=1", "end 2"]


def test_debug_print_under_grad_prints_primals(capsys):
    def f(x):
        jax.debug.print("x={}", x)
        return x * x
    assert float(jax.grad(f)(3.0)) == 6.0
    assert lines(capsys) == ["x=3.0"]
    assert float(jax.jit(jax.grad(f))(2.0)) == 4.0
    assert lines(capsys) == ["x=2.0"]


def test_debug_callback_and_format_errors(capsys):
    seen = []
    jax.jit(lambda x: jax.debug.callback(lambda v: seen.append(np.asarray(v)), x))(
        jnp.ones(2))
    np.testing.assert_array_equal(seen[0], np.ones(2))
    with pytest.raises(IndexError, match="tuple index out of range"):   # as in JAX
        jax.debug.print("{} {}", 1.0)
    with pytest.raises(TypeError, match="format string"):
        jax.debug.print(3)


def test_effects_are_kept_and_pure_calls_dropped():
    calls = []

    def host(v):
        calls.append(1)
        return np.asarray(v)

    def f(x):
        jax.pure_callback(host, jax.ShapeDtypeStruct((), jnp.float32), x)   # unused
        jax.debug.print("{}", x)
        return x + 1

    jaxpr = jax.make_jaxpr(f)(1.0)
    text = str(jaxpr)
    assert "debug_callback" in text and "pure_callback" in text
    assert "Debug" in {str(e) for e in jaxpr.effects}
    from pyjax._src.core.jaxpr import dce_jaxpr
    kept, _ = dce_jaxpr(jaxpr.jaxpr)
    names = [e.primitive.name for e in kept.eqns]
    assert "debug_callback" in names and "pure_callback" not in names
    io = jax.make_jaxpr(lambda x: io_callback(host, jax.ShapeDtypeStruct((), jnp.float32),
                                              x) * 0)(1.0)
    assert [str(e) for e in io.effects] == ["IO"]


# --- pure_callback and io_callback rules ------------------------------------------------------

@pytest.mark.parametrize("method,calls", [("sequential", 3), ("expand_dims", 1),
                                          ("broadcast_all", 1)])
def test_pure_callback_vmap_methods(method, calls):
    shapes = []

    def host(x, y):
        shapes.append((np.shape(x), np.shape(y)))
        return np.asarray(x) + np.asarray(y)

    def f(x, y):
        return jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y,
                                 vmap_method=method)

    out = jax.vmap(f, in_axes=(0, None))(jnp.arange(3.0), jnp.float32(10))
    np.testing.assert_allclose(out, [10, 11, 12])
    assert len(shapes) == calls
    if method == "expand_dims":
        assert shapes == [((3,), (1,))]
    if method == "broadcast_all":
        assert shapes == [((3,), (3,))]


def test_pure_callback_errors():
    f = lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), jnp.float32), x)  # noqa
    with pytest.raises(NotImplementedError, match="vmap_method"):
        jax.vmap(f)(jnp.arange(2.0))
    with pytest.raises(ValueError, match="custom_jvp"):
        jax.grad(f)(1.0)
    with pytest.raises(ValueError, match="vmap_method must be one of"):
        jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), jnp.float32), 1.0,
                          vmap_method="bogus")
    with pytest.raises(ValueError, match="64-bit"):
        jax.pure_callback(np.sin, jax.ShapeDtypeStruct((), np.float64), 1.0)
    bad = lambda x: jax.pure_callback(lambda v: np.zeros(2, np.float32),  # noqa: E731
                                      jax.ShapeDtypeStruct((3,), jnp.float32), x)
    with pytest.raises(Exception, match="incorrect output shape"):
        jax.jit(bad)(jnp.ones(3))
    with config.executor("numpy"), pytest.raises(RuntimeError, match="incorrect output"):
        jax.jit(bad)(jnp.ones(3))


def test_pure_callback_differentiable_through_custom_jvp():
    @jax.custom_jvp
    def host_sin(x):
        return jax.pure_callback(lambda v: np.sin(np.asarray(v)),
                                 jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    @host_sin.defjvp
    def host_sin_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return host_sin(x), jnp.cos(x) * t

    np.testing.assert_allclose(jax.grad(host_sin)(0.5), np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(host_sin))(0.5), np.cos(0.5), rtol=1e-6)


def test_io_callback_results_and_vmap():
    log = []

    def host(v):
        log.append(float(np.asarray(v)))
        return np.asarray(v) * 2

    f = lambda x: io_callback(host, jax.ShapeDtypeStruct((), jnp.float32), x)  # noqa: E731
    np.testing.assert_allclose(jax.vmap(f)(jnp.arange(3.0)), [0, 2, 4])
    assert log == [0.0, 1.0, 2.0]
    g = lambda x: io_callback(host, jax.ShapeDtypeStruct((), jnp.float32), x,  # noqa: E731
                              ordered=True)
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        jax.vmap(g)(jnp.arange(3.0))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        jax.grad(g)(1.0)


# --- sub-byte integers through XLA and host callbacks ------------------------------------------

# JAX 0.10.2: x * 2 + 1 on arange(24) of each dtype (wrapping), under jit.
_SUBBYTE_AFFINE = {
    "int4": [1, 3, 5, 7, -7, -5, -3, -1],
    "int2": [1, -1, 1, -1, 1, -1, 1, -1],
    "uint4": [1, 3, 5, 7, 9, 11, 13, 15],
    "uint2": [1, 3, 1, 3, 1, 3, 1, 3],
}


@pytest.mark.parametrize("dtype", sorted(_SUBBYTE_AFFINE))
def test_subbyte_integers_compile_and_cross_callbacks(dtype):
    x = jnp.arange(24, dtype=dtype).reshape(2, 3, 4)
    out = jax.jit(lambda x: x * 2 + jnp.asarray(1, dtype))(x)
    assert out.dtype == np.dtype(dtype)
    assert out.ravel()[:8].tolist() == _SUBBYTE_AFFINE[dtype]
    echoed = jax.jit(lambda x: jax.pure_callback(
        np.asfortranarray, jax.ShapeDtypeStruct.like(x), x))(x)
    np.testing.assert_array_equal(echoed, np.arange(24, dtype=dtype).reshape(2, 3, 4))
    made = jax.jit(lambda: jax.pure_callback(
        lambda: np.arange(8, dtype=dtype), jax.ShapeDtypeStruct((8,), dtype)))()
    np.testing.assert_array_equal(made, np.arange(8, dtype=dtype))


# --- io_callback where its effect would run the wrong number of times ----------------------

def test_io_callback_refused_under_vmap_of_cond_with_batched_predicate():
    def f(pred):
        return lax.cond(pred, lambda: io_callback(lambda: None, None),
                        lambda: io_callback(lambda: None, None))
    with pytest.raises(NotImplementedError, match="IO effect not supported in vmap-of-cond"):
        jax.vmap(f)(jnp.array([True, False]))


def test_io_callback_refused_under_vmap_of_while_with_batched_predicate():
    def f(i):
        def body(i):
            io_callback(lambda v: None, None, i)
            return i + 1
        return lax.while_loop(lambda i: i < 5, body, i)
    with pytest.raises(NotImplementedError,
                       match="not supported in while_loop with batched predicate"):
        jax.vmap(f)(jnp.array([0, 4]))


def test_io_callback_refused_in_partial_eval_of_checkpoint():
    @jax.grad
    @jax.checkpoint
    def f(x, y):
        io_callback(lambda v: v, y, y)
        return x
    with pytest.raises(NotImplementedError,
                       match="Effects not supported in partial-eval of `checkpoint`"):
        f(2., 3.)


@pytest.mark.parametrize("api", ["pure_callback", "io_callback", "debug.callback"])
def test_failing_callback_is_logged_with_its_traceback(api, caplog):
    def fail(x):
        raise RuntimeError("Ooops")

    call = {"pure_callback": lambda x: jax.pure_callback(fail, x, x),
            "io_callback": lambda x: io_callback(fail, x, x),
            "debug.callback": lambda x: jax.debug.callback(fail, x) or x}[api]
    with caplog.at_level("ERROR"), pytest.raises(jax.errors.JaxRuntimeError, match="Ooops"):
        jax.jit(call)(jnp.float32(0)).block_until_ready()
    assert f"jax.{api} failed" in caplog.text
    assert "Traceback (most recent call last)" in caplog.text and "Ooops" in caplog.text


@pytest.mark.skipif(config.executor.value != "xla", reason="needs the XLA executor")
def test_failing_callback_in_a_compiled_program_keeps_xlas_message():
    # JAX 0.10.2 raises XLA's error as it is, with nothing before it.
    def fail(x):
        raise ValueError("boom")

    with pytest.raises(jax.errors.JaxRuntimeError) as info:
        jax.jit(lambda x: jax.pure_callback(fail, x, x))(jnp.float32(1)).block_until_ready()
    assert str(info.value).startswith(
        "INTERNAL: CpuCallback error calling callback: Traceback")
    assert str(info.value).endswith("ValueError: boom")


@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("api", ["pure_callback", "io_callback"])
def test_failing_callback_run_by_its_impl_raises_as_xla_reports_it(api, jitted, caplog):
    # JAX 0.10.2 runs even an eager pure_callback / io_callback as an XLA program: the
    # failure is a JaxRuntimeError (no __cause__) holding the traceback, logged on the
    # logger "jax._src.callback" (whose name libraries such as equinox filter on). pyjax
    # runs it by its impl eagerly, and in jit on the NumPy executor.
    def fail(x):
        raise ValueError("boom")

    def run(call):
        with config.executor("numpy"):
            return (jax.jit(call) if jitted else call)(jnp.float32(1))

    call = {"pure_callback": lambda x: jax.pure_callback(fail, x, x),
            "io_callback": lambda x: io_callback(fail, x, x)}[api]
    with caplog.at_level("ERROR"), pytest.raises(jax.errors.JaxRuntimeError) as info:
        run(call)
    message = str(info.value)
    assert message.startswith("INTERNAL: CpuCallback error calling callback: Traceback")
    assert message.endswith("ValueError: boom")
    assert info.value.__cause__ is None
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        ("jax._src.callback", f"jax.{api} failed")]

    zeros = lambda v: np.zeros(3, np.float32)  # noqa: E731
    bad = {"pure_callback": lambda x: jax.pure_callback(zeros, x, x),
           "io_callback": lambda x: io_callback(zeros, x, x)}[api]
    with pytest.raises(jax.errors.JaxRuntimeError, match="(?s)CpuCallback.*output shape"):
        run(bad)


def test_experimental_pjit_is_jit_with_a_deprecation_warning():
    from pyjax.experimental import pjit
    with pytest.warns(DeprecationWarning, match="Please use `jax.jit` instead"):
        pjit_fn = pjit.pjit
    assert pjit_fn(lambda x: x + 1, None, None)(1) == 2
