"""jax.scipy.fft: the type-2 discrete cosine transform and its inverse, each one complex
FFT of a reordered input (Makhoul's method)."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src.numpy import fft as np_fft
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import array_manipulation
from pyjax._src.numpy import ufuncs
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact


def _check(name, x, type, norm):
    check_arraylike(name, x)
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm not in (None, "ortho", "backward"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")
    (x,) = promote_dtypes_inexact(lnp.asarray(x))
    return x


def _resize(x, n, axis):
    """Truncate or zero-pad x to length n along axis."""
    size = x.shape[axis]
    if n is None or n == size:
        return x
    if n < size:
        return lnp.moveaxis(lnp.moveaxis(x, axis, -1)[..., :n], -1, axis)
    pads = [(0, 0)] * x.ndim
    pads[axis] = (0, n - size)
    return array_manipulation.pad(x, pads)


def _even_odd_order(n):
    """Indices that list the even positions, then the odd ones backwards."""
    return np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])


def _ortho_scale(n, dtype):
    scale = np.full(n, np.sqrt(1 / (2 * n)))
    scale[0] = np.sqrt(1 / (4 * n))
    return lnp.asarray(scale, dtype)


def _dct_last(x, norm):
    """Unscaled DCT-II along the last axis: y[k] = 2 sum_n x[n] cos(pi k (2n + 1) / 2N)."""
    n = x.shape[-1]
    v = x[..., _even_odd_order(n)]
    twiddle = np.exp(-0.5j * np.pi * np.arange(n) / n)
    spectrum = np_fft.fft(v, axis=-1)
    y = (2 * ufuncs.real(spectrum * lnp.asarray(twiddle, spectrum.dtype))).astype(x.dtype)
    return y * _ortho_scale(n, x.dtype) if norm == "ortho" else y


def _idct_last(y, norm):
    """Inverse of _dct_last along the last axis."""
    n = y.shape[-1]
    if norm == "ortho":
        y = y / _ortho_scale(n, y.dtype)
    reversed_tail = lnp.concatenate([lnp.zeros_like(y[..., :1]), y[..., :0:-1]], axis=-1)
    twiddle = np.exp(0.5j * np.pi * np.arange(n) / n)
    spectrum = (y - 1j * reversed_tail) * 0.5
    spectrum = spectrum * lnp.asarray(twiddle, spectrum.dtype)
    v = ufuncs.real(np_fft.ifft(spectrum, axis=-1)).astype(y.dtype)
    return v[..., np.argsort(_even_odd_order(n))]


def _along(transform, x, n, axis, norm):
    if lnp.iscomplexobj(x):   # both transforms are real-linear: do each part alone
        return (_along(transform, ufuncs.real(x), n, axis, norm)
                + 1j * _along(transform, ufuncs.imag(x), n, axis, norm)).astype(x.dtype)
    axis = operator.index(axis)
    x = lnp.moveaxis(_resize(x, n, axis), axis, -1)
    return lnp.moveaxis(transform(x, norm), -1, axis)


def _axes_and_sizes(x, s, axes):
    if s is not None:
        s = list(s) if np.iterable(s) else [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = range(x.ndim) if s is None else range(x.ndim - len(s), x.ndim)
    axes = [operator.index(a) for a in axes]
    sizes = [None] * len(axes) if s is None else list(s)
    if len(sizes) != len(axes):
        raise ValueError(f"s and axes must have the same length, got {s} and {axes}")
    return zip(axes, sizes)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """Discrete cosine transform (type 2 only) of x along axis, truncated or zero-padded
    to length n; norm None/'backward' (unscaled) or 'ortho'."""
    x = _check("dct", x, type, norm)
    return _along(_dct_last, x, n, axis, norm)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """Inverse of dct (type 2 only): idct(dct(x, norm=m), norm=m) == x."""
    x = _check("idct", x, type, norm)
    return _along(_idct_last, x, n, axis, norm)


def dctn(x, type=2, s=None, axes=None, norm=None):
    """dct over several axes (default all), each resized to the matching entry of s."""
    x = _check("dctn", x, type, norm)
    for axis, n in _axes_and_sizes(x, s, axes):
        x = _along(_dct_last, x, n, axis, norm)
    return x


def idctn(x, type=2, s=None, axes=None, norm=None):
    """Inverse of dctn."""
    x = _check("idctn", x, type, norm)
    for axis, n in _axes_and_sizes(x, s, axes):
        x = _along(_idct_last, x, n, axis, norm)
    return x


__all__ = ["dct", "dctn", "idct", "idctn"]
