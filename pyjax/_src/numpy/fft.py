"""jax.numpy.fft: NumPy's FFT functions on lax.fft (at most 3 axes per transform call;
more axes run as several calls). `norm` is "backward" (default), "ortho" or "forward".
Results are complex64/float32 unless x64 is on, as in JAX. Imports lax and the core jnp
modules."""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax._src import dtypes
from pyjax._src.api.devices import device_put
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import fft as lfft
from pyjax._src.lax.fft import FftType
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy.lax_numpy import shape as _shape
from pyjax._src.numpy import array_manipulation as more
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import check_arraylike, ensure_array
from pyjax._src.util import canonicalize_axis


def _scale(norm, n, inverse):
    """The factor applied after the unnormalised transform (lax's IFFT already divides
    by n)."""
    if norm in (None, "backward"):
        return 1.0
    if norm == "ortho":
        return math.sqrt(n) if inverse else 1 / math.sqrt(n)
    if norm == "forward":
        return float(n) if inverse else 1 / n
    raise ValueError(f"Invalid norm value {norm}; should be 'backward', 'ortho' or "
                     "'forward'.")


def _resize(x, axis, n):
    """x cut or zero-padded to length n along axis."""
    size = _shape(x)[axis]
    if n == size:
        return x
    if n < size:
        index = [slice(None)] * x.ndim
        index[axis] = slice(0, n)
        return x[tuple(index)]
    widths = [(0, 0)] * x.ndim
    widths[axis] = (0, n - size)
    return more.pad(x, widths)


def _axes_and_sizes(x, s, axes, name):
    nd = x.ndim
    if axes is None:
        axes = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    else:
        given = axes
        axes = tuple(canonicalize_axis(a, nd) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"jax.numpy.fft.{name} does not support repeated axes. Got axes "
                             f"{given}.")
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if len(s) != len(axes):
            raise ValueError(f"Shape and axes have different lengths in jnp.fft.{name}: "
                             f"s={s}, axes={axes}")
        if any(n < 1 for n in s):
            raise ValueError(f"Invalid number of FFT data points ({s}) specified.")
    return axes, s


def _complex_input(x):
    x = lnp.asarray(x)
    dtype = get_aval(x).dtype
    if not dtypes.is_complex(dtype):
        target = dtypes.complex_dtype(dtypes.to_inexact_dtype(dtype))
        x = lnp.asarray(x, dtypes.canonicalize_dtype(target))
    return x


def _real_input(x):
    x = lnp.asarray(x)
    dtype = get_aval(x).dtype
    if dtypes.is_complex(dtype):
        raise TypeError(f"jnp.fft real transforms take real input, got {dtype}")
    return lnp.asarray(x, dtypes.to_inexact_dtype(dtype))


def _apply(x, fft_type, axes, lengths):
    """lax.fft over `axes` (moved last), in calls of at most 3 axes (the last axis of a
    real transform goes into the first call for RFFT and the last call for IRFFT)."""
    if not axes:
        return x
    if len(axes) > 3:
        if fft_type in (FftType.FFT, FftType.IFFT):
            x = _apply(x, fft_type, axes[:-3], lengths[:-3])
            return _apply(x, fft_type, axes[-3:], lengths[-3:])
        if fft_type == FftType.RFFT:
            x = _apply(x, FftType.RFFT, axes[-3:], lengths[-3:])
            return _apply(x, FftType.FFT, axes[:-3], lengths[:-3])
        x = _apply(x, FftType.IFFT, axes[:-3], lengths[:-3])
        return _apply(x, FftType.IRFFT, axes[-3:], lengths[-3:])
    nd = x.ndim
    moved = lnp.moveaxis(x, axes, tuple(range(nd - len(axes), nd)))
    out = lfft.fft(moved, fft_type, lengths)
    return lnp.moveaxis(out, tuple(range(nd - len(axes), nd)), axes)


def _normalized(out, norm, lengths, inverse):
    factor = _scale(norm, math.prod(lengths), inverse)
    return ensure_array(out * factor if factor != 1.0 else out)


def _transform_nd(name, fft_type, a, s, axes, norm):
    """fftn, ifftn and rfftn: each axis cut or zero-padded to its length in s, then
    transformed and scaled as `norm` asks."""
    check_arraylike(name, a)
    x = _real_input(a) if fft_type == FftType.RFFT else _complex_input(a)
    axes, s = _axes_and_sizes(x, s, axes, name)
    if s is not None:
        for ax, n in zip(axes, s):
            x = _resize(x, ax, n)
    lengths = tuple(_shape(x)[ax] for ax in axes)
    return _normalized(_apply(x, fft_type, axes, lengths), norm, lengths,
                       fft_type == FftType.IFFT)


def fftn(a, s=None, axes=None, norm=None):
    """N-dimensional discrete Fourier transform."""
    return _transform_nd("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """N-dimensional inverse discrete Fourier transform."""
    return _transform_nd("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """N-dimensional FFT of real input; the last axis keeps n // 2 + 1 frequencies."""
    return _transform_nd("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """Inverse of rfftn: real output, the last axis of length s[-1] (default
    2 * (m - 1))."""
    check_arraylike("irfftn", a)
    x = _complex_input(a)
    axes, s = _axes_and_sizes(x, s, axes, "irfftn")
    if s is None:
        s = tuple(_shape(x)[ax] for ax in axes[:-1]) + (2 * (_shape(x)[axes[-1]] - 1),)
    if s[-1] < 1:
        raise ValueError(f"Invalid number of FFT data points ({s[-1]}) specified.")
    for ax, n in zip(axes[:-1], s[:-1]):
        x = _resize(x, ax, n)
    x = _resize(x, axes[-1], s[-1] // 2 + 1)
    return _normalized(_apply(x, FftType.IRFFT, axes, s), norm, s, True)


def _check_one_axis(name, axis):
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"jax.numpy.fft.{name} does not support multiple axes. Please use "
                         f"jax.numpy.fft.{name}n. Got axis = {axis}.")


def _one_axis(fn, name):
    def f(a, n=None, axis=-1, norm=None):
        check_arraylike(name, a)
        _check_one_axis(name, axis)
        return fn(a, None if n is None else (n,), (axis,), norm)
    f.__name__ = name
    f.__doc__ = f"One-dimensional {fn.__name__[:-1]} along `axis` (length n)."
    return f


fft = _one_axis(fftn, "fft")
ifft = _one_axis(ifftn, "ifft")
rfft = _one_axis(rfftn, "rfft")
irfft = _one_axis(irfftn, "irfft")


def _two_axes(fn, name):
    def f(a, s=None, axes=(-2, -1), norm=None):
        check_arraylike(name, a)
        if len(axes) != 2:
            raise ValueError(f"jax.numpy.fft.{name} only supports 2 axes. Got axes = {axes}.")
        return fn(a, s, axes, norm)
    f.__name__ = name
    f.__doc__ = f"Two-dimensional {fn.__name__[:-1]} over `axes`."
    return f


fft2 = _two_axes(fftn, "fft2")
ifft2 = _two_axes(ifftn, "ifft2")
rfft2 = _two_axes(rfftn, "rfft2")
irfft2 = _two_axes(irfftn, "irfft2")


# hfft and ihfft run the opposite real transform, so each norm means its mirror image there.
_SWAPPED_NORMS = {None: "forward", "backward": "forward", "forward": "backward",
                  "ortho": "ortho"}


def hfft(a, n=None, axis=-1, norm=None):
    """FFT of a signal with Hermitian symmetry (real spectrum), given its first half."""
    check_arraylike("hfft", a)
    _check_one_axis("hfft", axis)
    x = _complex_input(a)
    n = 2 * (_shape(x)[canonicalize_axis(axis, x.ndim)] - 1) if n is None else n
    return irfft(uf.conj(x), n, axis, _SWAPPED_NORMS.get(norm, norm))


def ihfft(a, n=None, axis=-1, norm=None):
    """Inverse of hfft: the first half of the Hermitian spectrum of a real signal."""
    check_arraylike("ihfft", a)
    _check_one_axis("ihfft", axis)
    x = _real_input(a)
    n = _shape(x)[canonicalize_axis(axis, x.ndim)] if n is None else n
    return uf.conj(rfft(x, n, axis, _SWAPPED_NORMS.get(norm, norm)))


def _frequencies(name, k, n, d, dtype, device):
    """Frequency indices k of an n-point transform as k / (d * n), in `dtype` (the default
    float dtype when None), on `device`."""
    dtype = dtypes.check_user_dtype(dtype, name) if dtype is not None else \
        dtypes.default_float_dtype()
    out = lnp.asarray(k, dtype) / (lnp.asarray(d, dtype) * n)
    return out if device is None else device_put(out, device)


def _frequency_args(name, n, d):
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n) if isinstance(n, tuple) else n}.")
    if np.ndim(d) != 0:
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single "
                         f"value. Got d = {list(d) if isinstance(d, tuple) else d}.")
    return operator.index(n)


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an n-point FFT with sample spacing d."""
    n = _frequency_args("fftfreq", n, d)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies("fftfreq", k, n, d, dtype, device)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an n-point RFFT (non-negative only)."""
    n = _frequency_args("rfftfreq", n, d)
    return _frequencies("rfftfreq", np.arange(0, n // 2 + 1), n, d, dtype, device)


def _half_roll(name, x, axes, direction):
    """x rolled by half its length along each of `axes` (all when None), forwards for
    direction 1 and backwards for -1."""
    check_arraylike(name, x)
    x = lnp.asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes = (axes,)
    return more.roll(x, tuple(direction * (_shape(x)[a] // 2) for a in axes), tuple(axes))


def fftshift(x, axes=None):
    """Moves the zero-frequency term to the centre."""
    return _half_roll("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """Inverse of fftshift."""
    return _half_roll("ifftshift", x, axes, -1)
