"""Signed zeros as XLA gives them. max and min order -0 below +0 (NumPy's treat the zeros
as equal and return the first operand): elementwise, in clamp, in reductions and in
cumulative scans, eager and jitted; fmax/fmin return x2 on ties; a cumsum is never -0.
Expected values recorded from JAX 0.10.2 on CPU."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

A = [-0.0, 0.0, -0.0, 0.0, 1.0, -1.0]
B = [0.0, -0.0, -0.0, 0.0, -0.0, -0.0]
CASES = [
    ("maximum", jnp.maximum, [A, B], [0.0, 0.0, -0.0, 0.0, 1.0, -0.0]),
    ("minimum", jnp.minimum, [A, B], [-0.0, -0.0, -0.0, 0.0, -0.0, -1.0]),
    ("lax_max", lax.max, [A, B], [0.0, 0.0, -0.0, 0.0, 1.0, -0.0]),
    ("lax_min", lax.min, [A, B], [-0.0, -0.0, -0.0, 0.0, -0.0, -1.0]),
    ("clamp", lambda x, z: lax.clamp(-z, x, z), [A, 0.0], [-0.0, 0.0, -0.0, 0.0, 0.0, -0.0]),
    ("clip", lambda x, z: jnp.clip(x, z, z), [B, -0.0], [-0.0] * 6),
    ("max_neg_first", jnp.max, [[-0.0, 0.0]], [0.0]),
    ("max_pos_first", jnp.max, [[0.0, -0.0]], [0.0]),
    ("max_all_neg", jnp.max, [[-0.0, -0.0]], [-0.0]),
    ("min_pos_first", jnp.min, [[0.0, -0.0]], [-0.0]),
    ("min_all_pos", jnp.min, [[0.0, 0.0]], [0.0]),
    ("max_rows", lambda x: jnp.max(x, axis=1), [[[-0.0, 0.0], [-0.0, -1.0]]], [0.0, -0.0]),
    ("min_cols", lambda x: jnp.min(x, axis=0), [[[-0.0, 0.0], [0.0, 1.0]]], [-0.0, 0.0]),
    ("cummax", lax.cummax, [[-0.0, -0.0, 0.0, -0.0, 1.0]], [-0.0, -0.0, 0.0, 0.0, 1.0]),
    ("cummin", lax.cummin, [[0.0, -0.0, 0.0, -1.0]], [0.0, -0.0, -0.0, -1.0]),
    ("cummax_reverse", lambda x: lax.cummax(x, reverse=True), [[-0.0, 0.0, -0.0]],
     [0.0, 0.0, -0.0]),
    ("cummin_reverse", lambda x: lax.cummin(x, reverse=True), [[0.0, -0.0, 0.0]],
     [-0.0, -0.0, 0.0]),
    ("relu", jax.nn.relu, [[-0.0, -1.0, 0.0]], [0.0, 0.0, 0.0]),
    # nextafter(x, y) is y where x == y (NumPy's float16 one returned x)
    ("nextafter", lax.nextafter, [[0.0, -0.0, 1.0], [-0.0, 0.0, 1.0]], [-0.0, 0.0, 1.0]),
    # JAX's fmax/fmin: x1 where greater (less) or x2 is nan, else x2, so x2 on ties
    ("fmax", jnp.fmax, [[0.0, -0.0, np.nan, 1.0, -np.inf], [-0.0, 0.0, -0.0, np.nan, np.inf]],
     [-0.0, 0.0, -0.0, 1.0, np.inf]),
    ("fmin", jnp.fmin, [[0.0, -0.0, np.nan, 1.0, -np.inf], [-0.0, 0.0, -0.0, np.nan, np.inf]],
     [-0.0, 0.0, -0.0, 1.0, -np.inf]),
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("fn, args, want", [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_negative_zero_is_below_positive_zero(fn, args, want, jit, dtype):
    f = jax.jit(fn) if jit else fn
    got = np.asarray(f(*[jnp.asarray(a, dtype) for a in args]), np.float64).ravel()
    assert got.tolist() == want and np.signbit(got).tolist() == np.signbit(want).tolist()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "complex64"])
def test_eager_cumsum_of_negative_zeros_is_positive(dtype):
    # XLA's scan adds each prefix to the identity +0. (pyjax's jitted cumsum, a
    # Hillis-Steele scan of adds, still keeps a leading -0.)
    x = jnp.array([-0.0, -0.0, 1.0, -1.0, -0.0], dtype)
    for got, want in [(jnp.cumsum(x), [0.0, 0.0, 1.0, 0.0, 0.0]),
                      (lax.cumsum(x, reverse=True), [0.0, 0.0, 0.0, -1.0, 0.0])]:
        got = np.asarray(got).real.astype(np.float64)
        assert got.tolist() == want and np.signbit(got).tolist() == np.signbit(want).tolist()
