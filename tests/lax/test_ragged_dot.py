"""lax.ragged_dot / ragged_dot_general in their three modes, with JAX 0.10.2's values."""
import numpy as np
import pytest

import pyjax as jax
from pyjax import lax

D = lax.RaggedDotDimensionNumbers


def _inputs():
    r = np.random.default_rng(0)
    lhs = r.normal(size=(11, 5)).astype("float32")
    rhs = r.normal(size=(3, 5, 7)).astype("float32")
    l3 = r.normal(size=(2, 11, 5)).astype("float32")
    r3 = r.normal(size=(2, 5, 7)).astype("float32")
    l4 = r.normal(size=(2, 6, 5)).astype("float32")
    r4 = r.normal(size=(2, 3, 5, 4)).astype("float32")
    return lhs, rhs, l3, r3, l4, r4


def test_ragged_noncontracting():
    lhs, rhs, *_ = _inputs()
    gs = np.array([4, 2, 3], "int32")
    out = lax.ragged_dot(lhs, rhs, gs)
    assert out.shape == (11, 7)
    np.testing.assert_allclose(np.asarray(out)[[0, 5, 8, 10], :3], [
        [-1.0762, 0.9354, 0.1494], [-0.2606, 2.6165, 1.7395], [1.5447, 4.1624, -0.7969],
        [0.0, 0.0, 0.0]], atol=2e-4)
    grad = jax.grad(lambda a: lax.ragged_dot(a, rhs, gs).sum())(lhs)
    np.testing.assert_allclose(np.asarray(grad)[[0, 6], :2],
                               [[-1.931, 4.851], [-4.3067, 2.8962]], atol=2e-4)
    np.testing.assert_allclose(jax.jit(lax.ragged_dot)(lhs, rhs, gs), out, atol=1e-5)


def test_ragged_contracting_and_batched_group_sizes():
    lhs, rhs, l3, r3, *_ = _inputs()
    out = lax.ragged_dot_general(lhs, rhs[0], np.array([2, 3, 0], "int32"),
                                 D((([1], [0]), ([], [])), [1], []))
    assert out.shape == (3, 11, 7)
    np.testing.assert_allclose(np.asarray(out)[:, 0, :3], [
        [-0.1801, 0.1196, 0.0441], [-0.8961, 0.8158, 0.1053], [0.0, 0.0, 0.0]], atol=2e-4)
    out = lax.ragged_dot_general(l3, r3, np.array([[1, 4, 0], [2, 2, 1]], "int32"),
                                 D((([2], [1]), ([0], [0])), [2], []))
    assert out.shape == (3, 2, 11, 7)
    np.testing.assert_allclose(np.asarray(out)[:, :, 0, 0], [
        [1.4139, -0.0233], [-0.1742, -0.7418], [0.0, -0.705]], atol=2e-4)


def test_vmap_of_ragged_dot():
    *_, l4, r4 = _inputs()
    out = jax.vmap(lax.ragged_dot)(l4, r4, np.array([[1, 2, 3], [3, 0, 2]], "int32"))
    assert out.shape == (2, 6, 4)
    np.testing.assert_allclose(np.asarray(out)[:, :, 0], [
        [-0.4848, 2.3786, 3.0738, -0.4837, 2.0725, -2.3266],
        [-0.9421, 1.0747, 0.3801, -1.0242, 1.6258, 0.0]], atol=2e-4)


@pytest.mark.parametrize("dnums,gs_shape,message", [
    (D((([1], [1]), ([], [])), [0, 1], [0]), (3,), "exactly one lhs ragged dimension"),
    (D((([1], [1]), ([], [])), [2], [0]), (3,), "nonnegative and less than"),
    (D((([1], [1]), ([], [])), [0], [0]), (2,), "rhs group dimension size to be 2, got 3"),
    (D((([1], [1]), ([], [])), [0], [0]), (2, 3), r"group_sizes to have shape \(3,\)"),
    (D((([1], [1]), ([], [])), [1], [0]), (3,), "zero group dimensions in the rhs"),
])
def test_shape_errors(dnums, gs_shape, message):
    lhs, rhs, *_ = _inputs()
    with pytest.raises(TypeError, match=message):
        lax.ragged_dot_general(lhs, rhs, np.ones(gs_shape, "int32"), dnums)
