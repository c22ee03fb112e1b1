"""jax.scipy.signal's windowed-FFT spectral analysis: stft and its inverse istft, the
cross spectral density csd and Welch's power spectral density welch. As in scipy, the
signal is cut into overlapping segments of nperseg samples, each segment is detrended,
multiplied by the window and Fourier transformed."""
from __future__ import annotations

import operator
import warnings

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import array_manipulation as am
from pyjax._src.numpy import fft as np_fft
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import sorting
from pyjax._src.numpy import ufuncs
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from pyjax._src.scipy.signal import detrend
from pyjax._src.util import canonicalize_axis


def _static_int(value, name):
    """An argument that decides a shape (nperseg, noverlap, nfft) as a Python int."""
    if isinstance(value, Tracer):
        value = value.to_concrete_value()
        if value is None:
            raise TypeError(f"{name} must be a static integer: it decides the shape of "
                            "the result. Pass a Python int, not a traced value.")
    return operator.index(value)


def _window(window, nperseg, dtype):
    """The window as an array of `dtype`: a name or (name, parameter...) tuple goes
    through scipy.signal.get_window (periodic, as scipy's spectral functions use it)."""
    from scipy.signal import get_window   # imported on first use: it is slow to import
    return lnp.asarray(get_window(window, nperseg), dtype)


def _window_and_length(window, nperseg, input_length, dtype):
    """scipy's _triage_segments: the window array and the segment length. A named window
    is nperseg long (the whole input when nperseg is None or longer than the input); an
    array window sets the segment length itself."""
    if isinstance(window, (str, tuple)):
        length = input_length if nperseg is None else nperseg
        if length > input_length:
            warnings.warn(f"nperseg={length} is greater than input_length={input_length}, "
                          f"using nperseg={input_length}", stacklevel=4)
            length = input_length
        return _window(window, length, dtype), length
    win = lnp.asarray(window, dtype)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.shape[0]:
        raise ValueError("window is longer than input signal")
    if nperseg is not None and nperseg != win.shape[0]:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, win.shape[0]


def _odd_extension(x, n):
    """x extended by n points at both ends of its last axis, mirrored through the end
    points (2 * x[0] - x[n:0:-1] before, likewise after)."""
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {x.shape[-1] - 1}.")
    before = 2 * x[..., :1] - lnp.flip(x[..., 1:n + 1], -1)
    after = 2 * x[..., -1:] - lnp.flip(x[..., -n - 1:-1], -1)
    return lnp.concatenate([before, x, after], axis=-1)


def _pad_last(mode, **kwargs):
    def extend(x, n):
        return am.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode, **kwargs)
    return extend


_BOUNDARY_EXTENSIONS = {
    "even": _pad_last("reflect"),
    "odd": _odd_extension,
    "constant": _pad_last("edge"),
    "zeros": _pad_last("constant"),
    None: lambda x, n: x,
}


def _detrend_function(detrend_type, axis):
    if isinstance(detrend_type, str):
        return lambda d: detrend(d, axis=-1, type=detrend_type)
    if callable(detrend_type):
        # the callable sees segments laid out along the user's axis, as in scipy
        return lambda d: lnp.moveaxis(detrend_type(lnp.moveaxis(d, -1, axis)), axis, -1)
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _segment_spectra(x, win, detrend_func, nperseg, noverlap, nfft, twosided):
    """The windowed FFT of every segment of x's last axis: (..., segments, frequencies)."""
    starts = np.arange(0, x.shape[-1] - nperseg + 1, nperseg - noverlap)
    segments = x[..., starts[:, None] + np.arange(nperseg)]
    segments = detrend_func(segments)
    if lnp.iscomplexobj(win) and not lnp.iscomplexobj(segments):
        segments = segments.astype(win.dtype)
    segments = win * segments
    if twosided:
        return np_fft.fft(segments, n=nfft)
    return np_fft.rfft(ufuncs.real(segments), n=nfft)


def _zero_pad_end(x, n):
    return lnp.concatenate([x, lnp.zeros((*x.shape[:-1], n), x.dtype)], axis=-1)


def _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend_type,
                     return_onesided, scaling, axis, mode, boundary=None, padded=False):
    """scipy.signal._spectral_helper: (frequencies, segment times, spectra). y=None is the
    auto spectrum of x. The spectra have the segments on the last axis and the
    frequencies where the time axis was."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARY_EXTENSIONS:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(_BOUNDARY_EXTENSIONS)}")
    if y is None:
        check_arraylike("spectral_helper", x)
        (x,) = promote_dtypes_inexact(lnp.asarray(x))
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        check_arraylike("spectral_helper", x, y)
        x, y = promote_dtypes_inexact(lnp.asarray(x), lnp.asarray(y))
        if x.ndim != y.ndim:
            raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
    axis = canonicalize_axis(axis, x.ndim)
    if y is not None:
        outer_x = x.shape[:axis] + x.shape[axis + 1:]
        outer_y = y.shape[:axis] + y.shape[axis + 1:]
        try:
            np.broadcast_shapes(outer_x, outer_y)
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err

    result_dtype = dtypes.complex_dtype(x.dtype)
    freq_dtype = dtypes.real_dtype(result_dtype)
    if nperseg is not None:
        nperseg = _static_int(nperseg, "nperseg")
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _window_and_length(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else _static_int(noverlap, "noverlap")
    nfft = nperseg if nfft is None else _static_int(nfft, "nfft")

    if x.size == 0 or (y is not None and y.size == 0):
        length = x.shape[axis] if y is None else min(x.shape[axis], y.shape[axis])
        shape = x.shape[:axis] + (length,) + x.shape[axis + 1:]
        return (lnp.zeros(shape, freq_dtype), lnp.zeros(shape, freq_dtype),
                lnp.zeros(shape, result_dtype))

    x = lnp.moveaxis(x, axis, -1)
    if y is not None:
        y = lnp.moveaxis(y, axis, -1)
        if x.shape[-1] < y.shape[-1]:   # the shorter signal gets zeros at its end
            x = _zero_pad_end(x, y.shape[-1] - x.shape[-1])
        elif y.shape[-1] < x.shape[-1]:
            y = _zero_pad_end(y, x.shape[-1] - y.shape[-1])
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap

    signals = [x] if y is None else [x, y]
    extend = _BOUNDARY_EXTENSIONS[boundary]
    signals = [extend(s, nperseg // 2) for s in signals]
    if padded:   # zeros up to a whole number of segments
        missing = (-(signals[0].shape[-1] - nperseg) % step) % nperseg
        signals = [_zero_pad_end(s, missing) for s in signals]
    length = signals[0].shape[-1]

    if scaling == "density":
        scale = 1.0 / (fs * red.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / red.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = ufuncs.sqrt(scale)

    twosided = not return_onesided
    if return_onesided and any(lnp.iscomplexobj(s) for s in signals):
        twosided = True
        warnings.warn("Input data is complex, switching to return_onesided=False",
                      stacklevel=3)
    freqs = (np_fft.fftfreq if twosided else np_fft.rfftfreq)(nfft, 1 / fs,
                                                              dtype=freq_dtype)

    detrend_func = _detrend_function(detrend_type, axis)
    spectra = [_segment_spectra(s, win, detrend_func, nperseg, noverlap, nfft, twosided)
               for s in signals]
    if y is not None:
        result = ufuncs.conjugate(spectra[0]) * spectra[1]
    elif mode == "psd":
        result = ufuncs.conjugate(spectra[0]) * spectra[0]
    else:
        result = spectra[0]
    result = result * scale.astype(result_dtype)
    if not twosided and mode == "psd":   # fold in the negative frequencies but DC/Nyquist
        end = None if nfft % 2 else -1
        result = result.at[..., 1:end].multiply(2)

    times = np.arange(nperseg / 2, length - nperseg / 2 + 1, step)
    if boundary is not None:
        times = times - nperseg / 2
    times = lnp.asarray(times, freq_dtype) / fs

    result = result.astype(result_dtype)
    if y is None and mode != "stft":   # an auto spectrum is real
        result = ufuncs.real(result)
    return freqs, times, lnp.moveaxis(result, -1, axis)


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """Short-time Fourier transform of x along axis: (frequencies, segment times, Zxx),
    with the frequencies in place of axis and the segment times last."""
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, "spectrum", axis, "stft", boundary, padded)


def _average_segments(pxy, average):
    """The mean or the bias-corrected median over the last (segments) axis."""
    if pxy.ndim < 2 or pxy.size == 0:
        return pxy
    if pxy.shape[-1] == 1:
        return lnp.reshape(pxy, pxy.shape[:-1])
    if average == "mean":
        return red.mean(pxy, axis=-1)
    if average != "median":
        raise ValueError(f'average must be "median" or "mean", got {average}')
    n = pxy.shape[-1]
    evens = np.arange(2.0, n, 2)
    bias = 1 + np.sum(1.0 / (evens + 1) - 1.0 / evens)   # the median's bias vs the mean
    if lnp.iscomplexobj(pxy):
        median = (sorting.median(ufuncs.real(pxy), axis=-1)
                  + 1j * sorting.median(ufuncs.imag(pxy), axis=-1))
    else:
        median = sorting.median(pxy, axis=-1)
    return median / lnp.asarray(bias, pxy.dtype)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):
    """Cross spectral density of x and y by Welch's method: (frequencies, Pxy). y=None
    gives x's power spectral density (csd(x, x) is computed as for two signals, like
    scipy's csd(x, x.copy()))."""
    freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                     return_onesided, scaling, axis, "psd")
    if y is not None:
        pxy = pxy.astype(dtypes.complex_dtype(pxy.dtype))
    return freqs, _average_segments(pxy, average)


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """Power spectral density of x by Welch's method: (frequencies, Pxx)."""
    freqs, pxx = csd(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                     return_onesided, scaling, axis, average)
    return freqs, ufuncs.real(pxx)


def _overlap_and_add(frames, step):
    """Frames (..., n, length) summed into one signal, frame i starting at i * step."""
    *batch, count, length = frames.shape
    positions = (np.arange(count) * step)[:, None] + np.arange(length)
    out = lnp.zeros((*batch, step * (count - 1) + length), frames.dtype)
    return out.at[..., positions].add(frames)


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """Inverse short-time Fourier transform: (times, x), by weighted overlap-add."""
    check_arraylike("istft", Zxx)
    Zxx = lnp.asarray(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, Zxx.ndim, "freq_axis")
    time_axis = canonicalize_axis(time_axis, Zxx.ndim, "time_axis")
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = Zxx.astype(dtypes.complex_dtype(dtypes.to_inexact_dtype(Zxx.dtype)))

    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    # as in JAX, nperseg=0 and noverlap=0 mean "the default"
    nperseg = _static_int(nperseg or n_default, "nperseg")
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft = n_default + 1 if input_onesided and nperseg == n_default + 1 else n_default
    else:
        nfft = _static_int(nfft, "nfft")
    if nfft < nperseg:
        raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = _static_int(noverlap or nperseg // 2, "noverlap")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")

    outer = tuple(i for i in range(Zxx.ndim) if i not in (time_axis, freq_axis))
    Zxx = lnp.transpose(Zxx, outer + (time_axis, freq_axis))
    inverse = np_fft.irfft if input_onesided else np_fft.ifft
    frames = inverse(Zxx, n=nfft, axis=-1)[..., :nperseg]   # (..., segments, nperseg)

    if isinstance(window, (str, tuple)):
        win = _window(window, nperseg, frames.dtype)
    else:
        win = lnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
    frames = frames * red.sum(win)   # undoes stft's 'spectrum' scaling
    x = _overlap_and_add(frames * win, nperseg - noverlap)
    norm = _overlap_and_add(lnp.broadcast_to(win * win, (frames.shape[-2], nperseg)),
                            nperseg - noverlap)
    if boundary:   # drop the points stft's boundary extension added
        x = x[..., nperseg // 2:-(nperseg // 2)]
        norm = norm[..., nperseg // 2:-(nperseg // 2)]
    x = x / lnp.where(norm > 1e-10, norm, 1.0)

    if x.ndim > 1 and time_axis != Zxx.ndim - 1:   # the time axis goes back in place
        x = lnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    times = lnp.arange(x.shape[0], dtype=dtypes.real_dtype(x.dtype)) / fs
    return times, x


__all__ = ["csd", "istft", "stft", "welch"]
