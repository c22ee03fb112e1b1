"""Elementwise primitives: arithmetic, transcendental, comparison, logical and bitwise
ops, select_n, clamp, and the strict lax wrappers that bind them. Operands of a binary op
share one dtype; rank-0 operands broadcast. Transcendental ops take a requested accuracy
(AccuracyMode or Tolerance) as JAX's do."""
from __future__ import annotations

import builtins
import enum
import math

import numpy as np

from pyjax._src import dtypes
from pyjax._src.array import Array, as_array
from pyjax._src.util import quietly, scipy_special
from pyjax._src.backends import stablehlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import NOT_DIFFERENTIABLE, RuleFactory, define_primitive
from pyjax._src.interpreters import ad, batching, jet
from pyjax._src.interpreters.ad import Zero, defjvp, defjvp_with_output, linear_jvp, zero_jvp
from pyjax._src.lax import builders as b
from pyjax._src.lax import sharding_rules
from pyjax._src.lax.builders import (ANY, BOOL, FLOAT, INEXACT, INT, NUMBER, SIGNED,
                                     binary_op, dtype_class, unary_op)


def _quiet(f):
    """NumPy impls follow IEEE/XLA semantics silently (no RuntimeWarnings)."""
    return quietly(f)


# --- transposition helpers for broadcasting binary ops ----------------------------------

def unbroadcast(aval, ct):
    """Sums a cotangent back to the shape of an operand that was broadcast, split over
    the mesh as the operand's type (a cotangent split where its operand is not is
    gathered, as in JAX)."""
    ct_aval = get_aval(ct)
    target = _split_as(aval, ct_aval)
    if ct_aval.shape == aval.shape and target is None:
        return ct
    if not aval.shape:
        return b.bind_primitive("reduce_sum", ct, axes=tuple(range(len(ct_aval.shape))))
    dims = tuple(i for i, (a, c) in enumerate(zip(aval.shape, ct_aval.shape)) if a != c)
    summed = b.bind_primitive("reduce_sum", ct, axes=dims) if dims else ct
    return b.bind_primitive("reshape", summed, new_sizes=aval.shape, dimensions=None,
                            sharding=target)


def _split_as(aval, ct_aval):
    """The type sharding a cotangent of `ct_aval` takes to be split as `aval` (keeping
    its own unreduced/reduced axes), or None where it already is."""
    have = ct_aval._sharding
    if have is None or not aval.shape:
        return None
    want = aval._sharding
    parts = (want.spec.padded(aval.ndim).partitions if want is not None
             else (None,) * aval.ndim)
    if tuple(have.spec.padded(aval.ndim).partitions) == tuple(parts):
        return None
    return type(have)(have.mesh, have.spec.update(partitions=parts))


def _add_transpose(ct, x, y):
    return [unbroadcast(x.aval, ct) if ad.is_undefined_primal(x) else None,
            unbroadcast(y.aval, ct) if ad.is_undefined_primal(y) else None]


def _sub_transpose(ct, x, y):
    return [unbroadcast(x.aval, ct) if ad.is_undefined_primal(x) else None,
            unbroadcast(y.aval, neg(ct)) if ad.is_undefined_primal(y) else None]


def _mul_transpose(ct, x, y):
    if ad.is_undefined_primal(x) and ad.is_undefined_primal(y):
        raise ValueError("mul is not linear in both operands at once")
    if ad.is_undefined_primal(x):
        return [unbroadcast(x.aval, mul(ct, y)), None]
    return [None, unbroadcast(y.aval, mul(x, ct))]


def _div_transpose(ct, x, y):
    if ad.is_undefined_primal(y):
        raise ValueError("div is not linear in its divisor")
    return [unbroadcast(x.aval, div(ct, y)), None]


def _unary_linear_transpose(f):
    return lambda ct, x, **params: [f(ct, **params)]


# --- requested accuracy of transcendental ops ---------------------------------------------

class AccuracyMode(enum.Enum):
    """An accuracy requested of a transcendental op (accuracy= of lax.exp, lax.sin, ...):
    the HIGHEST the backend has, or its DEFAULT."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """An accuracy requested of a transcendental op as error bounds: absolute (atol),
    relative (rtol) and in units in the last place (ulps). Compared by identity."""

    def __init__(self, atol=0.0, rtol=0.0, ulps=0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError(f"Tolerance bounds must be non-negative, got atol={atol}, "
                             f"rtol={rtol}, ulps={ulps}.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("A Tolerance needs at least one of atol, rtol or ulps set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps


def _accuracy_op(name, impl, accepted, *, samples_domain=None, **rules):
    """A unary op that takes accuracy=. Its NumPy impl serves every requested accuracy
    (NumPy has one implementation, as XLA's CPU backend); the harness also runs every
    other sample with a requested accuracy."""
    def run(x, accuracy=None):
        return impl(x)

    def samples():
        plain = b.elementwise_samples(accepted, 1, samples_domain)
        return plain + [b.Sample(s.args, {"accuracy": accuracy}) for s in plain[::2]
                        for accuracy in (AccuracyMode.HIGHEST, Tolerance(atol=1e-5, ulps=2))]
    return unary_op(name, run, accepted, samples_domain=samples_domain, samples=samples,
                    **rules)


def _accuracy_attr(accuracy):
    if isinstance(accuracy, AccuracyMode):
        bounds, mode = "", accuracy.name
    else:
        bounds = (f"atol = {float(accuracy.atol):.17e}, rtol = {float(accuracy.rtol):.17e}, "
                  f"ulps = {int(accuracy.ulps)}, ")
        mode = "TOLERANCE"
    return f"#stablehlo.result_accuracy<{bounds}mode = #stablehlo.result_accuracy_mode<{mode}>>"


def _accuracy_lowering(hlo, real_only=False):
    """The op `hlo` with the requested accuracy as its result_accuracy; `real_only`: not
    for complex operands (JAX lowers complex sin and cos without it)."""
    def lower(ctx, x, accuracy=None):
        attrs = None
        if accuracy is not None and not (real_only and dtypes.is_complex(x.aval.dtype)):
            attrs = {"result_accuracy": _accuracy_attr(accuracy)}
        return ctx.op(hlo, [x], ctx.avals_out[0].strip_weak_type(), attrs)
    return lower


def _exp2_lower(ctx, x, accuracy=None):
    log2 = ctx.full(math.log(2), (), x.aval.dtype)
    return _accuracy_lowering("stablehlo.exponential")(
        ctx, ctx.binary("stablehlo.multiply", x, log2), accuracy)


# --- arithmetic -------------------------------------------------------------------------

def _int_div(x, y):
    """Integer division rounding toward zero, as XLA does (not NumPy's floor)."""
    if x.dtype.kind == "u":
        return np.floor_divide(x, np.where(y == 0, 1, y)) * (y != 0) + \
            np.where(y == 0, np.iinfo(x.dtype).max, 0).astype(x.dtype)
    # exactly in integers (a float quotient loses int64's low bits): floor, then up by one
    # where the division was inexact and the signs differ
    safe = np.where(y == 0, 1, y).astype(x.dtype)
    q = np.floor_divide(x, safe)
    q = q + ((np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0)))
    return np.where(y == 0, -1, q).astype(x.dtype)


def _div_impl(x, y):
    return _int_div(x, y) if x.dtype.kind in "iu" else np.true_divide(x, y)


def _rem_impl(x, y):
    if x.dtype.kind in "iu":
        return np.where(y == 0, x, np.fmod(x, np.where(y == 0, 1, y))).astype(x.dtype)
    return np.fmod(x, y)


def _pow_dtypes(x, y):
    """pow's operands, as JAX's: an inexact base, and an exponent of the base's dtype or
    of an integer dtype (converted to the base's)."""
    for position, aval, kinds in ((0, x, INEXACT), (1, y, INEXACT + INT)):
        if dtype_class(aval.dtype) not in kinds:
            raise TypeError(
                f"pow does not accept dtype {aval.dtype.name} at position {position}. "
                f"Accepted dtypes at position {position} are subtypes of "
                f"{'integer, ' if position else ''}floating, complexfloating.")
    if y.dtype != x.dtype and not dtypes.is_int(y.dtype):
        raise TypeError("the first argument to pow must have an inexact dtype (float or "
                        "complex), and the second argument must have an inexact or integer "
                        "dtype, and two inexact dtypes must match, but got "
                        f"{x.dtype.name} and {y.dtype.name} respectively.")
    return x.dtype


def _pow_jvp_base(g, x, y):
    x_dtype = get_aval(x).dtype
    if not dtypes.is_int(get_aval(y).dtype):
        return mul(g, mul(y, pow(x, sub(y, _const(y, 1)))))
    # An integer exponent: d/dx x**0 is 0 even at x = 0 (where 0 * 0**-1 would be NaN).
    y = add(convert_element_type(y, x_dtype), zeros_like(x))   # the result's shape
    is_zero = eq(y, _const(y, 0))
    jac = mul(select(is_zero, _ones_like(y), y), pow(x, sub(y, _const(y, 1))))
    return mul(g, select(is_zero, zeros_like(y), jac))


def _pow_lower(ctx, x, y):
    if y.aval.dtype != x.aval.dtype:
        y = ctx.convert(y, x.aval.dtype)
    return _POWER_LOWERING(ctx, x, y)


_POWER_LOWERING = stablehlo.elementwise_lowering("stablehlo.power")


def _pow_impl(x, y):
    out = np.power(x, y if y.dtype == x.dtype else y.astype(x.dtype))
    if y.ndim == 0 and y == 0.5 and out.dtype.kind == "f":
        # NumPy takes a scalar 0.5 power as sqrt, which gives -0 and nan at -0 and -inf
        # where pow (XLA's, C's) gives +0 and inf
        out = np.where(x == -np.inf, np.inf, out) + 0
    if out.dtype.kind == "c":   # 0 ** (c + di) with d != 0 is nan in XLA (NumPy gives 0)
        out = np.where((x == 0) & (np.imag(y) != 0), np.array(complex(np.nan, np.nan),
                                                                out.dtype), out)
    return out


def _round_impl(x, rounding_method=0):
    if rounding_method == 0:
        # away from zero. Not floor(|x| + 0.5): that sum rounds up below one half
        # (0.49999997 + 0.5 is 1 in float32) and past 2**23 (8388609 would give 8388610).
        # x - trunc(x) is exact; trunc keeps -0 as XLA does.
        t = np.trunc(x)
        return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t).astype(x.dtype)
    return np.round(x)


def _check_integer_pow(x, y):
    """Eager and traced calls alike: an integer to a negative power has no integer value."""
    if y < 0 and x.dtype.kind in "iu":
        raise TypeError(f"Integers cannot be raised to negative powers, got "
                        f"integer_pow({x.dtype.name}{list(x.shape)}, {y}): convert the "
                        "operand to a float dtype first.")


def _integer_pow_impl(x, y):
    _check_integer_pow(x, y)
    return np.power(x, x.dtype.type(y)) if y >= 0 else np.power(x, y).astype(x.dtype)


def _integer_pow_jvp(g, x, y):
    if y == 0:
        return mul(g, zeros_like(x))
    if y == 1:
        return g
    return mul(g, mul(_const(x, y), x if y == 2 else integer_pow(x, y - 1)))


# --- Taylor-mode (jet) rules ------------------------------------------------------------
# Recurrences of power series (unscaled coefficients: interpreters/jet.py), as JAX's
# jax.experimental.jet. They run on the parent trace's values and bind the lax functions
# below (defined at the end of this file) when the rule runs.

def _exp_series(v0, u):
    """The series of v = exp(w) from v0 = exp(w0) and the series u of w (v' = v w')."""
    v = [v0]
    for k in range(1, len(u)):
        v.append(sum(j * v[k - j] * u[j] for j in range(1, k + 1)) / k)
    return v[0], v[1:]


def _exp_jet(primals, series, **params):
    return _exp_series(exp(primals[0]), [primals[0], *series[0]])


def _log_jet(primals, series, **params):
    u = [primals[0], *series[0]]
    v = [log(u[0])]
    for k in range(1, len(u)):
        conv = sum(j * v[j] * u[k - j] for j in range(1, k))
        v.append((u[k] - conv / k) / u[0])
    return v[0], v[1:]


def _pow_jet(primals, series, **params):
    x, y = primals
    c0, cs = jet.compose(lambda x, y: y * log(x), primals, series)   # pow = exp(y log x)
    return _exp_series(pow(x, y), [c0, *cs])


def _pow_by_squaring(x, n):
    if n < 0:
        return _pow_by_squaring(1 / x, -n)
    if n == 0:
        return _ones_like(x)
    if n % 2 == 0:
        return _pow_by_squaring(mul(x, x), n // 2)
    return mul(x, _pow_by_squaring(mul(x, x), n // 2))


def _integer_pow_jet(primals, series, *, y):
    return jet.compose(lambda x: _pow_by_squaring(x, y), primals, series)


def _sinusoid_jet(sign, pair, which):
    """sin/cos (sign -1) or sinh/cosh (sign 1): the two series computed together (s' =
    c u', c' = sign s u'); `which` picks the primitive's own."""
    def rule(primals, series, **params):
        u = [primals[0], *series[0]]
        s, c = [pair[0](u[0])], [pair[1](u[0])]
        for k in range(1, len(u)):
            s.append(sum(j * u[j] * c[k - j] for j in range(1, k + 1)) / k)
            c.append(sign * sum(j * u[j] * s[k - j] for j in range(1, k + 1)) / k)
        out = (s, c)[which]
        return out[0], out[1:]
    return rule


def _logistic_series(x, terms):
    u = [x, *terms]
    v = [logistic(x)]
    e = [v[0] * (1 - v[0])]   # the series of logistic' = logistic (1 - logistic)
    for k in range(1, len(u)):
        v.append(sum(j * e[k - j] * u[j] for j in range(1, k + 1)) / k)
        e.append((1 - v[0]) * v[k] - sum(v[j] * v[k - j] for j in range(1, k + 1)))
    return v[0], v[1:]


def _logistic_jet(primals, series, **params):
    return _logistic_series(primals[0], series[0])


def _tanh_jet(primals, series, **params):
    """tanh(x) = 2 logistic(2x) - 1."""
    out, terms = _logistic_series(2 * primals[0], [2 * t for t in series[0]])
    return 2 * out - 1, [2 * t for t in terms]


def _div_jet(primals, series, **params):
    u = [primals[0], *series[0]]
    w = [primals[1], *series[1]]
    v = [div(u[0], w[0])]
    for k in range(1, len(u)):
        v.append((u[k] - sum(v[j] * w[k - j] for j in range(k))) / w[0])
    return v[0], v[1:]


def _atan2_jet(primals, series, **params):
    """atan2(x, y) as atan of q = x / y: its derivative 1 / (1 + q^2) along q."""
    q, qs = jet.compose(div, primals, series)
    c0, cs = jet.compose(lambda q: div(_const(q, 1), add(_const(q, 1), square(q))),
                         (q,), (qs,))
    return atan2(*primals), jet.chain_terms([q, *qs], [c0, *cs])


def _erf_inv_jet(primals, series, **params):
    """erf_inv's derivative sqrt(pi)/2 exp(y^2), in terms of its output y, propagated
    alongside y (the derivative's k-th term needs y's k-th)."""
    u = [primals[0], *series[0]]
    order = len(series[0])
    scale = math.sqrt(math.pi) / 2
    v = [erf_inv(u[0])]
    sq = [square(v[0])]
    ex = [exp(sq[0])]
    c = [scale * ex[0]]
    for k in range(1, order + 1):
        v.append(sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k)
        if k == order:
            break
        sq.append(sum(v[k - j] * v[j] for j in range(k + 1)))
        ex.append(sum(j * ex[k - j] * sq[j] for j in range(1, k + 1)) / k)
        c.append(scale * ex[k])
    return v[0], v[1:]


def _abs_jet(primals, series, **params):
    x = primals[0]
    signs = select_n(lt(x, _zeros_like(x)), _ones_like(x), _full_like(x, -1))
    return abs(x), [mul(signs, t) for t in series[0]]


def _select_n_jet(primals, series, **params):
    which, *cases = primals
    return select_n(which, *cases), [select_n(which, *terms) for terms in zip(*series[1:])]


def _max_min_jet(wins, pick):
    """max (wins=gt) or min (wins=lt): the winner's series, the mean of both on ties."""
    def rule(primals, series, **params):
        out = pick(*primals)
        x, y = (_broadcast_like(p, out) for p in primals)
        first, tie = wins(x, y), eq(x, y)

        def term(a, b):
            a, b = _broadcast_like(a, out), _broadcast_like(b, out)
            return select_n(tie, select_n(first, b, a), (a + b) / 2)
        return out, [term(a, b) for a, b in zip(*series)]
    return rule


def _composite_jet(comp):
    return jet.composite_rule(lambda *xs, **params: comp(*xs))


_expm1_jet = _composite_jet(lambda x: sub(exp(x), _const(x, 1)))
_log1p_jet = _composite_jet(lambda x: log(add(x, _const(x, 1))))
_sqrt_jet = _composite_jet(lambda x: pow(x, _const(x, 0.5)))
_rsqrt_jet = _composite_jet(lambda x: pow(x, _const(x, -0.5)))
_square_jet = _composite_jet(lambda x: mul(x, x))
_asinh_jet = _composite_jet(lambda x: log(add(x, sqrt(add(square(x), _const(x, 1))))))
_acosh_jet = _composite_jet(lambda x: log(add(x, sqrt(sub(square(x), _const(x, 1))))))
_atanh_jet = _composite_jet(lambda x: mul(_const(x, 0.5), log(
    div(add(_const(x, 1), x), sub(_const(x, 1), x)))))
_erfc_jet = _composite_jet(lambda x: sub(_const(x, 1), erf(x)))
_rem_jet = _composite_jet(lambda x, y: sub(x, mul(y, floor(div(x, y)))))
_clamp_jet = _composite_jet(lambda lo, x, hi: min(max(lo, x), hi))
_erf_jet = jet.deriv_rule(lambda x: mul(_const(x, 2 / math.sqrt(math.pi)), exp(neg(square(x)))))


def _add_or_sub_jvp(negates_second):
    """add's (sub's) JVP, which is linear: a symbolic zero tangent adds nothing, so the
    other tangent passes through (negated for sub's second operand) and no zeros are
    made, as in JAX (a gradient's jaxpr holds no dead zeros of constants)."""
    def make(prim):
        def jvp(primals, tangents, **params):
            out = prim.bind(*primals, **params)
            tx, ty = tangents
            if type(tx) is Zero and type(ty) is Zero:
                return out, Zero(ad.tangent_aval(get_aval(out)))
            if type(ty) is Zero:   # (a tangent given as a Python scalar becomes an Array)
                return out, _broadcast_like(as_array(tx), out)
            if type(tx) is Zero:
                return out, _broadcast_like(neg(ty) if negates_second else as_array(ty), out)
            return out, prim.bind(tx, ty, **params)
        return jvp
    return RuleFactory(make, declares={"is_linear": True, "jet": jet.linear_rule})


add_p = binary_op("add", _quiet(np.add), NUMBER, jvp=_add_or_sub_jvp(False),
                  hlo="stablehlo.add", transpose=_add_transpose, ur_rule=sharding_rules.add_ur)
sub_p = binary_op("sub", _quiet(np.subtract), NUMBER, jvp=_add_or_sub_jvp(True),
                  hlo="stablehlo.subtract", transpose=_sub_transpose)
mul_p = binary_op("mul", _quiet(np.multiply), NUMBER,
                  jet=jet.bilinear_rule,
                  jvp=defjvp(lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g)),
                  hlo="stablehlo.multiply", transpose=_mul_transpose,
                  ur_rule=sharding_rules.mul_ur)
div_p = binary_op("div", _quiet(_div_impl), NUMBER, samples_domain=(1.0, 3.0),
                  jet=_div_jet,
                  jvp=defjvp(lambda g, x, y: div(g, y),
                             lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2))),
                  hlo="stablehlo.divide", transpose=_div_transpose)
rem_p = binary_op("rem", _quiet(_rem_impl), (FLOAT,) + INT, samples_domain=(1.0, 3.0),
                  jet=_rem_jet,
                  jvp=defjvp(lambda g, x, y: g,
                             lambda g, x, y: mul(neg(g), mul(sign(div(x, y)),
                                                             floor(abs(div(x, y)))))),
                  hlo="stablehlo.remainder")
pow_p = binary_op("pow", _quiet(_pow_impl), INEXACT, samples_domain=(0.5, 2.0),
                  operand_dtypes=_pow_dtypes, lower=_pow_lower,
                  samples=lambda: b.elementwise_samples(INEXACT, 2, (0.5, 2.0)) + [b.Sample(
                      [b.random_values((3,), np.float32, (0.5, 2.0)),
                       np.array([0, 1, -2], np.int32)])],
                  jet=_pow_jet,
                  jvp=defjvp(_pow_jvp_base,
                             lambda g, x, y: mul(g, mul(_safe_log(x), pow(x, y)))),
                  hlo="stablehlo.power")


def _balanced_eq(x, z, y):
    """1 where x is the selected extreme, 0.5 on ties: the max/min subgradient JAX uses."""
    return div(select(eq(x, z), _ones_like(z), _zeros_like(z)),
               select(eq(y, z), _full_like(z, 2), _ones_like(z)))


def _max_min_lower(op_name):
    def lower(ctx, x, y):
        return stablehlo.max_min_body(ctx, x, y, op_name)
    return lower


def _zero_ordered(np_fn, zero_of, pick_first):
    """np.maximum or np.minimum with -0 below +0, as XLA orders them; NumPy's treat the
    zeros as equal and return the first operand (max(-0, 0) is -0 there, 0 in JAX).
    zero_of(x, y) is the result where both operands are zeros. Complex operands compare
    as JAX compares them, real parts then imaginary ones with pick_first (np.greater or
    np.less; nan compares false, so picks y), where NumPy's propagate nans."""
    def impl(x, y):
        if x.dtype.kind == "c":
            rx, ry = np.real(x), np.real(y)
            first = np.where(rx == ry, pick_first(np.imag(x), np.imag(y)), pick_first(rx, ry))
            return np.where(first, x, y)
        out = np_fn(x, y)
        if dtypes.is_float(out.dtype) and np.count_nonzero(out) != out.size:
            out = np.where((x == 0) & (y == 0), zero_of(x, y), out)
        return out
    return impl


# of two zeros, max is -0 only if both are; min is +0 only if both are
_max_impl = _zero_ordered(np.maximum, np.add, np.greater)
_min_impl = _zero_ordered(np.minimum, lambda x, y: -(-x + -y), np.less)


max_p = binary_op("max", _quiet(_max_impl), ANY, hlo="stablehlo.maximum",
                  lower=_max_min_lower("stablehlo.maximum"),
                  jet=_max_min_jet(lambda x, y: gt(x, y), lambda x, y: max(x, y)),
                  jvp=defjvp(lambda g, x, y: mul(g, _balanced_eq(x, max(x, y), y)),
                             lambda g, x, y: mul(g, _balanced_eq(y, max(x, y), x))))
min_p = binary_op("min", _quiet(_min_impl), ANY, hlo="stablehlo.minimum",
                  lower=_max_min_lower("stablehlo.minimum"),
                  jet=_max_min_jet(lambda x, y: lt(x, y), lambda x, y: min(x, y)),
                  jvp=defjvp(lambda g, x, y: mul(g, _balanced_eq(x, min(x, y), y)),
                             lambda g, x, y: mul(g, _balanced_eq(y, min(x, y), x))))
atan2_p = binary_op("atan2", _quiet(np.arctan2), (FLOAT,), hlo="stablehlo.atan2",
                    jet=_atan2_jet,
                    jvp=defjvp(lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
                               lambda g, x, y: mul(g, div(neg(x), add(square(x),
                                                                       square(y))))))


def _nextafter_impl(x, y):
    """y where x == y, as C's (and XLA's) nextafter: NumPy's float16 one returns x, so
    nextafter(0, -0) was 0, not -0."""
    return np.where(x == y, y, np.nextafter(x, y))


nextafter_p = binary_op("nextafter", _quiet(_nextafter_impl), (FLOAT,), jvp=NOT_DIFFERENTIABLE,
                        hlo="chlo.next_after")
# add_any accumulates tangents and cotangents; it is add without the dtype ceremony.
add_any_p = binary_op("add_any", _quiet(np.add), NUMBER, jvp=linear_jvp,
                      hlo="stablehlo.add", transpose=_add_transpose,
                      ur_rule=sharding_rules.add_ur, sharding_rule=sharding_rules.add_any,
                      checks_meshes=False)

neg_p = unary_op("neg", _quiet(np.negative), NUMBER, jvp=linear_jvp, hlo="stablehlo.negate",
                 transpose=_unary_linear_transpose(lambda ct: neg(ct)))


def _sign_lower(ctx, x):
    if x.aval.dtype.kind != "u":   # stablehlo.sign takes no unsigned operands
        return ctx.unary("stablehlo.sign", x)
    return ctx.convert(ctx.compare(x, ctx.full(0, (), x.aval.dtype), "NE"), x.aval.dtype)


def _sign_impl(x):
    return np.where(x == 0, x, np.sign(x))    # sign(-0.0) is -0.0, as in XLA


sign_p = unary_op("sign", _quiet(_sign_impl), NUMBER, jvp=zero_jvp, hlo="stablehlo.sign",
                  lower=_sign_lower)
floor_p = unary_op("floor", np.floor, (FLOAT,), jvp=zero_jvp, hlo="stablehlo.floor")
ceil_p = unary_op("ceil", np.ceil, (FLOAT,), jvp=zero_jvp, hlo="stablehlo.ceil")
round_p = unary_op("round", _quiet(_round_impl), (FLOAT,), jvp=zero_jvp,
                   hlo="stablehlo.round_nearest_afz",
                   lower=lambda ctx, x, rounding_method=0: ctx.unary(
                       "stablehlo.round_nearest_afz" if rounding_method == 0
                       else "stablehlo.round_nearest_even", x))
is_finite_p = unary_op("is_finite", np.isfinite, (FLOAT,), jvp=zero_jvp,
                       hlo="stablehlo.is_finite", result_dtype=lambda d: dtypes.bool_)


def _abs_jvp(g, ans, x):
    """JAX's: at 0 a real abs takes the slope +1 (x >= 0), and a complex one the
    tangent 0 (the division by |x| sees 1 there), not nan."""
    if dtypes.is_complex(get_aval(x).dtype):
        x_conj = conj(x)
        modulus = convert_element_type(ans, get_aval(x).dtype)
        safe = select(eq(modulus, _zeros_like(modulus)), _ones_like(modulus), modulus)
        return real(mul(g, div(x_conj, safe)))
    return select(ge(x, _zeros_like(x)), g, neg(g))


abs_p = unary_op("abs", np.abs, (FLOAT, "complex", SIGNED), hlo="stablehlo.abs",
                 jet=_abs_jet,
                 jvp=defjvp_with_output(_abs_jvp), result_dtype=dtypes.real_dtype)

# The ops below take accuracy= (their rules accept it; JVPs that depend on it do as JAX's).
exp_p = _accuracy_op("exp", _quiet(np.exp), INEXACT,
                     hlo="stablehlo.exponential", lower=_accuracy_lowering("stablehlo.exponential"),
                     jet=_exp_jet,
                     jvp=defjvp_with_output(lambda g, ans, x, accuracy=None: mul(g, ans)))
exp2_p = _accuracy_op("exp2", _quiet(np.exp2), INEXACT,
                      hlo="stablehlo.exponential", lower=_exp2_lower,
                      jvp=defjvp_with_output(lambda g, ans, x, accuracy=None: mul(
                          g, mul(ans, _const(x, math.log(2))))))
log_p = _accuracy_op("log", _quiet(np.log), INEXACT, hlo="stablehlo.log",
                     samples_domain=(0.5, 3), lower=_accuracy_lowering("stablehlo.log"),
                     jet=_log_jet,
                     jvp=defjvp(lambda g, x, accuracy=None: div(g, x)))
def _log1p_impl(x):
    if x.dtype.kind != "c":
        return np.log1p(x)
    # NumPy computes log(1 + z), which loses every digit of a small z. log|1 + z| is
    # log1p(a(2 + a) + b^2)/2 where |1 + z| is near 1, else log(hypot(1 + a, b)); complex64
    # runs in float64, so its result is correctly rounded nearly everywhere.
    a, b = x.real.astype(np.float64), x.imag.astype(np.float64)
    shifted = 1 + a
    size = np.hypot(shifted, b)
    near_one = (size > 0.7) & (size < 1.4)
    re = np.where(near_one, 0.5 * np.log1p(np.where(near_one, a * (2 + a) + b * b, 0)),
                  np.log(size))
    out = np.empty_like(x)
    out.real, out.imag = re, np.arctan2(b, shifted)
    return out


log1p_p = _accuracy_op("log1p", _quiet(_log1p_impl), INEXACT,
                       hlo="stablehlo.log_plus_one", samples_domain=(0, 2),
                       lower=_accuracy_lowering("stablehlo.log_plus_one"),
                       jet=_log1p_jet,
                       jvp=defjvp(lambda g, x, accuracy=None: div(g, add(x, _const(x, 1)))))


def _expm1_jvp(g, ans, x, accuracy=None):
    if accuracy is AccuracyMode.HIGHEST:
        return mul(g, exp(x, accuracy=accuracy))
    return mul(g, add(ans, _const(ans, 1)))


def _expm1_impl(x):
    if x.dtype.kind != "c":
        return np.expm1(x)
    # As XLA: the real part is expm1(a)cos(b) - 2sin(b/2)^2 (accurate near 0) and never -0;
    # the imaginary part exp(a)sin(b) is +0 where b is 0, so expm1(inf + 0j) is inf + 0j
    # (NumPy gives inf + nanj).
    a, b = x.real, x.imag
    out = np.empty_like(x)
    out.real = np.expm1(a) * np.cos(b) - 2 * np.sin(b / 2) ** 2 + 0.0
    out.imag = np.where(b == 0, 0, np.exp(a) * np.sin(b))
    return out


expm1_p = _accuracy_op("expm1", _quiet(_expm1_impl), INEXACT,
                       hlo="stablehlo.exponential_minus_one",
                       lower=_accuracy_lowering("stablehlo.exponential_minus_one"),
                       jet=_expm1_jet,
                       jvp=defjvp_with_output(_expm1_jvp))


def _tanh_jvp(g, ans, x, accuracy=None):
    if accuracy is AccuracyMode.HIGHEST:   # 4 logistic(2x) logistic(-2x)
        return mul(g, mul(_const(x, 4), mul(logistic(mul(_const(x, 2), x), accuracy=accuracy),
                                            logistic(mul(_const(x, -2), x),
                                                     accuracy=accuracy))))
    # (1 + y)(1 - y) rather than 1 - y**2: exact where |y| is close to 1
    return mul(add(g, mul(g, ans)), sub(_const(ans, 1), ans))


tanh_p = _accuracy_op("tanh", np.tanh, INEXACT, hlo="stablehlo.tanh",
                      lower=_accuracy_lowering("stablehlo.tanh"), jet=_tanh_jet,
                                                                  jvp=defjvp_with_output(_tanh_jvp))


def _logistic_impl(x):
    if x.dtype.kind == "c":   # 0 where exp(-x) overflows, not 1 / inf = nan
        e = np.exp(-x)
        return np.where(np.isinf(e), 0, 1 / (1 + e)).astype(x.dtype)
    return scipy_special("expit")(x).astype(x.dtype)


def _logistic_jvp(g, ans, x, accuracy=None):
    if accuracy is AccuracyMode.HIGHEST:
        return mul(g, mul(ans, logistic(neg(x))))
    return mul(g, mul(ans, sub(_const(ans, 1), ans)))


# As JAX, logistic lowers without the requested accuracy.
logistic_p = _accuracy_op("logistic", _quiet(_logistic_impl), INEXACT,
                          hlo="stablehlo.logistic", jet=_logistic_jet,
                                                    jvp=defjvp_with_output(_logistic_jvp))
def _unsigned_zeros(f):
    """f of complex operands whose zero parts are +0: XLA's complex sqrt, asin, acos,
    asinh and acosh ignore the sign of zero, so that (-3 - 0j) is on the branch cut's
    upper side, where NumPy (C99) puts it on the lower one."""
    def impl(x):
        return f(x + np.zeros((), x.dtype)) if x.dtype.kind == "c" else f(x)
    return impl


def _sin_cos_lowering(hlo, sine):
    """Real operands: `hlo` with the requested accuracy. Complex ones: JAX's formula
    sin(a + bi) = sin(a)cosh(b) + i cos(a)sinh(b) (cos(a + bi) = cos(a)cosh(b) - i
    sin(a)sinh(b)) with sinh and cosh from expm1, accurate where b is tiny, and an exact
    zero for the part that vanishes when a is 0."""
    real_lower = _accuracy_lowering(hlo)

    def lower(ctx, x, accuracy=None):
        if not dtypes.is_complex(x.aval.dtype):
            return real_lower(ctx, x, accuracy)
        part = dtypes.real_dtype(x.aval.dtype)
        a = ctx.unary("stablehlo.real", x, part)
        b = ctx.unary("stablehlo.imag", x, part)
        two = ctx.full(2, (), part)
        up = ctx.unary("stablehlo.exponential_minus_one", b)
        down = ctx.unary("stablehlo.exponential_minus_one", ctx.unary("stablehlo.negate", b))
        sinh_b = ctx.binary("stablehlo.divide", ctx.binary("stablehlo.subtract", up, down),
                            two)
        cosh_b = ctx.binary("stablehlo.divide", ctx.binary(
            "stablehlo.add", ctx.binary("stablehlo.add", up, down), two), two)
        sin_a, cos_a = ctx.unary("stablehlo.sine", a), ctx.unary("stablehlo.cosine", a)
        if sine:
            re, im = ctx.binary("stablehlo.multiply", sin_a, cosh_b), \
                ctx.binary("stablehlo.multiply", cos_a, sinh_b)
        else:
            re, im = ctx.binary("stablehlo.multiply", cos_a, cosh_b), ctx.unary(
                "stablehlo.negate", ctx.binary("stablehlo.multiply", sin_a, sinh_b))
        a_is_zero = ctx.compare(a, ctx.full(0, a.aval.shape, part), "EQ")
        zero = ctx.full(0, a.aval.shape, part)
        if sine:
            re = ctx.select(a_is_zero, zero, re)
        else:
            im = ctx.select(a_is_zero, zero, im)
        return ctx.binary("stablehlo.complex", re, im, x.aval.dtype)
    return lower


sin_p = _accuracy_op("sin", _quiet(np.sin), INEXACT, hlo="stablehlo.sine",
                     lower=_sin_cos_lowering("stablehlo.sine", sine=True),
                     jet=_sinusoid_jet(-1, (lambda x: sin(x), lambda x: cos(x)), 0),
                     jvp=defjvp(lambda g, x, accuracy=None: mul(g, cos(x, accuracy=accuracy))))
cos_p = _accuracy_op("cos", _quiet(np.cos), INEXACT, hlo="stablehlo.cosine",
                     lower=_sin_cos_lowering("stablehlo.cosine", sine=False),
                     jet=_sinusoid_jet(-1, (lambda x: sin(x), lambda x: cos(x)), 1),
                     jvp=defjvp(lambda g, x, accuracy=None: neg(mul(g, sin(x, accuracy=accuracy)))))
tan_p = _accuracy_op("tan", _quiet(np.tan), INEXACT, hlo="stablehlo.tan",
                     samples_domain=(-1, 1), lower=_accuracy_lowering("stablehlo.tan"),
                     jvp=defjvp_with_output(lambda g, ans, x, accuracy=None: mul(
                         g, add(_const(x, 1), square(ans)))))
asin_p = unary_op("asin", _quiet(_unsigned_zeros(np.arcsin)), INEXACT, hlo="chlo.asin",
                  samples_domain=(-0.9, 0.9),
                  jvp=defjvp(lambda g, x: mul(g, rsqrt(sub(_const(x, 1), square(x))))))
acos_p = unary_op("acos", _quiet(_unsigned_zeros(np.arccos)), INEXACT, hlo="chlo.acos",
                  samples_domain=(-0.9, 0.9),
                  jvp=defjvp(lambda g, x: neg(mul(g, rsqrt(sub(_const(x, 1), square(x)))))))
atan_p = unary_op("atan", np.arctan, INEXACT, hlo="chlo.atan",
                  jvp=defjvp(lambda g, x: div(g, add(_const(x, 1), square(x)))))
sinh_p = unary_op("sinh", _quiet(np.sinh), INEXACT, hlo="chlo.sinh",
                  jet=_sinusoid_jet(1, (lambda x: sinh(x), lambda x: cosh(x)), 0),
                  jvp=defjvp(lambda g, x: mul(g, cosh(x))))
cosh_p = unary_op("cosh", _quiet(np.cosh), INEXACT, hlo="chlo.cosh",
                  jet=_sinusoid_jet(1, (lambda x: sinh(x), lambda x: cosh(x)), 1),
                  jvp=defjvp(lambda g, x: mul(g, sinh(x))))
asinh_p = unary_op("asinh", _unsigned_zeros(np.arcsinh), INEXACT, hlo="chlo.asinh",
                   jet=_asinh_jet,
                   jvp=defjvp(lambda g, x: mul(g, rsqrt(add(square(x), _const(x, 1))))))
acosh_p = unary_op("acosh", _quiet(_unsigned_zeros(np.arccosh)), INEXACT, hlo="chlo.acosh",
                   samples_domain=(1.5, 3),
                   jet=_acosh_jet,
                   jvp=defjvp(lambda g, x: mul(g, rsqrt(mul(sub(x, _const(x, 1)),
                                                            add(x, _const(x, 1)))))))
atanh_p = unary_op("atanh", _quiet(np.arctanh), INEXACT, hlo="chlo.atanh",
                   samples_domain=(-0.9, 0.9),
                   jet=_atanh_jet,
                   jvp=defjvp(lambda g, x: div(g, sub(_const(x, 1), square(x)))))
def _rsqrt_impl(x):   # XLA's complex rsqrt, unlike its sqrt, keeps the sign of zero
    return (1 / np.sqrt(x)).astype(x.dtype)


sqrt_p = _accuracy_op("sqrt", _quiet(_unsigned_zeros(np.sqrt)), INEXACT, hlo="stablehlo.sqrt",
                      samples_domain=(0.5, 3), lower=_accuracy_lowering("stablehlo.sqrt"),
                      jet=_sqrt_jet,
                      jvp=defjvp_with_output(
                          lambda g, ans, x, accuracy=None: div(g, mul(_const(x, 2), ans))))
rsqrt_p = _accuracy_op("rsqrt", _quiet(_rsqrt_impl), INEXACT,
                       hlo="stablehlo.rsqrt", samples_domain=(0.5, 3),
                       lower=_accuracy_lowering("stablehlo.rsqrt"),
                       jet=_rsqrt_jet,
                       jvp=defjvp_with_output(lambda g, ans, x, accuracy=None: mul(
                           g, mul(_const(x, -0.5), div(ans, x)))))
cbrt_p = _accuracy_op("cbrt", _quiet(np.cbrt), (FLOAT,), hlo="stablehlo.cbrt",
                      samples_domain=(0.5, 3), lower=_accuracy_lowering("stablehlo.cbrt"),
                      jvp=defjvp_with_output(
                          lambda g, ans, x, accuracy=None: div(g, mul(_const(x, 3), square(ans)))))
_ACCURACY_PRIMITIVES = (exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p, logistic_p, sin_p,
                       cos_p, tan_p, sqrt_p, rsqrt_p, cbrt_p)
square_p = unary_op("square", _quiet(np.square), NUMBER, hlo="stablehlo.multiply",
                    lower=lambda ctx, x: ctx.binary("stablehlo.multiply", x, x),
                    jet=_square_jet,
                    jvp=defjvp(lambda g, x: mul(g, mul(_const(x, 2), x))))


def _integer_pow_lower(ctx, x, y):
    """x ** y by repeated squaring; a negative y divides one by the result."""
    if y == 0:
        return ctx.full(1, x.aval.shape, x.aval.dtype)
    acc, base, n = None, x, builtins.abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else ctx.binary("stablehlo.multiply", acc, base)
        n >>= 1
        if n:
            base = ctx.binary("stablehlo.multiply", base, base)
    if y < 0:
        acc = ctx.binary("stablehlo.divide", ctx.full(1, (), x.aval.dtype), acc)
    return acc


integer_pow_p = unary_op("integer_pow", _quiet(_integer_pow_impl), NUMBER,
                         hlo="stablehlo.multiply", lower=_integer_pow_lower,
                         jet=_integer_pow_jet,
                         jvp=defjvp(_integer_pow_jvp), check=_check_integer_pow,
                         samples=lambda: [b.Sample([b.random_values((2, 3), np.float32,
                                                                    (0.5, 2))], {"y": y})
                                          for y in (0, 1, 2, 3, -2)])


def _float_special(name):
    f = scipy_special(name)
    return _quiet(lambda x: f(x).astype(x.dtype))


erf_p = unary_op("erf", _float_special("erf"), (FLOAT,), hlo="chlo.erf",
                 jet=_erf_jet,
                 jvp=defjvp(lambda g, x: mul(g, mul(_const(x, 2 / math.sqrt(math.pi)),
                                                    exp(neg(square(x)))))))
erfc_p = unary_op("erfc", _float_special("erfc"), (FLOAT,), hlo="chlo.erfc",
                  jet=_erfc_jet,
                  jvp=defjvp(lambda g, x: mul(g, mul(_const(x, -2 / math.sqrt(math.pi)),
                                                     exp(neg(square(x)))))))
erf_inv_p = unary_op("erf_inv", _float_special("erfinv"), (FLOAT,), hlo="chlo.erf_inv",
                     samples_domain=(-0.9, 0.9),
                     jet=_erf_inv_jet,
                     jvp=defjvp_with_output(lambda g, ans, x: mul(
                         g, mul(_const(x, math.sqrt(math.pi) / 2), exp(square(ans))))))
def _lgamma_impl(x):
    # XLA gives +inf at -inf (|gamma| grows without bound there); SciPy gives -inf.
    out = scipy_special("gammaln")(x).astype(x.dtype)
    return np.where(np.isneginf(x), np.array(np.inf, x.dtype), out)


lgamma_p = unary_op("lgamma", _quiet(_lgamma_impl), (FLOAT,), hlo="chlo.lgamma",
                    samples_domain=(0.5, 3), jvp=defjvp(lambda g, x: mul(g, digamma(x))))
def _digamma_impl(x):
    # XLA gives NaN at the poles (0 and the negative integers); SciPy gives -inf at 0.
    out = scipy_special("digamma")(x).astype(x.dtype)
    return np.where((x <= 0) & (x == np.floor(x)), np.array(np.nan, x.dtype), out)


digamma_p = unary_op("digamma", _quiet(_digamma_impl), (FLOAT,), hlo="chlo.digamma",
                     samples_domain=(0.5, 3),
                     jvp=defjvp(lambda g, x: mul(g, polygamma(_const(x, 1), x))))
polygamma_p = binary_op("polygamma",
                        _quiet(lambda m, x: scipy_special("polygamma")(m, x).astype(x.dtype)),
                        (FLOAT,), hlo="chlo.polygamma",
                        jvp=defjvp(None, lambda g, m, x: mul(g, polygamma(
                            add(m, _const(m, 1)), x))),
                        samples=lambda: [b.Sample([np.float32(n), b.random_values(
                            (3,), np.float32, (0.5, 3))]) for n in (0, 1, 2)])

real_p = unary_op("real", np.real, ("complex",), hlo="stablehlo.real", jvp=linear_jvp,
                  result_dtype=dtypes.real_dtype,
                  transpose=_unary_linear_transpose(lambda ct: complex(ct, _strong_zeros(ct))))
imag_p = unary_op("imag", np.imag, ("complex",), hlo="stablehlo.imag", jvp=linear_jvp,
                  result_dtype=dtypes.real_dtype,
                  transpose=_unary_linear_transpose(
                      lambda ct: complex(_strong_zeros(ct), neg(ct))))


def _check_conj(x, input_dtype):
    if x.dtype.kind == "f" and x.dtype not in (np.float32, np.float64):
        raise TypeError(f"conj does not accept dtype {x.dtype.name}. Accepted dtypes are "
                        "subtypes of float32, complexfloating, float64.")


def _conj_lowering(ctx, x, input_dtype):
    if dtypes.is_complex(input_dtype):
        return ctx.unary("chlo.conj", x)
    return ctx.convert(x, ctx.avals_out[0].dtype)


# As in JAX, the conjugate of a real operand is complex (its transpose takes the real
# part back).
conj_p = unary_op(
    "conj", lambda x, input_dtype: np.conj(x).astype(dtypes.complex_dtype(x.dtype)),
    INEXACT, hlo=None, jvp=linear_jvp, check=_check_conj, lower=_conj_lowering,
    result_dtype=dtypes.complex_dtype,
    transpose=lambda ct, x, input_dtype: [
        conj(ct) if dtypes.is_complex(input_dtype) else real(ct)],
    samples=lambda: [b.Sample([b.random_values((2, 3), d)], {"input_dtype": np.dtype(d)})
                     for d in (np.float32, np.complex64)])
def _complex_impl(x, y):
    """x + iy, set part by part: x + 1j * y would turn an infinite y into nan + inf j."""
    out = np.empty(np.broadcast_shapes(np.shape(x), np.shape(y)), dtypes.complex_dtype(x.dtype))
    out.real, out.imag = x, y
    return out


complex_p = binary_op("complex", _complex_impl, (FLOAT,), hlo="stablehlo.complex",
    jvp=linear_jvp,
    result_dtype=lambda d: dtypes.complex128 if d == dtypes.float64 else dtypes.complex64,
    transpose=lambda ct, x, y: [
        unbroadcast(x.aval, real(ct)) if ad.is_undefined_primal(x) else None,
        unbroadcast(y.aval, imag(neg(ct))) if ad.is_undefined_primal(y) else None])
# The transpose copies too, so that a cotangent is never the caller's own array (JAX's).
copy_p = unary_op("copy", np.copy, ANY, hlo=None, jvp=linear_jvp, lower=lambda ctx, x: x,
                  transpose=_unary_linear_transpose(lambda ct: copy_p.bind(ct)))

# --- comparison, logical and bitwise ------------------------------------------------------

_to_bool = lambda d: dtypes.bool_   # noqa: E731
_ORDERED = (FLOAT, BOOL) + INT   # complex numbers have no order
eq_p = binary_op("eq", np.equal, ANY, jvp=zero_jvp, hlo="EQ", result_dtype=_to_bool)
ne_p = binary_op("ne", np.not_equal, ANY, jvp=zero_jvp, hlo="NE", result_dtype=_to_bool)
lt_p = binary_op("lt", np.less, _ORDERED, jvp=zero_jvp, hlo="LT", result_dtype=_to_bool)
le_p = binary_op("le", np.less_equal, _ORDERED, jvp=zero_jvp, hlo="LE", result_dtype=_to_bool)
gt_p = binary_op("gt", np.greater, _ORDERED, jvp=zero_jvp, hlo="GT", result_dtype=_to_bool)
ge_p = binary_op("ge", np.greater_equal, _ORDERED, jvp=zero_jvp, hlo="GE", result_dtype=_to_bool)


def _total_order_key(x):
    """Integers ordered as IEEE totalOrder orders the floats x (-NaN < -inf < ... < -0 <
    +0 < ... < +inf < +NaN); integer and bool operands are their own keys."""
    if not dtypes.is_float(x.dtype):
        return x
    signed = x.view(np.dtype(f"i{x.dtype.itemsize}"))
    magnitude_bits = np.iinfo(signed.dtype).max
    return signed ^ ((signed >> (8 * x.dtype.itemsize - 1)) & magnitude_bits)


def _total_order_comparison(name, compare, direction, accepted):
    """JAX's eq_to/le_to/lt_to: comparisons under the total order (stablehlo TOTALORDER)."""
    return binary_op(name, lambda x, y: compare(_total_order_key(x), _total_order_key(y)),
                     accepted, jvp=zero_jvp, hlo=None, result_dtype=_to_bool,
                     lower=stablehlo.compare_lowering(direction, total_order=True))


eq_to_p = _total_order_comparison("eq_to", np.equal, "EQ", _ORDERED)
le_to_p = _total_order_comparison("le_to", np.less_equal, "LE", _ORDERED)
lt_to_p = _total_order_comparison("lt_to", np.less, "LT", _ORDERED)

_BITS = INT + (BOOL,)
not_p = unary_op("not", np.invert, _BITS, jvp=zero_jvp, hlo="stablehlo.not")
and_p = binary_op("and", np.bitwise_and, _BITS, jvp=zero_jvp, hlo="stablehlo.and")
or_p = binary_op("or", np.bitwise_or, _BITS, jvp=zero_jvp, hlo="stablehlo.or")
xor_p = binary_op("xor", np.bitwise_xor, _BITS, jvp=zero_jvp, hlo="stablehlo.xor")


def _shift_impl(kind):
    def impl(x, y):
        bits = x.dtype.itemsize * 8
        unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
        count = y.astype(np.int64)
        out_of_range = (count < 0) | (count >= bits)
        safe = np.where(out_of_range, 0, count)
        if kind == "left":
            r = np.left_shift(x, safe.astype(x.dtype))
            return np.where(out_of_range, 0, r).astype(x.dtype)
        if kind == "logical":
            r = np.right_shift(unsigned, safe.astype(unsigned.dtype)).view(x.dtype)
            return np.where(out_of_range, 0, r).astype(x.dtype)
        # arithmetic: the bits as signed (XLA shifts an unsigned operand's top bit in too)
        signed = x.view(np.dtype(f"i{x.dtype.itemsize}"))
        r = np.right_shift(signed, safe.astype(signed.dtype))
        r = np.where(out_of_range, np.where(signed < 0, -1, 0), r).astype(signed.dtype)
        return r.view(x.dtype)
    return impl


shift_left_p = binary_op("shift_left", _shift_impl("left"), INT, jvp=zero_jvp,
                         hlo="stablehlo.shift_left", samples_domain=(0, 5))
shift_right_logical_p = binary_op("shift_right_logical", _shift_impl("logical"), INT,
                                  jvp=zero_jvp, hlo="stablehlo.shift_right_logical",
                                  samples_domain=(0, 5))
shift_right_arithmetic_p = binary_op("shift_right_arithmetic", _shift_impl("arith"), INT,
                                     jvp=zero_jvp, hlo="stablehlo.shift_right_arithmetic",
                                     samples_domain=(0, 5))


def _popcount(x):
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    return np.array([bin(int(v)).count("1") for v in u.ravel()],
                    dtype=x.dtype).reshape(x.shape)


def _clz(x):
    bits = x.dtype.itemsize * 8
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    return np.array([bits - int(v).bit_length() for v in u.ravel()],
                    dtype=x.dtype).reshape(x.shape)


population_count_p = unary_op("population_count", _popcount, INT, jvp=zero_jvp,
                              hlo="stablehlo.popcnt")
clz_p = unary_op("clz", _clz, INT, jvp=zero_jvp, hlo="stablehlo.count_leading_zeros")


# --- select_n and clamp -----------------------------------------------------------------

def _select_n_abstract_eval(which, *cases):
    if not cases:
        raise TypeError("select_n requires at least one case")
    if which.dtype != np.bool_ and which.dtype.kind not in "iu":
        raise TypeError(f"select_n selector must be bool or integer, got {which.dtype}")
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError("select_n with a boolean selector takes at most two cases")
    first = cases[0]
    for c in cases[1:]:
        if c.shape != first.shape or c.dtype != first.dtype:
            raise TypeError("select_n cases must have the same shapes and dtypes, got "
                            f"{[str(c) for c in cases]}")
    if which.shape and which.shape != first.shape:
        raise TypeError(f"select_n selector shape {which.shape} must be scalar or equal "
                        f"to the case shape {first.shape}")
    return ShapedArray(first.shape, first.dtype, all(c.weak_type for c in cases))


def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    return np.choose(np.clip(which, 0, len(cases) - 1).astype(np.int64), cases)


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    out = select_n(which, *cases)
    case_tangents = tangents[1:]
    if all(type(t) is Zero for t in case_tangents):
        return out, Zero(ad.tangent_aval(get_aval(out)))
    return out, select_n(which, *map(ad.instantiate_zeros, case_tangents))


def _select_n_transpose(ct, which, *cases):
    if ad.is_undefined_primal(which):
        raise ValueError("select_n is not linear in its selector")
    zeros = _zeros_like(ct)
    out = [None]
    for i, c in enumerate(cases):
        if ad.is_undefined_primal(c):
            picks = [zeros] * len(cases)
            picks[i] = ct
            out.append(select_n(which, *picks))
        else:
            out.append(None)
    return out


def _select_n_samples():
    x = b.random_values((2, 3), np.float32, seed=0)
    y = b.random_values((2, 3), np.float32, seed=1)
    z = b.random_values((2, 3), np.float32, seed=2)
    return [b.Sample([x > 0, x, y]), b.Sample([np.array(True), x, y]),
            b.Sample([np.array([[0, 1, 2], [2, 1, 0]], np.int32), x, y, z])]


def _select_n_batch(args, dims):
    (which, *cases), (wd, *case_dims) = args, dims
    size = batching.axis_size_of(args, dims)
    case_dim = next((d for d in case_dims if d is not None), None)
    if wd is None and not get_aval(which).shape:   # one scalar selector for all examples
        return select_n_p.bind(which, *[batching.move_or_broadcast(c, d, case_dim, size)
                                        for c, d in zip(cases, case_dims)]), case_dim
    # Cases and selector must agree in shape: everything gets the batch in front.
    c0 = get_aval(cases[0])
    shape = c0.shape if case_dims[0] is None else \
        c0.shape[:case_dims[0]] + c0.shape[case_dims[0] + 1:]
    return select_n_p.bind(batching.broadcast_batched(which, wd, size, shape),
                           *[batching.bdim_at_front(c, d, size)
                             for c, d in zip(cases, case_dims)]), 0


def _select_n_lower(ctx, which, *cases):
    """A bool selector is one stablehlo.select; an integer one a balanced tree of them
    (out-of-range selectors pick the first or last case, as the impl's clip does)."""
    if len(cases) == 1:
        return cases[0]
    if which.aval.dtype == np.bool_:
        return ctx.select(which, cases[1], cases[0])

    def pick(lo, hi):
        if hi - lo == 1:
            return cases[lo]
        mid = (lo + hi) // 2
        below = ctx.compare(which, ctx.full(mid, (), which.aval.dtype), "LT")
        return ctx.select(below, pick(lo, mid), pick(mid, hi))
    return pick(0, len(cases))


select_n_p = define_primitive(
    "select_n", impl=_select_n_impl, abstract_eval=sharding_rules.typed(
        _select_n_abstract_eval, sharding_rules.elementwise("select_n"),
        sharding_rules.select_ur),
    jet=_select_n_jet,
    jvp=_select_n_jvp, transpose=_select_n_transpose, batch=_select_n_batch,
    lower=_select_n_lower, samples=lambda: _select_n_samples())


def _clamp_abstract_eval(lo, x, hi):
    b.same_dtypes("clamp", [lo, x, hi])
    for bound in (lo, hi):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(f"clamp requires min and max to be scalars or of the operand "
                            f"shape {x.shape}, got {bound.shape}")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _clamp_batch(args, dims):
    (lo, x, hi), (lo_d, xd, hi_d) = args, dims
    size = batching.axis_size_of(args, dims)
    x = batching.bdim_at_front(x, xd, size)
    shape = get_aval(x).shape[1:]
    # Unbatched scalar bounds broadcast by themselves; other bounds must match x's shape.
    lo, hi = [b_ if d is None and not get_aval(b_).shape else
              batching.broadcast_batched(b_, d, size, shape)
              for b_, d in ((lo, lo_d), (hi, hi_d))]
    return clamp_p.bind(lo, x, hi), 0


clamp_p = define_primitive(
    "clamp", impl=lambda lo, x, hi: _min_impl(_max_impl(x, lo), hi),
    abstract_eval=sharding_rules.typed(
        _clamp_abstract_eval, sharding_rules.elementwise("clamp"),
        sharding_rules.nary_ur("clamp")), batch=_clamp_batch,
    lower=lambda ctx, lo, x, hi: ctx.op("stablehlo.clamp", [lo, x, hi], x.aval),
    jet=_clamp_jet,
    jvp=defjvp(lambda g, lo, x, hi: select(bitwise_and(gt(lo, x), lt(lo, hi)),
                                           _broadcast_like(g, x), _zeros_like(x)),
               lambda g, lo, x, hi: select(bitwise_and(gt(x, lo), lt(x, hi)), g,
                                           _zeros_like(g)),
               lambda g, lo, x, hi: select(lt(hi, x), _broadcast_like(g, x),
                                           _zeros_like(x))),
    samples=lambda: [b.Sample([np.float32(-0.5), b.random_values((2, 3), np.float32),
                       np.float32(0.5)])])


# --- dtype conversion -------------------------------------------------------------------

def _convert_abstract_eval(x, new_dtype, weak_type=False):
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(x, new_dtype, weak_type=False):
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        x = np.real(x)
    if dtypes.is_float(x.dtype) and np.dtype(new_dtype).kind in "iu":
        # XLA saturates (NaN -> 0), from ml_dtypes' floats (bfloat16, ...) too. Compare in
        # float64: the integer bounds are not representable in narrower floats, and a
        # cast past them wraps in NumPy.
        info = np.iinfo(new_dtype)
        t = np.trunc(np.asarray(x, np.float64))
        high, low = t >= float(info.max), t <= float(info.min)
        inside = np.where(high | low | np.isnan(t), 0, t).astype(new_dtype)
        return np.where(high, np.array(info.max, new_dtype),
                        np.where(low, np.array(info.min, new_dtype), inside))
    if x.dtype == np.bool_ and new_dtype == np.uint8:
        # XLA keeps a bool's byte as it is (a bool made from other bytes, by a view of
        # them, reads back unchanged through Array.view); NumPy's cast makes it 0 or 1
        return np.asarray(x).view(np.uint8).copy()
    return np.asarray(x).astype(new_dtype)


def _convert_jvp(primals, tangents, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if type(t) is Zero or not (dtypes.is_inexact(get_aval(x).dtype)
                               and dtypes.is_inexact(new_dtype)):
        return out, Zero(ad.tangent_aval(get_aval(out)))
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


def _convert_transpose(ct, x, new_dtype, weak_type=False):
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype,
                                        weak_type=x.aval.weak_type)]


convert_element_type_p = define_primitive(
    "convert_element_type", impl=_quiet(_convert_impl),
    abstract_eval=sharding_rules.typed(_convert_abstract_eval, sharding_rules.same,
                                        sharding_rules.operand_ur),
    jet=jet.linear_rule,
    jvp=_convert_jvp, transpose=_convert_transpose,
    batch=batching.elementwise_rule,
    lower=lambda ctx, x, new_dtype, weak_type=False: ctx.convert(x, new_dtype),
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32)], {"new_dtype": np.dtype(d)})
             for d in (np.int32, np.float16, np.bool_)] + [
        b.Sample([b.random_values((3,), np.int32)], {"new_dtype": np.dtype(np.float32)})])


def _bitcast_abstract_eval(x, new_dtype):
    old, new = dtypes.itemsize_bits(x.dtype), dtypes.itemsize_bits(new_dtype)
    if old == new:
        shape = x.shape
    elif old > new:
        shape = x.shape + (old // new,)
    else:
        if not x.shape or x.shape[-1] != new // old:
            raise TypeError(f"bitcast_convert_type from {x.dtype} to {new_dtype} needs a "
                            f"last dimension of {new // old}, got shape {x.shape}")
        shape = x.shape[:-1]
    return ShapedArray(shape, new_dtype)


def _bitcast_impl(x, new_dtype):
    """As XLA's BitcastConvert on a little-endian machine: a wider element is made of
    the narrower ones along the last dimension, the first in its lowest bits."""
    new_dtype = np.dtype(new_dtype)
    old, new = dtypes.itemsize_bits(x.dtype), dtypes.itemsize_bits(new_dtype)
    if builtins.min(old, new) < 8:
        return _bitcast_sub_byte(x, new_dtype, old, new)
    out = np.ascontiguousarray(x).view(new_dtype)
    if old > new:
        return out.reshape(x.shape + (old // new,))
    if old < new:
        return out.reshape(x.shape[:-1])
    return out.reshape(x.shape)   # ascontiguousarray makes a 0-d array 1-d


def _bit_codes(x, bits):
    """Each element's bits as an unsigned integer (a sub-byte type's are the low bits of
    the byte ml_dtypes stores it in)."""
    if bits < 8:
        return np.ascontiguousarray(x).view(np.uint8) & np.uint8((1 << bits) - 1)
    return np.ascontiguousarray(x).view(np.dtype(f"u{bits // 8}")).reshape(x.shape)


def _bitcast_sub_byte(x, new_dtype, old, new):
    """bitcast_convert_type where 2 or 4-bit types are involved: elements split into or
    joined from narrower ones in little-endian order, as XLA does."""
    codes = _bit_codes(x, old)
    wide = np.dtype(f"u{builtins.max(old, new, 8) // 8}")
    if old > new:
        shifts = np.arange(old // new, dtype=wide) * wide.type(new)
        codes = (codes[..., None].astype(wide) >> shifts) & wide.type((1 << new) - 1)
    elif old < new:
        shifts = np.arange(new // old, dtype=wide) * wide.type(old)
        codes = np.bitwise_or.reduce(codes.astype(wide) << shifts, axis=-1)
    storage = np.uint8 if new < 8 else np.dtype(f"u{new // 8}")
    return np.asarray(codes, storage).view(new_dtype)


def _bitcast_batch(args, dims, new_dtype):
    (x,), (d,) = args, dims
    aval = get_aval(x)
    if dtypes.itemsize_bits(new_dtype) > dtypes.itemsize_bits(aval.dtype) \
            and d == aval.ndim - 1:
        x, d = batching.moveaxis(x, d, 0), 0   # the last dim is consumed by the cast
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


bitcast_convert_type_p = define_primitive(
    "bitcast_convert_type", impl=_bitcast_impl, abstract_eval=sharding_rules.typed(
        _bitcast_abstract_eval, sharding_rules.bitcast_convert_type),
    jvp=zero_jvp, batch=_bitcast_batch,
    lower=lambda ctx, x, new_dtype: ctx.op("stablehlo.bitcast_convert", [x],
                                           ctx.avals_out[0]),
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32)], {"new_dtype": np.dtype(d)})
             for d in (np.int32, np.uint8)])


# --- the strict lax wrappers --------------------------------------------------------------

def _unary(prim):
    def op(x):
        return prim.bind(x)
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise {prim.name} (lax: no type promotion)."
    return op


def _unary_with_accuracy(prim):
    def op(x, *, accuracy=None):
        if accuracy is None:
            return prim.bind(x)
        if not isinstance(accuracy, (AccuracyMode, Tolerance)):
            raise NotImplementedError(f"Accuracy {accuracy!r} not supported: lax.{prim.name} "
                                      "takes a lax.AccuracyMode or a lax.Tolerance.")
        return prim.bind(x, accuracy=accuracy)
    op.__name__ = prim.name
    op.__doc__ = (f"Elementwise {prim.name} (lax: no type promotion); `accuracy` requests "
                  "an implementation (lax.AccuracyMode or lax.Tolerance).")
    return op


def _binary(prim):
    def op(x, y):
        return prim.bind(x, y)
    op.__name__ = prim.name
    op.__doc__ = f"Elementwise {prim.name}; operands must share a dtype (lax is strict)."
    return op


add, sub, div, rem, pow, max, min, atan2, nextafter = map(_binary, (
    add_p, sub_p, div_p, rem_p, pow_p, max_p, min_p, atan2_p, nextafter_p))


def mul(x, y, *, out_dtype=None):
    """Elementwise product; operands must share a dtype (lax is strict) unless out_dtype
    is given: then both are converted to out_dtype first, as XLA does on CPU."""
    if out_dtype is not None:
        out_dtype = dtypes.canonicalize_dtype(out_dtype)
        x, y = convert_element_type(x, out_dtype), convert_element_type(y, out_dtype)
    return mul_p.bind(x, y)
eq, ne, lt, le, gt, ge = map(_binary, (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))
bitwise_and, bitwise_or, bitwise_xor = map(_binary, (and_p, or_p, xor_p))
shift_left, shift_right_logical, shift_right_arithmetic = map(_binary, (
    shift_left_p, shift_right_logical_p, shift_right_arithmetic_p))
complex, polygamma = _binary(complex_p), _binary(polygamma_p)
(neg, sign, floor, ceil, is_finite, abs, asin, acos, atan, sinh, cosh, asinh, acosh, atanh,
 square, erf, erfc, erf_inv, lgamma, digamma, real, imag, population_count, clz) = map(
    _unary, (neg_p, sign_p, floor_p, ceil_p, is_finite_p, abs_p, asin_p, acos_p, atan_p,
             sinh_p, cosh_p, asinh_p, acosh_p, atanh_p, square_p, erf_p, erfc_p, erf_inv_p,
             lgamma_p, digamma_p, real_p, imag_p, population_count_p, clz_p))
(exp, exp2, log, log1p, expm1, tanh, logistic, sin, cos, tan, sqrt, rsqrt, cbrt) = map(
    _unary_with_accuracy, _ACCURACY_PRIMITIVES)
bitwise_not = _unary(not_p)


def conj(x):
    """Complex conjugate; a real operand gives its complex value (as JAX's lax.conj)."""
    return conj_p.bind(x, input_dtype=get_aval(x).dtype)


def round(x, rounding_method=0):
    """Rounds to the nearest integer: 0 = away from zero on ties, 1 = to even."""
    if rounding_method not in (0, 1):
        raise ValueError(f"lax.round rounding_method must be 0 (AWAY_FROM_ZERO) or 1 "
                         f"(TO_NEAREST_EVEN), got {rounding_method!r}")
    return round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x, y):
    """x ** y for a static Python integer y."""
    if not isinstance(y, (int, np.integer)) or isinstance(y, bool):
        raise TypeError(f"lax.integer_pow requires a static Python integer exponent, got "
                        f"{y!r} of type {type(y).__name__}; use lax.pow for other exponents.")
    return integer_pow_p.bind(x, y=int(y))


def select_n(which, *cases):
    """Picks, per element, the case numbered by `which` (bool: False=0, True=1)."""
    keys = getattr(cases[0], "dtype", None) if cases else None
    if isinstance(keys, dtypes.ExtendedDType):   # typed keys: pick whole keys' data
        if any(getattr(c, "dtype", None) != keys for c in cases):
            raise TypeError(f"select_n cases must all have the same dtype, got "
                            f"{[str(getattr(c, 'dtype', type(c))) for c in cases]}.")
        data = [keys.to_physical(c) for c in cases]
        which_aval, shape = get_aval(which), get_aval(data[0]).shape
        if which_aval.ndim:   # one choice per key: the same for all of its data
            which = b.bind_primitive("broadcast_in_dim", which, shape=shape,
                                     broadcast_dimensions=tuple(range(which_aval.ndim)))
        return keys.from_physical(select_n_p.bind(which, *data))
    return select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    """Elementwise pred ? on_true : on_false."""
    true_dtype, false_dtype = get_aval(on_true).dtype, get_aval(on_false).dtype
    if true_dtype != false_dtype:   # select_n's own error would name select_n
        raise TypeError(f"lax.select requires arguments to have the same dtypes, got "
                        f"{false_dtype}, {true_dtype}. (Tip: jnp.where is a similar "
                        "function that does automatic type promotion on inputs).")
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):
    """Elementwise min(max(x, min), max)."""
    return clamp_p.bind(min, x, max)


def convert_element_type(operand, new_dtype):
    """Casts operand to new_dtype (canonicalised: float64 is float32 when x64 is off)."""
    aval = get_aval(operand)
    if isinstance(new_dtype, dtypes.ExtendedDType) or \
            isinstance(aval.dtype, dtypes.ExtendedDType):   # typed keys have no casts
        target = new_dtype if isinstance(new_dtype, dtypes.ExtendedDType) else \
            dtypes.canonicalize_dtype(new_dtype)
        raise ValueError(f"Cannot convert_element_type from {aval.dtype} to {target}: "
                         "key arrays convert to and from their integer data with "
                         "jax.random.key_data and jax.random.wrap_key_data.")
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if type(operand) in (bool, int, float, complex):
        # As JAX: a Python scalar is converted on the host, so it becomes a constant and
        # an int wraps modulo the target's range (2**32 -> 0 in int32) where its
        # weak-typed aval would refuse it; past 64 bits NumPy raises OverflowError.
        with np.errstate(all="ignore"):
            operand = np.asarray(operand).astype(new_dtype)
        aval = get_aval(operand)
    if aval.dtype == new_dtype and not aval.weak_type:
        return as_array(operand)
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=False)


def bitcast_convert_type(operand, new_dtype):
    return bitcast_convert_type_p.bind(operand,
                                       new_dtype=dtypes.canonicalize_dtype(new_dtype))


# --- constants of a given operand's type --------------------------------------------------

def _const(like, value):
    """A scalar constant with `like`'s dtype: a literal in jaxprs, broadcast by lax. Weakly
    typed when `like` is a weakly typed scalar, as JAX's rules make theirs (so a weak
    input's derivative stays weak)."""
    aval = get_aval(like)
    return _scalar(value, aval.dtype, aval.weak_type and not aval.shape)


def _scalar(value, dtype, weak_type):
    c = np.array(value, dtype=dtype)
    return Array(c, aval=ShapedArray((), c.dtype, weak_type=True)) if weak_type else c


def _full_like(x, value):
    """`value` in x's shape and dtype, weakly typed when x is (as lax.full_like): a rule's
    zeros or ones keep a weakly typed gradient weak."""
    aval = get_aval(x)
    return _broadcast_scalar(_scalar(value, aval.dtype, aval.weak_type), aval.shape)


def _broadcast_scalar(c, shape):
    """Scalar c broadcast to `shape`, as lax.broadcast_in_dim(c, shape, ()) (structural.py
    is a family above this one)."""
    if not shape:
        return as_array(c)
    return b.bind_primitive("broadcast_in_dim", c, shape=shape, broadcast_dimensions=())


def _zeros_like(x):
    return _full_like(x, 0)


def _strong_zeros(x):
    """Zeros in x's shape and dtype, never weakly typed: real's and imag's transposes
    build their complex cotangent with them, as JAX does (so it is not weak)."""
    aval = get_aval(x)
    return _broadcast_scalar(_scalar(0, aval.dtype, False), aval.shape)


def _broadcast_like(g, x):
    """g broadcast to x's shape as an elementwise op broadcasts its operands (trailing
    dimensions aligned): a scalar bound's tangent (clamp's JVP), an operand's tangent to
    the result (add's and sub's)."""
    shape, g_shape = get_aval(x).shape, get_aval(g).shape
    if g_shape == shape:
        return g
    return b.bind_primitive("broadcast_in_dim", g, shape=shape, broadcast_dimensions=tuple(
        range(len(shape) - len(g_shape), len(shape))))


def _ones_like(x):
    return _full_like(x, 1)


def zeros_like(x):
    return _zeros_like(x)


def _safe_log(x):
    """log(x) with log(0) replaced by 0: d/dy x**y at x=0 is 0, not nan."""
    is_zero = eq(x, _zeros_like(x))
    return select(is_zero, _zeros_like(x), log(select(is_zero, _ones_like(x), x)))
