"""lax.scaled_dot: (lhs * lhs_scale) @ (rhs * rhs_scale) as a dot_general, with block
scales (one per `subchannel` of the contracting dimensions, e.g. float8_e8m0fnu scales of
float8 operands), computed in bfloat16 as JAX's composite "xla.scaled_dot" decomposes it.
Imports core, the lax families and dtypes."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import dot
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import structural as st
from pyjax._src.lax.program import composite


def _check_scale(side, shape, scale_shape, contracting):
    for i, size in enumerate(shape):
        if i in contracting:
            if size % scale_shape[i]:
                raise TypeError(f"{side} contracting dim {i} of size {size} must be "
                                f"divisible by its scale's dim size {scale_shape[i]}.")
            if size // scale_shape[i] < 2:
                raise TypeError(f"The ratio of {side} contracting dim {i} to its scale's "
                                f"dim size ({size // scale_shape[i]}) must be at least 2.")
        elif scale_shape[i] != size:
            raise TypeError(f"{side} dim {i} of size {size} does not match scale dim size "
                            f"{scale_shape[i]}.")


def _check(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    ranks = {lhs.ndim, rhs.ndim, lhs_scale.ndim, rhs_scale.ndim}
    if len(ranks) != 1:
        raise TypeError(f"All input tensors must have the same rank. Got lhs rank: "
                        f"{lhs.ndim} rhs rank: {rhs.ndim} lhs_scale rank: {lhs_scale.ndim} "
                        f"rhs_scale rank: {rhs_scale.ndim}.")
    if len(lb) != len(rb):
        raise TypeError("LHS and RHS must have the same number of batch dimensions, got "
                        f"{len(lb)} and {len(rb)}.")
    if len(lc) != len(rc):
        raise TypeError("LHS and RHS must have the same number of contracting dimensions, "
                        f"got {len(lc)} and {len(rc)}.")
    for i, j in zip(lb, rb):
        if len({lhs.shape[i], rhs.shape[j], lhs_scale.shape[i], rhs_scale.shape[j]}) != 1:
            raise TypeError("All input tensors must have the same batch dimension size for "
                            f"batch dims ({i}, {j}).")
    for i, j in zip(lc, rc):
        if lhs.shape[i] != rhs.shape[j]:
            raise TypeError(f"LHS contracting dim {i} of size {lhs.shape[i]} does not match "
                            f"RHS contracting dim {j} of size {rhs.shape[j]}.")
    _check_scale("LHS", lhs.shape, lhs_scale.shape, lc)
    _check_scale("RHS", rhs.shape, rhs_scale.shape, rc)


def _spread(scale, shape, contracting):
    """scale repeated along each contracting dimension to the operand's size."""
    for i in contracting:
        n, k = get_aval(scale).shape[i], shape[i]
        if n != k:
            s_shape = get_aval(scale).shape
            wide = s_shape[:i + 1] + (k // n,) + s_shape[i + 1:]
            scale = st.broadcast_in_dim(scale, wide, tuple(d for d in range(len(wide))
                                                           if d != i + 1))
            scale = st.reshape(scale, s_shape[:i] + (k,) + s_shape[i + 1:])
    return scale


def _decomposition(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers,
                   preferred_element_type):
    (lc, rc), _ = dimension_numbers
    bf16 = dtypes.bfloat16

    def scaled(x, scale, contracting):
        scale = _spread(scale, get_aval(x).shape, contracting)
        return ew.mul(ew.convert_element_type(x, bf16), ew.convert_element_type(scale, bf16))
    return dot.dot_general(scaled(lhs, lhs_scale, lc), scaled(rhs, rhs_scale, rc),
                           dimension_numbers,
                           preferred_element_type=preferred_element_type)


_E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)   # the default (unit) scales' dtype
_scaled_dot = composite(_decomposition, name="xla.scaled_dot")


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
    """(lhs * lhs_scale) @ (rhs * rhs_scale) with dot_general's dimension_numbers
    (default: a matmul over the last two dimensions, the others batch). A scale has the
    operand's shape except along contracting dimensions, which it divides (each scale
    value covers a block of at least 2); no scale means ones. The output is in
    preferred_element_type (default bfloat16). Not differentiable in JAX either."""
    lhs_aval, rhs_aval = get_aval(lhs), get_aval(rhs)
    if dimension_numbers is None:
        if lhs_aval.ndim < 2:
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        n = lhs_aval.ndim
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lc, rc), (lb, rb) = dimension_numbers
    dimension_numbers = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))

    def ones_scale(aval, contracting):
        shape = tuple(1 if d in contracting else s for d, s in enumerate(aval.shape))
        return st.full(shape, 1, _E8M0)
    lhs_scale = ones_scale(lhs_aval, lc) if lhs_scale is None else lhs_scale
    rhs_scale = ones_scale(rhs_aval, rc) if rhs_scale is None else rhs_scale
    _check(lhs_aval, rhs_aval, get_aval(lhs_scale), get_aval(rhs_scale), dimension_numbers)
    preferred_element_type = (np.dtype(dtypes.bfloat16) if preferred_element_type is None
                              else dtypes.canonicalize_dtype(preferred_element_type))
    return _scaled_dot(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers=dimension_numbers,
                       preferred_element_type=preferred_element_type)


__all__ = ["scaled_dot"]
