"""jax.image: resizing by separable resampling kernels.

Each resized axis gets an (input size, output size) weight matrix: output pixel j samples
the input at position sample_f(j) (pixel centres at integers) and weighs input pixel i by
kernel(|sample_f(j) - i|). When antialiasing a downscale the kernel is stretched by the
scale factor, so that every input pixel contributes. The image is then contracted with all
the weight matrices in one einsum, which makes the result differentiable in the image, the
scale and the translation, and usable under jit and vmap."""
from __future__ import annotations

import enum

import numpy as np

from pyjax._src import dtypes
from pyjax._src.lax.precision_ops import Precision
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy.indexing import take
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.einsum import einsum
from pyjax._src.numpy.util import promote_dtypes_inexact
from pyjax._src.util import canonicalize_axis, canonicalize_shape


class ResizeMethod(enum.Enum):
    """How resize and scale_and_translate interpolate (see resize for the string names)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str):
        try:
            return _METHOD_NAMES[s]
        except KeyError:
            raise ValueError(f'Unknown resize method "{s}"') from None


_METHOD_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


# --- kernels: functions of the (non-negative) distance x, in input pixels ------------------

def _triangle(x):
    return uf.maximum(0, 1 - x)


def _keys_cubic(x, a):
    """Keys' cubic convolution kernel with parameter a (-0.5 here, -0.75 in PyTorch)."""
    inner = ((a + 2) * x - (a + 3)) * x * x + 1            # |x| < 1
    outer = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a      # 1 <= |x| < 2
    return lnp.where(x >= 2, 0., lnp.where(x >= 1, outer, inner))


def _lanczos(radius):
    def kernel(x):
        y = radius * uf.sin(np.pi * x) * uf.sin(np.pi * x / radius)
        # the limit at 0 is 1; the guarded divisor keeps the gradient finite there
        out = lnp.where(x > 1e-3, y / lnp.where(x != 0, np.pi ** 2 * x ** 2, 1), 1)
        return lnp.where(x > radius, 0., out)
    return kernel


_KERNELS = {
    ResizeMethod.LINEAR: _triangle,
    ResizeMethod.LANCZOS3: _lanczos(3.),
    ResizeMethod.LANCZOS5: _lanczos(5.),
    ResizeMethod.CUBIC: lambda x: _keys_cubic(x, -0.5),
    # with antialiasing, PyTorch's antialiased bicubic is Keys' a = -0.5 as well
    ResizeMethod.CUBIC_PYTORCH: lambda x: _keys_cubic(x, -0.5),
}


def _sample_positions(output_size, scale, translation):
    """Input position (pixel centres at integers) sampled by each output pixel."""
    inv_scale = 1. / scale
    return (lnp.arange(output_size) + 0.5) * inv_scale - translation * inv_scale - 0.5


def _normalize_columns(weights):
    """Scale each output pixel's weights to sum to 1 (all zero if they nearly cancel)."""
    total = red.sum(weights, axis=0, keepdims=True)
    tiny = 1000. * float(np.finfo(np.float32).eps)
    return lnp.where(uf.abs(total) > tiny, weights / lnp.where(total != 0, total, 1), 0)


def _weight_matrix(input_size, output_size, scale, translation, method, antialias):
    """The (input_size, output_size) matrix of resampling weights for one axis."""
    sample_f = _sample_positions(output_size, scale, translation)
    if method is ResizeMethod.CUBIC_PYTORCH and not antialias:
        return _edge_padded_cubic_weights(input_size, sample_f)
    positions = lnp.arange(input_size)[:, None]
    if method is ResizeMethod.AREA:
        # overlap of the output pixel's footprint with each input pixel, per unit of footprint
        half_width = 0.5 / scale
        overlap = (uf.minimum(sample_f + half_width, positions + 0.5)
                   - uf.maximum(sample_f - half_width, positions - 0.5))
        weights = uf.maximum(overlap, 0) * scale
    else:
        kernel_scale = uf.maximum(1. / scale, 1.) if antialias else 1.
        weights = _KERNELS[method](uf.abs(sample_f - positions) / kernel_scale)
    # output pixels that sample outside the input are zero
    inside = (sample_f >= -0.5) & (sample_f <= input_size - 0.5)
    return lnp.where(inside[None, :], _normalize_columns(weights), 0)


def _edge_padded_cubic_weights(input_size, sample_f):
    """PyTorch's bicubic without antialiasing: Keys' kernel with a = -0.75 over the input
    padded by 2 pixels on each side, the padding reading the edge pixel."""
    padded = lnp.arange(-2, input_size + 2)[:, None]
    weights = _normalize_columns(_keys_cubic(uf.abs(sample_f - padded), -0.75))
    positions = lnp.arange(input_size)[:, None]
    before, after = weights[0] + weights[1], weights[-2] + weights[-1]
    return (weights[2:-2] + lnp.where(positions == 0, before, 0.)
            + lnp.where(positions == input_size - 1, after, 0.))


def _scale_and_translate(x, output_shape, spatial_dims, scale, translation, method, antialias,
                         precision):
    if not spatial_dims:
        return x
    ndim = x.ndim
    out_indices = list(range(ndim))
    operands = []
    for i, d in enumerate(spatial_dims):
        weights = _weight_matrix(x.shape[d], output_shape[d], scale[i], translation[i],
                                 method, antialias)
        operands += [weights.astype(x.dtype), [d, ndim + i]]
        out_indices[d] = ndim + i
    return einsum(x, list(range(ndim)), *operands, out_indices, precision=precision)


def _resize_nearest(x, shape):
    for d in range(x.ndim):
        m, n = x.shape[d], shape[d]
        if m == n:
            continue
        # centre of output pixel j in input coordinates, rounded down
        centres = (lnp.arange(n, dtype=np.float32) + 0.5) * m / n
        x = take(x, uf.floor(centres).astype(np.int32), axis=d)
    return x


def _method(method):
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def _static_shape(shape, where):
    """The output shape as Python ints; a negative size gives an empty dimension, as in
    JAX."""
    return tuple(max(d, 0) for d in canonicalize_shape(shape, where, nonnegative=False))


def _check_shape(image, shape):
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {image.shape}")


def resize(image, shape, method, antialias=True, precision=Precision.HIGHEST):
    """Resizes `image` to `shape` (all of its dimensions: leave batch and channel entries
    unchanged) by sampling, interpolating or area-averaging.

    method is a ResizeMethod or one of "nearest"; "linear" ("bilinear", "trilinear",
    "triangle"); "cubic" ("bicubic", "tricubic"); "cubic-pytorch" ("bicubic-pytorch");
    "lanczos3"; "lanczos5"; "area". When downsampling with antialias=True the kernel is
    widened so that every input pixel contributes (not for "nearest"). Nearest keeps the
    dtype; the other methods return a floating-point image."""
    shape = _static_shape(shape, "jax.image.resize")
    image = lnp.asarray(image)
    _check_shape(image, shape)
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"method must be a ResizeMethod or a string, got {method!r}")
    if not dtypes.issubdtype(image.dtype, np.inexact):
        image = image.astype(lnp.result_type(image, np.float32))
    spatial_dims = tuple(d for d in range(len(shape)) if image.shape[d] != shape[d])
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
    return _scale_and_translate(image, shape, spatial_dims, scale, [0.] * len(spatial_dims),
                                method, antialias, precision)


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias=True, precision=Precision.HIGHEST):
    """Resamples `image` to `shape` along spatial_dims: output pixel centre y (in output
    coordinates) samples the input at (y - translation) / scale, per spatial dimension.
    scale and translation are arrays with one entry per spatial dimension; methods as for
    resize except "nearest"."""
    shape = _static_shape(shape, "jax.image.scale_and_translate")
    image = lnp.asarray(image)
    _check_shape(image, shape)
    spatial_dims = tuple(canonicalize_axis(d, image.ndim) for d in spatial_dims)
    scale, translation = lnp.asarray(scale), lnp.asarray(translation)
    for name, value in (("scale", scale), ("translation", translation)):
        if value.shape != (len(spatial_dims),):
            raise ValueError(f"scale_and_translate: {name} must have one entry per spatial "
                             f"dimension ({len(spatial_dims)}), got shape {value.shape}")
    method = _method(method)
    if method is ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    image, = promote_dtypes_inexact(image)
    scale, translation = promote_dtypes_inexact(scale, translation)
    return _scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                                antialias, precision)
