"""jax.image.resize and scale_and_translate; expected values observed from JAX 0.10.2."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

VECTOR = jnp.array([0., 1., 4., 9., 16., 25.])


@pytest.mark.parametrize("method, antialias, down, up", [
    ("nearest", True, [1, 9, 25], [0, 1, 1, 4, 9, 9, 16, 25, 25]),
    ("linear", True, [1, 7, 18.85714],
     [0, 0.5, 1.5, 3.5, 6.5, 10.16667, 14.83333, 20.5, 25]),
    ("linear", False, [0.5, 6.5, 20.5], [0, 0.5, 1.5, 3.5, 6.5, 10.16667, 14.83333, 20.5, 25]),
    ("cubic", True, [0.4100418, 6.530534, 19.97071],
     [-0.06578932, 0.2941177, 1.361111, 3.361113, 6.25, 10.02778, 14.69445, 21.17647,
      25.59211]),
    ("cubic", False, [0.2941177, 6.25, 21.17647],
     [-0.06578932, 0.2941177, 1.361111, 3.361113, 6.25, 10.02778, 14.69445, 21.17647,
      25.59211]),
    ("lanczos3", True, [0.2345359, 6.25, 20.38918],
     [-0.006579459, 0.2591688, 1.325867, 3.437241, 6.25, 9.823955, 14.29776, 21.54279,
      25.62937]),
    ("lanczos3", False, [0.2591688, 6.25, 21.54279],
     [-0.006579459, 0.2591688, 1.325867, 3.437241, 6.25, 9.823955, 14.29776, 21.54279,
      25.62937]),
    ("lanczos5", True, [0.3572562, 6.114663, 20.47327],
     [-0.005052939, 0.2532383, 1.319297, 3.232811, 6.73239, 9.600035, 14.07637, 21.6117,
      25.67669]),
    ("lanczos5", False, [0.2532383, 6.73239, 21.6117],
     [-0.005052939, 0.2532383, 1.319297, 3.232811, 6.73239, 9.600035, 14.07637, 21.6117,
      25.67669]),
    ("cubic-pytorch", True, [0.4100418, 6.530534, 19.97071],
     [-0.06578932, 0.2941177, 1.361111, 3.361113, 6.25, 10.02778, 14.69445, 21.17647,
      25.59211]),
    ("cubic-pytorch", False, [0.21875, 6.125, 21.15625],
     [-0.08680564, 0.21875, 1.430554, 3.152777, 6.125, 10.2824, 14.30092, 21.15625,
      25.78125]),
    ("area", True, [0.5, 6.5, 20.5], [0, 0.5, 1, 4, 6.5, 9, 16, 20.5, 25]),
])
def test_resize_down_and_up_matches_jax(method, antialias, down, up):
    np.testing.assert_allclose(jax.image.resize(VECTOR, (3,), method, antialias=antialias),
                               down, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jax.image.resize(VECTOR, (9,), method, antialias=antialias),
                               up, rtol=1e-5, atol=1e-5)


def test_method_names_and_enum():
    ResizeMethod = jax.image.ResizeMethod
    assert ResizeMethod.from_string("bilinear") is ResizeMethod.LINEAR
    assert ResizeMethod.from_string("tricubic") is ResizeMethod.CUBIC
    assert ResizeMethod.from_string("bicubic-pytorch") is ResizeMethod.CUBIC_PYTORCH
    with pytest.raises(ValueError, match='Unknown resize method "box"'):
        ResizeMethod.from_string("box")
    np.testing.assert_allclose(jax.image.resize(VECTOR, (3,), ResizeMethod.LANCZOS3),
                               jax.image.resize(VECTOR, (3,), "lanczos3"))


IMAGE = jnp.arange(20.).reshape(4, 5) ** 1.5
SCALE, TRANSLATION = jnp.array([0.7, 1.3]), jnp.array([0.4, -0.6])


@pytest.mark.parametrize("method, expected", [
    ("linear", [0.3461539, 1.210972, 2.617455, 4.376555, 6.382396, 8, 13.89102, 16.70464,
                19.71505, 22.90791, 26.24353, 28.81309, 46.722, 50.88639, 55.18606, 59.61602,
                64.1504, 67.60114]),
    ("lanczos3", [-0.919143, -0.2526774, 0.9692376, 2.317687, 4.65268, 6.062689, 13.14687,
                  16.581, 19.62879, 22.49144, 26.68646, 29.09863, 49.19184, 54.29139,
                  58.66795, 62.70445, 68.43992, 71.70283]),
    ("cubic-pytorch", [-1.094914, -0.3326173, 0.7965403, 2.354045, 4.584395, 6.144258,
                       13.75658, 17.07327, 19.82577, 23.0509, 27.02853, 29.64588, 48.25079,
                       53.15138, 57.09435, 61.6126, 67.03458, 70.55367]),
    ("area", [0.3, 1, 2.828427, 4.485835, 6.317692, 8, 15.21089, 17.68443, 21.56087, 24.48153,
              27.5106, 30.17664, 46.47356, 50.24144, 55.83101, 59.8832, 64.01237, 67.60114]),
])
def test_scale_and_translate_matches_jax(method, expected):
    out = jax.image.scale_and_translate(IMAGE, (3, 6), (0, 1), SCALE, TRANSLATION, method,
                                        antialias=False)
    np.testing.assert_allclose(out.ravel(), expected, rtol=1e-5, atol=1e-5)


def test_gradients_in_image_scale_and_translation():
    def loss(scale, translation):
        out = jax.image.scale_and_translate(IMAGE, (3, 6), (0, 1), scale, translation, "cubic")
        return jnp.sum(out ** 2)
    d_scale, d_translation = jax.jit(jax.grad(loss, argnums=(0, 1)))(SCALE, TRANSLATION)
    np.testing.assert_allclose(d_scale, [-72483.64, -9764.57], rtol=1e-4)
    np.testing.assert_allclose(d_translation, [-28711.3, -3477.997], rtol=1e-4)

    weights = jnp.arange(6.).reshape(2, 3)
    d_image = jax.grad(lambda x: jnp.sum(jax.image.resize(x, (2, 3), "lanczos3") * weights))(
        IMAGE)
    np.testing.assert_allclose(d_image.ravel(), [
        -0.1250985, -0.08648952, 0.1094904, 0.3373509, 0.3257767, 0.2060397, 0.3646593,
        0.6017762, 1.014113, 0.8969188, 0.7264044, 1.01515, 1.1696, 1.664604, 1.417283,
        0.7336214, 0.9869677, 1.046528, 1.410808, 1.184496], rtol=1e-4, atol=1e-6)


def test_jit_and_vmap_agree_with_eager():
    batch = jnp.stack([IMAGE, IMAGE[::-1]])
    eager = jnp.stack([jax.image.resize(im, (3, 7), "lanczos5") for im in batch])
    batched = jax.jit(jax.vmap(lambda im: jax.image.resize(im, (3, 7), "lanczos5")))(batch)
    np.testing.assert_allclose(batched, eager, rtol=1e-5, atol=1e-5)
    # resizing the batch and channel dimensions to themselves leaves them alone
    np.testing.assert_allclose(jax.image.resize(batch, (2, 3, 7), "lanczos5"), eager,
                               rtol=1e-5, atol=1e-5)

    scales = jnp.array([[0.7, 1.3], [1.5, 0.5]])
    per_scale = jax.vmap(lambda s: jax.image.scale_and_translate(
        IMAGE, (3, 6), (0, 1), s, TRANSLATION, "linear"))(scales)
    for s, out in zip(scales, per_scale):
        np.testing.assert_allclose(out, jax.image.scale_and_translate(
            IMAGE, (3, 6), (-2, -1), s, TRANSLATION, "linear"), rtol=1e-5, atol=1e-5)


def test_dtypes():
    ints = jnp.arange(12, dtype=jnp.uint8).reshape(3, 4)
    nearest = jax.image.resize(ints, (2, 6), "nearest")
    assert nearest.dtype == jnp.uint8
    assert nearest.tolist() == [[0, 1, 1, 2, 3, 3], [8, 9, 9, 10, 11, 11]]
    linear = jax.image.resize(ints, (2, 6), "linear")
    assert linear.dtype == jnp.float32
    np.testing.assert_allclose(linear.ravel(), [1.5, 2, 2.666667, 3.333334, 4, 4.5, 6.5, 7,
                                                7.666667, 8.333334, 9, 9.5], rtol=1e-5)
    assert jax.image.resize(IMAGE.astype(jnp.float16), (2, 2), "cubic").dtype == jnp.float16


def test_bad_arguments():
    with pytest.raises(ValueError, match="shape must have length"):
        jax.image.resize(IMAGE, (4,), "linear")
    with pytest.raises(ValueError, match="Nearest neighbor"):
        jax.image.scale_and_translate(IMAGE, (4, 5), (0,), jnp.ones(1), jnp.zeros(1),
                                      "nearest")
    with pytest.raises(ValueError, match="one entry per spatial dimension"):
        jax.image.scale_and_translate(IMAGE, (4, 5), (0, 1), jnp.ones(1), jnp.zeros(2),
                                      "linear")


@pytest.mark.parametrize("method", ["nearest", "bicubic"])
def test_resize_shape_must_be_integers(method):
    x = jnp.ones((3, 4))
    # as JAX 0.10.2: integer arrays are shapes, fractional or text sizes a TypeError
    assert jax.image.resize(x, jnp.array((10, 17)), method).shape == (10, 17)
    assert jax.image.resize(x, (-1, 3), method).shape == (0, 3)
    for bad in ([10.5, 17], (10, 17.0), "ab", jnp.array([5., 4.])):
        with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete "
                                            "values of integer type"):
            jax.image.resize(x, bad, method)
    with pytest.raises(TypeError, match="Shapes must be 1D sequences"):
        jax.image.scale_and_translate(x, [10.5, 4], (0,), jnp.ones(1), jnp.zeros(1),
                                      "linear")
