"""Eager loops: a short scan or while loop runs on the NumPy executor; a long one
(numpyro's un-jitted `fori_loop(0, 10000, svi.update, ...)`) goes to XLA as in JAX, so it
takes a compile instead of one NumPy call per equation per iteration. Values are JAX
0.10.2's."""
import numpy as np
import pytest

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax._src.backends import dispatch

pytestmark = pytest.mark.skipif(dispatch.xla_backend() is None, reason="needs XLA")

X = np.array([0.5, 1.0, 2.0], np.float32)


def _body(i, x):
    return x * 0.999 + jnp.sin(x) * 1e-3


def _while_body(carry):
    i, x = carry
    return i + 1, _body(i, x)


def _lowerings(fun):
    before = dispatch.stats["lowerings"]
    out = fun()
    return out, dispatch.stats["lowerings"] - before


def test_long_eager_fori_loop_compiles_and_matches_jax():
    out, lowered = _lowerings(lambda: lax.fori_loop(0, 3000, _body, jnp.asarray(X)))
    assert lowered == 1
    np.testing.assert_allclose(out, [0.4477246105670929, 0.7132667303085327,
                                     0.9249392151832581], rtol=1e-6)


def test_long_eager_scan_compiles_and_matches_jax():
    xs = jnp.linspace(0, 1, 4000, dtype=jnp.float32)
    (c, ys), lowered = _lowerings(
        lambda: lax.scan(lambda c, t: (c + jnp.cos(t), c * t), jnp.float32(0), xs))
    assert lowered == 1 and ys.shape == (4000,)
    np.testing.assert_allclose([float(c), float(ys.sum())], [3365.811767578125, 4818208.0],
                               rtol=1e-6)


def test_long_eager_while_loop_goes_on_compiled_from_its_carry():
    (i, x), lowered = _lowerings(
        lambda: lax.while_loop(lambda c: c[0] < 3000, _while_body, (0, jnp.asarray(X))))
    assert lowered == 1 and int(i) == 3000
    np.testing.assert_allclose(x, [0.4477246105670929, 0.7132667303085327,
                                   0.9249392151832581], rtol=1e-6)


def test_short_eager_loops_stay_on_numpy():
    (out, (i, _)), lowered = _lowerings(lambda: (
        lax.fori_loop(0, 5, _body, jnp.asarray(X)),
        lax.while_loop(lambda c: c[0] < 5, _while_body, (0, jnp.asarray(X)))))
    assert lowered == 0 and int(i) == 5
    np.testing.assert_allclose(out, X * 0.999 ** 5, rtol=1e-2)


def test_disable_jit_keeps_long_loops_in_python():
    with config.disable_jit_flag(True):
        out, lowered = _lowerings(lambda: lax.fori_loop(0, 3000, _body, jnp.asarray(X)))
    assert lowered == 0   # NumPy's rounding over 3000 steps: a few ulps from XLA's
    np.testing.assert_allclose(out, [0.4477246105670929, 0.7132667303085327,
                                     0.9249392151832581], rtol=1e-5)
