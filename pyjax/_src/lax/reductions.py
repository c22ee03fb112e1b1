"""Reductions over axes (sum, max, min, prod, and, or, xor, argmax, argmin) and the
cumulative ops along one axis (cumsum, cumprod, cummax, cummin, cumlogsumexp)."""
from __future__ import annotations

import math
import operator

import numpy as np

from pyjax._src import config, dtypes
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, cotangent_sharding, get_aval
from pyjax._src.core.trace import RuleFactory, define_primitive
from pyjax._src.interpreters import ad, batching, jet
from pyjax._src.interpreters.ad import Zero, linear_jvp, zero_jvp
from pyjax._src.lax import builders as b
from pyjax._src.lax import sharding_rules
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import structural as st
from pyjax._src.lax.control_flow.associative import associative_scan
from pyjax._src.lax.sharding_constraint import (as_type, out_sharding_for,
                                                with_sharding_constraint)
from pyjax._src.lax.slicing import slice_in_dim
from pyjax._src.lax.builders import ANY, BOOL, INT, NUMBER
from pyjax._src.shape_poly import is_symbolic_dim
from pyjax._src.util import canonicalize_axes


def _reduced_shape(shape, axes):
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _expand_reduced(x, in_shape, axes):
    """Broadcasts a reduced result back to the operand's shape."""
    kept = tuple(i for i in range(len(in_shape)) if i not in axes)
    return st.broadcast_in_dim(x, in_shape, kept)


def _check_axes(name, x, axes):
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise TypeError(f"{name}: axes {axes} are invalid for an operand of shape {x.shape}")


def _reduction(name, np_fn, accepted, *, jvp, transpose=None, identity_hlo, check=None,
               ur_rule=None, batch=batching.reduction_rule, jet_rule=None,
               shown_params=None):
    """`check(x, axes)` refuses operands (given avals when tracing, arrays when eager:
    eager abstract evaluations are memoised, so a check reading config runs in impl too).
    `ur_rule` types unreduced/reduced results (by default: reduced operands only). A
    reduction may be given an `out_sharding` (its result's type over the mesh)."""
    def abstract_eval(x, axes, out_sharding=None):
        _check_axes(name, x, axes)
        b.check_dtype(name, x.dtype, accepted)
        if check is not None:
            check(x, axes)
        return ShapedArray(_reduced_shape(x.shape, axes), x.dtype, x.weak_type)

    def impl(x, axes, out_sharding=None):
        if check is not None:
            check(x, axes)
        return np.asarray(np_fn(x, axis=axes)).astype(x.dtype, copy=False)

    def samples():
        out = []
        for kind in accepted:
            dtype = b._SAMPLE_DTYPES[kind]
            out += [b.Sample([b.random_values((2, 3, 4), dtype)], {"axes": (1,)}),
                    b.Sample([b.random_values((2, 3), dtype)], {"axes": (0, 1)}),
                    b.Sample([b.random_values((2, 3), dtype)], {"axes": ()})]
        return out

    abstract_eval = sharding_rules.typed(abstract_eval, sharding_rules.reduction,
                                         ur_rule or sharding_rules.nary_ur(name))
    lower_reduce = hlo.reduce_lowering(identity_hlo)
    return define_primitive(name, impl=impl, abstract_eval=abstract_eval, jvp=jvp,
                            transpose=transpose, batch=batch, jet=jet_rule,
                            lower=lambda ctx, x, axes, out_sharding=None:
                                lower_reduce(ctx, x, axes),
                            samples=samples, shown_params=shown_params)


def _reduce_sum_transpose(ct, x, axes, out_sharding=None):
    """The cotangent broadcast back by one broadcast of x's cotangent type (split as
    x is), as JAX's; a reduced cotangent (of a partial sum) is cast to it after."""
    typed = x.aval._sharding
    if typed is None or typed.mesh.empty:
        return [_expand_reduced(ct, x.aval.shape, axes)]
    ct_typed = get_aval(ct)._sharding
    if ct_typed is not None and (ct_typed.spec.unreduced or ct_typed.spec.reduced):
        return [as_type(_expand_reduced(ct, x.aval.shape, axes), cotangent_sharding(typed))]
    kept = tuple(i for i in range(x.aval.ndim) if i not in axes)
    return [st.broadcast_in_dim_p.bind(ct, shape=x.aval.shape, broadcast_dimensions=kept,
                                       sharding=cotangent_sharding(typed))]


def _reduce_sum_batch(args, dims, axes, out_sharding=None):
    """The batch dimension is summed over by no one and stays split as vmap's
    arguments split it."""
    (x,), (d,) = args, dims
    physical = tuple(a + (a >= d) for a in axes)
    out_dim = d - sum(a < d for a in axes)
    if out_sharding is not None:
        out_sharding = batching.batched_sharding(out_sharding, out_dim,
                                                 ndim=get_aval(x).ndim - 1 - len(axes))
    return reduce_sum_p.bind(x, axes=physical, out_sharding=out_sharding), out_dim


def _averaged_at_extreme(x, ans, axes):
    """max/min's derivative: a function averaging a tangent over the positions of x that
    attain the extreme `ans`."""
    location = ew.eq(x, _expand_reduced(ans, get_aval(x).shape, axes))

    def average(t):
        at = ew.convert_element_type(location, get_aval(t).dtype)
        return ew.div(reduce_sum(ew.mul(t, at), axes), reduce_sum(at, axes))
    return average


def _reduce_chooser_jvp(prim):
    """max/min: the tangent averaged over the positions that attain the extreme."""
    def jvp(primals, tangents, axes):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        if type(t) is Zero:
            return ans, Zero(ad.tangent_aval(get_aval(ans)))
        return ans, _averaged_at_extreme(x, ans, axes)(t)
    return jvp


def _reduce_chooser_jet(prim):
    """max/min: each term averaged over the positions that attain the extreme (JAX's
    jet rule: exact where the extreme is attained once)."""
    def rule(primals, series, axes, out_sharding=None):
        (x,), (terms,) = primals, series
        ans = prim.bind(x, axes=axes, out_sharding=out_sharding)
        return ans, list(map(_averaged_at_extreme(x, ans, axes), terms))
    return rule


def _reduce_prod_jvp(primals, tangents, axes):
    """d prod = sum_j t_j * prod_{i != j} x_i, with exclusive products from both sides so
    zeros in x are handled exactly."""
    (x,), (t,) = primals, tangents
    ans = reduce_prod(x, axes)
    if type(t) is Zero:
        return ans, Zero(ad.tangent_aval(get_aval(ans)))
    aval = get_aval(x)
    kept = [i for i in range(aval.ndim) if i not in axes]
    perm = tuple(axes) + tuple(kept)
    n = int(np.prod([aval.shape[a] for a in axes])) if axes else 1
    rest = tuple(aval.shape[k] for k in kept)

    def flat(v):
        return st.reshape(st.transpose(v, perm), (n,) + rest)

    xf, tf = flat(x), flat(t)
    one = st.broadcast_in_dim(np.ones((), aval.dtype), (1,) + rest, ())
    left = st.concatenate([one, slice_in_dim(cumprod(xf, 0), 0, n - 1)], 0)
    right = st.concatenate([slice_in_dim(cumprod(xf, 0, reverse=True), 1, n), one], 0)
    others = ew.mul(left, right)
    return ans, reduce_sum(ew.mul(tf, others), (0,))


# XLA:CPU's TreeReductionRewriter turns a sum over a dimension longer than this into
# sums over windows of this many elements, then a sum of the window results.
_XLA_REDUCE_WINDOW = 32
# Reductions of at least this many elements XLA:CPU hands to YNNPACK.
_XLA_YNNPACK_SIZE = 4096


def _sequential_sum(x, axes):
    """Sums `axes` (sorted) in row-major order one element at a time in x's dtype, as
    XLA's reduce loops do. NumPy sums the leading axis of a C-contiguous array that way
    (row by row); along its innermost axis it sums pairwise, a different rounding."""
    if len(axes) == x.ndim:   # a full reduction: the row-major order is x's own
        if x.size == 0:
            return x.dtype.type(0)
        # adding the init value 0 last gives XLA's +0.0 for a sum of -0.0s
        return np.add.accumulate(x.reshape(-1))[-1] + x.dtype.type(0)
    kept = [d for d in range(x.ndim) if d not in axes]
    kept_shape = tuple(x.shape[d] for d in kept)
    if axes != list(range(len(axes))):
        x = np.ascontiguousarray(x.transpose(axes + kept))
    rows = x.reshape((math.prod(x.shape[:len(axes)]), math.prod(kept_shape)))
    if rows.size == 0:
        return np.zeros(kept_shape, x.dtype)
    if rows.shape[1] == 1:
        total = np.add.accumulate(rows[:, 0])
        return (total[-1] + x.dtype.type(0)).reshape(kept_shape)
    return np.add.reduce(rows, axis=0).reshape(kept_shape) + x.dtype.type(0)


def _flush_subnormals(x):
    """Zeroes subnormal values, as XLA:CPU's flush-to-zero / denormals-are-zero modes."""
    tiny_or_zero = np.abs(x) < _SMALLEST_NORMAL[x.dtype]
    if not np.count_nonzero(tiny_or_zero):
        return x
    x = np.array(x)
    x[tiny_or_zero] = 0
    return x


_SMALLEST_NORMAL = {np.dtype(t): np.finfo(t).tiny
                    for t in (np.float32, np.float64, np.complex64, np.complex128)}


def _xla_order_sum(x, axis):
    """Float sums rounded as XLA:CPU rounds them, so eager results equal jitted ones:
    accumulation in the operand's dtype (float16/bfloat16 in float32), window by window as
    XLA's TreeReductionRewriter splits dimensions longer than 32, and subnormals flushed to
    zero. Reductions big enough that XLA hands them to YNNPACK (about 4096 elements and
    up) may still differ in the last bits. Integer sums are exact in any order."""
    if x.dtype.kind not in "fc":
        return np.add.reduce(x, axis=axis)
    if math.prod(x.shape[a] for a in axis) >= _XLA_YNNPACK_SIZE:
        # XLA sums these with YNNPACK, in an order no window emulation reproduces. NumPy
        # sums a non-contiguous axis sequentially, so narrow floats accumulate in double
        # precision: as close to XLA's tree sums as the windows, and ~15x faster.
        accumulate = np.complex128 if x.dtype.kind == "c" else (
            np.float64 if x.dtype.itemsize <= 4 else x.dtype)
        return np.add.reduce(x, axis=axis, dtype=accumulate).astype(x.dtype)
    out_dtype = x.dtype
    if x.dtype.itemsize < 4:
        x = x.astype(np.float32)
    x = _flush_subnormals(x)
    axes = sorted(axis)
    with np.errstate(invalid="ignore", over="ignore"):   # inf - inf is NaN silently, as XLA
        while any(x.shape[a] > _XLA_REDUCE_WINDOW for a in axes):
            x = _sum_windows(x, axes)
        total = _flush_subnormals(_sequential_sum(x, axes))
        # (a float16 sum past its range becomes inf silently too)
        return total if total.dtype == out_dtype else total.astype(out_dtype)


def _sum_windows(x, axes):
    """One TreeReductionRewriter step: each reduced dimension is zero-padded ("SAME":
    the odd element goes high) to whole windows of min(size, 32), each window summed; the
    result keeps x's rank, with the window counts in place of the reduced sizes."""
    padded_shape, starts, split, window_axes = [], [], [], []
    for d, n in enumerate(x.shape):
        if d not in axes:
            padded_shape.append(n)
            starts.append(0)
            split.append(n)
            continue
        w = min(n, _XLA_REDUCE_WINDOW)
        windows = -(-n // w)
        padded_shape.append(windows * w)
        starts.append((windows * w - n) // 2)
        split += [windows, w]
        window_axes.append(len(split) - 1)
    if padded_shape == list(x.shape):
        padded = x
    else:
        padded = np.zeros(padded_shape, x.dtype)
        padded[tuple(slice(s, s + n) for s, n in zip(starts, x.shape))] = x
    return _sequential_sum(padded.reshape(split), window_axes)


def _check_f16_sum(x, axes):
    """jax_allow_f16_reductions=False refuses half-precision sums (that lose precision)."""
    if (not config.allow_f16_reductions.value
            and x.dtype in (np.float16, dtypes.bfloat16)
            and not all(x.shape[a] == 1 for a in axes)):
        operand = ShapedArray(x.shape, x.dtype).str_short(True)
        raise ValueError(f"reduce_sum on operand {operand} is not allowed when "
                         "jax_allow_f16_reductions=False.")


reduce_sum_p = _reduction("reduce_sum", _xla_order_sum, NUMBER, jvp=linear_jvp,
                          transpose=_reduce_sum_transpose, identity_hlo="stablehlo.add",
                          check=_check_f16_sum, ur_rule=sharding_rules.reduce_sum_ur,
                          batch=_reduce_sum_batch,
                          shown_params=sharding_rules.shown_unset("out_sharding"))


def _negative_zeros(x, op_name, any_fn):
    """Where a max (min) of x is zero, whether it is -0: XLA orders -0 below +0, so a max
    is -0 only when no +0 is among the values (a min, when a -0 is). any_fn(mask) reduces
    a mask as the max or min reduces x."""
    if op_name == "stablehlo.maximum":
        return ~any_fn((x == 0) & ~np.signbit(x))
    return any_fn((x == 0) & np.signbit(x))


def _signed_zeros(out, negative):
    zero = np.zeros((), out.dtype)
    return np.where(out == 0, np.where(negative, -zero, zero), out)


def _extreme(np_fn, op_name):
    """max/min whose empty reductions give the identity XLA's reduce starts from (-inf or
    +inf, the dtype's limit), where NumPy raises; -0 below +0, as XLA orders them."""
    def f(x, axis):
        if all(x.shape[a] for a in axis):
            out = np_fn(x, axis=axis)
        else:
            out = np_fn(x, axis=axis, initial=hlo.reduction_identity(op_name, x.dtype))
        if dtypes.is_float(x.dtype) and np.count_nonzero(out) != np.size(out):
            out = _signed_zeros(out, _negative_zeros(
                x, op_name, lambda m: np.any(m, axis=axis)))
        return out
    return f


def _zero_ordered_scan(ufunc, op_name):
    """cummax/cummin: ufunc.accumulate with -0 below +0, as XLA orders them."""
    def f(x, axis):
        out = ufunc.accumulate(x, axis=axis)
        if dtypes.is_float(x.dtype) and np.count_nonzero(out) != np.size(out):
            out = _signed_zeros(out, _negative_zeros(
                x, op_name, lambda m: np.logical_or.accumulate(m, axis=axis)))
        return out
    return f


reduce_max_p = _reduction("reduce_max", _extreme(np.max, "stablehlo.maximum"), ANY,
                          jvp=RuleFactory(_reduce_chooser_jvp),
                          jet_rule=RuleFactory(_reduce_chooser_jet),
                          identity_hlo="stablehlo.maximum")
reduce_min_p = _reduction("reduce_min", _extreme(np.min, "stablehlo.minimum"), ANY,
                          jvp=RuleFactory(_reduce_chooser_jvp),
                          jet_rule=RuleFactory(_reduce_chooser_jet),
                          identity_hlo="stablehlo.minimum")
reduce_prod_p = _reduction("reduce_prod", np.prod, NUMBER, jvp=_reduce_prod_jvp,
                           identity_hlo="stablehlo.multiply")
reduce_and_p = _reduction("reduce_and", np.bitwise_and.reduce, INT + (BOOL,), jvp=zero_jvp,
                          identity_hlo="stablehlo.and")
reduce_or_p = _reduction("reduce_or", np.bitwise_or.reduce, INT + (BOOL,), jvp=zero_jvp,
                         identity_hlo="stablehlo.or")
reduce_xor_p = _reduction("reduce_xor", np.bitwise_xor.reduce, INT + (BOOL,), jvp=zero_jvp,
                          identity_hlo="stablehlo.xor")


def _axes_arg(operand, axes):
    return canonicalize_axes(axes, get_aval(operand).ndim, "axes")


def _reducer(prim):
    def reduce(operand, axes):
        return prim.bind(operand, axes=_axes_arg(operand, axes))
    reduce.__name__ = prim.name
    reduce.__doc__ = f"{prim.name} of `operand` over `axes`."
    return reduce


def reduce_sum(operand, axes, *, out_sharding=None):
    """reduce_sum of `operand` over `axes`; out_sharding: the result's sharding (over a
    mesh's Explicit axes it may leave partial sums, unreduced over the summed axes)."""
    axes = _axes_arg(operand, axes)
    if out_sharding is None:
        return reduce_sum_p.bind(operand, axes=axes)
    ndim = get_aval(operand).ndim - len(axes)
    typed, placed = out_sharding_for(out_sharding, ndim, "reduce_sum")
    out = reduce_sum_p.bind(operand, axes=axes, out_sharding=typed)
    return out if placed is None else with_sharding_constraint(out, placed)


reduce_max, reduce_min, reduce_prod, reduce_and, reduce_or, reduce_xor = map(
    _reducer, (reduce_max_p, reduce_min_p, reduce_prod_p, reduce_and_p, reduce_or_p,
               reduce_xor_p))


# --- argmax / argmin --------------------------------------------------------------------

def _arg_abstract_eval(name):
    def rule(x, axes, index_dtype):
        _check_axes(name, x, axes)
        if len(axes) != 1:
            raise TypeError(f"{name} takes exactly one axis, got {axes}")
        if x.shape[axes[0]] == 0:
            raise ValueError(f"argmin and argmax require non-empty reduced dimension. "
                             f"operand.shape={x.shape} axis={axes[0]}")
        if not dtypes.is_int(index_dtype):
            raise TypeError(f"index_dtype must be an integer type, but got {index_dtype}")
        if x.dtype.kind == "c":   # complex numbers have no order (JAX's TypeError)
            raise TypeError(f"{name} does not accept dtype {x.dtype}. Accepted dtypes are "
                            "subtypes of integer, floating, bool.")
        return ShapedArray(_reduced_shape(x.shape, axes), index_dtype)
    return rule


def _arg_impl(np_fn, nan_fn):
    def impl(x, axes, index_dtype):
        # NaN wins, as in XLA: the first NaN is the arg-extreme.
        if x.dtype.kind in "fc" and np.isnan(x).any():
            return nan_fn(x, axes[0]).astype(index_dtype)
        return np_fn(x, axis=axes[0]).astype(index_dtype)
    return impl


def _first_nan(x, axis):
    nans = np.isnan(x)
    return np.where(nans.any(axis), np.argmax(nans, axis), np.argmax(
        np.where(nans, -np.inf, x), axis))


def _first_nan_min(x, axis):
    nans = np.isnan(x)
    return np.where(nans.any(axis), np.argmax(nans, axis), np.argmin(
        np.where(nans, np.inf, x), axis))


def _arg_samples():
    x = b.random_values((3, 4), np.float32)
    return [b.Sample([x], {"axes": (1,), "index_dtype": np.dtype(np.int32)}),
            b.Sample([x], {"axes": (0,), "index_dtype": np.dtype(np.int32)})]


def _arg_lowering(direction):
    """A two-operand stablehlo.reduce over (value, index): the first NaN wins, else the
    extreme value, ties going to the smaller index (as the impl does)."""
    def lower(ctx, x, axes, index_dtype):
        dtype = x.aval.dtype
        index_aval = x.aval.update(dtype=index_dtype, weak_type=False)
        index = ctx.op("stablehlo.iota", [], index_aval,
                       {"iota_dimension": hlo.i64_attr(axes[0])})
        value_scalar, index_scalar = ShapedArray((), dtype), ShapedArray((), index_dtype)
        extreme = "stablehlo.maximum" if direction == "GT" else "stablehlo.minimum"
        init_value = ctx.constant(hlo.reduction_identity(extreme, dtype), value_scalar)
        init_index = ctx.constant(np.zeros((), index_dtype), index_scalar)

        def body(c, av, ai, bv, bi):
            earlier = c.compare(ai, bi, "LT")
            tie = c.compare(av, bv, "EQ")
            pick_a = c.compare(av, bv, direction)
            if dtypes.is_inexact(dtype):
                a_nan, b_nan = c.compare(av, av, "NE"), c.compare(bv, bv, "NE")
                only_a_nan = c.binary("stablehlo.and", a_nan, c.unary("stablehlo.not", b_nan))
                pick_a = c.binary("stablehlo.or", pick_a, only_a_nan)
                tie = c.binary("stablehlo.or", tie, c.binary("stablehlo.and", a_nan, b_nan))
            pick_a = c.binary("stablehlo.or", pick_a, c.binary("stablehlo.and", tie, earlier))
            return [c.select(pick_a, av, bv), c.select(pick_a, ai, bi)]

        region = ctx.region([value_scalar, index_scalar, value_scalar, index_scalar], body)
        out = ctx.avals_out[0]
        results = ctx.op("stablehlo.reduce", [x, index, init_value, init_index],
                         [out.update(dtype=dtype), out], {"dimensions": hlo.i64_array(axes)},
                         regions=[region])
        return results[1]
    return lower


argmax_p = define_primitive("argmax", impl=_arg_impl(np.argmax, _first_nan),
                            abstract_eval=sharding_rules.typed(
                                _arg_abstract_eval("argmax"), sharding_rules.reduction),
                            jvp=zero_jvp,
                            batch=batching.reduction_rule, lower=_arg_lowering("GT"),
                            samples=lambda: _arg_samples())
argmin_p = define_primitive("argmin", impl=_arg_impl(np.argmin, _first_nan_min),
                            abstract_eval=sharding_rules.typed(
                                _arg_abstract_eval("argmin"), sharding_rules.reduction),
                            jvp=zero_jvp,
                            batch=batching.reduction_rule, lower=_arg_lowering("LT"),
                            samples=lambda: _arg_samples())


def _arg_axes(operand, axis):
    """lax's argmin/argmax take one non-negative axis, as JAX's do (jnp's normalise)."""
    shape = get_aval(operand).shape
    axis = operator.index(axis)
    if not 0 <= axis < len(shape):
        raise ValueError(f"Invalid axis {axis} for operand shape {shape}")
    return (axis,)


def argmax(operand, axis, index_dtype):
    """The index of the largest element along `axis` (the first one on ties or NaN)."""
    return argmax_p.bind(operand, axes=_arg_axes(operand, axis),
                         index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """The index of the smallest element along `axis` (the first one on ties or NaN)."""
    return argmin_p.bind(operand, axes=_arg_axes(operand, axis),
                         index_dtype=dtypes.canonicalize_dtype(index_dtype))


# --- cumulative ops ---------------------------------------------------------------------

def _scan_lowering(combine, identity):
    """An inclusive scan in log2(n) steps (Hillis-Steele): step k combines each element
    with the one 2**k before it (after it, when reversed). Over an axis of symbolic size,
    a reduce-window of the whole axis, as JAX lowers it. `identity`: the op whose
    reduction identity is combine's."""
    def lower(ctx, x, axis, reverse):
        n, shift = x.aval.shape[axis], 1
        if is_symbolic_dim(n):
            return _dynamic_window_scan(ctx, x, axis, reverse, combine, identity)
        while shift < n:
            head = ctx.slice_in_dim(x, 0, n - shift, axis)
            tail = ctx.slice_in_dim(x, shift, n, axis)
            if reverse:
                kept = ctx.slice_in_dim(x, n - shift, n, axis)
                x = ctx.concatenate([combine(ctx, head, tail), kept], axis)
            else:
                kept = ctx.slice_in_dim(x, 0, shift, axis)
                x = ctx.concatenate([kept, combine(ctx, tail, head)], axis)
            shift *= 2
        return x
    return lower


def _dynamic_window_scan(ctx, x, axis, reverse, combine, identity):
    """The scan as a window of the axis's size n, padded by n - 1 before it (after it,
    when reversed), as JAX lowers it for symbolic sizes."""
    ndim, n = x.aval.ndim, x.aval.shape[axis]
    window = [1] * ndim
    window[axis] = n
    padding = [(0, 0)] * ndim
    padding[axis] = (0, n - 1) if reverse else (n - 1, 0)
    scalar = ShapedArray((), x.aval.dtype)
    init = ctx.constant(hlo.reduction_identity(identity, x.aval.dtype), scalar)
    ones = (1,) * ndim
    return dynamic_reduce_window(ctx, x, init, combine, window, ones, padding, ones, ones,
                                 x.aval.strip_weak_type())


def dynamic_reduce_window(ctx, x, init, combine, window_dimensions, window_strides,
                          padding, base_dilation, window_dilation, out_aval):
    """A reduce_window with symbolic window parameters (jax.export): the custom call
    stablehlo.dynamic_reduce_window, its reducer combine(ctx, a, b) a private function,
    which XLA refines to a reduce_window once the shapes are known (as JAX lowers it)."""
    scalar = ShapedArray((), x.aval.dtype)
    name = ctx.origin.primitive.name if ctx.origin is not None else "reduce_window"
    reducer = ctx.private_function(f"{name}_reducer", [scalar, scalar],
                                   lambda c, a, y: combine(c, a, y))
    pads = ctx.reshape(ctx.shape_value([d for lo_hi in padding for d in lo_hi]),
                       (len(padding), 2))
    params = [ctx.shape_value(p) for p in (window_dimensions, window_strides,
                                           base_dilation, window_dilation)]
    return ctx.op("stablehlo.custom_call", [x, init, *params, pads], out_aval,
                  {"call_target_name": '"stablehlo.dynamic_reduce_window"',
                   "api_version": "2 : i32", "called_computations": f"[@{reducer}]"})


def _logaddexp_lower(ctx, a, b):
    """log(exp(a) + exp(b)) without overflow; equal operands (also two infinities of one
    sign) give a + log 2."""
    big = ctx.binary("stablehlo.maximum", a, b)
    gap = ctx.unary("stablehlo.negate", ctx.unary("stablehlo.abs", ctx.binary(
        "stablehlo.subtract", a, b)))
    out = ctx.binary("stablehlo.add", big, ctx.unary(
        "stablehlo.log_plus_one", ctx.unary("stablehlo.exponential", gap)))
    doubled = ctx.binary("stablehlo.add", a, ctx.full(np.log(2), (), a.aval.dtype))
    return ctx.select(ctx.compare(a, b, "EQ"), doubled, out)


def _binary_combine(op_name):
    return lambda ctx, a, b: hlo.max_min_body(ctx, a, b, op_name) if op_name in (
        "stablehlo.maximum", "stablehlo.minimum") else ctx.binary(op_name, a, b)


def _cumulative(name, np_fn, accepted, *, jvp, combine, identity, transpose=None,
                jet_rule=None):
    def abstract_eval(x, axis, reverse):
        if not 0 <= axis < max(x.ndim, 1) or x.ndim == 0:
            raise TypeError(f"{name}: axis {axis} out of range for shape {x.shape}")
        b.check_dtype(name, x.dtype, accepted)
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def impl(x, axis, reverse):
        if reverse:
            x = np.flip(x, axis)
        with np.errstate(all="ignore"):
            out = np.asarray(np_fn(x, axis=axis)).astype(x.dtype, copy=False)
        return np.flip(out, axis) if reverse else out

    def samples():
        return [b.Sample([b.random_values((3, 4), np.float32, (0.5, 1.5))],
                         {"axis": ax, "reverse": rev}) for ax in (0, 1) for rev in (False, True)]
    abstract_eval = sharding_rules.typed(abstract_eval, sharding_rules.same)
    return define_primitive(name, impl=impl, abstract_eval=abstract_eval, jvp=jvp,
                            transpose=transpose, batch=RuleFactory(_cumulative_batch),
                            jet=jet_rule,
                            lower=_scan_lowering(combine, identity), samples=samples)


def _cumulative_batch(prim):
    def rule(args, dims, axis, reverse):
        (x,), (d,) = args, dims
        return prim.bind(x, axis=axis + (axis >= d), reverse=reverse), d
    return rule


def _logcumsumexp(x, axis):
    return np.logaddexp.accumulate(x, axis=axis)


def _scan_jvp(combine):
    """The JVP of a cumulative op as the JVP of its prefix-scan formulation (an
    associative_scan of `combine`): exact at zeros (cumprod) and ties (cummax/cummin)."""
    def rule(primals, tangents, axis, reverse):
        (out,), (t_out,) = ad.jvp_flat(
            lambda v: [associative_scan(combine, v, reverse=reverse, axis=axis)],
            primals, tangents)
        return out, t_out
    return rule


def _scan_jet(combine):
    """The jet of a cumulative op as the jet of its prefix-scan formulation (an
    associative_scan of `combine`), as JAX's: reduce_window is not differentiable to
    any order."""
    def rule(primals, series, axis, reverse):
        return jet.compose(lambda v: associative_scan(combine, v, reverse=reverse, axis=axis),
                           primals, series)
    return rule


def _logaddexp(a, b):
    """log(exp(a) + exp(b)) in lax ops (cumlogsumexp's combine): stable for any spread of
    values; infinities of one sign go through a + b, so their derivative stays finite."""
    delta = ew.sub(a, b)
    stable = ew.add(ew.max(a, b), ew.log1p(ew.exp(ew.neg(ew.abs(delta)))))
    return ew.select(ew.ne(delta, delta), ew.add(a, b), stable)


def _cumsum(x, axis):
    """XLA's scan adds each prefix to its identity, +0: so no prefix sum is -0 (NumPy's
    cumsum of -0s is -0)."""
    out = np.cumsum(x, axis=axis)
    if dtypes.is_inexact(out.dtype):
        out += 0
    return out


cumsum_p = _cumulative("cumsum", _cumsum, NUMBER, jvp=linear_jvp,
                       combine=_binary_combine("stablehlo.add"), identity="stablehlo.add",
                       transpose=lambda ct, x, axis, reverse: [cumsum(ct, axis, not reverse)])
cumprod_p = _cumulative("cumprod", np.cumprod, NUMBER, jvp=_scan_jvp(ew.mul),
                        jet_rule=_scan_jet(ew.mul),
                        combine=_binary_combine("stablehlo.multiply"),
                        identity="stablehlo.multiply")
cummax_p = _cumulative("cummax", _zero_ordered_scan(np.maximum, "stablehlo.maximum"), ANY,
                       jvp=_scan_jvp(ew.max),
                       jet_rule=_scan_jet(ew.max),
                       combine=_binary_combine("stablehlo.maximum"),
                       identity="stablehlo.maximum")
cummin_p = _cumulative("cummin", _zero_ordered_scan(np.minimum, "stablehlo.minimum"), ANY,
                       jvp=_scan_jvp(ew.min),
                       jet_rule=_scan_jet(ew.min),
                       combine=_binary_combine("stablehlo.minimum"),
                       identity="stablehlo.minimum")
cumlogsumexp_p = _cumulative("cumlogsumexp", _logcumsumexp, (b.FLOAT,),
                             jvp=_scan_jvp(_logaddexp), combine=_logaddexp_lower,
                             identity="stablehlo.maximum")   # (-inf)


def _cum_wrapper(prim):
    def op(operand, axis=0, reverse=False):
        aval = get_aval(operand)
        from pyjax._src.util import canonicalize_axis
        return prim.bind(operand, axis=canonicalize_axis(axis, aval.ndim),
                         reverse=bool(reverse))
    op.__name__ = prim.name
    return op


cumsum, cumprod, cummax, cummin, cumlogsumexp = map(
    _cum_wrapper, (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p))
