"""linspace's step and histogram2d's bins (values observed on JAX 0.10.2)."""
import numpy as np
import pytest

import pyjax.numpy as jnp


@pytest.mark.parametrize("num,endpoint,step_shape", [
    (0, True, ()), (0, False, ()), (1, True, ()), (1, False, (2, 2)), (5, True, (2, 2))])
def test_linspace_step_shape(num, endpoint, step_shape):
    out, step = jnp.linspace(np.ones((2, 2)), np.full((2,), 3.0), num, endpoint=endpoint,
                             retstep=True, axis=-1)
    assert out.shape == (2, 2, num) and np.shape(step) == step_shape
    if num < 2 and endpoint:
        assert np.isnan(step)


def test_histogram2d_bins_of_unequal_lengths():
    x, y = np.array([0, 1, 3, 2, 4]), np.array([1, 2, 5, 0, 3])
    bins = [np.array([0, 1, 3, 5]), np.array([0, 2, 3, 4, 6])]
    for range_ in [None, [(-1, 1), None]]:
        counts, x_edges, y_edges = jnp.histogram2d(x, y, bins=bins, range=range_)
        assert counts.tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1]]
        assert x_edges.tolist() == [0, 1, 3, 5] and y_edges.tolist() == [0, 2, 3, 4, 6]


def test_trapezoid_with_array_spacing():
    y = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    assert jnp.trapezoid(y, dx=np.arange(1, 6, dtype=np.float32), axis=1).tolist() == [
        [22.5, 51.0, 85.5, 126.0, 172.5], [82.5, 171.0, 265.5, 366.0, 472.5],
        [142.5, 291.0, 445.5, 606.0, 772.5]]
    # spacing that varies along the integration axis, laid out like y
    assert jnp.trapezoid(y, dx=np.ones((2, 4, 5), np.float32), axis=0).tolist()[0] == \
        [40.0, 42.0, 44.0, 46.0, 48.0]
    assert jnp.trapezoid(y, dx=np.full((3, 3, 5), 0.5, np.float32), axis=1).tolist()[0] == \
        [11.25, 12.75, 14.25, 15.75, 17.25]
