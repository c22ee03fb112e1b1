"""jax.scipy.signal: N-d convolution and correlation, computed either directly (one
lax.conv_general_dilated) or through FFTs."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src.api.vmap import vmap
from pyjax._src.lax import convolution
from pyjax._src.lax import structural as st
from pyjax._src.numpy import fft as np_fft
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import linalg as np_linalg
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact

_MODES = ("full", "same", "valid")


def _prepare(name, in1, in2):
    check_arraylike(name, in1, in2)
    in1, in2 = promote_dtypes_inexact(lnp.asarray(in1), lnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    return in1, in2


def _flip_all(x):
    return st.rev(x, tuple(range(x.ndim)))


def _centered(x, shape):
    """The middle `shape` block of x; an odd surplus is dropped at the end."""
    starts = [(n - m) // 2 for n, m in zip(x.shape, shape)]
    return x[tuple(slice(s, s + m) for s, m in zip(starts, shape))]


def _convolve_direct(in1, in2, mode, precision):
    if in1.ndim == 0:
        return in1 * in2
    in1_bigger = all(a >= b for a, b in zip(in1.shape, in2.shape))
    in2_bigger = all(a <= b for a, b in zip(in1.shape, in2.shape))
    if not (in1_bigger or in2_bigger):
        raise ValueError("One input must be smaller than the other in every dimension.")
    if mode == "valid" and not in1_bigger:   # convolution commutes; slide the smaller one
        in1, in2 = in2, in1
    if mode == "full":
        padding = [(n - 1, n - 1) for n in in2.shape]
    elif mode == "same":   # output index i is full index i + (n - 1) // 2
        padding = [(n - 1 - (n - 1) // 2, (n - 1) // 2) for n in in2.shape]
    else:
        padding = [(0, 0)] * in1.ndim
    out = convolution.conv_general_dilated(
        in1[None, None], _flip_all(in2)[None, None], (1,) * in1.ndim, padding,
        precision=precision)
    return out[0, 0]


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolve two N-d arrays with FFTs along `axes` (default all); the other axes must
    have equal sizes and are treated as a batch. Modes 'full', 'same' (shaped like in1)
    and 'valid'."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(lnp.asarray(in1), lnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    if axes is None:
        axes = tuple(range(in1.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(sorted(operator.index(a) % max(in1.ndim, 1) for a in axes))
    mapped = [i for i in range(in1.ndim) if i not in axes]
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                         f"in2.shape={in2.shape} axes={axes}")
    conv = _fftconvolve_axes
    for k, i in reversed(list(enumerate(mapped))):   # one vmap per batch axis; the
        conv = vmap(conv, in_axes=(i - k, i - k, None), out_axes=i - k)   # outer k are gone
    return conv(in1, in2, mode)


def _fftconvolve_axes(in1, in2, mode):
    """FFT convolution over every axis of in1 and in2."""
    if in1.ndim == 0:
        return in1 * in2
    s1, s2 = in1.shape, in2.shape
    full = tuple(a + b - 1 for a, b in zip(s1, s2))
    if lnp.iscomplexobj(in1) or lnp.iscomplexobj(in2):
        out = np_fft.ifftn(np_fft.fftn(in1, full) * np_fft.fftn(in2, full), full)
    else:
        out = np_fft.irfftn(np_fft.rfftn(in1, full) * np_fft.rfftn(in2, full), full)
    out = out.astype(in1.dtype)
    if mode == "full":
        return out
    if mode == "same":
        return _centered(out, s1)
    if not (all(a >= b for a, b in zip(s1, s2)) or all(a <= b for a, b in zip(s1, s2))):
        raise ValueError("For 'valid' mode, One input must be at least as large as the "
                         "other in every dimension.")
    return _centered(out, tuple(abs(a - b) + 1 for a, b in zip(s1, s2)))


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """N-d convolution of in1 and in2 (same number of dimensions). Modes 'full', 'same'
    (shaped like in1) and 'valid'; method 'direct' (= 'auto') or 'fft'."""
    in1, in2 = _prepare("convolve", in1, in2)
    if method == "fft":
        return fftconvolve(in1, in2, mode)
    if method not in ("auto", "direct"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {list(_MODES)}")
    return _convolve_direct(in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-d cross-correlation: out[k] = sum_n in1[n + k] conj(in2[n]), same modes and
    methods as convolve."""
    in1, in2 = _prepare("correlate", in1, in2)
    return convolve(in1, _flip_all(ufuncs.conjugate(in2)), mode, method, precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    check_arraylike(name, in1, in2)
    if lnp.ndim(in1) != 2 or lnp.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D convolution; only zero fill at the boundary is supported."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode, "direct", precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D cross-correlation; only zero fill at the boundary is supported. Two quirks of
    JAX's are kept: 'same' centres with the odd surplus at the start, and 'valid' is
    conjugated when in1 is the strictly smaller input."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = _prepare("correlate2d", in1, in2)
    if mode == "same":   # an odd surplus is dropped at the start, not the end
        full = correlate(in1, in2, "full", "direct", precision)
        starts = [n - m - (n - m) // 2 for n, m in zip(full.shape, in1.shape)]
        return full[tuple(slice(s, s + m) for s, m in zip(starts, in1.shape))]
    out = correlate(in1, in2, mode, "direct", precision)
    if mode == "valid" and in1.shape != in2.shape and all(
            a <= b for a, b in zip(in1.shape, in2.shape)):
        out = ufuncs.conjugate(out)   # JAX conjugates when in1 is the smaller input
    return out


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """Remove the mean (type='constant') or a least-squares line (type='linear') from data
    along axis; for 'linear', each piece between the breakpoints bp gets its own line."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    check_arraylike("detrend", data)
    (data,) = promote_dtypes_inexact(lnp.asarray(data))
    if type == "constant":
        return data - red.mean(data, axis, keepdims=True)
    n = data.shape[axis]
    edges = np.unique(np.concatenate([[0], np.atleast_1d(bp), [n]]).astype(int))
    if edges[0] < 0 or edges[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    data = lnp.moveaxis(data, axis, 0)
    pieces = []
    for start, stop in zip(edges[:-1], edges[1:]):
        piece = data[start:stop]
        ramp = np.arange(1, stop - start + 1) / (stop - start)
        design = lnp.asarray(np.stack([ramp, np.ones_like(ramp)], axis=1), data.dtype)
        flat = lnp.reshape(piece, (stop - start, -1))
        coef = np_linalg.lstsq(design, flat)[0]
        pieces.append(piece - lnp.reshape(lnp.matmul(design, coef), piece.shape))
    return lnp.moveaxis(lnp.concatenate(pieces), 0, axis)


__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve"]
