"""jax.scipy.interpolate.RegularGridInterpolator against values observed from JAX 0.10.2."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.scipy.interpolate import RegularGridInterpolator

POINTS = (jnp.array([1, 2, 3.]), jnp.array([4, 5, 6.]))
VALUES = jnp.array([[10, 20, 30], [40, 50, 60], [70, 80, 90]])


def test_linear_and_nearest():
    interp = RegularGridInterpolator(POINTS, VALUES)
    xi = jnp.array([[1.5, 4.5], [2.2, 5.8], [0., 5.]])
    np.testing.assert_allclose(interp(xi), [30., 64., np.nan], rtol=1e-6)
    assert interp(xi).dtype == np.float32
    nearest = RegularGridInterpolator(POINTS, VALUES, method="nearest")
    np.testing.assert_array_equal(nearest(xi[:2]), [10., 60.])
    np.testing.assert_array_equal(interp(xi[:2], method="nearest"), [10., 60.])


def test_fill_value_none_extrapolates():
    interp = RegularGridInterpolator(POINTS, VALUES, fill_value=None)
    np.testing.assert_allclose(interp(jnp.array([[0., 5.], [3.5, 6.5]])), [-10., 110.])


def test_trailing_value_axes_and_coordinate_tuples():
    interp = RegularGridInterpolator(POINTS, jnp.arange(18.).reshape(3, 3, 2))
    out = interp((jnp.array([1.5, 2.]), jnp.array([4.25, 4.5])))
    np.testing.assert_allclose(out, [[3.5, 4.5], [7., 8.]])


def test_is_a_pytree_under_jit_and_grad():
    interp = RegularGridInterpolator(POINTS, VALUES)
    out = jax.jit(lambda f, x: f(x))(interp, jnp.array([[1.5, 4.5]]))
    np.testing.assert_allclose(out, [30.])
    grad = jax.grad(lambda x: interp(x).sum())(jnp.array([[1.5, 4.5]]))
    np.testing.assert_allclose(grad, [[30., 10.]])


@pytest.mark.parametrize("make, error, message", [
    (lambda: RegularGridInterpolator(POINTS, VALUES, method="cubic"), ValueError,
     "method 'cubic' is not defined"),
    (lambda: RegularGridInterpolator(POINTS, VALUES, bounds_error=True),
     NotImplementedError, "`bounds_error` takes no effect under JIT"),
    (lambda: RegularGridInterpolator(POINTS * 2, VALUES), ValueError,
     "there are 4 point arrays, but values has 2 dimensions"),
    (lambda: RegularGridInterpolator(POINTS, VALUES, fill_value=1j), ValueError,
     "fill_value must be either 'None' or of a type compatible with values"),
    (lambda: RegularGridInterpolator(POINTS, VALUES)(jnp.ones((2, 3))), ValueError,
     "the requested sample points xi have dimension 3, but this "
     "RegularGridInterpolator has dimension 2"),
])
def test_bad_input(make, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(")):
        make()
