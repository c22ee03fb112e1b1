"""Convolution and window helpers built on conv_general_dilated and dot_general: the shape
arithmetic (conv_shape_tuple, conv_general_shape_tuple, conv_transpose_shape_tuple,
conv_general_permutations, reduce_window_shape_tuple), conv_general_dilated_patches,
conv_general_dilated_local (unshared weights) and batch_matmul. Imports the lax
families."""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax._src.core.avals import get_aval
from pyjax._src.lax import convolution as conv
from pyjax._src.lax import dot
from pyjax._src.lax import structural as st
from pyjax._src.lax.precision_ops import Precision, canonicalize_precision


def _ints(values, what):
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of integers, got {values!r}") from None


def _dilate(size, factor):
    return 0 if size == 0 else 1 + factor * (size - 1)


def _strided(padded, window, strides):
    return tuple(max(0, (p - w) // s + 1) if p >= w else 0
                 for p, w, s in zip(padded, window, strides))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution whose operands are in NC.../OI... order."""
    lhs_shape, rhs_shape = _ints(lhs_shape, "lhs_shape"), _ints(rhs_shape, "rhs_shape")
    strides = _ints(strides, "strides")
    if isinstance(pads, str):
        pads = conv.padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    pads = [tuple(p) for p in pads]
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(f"Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    if lhs_shape[0] % batch_group_count:
        raise ValueError(f"the batch size {lhs_shape[0]} is not a multiple of "
                         f"batch_group_count={batch_group_count}.")
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + _strided(
        padded, rhs_shape[2:], strides)


def conv_general_permutations(dimension_numbers):
    """For layout strings (lhs, rhs, out) such as ('NHWC', 'HWIO', 'NHWC'): the
    permutations taking each operand to N C spatial... (O I spatial... for the kernel),
    with the spatial dimensions in the kernel's order."""
    if len(dimension_numbers) != 3 or not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError(f"conv_general_permutations expects three layout strings, got "
                        f"{dimension_numbers!r}")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    roles = (("N", "C"), ("O", "I"), ("N", "C"))
    for spec, (a, c) in zip(dimension_numbers, roles):
        if spec.count(a) != 1 or spec.count(c) != 1:
            raise TypeError(f"convolution dimension_numbers[{dimension_numbers.index(spec)}] "
                            f"must contain the characters {a!r} and {c!r} exactly once, "
                            f"got {spec!r}.")
        if len(set(spec)) != len(spec):
            raise TypeError(f"convolution dimension_numbers {spec!r} repeats a character.")
    spatial = [set(s) - set(r) for s, r in zip(dimension_numbers, roles)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError(f"convolution dimension_numbers must have the same spatial "
                        f"characters in each spec, got {dimension_numbers!r}.")

    def perm(spec, role):
        dims = [spec.index(c) for c in rhs_spec if c not in "OI"]
        return (spec.index(role[0]), spec.index(role[1])) + tuple(dims)
    return tuple(perm(s, r) for s, r in zip(dimension_numbers, roles))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """The output shape of conv_general_dilated for layout strings dimension_numbers."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple([lhs_shape[i] for i in lhs_perm], [rhs_shape[i] for i in rhs_perm],
                           window_strides, padding)
    return tuple(out[i] for i in np.argsort(out_perm))


def _transpose_pads(kernel, stride, padding):
    kind = padding.upper()
    if kind == "SAME":
        total = kernel + stride - 2
        before = kernel - 1 if stride > kernel - 1 else -(-total // 2)
    elif kind == "VALID":
        total, before = kernel + stride - 2 + max(kernel - stride, 0), kernel - 1
    else:
        raise ValueError(f"Padding mode must be `SAME` or `VALID`, got {padding!r}.")
    return before, total - before


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of conv_transpose for layout strings dimension_numbers."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs = [lhs_shape[i] for i in lhs_perm]
    rhs = [rhs_shape[i] for i in rhs_perm]
    strides = _ints(window_strides, "window_strides")
    if isinstance(padding, str):
        padding = [_transpose_pads(k, s, padding) for k, s in zip(rhs[2:], strides)]
    space = [(n - 1) * s - k + 2 + lo + hi
             for n, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], strides, padding)]
    out = [lhs[0], rhs[0]] + space
    return tuple(out[i] for i in np.argsort(out_perm))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The output shape of reduce_window with explicit (low, high) padding pairs."""
    shape = _ints(operand_shape, "operand_shape")
    window = _ints(window_dimensions, "window_dimensions")
    if base_dilation is not None:
        shape = tuple(_dilate(d, f) for d, f in zip(shape, base_dilation))
    if window_dilation is not None:
        window = tuple(_dilate(d, f) for d, f in zip(window, window_dilation))
    if len(padding) != len(shape):
        raise TypeError(f"reduce_window_shape_tuple: padding {padding} needs one (low, high) "
                        f"pair per dimension of {shape}.")
    padded = [d + lo + hi for d, (lo, hi) in zip(shape, padding)]
    return _strided(padded, window, _ints(window_strides, "window_strides"))


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with a kernel of spatial shape `filter_shape` would see:
    each output feature is one (input channel, kernel position) pair, channel-major, so
    the result has C * prod(filter_shape) features in the out layout."""
    filter_shape = _ints(filter_shape, "filter_shape")
    aval = get_aval(lhs)
    dnums = conv.conv_dimension_numbers(aval.shape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dnums
    size = math.prod(filter_shape)
    channels = aval.shape[lhs_spec[1]]
    # One kernel per (channel, position): a one-hot kernel picks that position's value.
    eye = np.eye(size, dtype=aval.dtype)
    kernel = np.broadcast_to(eye, (channels, size, size)).reshape(
        (channels * size, 1) + filter_shape)
    order = [None] * kernel.ndim
    order[rhs_spec[0]], order[rhs_spec[1]] = 0, 1
    rest = iter(range(2, kernel.ndim))
    order = [o if o is not None else next(rest) for o in order]
    kernel = np.transpose(kernel, order)
    if precision is not None:
        precision = (canonicalize_precision(precision)[0], Precision.DEFAULT)
    return conv.conv_general_dilated(lhs, kernel, window_strides, padding, lhs_dilation,
                                     rhs_dilation, dnums, feature_group_count=channels,
                                     precision=precision,
                                     preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """A convolution whose kernel differs at every output position (unshared weights):
    rhs holds, per output position, an (out features, in features * prod(filter_shape))
    matrix, laid out by the rhs spec (its spatial dims are the output's)."""
    filter_shape = _ints(filter_shape, "filter_shape")
    pair = canonicalize_precision(precision) or (None, None)
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers,
                                           precision=pair[0])
    dnums = conv.conv_dimension_numbers(get_aval(lhs).shape, (1, 1) + filter_shape,
                                        dimension_numbers)
    _, rhs_spec, out_spec = dnums
    out_space = list(out_spec[2:])
    order = sorted(range(len(out_space)), key=lambda k: out_space[k])
    rhs_batch = tuple(rhs_spec[2 + k] for k in order)
    dims = (((out_spec[1],), (rhs_spec[1],)), (tuple(sorted(out_space)), rhs_batch))
    out = dot.dot_general(patches, rhs, dims, precision=None if pair[1] is None else
                          (pair[1], pair[1]))
    # dot_general gives (spatial..., N, O): put N and O where the out spec wants them.
    ndim = get_aval(out).ndim
    perm = [None] * ndim
    perm[out_spec[0]], perm[out_spec[1]] = ndim - 2, ndim - 1
    rest = iter(range(ndim - 2))
    return st.transpose(out, tuple(p if p is not None else next(rest) for p in perm))


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over leading batch dimensions: operands of equal rank >= 2."""
    lhs_ndim, rhs_ndim = get_aval(lhs).ndim, get_aval(rhs).ndim
    if min(lhs_ndim, rhs_ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs_ndim}, "
                         f"{rhs_ndim}")
    if lhs_ndim != rhs_ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lhs_ndim}, "
                         f"{rhs_ndim}")
    batch = tuple(range(lhs_ndim - 2))
    return dot.dot_general(lhs, rhs, (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch)),
                           precision=precision)


__all__ = ["conv_shape_tuple", "conv_general_permutations", "conv_general_shape_tuple",
           "conv_transpose_shape_tuple", "reduce_window_shape_tuple",
           "conv_general_dilated_patches", "conv_general_dilated_local", "batch_matmul"]
