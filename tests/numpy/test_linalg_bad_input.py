"""Bad input to jnp.linalg and lax.linalg: wrong shapes and dtypes raise a named exception
whose message names the problem (see harness.assert_named_error); NaN and inf input gives
NaN results, never a hang, eagerly and under jit on both executors."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import assert_named_error, bad_input_case as case
from pyjax import lax

x = jnp.ones((2, 3))
xi = jnp.arange(6).reshape(2, 3)

CASES = [
    case("inv_not_square", ValueError, "square", lambda: jnp.linalg.inv(x)),
    case("inv_vector", ValueError, "at least 2 dimensions", lambda: jnp.linalg.inv(jnp.ones(3))),
    case("solve_mismatch", ValueError, "does not match",
         lambda: jnp.linalg.solve(jnp.eye(3), jnp.ones(4))),
    case("det_not_square", ValueError, "square", lambda: jnp.linalg.det(x)),
    case("eigh_not_square", ValueError, "square", lambda: jnp.linalg.eigh(x)),
    case("cholesky_not_square", ValueError, "square", lambda: jnp.linalg.cholesky(x)),
    case("lax_cholesky_vector", ValueError, "rank >= 2",
         lambda: lax.linalg.cholesky(jnp.ones(3))),
    case("lax_eigh_not_square", ValueError, "square matrices", lambda: lax.linalg.eigh(x)),
    case("lax_svd_int", TypeError, "float32, float64", lambda: lax.linalg.svd(xi)),
    case("norm_bad_ord", ValueError, "norm order", lambda: jnp.linalg.norm(x, ord="foo")),
    case("matrix_power_float", TypeError, "exponent must be an integer",
         lambda: jnp.linalg.matrix_power(jnp.eye(3), 1.5)),
    case("qr_mode", ValueError, "mode 'foo'", lambda: jnp.linalg.qr(x, mode="foo")),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)


LINALG = {
    "inv": jnp.linalg.inv, "det": jnp.linalg.det, "eigh": jnp.linalg.eigh,
    "eigvals": jnp.linalg.eigvals, "svd": jnp.linalg.svd, "qr": jnp.linalg.qr,
    "cholesky": jnp.linalg.cholesky, "pinv": jnp.linalg.pinv, "slogdet": jnp.linalg.slogdet,
    "solve": lambda a: jnp.linalg.solve(a, jnp.ones(3)),
    "lstsq": lambda a: jnp.linalg.lstsq(a, jnp.ones(3)),
    "matrix_power": lambda a: jnp.linalg.matrix_power(a, -2),
    "norm2": lambda a: jnp.linalg.norm(a, 2),
}


@pytest.mark.parametrize("name", sorted(LINALG))
@pytest.mark.parametrize("fill", [np.nan, np.inf])
def test_linalg_of_non_finite_input_returns_nan_not_hang(executor, name, fill):
    a = jnp.full((3, 3), fill, jnp.float32)
    for f in (LINALG[name], jax.jit(LINALG[name])):
        leaves = jax.tree_util.tree_leaves(f(a))
        assert leaves and all(np.asarray(v).dtype != object for v in leaves)
