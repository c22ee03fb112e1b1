"""jax.nn activations beyond functions.py's (elu, selu, celu, leaky_relu, hard_*,
log_sigmoid, mish, glu, squareplus, sparse_*), log1mexp, logmeanexp, standardize and
dot_product_attention (the XLA algorithm: scaled dot products, masks, softmax). Built from
jax.numpy, lax and the first part (functions.py)."""
from __future__ import annotations

import math

import numpy as np

from pyjax._src import dtypes
from pyjax._src.api.custom_derivatives import custom_jvp
from pyjax._src.lax import dot as lax_dot
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.ad_util import stop_gradient
from pyjax._src.nn.functions import _inexact, logsumexp, relu6, sigmoid, softmax, softplus
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.util import canonicalize_axis


def identity(x):
    """x as an array, unchanged."""
    return lnp.asarray(x)


def tanh(x):
    """Hyperbolic tangent."""
    return uf.tanh(x)


def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    x = _inexact(x)
    safe = lnp.where(x > 0, 0.0, x)   # keeps exp from overflowing on the unused branch
    return lnp.where(x > 0, x, alpha * uf.expm1(safe))


def celu(x, alpha=1.0):
    """Continuously differentiable elu: max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    x = _inexact(x)
    return uf.maximum(x, 0.0) + alpha * uf.expm1(uf.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    """Scaled elu with the self-normalising constants of Klambauer et al. (2017)."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def leaky_relu(x, negative_slope=1e-2):
    """x for x >= 0, negative_slope * x otherwise."""
    x = _inexact(x)
    return lnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    """tanh's piecewise-linear stand-in: x clipped to [-1, 1] (integers stay integers)."""
    x = lnp.asarray(x)
    return lnp.where(x > 1, 1, lnp.where(x < -1, -1, x)).astype(x.dtype)


def hard_sigmoid(x):
    """relu6(x + 3) / 6."""
    return relu6(_inexact(x) + 3.0) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x) (also known as hard_swish)."""
    x = _inexact(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), computed stably."""
    return -softplus(-_inexact(x))


def mish(x):
    """x * tanh(softplus(x))."""
    x = _inexact(x)
    return x * uf.tanh(softplus(x))


def glu(x, axis=-1):
    """Gated linear unit: the first half of x along `axis` times sigmoid of the second."""
    x = _inexact(x)
    size = x.shape[canonicalize_axis(axis, x.ndim)]
    if size % 2:
        raise ValueError(f"glu: axis {axis} must have even size, got {size}")
    first, second = lnp.split(x, 2, axis)
    return first * sigmoid(second)


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2, a smooth relu."""
    x = _inexact(x)
    return (x + uf.sqrt(uf.square(x) + b)) / 2


def sparse_plus(x):
    """0 for x <= -1, x for x >= 1, (x + 1)^2 / 4 between."""
    x = _inexact(x)
    return lnp.where(x <= -1.0, 0.0, lnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4)).astype(
        x.dtype)


def sparse_sigmoid(x):
    """clip((x + 1) / 2, 0, 1): the derivative of sparse_plus."""
    x = _inexact(x)
    return 0.5 * lnp.clip(x + 1.0, 0.0, 2.0)


@custom_jvp
def log1mexp(x):
    """log(1 - exp(-x)) for x > 0, accurate for small and large x."""
    x = _inexact(x)
    return lnp.where(x < math.log(2), uf.log(-uf.expm1(-x)), uf.log1p(-uf.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / uf.expm1(x))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) over axis, computed stably."""
    x = _inexact(x)
    total = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    if where is None:
        axes = range(x.ndim) if axis is None else \
            ((axis,) if isinstance(axis, int) else axis)
        count = math.prod(x.shape[a] for a in axes)
        return total - np.array(math.log(count), x.dtype) if count else total
    count = red.sum(lnp.broadcast_to(where, x.shape), axis=axis, keepdims=keepdims,
                    dtype=x.dtype)
    return total - uf.log(count)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon) with the mean and variance over `axis`
    (computed when not given): algorithm="fast" takes the variance as E[x^2] - E[x]^2
    (one pass, clipped at 0), "stable" as E[(x - mean)^2], as JAX."""
    x = _inexact(x)
    if mean is None:
        mean = red.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = red.mean(uf.square(x - mean), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            # may come out negative by cancellation: clipped, since rsqrt follows
            variance = lnp.clip(red.mean(uf.square(x), axis, keepdims=True, where=where) -
                                uf.square(mean), 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return (x - mean) * ew.rsqrt(variance + np.array(epsilon, x.dtype))


# --- dot_product_attention ---------------------------------------------------------------------

def _large_negative(dtype):
    return np.asarray(-0.7 * dtypes.finfo(dtype).max, dtype)


def _attention_mask(T, S, B, mask, is_causal, q_lengths, kv_lengths, window):
    """The boolean (B, 1 or K, 1 or G, T, S) mask of allowed query/key pairs, or None."""
    parts = [] if mask is None else [mask]
    rows = lnp.arange(T)[:, None]
    cols = lnp.arange(S)[None, :]
    if is_causal:
        parts.append(rows >= cols)
    if window is not None:
        left, right = window if isinstance(window, tuple) else (window, window)
        parts.append((cols >= rows - left) & (cols <= rows + right))
    if q_lengths is not None:
        parts.append(rows[None] < lnp.asarray(q_lengths).reshape(B, 1, 1))
    if kv_lengths is not None:
        parts.append(cols[None] < lnp.asarray(kv_lengths).reshape(B, 1, 1))
    if not parts:
        return None
    combined = None
    for part in parts:
        while part.ndim < 5:
            part = part[None] if part.ndim != 3 else part[:, None, None]
        combined = part if combined is None else combined & part
    return combined


def _grouped(t, B, K, G, T, S, N):
    """A (B, N or 1, T, S) bias or mask as (B, K or 1, G or 1, T, S)."""
    if t is None:
        return None
    if t.shape[1] == 1:
        return t[:, :, None]
    if t.shape[1] != N:
        raise ValueError(f"dot_product_attention: bias/mask head dimension must be 1 or "
                         f"{N}, got shape {t.shape}")
    return lnp.reshape(t, (t.shape[0], K, G, t.shape[2], t.shape[3]))


def _as_4d(t):
    """t with leading axes of size 1 up to rank 4, as JAX reads an attention bias or mask."""
    t = lnp.asarray(t)
    return lnp.reshape(t, (1,) * (4 - t.ndim) + t.shape) if t.ndim < 4 else t


def _check_shape_and_dtype(t, shape, dtype, name):
    """JAX's checks of one of dot_product_attention's arrays (-1: any size)."""
    if t is None:
        return
    t = lnp.asarray(t)
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    if any(want != -1 and got != want for got, want in zip(t.shape, shape)):
        raise ValueError(f"{name} shape should be {shape}: but got {t.shape}")


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """softmax(query key^T * scale + bias, masked) value, with query (B, T, N, H) (or
    (T, N, H)), key and value (B, S, K, H), K dividing N (grouped-query attention)."""
    if implementation not in (None, "xla"):
        raise ValueError(f"dot_product_attention: implementation {implementation!r} is not "
                         "available; pyjax computes attention with the 'xla' algorithm.")
    query, key, value = (lnp.asarray(t) for t in (query, key, value))
    unbatched = query.ndim == 3
    if unbatched:
        query, key, value = query[None], key[None], value[None]
        bias = None if bias is None else lnp.asarray(bias)[None]
        mask = None if mask is None else lnp.asarray(mask)[None]
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError("dot_product_attention expects query, key and value of rank 3 or "
                         f"4, got {query.shape}, {key.shape}, {value.shape}")
    bias, mask = (None if t is None else _as_4d(t) for t in (bias, mask))
    B, S, K, H = key.shape
    for t, shape, dtype, name in [
            (value, [B, S, K, H], key.dtype, "value"), (query, [B, -1, -1, H], key.dtype, "query"),
            (mask, [-1] * 4, np.dtype(bool), "mask"), (bias, [-1] * 4, None, "bias"),
            (query_seq_lengths, [B], np.dtype(np.int32), "query_seq_lengths"),
            (key_value_seq_lengths, [B], np.dtype(np.int32), "key_value_seq_lengths")]:
        _check_shape_and_dtype(t, shape, dtype, name)
    T, N = query.shape[1:3]
    if N % K:
        raise ValueError("The number of query heads must be a multiple of key/value heads, "
                         f"but got {N} vs {K}")
    G = N // K
    scale = 1.0 / math.sqrt(H) if scale is None else scale
    logits_dtype = dtypes.promote_types(query.dtype, np.float32)
    q = lnp.reshape(query, (B, T, K, G, H))
    # (B, K, T, G, S): batch B and K, contract H
    logits = lax_dot.dot_general(q, key, (((4,), (3,)), ((0, 2), (0, 2))),
                                 preferred_element_type=logits_dtype)
    logits = lnp.transpose(logits, (0, 1, 3, 2, 4)) * np.asarray(scale, logits_dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, B, K, G, T, S, N)).astype(logits_dtype)
    combined = _attention_mask(T, S, B, _grouped(mask, B, K, G, T, S, N), is_causal,
                               query_seq_lengths, key_value_seq_lengths, local_window_size)
    if combined is not None:
        logits = lnp.where(combined, logits, _large_negative(logits_dtype))
    probs = softmax(logits.astype(np.float32), axis=-1).astype(key.dtype)
    # (B, K, G, T, H): batch B and K, contract S
    encoded = lax_dot.dot_general(probs, value, (((4,), (1,)), ((0, 1), (0, 2))))
    encoded = lnp.reshape(lnp.transpose(encoded, (0, 3, 1, 2, 4)), (B, T, N, H))
    if query_seq_lengths is not None:   # padded query positions give zeros
        valid = lnp.arange(T)[None, :] < lnp.asarray(query_seq_lengths).reshape(B, 1)
        encoded = encoded * valid[:, :, None, None].astype(encoded.dtype)
    if unbatched:
        encoded = encoded[0]
    if return_residual:
        residual = logsumexp(logits.astype(np.float32), axis=-1).astype(key.dtype)
        residual = stop_gradient(lnp.reshape(lnp.transpose(residual, (0, 3, 1, 2)),
                                             (B, T, N)))
        return encoded, (residual[0] if unbatched else residual)
    return encoded
