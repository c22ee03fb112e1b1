"""Block-scaled matrix products: jax.nn.scaled_matmul (operands times per-block scales,
contracted over the last dimension), get_scaled_dot_general_config (the mxfp8 and nvfp4
quantization recipes) and scaled_dot_general (dot_general on operands quantized by those
recipes, with a custom VJP that quantizes the cotangent too), as JAX defines them (JAX
runs them with cuDNN on recent NVIDIA GPUs; pyjax computes the same values with lax).
Imports lax, api and dtypes."""
from __future__ import annotations

import dataclasses
import functools
import warnings

import ml_dtypes
import numpy as np

from pyjax._src import dtypes
from pyjax._src.api.custom_derivatives import custom_vjp
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import dot
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as red
from pyjax._src.lax import structural as st
from pyjax._src.lax.program import optimization_barrier

_F32 = dtypes.float32
_E4M3, _E8M0 = np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e8m0fnu)
_E2M1 = np.dtype(ml_dtypes.float4_e2m1fn)


@dataclasses.dataclass(slots=True)
class BlockScaleConfig:
    """A quantization recipe: blocks of `block_size` values along the contracting
    dimension share one scale of `scale_type`; values are stored as `data_type`."""
    mode: str
    block_size: int
    data_type: object
    scale_type: object
    global_scale: object
    infer_only: bool


def _const(value, dtype):
    return np.asarray(value, dtype)


def _global_scale(config, dtype):
    """The config's global scale (an array of one element) as a scalar of `dtype`."""
    return ew.convert_element_type(st.reshape(config.global_scale, ()), dtype)


def _repeat_last(x, times):
    shape = get_aval(x).shape
    wide = st.broadcast_in_dim(x, shape + (times,), tuple(range(len(shape))))
    return st.reshape(wide, shape[:-1] + (shape[-1] * times,))


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """out[b, m, n] = sum_k (lhs * lhs_scales)[b, m, k] * (rhs * rhs_scales)[b, n, k],
    where each scale covers K // K_scales consecutive k (the block size), computed in
    float32: lhs (B, M, K), rhs (B, N, K), lhs_scales (B, M, K_a), rhs_scales (B, N, K_b)."""
    a, b, sa, sb = (get_aval(x) for x in (lhs, rhs, lhs_scales, rhs_scales))
    if not all(x.ndim == 3 for x in (a, b, sa, sb)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    if a.shape[2] != b.shape[2] or a.shape[0] != b.shape[0]:
        raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) "
                         f"and contract (K) dimensions, but got shapes {a.shape} and "
                         f"{b.shape}")
    if sa.shape[2] != sb.shape[2] or sa.shape[0] != sb.shape[0]:
        raise ValueError("scaled_matmul requires scales to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {sa.shape} and "
                         f"{sb.shape}")
    if sa.shape[1] != a.shape[1] or sb.shape[1] != b.shape[1]:
        raise ValueError("scaled_matmul requires scales to match non-contract dimensions "
                         f"of inputs, but got shapes a: {a.shape}, b: {b.shape}, a_scales: "
                         f"{sa.shape}, b_scales: {sb.shape}")
    if a.shape[2] % sa.shape[2]:
        raise ValueError(f"scaled_matmul: the contract dimension {a.shape[2]} must be a "
                         f"multiple of the scales' {sa.shape[2]}")
    out_dtype = dtypes.canonicalize_dtype(preferred_element_type)

    def scaled(x, scales, aval, scale_aval):
        spread = _repeat_last(ew.convert_element_type(scales, _F32),
                              aval.shape[2] // scale_aval.shape[2])
        return ew.mul(ew.convert_element_type(x, _F32), spread)
    out = dot.dot_general(scaled(lhs, lhs_scales, a, sa), scaled(rhs, rhs_scales, b, sb),
                          (((2,), (2,)), ((0,), (0,))), preferred_element_type=_F32)
    return ew.convert_element_type(out, out_dtype)


def get_scaled_dot_general_config(mode, global_scale=None):
    """The BlockScaleConfig of `mode`: 'mxfp8' (float8_e4m3fn values, float8_e8m0fnu
    scales per 32) or 'nvfp4' (float4_e2m1fn values, float8_e4m3fn scales per 16, and a
    float32 global scale, default 1)."""
    if mode == "nvfp4":
        one = st.full((1,), 1.0, _F32)
        return BlockScaleConfig(mode="nvfp4", block_size=16, data_type=ml_dtypes.float4_e2m1fn,
                                scale_type=ml_dtypes.float8_e4m3fn,
                                global_scale=one if global_scale is None else global_scale,
                                infer_only=False)
    if mode == "mxfp8":
        return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=ml_dtypes.float8_e4m3fn,
                                scale_type=ml_dtypes.float8_e8m0fnu, global_scale=None,
                                infer_only=False)
    raise ValueError(f"Unsupported mode: {mode}")


# --- quantization ---------------------------------------------------------------------------

def _to_e8m0_rounding_up(x):
    """The float8_e8m0fnu exponent (as uint8) of x, rounded up unless x is a power of 2."""
    bits = ew.bitcast_convert_type(ew.convert_element_type(x, _F32), np.uint32)
    exp = ew.shift_right_logical(bits, _const(23, np.uint32))
    mant = ew.bitwise_and(bits, _const(0x7FFFFF, np.uint32))
    zero = _const(0, np.uint32)
    round_up = ew.bitwise_and(
        ew.bitwise_and(ew.gt(mant, zero), ew.ne(exp, _const(0xFE, np.uint32))),
        ew.bitwise_not(ew.bitwise_and(ew.eq(exp, zero),
                                      ew.le(mant, _const(0x400000, np.uint32)))))
    exp = ew.select(round_up, ew.add(exp, _const(1, np.uint32)), exp)
    return ew.convert_element_type(exp, np.uint8)


def _e8m0_value(exp_u8, dtype):
    bits = ew.shift_left(ew.convert_element_type(exp_u8, np.uint32), _const(23, np.uint32))
    value = ew.bitcast_convert_type(bits, _F32)
    tiny = 2.0 ** -15 if np.dtype(dtype) == np.float16 else 2.0 ** -127
    value = ew.select(ew.eq(value, _const(0, _F32)),
                      st.full(get_aval(value).shape, tiny, _F32), value)
    return ew.convert_element_type(value, dtype)


def _quantize(x, config):
    """x (B, M, K) as (values of config.data_type, scales (B, M, K // block_size))."""
    shape = get_aval(x).shape
    dtype = get_aval(x).dtype
    block = config.block_size
    if shape[-1] < block or shape[-1] % block:
        raise ValueError(f"scaled_dot_general: the contracting size {shape[-1]} must be a "
                         f"multiple of the block size {block} ({config.mode})")
    x = st.reshape(x, shape[:-1] + (shape[-1] // block, block))
    biggest = _const(ml_dtypes.finfo(config.data_type).max, dtype)

    def block_scales(values):
        return ew.div(st.expand_dims(red.reduce_max(ew.abs(values), (3,)), (3,)), biggest)
    if config.mode == "mxfp8":
        scales = _to_e8m0_rounding_up(block_scales(x))
        scaled = ew.div(x, _e8m0_value(scales, dtype))
        scales = ew.bitcast_convert_type(scales, _E8M0)
    elif config.mode == "nvfp4":
        x = ew.div(x, _global_scale(config, dtype))
        scale_max = _const(ml_dtypes.finfo(config.scale_type).max, dtype)
        scales = ew.clamp(_const(0, dtype), block_scales(x), scale_max)
        scales = optimization_barrier(ew.convert_element_type(scales, config.scale_type))
        scaled = ew.div(x, ew.convert_element_type(ew.convert_element_type(scales, _F32),
                                                   dtype))
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    values = ew.convert_element_type(ew.clamp(ew.neg(biggest), scaled, biggest),
                                     config.data_type)
    return st.reshape(values, shape), st.reshape(scales, get_aval(scales).shape[:-1])


def _as_bmk(x, contracting, batch):
    """x transposed to (batch..., kept..., contracting...) and reshaped to (B, M, K)."""
    ndim = get_aval(x).ndim
    kept = [d for d in range(ndim) if d not in contracting and d not in batch]
    order = [d for d in range(ndim) if d in batch] + kept + [d for d in range(ndim)
                                                             if d in contracting]
    shape = get_aval(x).shape
    size = lambda dims: int(np.prod([shape[d] for d in dims], dtype=int))  # noqa: E731
    return st.reshape(st.transpose(x, tuple(order)),
                      (size(batch), size(kept), size(contracting)))


def _dot_shape(lhs_shape, rhs_shape, lhs_dn, rhs_dn):
    (lc, lb), (rc, rb) = lhs_dn, rhs_dn
    return (tuple(d for i, d in enumerate(lhs_shape) if i in lb)
            + tuple(d for i, d in enumerate(lhs_shape) if i not in lc and i not in lb)
            + tuple(d for i, d in enumerate(rhs_shape) if i not in rc and i not in rb))


def _scaled_dot(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_q, lhs_s = _quantize(_as_bmk(lhs, lc, lb), configs[0])
    rhs_q, rhs_s = _quantize(_as_bmk(rhs, rc, rb), configs[1])
    nvfp4 = configs[0].mode == "nvfp4"
    out = scaled_matmul(lhs_q, rhs_q, lhs_s, rhs_s,
                        preferred_element_type=_F32 if nvfp4 else preferred_element_type)
    if nvfp4:
        out = ew.mul(out, ew.mul(_global_scale(configs[0], _F32),
                                 _global_scale(configs[1], _F32)))
        out = ew.convert_element_type(out, preferred_element_type)
    shape = _dot_shape(get_aval(lhs).shape, get_aval(rhs).shape, (lc, lb), (rc, rb))
    return st.reshape(out, shape)


def _transpose_lhs(g, x, y, dimension_numbers, preferred_element_type, configs,
                   swap_ans=False):
    """The cotangent of x in dot_general(x, y) (or of y, with swap_ans), from the
    quantized cotangent g and the quantized other operand (nvfp4: unquantized)."""
    (xc, yc), (xb, yb) = dimension_numbers
    x_ndim, y_ndim = get_aval(x).ndim, get_aval(y).ndim
    x_kept = [d for d in range(x_ndim) if d not in xc and d not in xb]
    y_kept = [d for d in range(y_ndim) if d not in yc and d not in yb]
    nb = len(xb)
    if swap_ans:
        ans_batch, ans_y = tuple(range(nb)), tuple(range(nb, nb + len(y_kept)))
    else:
        ans_batch = tuple(range(nb))
        ans_y = tuple(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
    x_contract_by_y = list(np.take(xc, np.argsort(yc)))
    out_axes = tuple(int(a) for a in np.argsort(list(xb) + x_kept + x_contract_by_y))
    y_dn, g_dn = (tuple(y_kept), tuple(yb)), (ans_y, ans_batch)
    y_3d, g_3d = _as_bmk(y, *y_dn), _as_bmk(g, *g_dn)
    if configs[0].mode != "nvfp4":
        g_q, g_s = _quantize(g_3d, configs[0])
        y_q, y_s = _quantize(y_3d, configs[1])
        out = scaled_matmul(g_q, y_q, g_s, y_s, preferred_element_type)
    else:
        out = dot.dot_general(g_3d, y_3d, (((2,), (2,)), ((0,), (0,))),
                              preferred_element_type=preferred_element_type)
    shape = _dot_shape(get_aval(g).shape, get_aval(y).shape, g_dn, y_dn)
    return st.transpose(st.reshape(out, shape), out_axes)


@functools.partial(custom_vjp, nondiff_argnums=(2, 3, 4))
def _scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    return _scaled_dot(lhs, rhs, dimension_numbers, preferred_element_type, configs)


def _scaled_dot_fwd(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    return _scaled_dot(lhs, rhs, dimension_numbers, preferred_element_type, configs), (lhs, rhs)


def _scaled_dot_bwd(dimension_numbers, preferred_element_type, configs, res, g):
    lhs, rhs = res
    (xc, yc), (xb, yb) = dimension_numbers
    grad_lhs = _transpose_lhs(g, lhs, rhs, dimension_numbers, preferred_element_type,
                              [configs[2], configs[1]])
    grad_rhs = _transpose_lhs(g, rhs, lhs, ((yc, xc), (yb, xb)), preferred_element_type,
                              [configs[2], configs[0]], swap_ans=True)
    if configs[2].mode == "nvfp4":
        dtype = get_aval(lhs).dtype
        limit = (ml_dtypes.finfo(configs[0].data_type).max
                 * ml_dtypes.finfo(configs[0].scale_type).max)

        def keep(grad, x, config):
            bound = ew.mul(_global_scale(config, dtype), _const(limit, dtype))
            zero = st.full(get_aval(grad).shape, 0, get_aval(grad).dtype)
            return ew.select(ew.le(ew.abs(x), bound), grad, zero)
        grad_lhs, grad_rhs = keep(grad_lhs, lhs, configs[0]), keep(grad_rhs, rhs, configs[1])
    return grad_lhs, grad_rhs


_scaled_dot_general.defvjp(_scaled_dot_fwd, _scaled_dot_bwd)


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs=None, implementation=None):
    """dot_general of lhs and rhs quantized block by block by configs[0] and configs[1]
    (see get_scaled_dot_general_config; configs[2] quantizes the cotangent in the
    backward pass); without configs, plain lax.dot_general."""
    if implementation is not None:
        warnings.warn("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning, stacklevel=2)
    if configs is None:
        return dot.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    preferred = np.dtype(preferred_element_type)
    if preferred not in (np.dtype(np.float32), dtypes.bfloat16, np.dtype(np.float16)):
        raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                        f"{preferred}")
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    batched = dn
    if not lb:   # a trailing size-1 batch dimension, dropped from the result
        lhs = st.expand_dims(lhs, (get_aval(lhs).ndim,))
        rhs = st.expand_dims(rhs, (get_aval(rhs).ndim,))
        batched = (dn[0], ((get_aval(lhs).ndim - 1,), (get_aval(rhs).ndim - 1,)))
    out = _scaled_dot_general(lhs, rhs, batched, preferred, list(configs))
    return st.squeeze(out, (0,)) if batched != dn else out


__all__ = ["BlockScaleConfig", "scaled_matmul", "get_scaled_dot_general_config",
           "scaled_dot_general"]
