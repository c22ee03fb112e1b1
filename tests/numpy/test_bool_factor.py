"""x * b for a bool array b, eager and jitted, as JAX 0.10.2 computes it on CPU. JAX's
jnp.multiply is one XLA program, mul(x, convert(b)), which XLA's algebraic simplifier
rewrites as select(b, x, 0) when b needs no broadcast, for every float and complex dtype
but bfloat16: inf * False is 0 there (and -1 * False is +0), nan where b is broadcast."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

inf, nan = np.inf, np.nan
VALS = [-1.0, -0.0, inf, nan, 2.0]
MASK = [False, False, False, False, True]
FOLDED = [0.0, 0.0, 0.0, 0.0, 2.0]       # JAX's x * b for x of VALS, b of MASK
UNFOLDED = [-0.0, -0.0, nan, nan, 2.0]   # IEEE multiplication


def _same(got, want):
    got = np.asarray(got).astype(np.complex128).real.ravel()
    want = np.asarray(want, np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    ok = ~np.isnan(want)
    assert np.array_equal(got[ok], want[ok]), (got, want)
    assert np.array_equal(np.signbit(got[ok]), np.signbit(want[ok])), (got, want)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("dtype", ["float16", "float32", "complex64"])
def test_bool_factor_of_result_shape_selects(dtype, jit):
    x, b = jnp.array(VALS, dtype), jnp.array(MASK)
    mul = jax.jit(jnp.multiply) if jit else jnp.multiply
    _same(mul(x, b), FOLDED)
    _same(mul(b, x), FOLDED)
    _same(mul(x, np.array(MASK)), FOLDED)
    _same(mul(x[None], b[None]), FOLDED)
    _same(mul(x, b[None]), FOLDED)                 # x is broadcast, b is not
    _same(mul(jnp.array(inf, dtype), b), [0.0] * 4 + [inf])


@pytest.mark.parametrize("jit", [False, True])
def test_broadcast_bool_factor_multiplies(jit):
    x, b = jnp.array(VALS, jnp.float32), jnp.array(MASK)
    mul = jax.jit(jnp.multiply) if jit else jnp.multiply
    _same(mul(x, jnp.array(False)), [-0.0, -0.0, nan, nan, 0.0])
    _same(mul(x, np.bool_(False)), [-0.0, -0.0, nan, nan, 0.0])
    _same(mul(x[None], b), UNFOLDED)               # b is rank-promoted
    _same(x * False, [-0.0, -0.0, nan, nan, 0.0])  # a Python bool is broadcast


@pytest.mark.parametrize("jit", [False, True])
def test_bfloat16_bool_factor_multiplies(jit):
    x, b = jnp.array(VALS, jnp.bfloat16), jnp.array(MASK)
    mul = jax.jit(jnp.multiply) if jit else jnp.multiply
    _same(mul(x, b), UNFOLDED)


def test_scalar_bool_factors_keep_weak_type():
    for got, want, weak in [(jnp.multiply(jnp.inf, False), 0.0, True),
                            (jnp.multiply(np.inf, jnp.array([False, True])), [0.0, inf], True),
                            (jnp.multiply(jnp.float32(-1), jnp.array(False)), 0.0, False)]:
        _same(got, np.atleast_1d(want))
        assert got.dtype == np.float32 and got.aval.weak_type == weak


def test_integer_times_bool():
    got = jnp.array([3, -4]) * jnp.array([True, False])
    assert got.dtype == np.int32 and got.tolist() == [3, 0]
