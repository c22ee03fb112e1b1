"""The XLA backend: the StableHLO printer (golden texts), compiling and running through
jaxlib, the FAQ's numerics and donation examples, placement on several CPU devices,
executor selection and the no-jaxlib fallback (the persistent compilation cache:
test_compile_cache.py)."""
from __future__ import annotations

import collections
import gc
import os
import subprocess
import sys
import textwrap
import types
import weakref

import ml_dtypes
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config, errors
from pyjax._src.backends import stablehlo
from pyjax._src.core.avals import ShapedArray
from repo_paths import REPO_ROOT
from pyjax.sharding import SingleDeviceSharding

pytest.importorskip("jaxlib")
from pyjax._src.backends import xla  # noqa: E402


def run_python(code, **env):
    """Runs `code` in a fresh interpreter; returns its stdout (fails on a non-zero exit)."""
    full_env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), **env)
    full_env.pop("PYJAX_EXECUTOR", None)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture(autouse=True)
def _xla_executor():
    with config.executor("xla"):
        yield


# --- importing ------------------------------------------------------------------------------

def test_import_pyjax_does_not_import_jaxlib_but_first_compile_does():
    out = run_python("""
        import sys
        import pyjax as jax
        print(any(m.split(".")[0] == "jaxlib" for m in sys.modules))
        jax.jit(lambda x: x + 1)(1.0)
        print(any(m.split(".")[0] == "jaxlib" for m in sys.modules))
    """)
    assert out.split() == ["False", "True"]


# --- the printer ----------------------------------------------------------------------------
# pyjax's printer writes MLIR's generic form (Lowered.module.text); as_text() shows it as
# jaxlib's MLIR prints it, as JAX's does.

GOLDEN_ELEMENTWISE = """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> \
(tensor<3xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.multiply"(%arg0, %arg1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> \
loc("jit(f)/mul"("-":3:5))
    %1 = "stablehlo.sine"(%arg0) : (tensor<3xf32>) -> tensor<3xf32> \
loc("jit(f)/sin"("-":4:5))
    %2 = "stablehlo.constant"() {value = dense<2.5> : tensor<f32>} : () -> tensor<f32> \
loc("jit(f)/mul"("-":5:5))
    %3 = "stablehlo.broadcast_in_dim"(%2) {broadcast_dimensions = array<i64>} : \
(tensor<f32>) -> tensor<3xf32> loc("jit(f)/mul"("-":6:5))
    %4 = "stablehlo.multiply"(%1, %3) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> \
loc("jit(f)/mul"("-":7:5))
    %5 = "stablehlo.add"(%0, %4) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> \
loc("jit(f)/add"("-":8:5))
    return %5 : tensor<3xf32>
  }
}
"""

# JAX 0.10.2's as_text() of the same program, less its {jax.result_info = "result"}
JAX_AS_TEXT_ELEMENTWISE = """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> \
(tensor<3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<3xf32>
    %1 = stablehlo.sine %arg0 : tensor<3xf32>
    %cst = stablehlo.constant dense<2.500000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %3 = stablehlo.multiply %1, %2 : tensor<3xf32>
    %4 = stablehlo.add %0, %3 : tensor<3xf32>
    return %4 : tensor<3xf32>
  }
}
"""

GOLDEN_REDUCE = """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32> \
loc("jit(f)/reduce_sum"("-":3:5))
    %1 = "stablehlo.reduce"(%arg0, %0) ({
    ^bb0(%2: tensor<f32>, %3: tensor<f32>):
      %4 = "stablehlo.add"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32> \
loc("jit(f)/reduce_sum"("-":6:7))
      "stablehlo.return"(%4) : (tensor<f32>) -> () loc("jit(f)/reduce_sum"("-":7:7))
    }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32> \
loc("jit(f)/reduce_sum"("-":8:5))
    return %1 : tensor<2xf32>
  }
}
"""

GOLDEN_DOT_SELECT = """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf32>) -> \
(tensor<2x4xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.dot_general"(%arg0, %arg1) {dot_dimension_numbers = \
#stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : \
(tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc("jit(f)/dot_general"("-":3:5))
    %1 = "stablehlo.compare"(%0, %0) {comparison_direction = \
#stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>} : \
(tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xi1> loc("jit(f)/gt"("-":4:5))
    %2 = "stablehlo.negate"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32> \
loc("jit(f)/neg"("-":5:5))
    %3 = "stablehlo.select"(%1, %0, %2) : (tensor<2x4xi1>, tensor<2x4xf32>, \
tensor<2x4xf32>) -> tensor<2x4xf32> loc("jit(f)/select_n"("-":6:5))
    return %3 : tensor<2x4xf32>
  }
}
"""

GOLDEN_CALL_AND_DONATION = """\
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xi32> {tf.aliasing_output = 0 : i32}) -> \
(tensor<3xi32> {jax.result_info = "result"}) {
    %0 = func.call @g(%arg0) : (tensor<3xi32>) -> (tensor<3xi32>) \
loc("jit(f)/jit(g)"("-":3:5))
    %1 = func.call @g(%0) : (tensor<3xi32>) -> (tensor<3xi32>) loc("jit(f)/jit(g)"("-":4:5))
    return %1 : tensor<3xi32>
  }
  func.func private @g(%arg0: tensor<3xi32>) -> (tensor<3xi32>) {
    %0 = "stablehlo.constant"() {value = dense<"0x010000000200000003000000"> : \
tensor<3xi32>} : () -> tensor<3xi32>
    %1 = "stablehlo.add"(%arg0, %0) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32> \
loc("add"("-":9:5))
    return %1 : tensor<3xi32>
  }
}
"""


def test_golden_stablehlo_elementwise_with_a_weak_scalar():
    def f(x, y):
        return lax.mul(x, y) + lax.sin(x) * 2.5
    x = np.ones(3, np.float32)
    lowered = jax.jit(f).lower(x, x)
    assert lowered.module.text == GOLDEN_ELEMENTWISE
    assert lowered.as_text() == JAX_AS_TEXT_ELEMENTWISE


def test_golden_stablehlo_reduction_region():
    def f(x):
        return lax.reduce_sum(x, (1,))
    assert jax.jit(f).lower(np.ones((2, 3), np.float32)).module.text == GOLDEN_REDUCE


def test_golden_stablehlo_dot_compare_select():
    def f(a, b):
        c = lax.dot_general(a, b, (((1,), (0,)), ((), ())))
        return lax.select(lax.gt(c, c), c, lax.neg(c))
    text = jax.jit(f).lower(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    assert text.module.text == GOLDEN_DOT_SELECT


def test_golden_stablehlo_nested_jit_is_a_private_function_and_donation_aliases():
    table = np.array([1, 2, 3], np.int32)

    @jax.jit
    def g(x):
        return lax.add(x, table)

    def f(x):
        return g(g(x))
    lowered = jax.jit(f, donate_argnums=0).lower(np.zeros(3, np.int32))
    assert lowered.module.text == GOLDEN_CALL_AND_DONATION


def test_constants_print_exactly():
    aval = lambda v: ShapedArray(np.shape(v), np.asarray(v).dtype)  # noqa: E731
    assert stablehlo.dense_attr(np.float32(np.nan), aval(np.float32(0))) == \
        "dense<0x7FC00000> : tensor<f32>"
    assert stablehlo.dense_attr(np.float32(-np.inf), aval(np.float32(0))) == \
        "dense<0xFF800000> : tensor<f32>"
    assert stablehlo.dense_attr(np.float64(1e-300), aval(np.float64(0))) == \
        "dense<1.0e-300> : tensor<f64>"
    assert stablehlo.dense_attr(np.array([True, False]), aval(np.zeros(2, bool))) == \
        'dense<"0x0100"> : tensor<2xi1>'
    assert stablehlo.dense_attr(np.complex64(1 - 2j), aval(np.complex64(0))) == \
        "dense<(1.0, -2.0)> : tensor<complex<f32>>"


def test_unusual_constants_round_trip_through_xla():
    values = [np.array([np.nan, -np.inf, 1e-30, -0.0], np.float32),
              np.array([1.5, -2.25], ml_dtypes.bfloat16),
              np.array([2**40, -3], np.int64), np.array([255, 0], np.uint8),
              np.zeros((2, 0), np.float32), np.array([1 + 2j, np.nan], np.complex64)]
    with jax.enable_x64(True):
        for v in values:
            inner = jax.jit(lambda v=v: jnp.asarray(v))   # its constants are printed
            out = jax.jit(lambda inner=inner: inner())()
            np.testing.assert_array_equal(np.asarray(out), v)
            assert out.dtype == v.dtype


def test_compile_errors_quote_the_failing_op_and_its_equation():
    from pyjax._src.lax import elementwise
    sin_p = elementwise.sin_p
    saved = sin_p.lower
    sin_p.lower = stablehlo.elementwise_lowering("stablehlo.not_an_op")
    try:
        with pytest.raises(errors.JaxRuntimeError) as info:
            jax.jit(lambda x: lax.sin(x) + 1.0)(np.ones(2, np.float32))
    finally:
        sin_p.lower = saved
    message = str(info.value)
    assert '"stablehlo.not_an_op"(%arg0)' in message
    assert "'sin' equation" in message


def test_primitive_without_lowering_names_it():
    from pyjax._src.core.trace import NO_LOWERING
    from pyjax._src.lax import elementwise
    saved = elementwise.cos_p.lower
    elementwise.cos_p.lower = NO_LOWERING
    try:
        with pytest.raises(NotImplementedError, match="'cos' cannot be compiled with XLA"):
            jax.jit(lambda x: lax.cos(x))(np.ones(2, np.float32))
    finally:
        elementwise.cos_p.lower = saved


# --- numerics ---------------------------------------------------------------------------------

def test_faq_numerics_log_exp_is_simplified_by_xla():
    def f(x):
        return jnp.log(jnp.exp(x))
    version = tuple(int(p) for p in xla.JAXLIB_VERSION.split(".")[:2])
    if version >= (0, 12):
        pytest.skip("the XLA of jaxlib 0.12 no longer folds log(exp(x)) to x")
    assert float(jax.jit(f)(100.0)) == 100.0
    assert np.isinf(float(f(100.0)))


def test_results_match_the_numpy_executor():
    def f(x, y):
        return jnp.tanh(x @ y).sum(axis=0) + jnp.cumsum(x, axis=1)[:, -1].max()
    x = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)
    y = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float32)
    on_xla = jax.jit(f)(x, y)
    with config.executor("numpy"):
        on_numpy = jax.jit(f)(x, y)
    np.testing.assert_allclose(np.asarray(on_xla), np.asarray(on_numpy), rtol=1e-5)


def test_x64_end_to_end():
    with jax.enable_x64(True):
        x = jnp.asarray(np.array([1.0, 2.0]))
        out = jax.jit(lambda a: a + 1e-12)(x)
        assert out.dtype == np.float64
        assert np.asarray(out)[0] != 1.0
        big = jax.jit(lambda a: a * 3)(np.int64(2**40))
        assert big.dtype == np.int64 and int(big) == 3 * 2**40
    out32 = jax.jit(lambda a: a + 1)(np.float64(1.0))
    assert out32.dtype == np.float32


def test_bfloat16_end_to_end():
    x = jnp.asarray(np.array([1.5, 2.0, -3.25], ml_dtypes.bfloat16))
    out = jax.jit(lambda a: a * a + a)(x)
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(np.asarray(out, np.float32), [3.75, 6.0, 7.3125])
    total = jax.jit(lambda a: jnp.sum(a))(x)
    assert total.dtype == ml_dtypes.bfloat16 and float(total) == 0.25


# --- arrays, block_until_ready, caches ---------------------------------------------------------

def test_outputs_live_on_device_and_read_back_lazily():
    out = jax.jit(lambda a: a * 2)(np.arange(4, dtype=np.float32))
    assert out._buffer is not None and out._npy is None
    assert out.block_until_ready() is out
    assert jax.block_until_ready({"a": out})["a"] is out
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 4, 6])
    assert (out + 1).committed is False     # eager ops run on the host view


def test_compile_cache_reuses_executables():
    f = jax.jit(lambda a: a - 1)
    f(np.ones(3, np.float32))
    before = xla.stats["compiles"]
    f(np.ones(3, np.float32))
    jax.jit(lambda a: a - 1)(np.ones(3, np.float32))   # new function, same module text
    assert xla.stats["compiles"] == before
    f(np.ones(4, np.float32))
    assert xla.stats["compiles"] == before + 1


def test_lower_compile_cost_analysis_and_trace():
    f = jax.jit(lambda a, b: jnp.sin(a) @ b)
    a, b = np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)
    lowered = f.lower(a, b)
    assert "stablehlo.sine" in lowered.as_text() and "func.func public @main" in \
        lowered.as_text()
    compiled = lowered.compile()
    np.testing.assert_allclose(np.asarray(compiled(a, b)), np.asarray(f(a, b)))
    cost = compiled.cost_analysis()
    assert cost["flops"] > 0 and cost["transcendentals"] == 6
    # as JAX 0.10.2 reports for these shapes (its host-offloading page reads these)
    memory = compiled.memory_analysis()
    assert (memory.argument_size_in_bytes, memory.output_size_in_bytes) == (48, 16)
    with pytest.raises(TypeError, match="Argument types differ"):
        compiled(np.ones((2, 3), np.int32), b)
    assert f.trace(a, b).lower().as_text() == lowered.as_text()
    assert "sine" in compiled.as_text()
    # as JAX's: the executable XLA's runtime loaded
    assert type(compiled.runtime_executable()).__name__ == "LoadedExecutable"


def test_compile_inside_an_outer_trace():
    # flax's nnx.tabulate(compute_flops=True) compiles each submodule's jit while the
    # model's own jit is tracing: lowering rules must not stage work into that trace.
    cube = jax.jit(lambda x: x ** 3)
    flops = []

    def outer(x):
        flops.append(cube.lower(x).compile().cost_analysis()["flops"])
        return cube(x) + 1

    out = jax.jit(outer)(jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 9.0, 28.0])  # JAX 0.10.2
    assert flops == [8.0]                                                  # JAX 0.10.2


def test_hlo_text_shows_op_names_with_debug_info():
    # JAX 0.10.2 names the instruction after its op (sin.1) and, with debug_info, gives
    # it metadata={op_name="jit(<lambda>)/sin" ...} (JAX's arguments are named x.1)
    lowered = jax.jit(lambda x: jnp.sin(x)).lower(42.)
    plain = lowered.as_text("hlo")
    assert "  ROOT sin.1 = f32[] sine(Arg_0.1)\n" in plain and "metadata" not in plain
    [line] = [x for x in lowered.as_text("hlo", debug_info=True).splitlines()
              if "sine(" in x]
    assert 'metadata={op_name="jit(<lambda>)/sin"' in line


def test_compiler_ir_and_compiler_options():
    f = jax.jit(lambda x: x * 2)
    lowered = f.lower(jnp.arange(4))
    assert "stablehlo.multiply" in str(lowered.compiler_ir())   # an MLIR module
    assert "multiply" in lowered.compiler_ir(dialect="hlo").as_hlo_text()
    with pytest.raises(ValueError, match="unknown dialect"):
        lowered.compiler_ir("tosa")
    # XLA checks the options (JAX 0.10.2: "No such compile option: 'invalid_key'")
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option"):
        lowered.compile({"invalid_key": "x"})
    compiled = lowered.compile({"xla_embed_ir_in_executable": True},
                               device_assignment=(jax.devices()[0],))
    np.testing.assert_array_equal(compiled(jnp.arange(4)), [0, 2, 4, 6])
    with pytest.raises(ValueError, match="device_assignment passed to `.compile` must match"):
        lowered.compile(device_assignment=(types.SimpleNamespace(id=99),))
    bad = jax.jit(lambda x: x * 2, compiler_options={"invalid_key": "invalid_value"})
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option"):
        bad(jnp.arange(4))
    with pytest.raises(ValueError, match="can only be passed to top-level `jax.jit`"):
        jax.jit(lambda x: bad(x + 2))(jnp.arange(4))
    good = jax.jit(lambda x: x * 2, compiler_options={"xla_embed_ir_in_executable": True})
    np.testing.assert_array_equal(good(jnp.arange(4)), [0, 2, 4, 6])
    np.testing.assert_array_equal(good.lower(jnp.arange(4)).compile()(jnp.arange(4)),
                                  [0, 2, 4, 6])


def test_closed_jaxpr_forwards_its_variables():
    closed = jax.make_jaxpr(lambda x, y: x + y)(1.0, 2.0)
    assert closed.invars == closed.jaxpr.invars and closed.constvars == []
    assert closed.outvars == closed.jaxpr.outvars
    assert float(jax.core.eval_jaxpr(closed, (), 1.0, 2.0)[0]) == 3.0   # as in JAX
    table = np.arange(3.0)
    closed = jax.make_jaxpr(lambda x: x + table)(1.0)
    assert closed.literals is closed.consts and closed.literals[0].tolist() == [0., 1., 2.]


def test_static_arguments_are_left_out_of_compiled_calls():
    f = jax.jit(lambda x, n: x * n, static_argnums=1)
    compiled = f.lower(np.ones(2, np.float32), 3).compile()
    np.testing.assert_array_equal(np.asarray(compiled(np.ones(2, np.float32))), [3, 3])


# --- donation ---------------------------------------------------------------------------------

def add(x, y):
    return x + y


def test_faq_donation_aliases_the_donated_buffer():
    x = jax.device_put(np.ones((2, 3)))
    y = jax.device_put(np.ones((2, 3)))
    jitted = jax.jit(add, donate_argnums=(1,))
    # The executable aliases output 0 to parameter 1. XLA's alias is "may-alias": the CPU
    # client reuses the buffer when it owns it outright and copies otherwise (e.g. when
    # the buffer wraps host memory), so buffer addresses are not a stable thing to test.
    compiled_text = jitted.lower(x, y).compile().as_text()
    assert "input_output_alias={ {}: (1, {}, may-alias) }" in compiled_text
    z = jitted(x, y)
    assert y.is_deleted() and not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(z), 2 * np.ones((2, 3)))


def test_faq_donation_of_a_pytree_donates_every_leaf():
    def add_ones(xs):
        return [x + 1 for x in xs]
    xs = [jax.device_put(np.ones((2, 3))), jax.device_put(np.ones((3, 4)))]
    z = jax.jit(add_ones, donate_argnums=0)(xs)
    assert all(x.is_deleted() for x in xs)
    assert [a.shape for a in z] == [(2, 3), (3, 4)]


def test_faq_reusing_a_donated_buffer_raises():
    x = jax.device_put(np.ones((2, 3)))
    y = jax.device_put(np.ones((2, 3)))
    jax.jit(add, donate_argnums=(1,))(x, y)
    with pytest.raises(RuntimeError, match="donated"):
        y + 1
    with pytest.raises(RuntimeError, match="donated"):
        jax.jit(add)(x, y)
    with pytest.raises(RuntimeError, match="deleted"):   # as JAX's repr
        repr(y)


def test_faq_unusable_donations_warn_like_jax():
    x = jax.device_put(np.ones((2, 3)))
    y = jax.device_put(np.ones((2, 3)))
    with pytest.warns(UserWarning) as record:
        jax.jit(add, donate_argnums=(0, 1))(x, y)
    assert [str(w.message) for w in record] == [
        "Some donated buffers were not usable: f32[2,3]{1,0}"]
    assert x.is_deleted() and not y.is_deleted()    # only the usable donation
    x, y = jax.device_put(np.ones((2, 3))), jax.device_put(np.ones((1, 3)))
    with pytest.warns(UserWarning) as record:
        jax.jit(add, donate_argnums=(1,))(x, y)
    assert [str(w.message) for w in record] == [
        "Some donated buffers were not usable: f32[1,3]{1,0}"]
    assert not y.is_deleted()


def test_donate_argnames_and_the_numpy_executor_delete_too():
    def f(a, b):
        return a * b
    a, b = jnp.ones(3), jnp.ones(3)
    jax.jit(f, donate_argnames="b")(a, b=b)
    assert b.is_deleted() and not a.is_deleted()
    with config.executor("numpy"):
        c = jnp.ones(3)
        jax.jit(f, donate_argnums=0)(c, a)
        assert c.is_deleted()


def test_donated_host_memory_is_never_written():
    source = np.ones(16, np.float32)
    x = jnp.asarray(source)
    jax.jit(lambda a: a + 1, donate_argnums=0)(x)
    np.testing.assert_array_equal(source, np.ones(16, np.float32))


# --- devices and placement ----------------------------------------------------------------------

def test_single_device_defaults():
    devices = jax.devices()
    assert devices == jax.local_devices() and jax.device_count() == len(devices)
    assert jax.default_backend() == "cpu" and devices[0].platform == "cpu"
    x = jnp.ones(3)
    assert x.committed is False and x.device == devices[0] and x.devices() == {devices[0]}
    assert jax.device_put(x) is x
    source = np.zeros(2, np.float32)
    put = jax.device_put(source)
    source[0] = 5.0
    assert put.committed is False and float(put[0]) == 0.0
    assert jax.device_put(x, devices[0]).committed
    assert repr(x.sharding).startswith("SingleDeviceSharding(device=CpuDevice(id=0)")
    np.testing.assert_array_equal(jax.device_get({"x": x})["x"], np.ones(3))


def test_placement_on_four_cpu_devices():
    out = run_python("""
        import numpy as np
        import pyjax as jax, pyjax.numpy as jnp
        d = jax.devices()
        print(len(d), jax.device_count())
        x = jnp.ones(3)
        a = jax.device_put(x, d[2])
        print(x.committed, a.committed, a.device == d[2])
        f = jax.jit(lambda u, v: u + v)
        r = f(a, x)
        print(r.committed, r.device == d[2], float(r[0]))
        e = a * 2
        print(e.committed, e.device == d[2])
        u = f(x, x)
        print(u.committed, u.device == d[0])
        try:
            f(a, jax.device_put(x, d[1]))
        except ValueError as err:
            print("error", "device ids [2]" in str(err), "device ids [1]" in str(err))
        try:
            a + jax.device_put(x, d[3])
        except ValueError as err:
            print("eager-error", "device ids [3]" in str(err))
        with jax.default_device(d[3]):
            w = f(x, x)
            p = jax.device_put(np.ones(2))
        print(w.device == d[3], w.committed, p.device == d[3], p.committed)
        print(jax.device_put(a) is a, jax.device_put(a, d[1]).device == d[1])

        # one replica per device, as pmap runs it
        from pyjax._src.backends import stablehlo, xla
        from pyjax._src.core.avals import ShapedArray
        from pyjax._src.interpreters import partial_eval as pe
        c = np.array([10.0, 20.0, 30.0], np.float32)
        closed, _ = pe.trace_to_closed_jaxpr(lambda x: [x * 2 + c],
                                             [ShapedArray((3,), np.float32)])
        exe = xla.ReplicatedExecutable(stablehlo.lower_module(closed, "f", num_replicas=4),
                                       d, closed.consts, "f")
        outs = exe([[jnp.full(3, float(i)) for i in range(4)]])[0]
        print([float(o[0]) for o in outs], [o.device.id for o in outs])
    """, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    assert out.split("\n")[:-1] == [
        "4 4", "False True True", "True True 2.0", "True True", "False True",
        "error True True", "eager-error True", "True False True False", "True True",
        "[10.0, 12.0, 14.0, 16.0] [0, 1, 2, 3]"]


_STICKY_PLACEMENT = """
    import numpy as np
    import pyjax as jax, pyjax.numpy as jnp
    d = jax.devices()
    def info(name, x):
        print(name, x.devices(), x.committed)
    with jax.default_device(d[1]):
        x = jnp.ones(3)
        info("x in block", x)
        info("scalar in block", jnp.float32(2.0))
        a = jnp.arange(3)
        xx = x + 1
        info("x+1 in block", xx)
        q = jax.device_put(jnp.zeros(2))
        n = jnp.asarray(np.ones(2))
        r = jax.random.normal(jax.random.PRNGKey(0), (2,))
    info("x after", x)
    info("x+1 made in block, after", xx)
    info("arange after", a)
    info("device_put in block, after", q)
    info("asarray np after", n)
    info("random after", r)
    y = jnp.ones(3)
    info("y default", y)
    info("x + 1 after block", x + 1)
    info("x + y after block", x + y)
    info("y + x after block", y + x)
    info("jit(x+y)", jax.jit(lambda a, b: a + b)(x, y))
    info("x[0]", x[0])
    with jax.default_device(d[2]):
        info("x+1 in block d2", x + 1)
        info("jit(x) in block d2", jax.jit(lambda a: a * 2)(x))
    z = jax.device_put(jnp.ones(3), d[3])
    info("x + z", x + z)
"""


def test_arrays_keep_the_device_they_were_made_on():
    """An uncommitted array made inside `default_device(d)` stays on d after the block;
    computations on uncommitted arrays still run on the default device of the moment and
    a committed argument still decides. Output of the same program on JAX 0.10.2."""
    out = run_python(_STICKY_PLACEMENT, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    assert out.splitlines() == [
        "x in block {CpuDevice(id=1)} False",
        "scalar in block {CpuDevice(id=1)} False",
        "x+1 in block {CpuDevice(id=1)} False",
        "x after {CpuDevice(id=1)} False",
        "x+1 made in block, after {CpuDevice(id=1)} False",
        "arange after {CpuDevice(id=1)} False",
        "device_put in block, after {CpuDevice(id=1)} False",
        "asarray np after {CpuDevice(id=1)} False",
        "random after {CpuDevice(id=1)} False",
        "y default {CpuDevice(id=0)} False",
        "x + 1 after block {CpuDevice(id=0)} False",
        "x + y after block {CpuDevice(id=0)} False",
        "y + x after block {CpuDevice(id=0)} False",
        "jit(x+y) {CpuDevice(id=0)} False",
        "x[0] {CpuDevice(id=0)} False",
        "x+1 in block d2 {CpuDevice(id=2)} False",
        "jit(x) in block d2 {CpuDevice(id=2)} False",
        "x + z {CpuDevice(id=3)} True",
    ]


def test_arrays_made_in_a_thread_block_stay_on_its_device():
    """The block is per thread: an array made by another thread meanwhile stays on the
    default device."""
    out = run_python("""
        import threading
        import numpy as np
        import pyjax as jax, pyjax.numpy as jnp
        d = jax.devices()
        entered, made = threading.Event(), {}
        def other():
            entered.wait(60)
            made["y"] = jnp.ones(2)
        t = threading.Thread(target=other)
        t.start()
        with jax.default_device(d[1]):
            entered.set()
            t.join(60)
            x = jnp.ones(2)
        print(x.device.id, made["y"].device.id, jnp.ones(2).device.id)
    """, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    assert out.split() == ["1", "0", "0"]


def test_eager_ops_on_device_arrays_run_cached_one_primitive_executables(monkeypatch):
    from pyjax._src.backends import dispatch
    monkeypatch.setattr(dispatch, "runs_on_host", lambda device: False)   # as on a GPU
    x = jax.device_put(np.arange(3, dtype=np.float32), jax.devices()[0])
    y = lax.sin(x)
    assert y.committed and y._buffer is not None and y._npy is None
    np.testing.assert_allclose(np.asarray(y), np.sin(np.arange(3, dtype=np.float32)),
                               rtol=1e-6)
    before = xla.stats["compiles"]
    lax.sin(jax.device_put(np.ones(3, np.float32), jax.devices()[0]))
    assert xla.stats["compiles"] == before


def test_num_cpu_devices_option_and_jax_platforms():
    out = run_python("""
        import pyjax as jax
        jax.config.update("jax_num_cpu_devices", 3)
        print(jax.device_count())
    """)
    assert out.strip() == "3"
    out = run_python("""
        import pyjax as jax
        try:
            jax.devices()
        except RuntimeError as err:
            print("tpu" in str(err))
    """, JAX_PLATFORMS="tpu")
    assert out.strip() == "True"


def test_num_cpu_devices_is_fixed_once_the_backend_starts():
    # JAX 0.10.2: the same value may be set again; another raises this RuntimeError
    out = run_python("""
        import pyjax as jax
        jax.config.update("jax_num_cpu_devices", 3)
        jax.devices()
        jax.config.update("jax_num_cpu_devices", 3)
        try:
            jax.config.update("jax_num_cpu_devices", 5)
        except RuntimeError as err:
            print(err)
        print(jax.config.jax_num_cpu_devices, jax.device_count())
    """)
    assert out.splitlines() == [
        "jax_num_cpu_devices config should be updated before backends are initialized i.e. "
        "before any JAX operation is executed. You should initialize this config "
        "immediately after `import jax`.", "3 3"]


def test_cuda_platform_without_a_plugin_says_what_to_install():
    out = run_python("""
        import pyjax as jax
        try:
            jax.devices()
        except RuntimeError as err:
            print(err)
    """, JAX_PLATFORMS="cuda", PYTHONNOUSERSITE="1")
    assert "Unable to initialize backend 'cuda'" in out
    assert "jax-cuda13-pjrt" in out


# --- executors --------------------------------------------------------------------------------

def test_executor_option_selects_numpy():
    f = jax.jit(lambda a: jnp.exp(a) + 1)
    before = xla.stats["compiles"]
    with config.executor("numpy"):
        out = f(np.float32(0.5))
        assert out._buffer is None
    assert xla.stats["compiles"] == before
    np.testing.assert_allclose(float(out), np.exp(0.5) + 1, rtol=1e-6)


def test_environment_variable_selects_numpy():
    code = """
        import sys
        import pyjax as jax
        print(float(jax.jit(lambda a: a * 2)(1.5)), jax.devices(),
              any(m.startswith("jaxlib") for m in sys.modules))
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], text=True,
                          capture_output=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYJAX_EXECUTOR="numpy"))
    assert proc.stdout.strip() == "3.0 [CpuDevice(id=0)] False", proc.stderr


def test_the_numpy_executor_places_arrays_without_jaxlib():
    # Only device buffers need XLA's runtime: on the NumPy executor arrays still have
    # JAX's sharding and shards, and arrays committed to its device compute there.
    code = """
        import sys
        import pyjax as jax
        import pyjax.numpy as jnp
        y = jax.device_put(jnp.arange(3.0), jax.devices()[0]) * 2
        (shard,) = y.addressable_shards
        print(y.sharding, repr(shard.device), shard.data, y.committed,
              any(m.startswith("jaxlib") for m in sys.modules))
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], text=True,
                          capture_output=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(REPO_ROOT), PYJAX_EXECUTOR="numpy"))
    assert proc.stdout.strip() == ("SingleDeviceSharding(device=CpuDevice(id=0), memory_kind="
                                   "device) CpuDevice(id=0) [0. 2. 4.] True False"), proc.stderr


def test_arrays_of_either_executor_have_shards_after_a_switch():
    on_device = jax.jit(lambda a: a + 1)(jnp.arange(3.0))
    with config.executor("numpy"):
        host = jnp.arange(3.0)
        (shard,) = host.addressable_shards   # a host array: no device buffer is made
        assert shard.data is host and host.sharding == SingleDeviceSharding(host.device)
        (shard,) = on_device.addressable_shards
        # an uncommitted array's shard is uncommitted too (JAX 0.10.2)
        assert shard.device == on_device.device and not shard.data.committed
        np.testing.assert_array_equal(shard.data, [1.0, 2.0, 3.0])


def test_missing_jaxlib_falls_back_to_numpy_with_one_warning():
    out = run_python("""
        import sys, warnings
        sys.modules["jaxlib"] = None          # `import jaxlib` now raises ImportError
        import pyjax as jax
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f = jax.jit(lambda a: a * 2)
            print(float(f(1.5)), float(f(2.5)), float(jax.jit(lambda a: -a)(1.0)))
        print(len(caught), "jaxlib" in str(caught[0].message), jax.devices())
    """)
    assert out.split("\n")[:2] == ["3.0 5.0 -1.0", "1 True [CpuDevice(id=0)]"]


# --- jit's per-signature fast path ----------------------------------------------------------

@pytest.mark.parametrize("executor", ["xla", "numpy"])
def test_fast_path_takes_scalars_and_keeps_every_value_exact(executor):
    with config.executor(executor):
        f = jax.jit(lambda x, y: 1.0 / x + y)
        values = [0.0, -0.0, 2.0, -0.0, 0.0, float("inf"), 2.0]
        got = [float(f(v, jnp.zeros(()))) for v in values]
        assert len(f._jit.fast_calls) == 1                     # one signature: (float, f32[])
        assert got == [np.inf, -np.inf, 0.5, -np.inf, np.inf, 0.0, 0.5]
        assert np.isnan(float(f(float("nan"), jnp.zeros(()))))
        g = jax.jit(lambda b, i, c: (jnp.where(b, i, 0), 1.0 / jnp.imag(c)))
        for b, i, c in [(True, 3, complex(-1, 0.0)), (False, 3, complex(-1, -0.0)),
                        (True, -7, complex(-1, -0.0)), (True, -7, complex(-1, 0.0))]:
            where, slope = g(b, i, c)
            assert int(where) == (i if b else 0)
            assert float(slope) == (np.inf if np.copysign(1, c.imag) > 0 else -np.inf)
        assert f(np.float32(3.0), jnp.zeros(())).dtype == jnp.float32


@pytest.mark.parametrize("executor", ["xla", "numpy"])
def test_fast_path_takes_numpy_arrays_fresh_each_call(executor):
    traces = []
    with config.executor(executor):
        f = jax.jit(lambda x, y: traces.append(1) or x * y)
        x = np.arange(3.0)                                  # float64: canonical f32
        for k in range(3):
            x[0] = k                                        # read anew on every call
            out = f(x, jnp.ones(3))
            assert out.dtype == jnp.float32 and out.tolist() == [k, 1.0, 2.0]
        assert len(traces) == 1 and len(f._jit.fast_calls) == 1
        assert f(np.ones(2), jnp.ones(2)).tolist() == [1.0, 1.0]        # another shape
        assert f(np.ones(3, np.int32), jnp.ones(3)).dtype == jnp.float32  # another dtype
        assert len(traces) == 3
        subclass = np.ones(3).view(type("Sub", (np.ndarray,), {}))   # the general path
        assert f(subclass, jnp.ones(3)).tolist() == [1.0] * 3 and len(f._jit.fast_calls) == 3
        with jax.transfer_guard_host_to_device("disallow"):
            with pytest.raises(RuntimeError, match="Disallowed host-to-device"):
                f(x, jnp.ones(3))


@pytest.mark.parametrize("executor", ["xla", "numpy"])
def test_fast_path_takes_committed_arrays_and_returns_committed_results(executor):
    traces = []
    with config.executor(executor):
        f = jax.jit(lambda x, y: traces.append(1) or x * y)
        device = jax.devices()[0]
        for k in range(3):
            x = jax.device_put(jnp.full(2, float(k)), device)
            out = f(x, jnp.ones(2))                    # committed with uncommitted
            assert out.committed and out.tolist() == [k, k]
        assert len(traces) == 1 and len(f._jit.fast_calls) == 1
        assert f(out, out).committed and f(out, out).tolist() == [4.0, 4.0]
        assert not f(jnp.ones(2), jnp.ones(2)).committed   # another signature
        assert len(f._jit.fast_calls) == 3


def test_fast_path_sends_misfits_to_the_general_path():
    traces = []
    f = jax.jit(lambda x: traces.append(1) or x * 2)
    assert int(f(3)) == 6 and int(f(4)) == 8
    with pytest.raises(OverflowError):                 # out of int32: the same error as
        f(2 ** 40)                                     # without a fast path
    assert float(f(1.5)) == 3.0                        # another type: traces again
    assert float(f(jnp.ones(()))) == 2.0
    assert float(f(2.5)) == 5.0 and int(f(5)) == 10    # alternating signatures still fast
    assert len(traces) == 3 and len(f._jit.fast_calls) == 3
    x = jnp.ones(3)
    assert f(x).tolist() == [2, 2, 2]
    committed = jax.device_put(x, jax.devices()[0])    # committed: general path, committed result
    assert f(committed).committed and not f(x).committed
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x)


def test_fast_path_follows_config_and_transfer_guard():
    f = jax.jit(lambda x: x + 1)
    assert f(1).dtype == jnp.int32
    with config.enable_x64(True):
        assert f(1).dtype == jnp.int64
    assert f(1).dtype == jnp.int32
    with jax.transfer_guard_host_to_device("disallow"):
        with pytest.raises(RuntimeError, match="Disallowed host-to-device"):
            f(1)
        assert int(f(jnp.asarray(1))) == 2             # device arrays need no transfer


def test_fast_path_donates_and_never_reuses_a_donated_scalar():
    # y's buffer is aliased to the second output: a remembered copy would be gone.
    f = jax.jit(lambda x, y: (x + y, y * 2.0), donate_argnums=(0, 1))
    for _ in range(3):
        x = jnp.ones(4)
        total, twice = f(x, 1.0)
        assert total.tolist() == [2.0] * 4 and float(twice) == 2.0
        assert x.is_deleted()
    assert len(f._jit.fast_calls) == 1


def test_fast_path_with_no_arguments_and_several_outputs():
    f0 = jax.jit(lambda: (jnp.ones(2), 3.0))
    for _ in range(2):
        a, b = f0()
        assert a.tolist() == [1.0, 1.0] and float(b) == 3.0


Pair = collections.namedtuple("Pair", "a b")


@pytest.mark.parametrize("executor", ["xla", "numpy"])
def test_fast_path_takes_pytrees_of_arrays_and_scalars(executor):
    with config.executor(executor):
        _check_pytree_fast_paths()


def _check_pytree_fast_paths():
    traces = []

    @jax.jit
    def f(params, x, scale):
        traces.append(1)
        for layer in params["layers"]:
            x = x @ layer["w"] + layer["b"]
        return {"out": x * scale, "n": len(params["layers"])}

    layer = {"w": jnp.ones((3, 3)), "b": jnp.zeros(3)}
    params = {"layers": [layer, layer]}
    for scale in [1.0, 2.0, 1.0]:
        out = f(params, jnp.ones((2, 3)), scale)
        assert out["out"].tolist() == [[9.0 * scale] * 3] * 2 and int(out["n"]) == 2
    assert len(traces) == 1 and len(f._jit.fast_calls) == 1
    three = {"layers": [layer] * 3}                         # another structure: traces
    assert f(three, jnp.ones((2, 3)), 1.0)["out"].tolist() == [[27.0] * 3] * 2
    wider = {"layers": [{"w": jnp.ones((3, 3)), "b": jnp.zeros(3), "c": 1.0}] * 2}
    assert f(wider, jnp.ones((2, 3)), 1.0)["out"].tolist() == [[9.0] * 3] * 2
    as_tuple = {"layers": (layer, layer)}
    assert f(as_tuple, jnp.ones((2, 3)), 1.0)["out"].tolist() == [[9.0] * 3] * 2
    assert len(traces) == 4 and len(f._jit.fast_calls) == 4
    for p in (params, three, wider, as_tuple):              # each signature stays fast
        f(p, jnp.ones((2, 3)), 1.0)
    assert len(traces) == 4
    g = jax.jit(lambda p: Pair(p.a + p.b, p.a * p.b), donate_argnums=0)   # a custom node
    for _ in range(2):
        x = jnp.ones(2)
        assert g(Pair(x, jnp.ones(2))).a.tolist() == [2.0, 2.0] and x.is_deleted()
    with pytest.warns(UserWarning, match="donated buffers were not usable: f32"):
        assert g(Pair(jnp.ones(2), 1.0)).b.tolist() == [1.0, 1.0]
    assert len(g._jit.fast_calls) == 2


@pytest.mark.parametrize("executor", ["xla", "numpy"])
def test_fast_path_checks_static_values_and_keywords(executor):
    traces = []

    def scaled(x, n, *, y=None, mode="add"):
        traces.append(f"{type(n).__name__} {n} {mode}")
        out = x * n
        return out + y if mode == "add" else out - y

    with config.executor(executor):
        f = jax.jit(scaled, static_argnums=1, static_argnames="mode")
        x, y = jnp.ones(2), jnp.full(2, 0.5)
        calls = [((x, 3), {"y": y}, 3.5), ((x, 3), {"y": y, "mode": "sub"}, 2.5),
                 ((x, 3), {"mode": "sub", "y": y}, 2.5), ((x, True), {"y": y}, 1.5),
                 ((x, 1), {"y": y}, 1.5), ((x, 3.0), {"y": y}, 3.5), ((x, 3), {"y": 2.0}, 5.0)]
        for _ in range(2):
            for args, kwargs, want in calls:
                assert f(*args, **kwargs).tolist() == [want, want]
        # 3 and 3.0, True and 1 are different static values; keyword order does not matter;
        # y as a Python scalar is another signature
        assert traces == ["int 3 add", "int 3 sub", "bool True add", "int 1 add",
                          "float 3.0 add", "int 3 add"]
        with pytest.raises(ValueError, match="Non-hashable static arguments"):
            f(x, [3], y=y)
        g = jax.jit(lambda a, b, c: a * b + c, static_argnums=2, donate_argnames="b")
        for c in [1, 1, 2]:
            b = jnp.ones(2)
            assert g(jnp.ones(2), b=b, c=c).tolist() == [1.0 + c] * 2 and b.is_deleted()
        assert len(g._jit.fast_calls) == 2


def test_cpu_async_dispatch_option_reaches_the_cpu_client():
    out = run_python("""
        import jaxlib.xla_client as xc
        make, seen = xc.make_cpu_client, []
        xc.make_cpu_client = lambda **kw: seen.append(kw["asynchronous"]) or make(**kw)
        import pyjax as jax, pyjax.numpy as jnp
        print(float(jax.jit(lambda x: (x @ x).sum())(jnp.ones((30, 30)))), seen)
    """, JAX_CPU_ENABLE_ASYNC_DISPATCH="false")
    assert out.split() == ["27000.0", "[False]"]


def test_lowered_text_names_each_result_by_its_path_as_jax():
    # recorded from JAX 0.10.2's jit(f).lower(...).as_text()
    import collections
    pair = collections.namedtuple("pair", "u v")

    def main_line(f, *args):
        text = jax.jit(f).lower(*args).as_text()
        return next(line.strip() for line in text.splitlines() if "@main" in line)
    assert main_line(lambda x, y: 2 * x + y, 3, 4) == (
        '%s(%%arg0: tensor<i32>, %%arg1: tensor<i32>) -> (tensor<i32> {jax.result_info = '
        '"result"}) {' % "func.func public @main")
    assert main_line(lambda x: {"a": x, "b": [x, pair(x, 1)]}, 1.).endswith(
        '-> (tensor<f32> {jax.result_info = "result[\'a\']"}, '
        'tensor<f32> {jax.result_info = "result[\'b\'][0]"}, '
        'tensor<f32> {jax.result_info = "result[\'b\'][1].u"}, '
        'tensor<i32> {jax.result_info = "result[\'b\'][1].v"}) {')
    assert main_line(lambda x: {'a"b': x}, 1.).endswith(
        '-> (tensor<f32> {jax.result_info = "result[\'a\\22b\']"}) {')


def test_numpy_array_given_to_device_put_is_freed_with_the_array():
    # jax-ml/jax#14882 (api_test's test_xla_gc_callback): XLA's transfer holds the NumPy
    # array until jaxlib is asked to let go, which a garbage collection does
    x_np = np.arange(10, dtype="int32")
    x = jax.device_put(x_np)
    alive = weakref.ref(x_np)
    del x_np, x
    gc.collect()
    assert alive() is None
