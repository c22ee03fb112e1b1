"""dtypes (level 0): canonicalisation under the x64 flag, weak types of Python scalars,
and JAX's type promotion lattice. Imports only config and numpy/ml_dtypes."""
from __future__ import annotations

import abc
import functools
import warnings

import ml_dtypes
import numpy as np

from pyjax._src import config


class TypePromotionError(ValueError):
    """Two dtypes have no implicit promotion path (e.g. float8 with float16)."""


bfloat16 = np.dtype(ml_dtypes.bfloat16)
# Narrow floats: storage formats with no implicit promotion to or from other types.
float8_dtypes = tuple(
    np.dtype(getattr(ml_dtypes, name)) for name in (
        "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
        "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float4_e2m1fn",
        "float6_e2m3fn", "float6_e3m2fn") if hasattr(ml_dtypes, name))
int2, int4 = np.dtype(ml_dtypes.int2), np.dtype(ml_dtypes.int4)
uint2, uint4 = np.dtype(ml_dtypes.uint2), np.dtype(ml_dtypes.uint4)
# The dtype of tangents of integer and boolean values: a zero-size void.
float0 = np.dtype([("float0", np.void, 0)])

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

_SIGNED = (int2, int4, int8, int16, int32, int64)
_UNSIGNED = (uint2, uint4, uint8, uint16, uint32, uint64)
_FLOATS = (bfloat16, float16, float32, float64) + float8_dtypes
_COMPLEX = (complex64, complex128)
supported_dtypes = (bool_,) + _SIGNED + _UNSIGNED + _FLOATS + _COMPLEX
# NumPy's variable-width strings: as in JAX, an array may hold them on CPU devices
# (device_put, jnp.asarray of a NumPy string array), but no computation takes them and
# they join no type promotion.
def is_string_dtype(dtype):
    return isinstance(dtype, np.dtypes.StringDType)

_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}
# What each 64-bit dtype becomes while jax_enable_x64 is off.
X64_TO_X32 = _TO_32


def x64_enabled():
    return config.enable_x64.value


@functools.lru_cache(maxsize=None)
def _canonicalize(dtype, x64):
    if dtype == float0 or is_string_dtype(dtype):
        return dtype
    if dtype not in supported_dtypes:
        raise TypeError(f"JAX only supports number, bool, and string dtypes, got dtype {dtype}")
    return dtype if x64 else _TO_32.get(dtype, dtype)


def canonicalize_dtype(dtype):
    """The dtype JAX actually uses for `dtype`: 64-bit becomes 32-bit when x64 is off."""
    return _canonicalize(np.dtype(dtype), config.enable_x64.value)


_PYTHON_TYPE_DEFAULTS = {bool: lambda: bool_, int: lambda: default_int_dtype(),
                         float: lambda: default_float_dtype(),
                         complex: lambda: default_complex_dtype()}


def check_user_dtype(dtype, fun_name=""):
    """The dtype a `dtype=` argument of `fun_name` asks for, as JAX computes in it: Python
    types give the default dtypes; a 64-bit dtype while jax_enable_x64 is off follows
    jax_explicit_x64_dtypes (warn and truncate, raise, or keep it)."""
    if isinstance(dtype, type) and dtype in _PYTHON_TYPE_DEFAULTS:
        return _PYTHON_TYPE_DEFAULTS[dtype]()
    wanted = np.dtype(dtype)
    if wanted not in _TO_32 or config.enable_x64.value:
        return _canonicalize(wanted, True)
    mode = config.explicit_x64_dtypes.value
    if mode == config.ExplicitX64Mode.ALLOW:
        return wanted
    where = f" requested in {fun_name}" if fun_name else ""
    if mode == config.ExplicitX64Mode.ERROR:
        raise ValueError(f"Explicitly requested dtype {wanted}{where} is not available. To "
                         "enable more dtypes, set the jax_enable_x64 or "
                         "jax_explicit_x64_dtypes configuration options.")
    warnings.warn(f"Explicitly requested dtype {wanted}{where} is not available, and will "
                  f"be truncated to dtype {_TO_32[wanted]}. To enable more dtypes, set the "
                  "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
                  "environment variable.", UserWarning, stacklevel=3)
    return _TO_32[wanted]


def default_int_dtype():
    return int64 if config.enable_x64.value else int32


def default_uint_dtype():
    return uint64 if config.enable_x64.value else uint32


def default_float_dtype():
    return float64 if config.enable_x64.value else float32


def default_complex_dtype():
    return complex128 if config.enable_x64.value else complex64


_PYTHON_SCALAR_KIND = {bool: "b", int: "i", float: "f", complex: "c"}


def python_scalar_dtype(x):
    """Default dtype of a Python scalar (bool stays strong; int/float/complex are weak)."""
    kind = _PYTHON_SCALAR_KIND[type(x)] if type(x) in _PYTHON_SCALAR_KIND else None
    if kind is None:
        for t, k in _PYTHON_SCALAR_KIND.items():
            if isinstance(x, t):
                kind = k
    return {"b": bool_, "i": default_int_dtype(), "f": default_float_dtype(),
            "c": default_complex_dtype()}[kind]


def is_python_scalar(x):
    return type(x) in _PYTHON_SCALAR_KIND or (
        isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic))


class extended(np.generic):
    """The scalar type of the dtypes NumPy has no type for (typed PRNG keys): for them,
    issubdtype(dtype, extended) holds."""


class prng_key(extended):
    """The scalar type of typed PRNG key dtypes (key<fry>)."""


class ExtendedDType(abc.ABC):
    """Base class of the dtypes NumPy has no type for (typed PRNG keys): an instance is a
    dtype; its `type` is a subclass of `extended`."""

    @property
    @abc.abstractmethod
    def type(self) -> type: ...

    _rules = None

    # How jnp's structural functions (reshape, concatenate, indexing, ...) handle arrays
    # of this dtype: on their physical data, whose shape is the array's shape followed
    # by `physical_shape` (the data of one element).
    physical_shape: tuple = ()
    physical_dtype = None

    def to_physical(self, x):
        """The physical data of an array `x` of this dtype."""
        raise NotImplementedError

    def from_physical(self, data):
        """The array of this dtype over physical data `data`."""
        raise NotImplementedError

    def aval(self, shape):
        """The abstract value of an array of this dtype and `shape` (what
        ShapedArray(shape, dtype) gives, as in JAX)."""
        raise NotImplementedError


DType = np.dtype   # the annotation JAX's dtype helpers use for NumPy dtypes


def issubdtype(a, b):
    """np.issubdtype that also knows bfloat16 and float8 are floating, and the extended
    dtypes (their `type` is a subclass of `extended`)."""
    kind = getattr(a, "type", None)
    if not isinstance(a, (np.dtype, type)) and isinstance(kind, type) \
            and issubclass(kind, extended):
        return issubclass(kind, b) if isinstance(b, type) else a == b
    a = np.dtype(a) if not isinstance(a, type) or not issubclass(a, np.generic) else a
    if isinstance(b, type) and not issubclass(b, np.generic) and hasattr(b, "dtype"):
        b = np.dtype(b.dtype)   # a jnp scalar type (jnp.int4) stands for its dtype
    if isinstance(a, np.dtype) and a in _FLOATS and b in (np.floating, np.inexact, np.number):
        return True
    if isinstance(a, np.dtype) and a in _NARROW_INTS and isinstance(b, type):
        return b in (a.type, _NARROW_INTS[a], np.integer, np.number, np.generic)
    return np.issubdtype(a, b)


# ml_dtypes' narrow integers, which NumPy files under neither kind of integer.
_NARROW_INTS = {**{np.dtype(getattr(ml_dtypes, n)): np.signedinteger
                   for n in ("int1", "int2", "int4") if hasattr(ml_dtypes, n)},
                **{np.dtype(getattr(ml_dtypes, n)): np.unsignedinteger
                   for n in ("uint1", "uint2", "uint4") if hasattr(ml_dtypes, n)}}


def is_float(dtype):
    return np.dtype(dtype) in _FLOATS


def is_complex(dtype):
    return np.dtype(dtype) in _COMPLEX


_INEXACT = frozenset(_FLOATS + _COMPLEX)   # sets: these tests run on every eager op
_INTEGER = frozenset(_SIGNED + _UNSIGNED)


def is_inexact(dtype):
    return np.dtype(dtype) in _INEXACT


def is_int(dtype):
    return np.dtype(dtype) in _INTEGER


def itemsize_bits(dtype):
    """The bits one element of `dtype` takes (4 for int4 and float4_e2m1fn)."""
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    d = np.dtype(dtype)
    if d in _FLOATS and d.itemsize == 1:
        return ml_dtypes.finfo(d).bits
    if d in _SIGNED or d in _UNSIGNED or d in _NARROW_INTS:
        return ml_dtypes.iinfo(d).bits
    return d.itemsize * 8


def scalar_type_of(x):
    """The Python scalar type (bool, int, float or complex) of x's dtype."""
    d = getattr(x, "dtype", None)
    d = np.dtype(d if d is not None else python_scalar_dtype(x) if is_python_scalar(x)
                 else np.asarray(x).dtype)
    if d == bool_:
        return bool
    if d in _SIGNED or d in _UNSIGNED:
        return int
    if d in _FLOATS:
        return float
    if d in _COMPLEX:
        return complex
    raise TypeError(f"Value {x!r} with dtype {d} is not a valid JAX array type. Only arrays "
                    "of numeric types are supported by JAX.")


def finfo(dtype):
    return ml_dtypes.finfo(dtype)


def iinfo(dtype):
    return ml_dtypes.iinfo(dtype)


# --- the promotion lattice -------------------------------------------------------------
# Nodes are dtypes plus the three weak kinds "i*", "f*", "c*" (Python int/float/complex).
# result_type(a, b) is the least upper bound of a and b in this graph, as in JAX.
_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"
_LATTICE_EDGES = {
    bool_: [_WEAK_INT],
    # Narrow integers widen like the others: uintN -> uint2N and int2N, intN -> int2N.
    _WEAK_INT: [uint2, int2],
    uint2: [uint4, int4], uint4: [uint8, int8], int2: [int4], int4: [int8],
    uint8: [uint16, int16], uint16: [uint32, int32], uint32: [uint64, int64],
    uint64: [_WEAK_FLOAT],
    int8: [int16], int16: [int32], int32: [int64], int64: [_WEAK_FLOAT],
    _WEAK_FLOAT: [_WEAK_COMPLEX, bfloat16, float16, *float8_dtypes],
    bfloat16: [float32], float16: [float32], float32: [float64, complex64],
    float64: [complex128],
    _WEAK_COMPLEX: [complex64], complex64: [complex128], complex128: [],
    **{f8: [] for f8 in float8_dtypes},
}


def _upper_bounds(edges):
    bounds = {}
    for node in edges:
        seen, stack = {node}, [node]
        while stack:
            for nxt in edges[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        bounds[node] = frozenset(seen)
    return bounds


_UPPER_BOUNDS = _upper_bounds(_LATTICE_EDGES)
# With x64 off no promotion forms a 64-bit type from narrower inputs: uint32 meets the
# signed types at int32 (JAX's lattice; the result is already canonical).
_X32_UPPER_BOUNDS = _upper_bounds({**_LATTICE_EDGES, uint32: [uint64, int32]})
# jax_numpy_dtype_promotion='strict': only weak (Python scalar) types promote, each to the
# types of its kind and up; two different strong dtypes never meet.
_STRICT_EDGES = {
    **{node: [] for node in _LATTICE_EDGES},
    _WEAK_INT: [_WEAK_FLOAT, *_SIGNED, *_UNSIGNED],
    _WEAK_FLOAT: [_WEAK_COMPLEX, *_FLOATS],
    _WEAK_COMPLEX: list(_COMPLEX),
}
_STRICT_UPPER_BOUNDS = _upper_bounds(_STRICT_EDGES)


def _lattice_node(dtype, weak):
    if not weak:
        return dtype
    if dtype in _COMPLEX:
        return _WEAK_COMPLEX
    if dtype in _FLOATS:
        return _WEAK_FLOAT
    if dtype in _SIGNED or dtype in _UNSIGNED:
        return _WEAK_INT
    return dtype


def _join(nodes):
    return _join_in(nodes, config.numpy_dtype_promotion.value == "strict",
                    config.enable_x64.value)


@functools.lru_cache(maxsize=4096)
def _join_in(nodes, strict, x64):
    bounds = (_STRICT_UPPER_BOUNDS if strict else _UPPER_BOUNDS if x64
              else _X32_UPPER_BOUNDS)
    common = functools.reduce(frozenset.intersection, (bounds[n] for n in nodes))
    for cand in common:  # the least bound is the one every other common bound is above
        if all(other in bounds[cand] for other in common):
            return cand
    names = ", ".join(str(n) for n in nodes)
    if strict:
        raise TypePromotionError(
            f"Input dtypes {names} have no available implicit dtype promotion path when "
            "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the "
            "desired output type, or set jax_numpy_dtype_promotion=standard.")
    narrow = sorted({ml_dtypes.finfo(n).bits for n in nodes
                     if isinstance(n, np.dtype) and n in _FLOATS and n.itemsize == 1},
                    reverse=True)
    why = (f" To avoid unintended promotion, {narrow[0]}-bit floats do not support "
           "implicit promotion." if narrow else "")
    raise TypePromotionError(
        f"Input dtypes {names} have no available implicit dtype promotion path.{why} "
        "Convert one of them explicitly with .astype() to the dtype you want (e.g. "
        "x.astype('float32')).")


_WEAK_DEFAULTS = {_WEAK_INT: default_int_dtype, _WEAK_FLOAT: default_float_dtype,
                  _WEAK_COMPLEX: default_complex_dtype}


def dtype_and_weak_type(x):
    """(dtype before canonicalisation, weak flag) of any array-like or dtype-like input."""
    if is_python_scalar(x):
        return python_scalar_dtype(x), type(x) is not bool and not isinstance(x, bool)
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype, False
    if isinstance(x, type) and x in _PYTHON_SCALAR_KIND:
        return python_scalar_dtype(x()), x is not bool
    if hasattr(x, "dtype") and not isinstance(x, (str, type)):
        return np.dtype(x.dtype), False
    return np.dtype(x), False


def _holds_explicit_64bit(x):
    """Whether x is an array that is 64-bit while x64 is off: one made on explicit request
    under jax_explicit_x64_dtypes=allow, whose dtype promotion keeps."""
    aval = getattr(x, "aval", None)
    return aval is not None and aval.dtype in _TO_32 and not aval.weak_type


_WEAK_DEFAULTS_64 = {_WEAK_INT: int64, _WEAK_FLOAT: float64, _WEAK_COMPLEX: complex128}


def _promote(items, uncanonical_defaults=False):
    """items: (dtype, weak) pairs -> (dtype, weak) of the result."""
    nodes = tuple(dict.fromkeys(_lattice_node(np.dtype(d), w) for d, w in items))
    if len(nodes) > 1:
        for node in nodes:
            if is_string_dtype(node):
                raise ValueError(f"dtype={node!r} is not a valid dtype for JAX type "
                                 "promotion.")
    joined = nodes[0] if len(nodes) == 1 else _join(nodes)
    if isinstance(joined, str):
        if uncanonical_defaults:
            return _WEAK_DEFAULTS_64[joined], True
        return _WEAK_DEFAULTS[joined](), True
    return joined, False


def result_type(*args, return_weak_type_flag=False):
    """JAX's result_type: the lattice join of the arguments' dtypes, canonicalised."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    dtype, weak = _promote([dtype_and_weak_type(a) for a in args])
    dtype = _canonicalize(dtype, True)   # only number and bool dtypes
    if dtype in _TO_32 and not config.enable_x64.value and not any(
            _holds_explicit_64bit(a) for a in args):
        dtype = _TO_32[dtype]
    return (dtype, weak) if return_weak_type_flag else dtype


def promote_types(a, b):
    """The strong dtype both a and b promote to (dtypes only; no weak types)."""
    # As in JAX, a weak result here uses NumPy's 64-bit defaults, not canonicalised ones.
    # Python's int/float/complex types count as weak, as in JAX.
    items = [(_PY_TYPE_DTYPES[t], True) if t in _PY_TYPE_DTYPES else (np.dtype(t), False)
             for t in (a, b)]
    return _promote(items, True)[0]


_PY_TYPE_DTYPES = {int: int64, float: float64, complex: complex128}


def to_inexact_dtype(dtype):
    """The floating dtype an integer or bool dtype becomes in sin, mean, ...: as in JAX
    0.10, float32 for types of up to 32 bits and float64 for 64-bit ones (float32 again
    with x64 off)."""
    dtype = np.dtype(dtype)
    if is_inexact(dtype):
        return dtype
    return canonicalize_dtype(float64 if dtype.itemsize == 8 else float32)


def real_dtype(dtype):
    """The dtype of dtype's real part (float32 for complex64); real dtypes are their own."""
    return np.zeros((), dtype).real.dtype


def complex_dtype(dtype):
    """The complex dtype that holds dtype's values (complex64 for float32 and narrower)."""
    return np.result_type(dtype, np.complex64)


def dtype_name(dtype):
    """Short names used in jaxpr text and avals: f32, i32, bf16, bool..."""
    return _SHORT_NAMES.get(np.dtype(dtype), np.dtype(dtype).name)


_SHORT_NAMES = {bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
                uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
                bfloat16: "bf16", float16: "f16", float32: "f32", float64: "f64",
                complex64: "c64", complex128: "c128", float0: "float0"}
