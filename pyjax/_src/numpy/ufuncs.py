"""Elementwise jnp functions: promotion as JAX does it, then the strict lax primitives.
Integer division and remainder follow NumPy (floor semantics), not lax's truncation."""
from __future__ import annotations

import functools
import inspect
import math
import operator

import numpy as np

from pyjax._src import dtypes
from pyjax._src.api.custom_derivatives import custom_jvp
from pyjax._src.api.jit import AotFunction, jit
from pyjax._src.array import Array
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import structural as st
from pyjax._src.lax.builders import broadcasting_shape
from pyjax._src.lax.reshaping import full_like
from pyjax._src.util import renamed
from pyjax._src.numpy.util import (KEPT_DTYPES, WEAK_SCALAR_DTYPES, check_arraylike,
                                   compare_keys, convert, ensure_array, ensure_arraylike,
                                   extended_dtype, jax_array_protocol,
                                   promote_args, promote_args_inexact,
                                   promote_args_numeric, promote_shapes, python_scalar_as)


def _binary(name, lax_fn, promote=promote_args, bool_fn=None, arg_names=("x1", "x2"),
            key_op=None, mixed_fn=None):
    """A jnp binary function; bool_fn replaces lax_fn on booleans (add -> or). Its
    (positional-only) parameters are called arg_names in its signature, as JAX's are.
    key_op (operator.eq or ne) compares typed key arrays, which others refuse.
    mixed_fn(x1, x2, promoted1, promoted2), tried on operands of unlike types, gives a
    result in place of lax_fn's, or None."""
    kept = KEPT_DTYPES.get(promote, frozenset())
    # Per Python scalar type, the strong array dtypes that stay as they are beside it.
    beside_scalar = {t: kept & dts for t, dts in WEAK_SCALAR_DTYPES.items()}

    def fn(x1, x2, /):
        # Short paths for what promotion would return unchanged: two arrays of one type
        # (the commonest eager case), or an array and a Python scalar of a kind its dtype
        # holds (x * 2.0), the scalar converted straight to the array's dtype.
        if type(x1) is Array:
            if type(x2) is Array:
                if (x1.aval is x2.aval or x1.aval == x2.aval) and x1.aval.dtype in kept:
                    if bool_fn is not None and x1.aval.dtype.kind == "b":
                        return bool_fn(x1, x2)
                    return lax_fn(x1, x2)
            elif type(x2) in beside_scalar and not x1.aval.weak_type and \
                    x1.aval.dtype in beside_scalar[type(x2)]:
                return lax_fn(x1, python_scalar_as(x2, x1.aval.dtype))
        elif type(x2) is Array and type(x1) in beside_scalar and not x2.aval.weak_type and \
                x2.aval.dtype in beside_scalar[type(x1)]:
            return lax_fn(python_scalar_as(x1, x2.aval.dtype), x2)
        if key_op is not None and (extended_dtype(x1) is not None
                                   or extended_dtype(x2) is not None):
            return compare_keys(name, x1, x2, key_op)
        p1, p2 = promote(name, x1, x2)
        if bool_fn is not None and _is_bool(p1):
            return ensure_array(bool_fn(p1, p2))
        if mixed_fn is not None:
            out = mixed_fn(x1, x2, p1, p2)
            if out is not None:
                return ensure_array(out)
        return ensure_array(lax_fn(p1, p2))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with JAX's type promotion (like numpy.{name})."
    if arg_names != ("x1", "x2"):
        fn.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in arg_names])
    return fn


def _unary(name, lax_fn, promote=promote_args, key_fn=None):
    """A jnp unary function; key_fn gives its result on typed key arrays, which others
    refuse (JAX's isfinite, isnan, isinf and positive take keys)."""
    kept = KEPT_DTYPES.get(promote, frozenset())

    def fn(x, /):
        if key_fn is not None and extended_dtype(x) is not None:
            return key_fn(x)
        if type(x) is not Array or x.aval.dtype not in kept:
            (x,) = promote(name, x)   # else promotion would return x itself
        return ensure_array(lax_fn(x))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (like numpy.{name})."
    return AotFunction(fn, inline=True)   # JAX's is jit(fn, inline=True)


def _is_int(x):
    return np.dtype(_dtype(x)).kind in "iu"


def _is_bool(x):
    return np.dtype(_dtype(x)) == np.bool_


def _dtype(x):
    aval = getattr(x, "aval", None)
    return (aval or get_aval(x)).dtype


def _const(x, value, scalar_only=True):
    """value in x's dtype; weak (a Python scalar where one has that dtype) when x is a weak
    scalar, as JAX's lax constants are, so formulas over Python scalars stay weak. With
    scalar_only=False, weak for any weak x, as a Python literal in x - 1 is."""
    aval = get_aval(x)
    if aval.weak_type and (aval.ndim == 0 or not scalar_only) and aval.dtype != np.bool_:
        kind = dtypes.scalar_type_of(np.zeros((), aval.dtype))
        return convert(kind(value), aval.dtype, weak_type=True)
    return np.array(value, aval.dtype)


def _zero(x):
    return _const(x, 0)


def _keys_all(keys, value):
    """A boolean array of `value` in the shape of an array of typed keys: a key is
    finite, and not nan nor infinite (as JAX's full_like of a key array)."""
    return ensure_array(np.full(keys.shape, value))


def _broadcast(*xs):
    """xs (of equal rank, or scalars) at their common shape: lax.select, unlike the
    arithmetic ops, needs one shape. Mismatched sizes are lax's TypeError, as in JAX."""
    shape = broadcasting_shape("broadcast", *(get_aval(x).shape for x in xs))
    return [st.broadcast_to_shape(x, shape) for x in xs]


_XY = ("x", "y")   # JAX's names for the operands of comparisons, nextafter, left_shift
add = _binary("add", ew.add_p.bind, bool_fn=ew.or_p.bind)
subtract = _binary("subtract", ew.sub_p.bind)


def _select_by_bool_factor(x1, x2, p1, p2):
    """Eager x * b for a bool array b that needs no broadcast, as JAX computes it. JAX's
    jnp.multiply is one XLA program, mul(x, convert(b)), which XLA's algebraic simplifier
    rewrites as select(b, x, 0) for every float and complex type but bfloat16: so
    inf * False is 0 there, and -1 * False is +0. Eager ops run one by one, so the rewrite
    is made here; traced, the program is JAX's and XLA rewrites it alike."""
    if isinstance(p1, Tracer) or isinstance(p2, Tracer):
        return None
    dtype = _dtype(p1)
    if dtype.kind not in "fc" or dtype == dtypes.bfloat16:
        return None
    for b, converted, other in ((x1, p1, p2), (x2, p2, p1)):
        if b is True or b is False or getattr(b, "dtype", None) == np.bool_:
            b = jax_array_protocol(b)
            shape = np.broadcast_shapes(get_aval(p1).shape, get_aval(p2).shape)
            if get_aval(b).shape != shape:
                return None
            if get_aval(other).shape != shape:
                other = st.broadcast_to_shape(other, shape)
            if get_aval(converted).weak_type:   # beside a Python scalar: a weak result
                zero = st.broadcast_to_shape(_const(converted, 0, scalar_only=False), shape)
            else:
                zero = np.zeros(shape, dtype)
            return ew.select(b, other, zero)
    return None


multiply = _binary("multiply", ew.mul_p.bind, bool_fn=ew.and_p.bind,
                   mixed_fn=_select_by_bool_factor)
divide = _binary("divide", ew.div, promote_args_inexact)
true_divide = renamed(divide, "true_divide")
maximum = _binary("maximum", ew.max)
minimum = _binary("minimum", ew.min)
def _atan2(y, x):
    if not dtypes.is_complex(_dtype(y)):
        return ew.atan2(y, x)
    # -i log((x + iy) / sqrt(x^2 + y^2)), StableHLO's complex atan2
    i = _const(y, 1j, scalar_only=False)
    ratio = ew.div(ew.add(x, ew.mul(i, y)), ew.sqrt(ew.add(ew.mul(x, x), ew.mul(y, y))))
    return ew.mul(ew.neg(i), ew.log(ratio))


arctan2 = _binary("arctan2", _atan2, promote_args_inexact)
nextafter = _binary("nextafter", ew.nextafter, promote_args_inexact, arg_names=_XY)
equal = _binary("equal", ew.eq, arg_names=_XY, key_op=operator.eq)
not_equal = _binary("not_equal", ew.ne, arg_names=_XY, key_op=operator.ne)


def _ordering(compare):
    """An order comparison that orders complex numbers by (real, imag), as JAX's jnp does
    (lax's comparisons refuse complex operands)."""
    def fn(x1, x2):
        if not dtypes.is_complex(get_aval(x1).dtype):
            return compare(x1, x2)
        r1, r2 = ew.real(x1), ew.real(x2)
        return ew.select(ew.eq(r1, r2), compare(ew.imag(x1), ew.imag(x2)), compare(r1, r2))
    return fn


less = _binary("less", _ordering(ew.lt), arg_names=_XY)
less_equal = _binary("less_equal", _ordering(ew.le), arg_names=_XY)
greater = _binary("greater", _ordering(ew.gt), arg_names=_XY)
greater_equal = _binary("greater_equal", _ordering(ew.ge), arg_names=_XY)
bitwise_and = _binary("bitwise_and", ew.bitwise_and)
bitwise_or = _binary("bitwise_or", ew.bitwise_or)
bitwise_xor = _binary("bitwise_xor", ew.bitwise_xor)
left_shift = _binary("left_shift", ew.shift_left, promote_args_numeric, arg_names=_XY)


def _right_shift(a, b):
    return (ew.shift_right_arithmetic if np.dtype(_dtype(a)).kind == "i"
            else ew.shift_right_logical)(a, b)


right_shift = _binary("right_shift", _right_shift, promote_args_numeric)


def _floor_divide(a, b):
    if _is_int(a):
        q = ew.div(a, b)
        if np.dtype(_dtype(a)).kind == "u":
            return q
        # Signs (not the remainder's) decide the fix, so x // 0 follows XLA and JAX.
        needs_fix = ew.bitwise_and(ew.ne(ew.rem(a, b), _zero(a)),
                                   ew.ne(ew.sign(a), ew.sign(b)))
        return ew.select(needs_fix, ew.sub(q, _const(q, 1, scalar_only=False)), q)
    _reject_complex("floor_divide", a, error=TypeError)
    # CPython's float floor division, from the truncated remainder: -7 // inf is -1 (as in
    # NumPy and JAX), where floor(-7 / inf) would be -0.
    mod = ew.rem(a, b)
    a, b, mod = _broadcast(a, b, mod)
    q = ew.div(ew.select(ew.eq(b, _zero(b)), a, ew.sub(a, mod)), b)
    fix = ew.bitwise_and(ew.ne(mod, _zero(mod)), ew.ne(ew.sign(b), ew.sign(mod)))
    return ew.round(ew.select(fix, ew.sub(q, _const(q, 1, scalar_only=False)), q), 0)


def _nonzero_divisor(b):
    """Integer b with 0 replaced by 1: x % 0 and fmod(x, 0) are 0 for integers, as in NumPy
    and JAX (XLA's rem would give x)."""
    if not _is_int(b):
        return b
    return ew.add(b, convert(ew.eq(b, _zero(b)), _dtype(b), get_aval(b).weak_type))


def _remainder(a, b):
    b = _nonzero_divisor(b)
    r = ew.rem(a, b)
    wrong_sign = ew.bitwise_and(ew.ne(r, _zero(r)),
                                ew.ne(ew.lt(r, _zero(r)), ew.lt(b, _zero(b))))
    return ew.select(wrong_sign, ew.add(r, b), r)


# Booleans divide as the default integer type, as in JAX.
floor_divide = _binary("floor_divide", _floor_divide, promote_args_numeric)
remainder = _binary("remainder", _remainder, promote_args_numeric)
mod = renamed(remainder, "mod")


def fmod(x1, x2, /):
    """The remainder with x1's sign. As in JAX, x % 0 is 0 for integers, but for two
    bools x % False is x (XLA's rem)."""
    x1, x2 = ensure_arraylike("fmod", x1, x2)
    integral = _is_int(np.zeros((), dtypes.result_type(x1, x2)))
    x1, x2 = promote_args_numeric("fmod", x1, x2)
    return ensure_array(ew.rem(x1, _nonzero_divisor(x2) if integral else x2))


def divmod(x1, x2, /):
    return floor_divide(x1, x2), remainder(x1, x2)


def _int_power(base, exponent):
    """base ** exponent for integers by square-and-multiply over the exponent's low six
    bits, as JAX does: a larger power overflows unless the base is 0 or +-1 (handled), and
    a negative exponent counts by its two's complement bits."""
    base, exponent = _broadcast(base, exponent)
    zero, one = np.zeros((), _dtype(base)), np.ones((), _dtype(base))
    acc = ew.select(ew.bitwise_and(ew.eq(base, zero), ew.ne(exponent, zero)),
                    full_like(base, 0, _dtype(base)), full_like(base, 1, _dtype(base)))
    for _ in range(6):
        acc = ew.select(ew.ne(ew.bitwise_and(exponent, one), zero), ew.mul(acc, base), acc)
        base = ew.mul(base, base)
        exponent = ew.shift_right_logical(exponent, one)
    return acc


def _known_int(x):
    """x as a Python int when it is a known integer scalar (a Python int or bool, a NumPy
    integer, a 0-d integer array whose value is known), else None."""
    if isinstance(x, Tracer):
        x = x.to_concrete_value()
    if x is None or (not dtypes.is_python_scalar(x) and (
            np.ndim(x) != 0 or not dtypes.is_int(_dtype(x)))):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def power(x1, x2, /):
    """x1 ** x2, typed as JAX does. A known integer exponent becomes integer_pow (exact,
    differentiable at 0) and only x1 is promoted (bool to int); integers raise integers
    by square-and-multiply; a float base keeps its type under an integer exponent."""
    x1, x2 = ensure_arraylike("power", x1, x2)
    n = _known_int(x2)
    if n is not None:
        (x1,) = promote_args_numeric("power", x1)
        if n < 0 and _is_int(x1):
            raise TypeError(f"Integers cannot be raised to negative powers, got "
                            f"{_dtype(x1)} ** {n}. Use a floating-point base.")
        return ensure_array(ew.integer_pow(x1, n))
    if dtypes.is_inexact(_dtype(x1)) and _is_int(x2):
        # JAX raises x1 to the integer x2 unpromoted: lax.pow's derivative in x1 is then 0
        # at x1 = 0 for x2 = 0 (where a float exponent's would be NaN)
        return ensure_array(ew.pow(*promote_shapes("power", x1, x2)))
    a, b = promote_args_numeric("power", x1, x2)
    if _is_int(a):
        return ensure_array(_int_power(a, b))
    return ensure_array(ew.pow(a, b))


pow = renamed(power, "pow")


def float_power(x, y, /):
    x, y = promote_args_inexact("float_power", x, y)
    return ensure_array(ew.pow(x, y))


negative = _unary("negative", ew.neg)
positive = _unary("positive", lambda x: x, key_fn=lambda keys: keys)
sign = _unary("sign", ew.sign)
floor = _unary("floor", lambda x: x if _is_int(x) or _is_bool(x) else ew.floor(x))
ceil = _unary("ceil", lambda x: x if _is_int(x) or _is_bool(x) else ew.ceil(x))
_trunc = _unary("trunc", lambda x: x if _is_int(x) or _is_bool(x) else ew.select(
    ew.lt(x, _zero(x)), ew.ceil(x), ew.floor(x)))


def trunc(x):
    """Rounds toward zero; integers and bools stay as they are."""
    return _trunc(x)


def rint(x, /):
    """Rounds half to even; integers and bools become the default float, as in JAX, and
    complex numbers round their real and imaginary parts."""
    x = ensure_arraylike("rint", x)
    if _is_int(x) or _is_bool(x):
        x = convert(x, dtypes.default_float_dtype())
    if dtypes.is_complex(_dtype(x)):
        return ensure_array(ew.complex(ew.round(ew.real(x), 1), ew.round(ew.imag(x), 1)))
    return ensure_array(ew.round(x, 1))


absolute = _unary("absolute", lambda x: x if _is_bool(x) or np.dtype(
    _dtype(x)).kind == "u" else ew.abs(x))
abs = renamed(absolute, "abs")
exp = _unary("exp", ew.exp, promote_args_inexact)
exp2 = _unary("exp2", ew.exp2, promote_args_inexact)
expm1 = _unary("expm1", ew.expm1, promote_args_inexact)
log = _unary("log", ew.log, promote_args_inexact)
log1p = _unary("log1p", ew.log1p, promote_args_inexact)
def _log_base(base):
    def log_base(x):
        # a strong constant: log2 and log10 of a Python scalar are not weak in JAX
        c = np.array(math.log(base), dtypes.real_dtype(_dtype(x)))
        out = ew.log(x)
        if dtypes.is_complex(_dtype(x)):   # part by part: log(0) stays -inf + 0j
            return ew.complex(ew.div(ew.real(out), c), ew.div(ew.imag(out), c))
        return ew.div(out, c)
    return log_base


log2 = _unary("log2", _log_base(2), promote_args_inexact)
log10 = _unary("log10", _log_base(10), promote_args_inexact)
sqrt = _unary("sqrt", ew.sqrt, promote_args_inexact)
cbrt = _unary("cbrt", ew.cbrt, promote_args_inexact)
square = _unary("square", ew.square, promote_args_numeric)
reciprocal = _unary("reciprocal", lambda x: ew.div(_const(x, 1), x),
                    promote_args_inexact)
sin = _unary("sin", ew.sin, promote_args_inexact)
cos = _unary("cos", ew.cos, promote_args_inexact)
tan = _unary("tan", ew.tan, promote_args_inexact)
arcsin = _unary("arcsin", ew.asin, promote_args_inexact)
arccos = _unary("arccos", ew.acos, promote_args_inexact)
arctan = _unary("arctan", ew.atan, promote_args_inexact)
sinh = _unary("sinh", ew.sinh, promote_args_inexact)
cosh = _unary("cosh", ew.cosh, promote_args_inexact)
tanh = _unary("tanh", ew.tanh, promote_args_inexact)
arcsinh = _unary("arcsinh", ew.asinh, promote_args_inexact)
arccosh = _unary("arccosh", ew.acosh, promote_args_inexact)
arctanh = _unary("arctanh", ew.atanh, promote_args_inexact)
asin, acos, atan, asinh, acosh, atanh = (
    renamed(f, "a" + f.__name__.removeprefix("arc"))
    for f in (arcsin, arccos, arctan, arcsinh, arccosh, arctanh))


def atan2(x1, x2, /):
    """arctan2 after jnp's integer promotion first: as in JAX, atan2(-2, uint8(2)) sees
    -2 as uint8 254."""
    return arctan2(*promote_args("atan2", x1, x2))


deg2rad = _unary("deg2rad", lambda x: ew.mul(x, _const(x, math.pi / 180)),
                 promote_args_inexact)
rad2deg = _unary("rad2deg", lambda x: ew.mul(x, _const(x, 180 / math.pi)),
                 promote_args_inexact)
radians = renamed(deg2rad, "radians")
degrees = renamed(rad2deg, "degrees")
# As in JAX, only isnan and isfinite of a float stay weak for weak inputs.
isfinite = _unary("isfinite", lambda x: full_like(x, True, np.bool_)
                  if _is_int(x) or _is_bool(x) else
                  ew.bitwise_and(ew.is_finite(ew.real(x)), ew.is_finite(ew.imag(x)))
                  if dtypes.is_complex(_dtype(x)) else ew.is_finite(x),
                  key_fn=lambda keys: _keys_all(keys, True))
isnan = _unary("isnan", lambda x: ew.ne(x, x), key_fn=lambda keys: _keys_all(keys, False))
isinf = _unary("isinf", lambda x: ew.eq(ew.abs(x), np.array(np.inf, _dtype(ew.abs(x))))
               if np.dtype(_dtype(x)).kind in "fcV" or dtypes.is_float(_dtype(x))
               else full_like(x, False, np.bool_), key_fn=lambda keys: _keys_all(keys, False))


def _not(x):
    return ew.bitwise_not(x)


bitwise_not = _unary("bitwise_not", _not)
invert = renamed(bitwise_not, "invert")
bitwise_invert = renamed(bitwise_not, "bitwise_invert")
logical_not = _unary("logical_not", lambda x: ew.bitwise_not(_to_bool(x)))


def _to_bool(x):
    return x if _is_bool(x) else ew.ne(x, _zero(x))


def _logical(name, lax_fn):
    def fn(x1, x2, /):
        check_arraylike(name, x1, x2)
        a, b = promote_shapes(name, *promote_args(name, x1, x2))
        return ensure_array(lax_fn(_to_bool(a), _to_bool(b)))
    fn.__name__ = name
    return fn


logical_and = _logical("logical_and", ew.bitwise_and)
logical_or = _logical("logical_or", ew.bitwise_or)
logical_xor = _logical("logical_xor", ew.bitwise_xor)


def _reject_complex(name, *xs, error=ValueError):
    for x in xs:
        if dtypes.is_complex(_dtype(x)):
            raise error(f"jnp.{name} is not well defined for complex-valued inputs (got "
                        f"{_dtype(x)}); convert to real values first, e.g. with abs(x).")


def signbit(x, /):
    """Whether the sign bit is set; never weak, as in JAX."""
    (x,) = promote_args("signbit", x)
    _reject_complex("signbit", x)
    if _is_bool(x):
        return ensure_array(full_like(x, False, np.bool_))
    if _is_int(x):
        return ensure_array(ew.lt(x, np.zeros((), _dtype(x))))
    itemsize = np.dtype(_dtype(x)).itemsize
    int_dtype = {2: np.int16, 4: np.int32, 8: np.int64}[itemsize]
    return ensure_array(ew.lt(ew.bitcast_convert_type(x, int_dtype),
                              np.zeros((), int_dtype)))


def copysign(x1, x2, /):
    x1, x2 = _broadcast(*promote_args_inexact("copysign", x1, x2))
    _reject_complex("copysign", x1, error=TypeError)
    return ensure_array(ew.select(signbit(x2), ew.neg(ew.abs(x1)), ew.abs(x1)))


def hypot(x1, x2, /):
    x1, x2 = _broadcast(*promote_args_inexact("hypot", x1, x2))
    _reject_complex("hypot", x1)
    a, b = ew.abs(x1), ew.abs(x2)
    big, small = ew.max(a, b), ew.min(a, b)
    safe = ew.select(ew.eq(big, _zero(big)), full_like(big, 1), big)
    ratio = ew.div(small, safe)
    out = ew.select(ew.eq(big, _zero(big)), big,
                    ew.mul(big, ew.sqrt(ew.add(_const(big, 1), ew.square(ratio)))))
    # an infinite side makes an infinite hypotenuse, even beside a nan (IEEE, JAX)
    inf = np.array(np.inf, _dtype(a))
    is_inf = ew.bitwise_or(ew.eq(a, inf), ew.eq(b, inf))
    return ensure_array(ew.select(is_inf, *_broadcast(_const(out, np.inf), out)))


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _logaddexp(base, x1, x2):
    """log(exp(x1) + exp(x2)) in `base` (e or 2) without overflow: amax plus the log of one
    plus exp of the other operand's distance below it. Differentiated by its own rule, as
    in JAX: where x1 == x2 each operand gets half, which amax and |delta| alone miss."""
    exp = ew.exp if base == math.e else ew.exp2
    amax = ew.max(x1, x2)
    scaled = (lambda v: v) if base == math.e else (
        lambda v: ew.mul(_const(amax, 1 / math.log(base)), v))
    if dtypes.is_complex(_dtype(amax)):
        out = ew.add(amax, scaled(ew.log1p(exp(ew.sub(ew.add(x1, x2), ew.add(amax, amax))))))
        # the imaginary part wrapped into [-period, period)
        period = _const(ew.real(out), math.pi / math.log(base))
        wrapped = ew.sub(_remainder(ew.add(ew.imag(out), period), ew.add(period, period)),
                         period)
        return ew.complex(ew.real(out), wrapped)
    delta = ew.sub(x1, x2)
    finite = ew.add(amax, scaled(ew.log1p(exp(ew.neg(ew.abs(delta))))))
    # Where delta is nan (inf - inf or a nan operand), fall back to x1 + x2's nan/inf.
    return ew.select(ew.ne(delta, delta), ew.add(x1, x2), finite)


@_logaddexp.defjvp
def _logaddexp_jvp(base, primals, tangents):
    """JAX's: t1 exp(x1 - out) + t2 exp(x2 - out), with +inf read as 0 there."""
    (x1, x2), (t1, t2) = primals, tangents
    exp = ew.exp if base == math.e else ew.exp2
    out = _logaddexp(base, x1, x2)
    return out, ew.add(ew.mul(t1, exp(ew.sub(_replace_inf(x1), _replace_inf(out)))),
                       ew.mul(t2, exp(ew.sub(_replace_inf(x2), _replace_inf(out)))))


def _replace_inf(x):
    """x with +inf (in the real part) replaced by 0."""
    re_x = ew.real(x) if dtypes.is_complex(_dtype(x)) else x
    return ew.select(ew.eq(re_x, _const(re_x, math.inf)), ew.zeros_like(x), x)


def logaddexp(x1, x2, /):
    return ensure_array(_logaddexp(math.e, *promote_args_inexact("logaddexp", x1, x2)))


def logaddexp2(x1, x2, /):
    return ensure_array(_logaddexp(2, *promote_args_inexact("logaddexp2", x1, x2)))


def conjugate(x, /):
    if extended_dtype(x) is not None:   # typed keys are not complex: returned as they are
        return x
    (x,) = promote_args("conjugate", x)
    return ensure_array(ew.conj(x) if dtypes.is_complex(_dtype(x)) else x)


conj = renamed(conjugate, "conj")


def real(val, /):
    if extended_dtype(val) is not None:   # typed keys are not complex: returned as they are
        return val
    (val,) = promote_args("real", val)
    return ensure_array(ew.real(val) if dtypes.is_complex(_dtype(val)) else val)


def imag(val, /):
    (val,) = promote_args("imag", val)
    if dtypes.is_complex(_dtype(val)):
        return ensure_array(ew.imag(val))
    # zeros, not val * 0: that is -0.0 for negative val (angle would give -pi)
    return ensure_array(full_like(val, 0))


def angle(z, deg=False):
    """The complex argument. As in JAX, integers and real scalars become (strong) default
    floats; only a weak complex scalar gives a weak result."""
    z = ensure_arraylike("angle", z)
    re, im = real(z), imag(z)
    if not dtypes.is_inexact(_dtype(re)) or (dtypes.is_float(_dtype(z))
                                             and get_aval(z).ndim == 0):
        re, im = (ew.convert_element_type(v, dtypes.default_float_dtype()) for v in (re, im))
    out = ew.atan2(im, re)
    return rad2deg(out) if deg else ensure_array(out)


def heaviside(x1, x2, /):
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    _reject_complex("heaviside", x1, error=TypeError)
    # the constants of x1 before broadcasting (weak for a weak scalar), as in JAX
    x1, x2, zero, one = _broadcast(x1, x2, _zero(x1), _const(x1, 1))
    return ensure_array(ew.select(ew.lt(x1, zero), zero,
                                  ew.select(ew.gt(x1, zero), one,
                                            ew.select(ew.ne(x1, x1), x1, x2))))


@jit   # as JAX's (its HLO is one call of a sinc function)
def sinc(x, /):
    """sin(pi x) / (pi x), 1 at 0; its derivatives of every order at 0 are those of the
    Maclaurin series (as in JAX), not the 0 / 0 of differentiating the quotient."""
    (x,) = promote_args_inexact("sinc", x)
    pi_x = ew.mul(x, _const(x, math.pi))
    is_zero = ew.eq(x, _zero(x))
    safe = ew.select(is_zero, ew.add(ew.mul(x, _zero(x)), _const(x, 1)), pi_x)
    return ensure_array(ew.select(is_zero, _sinc_maclaurin(0, pi_x),
                                  ew.div(ew.sin(safe), safe)))


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _sinc_maclaurin(k, x):
    """The k-th derivative of sin(x) / x at x = 0 (shaped like x)."""
    zero = ew.mul(x, _zero(x))
    return zero if k % 2 else ew.add(zero, _const(x, (-1) ** (k // 2) / (k + 1)))


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k, primals, tangents):
    (x,), (t,) = primals, tangents
    return _sinc_maclaurin(k, x), ew.mul(_sinc_maclaurin(k + 1, x), t)


def fmax(x1, x2):
    """JAX's formula: x1 where it is greater or x2 is nan, else x2 (so x2 on ties: fmax(0,
    -0) is -0, which max would not give)."""
    x1, x2 = _broadcast(*promote_args("fmax", x1, x2))
    return ensure_array(ew.select(ew.bitwise_or(greater(x1, x2), ew.ne(x2, x2)), x1, x2))


def fmin(x1, x2):
    """JAX's formula: x1 where it is less or x2 is nan, else x2."""
    x1, x2 = _broadcast(*promote_args("fmin", x1, x2))
    return ensure_array(ew.select(ew.bitwise_or(less(x1, x2), ew.ne(x2, x2)), x1, x2))


def round(a, decimals=0, out=None):
    """Rounds half to even, like NumPy; decimals scales by 10**decimals first."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported: "
                                  "JAX arrays are immutable.")
    (a,) = promote_args("round", a)
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"jnp.round: decimals must be a static integer, got {decimals!r}") \
            from None
    if _is_bool(a):
        raise ValueError("jnp.round is not defined for boolean inputs, as in JAX; convert "
                         "them first, e.g. x.astype(int).")
    if _is_int(a):
        if decimals < 0:   # JAX 0.10.2's words
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return ensure_array(a)
    if dtypes.is_complex(_dtype(a)):
        return ensure_array(ew.complex(round(ew.real(a), decimals),
                                       round(ew.imag(a), decimals)))
    if decimals == 0:
        return ensure_array(ew.round(a, 1))
    factor = np.array(10.0 ** decimals, _dtype(a))
    return ensure_array(ew.div(ew.round(ew.mul(a, factor), 1), factor))


around = renamed(round, "around")


def ldexp(x1, x2, /):
    """x1 * 2**x2, as JAX computes it: x1's exponent is split off first (frexp), so a
    small x1 with a large x2 (or the reverse) neither overflows nor underflows on the
    way."""
    x1, x2 = ensure_arraylike("ldexp", x1, x2)
    if dtypes.is_complex(_dtype(x1)) or dtypes.is_inexact(_dtype(x2)):
        raise ValueError(f"ldexp not supported for input types {(_dtype(x1), _dtype(x2))}: "
                         "x1 must be real and x2 an integer or bool.")
    (x1,) = promote_args_inexact("ldexp", x1)
    x2 = convert(x2, _dtype(x1))
    mantissa, exponent = frexp(x1)
    exponent = add(convert(exponent, _dtype(x1)), x2)   # (checks rank promotion)
    shape = get_aval(exponent).shape
    x1, mantissa = st.broadcast_to_shape(x1, shape), st.broadcast_to_shape(mantissa, shape)
    # the exponent may overflow by 1 and still give a finite result
    positive = greater(exponent, 0)
    mantissa = ew.select(*_broadcast(positive, multiply(mantissa, 2), mantissa))
    exponent = ew.select(*_broadcast(positive, subtract(exponent, 1), exponent))
    out = multiply(mantissa, power(np.array(2, _dtype(x1)), exponent))   # exact, unlike exp2
    keep = ew.bitwise_or(isinf(x1), ew.eq(x1, _zero(x1)))
    return ensure_array(ew.select(*_broadcast(keep, x1, out)))


def frexp(x, /):
    """(mantissa in [0.5, 1), integer exponent) with x == mantissa * 2**exponent, read
    off x's bits (subnormals scaled up first); 0, inf and nan give (x, 0)."""
    check_arraylike("frexp", x)
    (x,) = promote_args_inexact("frexp", x)
    dtype = _dtype(x)
    if dtypes.is_complex(dtype):
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


@custom_jvp
def _frexp(x):
    dtype = _dtype(x)
    info = dtypes.finfo(dtype)
    int_dtype = np.dtype(f"int{info.bits}")
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    subnormal = less(absolute(x), np.array(info.tiny, dtype))
    scaled = ew.select(*_broadcast(subnormal, multiply(x, np.array(1 << info.nmant, dtype)),
                                   x))
    bits = ew.bitcast_convert_type(scaled, int_dtype)
    exponent = ew.select(*_broadcast(subnormal, np.array(-info.nmant, int_dtype),
                                     np.zeros((), int_dtype)))
    exponent = exponent + ((bits >> info.nmant) & mask) - (bias - 1)
    bits = (bits & ~(mask << info.nmant)) | ((bias - 1) << info.nmant)
    mantissa = ew.bitcast_convert_type(bits, dtype)
    special = ew.bitwise_or(ew.bitwise_or(isinf(x), isnan(x)), ew.eq(x, _zero(x)))
    return (ensure_array(ew.select(special, x, mantissa)),
            ensure_array(convert(ew.select(*_broadcast(special, np.zeros((), int_dtype),
                                                       exponent)), np.int32)))


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
    """The mantissa x * 2**-e moves with x at the rate 2**-e (JAX's rule; the bit
    manipulation itself has no derivative); the integer exponent has none."""
    (x,), (t,) = primals, tangents
    mantissa, exponent = _frexp(x)
    mantissa_dot = multiply(t, exp2(negative(convert(exponent, _dtype(t)))))
    return (mantissa, exponent), (mantissa_dot, np.zeros(get_aval(exponent).shape,
                                                         dtypes.float0))


def gcd(x1, x2):
    x1, x2 = _broadcast(*promote_args("gcd", x1, x2))
    if not _is_int(x1):
        raise ValueError("Arguments to jnp.gcd must be integers.")
    a, b = (x1, x2) if np.dtype(_dtype(x1)).kind == "u" else (ew.abs(x1), ew.abs(x2))
    bits = np.dtype(_dtype(a)).itemsize * 8
    for _ in range(bits * 2):   # Euclid's algorithm converges in < 2*bits steps
        nonzero = ew.ne(b, _zero(b))
        safe_b = ew.select(nonzero, b, full_like(b, 1))
        a, b = ew.select(nonzero, b, a), ew.select(nonzero, ew.rem(a, safe_b), b)
    # JAX's loop fills with a lax constant: the result stays weak only for weak scalars
    aval = get_aval(a)
    return ensure_array(convert(a, aval.dtype, aval.weak_type and aval.ndim == 0))


def lcm(x1, x2):
    x1, x2 = _broadcast(*promote_args("lcm", x1, x2))
    if not _is_int(x1):
        raise ValueError("Arguments to jnp.lcm must be integers.")
    # |x1| * (|x2| // gcd), as JAX: a result past the dtype's range wraps (no abs after)
    x1, x2 = absolute(x1), absolute(x2)
    g = gcd(x1, x2)
    safe = ew.select(ew.eq(g, _zero(g)), full_like(g, 1), g)
    return ensure_array(ew.select(ew.eq(g, _zero(g)), g, ew.mul(x1, ew.div(x2, safe))))


__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "math", "np", "dtypes", "ew", "annotations", "check_arraylike", "ensure_array",
    "promote_args", "promote_args_inexact", "promote_args_numeric", "convert", "st",
    "full_like")]
