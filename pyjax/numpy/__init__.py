"""Public jax.numpy: the NumPy API on immutable arrays. Re-exports only; the code lives in
pyjax._src.numpy."""
import numpy as _np

import pyjax._src.numpy.array_methods  # noqa: F401  (installs operators on arrays)
from pyjax._src.numpy.array_api_metadata import (  # noqa: F401
    __array_api_version__, __array_namespace_info__,
)
from pyjax._src.dtypes import finfo, iinfo  # noqa: F401
from pyjax._src.numpy.indexing import (  # noqa: F401
    argwhere, flatnonzero, nonzero, put_along_axis, take, take_along_axis, where,
)
from pyjax._src.numpy.lax_numpy import (  # noqa: F401
    arange, array, array_split, asarray, astype, atleast_1d, atleast_2d, atleast_3d,
    broadcast_arrays, broadcast_shapes, broadcast_to, can_cast, clip, column_stack, concat,
    concatenate, copy, dot, dsplit, dstack, empty, empty_like, expand_dims, eye, flip,
    fliplr, flipud, full, full_like, hsplit, hstack, identity, inner, isdtype,
    iscomplexobj, isrealobj, isscalar, issubdtype, linspace, logspace, matmul,
    matrix_transpose, moveaxis, ndarray, ndim, ones, ones_like, outer, permute_dims,
    promote_types, ravel, reshape, result_type, select, shape, size, split,
    squeeze, stack, swapaxes, transpose, vdot, vsplit, vstack, zeros, zeros_like,
)
from pyjax._src.numpy.einsum import einsum, einsum_path  # noqa: F401
from pyjax._src.numpy.functional import (  # noqa: F401
    apply_along_axis, apply_over_axes, array_repr, array_str, c_, from_dlpack, frombuffer,
    fromfile,
    fromfunction, fromiter, frompyfunc, fromstring, get_printoptions, index_exp, load, mgrid,
    ogrid, printoptions, r_, ravel_multi_index, s_, save, savez, set_printoptions, ufunc,
    unravel_index, vectorize,
)
from pyjax._src.numpy.array_manipulation import (  # noqa: F401
    append, block, choose, compress, delete, diag, diag_indices, diag_indices_from, diagflat,
    diagonal, extract, fill_diagonal, indices, insert, ix_, kron, mask_indices, matvec,
    meshgrid, pad, piecewise, place, put, repeat, resize, roll, rollaxis, rot90, tensordot,
    tile, trace, tri, tril, tril_indices, tril_indices_from, trim_zeros, triu, triu_indices,
    triu_indices_from, unstack, vander, vecdot, vecmat,
)
from pyjax._src.numpy.numerical import (  # noqa: F401
    allclose, array_equal, array_equiv, bartlett, bincount, bitwise_count, bitwise_left_shift,
    bitwise_right_shift, blackman, corrcoef, cov, cross, diff, ediff1d, fabs,
    geomspace, gradient, hamming, hanning, histogram, histogram2d, histogram_bin_edges,
    histogramdd, i0, interp, isclose, iscomplex, isneginf, isposinf, isreal, iterable, kaiser,
    modf, nan_to_num, packbits, spacing, trapezoid, unpackbits, unwrap,
)
from pyjax._src.numpy.nan_reductions import (  # noqa: F401
    nanargmax, nanargmin, nancumprod, nancumsum, nanmax, nanmean, nanmin, nanprod, nanstd,
    nansum, nanvar,
)
from pyjax._src.numpy.polynomial import (  # noqa: F401
    poly, polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, polyval, roots,
)
from pyjax._src.numpy.reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, average, count_nonzero, cumprod, cumsum,
    cumulative_prod, cumulative_sum, max, mean, min, prod, ptp, std, sum, var,
)
from pyjax._src.numpy.scalar_types import (  # noqa: F401
    bfloat16, bool_, cdouble, complex64, complex128, complex_, csingle, double,
    float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e3m4, float8_e4m3,
    float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
    float8_e8m0fnu, float16, float32, float64, float_, int1, int2, int4, int8, int16,
    int32, int64, int_, single, uint, uint1, uint2, uint4, uint8, uint16, uint32, uint64,
)
from pyjax._src.numpy.signal import convolve, correlate  # noqa: F401
from pyjax._src.numpy.setops import (  # noqa: F401
    intersect1d, isin, setdiff1d, setxor1d, union1d,
)
from pyjax._src.numpy.sorting import (  # noqa: F401
    argpartition, argsort, digitize, lexsort, median, nanmedian, nanpercentile, nanquantile,
    partition, percentile, quantile, searchsorted, sort, sort_complex, unique, unique_all,
    unique_counts, unique_inverse, unique_values,
)
from pyjax._src.numpy.ufunc_objects import (  # noqa: F401
    add, bitwise_and, bitwise_or, bitwise_xor, logaddexp, logaddexp2, logical_and,
    logical_or, logical_xor, maximum, minimum, multiply, negative, subtract,
)
from pyjax._src.numpy.ufuncs import (  # noqa: F401
    abs, absolute, acos, acosh, angle, arccos, arccosh, arcsin, arcsinh, arctan, arctan2,
    arctanh, around, asin, asinh, atan, atan2, atanh, bitwise_invert, bitwise_not, cbrt,
    ceil, conj, conjugate, copysign, cos, cosh, deg2rad, degrees, divide, divmod, equal,
    exp, exp2, expm1, float_power, floor, floor_divide, fmax, fmin, fmod, frexp, gcd,
    greater,
    greater_equal, heaviside, hypot, imag, invert, isfinite, isinf, isnan, lcm, ldexp,
    left_shift, less, less_equal, log, log1p, log2, log10, logical_not, mod, nextafter,
    not_equal, positive, pow, power, rad2deg, radians, real, reciprocal, remainder,
    right_shift, rint, round, sign, signbit, sin, sinc, sinh, sqrt, square, tan, tanh,
    true_divide, trunc,
)

bool = bool_
dtype = _np.dtype
generic, number, inexact, floating, complexfloating = (
    _np.generic, _np.number, _np.inexact, _np.floating, _np.complexfloating)
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger
character, flexible, object_ = _np.character, _np.flexible, _np.object_
ComplexWarning = _np.exceptions.ComplexWarning
pi, e, euler_gamma, inf, nan = _np.pi, _np.e, _np.euler_gamma, _np.inf, _np.nan
newaxis = None



def __getattr__(name):
    """Loads the fft and linalg submodules on first use (PEP 562), as jax.numpy exposes them."""
    if name in ("fft", "linalg"):
        import importlib
        return importlib.import_module(f"pyjax.numpy.{name}")
    raise AttributeError(f"module 'pyjax.numpy' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"fft", "linalg"})
