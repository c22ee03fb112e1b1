"""Public jax.numpy: the NumPy API on immutable arrays. Re-exports only; the code lives in
pyjax._src.numpy."""
import numpy as _np

import pyjax._src.numpy.array_methods  # noqa: F401  (installs operators on arrays)
from pyjax._src.dtypes import finfo, iinfo  # noqa: F401
from pyjax._src.numpy.lax_numpy import (  # noqa: F401
    arange, array, array_split, asarray, astype, atleast_1d, atleast_2d, atleast_3d,
    broadcast_arrays, broadcast_shapes, broadcast_to, can_cast, clip, column_stack, concat,
    concatenate, copy, dot, dsplit, dstack, empty, empty_like, expand_dims, eye, flip,
    fliplr, flipud, full, full_like, hsplit, hstack, identity, inner, isdtype,
    iscomplexobj, isrealobj, isscalar, issubdtype, linspace, logspace, matmul,
    matrix_transpose, moveaxis, ndarray, ndim, ones, ones_like, outer, permute_dims,
    promote_types, ravel, reshape, result_type, row_stack, select, shape, size, split,
    squeeze, stack, swapaxes, transpose, vdot, vsplit, vstack, where, zeros, zeros_like,
)
from pyjax._src.numpy.reductions import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, average, count_nonzero, cumprod, cumsum,
    cumulative_prod, cumulative_sum, max, mean, min, prod, ptp, std, sum, var,
)
from pyjax._src.numpy.scalar_types import (  # noqa: F401
    bfloat16, bool_, cdouble, complex64, complex128, complex_, csingle, double,
    float8_e4m3fn, float8_e5m2, float16, float32, float64, float_, half, int8, int16,
    int32, int64, int_, single, uint, uint8, uint16, uint32, uint64,
)
from pyjax._src.numpy.ufuncs import (  # noqa: F401
    abs, absolute, acos, acosh, add, angle, arccos, arccosh, arcsin, arcsinh, arctan,
    arctan2, arctanh, around, asin, asinh, atan, atan2, atanh, bitwise_and,
    bitwise_invert, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, conj, conjugate,
    copysign, cos, cosh, deg2rad, degrees, divide, divmod, equal, exp, exp2, expm1, fix,
    float_power, floor, floor_divide, fmax, fmin, fmod, gcd, greater, greater_equal,
    heaviside, hypot, imag, invert, isfinite, isinf, isnan, lcm, ldexp, left_shift, less,
    less_equal, log, log1p, log2, log10, logaddexp, logaddexp2, logical_and, logical_not,
    logical_or, logical_xor, maximum, minimum, mod, multiply, negative, nextafter,
    not_equal, positive, pow, power, rad2deg, radians, real, reciprocal, remainder,
    right_shift, rint, round, sign, signbit, sin, sinc, sinh, sqrt, square, subtract, tan,
    tanh, true_divide, trunc,
)

bool = bool_
dtype = _np.dtype
generic, number, inexact, floating, complexfloating = (
    _np.generic, _np.number, _np.inexact, _np.floating, _np.complexfloating)
integer, signedinteger, unsignedinteger = _np.integer, _np.signedinteger, _np.unsignedinteger
pi, e, euler_gamma, inf, nan = _np.pi, _np.e, _np.euler_gamma, _np.inf, _np.nan
newaxis = None
