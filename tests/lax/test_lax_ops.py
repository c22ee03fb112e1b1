"""jax.lax beyond the core families: the *_p primitive names, Precision and RoundingMethod,
split/tile/stack/unstack and the other structural helpers, mulhi, reduce_precision,
optimization_barrier, scatter_sub, the special-function wrappers, the convolution shape
helpers and patches, the collectives ppermute/all_to_all/psum_scatter (under vmap here,
under a four-device pmap in a subprocess), custom_linear_solve and custom_root. The
uniform harness checks the new primitives' rules; these are behaviour tests."""
from __future__ import annotations


import re

import numpy as np
import pytest
import scipy.special

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax._src.core.trace import Primitive, registered_primitives

from harness import checks_in_process, close

def _rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


# --- names ---------------------------------------------------------------------------------------

def test_every_p_name_is_a_registered_primitive():
    registered = set(map(id, registered_primitives().values()))
    names = [n for n in dir(lax) if n.endswith("_p")]
    assert len(names) > 130
    for name in names:
        prim = getattr(lax, name)
        assert isinstance(prim, Primitive) and id(prim) in registered, name
    assert lax.add_p.name == "add" and lax.cond_p.name == "cond"
    assert lax.regularized_incomplete_beta_p is lax.betainc.__globals__["betainc_p"]
    assert lax.scatter_sub_p.name == "scatter-sub" and lax.linear_solve_p.name == \
        "custom_linear_solve"


def test_add_p_binds_like_lax_add():
    x = np.arange(3.0, dtype=np.float32)
    close(lax.add_p.bind(x, x), 2 * x)
    assert "add" in str(jax.make_jaxpr(lambda a: lax.add_p.bind(a, a))(x))


# --- Precision and RoundingMethod ----------------------------------------------------------------

def test_precision_enum_and_names():
    P = lax.Precision
    assert [P.DEFAULT.value, P.HIGH.value, P.HIGHEST.value] == [0, 1, 2]
    assert P("highest") is P.HIGHEST and P("float32") is P.HIGHEST
    assert P("tensorfloat32") is P.HIGH and P("bfloat16") is P.DEFAULT
    assert str(P.HIGH) == "HIGH" and repr(P.HIGH) == "Precision.HIGH"
    with pytest.raises(ValueError):
        P("fastest-ever")


def test_dot_general_and_conv_accept_precision():
    a, b = _rand(3, 4), _rand(4, 2, seed=1)
    dims = (((1,), (0,)), ((), ()))
    for p in (lax.Precision.HIGHEST, "highest", ("high", lax.Precision.DEFAULT), None):
        close(lax.dot_general(a, b, dims, precision=p), a @ b)
        close(jax.jit(lambda u, v, p=p: lax.dot(u, v, precision=p))(a, b), a @ b)
    params = jax.make_jaxpr(lambda u, v: lax.dot(u, v, precision="highest"))(a, b) \
        .jaxpr.eqns[0].params
    assert params["precision"] == (lax.Precision.HIGHEST,) * 2
    text = jax.jit(lambda u, v: lax.dot(u, v, precision="high")).lower(a, b).as_text()
    assert "precision = [HIGH, HIGH]" in text   # as JAX prints it
    with pytest.raises(ValueError, match="Precision"):
        lax.dot(a, b, precision=3.5)
    with pytest.raises(ValueError, match="Unknown precision"):
        lax.dot(a, b, precision="medium")
    lhs, rhs = _rand(1, 2, 5), _rand(3, 2, 2, seed=1)
    close(lax.conv(lhs, rhs, (1,), "VALID", precision=lax.Precision.HIGHEST),
          lax.conv(lhs, rhs, (1,), "VALID"))


def test_default_matmul_precision_reaches_dot_general():
    a = _rand(2, 2)
    with jax.default_matmul_precision("float32"):
        params = jax.make_jaxpr(lambda u: u @ u)(a).jaxpr.eqns[0].params
    assert params["precision"] == (lax.Precision.HIGHEST,) * 2


def test_dot_algorithm_types():
    Preset = lax.DotAlgorithmPreset
    assert len(Preset) == 16 and str(Preset.F16_F16_F32) == "F16_F16_F32"
    assert repr(Preset.DEFAULT) == "DotAlgorithmPreset.DEFAULT"
    assert Preset.BF16_BF16_F32.supported_lhs_types == (jnp.bfloat16, np.float32)
    assert Preset.F16_F16_F32.accumulation_type == np.float32
    assert Preset.DEFAULT.supported_rhs_types is None and Preset.DEFAULT.accumulation_type is None
    assert Preset.BF16_BF16_F32.supported_output_types(jnp.bfloat16, jnp.bfloat16) == \
        (np.float32, jnp.bfloat16)
    algorithm = lax.DotAlgorithm(np.float16, np.float16, np.float32)
    assert algorithm.num_primitive_operations == 1 and algorithm.accumulation_type == np.float32


def test_dot_algorithm_presets_run_as_on_cpu(executor):
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    b = np.arange(12, dtype=np.float32).reshape(3, 4) / 5

    def both(u, v, **kw):   # eagerly and under jit, which must agree exactly
        eager = lax.dot(u, v, **kw)
        jitted = jax.jit(lambda s, t: lax.dot(s, t, **kw))(u, v)
        np.testing.assert_array_equal(eager, jitted)
        assert eager.dtype == jitted.dtype
        return np.asarray(eager)

    # Each operand is rounded to the preset's type first (JAX 0.10.2's values on CPU).
    half = both(a, b, precision=lax.DotAlgorithmPreset.F16_F16_F16)
    np.testing.assert_array_equal(half, np.array(
        [[0.5712890625, 0.65673828125, 0.74267578125, 0.828125],
         [1.599609375, 1.9423828125, 2.28515625, 2.62890625]], np.float32))
    np.testing.assert_array_equal(both(a, b, precision="F64_F64_F64"),
                                  (a.astype(np.float64) @ b).astype(np.float32))
    narrow = both(a.astype(np.float16), b.astype(np.float16), precision="BF16_BF16_F32")
    assert narrow.dtype == np.float16
    np.testing.assert_array_equal(narrow, (a.astype(jnp.bfloat16).astype(np.float32) @ b.astype(
        jnp.bfloat16).astype(np.float32)).astype(np.float16))
    close(both(a, b, precision="DEFAULT"), a @ b)
    close(both(a, b, precision="BF16_BF16_F32_X6"), a @ b)
    # CPU runs only some algorithms; the others fail when run, not when traced.
    for bad in (lax.DotAlgorithmPreset.TF32_TF32_F32, "F16_F16_F32",
                lax.DotAlgorithm(np.float32, np.float32, np.float32)):
        f = lambda u, v, bad=bad: lax.dot(u, v, precision=bad)   # noqa: E731
        jax.make_jaxpr(f)(a, b)
        with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
            f(a, b)
        with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
            jax.jit(f)(a, b)


def test_dot_algorithm_in_jaxprs_programs_and_derivatives():
    a, b = _rand(2, 3), _rand(3, 4, seed=1)
    f = lambda u, v: lax.dot(u, v, precision="F16_F16_F16")   # noqa: E731
    assert "precision=F16_F16_F16" in str(jax.make_jaxpr(f)(a, b))
    text = jax.jit(f).lower(a, b).as_text()
    assert "algorithm = <lhs_precision_type = f16, rhs_precision_type = f16, " \
        "accumulation_type = f16" in text
    assert "dot_algorithm" not in jax.jit(
        lambda u, v: lax.dot(u, v, precision="DEFAULT")).lower(a, b).as_text()
    # Transposes keep the algorithm, so gradients round like the forward product.
    grad = jax.make_jaxpr(jax.grad(lambda u: f(u, b).sum()))(a)
    assert [e.params["precision"] for e in grad.jaxpr.eqns if e.primitive is lax.dot_general_p] \
        == [lax.DotAlgorithmPreset.F16_F16_F16] * 2
    close(jax.grad(lambda u: f(u, b).sum())(a),
          np.broadcast_to(b.astype(np.float16).astype(np.float32).sum(1), (2, 3)), 1e-3)
    with jax.default_matmul_precision("F32_F32_F32"):
        eqn = jax.make_jaxpr(lambda u: u @ u.T)(a).jaxpr.eqns[-1]
    assert eqn.params["precision"] is lax.DotAlgorithmPreset.F32_F32_F32
    lhs, rhs = _rand(1, 2, 5), _rand(3, 2, 2, seed=1)   # convolutions ignore algorithms
    close(lax.conv(lhs, rhs, (1,), "VALID", precision="F16_F16_F16"),
          lax.conv(lhs, rhs, (1,), "VALID"))


_ACCURACY_OPS = ["exp", "exp2", "expm1", "log", "log1p", "tanh", "logistic", "sin", "cos",
                 "tan", "sqrt", "rsqrt", "cbrt"]


@pytest.mark.parametrize("name", _ACCURACY_OPS)
def test_unary_ops_take_a_requested_accuracy(name, executor):
    op, x = getattr(lax, name), np.array([0.25, 0.5, 1.5], np.float32)
    plain = jax.jit(op)(x)   # CPU has one implementation: every accuracy gets it
    for accuracy in (lax.AccuracyMode.HIGHEST, lax.AccuracyMode.DEFAULT,
                     lax.Tolerance(atol=1e-5, rtol=1e-4), lax.Tolerance(ulps=2)):
        np.testing.assert_array_equal(op(x, accuracy=accuracy), op(x))
        jitted = jax.jit(lambda v, accuracy=accuracy: op(v, accuracy=accuracy))
        np.testing.assert_array_equal(jitted(x), plain)
    closed = jax.make_jaxpr(lambda v: op(v, accuracy=lax.AccuracyMode.HIGHEST))(x)
    assert "accuracy=AccuracyMode.HIGHEST" in str(closed)
    assert "accuracy" not in str(jax.make_jaxpr(op)(x))
    with pytest.raises(NotImplementedError, match="not supported"):
        op(x, accuracy="HIGHEST")


def test_accuracy_reaches_stablehlo_and_derivatives():
    x = np.array([0.25, 0.5, 1.5], np.float32)
    text = jax.jit(lambda v: lax.exp(v, accuracy=lax.Tolerance(atol=1e-5))).lower(x).as_text()
    assert "result_accuracy_mode<TOLERANCE>" in text and "atol = 1.0" in text
    assert "result_accuracy_mode<HIGHEST>" in jax.jit(
        lambda v: lax.sin(v, accuracy=lax.AccuracyMode.HIGHEST)).lower(x).as_text()
    # With HIGHEST, tanh's derivative is 4 logistic(2x) logistic(-2x), as in JAX.
    tanh = lambda v: lax.tanh(v, accuracy=lax.AccuracyMode.HIGHEST)   # noqa: E731
    jvp = jax.make_jaxpr(lambda v: jax.jvp(tanh, (v,), (v,)))(x)
    assert [e.primitive.name for e in jvp.jaxpr.eqns].count("logistic") == 2
    close(jax.grad(lambda v: tanh(v).sum())(x), 1 - np.tanh(x) ** 2)
    close(jax.grad(lambda v: lax.expm1(v, accuracy=lax.AccuracyMode.HIGHEST).sum())(x),
          np.exp(x))
    cos = jax.make_jaxpr(lambda v: jax.grad(
        lambda u: lax.sin(u, accuracy=lax.AccuracyMode.HIGHEST).sum())(v))(x)
    assert "cos[accuracy=AccuracyMode.HIGHEST]" in str(cos)
    with pytest.raises(ValueError, match="non-negative"):
        lax.Tolerance(atol=-1.0)
    with pytest.raises(ValueError, match="at least one"):
        lax.Tolerance()
    with pytest.raises(TypeError):
        lax.asin(x, accuracy=lax.AccuracyMode.HIGHEST)


def test_rounding_method():
    x = np.array([0.5, 1.5, 2.5, -0.5], np.float32)
    close(lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO), [1, 2, 3, -1])
    close(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), [0, 2, 2, -0.0])
    close(jax.jit(lambda v: lax.round(v, lax.RoundingMethod.TO_NEAREST_EVEN))(x), [0, 2, 2, 0])
    assert int(lax.RoundingMethod.TO_NEAREST_EVEN) == 1


def test_type_aliases():
    dnums = lax.ConvGeneralDilatedDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))
    assert dnums.lhs_spec == (0, 1, 2)
    assert lax.DotDimensionNumbers is not None and lax.PrecisionLike is not None


# --- structural helpers ------------------------------------------------------------------------

def test_split_and_tile(executor):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    for f in (lambda v: lax.split(v, (1, 2, 3), axis=1), jax.jit(
            lambda v: lax.split(v, (1, 2, 3), axis=-1))):
        pieces = f(x)
        assert [p.shape for p in pieces] == [(4, 1), (4, 2), (4, 3)]
        close(np.concatenate(pieces, 1), x)
    close(lax.tile(x, (2, 1)), np.tile(x, (2, 1)))
    close(jax.jit(lambda v: lax.tile(v, (1, 3)))(x), np.tile(x, (1, 3)))
    assert lax.tile(np.array([[1], [2]]), (1, 3)).tolist() == [[1, 1, 1], [2, 2, 2]]
    with pytest.raises(ValueError, match="Sum of sizes 5 must be equal"):
        lax.split(x, (2, 3), axis=1)
    with pytest.raises(ValueError, match="one entry per operand dimension"):
        lax.tile(x, (2,))


def test_split_and_tile_derivatives():
    x = _rand(3, 4)
    g = jax.grad(lambda v: (lax.split(v, (1, 3), 1)[1] ** 2).sum())(x)
    close(g, np.concatenate([np.zeros((3, 1)), 2 * x[:, 1:]], 1))
    g = jax.grad(lambda v: lax.tile(v, (2, 3)).sum())(x)
    close(g, np.full_like(x, 6))
    batched = jax.vmap(lambda v: lax.split(v, (2, 2), 0)[0])(x)
    close(batched, x[:, :2])


def test_stack_unstack_collapse():
    x, y = np.array([1, 2]), np.array([3, 4])
    assert lax.stack([x, y], axis=0).tolist() == [[1, 2], [3, 4]]
    assert lax.stack([x, y], axis=1).tolist() == [[1, 3], [2, 4]]
    m = jnp.array([[1, 2], [3, 4]])
    assert [a.tolist() for a in lax.unstack(m, axis=1)] == [[1, 3], [2, 4]]
    assert isinstance(lax.unstack(m), tuple)
    assert lax.collapse(np.zeros((2, 3, 4)), 0, 2).shape == (6, 4)
    assert lax.collapse(np.zeros((2, 3, 4)), 1).shape == (2, 12)
    with pytest.raises(ValueError, match="same shape"):
        lax.stack([x, np.ones(3)])
    with pytest.raises(ValueError, match="rank >= 1"):
        lax.unstack(np.float32(1))


def test_full_like_and_shape_helpers():
    x = jnp.ones((2, 3), jnp.int32)
    out = lax.full_like(x, 7)
    assert out.dtype == np.int32 and out.tolist() == [[7] * 3] * 2
    assert lax.full_like(x, 1.5, dtype=np.float32, shape=(4,)).tolist() == [1.5] * 4
    assert lax.full_like(jnp.asarray(2.0), 3).weak_type
    assert lax.broadcast_shapes((2, 1), (3,), ()) == (2, 3)
    with pytest.raises(ValueError, match="Incompatible shapes"):
        lax.broadcast_shapes((2,), (3,))
    assert lax.broadcast_to_rank(np.ones(3), 3).shape == (1, 1, 3)
    with pytest.raises(ValueError, match="rank"):
        lax.broadcast_to_rank(np.ones((2, 2)), 1)
    e = lax.empty((2, 2), np.float32)
    assert e.shape == (2, 2) and e.dtype == np.float32 and lax.empty(3, np.int32).shape == (3,)
    assert lax.shape_as_value((2, 3)).tolist() == [2, 3]
    # JAX 0.10.2: Python and NumPy values canonicalize, a JAX array keeps its dtype
    assert lax.dtype(1.0) == np.float32 and lax.dtype(1) == np.int32
    assert lax.dtype(1j) == np.complex64
    assert lax.dtype(float) == np.float32 and lax.dtype(np.array([1.0])) == np.float32
    assert lax.dtype(np.float64(2.0)) == np.float32 and lax.dtype(np.int16) == np.int16
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in dtype"):
        assert lax.dtype(np.float64) == np.float32
    with jax.enable_x64(True):
        assert lax.dtype(1.0) == np.float64 and lax.dtype(np.float64) == np.float64
    with pytest.raises(ValueError, match="Invalid argument to dtype: None"):
        lax.dtype(None)
    with pytest.raises(TypeError, match="Cannot determine dtype of"):
        lax.dtype([1.0, 2.0])
    assert lax.dtype(jnp.ones(2, jnp.int8)) == np.int8 and lax.dtype("bool") == np.bool_


def test_index_take_and_batch_matmul():
    src = np.arange(24).reshape(2, 3, 4)
    out = lax.index_take(src, (np.array([0, 1, -1]), np.array([2, 0, 1])), (0, 2))
    np.testing.assert_array_equal(out, src[[0, 1, 1], :, [2, 0, 1]])
    a, b = _rand(5, 2, 3), _rand(5, 3, 4, seed=1)
    close(lax.batch_matmul(a, b), a @ b)
    with pytest.raises(ValueError, match="same ndim"):
        lax.batch_matmul(a, b[0])
    close(lax.reciprocal(np.array([2.0, 4.0], np.float32)), [0.5, 0.25])


def test_ragged_dot():
    lhs, rhs = _rand(7, 3), _rand(3, 3, 2, seed=1)
    sizes = np.array([2, 0, 4], np.int32)
    want, start = np.zeros((7, 2), np.float32), 0
    for i, n in enumerate(sizes):
        want[start:start + n] = lhs[start:start + n] @ rhs[i]
        start += n
    close(lax.ragged_dot(lhs, rhs, sizes), want, 1e-5)
    close(jax.jit(lax.ragged_dot)(lhs, rhs, sizes), want, 1e-5)
    g = jax.grad(lambda a: lax.ragged_dot(a, rhs, sizes).sum())(lhs)
    close(g[3], rhs[2].sum(1), 1e-5)
    close(g[6], np.zeros(3))   # past the groups
    with pytest.raises(TypeError, match="expected rhs group dimension size to be 2, got 3"):
        lax.ragged_dot(lhs, rhs, sizes[:2])   # JAX 0.10.2's message
    with pytest.raises(NotImplementedError):
        lax.ragged_dot(lhs, rhs, sizes, group_offset=np.int32(0))


# --- elementwise additions ------------------------------------------------------------------

def _mulhi_reference(x, y):
    bits = x.dtype.itemsize * 8
    out = [(int(a) * int(b)) >> bits for a, b in zip(x.ravel(), y.ravel())]
    return np.array([v & ((1 << bits) - 1) for v in out], np.uint64).astype(
        np.dtype(f"u{x.dtype.itemsize}")).view(x.dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int16, np.uint8, np.int64,
                                   np.uint64])
def test_mulhi_matches_exact_products(dtype, executor):
    info = np.iinfo(dtype)
    rng = np.random.RandomState(0)
    with jax.enable_x64(True):
        x = rng.randint(info.min, info.max, size=12, dtype=dtype)
        y = rng.randint(info.min, info.max, size=12, dtype=dtype)
        x[:2], y[:2] = info.max, info.min
        want = _mulhi_reference(x, y)
        np.testing.assert_array_equal(lax.mulhi(x, y), want)
        np.testing.assert_array_equal(jax.jit(lax.mulhi)(x, y), want)


def test_reduce_precision_matches_narrow_formats(executor):
    x = _rand(50) * 100
    f = jax.jit(lambda v, e, m: lax.reduce_precision(v, e, m), static_argnums=(1, 2))
    close(lax.reduce_precision(x, 5, 10), x.astype(np.float16).astype(np.float32), 0)
    close(f(x, 5, 10), x.astype(np.float16).astype(np.float32), 0)
    bf16 = x.astype(jnp.bfloat16).astype(np.float32)
    close(f(x, 8, 7), bf16, 0)
    assert np.isinf(lax.reduce_precision(np.float32(1e6), 5, 10))
    assert np.isnan(lax.reduce_precision(np.float32(np.nan), 5, 10))
    assert lax.reduce_precision(np.float32(1e-9), 5, 10) == 0
    close(jax.grad(lambda v: lax.reduce_precision(v, 5, 10))(1.0), 1.0)
    with pytest.raises(TypeError):
        lax.reduce_precision(np.arange(3), 5, 10)


def test_optimization_barrier():
    tree = {"a": _rand(3), "b": (np.int32(2), _rand(2, seed=1))}
    out = lax.optimization_barrier(tree)
    close(out["a"], tree["a"])
    assert out["b"][0] == 2
    f = jax.jit(lambda v: lax.optimization_barrier((v * 2, v + 1)))
    assert "optimization_barrier" in str(jax.make_jaxpr(f)(1.0))
    assert "stablehlo.optimization_barrier" in f.lower(1.0).as_text()
    close(f(1.0), (2.0, 2.0))
    close(jax.grad(lambda v: lax.optimization_barrier(v * v))(3.0), 6.0)


def test_scatter_sub():
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                        scatter_dims_to_operand_dims=(0,))
    x = np.zeros(4, np.float32)
    idx = np.array([[1], [3], [1]], np.int32)
    upd = np.array([1.0, 2.0, 3.0], np.float32)
    close(lax.scatter_sub(x, idx, upd, dnums), [0, -4, 0, -2])
    close(jax.jit(lambda a, b: lax.scatter_sub(a, idx, b, dnums))(x, upd), [0, -4, 0, -2])
    g = jax.grad(lambda b: lax.scatter_sub(x, idx, b, dnums).sum())(upd)
    close(g, [-1, -1, -1])


def test_special_function_wrappers():
    a, x = np.array([0.5, 2.0], np.float32), np.array([1.5, 0.7], np.float32)
    close(lax.igamma(a, x), scipy.special.gammainc(a, x))
    close(lax.igammac(a, x), scipy.special.gammaincc(a, x))
    close(lax.betainc(a, x, np.float32([0.3, 0.6])),
          scipy.special.betainc(a, x, [0.3, 0.6]))
    close(lax.bessel_i0e(x), scipy.special.i0e(x))
    close(lax.bessel_i1e(x), scipy.special.i1e(x))
    close(lax.zeta(np.float32([2.0, 3.0]), np.float32([1.0, 2.0])),
          scipy.special.zeta([2.0, 3.0], [1.0, 2.0]))
    close(lax.polygamma(np.float32(1.0), x), scipy.special.polygamma(1, x), 1e-4)
    assert lax.random_gamma_grad(np.float32(2.0), np.float32(1.0)).shape == ()
    assert lax.igamma_grad_a(a, x).shape == (2,)


def test_igamma_grad_a_is_a_signed_zero_where_the_density_underflows():
    # JAX 0.10.2: where x^a e^-x / Gamma(a) underflows float32 the derivative in a is -0
    # (random_gamma_grad overflows there; numpyro's TruncatedGamma far in the upper tail
    # needs a finite gradient), +0 at x = 0, NaN outside the domain
    a = np.float32([2, 2, 2, 150, 1e-3, 2, 30, -1, 2])
    x = np.float32([120, 130, 0, 10, 100, 1e-30, 5, 3, -1])
    expected = [-0.0, -0.0, 0.0, -0.0, -0.0, -0.0, -5.112102e-14, np.nan, np.nan]
    for out in (lax.igamma_grad_a(a, x), jax.jit(lax.igamma_grad_a)(a, x)):
        np.testing.assert_allclose(out, expected, rtol=1e-4)
        assert np.signbit(out[:7]).tolist() == np.signbit(expected[:7]).tolist()
    assert float(jax.grad(jax.scipy.special.gammaincc)(np.float32(2), np.float32(120))) == 0


# --- convolution helpers ----------------------------------------------------------------------

def test_conv_shape_tuples_match_real_convolutions():
    lhs, rhs = np.zeros((2, 3, 9, 8), np.float32), np.zeros((4, 3, 3, 2), np.float32)
    for strides, padding in (((1, 1), "VALID"), ((2, 3), "SAME"), ((1, 2), ((1, 2), (0, 1)))):
        want = lax.conv(lhs, rhs, strides, padding).shape
        assert lax.conv_shape_tuple(lhs.shape, rhs.shape, strides, padding) == want
    specs = ("NHWC", "HWIO", "NHWC")
    nhwc, hwio = np.zeros((2, 9, 8, 3)), np.zeros((3, 2, 3, 4))
    assert lax.conv_general_permutations(specs) == ((0, 3, 1, 2), (3, 2, 0, 1),
                                                    (0, 3, 1, 2))
    want = lax.conv_general_dilated(nhwc.astype(np.float32), hwio.astype(np.float32), (2, 1),
                                    "SAME", dimension_numbers=specs).shape
    assert lax.conv_general_shape_tuple(nhwc.shape, hwio.shape, (2, 1), "SAME", specs) == want
    for pad in ("SAME", "VALID"):
        want = lax.conv_transpose(nhwc.astype(np.float32), hwio.astype(np.float32), (2, 2),
                                  pad, dimension_numbers=specs).shape
        assert lax.conv_transpose_shape_tuple(nhwc.shape, hwio.shape, (2, 2), pad,
                                              specs) == want
    with pytest.raises(TypeError, match="exactly once"):
        lax.conv_general_permutations(("NHW", "HWIO", "NHWC"))
    x = np.zeros((5, 7), np.float32)
    got = lax.reduce_window(x, 0.0, lax.add, (2, 3), (1, 2), ((1, 0), (0, 2))).shape
    assert lax.reduce_window_shape_tuple(x.shape, (2, 3), (1, 2), ((1, 0), (0, 2))) == got
    assert lax.reduce_window_shape_tuple((5,), (2,), (1,), ((0, 0),), (2,), (2,)) == (7,)


def test_conv_general_dilated_patches_and_local():
    x = _rand(2, 3, 5, 4)
    patches = lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID")
    assert patches.shape == (2, 3 * 4, 4, 3)
    # feature c * 4 + (i * 2 + j) is x[:, c, y + i, z + j]
    close(patches[:, 1 * 4 + 1 * 2 + 0], x[:, 1, 1:5, 0:3])
    nhwc = np.transpose(x, (0, 2, 3, 1))
    p2 = lax.conv_general_dilated_patches(nhwc, (2, 2), (1, 1), "VALID",
                                          dimension_numbers=("NHWC", "OIHW", "NHWC"))
    close(np.transpose(p2, (0, 3, 1, 2)), patches)
    # unshared weights: out[n, o, y, z] = sum_k patches[n, k, y, z] * w[o, k, y, z]
    w = _rand(6, 12, 4, 3, seed=2)
    out = lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2))
    close(out, np.einsum("nkyz,okyz->noyz", np.asarray(patches), w), 1e-4)


# --- collectives under vmap -------------------------------------------------------------------

N = 4


def _vmapped(f, x):
    return jax.vmap(f, axis_name="i")(x)


def test_ppermute_and_pshuffle_under_vmap(executor):
    x = np.arange(N * 3, dtype=np.float32).reshape(N, 3)
    perm = [(0, 1), (1, 2), (2, 3)]
    out = jax.jit(lambda v: _vmapped(lambda u: lax.ppermute(u, "i", perm), v))(x)
    close(out, np.concatenate([np.zeros((1, 3)), x[:3]]))
    out = _vmapped(lambda u: lax.pshuffle(u, "i", [3, 0, 1, 2]), x)
    close(out, x[[3, 0, 1, 2]])
    tree = _vmapped(lambda u: lax.ppermute({"a": u, "b": 2 * u}, "i", [(0, 3)]), x)
    close(tree["b"][3], 2 * x[0])
    # the transpose of a permutation is the inverse permutation
    g = jax.grad(lambda v: (_vmapped(lambda u: lax.ppermute(u, "i", perm), v)
                            * np.arange(N * 3).reshape(N, 3)).sum())(x)
    close(g, np.concatenate([np.arange(3, 12).reshape(3, 3), np.zeros((1, 3))]))
    with pytest.raises(ValueError, match="repeat"):
        _vmapped(lambda u: lax.ppermute(u, "i", [(0, 1), (0, 2)]), x)
    with pytest.raises(ValueError, match="outside axis"):
        _vmapped(lambda u: lax.ppermute(u, "i", [(0, 9)]), x)
    with pytest.raises(ValueError, match="does not represent a permutation"):
        _vmapped(lambda u: lax.pshuffle(u, "i", [0, 0, 1, 2]), x)
    with pytest.raises(NameError, match="unbound axis"):
        lax.ppermute(x, "j", [(0, 1)])


def test_all_to_all_and_pswapaxes_under_vmap(executor):
    y = np.arange(N * N * 3, dtype=np.float32).reshape(N, N, 3)
    out = _vmapped(lambda u: lax.all_to_all(u, "i", 0, 0), y)
    close(out, np.swapaxes(y, 0, 1))
    out = jax.jit(lambda v: _vmapped(lambda u: lax.all_to_all(u, "i", 0, 1), v))(y)
    assert out.shape == (N, 3, N)
    close(out, np.transpose(y, (1, 2, 0)))   # out[m][:, i] = y[i][m]
    close(_vmapped(lambda u: lax.pswapaxes(u, "i", 0), y), np.swapaxes(y, 0, 1))
    z = np.arange(N * 3 * 8, dtype=np.float32).reshape(N, 3, 8)
    tiled = _vmapped(lambda u: lax.all_to_all(u, "i", 1, 0, tiled=True), z)
    assert tiled.shape == (N, 3 * N, 2)
    close(tiled[2][3:6], z[1][:, 4:6])   # member 2 gets chunk 2 of member 1 at rows 3..5
    g = jax.grad(lambda v: (_vmapped(lambda u: lax.all_to_all(u, "i", 0, 0), v)
                            * np.arange(y.size).reshape(y.shape)).sum())(y)
    close(g, np.swapaxes(np.arange(y.size).reshape(y.shape), 0, 1))
    with pytest.raises(ValueError, match="equal x.shape"):
        _vmapped(lambda u: lax.all_to_all(u, "i", 1, 0), y)


def test_psum_scatter_and_pbroadcast_under_vmap(executor):
    y = _rand(N, N, 3)
    close(_vmapped(lambda u: lax.psum_scatter(u, "i"), y), y.sum(0), 1e-5)
    z = _rand(N, 3, 8)
    out = _vmapped(lambda u: lax.psum_scatter(u, "i", scatter_dimension=1, tiled=True), z)
    close(out, np.stack([z.sum(0)[:, 2 * m:2 * m + 2] for m in range(N)]), 1e-5)
    g = jax.grad(lambda v: _vmapped(lambda u: lax.psum_scatter(u, "i"), v)[1].sum())(y)
    expected = np.zeros_like(y)
    expected[:, 1] = 1
    close(g, expected)
    x = _rand(N, 3)
    close(_vmapped(lambda u: lax.pbroadcast(u, "i", 2), x), np.broadcast_to(x[2], x.shape))
    assert _vmapped(lambda u: u * 0 + lax.axis_size("i"), x)[0, 0] == N
    with pytest.raises(ValueError, match="untiled it must equal"):
        _vmapped(lambda u: lax.psum_scatter(u, "i", scatter_dimension=1), z)


def test_collectives_of_an_outer_axis_under_inner_vmap():
    x = np.arange(N * 2 * 4, dtype=np.float32).reshape(N, 2, 4)
    inner = jax.vmap(lambda u: lax.ppermute(u, "i", [(0, 1)]), in_axes=1, out_axes=1)
    out = jax.vmap(inner, axis_name="i")(x)
    close(out[1], x[0])
    close(out[2], 0 * x[0])


# --- collectives under pmap: four CPU devices in a subprocess ----------------------------------

def check_pmap_collectives_match_vmap():
    y = np.arange(N * N * 3, dtype=np.float32).reshape(N, N, 3)
    z = np.random.RandomState(0).rand(N, 3, 8).astype(np.float32)
    x = np.arange(N * 6, dtype=np.float32).reshape(N, 6)
    cases = [
        (lambda u: lax.ppermute(u, "i", [(0, 1), (1, 2), (3, 0)]), x),
        (lambda u: lax.pshuffle(u, "i", [1, 2, 3, 0]), x),
        (lambda u: lax.all_to_all(u, "i", 0, 0), y),
        (lambda u: lax.all_to_all(u, "i", 0, 1), y),
        (lambda u: lax.all_to_all(u, "i", 1, 0, tiled=True), z),
        (lambda u: lax.psum_scatter(u, "i"), y),
        (lambda u: lax.psum_scatter(u, "i", scatter_dimension=1, tiled=True), z),
        (lambda u: lax.pbroadcast(u, "i", 3), x),
    ]
    for f, v in cases:
        got = jax.pmap(f, axis_name="i")(v)
        np.testing.assert_allclose(got, jax.vmap(f, axis_name="i")(v), rtol=1e-6)
    g = jax.grad(lambda v: (jax.pmap(lambda u: lax.ppermute(u, "i", [(0, 1), (1, 2)]) ** 2,
                                     axis_name="i")(v)).sum())(x)
    np.testing.assert_allclose(g, np.concatenate([2 * x[:2], np.zeros((2, 6))]))


def test_collectives_under_a_four_device_pmap():
    results = checks_in_process("test_lax_ops", N)
    assert results and all(v == "ok" for v in results.values()), results


# --- custom_linear_solve and custom_root -----------------------------------------------------

def _spd(seed=0):
    m = np.random.RandomState(seed).randn(3, 3).astype(np.float32)
    return m @ m.T + 3 * np.eye(3, dtype=np.float32)


def _solve_with(a):
    def solve(matvec, b):
        return jnp.linalg.solve(a, b)   # a closed-over matrix, ignoring matvec
    return solve


def test_custom_linear_solve_values_and_gradients(executor):
    a, b = _spd(), _rand(3, seed=5)

    def f(a, b):
        return lax.custom_linear_solve(lambda x: a @ x, b, _solve_with(a),
                                       transpose_solve=_solve_with(a.T))

    close(f(a, b), np.linalg.solve(a, b), 1e-4)
    close(jax.jit(f)(a, b), np.linalg.solve(a, b), 1e-4)
    with jax.enable_x64(True):
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        ref = jax.grad(lambda m, v: jnp.linalg.solve(m, v).sum(), argnums=(0, 1))(a64, b64)
        got = jax.grad(lambda m, v: f(m, v).sum(), argnums=(0, 1))(a64, b64)
        close(got[0], ref[0], 1e-8)
        close(got[1], ref[1], 1e-8)
        t = np.ones(3)
        _, jvp_ref = jax.jvp(lambda v: jnp.linalg.solve(a64, v), (b64,), (t,))
        _, jvp_got = jax.jvp(lambda v: f(a64, v), (b64,), (t,))
        close(jvp_got, jvp_ref, 1e-8)
    batched = jax.vmap(f, in_axes=(None, 0))(a, np.stack([b, 2 * b]))
    close(batched[1], 2 * np.linalg.solve(a, b), 1e-4)
    both = jax.vmap(f)(np.stack([a, _spd(1)]), np.stack([b, b]))
    close(both[1], np.linalg.solve(_spd(1), b), 1e-4)


def _conjugate_gradient(matvec, b, steps=3):
    """Plain CG through matvec (a loop: differentiating it directly would not work)."""
    def step(_, state):
        x, r, p = state
        ap = matvec(p)
        alpha = (r @ r) / (p @ ap)
        x, r_new = x + alpha * p, r - alpha * ap
        return x, r_new, r_new + (r_new @ r_new) / (r @ r) * p
    return lax.fori_loop(0, steps, step, (jnp.zeros_like(b), b, b))[0]


def test_custom_linear_solve_symmetric_aux_and_errors():
    a, b = _spd(), _rand(3, seed=5)
    x = lax.custom_linear_solve(lambda v: a @ v, b, _conjugate_gradient, symmetric=True)
    close(x, np.linalg.solve(a, b), 1e-3)
    g = jax.grad(lambda v: lax.custom_linear_solve(lambda u: a @ u, v, _conjugate_gradient,
                                                   symmetric=True).sum())(b)
    close(g, np.linalg.solve(a.T, np.ones(3)), 1e-3)
    x, aux = lax.custom_linear_solve(lambda v: a @ v, b,
                                     lambda mv, v: (jnp.linalg.solve(a, v), jnp.int32(7)),
                                     has_aux=True)
    assert int(aux) == 7
    close(x, np.linalg.solve(a, b), 1e-4)
    with pytest.raises(TypeError, match="transpose_solve required"):
        jax.grad(lambda v: lax.custom_linear_solve(lambda u: a @ u, v,
                                                   _solve_with(a)).sum())(b)
    # JAX 0.10.2's errors
    with pytest.raises(ValueError, match=r"matvec\(\) output shapes must match b, got "
                       r"\[\(2,\)\] and \[\(3,\)\]"):
        lax.custom_linear_solve(lambda v: v[:2], b, _solve_with(a))
    with pytest.raises(TypeError, match=r"solve\(\) output pytree structure must match b, "
                       r"got PyTreeDef\(\[\*\]\) and PyTreeDef\(\*\)."):
        lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, v: [v])
    with pytest.raises(TypeError, match="callable"):
        lax.custom_linear_solve(a, b, _solve_with(a))


def _newton_sqrt(c):
    def f(x):
        return x * x - c

    def solve(g, x0):
        return lax.fori_loop(0, 30, lambda i, x: x - g(x) / (2 * x), x0)

    return lax.custom_root(f, jnp.asarray(1.0, c.dtype), solve,
                           lambda g, y: y / g(jnp.ones_like(y)))


def test_custom_root_differentiates_implicitly(executor):
    c = np.float32(2.0)
    close(_newton_sqrt(c), np.sqrt(2.0), 1e-5)
    close(jax.jit(_newton_sqrt)(c), np.sqrt(2.0), 1e-5)
    close(jax.grad(_newton_sqrt)(c), 0.5 / np.sqrt(2.0), 1e-5)
    close(jax.jit(jax.grad(_newton_sqrt))(c), 0.5 / np.sqrt(2.0), 1e-5)
    close(jax.jvp(_newton_sqrt, (c,), (np.float32(1.0),))[1], 0.5 / np.sqrt(2.0), 1e-5)
    close(jax.vmap(_newton_sqrt)(np.float32([4.0, 9.0])), [2.0, 3.0], 1e-5)
    x, aux = lax.custom_root(lambda x: x - 3.0, 0.0, lambda f, x0: (x0 - f(x0), jnp.int32(1)),
                             lambda g, y: y, has_aux=True)
    close(x, 3.0)
    assert int(aux) == 1
    with pytest.raises(TypeError, match="callable"):
        lax.custom_root(lambda x: x, 0.0, None, lambda g, y: y)


def test_custom_root_solvers_may_close_over_traced_values():
    """solve and tangent_solve may capture values of the function being differentiated
    (a Cholesky factor of the traced matrix here): they reach the JVP rule as operands
    (values from JAX 0.10.2). tangent_solve's structure is checked when custom_root is
    called, as JAX traces it then."""
    b = np.array([1., 2.], np.float32)

    def root(a):
        factors = jax.scipy.linalg.cho_factor(a)

        def cho_solve(f, y):
            return jax.scipy.linalg.cho_solve(factors, y), {"nfev": jnp.float32(3)}

        def tangent_solve(g, y):
            return lax.custom_linear_solve(g, y, lambda g, y: cho_solve(g, y)[0],
                                           symmetric=True)
        return lax.custom_root(lambda x: jnp.dot(a, x) - b, b, cho_solve, tangent_solve,
                               has_aux=True)
    a = np.array([[2., 0.5], [0.5, 1.]], np.float32)
    (x, aux), (x_dot, aux_dot) = jax.jvp(root, (a,), (np.ones_like(a),))
    close(x, [0, 2], 1e-6)
    close(x_dot, [-0.5714285, -1.7142856], 1e-6)
    assert float(aux["nfev"]) == 3 and float(aux_dot["nfev"]) == 0
    close(jax.grad(lambda a: root(a)[0].sum())(a), [[0, -0.5714285], [0, -1.7142855]], 1e-6)
    with pytest.raises(TypeError, match=re.escape("tangent_solve() output pytree")):
        lax.custom_root(lambda y: 1.0 - y, 0.0, lambda f, x: x, lambda g, y: (y, y))


# --- program-level helpers --------------------------------------------------------------------

def test_platform_dependent_and_composite_names():
    here = jax.devices()[0].platform
    out = lax.platform_dependent(2.0, **{here: lambda v: v * 10}, default=lambda v: v)
    close(out, 20.0)
    close(lax.platform_dependent(2.0, tpu=lambda v: v * 10, default=lambda v: -v)
          if here != "tpu" else -2.0, -2.0)
    close(jax.jit(lambda v: lax.platform_dependent(v, default=jnp.sin))(1.0), np.sin(1.0))
    # JAX 0.10.2: any other name is a platform too (one this process never runs on)
    close(lax.platform_dependent(3.0, other=lambda v: v + 2.0, default=jnp.sin), np.sin(3.0))
    close(lax.platform_dependent(3.0, other=lambda v: v + 2.0, **{here: jnp.cos}), np.cos(3.0))
    with pytest.raises(ValueError, match=r"Use 'cuda' or 'rocm' for lax.platform_dependent."):
        lax.platform_dependent(1.0, gpu=lambda v: v)
    with pytest.raises(TypeError, match="lax.platform_dependent: the 'cpu' branch must be a "
                       "callable."):
        lax.platform_dependent(1.0, cpu=3)
    with pytest.raises(NotImplementedError, match=re.escape(
            "MLIR translation rule for primitive 'platform_index(platforms=(('other', "
            f"'gpu_v2'),))' not found for platform {here}")):
        f = lambda v: v       # noqa: E731
        lax.platform_dependent(1.0, other=f, gpu_v2=f)
    my_tanh = lax.composite(lambda x: jnp.tanh(x), name="my.tanh", version=2)
    close(my_tanh(0.5), np.tanh(0.5))
    with pytest.raises(TypeError, match="name"):
        lax.composite(jnp.tanh, name="")


def test_lgamma_at_minus_infinity_is_plus_infinity_eagerly_and_compiled():
    x = jnp.array([-jnp.inf, jnp.inf, -1.0, 0.0])
    for f in (lax.lgamma, jax.jit(lax.lgamma)):
        assert f(x).tolist() == [jnp.inf] * 4     # as XLA (SciPy's gammaln(-inf) is -inf)


def test_dynamic_slice_negative_starts_count_from_the_end():
    """As JAX's allow_negative_indices=True (the default): a negative start is moved up by
    the dimension's size, then clamped; expected values observed in JAX 0.10.2."""
    x = jnp.arange(5)
    np.testing.assert_array_equal(lax.dynamic_slice(x, (-1,), (2,)), [3, 4])
    np.testing.assert_array_equal(lax.dynamic_slice(x, (-7,), (2,)), [0, 1])
    np.testing.assert_array_equal(jax.jit(lambda x, i: lax.dynamic_slice(x, (i,), (2,)))(x, -2),
                                  [3, 4])
    np.testing.assert_array_equal(jax.jit(lambda x, i: lax.dynamic_slice(
        x, (i,), (2,), allow_negative_indices=False))(x, -2), [0, 1])
    np.testing.assert_array_equal(
        lax.dynamic_update_slice(x, jnp.array([9, 9]), (-2,)), [0, 1, 2, 9, 9])
    assert int(lax.dynamic_index_in_dim(x, -1, keepdims=False)) == 4
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, -3, 2), [2, 3])
    np.testing.assert_array_equal(
        jax.vmap(lambda i: lax.dynamic_slice(x, (i,), (2,)))(jnp.array([-1, 0, -5, 2])),
        [[3, 4], [0, 1], [0, 1], [2, 3]])
    np.testing.assert_array_equal(
        jax.grad(lambda x: lax.dynamic_slice(x, (-2,), (2,)).sum())(jnp.arange(5.0)),
        [0, 0, 0, 1, 1])
    np.testing.assert_array_equal(lax.dynamic_slice(
        jnp.arange(12).reshape(3, 4), (-1, 1), (2, 2), allow_negative_indices=(True, False)),
        [[5, 6], [9, 10]])
    with pytest.raises(ValueError, match="allow_negative_indices"):
        lax.dynamic_slice(x, (-1,), (2,), allow_negative_indices=False)
    # jnp indexing normalises once, then clamps (x[-7] is x[0], as in JAX)
    assert int(x[-7]) == 0 and int(jax.jit(lambda x, i: x[i])(x, -7)) == 0


def test_dynamic_slice_indices_keep_their_dtype():
    """As in JAX 0.10.2: the start indices share one integer dtype (a Python int is the
    default int), unsigned ones are not normalised, and int16 ones stay int16."""
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(TypeError, match="index arguments to dynamic_slice must be integers "
                                        "of the same type, got: int32, int16"):
        lax.dynamic_slice(x, (np.int32(1), np.int16(2)), (2, 2))
    with pytest.raises(TypeError, match="same type, got: int16, int32"):
        lax.dynamic_slice(x, (np.int16(1), 2), (2, 2))
    with pytest.raises(TypeError, match="index arguments to dynamic_update_slice must be"):
        lax.dynamic_update_slice(x, np.zeros((2, 2)), (np.int32(1), np.int16(2)))
    jaxpr = jax.make_jaxpr(lambda x, i: lax.dynamic_slice(x, [i], [1]))(
        np.arange(200), np.uint32(128))
    assert [e.primitive for e in jaxpr.eqns] == [lax.dynamic_slice_p]
    assert [str(e.primitive) for e in jax.make_jaxpr(lambda x, i: lax.dynamic_slice_in_dim(
        x, i, 2, 1))(x, np.int16(1)).eqns] == ["lt", "add", "select_n", "dynamic_slice"]
    assert lax.dynamic_slice(x, (np.int16(1), np.int16(-2)), (2, 2)).tolist() == \
        [[6.0, 7.0], [10.0, 11.0]]
    assert lax.dynamic_update_slice_in_dim(x, np.ones((3, 1)), np.uint8(2), 1)[:, 2] \
        .tolist() == [1.0, 1.0, 1.0]
    assert jax.vmap(lambda i: lax.dynamic_slice(x, (i, i), (2, 2)))(
        np.array([0, 1], np.int16)).tolist() == [[[0.0, 1.0], [4.0, 5.0]],
                                                 [[5.0, 6.0], [9.0, 10.0]]]
    assert jax.vmap(lambda y: lax.dynamic_update_slice(y, np.ones(2), (np.uint8(1),)))(x) \
        .tolist() == [[0.0, 1.0, 1.0, 3.0], [4.0, 1.0, 1.0, 7.0], [8.0, 1.0, 1.0, 11.0]]
    assert jax.jit(lambda y, i: lax.dynamic_slice(y, (i, i), (2, 2)))(x, np.uint8(200)) \
        .tolist() == [[6.0, 7.0], [10.0, 11.0]]


@pytest.mark.parametrize("executor", ["xla", "numpy"])
def test_bitcast_convert_type_splits_and_joins_4_bit_types(executor):
    """4-bit types take 4 bits (little-endian nibbles); values are JAX 0.10.2's."""
    cases = [(np.float32(-1.5), "uint4", [0, 0, 0, 0, 0, 12, 15, 11]),
             (np.float32(-1.5), "int4", [0, 0, 0, 0, 0, -4, -1, -5]),
             (np.array([1, 2, 3, -4], "int4"), np.float16, -3.564453125),
             (np.array([1, -2], "int4"), np.uint8, 225),
             (np.array([1, -2], "int4"), "uint4", [1, 14]),
             (np.array([7, 200], np.uint8), "int4", [[7, 0], [-8, -4]]),
             (np.array([7, 200], np.uint8), "float4_e2m1fn", [[6.0, 0.0], [-0.0, -2.0]])]
    with config.executor(executor):
        for x, dtype, expected in cases:
            for f in (lax.bitcast_convert_type, jax.jit(lax.bitcast_convert_type,
                                                        static_argnums=1)):
                out = f(x, dtype)
                assert out.dtype == np.dtype(dtype)
                np.testing.assert_array_equal(np.asarray(out, np.float32), expected)
    with pytest.raises(TypeError, match="needs a last dimension of 4, got shape"):
        lax.bitcast_convert_type(np.zeros(2, "int4"), np.float16)


def test_mul_out_dtype_converts_the_operands_first():
    """lax.mul(out_dtype=) as in JAX 0.10.2: int8 2 * 100 is 200 in int32."""
    x, y = np.full(2, 2, np.int8), np.full(2, 100, np.int8)
    for f in (lax.mul, jax.jit(lax.mul, static_argnames="out_dtype")):
        out = f(x, y, out_dtype=np.int32)
        assert out.dtype == np.int32 and out.tolist() == [200, 200]
    out = lax.mul(np.ones(2, np.float16) * 3, np.ones(2, np.float16) * 2, out_dtype=np.float32)
    assert out.dtype == np.float32 and out.tolist() == [6.0, 6.0]


def test_broadcast_in_dim_takes_unsorted_dimensions():
    """Operand dimensions may land in any order (JAX 0.10.2's result)."""
    x = np.arange(6.0).reshape(2, 3)
    expected = [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert lax.broadcast_in_dim(x, (3, 2), (1, 0)).tolist() == expected
    assert jax.jit(lambda x: lax.broadcast_in_dim(x, (3, 2), (1, 0)))(x).tolist() == expected


# Recorded from JAX 0.10.2: Python scalars are converted on the host (NumPy's casts).
@pytest.mark.parametrize("value, dtype, expected", [
    (2**32, np.int32, 0), (2**31, np.int32, -2**31), (-2**40, np.int32, 0),
    (2**63, np.int32, 0), (2**32 + 1, np.uint8, 1), (-1, np.uint32, 2**32 - 1),
    (2**32, np.float32, 4294967296.0), (2**32, np.bool_, True), (True, np.int32, 1),
])
def test_convert_element_type_of_python_scalars_wraps_like_jax(value, dtype, expected):
    out = lax.convert_element_type(value, dtype)
    assert isinstance(out, jax.Array) and out.dtype == dtype and not out.weak_type
    assert np.asarray(out) == expected


def test_convert_element_type_python_scalar_is_a_constant_and_huge_ints_overflow():
    assert str(jax.make_jaxpr(lambda: lax.convert_element_type(2**32, np.int32))()) == \
        "{ lambda ; . let  in (0:i32[],) }"
    assert str(jax.make_jaxpr(lambda: lax.convert_element_type(3, np.float32))()) == \
        "{ lambda ; . let  in (3.0:f32[],) }"
    with pytest.raises(OverflowError):
        lax.convert_element_type(2**70, np.int32)
    same = lax.convert_element_type(np.arange(3, dtype=np.int32), np.int32)
    assert isinstance(same, jax.Array)


def test_conj_of_a_real_operand_is_complex():
    """As JAX 0.10.2's lax.conj: conj[input_dtype=float32] gives c64; float16 is refused."""
    x = np.array([1.5, -2.0], np.float32)
    for f in (lax.conj, jax.jit(lax.conj)):
        out = f(x)
        assert out.dtype == np.complex64 and out.tolist() == [1.5 + 0j, -2.0 + 0j]
    assert str(jax.make_jaxpr(lax.conj)(x)) == \
        "{ lambda ; a:f32[2]. let b:c64[2] = conj[input_dtype=float32] a in (b,) }"
    assert jax.grad(lambda v: lax.conj(v).real.sum())(x).tolist() == [1.0, 1.0]
    assert lax.conj(np.array([1 + 2j], np.complex64)).tolist() == [1 - 2j]
    with pytest.raises(TypeError, match="conj does not accept dtype float16"):
        lax.conj(np.float16(1))


def test_dce_sink_prevent_mlir_dce_keeps_the_value_in_xla():
    def f(x):
        lax.dce_sink(x + 1, prevent_mlir_dce=True)
        return x
    hlo = jax.jit(f).lower(1.0).compile().as_text()
    assert 'custom_call_target="dce_sink"' in hlo and "add" in hlo   # as in JAX
    assert float(jax.jit(f)(2.0)) == 2.0


# complex64 then complex128 results of JAX 0.10.2 (its eager path is XLA's)
COMPLEX_FUNCTIONS_AS_JAX = {
    "log1p": ([1e-5, 1e-3 + 2e-3j, -1e-30 - 1e-46j, 0.5 - 0.25j], [
        [9.999949725170154e-06, 0.0010014964500442147 + 0.001997999381273985j,
         -1.0000000031710769e-30, 0.41916459798812866 - 0.16514867544174194j],
        [9.999950000333332e-06, 0.0010014963350915137 + 0.0019979993393257262j,
         -1e-30 - 1e-46j, 0.4191645952022216 - 0.16514867741462683j]]),
    # on the branch cuts XLA ignores the sign of a zero part (NumPy does not)
    "sqrt": ([-3 - 0j, -3 + 0j], [[1.7320507764816284j] * 2, [1.7320508075688772j] * 2]),
    "asin": ([-3 - 0j], [[-1.5707963267948966 + 1.762747174039086j]] * 2),
    "acos": ([3 - 0j], [[-1.762747174039086j]] * 2),
    "asinh": ([-0.0 - 3j], [[1.762747174039086 - 1.5707963267948966j]] * 2),
    "acosh": ([-1 - 0j, -1e-30 - 0j], [[3.141592653589793j, 1.5707963267948966j]] * 2),
    "logistic": ([-1e5 - 1e-11j, 2 + 1j], [
        [0, 0.9214832186698914 + 0.09778866916894913j],
        [0, 0.9214831024228914 + 0.09778865503296699j]]),
    "sin": ([-1e-30j, 1e-8 + 2e-20j, 1 + 1j], [
        [-1.0000000031710769e-30j, 9.99999993922529e-09 + 1.999999936531045e-20j,
         1.2984575033187866 + 0.634963870048523j],
        [-1e-30j, 1e-08 + 2e-20j, 1.2984575814159773 + 0.6349639147847362j]]),
    "cos": ([1e-8 - 1e-24j, 1 + 1j], [[1 + 1.000000023742228e-32j,
                                       0.8337299227714539 - 0.9888976812362671j],
                                      [1 + 9.999999999999999e-33j,
                                       0.8337300251311492 - 0.9888977057628652j]]),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_FUNCTIONS_AS_JAX))
@pytest.mark.parametrize("jit", [False, True])
def test_complex_functions_match_jax_near_zero_and_on_branch_cuts(name, jit):
    args, expected = COMPLEX_FUNCTIONS_AS_JAX[name]
    f = getattr(lax, name)
    for dtype, want in zip((np.complex64, np.complex128), expected):
        with config.enable_x64(dtype == np.complex128):
            got = np.asarray((jax.jit(f) if jit else f)(np.array(args, dtype)))
        # a few ulps, relative to each part (each part is accurate on its own)
        eps = np.finfo(dtype).eps
        for part in (np.real, np.imag):
            np.testing.assert_allclose(part(got), part(np.array(want, dtype)), rtol=4 * eps,
                                       atol=0)


def test_abs_derivative_at_zero():
    # JAX 0.10.2: a real abs has slope +1 at 0 (either zero), a complex one tangent 0.
    grad_abs = jax.grad(jnp.abs)
    assert [float(grad_abs(v)) for v in (0., -0., -2., 3.)] == [1., 1., -1., 1.]
    assert float(jax.jit(jax.grad(lax.abs))(0.)) == 1.
    _, t = jax.jvp(jnp.abs, (jnp.complex64(0),), (jnp.complex64(1 + 1j),))
    assert float(t) == 0.
    assert complex(jax.grad(jnp.abs)(jnp.complex64(0))) == 0j
    zs = 0.5j * np.arange(5) + np.arange(5)
    close(jax.grad(lambda z: jnp.sum(jnp.cos(jnp.abs(z))))(zs),
          np.array([0. + 0.j, -0.80430663 + 0.40215331j, -0.70368982 + 0.35184491j,
                    0.1886467 - 0.09432335j, 0.86873727 - 0.43436864j], np.complex64),
          1e-5)


def test_pow_takes_an_integer_exponent():
    # JAX 0.10.2: lax.pow(inexact, integer) converts the exponent to the base's dtype, and
    # its derivative in the base is 0 where the exponent is 0, even at a zero base
    for f in (lax.pow, jax.jit(lax.pow)):
        out = f(jnp.array([2.0, 0.0], jnp.float32), jnp.array([-1, 0], jnp.int32))
        assert out.dtype == np.float32 and out.tolist() == [0.5, 1.0]
    assert lax.pow(2.0, 3).weak_type and not lax.pow(np.float32(2), 3).weak_type
    close(jax.vmap(lax.pow)(jnp.array([2.0, 3.0]), jnp.array([2, 3], jnp.int32)), [4.0, 27.0])
    assert float(jax.grad(jax.jit(lambda x, n: x ** n))(0.0, 0)) == 0.0
    assert float(jax.grad(lambda x: lax.pow(x, 3))(2.0)) == 12.0
    close(jax.jacfwd(lambda x: lax.pow(x, jnp.array([0, 1, 2], jnp.int32)))(jnp.zeros(3)),
          np.diag([0.0, 1.0, 0.0]))
    close(jax.grad(lambda z: jnp.sum(z ** jnp.arange(0, 2, dtype=int)))(3.14), 1.0)


# JAX 0.10.2's empty max/min: XLA's identity, the largest finite value for floats
# without infinities
@pytest.mark.parametrize("dtype, low, high", [
    ("bfloat16", -np.inf, np.inf), ("float8_e4m3fn", -448.0, 448.0), ("int8", -128, 127),
    ("bool", False, True),
])
def test_empty_reduce_max_and_min_give_the_identity(dtype, low, high):
    x = jnp.zeros((0, 2), dtype)
    for f in (lambda a: a, jax.jit):
        mx = f(lambda a: lax.reduce_max(a, (0,)))(x)
        mn = f(lambda a: lax.reduce_min(a, (0,)))(x)
        assert mx.dtype == x.dtype
        np.testing.assert_array_equal(np.asarray(mx, np.float64), [low, low])
        np.testing.assert_array_equal(np.asarray(mn, np.float64), [high, high])


def test_int64_division_is_exact():
    # JAX 0.10.2 (XLA) divides in integers, rounding toward zero; a float64 quotient lost
    # the low bits of large int64s (max // 3 came out 170 too small)
    with jax.enable_x64(True):
        x = jnp.array([2 ** 63 - 1, -2 ** 63 + 1, -2 ** 63, 2 ** 62 + 1, -7], jnp.int64)
        y = jnp.array([3, 3, -1, 7, 0], jnp.int64)
        want = [3074457345618258602, -3074457345618258602, -2 ** 63, 658812288346769700, -1]
        for f in (lax.div, jax.jit(lax.div)):
            assert f(x, y).tolist() == want
        assert (x // 3).tolist() == [3074457345618258602, -3074457345618258603,
                                     -3074457345618258603, 1537228672809129301, -3]
