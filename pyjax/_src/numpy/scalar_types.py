"""jnp.float32 and friends: usable as dtypes (np.dtype(jnp.float32)) and callable to make
arrays (jnp.float32(3) is a 0-d float32 Array), as in JAX."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from pyjax._src import dtypes


class _ScalarMeta(type):
    # As in JAX: equal to itself and to what its NumPy scalar type equals (np.float32, and
    # np.dtype('float32') through NumPy), never to strings or unrelated objects. Never
    # raises: what NumPy cannot compare (an ndarray) is left to the other operand.
    def __eq__(cls, other):
        if other is cls:
            return True
        try:
            equal = cls.dtype.type == other
        except TypeError:
            return NotImplemented
        return equal if type(equal) is bool else NotImplemented

    def __ne__(cls, other):
        equal = _ScalarMeta.__eq__(cls, other)
        return equal if equal is NotImplemented else not equal

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __repr__(cls):
        return f"<class 'jax.numpy.{cls.__name__}'>"

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __call__(cls, x):
        from pyjax._src.numpy.lax_numpy import asarray
        return asarray(x, dtype=cls.dtype)


def _make(name, dtype):
    return _ScalarMeta(name, (object,), {"dtype": np.dtype(dtype)})


bool_ = _make("bool_", np.bool_)
int8, int16, int32, int64 = (_make(n, n) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_make(n, n) for n in ("uint8", "uint16", "uint32",
                                                        "uint64"))
float16, float32, float64 = (_make(n, n) for n in ("float16", "float32", "float64"))
bfloat16 = _make("bfloat16", dtypes.bfloat16)
complex64, complex128 = _make("complex64", np.complex64), _make("complex128", np.complex128)
float8_e4m3fn = _make("float8_e4m3fn", ml_dtypes.float8_e4m3fn)
float8_e5m2 = _make("float8_e5m2", ml_dtypes.float8_e5m2)
# The narrow ml_dtypes formats, as dtypes for storage and conversion.
(float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e3m4, float8_e4m3, float8_e4m3b11fnuz,
 float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu, int1, int2, int4, uint1, uint2, uint4) = (
    _make(n, getattr(ml_dtypes, n)) for n in (
        "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
        "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
        "int1", "int2", "int4", "uint1", "uint2", "uint4"))
int_, uint, float_, complex_ = int64, uint64, float64, complex128
single, double = float32, float64
csingle, cdouble = complex64, complex128
