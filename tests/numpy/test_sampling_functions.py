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
