"""Numeric precision: the option types Precision, DotAlgorithm and DotAlgorithmPreset
(dot and conv precision=) and RoundingMethod (lax.round), and the ops about precision:
mulhi (mulhi_p) and reduce_precision (reduce_precision_p) with all their rules, and
reciprocal. Imports core, interpreters,
backends.stablehlo and the lax families."""
from __future__ import annotations

import enum
import operator
import typing

import numpy as np

from pyjax._src import config, dtypes
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import batching
from pyjax._src.interpreters.ad import linear_jvp, zero_jvp
from pyjax._src.lax import builders as b
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.builders import FLOAT, INT, binary_op


# --- option enums -------------------------------------------------------------------------

class Precision(enum.Enum):
    """Precision of the operands of a matmul or convolution on accelerators: DEFAULT
    (fastest; bfloat16 passes on TPU), HIGH, HIGHEST (full float32). Also made from the
    names 'default', 'high', 'highest', 'fastest', 'bfloat16', 'tensorfloat32', 'float32'.
    On CPU every precision computes in the operands' own type."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        if isinstance(value, str) and value.lower() in _PRECISION_NAMES:
            return cls[_PRECISION_NAMES[value.lower()]]
        return None

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


_PRECISION_NAMES = {"default": "DEFAULT", "fastest": "DEFAULT", "bfloat16": "DEFAULT",
                    "high": "HIGH", "bfloat16_3x": "HIGH", "tensorfloat32": "HIGH",
                    "highest": "HIGHEST", "float32": "HIGHEST"}


class DotAlgorithm(typing.NamedTuple):
    """An algorithm for dot products (precision= of dot and dot_general): the types the
    operands are rounded to, the accumulation type and, for algorithms that emulate a wider
    type by splitting the operands, the component counts and the number of primitive
    products. Which algorithms run depends on the platform; CPU runs only some presets."""

    lhs_precision_type: typing.Any
    rhs_precision_type: typing.Any
    accumulation_type: typing.Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms LHS_RHS_ACCUMULATION, passed as precision= (or by name): DEFAULT
    picks by operand types; ANY_F8 ones take float8 operands (ANY accumulates in the
    preferred element type); an _X3/_X6/_X9 suffix emulates float32 with that many
    narrower products; FAST_ACCUM allows a less precise accumulation."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self):
        return self.name

    @property
    def supported_lhs_types(self):
        """The operand dtypes it takes as they are (others are cast to the first one);
        None: any."""
        return _PRESET_TYPES[self.name][0]

    supported_rhs_types = supported_lhs_types

    @property
    def accumulation_type(self):
        """The dtype it accumulates in; None: the result's."""
        return _PRESET_TYPES[self.name][1]

    def supported_output_types(self, lhs_dtype, rhs_dtype):
        """The result dtypes it produces directly (others are a cast of the first one)
        for operands of these dtypes; None: any."""
        narrow = {"F16_F16_F32": np.dtype(np.float16), "BF16_BF16_F32": dtypes.bfloat16}
        if self.name in narrow:   # the narrow result only from narrow operands
            both_narrow = np.promote_types(lhs_dtype, rhs_dtype) == narrow[self.name]
            return (np.dtype(np.float32),) + ((narrow[self.name],) if both_narrow else ())
        if self.name.startswith("ANY_F8_ANY_F8_F32"):
            return (np.dtype(np.float32), np.dtype(np.float16), dtypes.bfloat16) + tuple(
                d for d in dtypes.float8_dtypes if d.name in (
                    "float8_e4m3fn", "float8_e5m2", "float8_e5m2fnuz", "float8_e4m3fnuz",
                    "float8_e4m3b11fnuz"))
        accumulation = self.accumulation_type
        return None if accumulation is None else (accumulation,)


def _preset_types():
    """Preset name -> (operand dtypes it takes, accumulation dtype)."""
    f16, bf16, f32, f64 = (np.dtype(np.float16), dtypes.bfloat16, np.dtype(np.float32),
                           np.dtype(np.float64))
    table = {"DEFAULT": (None, None), "F16_F16_F16": ((f16,), f16),
             "F16_F16_F32": ((f16,), f32), "BF16_BF16_BF16": ((bf16, f32), bf16),
             "BF16_BF16_F32": ((bf16, f32), f32), "F64_F64_F64": ((f64,), f64)}
    for name in DotAlgorithmPreset.__members__:
        if name.startswith("ANY_F8"):
            table[name] = (None, f32 if "_F32" in name else None)
        table.setdefault(name, ((f32,), f32))
    return table


_PRESET_TYPES = _preset_types()

PrecisionLike = typing.Optional[typing.Union[str, Precision, tuple, DotAlgorithm,
                                             DotAlgorithmPreset]]


def is_dot_algorithm(precision):
    """Whether a canonical precision names a dot algorithm rather than Precision pairs."""
    return isinstance(precision, (DotAlgorithm, DotAlgorithmPreset))


def canonicalize_precision(precision):
    """None, a Precision (or its name) or a pair of them, a DotAlgorithm, or a
    DotAlgorithmPreset (or its name), as None, a pair of Precision or the algorithm; None
    picks up jax_default_matmul_precision when that is set."""
    if precision is None:
        default = config.default_matmul_precision.value
        return None if default is None else canonicalize_precision(default)
    if is_dot_algorithm(precision):
        return precision
    if isinstance(precision, str) and precision not in _PRECISION_NAMES and \
            precision in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[precision]
    if isinstance(precision, (str, Precision)):
        return (_one_precision(precision),) * 2
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        return tuple(_one_precision(p) for p in precision)
    raise ValueError(f"Precision argument must be one of: None, a lax.Precision value, a "
                     f"precision name such as 'highest', or a pair of those (lhs, rhs), a "
                     f"lax.DotAlgorithmPreset or its name, or a lax.DotAlgorithm; got "
                     f"{precision!r}.")


def _one_precision(p):
    try:
        return Precision(p)
    except ValueError:
        raise ValueError(f"Unknown precision {p!r}: use lax.Precision.DEFAULT, HIGH or "
                         f"HIGHEST, one of the names {sorted(_PRECISION_NAMES)}, or a "
                         "lax.DotAlgorithmPreset (or its name).") from None


class RoundingMethod(enum.IntEnum):
    """How lax.round breaks ties: AWAY_FROM_ZERO (0.5 -> 1) or TO_NEAREST_EVEN (0.5 -> 0)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1

    def __repr__(self):
        return f"RoundingMethod.{self.name}"


# --- mulhi ----------------------------------------------------------------------------------

def _mulhi_impl(x, y):
    """The high half of the double-width product, through Python integers (exact)."""
    x, y = np.broadcast_arrays(x, y)
    bits = x.dtype.itemsize * 8
    if bits <= 32:   # the product fits 64 bits: exact in NumPy
        wide = np.dtype(f"{x.dtype.kind}8")
        product = x.astype(wide) * y.astype(wide)
        return (product >> np.array(bits, wide)).astype(x.dtype)
    wide = np.asarray(x.astype(object) * y.astype(object))
    mask = (1 << bits) - 1
    high = [((int(v) >> bits) & mask) for v in wide.ravel()]
    if x.dtype.kind == "i":   # back to two's complement
        high = [v - (1 << bits) if v >> (bits - 1) else v for v in high]
    return np.array(high, dtype=x.dtype).reshape(x.shape)


def _mulhi_lower(ctx, x, y):
    out = ctx.avals_out[0]
    x, y = ctx.broadcast(x, out.shape), ctx.broadcast(y, out.shape)
    dtype = x.aval.dtype
    bits = dtype.itemsize * 8
    signed = dtype.kind == "i"
    if bits < 64:   # widen, multiply, keep the upper half
        wide = np.dtype(np.int64 if signed else np.uint64)
        product = ctx.binary("stablehlo.multiply", ctx.convert(x, wide), ctx.convert(y, wide))
        shift = "stablehlo.shift_right_arithmetic" if signed else \
            "stablehlo.shift_right_logical"
        return ctx.convert(ctx.binary(shift, product, ctx.full(bits, (), wide)), dtype)
    u64 = np.dtype(np.uint64)
    ux = ctx.op("stablehlo.bitcast_convert", [x], x.aval.update(dtype=u64)) if signed else x
    uy = ctx.op("stablehlo.bitcast_convert", [y], y.aval.update(dtype=u64)) if signed else y
    high = _unsigned_mulhi64(ctx, ux, uy)
    if not signed:
        return high
    # As signed values: subtract y where x < 0 and x where y < 0 (mod 2**64).
    zero = ctx.full(0, (), dtype)
    for a, other in ((x, uy), (y, ux)):
        negative = ctx.compare(a, ctx.broadcast(zero, a.aval.shape), "LT")
        high = ctx.binary("stablehlo.subtract", high, ctx.select(
            negative, other, ctx.full(0, other.aval.shape, u64)))
    return ctx.op("stablehlo.bitcast_convert", [high], out.strip_weak_type())


def _unsigned_mulhi64(ctx, x, y):
    """The upper 64 bits of x * y for uint64 x, y, from 32-bit halves."""
    u64 = x.aval.dtype
    shift, mask = ctx.full(32, (), u64), ctx.full(0xFFFFFFFF, (), u64)

    def halves(v):
        return (ctx.binary("stablehlo.shift_right_logical", v, shift),
                ctx.binary("stablehlo.and", v, mask))
    (x_hi, x_lo), (y_hi, y_lo) = halves(x), halves(y)
    mul = lambda a, c: ctx.binary("stablehlo.multiply", a, c)   # noqa: E731
    add = lambda a, c: ctx.binary("stablehlo.add", a, c)        # noqa: E731
    lo_lo, hi_lo, lo_hi, hi_hi = mul(x_lo, y_lo), mul(x_hi, y_lo), mul(x_lo, y_hi), \
        mul(x_hi, y_hi)
    hi_lo_hi, hi_lo_lo = halves(hi_lo)
    cross = add(add(halves(lo_lo)[0], hi_lo_lo), lo_hi)
    return add(add(hi_hi, hi_lo_hi), halves(cross)[0])


# 64-bit operands need x64; tests/lax/test_lax_ops.py checks them with it on.
mulhi_p = binary_op("mulhi", _mulhi_impl, INT, jvp=zero_jvp, hlo=None, lower=_mulhi_lower,
                    samples=lambda: [b.Sample([np.array(v, d), np.array(w, d)]) for d, v, w in (
                        (np.int32, [7, -7, 2 ** 31 - 1, -2 ** 31], [3, 5, 2 ** 31 - 1, -2 ** 31]),
                        (np.uint32, [7, 2 ** 32 - 1, 2 ** 31, 5], [3, 2 ** 32 - 1, 4, 0]),
                        (np.int8, [100, -100, 127, -128], [100, 100, -128, -128]))])


def mulhi(x, y):
    """The high half of the double-width product of two integers of one dtype: for int32,
    bits 32..63 of the 64-bit product."""
    return mulhi_p.bind(x, y)


# --- reduce_precision -----------------------------------------------------------------------

def _float_layout(dtype):
    info = dtypes.finfo(dtype)
    return int(info.nexp), int(info.nmant)


def _reduce_precision_abstract_eval(x, *, exponent_bits, mantissa_bits):
    b.check_dtype("reduce_precision", x.dtype, (FLOAT,))
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision needs exponent_bits >= 1 and mantissa_bits >= 0,"
                         f" got {exponent_bits} and {mantissa_bits}.")
    return x


def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
    """XLA's ReducePrecision on the bits: round the mantissa to nearest even, then send
    exponents out of the narrower range to infinity or (signed) zero; NaNs stay NaN."""
    src_exp, src_mant = _float_layout(x.dtype)
    nbits = x.dtype.itemsize * 8
    udtype = np.dtype(f"u{x.dtype.itemsize}")
    v = np.ascontiguousarray(x).view(udtype).copy()
    with np.errstate(over="ignore"):
        if mantissa_bits < src_mant:
            drop = src_mant - mantissa_bits
            last_bit = udtype.type(1 << drop)
            bias = (v & last_bit) >> udtype.type(drop)
            bias = bias + udtype.type((1 << (drop - 1)) - 1)
            v = (v + bias) & ~udtype.type((1 << drop) - 1)
        if exponent_bits < src_exp:
            sign = udtype.type(1 << (nbits - 1))
            exp_mask = udtype.type(((1 << src_exp) - 1) << src_mant)
            src_bias = (1 << (src_exp - 1)) - 1
            new_bias = (1 << (exponent_bits - 1)) - 1
            exponent = v & exp_mask
            overflow = exponent > udtype.type((src_bias + new_bias) << src_mant)
            underflow = exponent <= udtype.type((src_bias - new_bias) << src_mant)
            signed_zero = v & sign
            v = np.where(overflow, signed_zero | exp_mask, np.where(underflow, signed_zero, v))
    out = v.astype(udtype).view(x.dtype).reshape(x.shape)
    return np.where(np.isnan(x), x, out)


def _reduce_precision_lower(ctx, x, *, exponent_bits, mantissa_bits):
    return ctx.op("stablehlo.reduce_precision", [x], ctx.avals_out[0].strip_weak_type(),
                  {"exponent_bits": f"{int(exponent_bits)} : i32",
                   "mantissa_bits": f"{int(mantissa_bits)} : i32"})


def _reduce_precision_samples():
    x = np.array([[1.0, 1.0009765625, -3.14159, 65504.0],
                  [7e4, 1e-8, -2.5e-5, 0.3333]], np.float32)
    return [b.Sample([x], {"exponent_bits": e, "mantissa_bits": m})
            for e, m in ((5, 10), (8, 7), (8, 23), (4, 3))]


reduce_precision_p = define_primitive(
    "reduce_precision", impl=_reduce_precision_impl,
    abstract_eval=_reduce_precision_abstract_eval, jvp=linear_jvp,
    transpose=lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)],
    batch=batching.elementwise_rule, lower=_reduce_precision_lower,
    samples=lambda: _reduce_precision_samples())


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """Rounds a float array to the values a float format with `exponent_bits` and
    `mantissa_bits` can hold (staying in the operand's dtype), as XLA does."""
    return reduce_precision_p.bind(operand, exponent_bits=operator.index(exponent_bits),
                                   mantissa_bits=operator.index(mantissa_bits))


def reciprocal(x):
    """Elementwise 1 / x."""
    return ew.integer_pow(x, -1)


__all__ = ["Precision", "PrecisionLike", "DotAlgorithm", "DotAlgorithmPreset",
           "canonicalize_precision", "RoundingMethod", "mulhi_p", "mulhi",
           "reduce_precision_p", "reduce_precision", "reciprocal"]
