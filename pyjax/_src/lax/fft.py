"""The fft primitive: FFT, IFFT, RFFT and IRFFT over the trailing len(fft_lengths)
dimensions. Linear; transposes as JAX defines them; impl scipy.fft, lowering stablehlo.fft.
Imports core, interpreters, backends.stablehlo and the lax families."""
from __future__ import annotations

import enum
import math

import numpy as np

from pyjax._src import dtypes
from pyjax._src.array import as_array
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.lax import builders as b
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import structural as st


class FftType(enum.IntEnum):
    """Which transform fft computes."""
    FFT = 0      # complex -> complex
    IFFT = 1     # complex -> complex, inverse (scaled by 1/n)
    RFFT = 2     # real -> complex, the non-negative frequencies only
    IRFFT = 3    # complex (non-negative frequencies) -> real, inverse

    def __repr__(self):
        return f"FftType.{self.name}"

    __str__ = __repr__


def _real_of(dtype):
    return dtypes.real_dtype(dtypes.complex_dtype(dtype))


def _fft_abstract_eval(x, *, fft_type, fft_lengths):
    fft_type = FftType(fft_type)
    k = len(fft_lengths)
    lengths = tuple(fft_lengths)
    if not 1 <= k <= 3:
        raise ValueError(f"fft takes 1 to 3 fft_lengths, got fft_lengths={lengths}")
    if x.ndim < k:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                         f"dimensions as fft_lengths {lengths}.")
    wants_real = fft_type == FftType.RFFT
    if wants_real and x.dtype not in (np.float32, np.float64):
        raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype.name}")
    if not wants_real and x.dtype not in (np.complex64, np.complex128):
        raise TypeError(f"fft of type {fft_type.name} takes complex64 or complex128 "
                        f"operands, got {x.dtype.name}")
    if fft_type == FftType.RFFT:
        if x.shape[-k:] != lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to "
                             f"fft_lengths {lengths}")
        shape = x.shape[:-1] + (lengths[-1] // 2 + 1,)
        return ShapedArray(shape, dtypes.complex_dtype(x.dtype))
    if fft_type == FftType.IRFFT:
        expected = lengths[:-1] + (lengths[-1] // 2 + 1,)
        if x.shape[-k:] != expected:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal to "
                             f"all except the last fft_length, got fft_lengths={lengths}")
        return ShapedArray(x.shape[:-k] + lengths, _real_of(x.dtype))
    if x.shape[-k:] != lengths:
        raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                         f"fft_lengths {lengths}")
    return ShapedArray(x.shape, x.dtype)


def _fft_impl(x, *, fft_type, fft_lengths):
    fft_type = FftType(fft_type)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if 0 in x.shape or 0 in fft_lengths:   # NumPy refuses empty transforms; XLA gives 0s
        out_aval = _fft_abstract_eval(get_aval(x), fft_type=fft_type, fft_lengths=fft_lengths)
        return np.zeros(out_aval.shape, out_aval.dtype)
    # scipy.fft is pocketfft, the library XLA's CPU FFT (ducc) grew from: with the axes
    # taken in XLA's order (the last first), eager results equal jitted ones bit for bit
    # for lengths below 512 (beyond, ducc's kernels differ by rounding only)
    import scipy.fft   # imported on first use: it is slow to import
    if fft_type == FftType.FFT:
        out = scipy.fft.fftn(x, axes=axes[::-1])
    elif fft_type == FftType.IFFT:
        out = scipy.fft.ifftn(x, axes=axes[::-1])
    elif fft_type == FftType.RFFT:
        out = scipy.fft.rfftn(x, axes=axes)
    else:
        out = scipy.fft.irfftn(x, s=fft_lengths, axes=axes)
    dtype = dtypes.complex_dtype(x.dtype) if fft_type != FftType.IRFFT else _real_of(x.dtype)
    return out.astype(dtype)


def _rfft_transpose(ct, fft_lengths):
    """RFFT is a full FFT of the real operand, sliced to the non-negative frequencies:
    its transpose zero-pads the cotangent, runs the FFT and keeps the real part."""
    aval = get_aval(ct)
    pad = [(0, 0, 0)] * (aval.ndim - 1) + [(0, fft_lengths[-1] - aval.shape[-1], 0)]
    full = st.pad(ct, np.array(0, aval.dtype), pad)
    return ew.real(fft(full, FftType.FFT, fft_lengths))


def _irfft_transpose(ct, fft_lengths):
    """IRFFT counts each strictly positive frequency below Nyquist twice (it stands for its
    negative twin too): its transpose is a scaled RFFT with those frequencies doubled,
    conjugated as JAX's convention for complex cotangents asks."""
    x = fft(ct, FftType.RFFT, fft_lengths)
    aval = get_aval(x)
    n = aval.shape[-1]
    odd = fft_lengths[-1] % 2
    weights = np.concatenate([np.ones(1), np.full(n - 2 + odd, 2.0),
                              np.ones(1 - odd)])[:n] / math.prod(fft_lengths)
    scaled = ew.mul(x, st.broadcast_in_dim(weights.astype(aval.dtype), aval.shape,
                                           (aval.ndim - 1,)))
    return ew.conj(scaled)


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    fft_type = FftType(fft_type)
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    # The DFT matrix is symmetric: FFT and IFFT are their own transposes.
    return [fft(ct, fft_type, fft_lengths)]


def _fft_batch(args, dims, *, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    x = batching.moveaxis(x, d, 0)
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


def _lower_fft(ctx, x, *, fft_type, fft_lengths):
    name = FftType(fft_type).name
    return ctx.op("stablehlo.fft", [x], ctx.avals_out[0].strip_weak_type(),
                  {"fft_type": f"#stablehlo<fft_type {name}>",
                   "fft_length": hlo.i64_array(fft_lengths)})


def _fft_samples():
    c, f = np.complex64, np.float32
    return [b.Sample([b.random_values((4,), c)], {"fft_type": FftType.FFT,
                                                  "fft_lengths": (4,)}),
            b.Sample([b.random_values((2, 3, 4), c)], {"fft_type": FftType.IFFT,
                                                       "fft_lengths": (3, 4)}),
            b.Sample([b.random_values((2, 5), f)], {"fft_type": FftType.RFFT,
                                                    "fft_lengths": (5,)}),
            b.Sample([b.random_values((3, 4), f)], {"fft_type": FftType.RFFT,
                                                    "fft_lengths": (3, 4)}),
            b.Sample([b.random_values((2, 3), c)], {"fft_type": FftType.IRFFT,
                                                    "fft_lengths": (4,)}),
            b.Sample([b.random_values((3, 3), c)], {"fft_type": FftType.IRFFT,
                                                    "fft_lengths": (3, 5)})]


fft_p = define_primitive(
    "fft", impl=_fft_impl, abstract_eval=_fft_abstract_eval, jvp=ad.linear_jvp,
    transpose=_fft_transpose, batch=_fft_batch, lower=_lower_fft, samples=lambda: _fft_samples())


def fft(x, fft_type, fft_lengths):
    """The fast Fourier transform of `fft_type` over the trailing len(fft_lengths)
    dimensions of x (lax: no dtype promotion)."""
    if isinstance(fft_type, str):
        try:
            fft_type = FftType[fft_type.upper()]
        except KeyError:
            raise ValueError(f"unknown fft_type {fft_type!r}; use one of "
                             f"{[t.name for t in FftType]}") from None
    fft_type = FftType(fft_type)
    lengths = tuple(int(n) for n in fft_lengths)
    aval = get_aval(x)
    if fft_type == FftType.RFFT and dtypes.is_complex(aval.dtype):
        raise ValueError("only real valued inputs supported for rfft")
    if fft_type != FftType.RFFT and not dtypes.is_complex(aval.dtype):
        x = ew.convert_element_type(x, dtypes.complex_dtype(aval.dtype))
    if not lengths:   # a transform over no dimensions is the identity, as in JAX
        return as_array(x)
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=lengths)


__all__ = ["FftType", "fft", "fft_p"]
