"""Windowed reductions (reduce_window_sum/max/min, the general reduce_window, max-pool's
select_and_gather_add/select_and_scatter_add) and the general variadic lax.reduce. Imports
core, interpreters, backends (stablehlo, the NumPy executor) and the lax families."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src import dtypes
from pyjax._src.backends import numpy_backend
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import (NO_TRANSPOSE, NOT_DIFFERENTIABLE, RuleFactory, Tracer,
                                   define_primitive)
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.interpreters.ad import Zero, linear_jvp
from pyjax._src.lax import builders as b
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as red
from pyjax._src.lax import sharding_rules
from pyjax._src.lax import slicing
from pyjax._src.lax import structural as st
from pyjax._src.lax.builders import ANY, NUMBER
from pyjax._src.lax.convolution import _dilate, _vjp_lhs_padding, padtype_to_pads
from pyjax._src.shape_poly import is_symbolic_dim, max_dim

# --- shapes and windows -------------------------------------------------------------------


def _window_out_shape(name, shape, window_dimensions, window_strides, padding,
                      base_dilation, window_dilation):
    ndim = len(shape)
    for what, values in (("window_dimensions", window_dimensions),
                         ("window_strides", window_strides), ("padding", padding),
                         ("base_dilation", base_dilation),
                         ("window_dilation", window_dilation)):
        if len(values) != ndim:
            raise TypeError(f"{name}: {what} {tuple(values)} must have one entry per "
                            f"operand dimension (operand shape {tuple(shape)})")
    for what, values in (("window_dimensions", window_dimensions),
                         ("window_strides", window_strides),
                         ("base_dilation", base_dilation),
                         ("window_dilation", window_dilation)):
        if any(v <= 0 for v in values):
            raise TypeError(f"{name} {what} must have every element be strictly "
                            f"positive, got {tuple(values)}.")
    out = []
    for n, w, s, (lo, hi), bd, wd in zip(shape, window_dimensions, window_strides, padding,
                                         base_dilation, window_dilation):
        padded, window = _dilate(n, bd) + lo + hi, _dilate(w, wd)
        out.append(max_dim((padded - window) // s + 1, 0))   # no complete window: empty
    return tuple(out)


def _windows(x, fill, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
    """A view of shape out_shape + window_dimensions: every window of x after base
    dilation and padding (holes and pads hold `fill`)."""
    fill = np.asarray(fill, x.dtype)
    if any(d > 1 for d in base_dilation):
        shape = tuple(_dilate(n, d) for n, d in zip(x.shape, base_dilation))
        spread = np.full(shape, fill, x.dtype)
        spread[tuple(slice(None, None, d) for d in base_dilation)] = x
        x = spread
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    if any(p != (0, 0) for p in grow):
        x = np.pad(x, grow, constant_values=fill)
    x = x[tuple(slice(-lo if lo < 0 else 0, x.shape[i] + hi if hi < 0 else None)
                for i, (lo, hi) in enumerate(padding))]
    window = tuple(_dilate(w, d) for w, d in zip(window_dimensions, window_dilation))
    if any(n < w for n, w in zip(x.shape, window)):    # no complete window
        shape = tuple(max(0, (n - w) // s + 1) for n, w, s in zip(x.shape, window,
                                                                  window_strides))
        return np.zeros(shape + tuple(window_dimensions), x.dtype)
    view = np.lib.stride_tricks.sliding_window_view(x, window)
    return view[tuple(slice(None, None, s) for s in window_strides)
                + tuple(slice(None, None, d) for d in window_dilation)]


def _identity(kind, dtype):
    name = {"sum": "stablehlo.add", "max": "stablehlo.maximum", "min": "stablehlo.minimum",
            "prod": "stablehlo.multiply", "and": "stablehlo.and", "or": "stablehlo.or",
            "xor": "stablehlo.xor"}[kind]
    return hlo.reduction_identity(name, dtype)


def _window_attrs(window_dimensions, window_strides, padding, base_dilation,
                  window_dilation):
    pads = np.array(padding, np.int64).reshape(len(padding), 2)
    attrs = {"window_dimensions": hlo.i64_array(window_dimensions),
             "window_strides": hlo.i64_array(window_strides),
             "base_dilations": hlo.i64_array(base_dilation),
             "window_dilations": hlo.i64_array(window_dilation)}
    if pads.size:
        attrs["padding"] = hlo.dense_attr(pads, ShapedArray(pads.shape, np.int64))
    return attrs


def _insert_unit_window(params, dim):
    """Window params for an operand with a new (batch) dimension at `dim`."""
    def ins(values, v):
        values = list(values)
        values.insert(dim, v)
        return tuple(values)
    return dict(params, window_dimensions=ins(params["window_dimensions"], 1),
                window_strides=ins(params["window_strides"], 1),
                padding=ins(params["padding"], (0, 0)),
                base_dilation=ins(params["base_dilation"], 1),
                window_dilation=ins(params["window_dilation"], 1))


def _window_samples(dtype, with_window_dilation=True):
    x = b.random_values((4, 6), dtype)
    base = {"window_dimensions": (2, 3), "window_strides": (1, 2),
            "padding": ((0, 0), (1, 1)), "base_dilation": (1, 1), "window_dilation": (1, 1)}
    samples = [b.Sample([x], base),
               b.Sample([b.random_values((5,), dtype)],
                        {"window_dimensions": (2,), "window_strides": (2,),
                         "padding": ((1, -1),), "base_dilation": (2,),
                         "window_dilation": (1,)})]
    if with_window_dilation:
        samples.append(b.Sample([x], dict(base, window_dilation=(2, 1),
                                          padding=((1, 0), (0, 2)))))
    return samples


# --- reduce_window_sum / max / min ----------------------------------------------------------

def _monoid_window(kind, np_fn, accepted, *, jvp, transpose=None):
    name = f"reduce_window_{kind}"

    def abstract_eval(x, **params):
        b.check_dtype(name, x.dtype, accepted)
        return ShapedArray(_window_out_shape(name, x.shape, **params), x.dtype, x.weak_type)

    def impl(x, **params):
        compute = np.dtype(np.float32) if x.dtype in (dtypes.bfloat16, dtypes.float16) \
            else x.dtype
        view = _windows(x.astype(compute), _identity(kind, compute), **params)
        axes = tuple(range(x.ndim, 2 * x.ndim))
        out_shape = view.shape[:x.ndim]
        if 0 in view.shape:
            return np.full(out_shape, _identity(kind, x.dtype), x.dtype)
        return np.asarray(np_fn(view, axis=axes)).astype(x.dtype, copy=False)

    def batch(args, dims, **params):
        (x,), (d,) = args, dims
        return prim.bind(x, **_insert_unit_window(params, d)), d

    def lower(ctx, x, **params):
        scalar = ShapedArray((), x.aval.dtype)
        init = ctx.constant(_identity(kind, x.aval.dtype), scalar)
        op_name = {"sum": "stablehlo.add", "max": "stablehlo.maximum",
                   "min": "stablehlo.minimum"}[kind]

        def body(c, a, y):
            if kind == "sum":
                return c.binary(op_name, a, y)
            return hlo.max_min_body(c, a, y, op_name)
        if any(is_symbolic_dim(d) for v in params.values() for d in np.ravel(
                np.array(v, dtype=object))):   # symbolic window parameters (jax.export)
            return red.dynamic_reduce_window(
                ctx, x, init, body, params["window_dimensions"], params["window_strides"],
                params["padding"], params["base_dilation"], params["window_dilation"],
                ctx.avals_out[0].strip_weak_type())
        region = ctx.region([scalar, scalar], body)
        return ctx.op("stablehlo.reduce_window", [x, init],
                      ctx.avals_out[0].strip_weak_type(), _window_attrs(**params),
                      regions=[region])

    def samples():
        return _window_samples(np.float32, with_window_dilation=kind == "sum") + [
            b.Sample([b.random_values((3, 4), np.int32)],
                     {"window_dimensions": (2, 2), "window_strides": (1, 1),
                      "padding": ((0, 1), (1, 0)), "base_dilation": (1, 1),
                      "window_dilation": (1, 1)})]
    prim = define_primitive(name, impl=impl, abstract_eval=sharding_rules.typed(
        abstract_eval, sharding_rules.sliced(name)), jvp=jvp,
                            transpose=transpose, batch=batch, lower=lower, samples=samples)
    return prim


def _reduce_window_sum_transpose(ct, x, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    in_shape = x.aval.shape
    pads = _vjp_lhs_padding(in_shape, window_dimensions, window_strides, get_aval(ct).shape,
                            padding, base_dilation, window_dilation)
    # Every output position spreads back over its window: dilate by the strides, pad,
    # and sum windows again (the all-ones kernel needs no flip).
    spread = st.pad(ct, np.zeros((), get_aval(ct).dtype),
                    [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides)])
    ones = (1,) * len(in_shape)
    return [reduce_window_sum_p.bind(
        spread, window_dimensions=window_dimensions, window_strides=base_dilation,
        padding=((0, 0),) * len(in_shape), base_dilation=ones,
        window_dilation=window_dilation)]


def _chooser_jvp(select_prim):
    def make(prim):
        def jvp(primals, tangents, **params):
            (x,), (t,) = primals, tangents
            out = prim.bind(x, **params)
            if type(t) is Zero:
                return out, Zero(ad.tangent_aval(get_aval(out)))
            return out, select_and_gather_add_p.bind(t, x, select_prim=select_prim,
                                                     **params)
        return jvp
    return RuleFactory(make)


reduce_window_sum_p = _monoid_window("sum", np.sum, NUMBER, jvp=linear_jvp,
                                     transpose=_reduce_window_sum_transpose)
reduce_window_max_p = _monoid_window("max", np.max, ANY, jvp=_chooser_jvp(ew.ge_p))
reduce_window_min_p = _monoid_window("min", np.min, ANY, jvp=_chooser_jvp(ew.le_p))


# --- select_and_gather_add: the tangent at each window's max (or min) ----------------------

def _select_fill(select_prim, dtype):
    return _identity("max" if select_prim is ew.ge_p else "min", dtype)


def _check_select_prim(name, select_prim):
    if select_prim not in (ew.ge_p, ew.le_p):
        raise TypeError(f"{name}: select_prim must be lax.ge_p or lax.le_p, got "
                        f"{select_prim}")


def _sga_abstract_eval(tangents, operand, *, select_prim, **params):
    _check_select_prim("select_and_gather_add", select_prim)
    if tangents.shape != operand.shape:
        raise TypeError(f"select_and_gather_add: tangents {tangents.shape} and operand "
                        f"{operand.shape} must have the same shape")
    shape = _window_out_shape("select_and_gather_add", operand.shape, **params)
    return ShapedArray(shape, tangents.dtype)


def _selected_offsets(operand, select_prim, params):
    """Flat index within each window of the first position holding its max (ge) or min
    (le); windows entirely of padding select their first pad."""
    view = _windows(operand, _select_fill(select_prim, operand.dtype), **params)
    flat = view.reshape(view.shape[:operand.ndim] + (int(np.prod(view.shape[operand.ndim:])),))
    if flat.size == 0:
        return np.zeros(flat.shape[:-1], np.intp)
    return np.argmax(flat, -1) if select_prim is ew.ge_p else np.argmin(flat, -1)


def _sga_impl(tangents, operand, *, select_prim, **params):
    choice = _selected_offsets(operand, select_prim, params)
    view = _windows(tangents, 0, **params)
    flat = view.reshape(view.shape[:operand.ndim] + (int(np.prod(view.shape[operand.ndim:])),))
    if flat.size == 0:
        return np.zeros(flat.shape[:-1], tangents.dtype)
    return np.take_along_axis(flat, choice[..., None], -1)[..., 0]


def _sga_transpose(ct, tangents, operand, *, select_prim, window_dimensions, window_strides,
                   padding, base_dilation, window_dilation):
    if not ad.is_undefined_primal(tangents) or ad.is_undefined_primal(operand):
        raise ValueError("select_and_gather_add is linear in its tangents only")
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError(
            "The gradient of a max/min pooling (reduce_window_max/min) with window "
            f"dilation is not implemented, got window_dilation={window_dilation}. "
            "Forward-mode (jvp) works; for reverse mode use window_dilation=1.")
    dilated = any(d != 1 for d in base_dilation)
    if dilated:   # holes can never win, as in the forward pass
        operand = st.pad(operand, _select_fill(select_prim, get_aval(operand).dtype),
                         [(0, 0, d - 1) for d in base_dilation])
    out = select_and_scatter_add_p.bind(ct, operand, select_prim=select_prim,
                                        window_dimensions=window_dimensions,
                                        window_strides=window_strides, padding=padding)
    if dilated:
        out = slicing.slice(out, (0,) * len(base_dilation), get_aval(out).shape,
                            base_dilation)
    return [out, None]


def _sga_batch(args, dims, **params):
    size = batching.axis_size_of(args, dims)
    args = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    return select_and_gather_add_p.bind(*args, **_insert_unit_window(params, 0)), 0


def _sga_lower(ctx, tangents, operand, *, select_prim, **params):
    """A two-operand reduce_window over (operand, tangent) pairs keeping the winner."""
    op_scalar = ShapedArray((), operand.aval.dtype)
    t_scalar = ShapedArray((), tangents.aval.dtype)
    inits = [ctx.constant(_select_fill(select_prim, operand.aval.dtype), op_scalar),
             ctx.constant(np.zeros((), tangents.aval.dtype), t_scalar)]
    direction = "GE" if select_prim is ew.ge_p else "LE"

    def body(c, a, at, y, yt):
        keep = c.compare(a, y, direction)
        return [c.select(keep, a, y), c.select(keep, at, yt)]
    region = ctx.region([op_scalar, t_scalar, op_scalar, t_scalar], body)
    out = ctx.avals_out[0]
    results = ctx.op("stablehlo.reduce_window", [operand, tangents] + inits,
                     [out.update(dtype=operand.aval.dtype), out], _window_attrs(**params),
                     regions=[region])
    return results[1]


def _sga_samples():
    return [b.Sample([b.random_values(s.args[0].shape, np.float32, seed=3), s.args[0]],
                     dict(s.params, select_prim=prim))
            for s in _window_samples(np.float32, with_window_dilation=False)
            for prim in (ew.ge_p, ew.le_p)]


def _linear_in_first_jvp(prim):
    """select_and_gather_add and select_and_scatter_add are linear in their first operand;
    the second only picks positions, so its tangent does not matter."""
    def jvp(primals, tangents, **params):
        (first, x), (first_dot, _) = primals, tangents
        out = prim.bind(first, x, **params)
        if type(first_dot) is Zero:
            return out, Zero(ad.tangent_aval(get_aval(out)))
        return out, prim.bind(first_dot, x, **params)
    return jvp


select_and_gather_add_p = define_primitive(
    "select_and_gather_add", impl=_sga_impl, abstract_eval=_sga_abstract_eval,
    jvp=RuleFactory(_linear_in_first_jvp), transpose=_sga_transpose, batch=_sga_batch,
    lower=_sga_lower, samples=lambda: _sga_samples())


# --- select_and_scatter_add: each window's value added at its max (or min) -----------------

def _no_dilation(params):
    ones = (1,) * len(params["window_dimensions"])
    return dict(params, base_dilation=ones, window_dilation=ones)


def _ssa_abstract_eval(source, operand, *, select_prim, **params):
    _check_select_prim("select_and_scatter_add", select_prim)
    shape = _window_out_shape("select_and_scatter_add", operand.shape,
                              **_no_dilation(params))
    if source.shape != shape:
        raise TypeError(f"select_and_scatter_add: source shape {source.shape} must be the "
                        f"windowed shape {shape} of operand {operand.shape}")
    if source.dtype != operand.dtype:
        raise TypeError(f"select_and_scatter_add: source ({source.dtype}) and operand "
                        f"({operand.dtype}) must have the same dtype")
    return ShapedArray(operand.shape, source.dtype)


def _ssa_impl(source, operand, *, select_prim, window_dimensions, window_strides, padding):
    params = _no_dilation({"window_dimensions": window_dimensions,
                           "window_strides": window_strides, "padding": padding})
    choice = _selected_offsets(operand, select_prim, params)
    out = np.zeros(operand.shape, source.dtype)
    if source.size == 0:
        return out
    offsets = np.unravel_index(choice, window_dimensions)
    grid = np.indices(source.shape)
    # padded coordinate of each winner, shifted back to the operand's coordinates
    coords = [g * s + o - lo for g, s, o, (lo, _) in zip(grid, window_strides, offsets,
                                                         padding)]
    inside = np.ones(source.shape, bool)
    for c, n in zip(coords, operand.shape):
        inside &= (c >= 0) & (c < n)
    np.add.at(out, tuple(c[inside] for c in coords), source[inside])
    return out


def _ssa_transpose(ct, source, operand, *, select_prim, **params):
    if not ad.is_undefined_primal(source) or ad.is_undefined_primal(operand):
        raise ValueError("select_and_scatter_add is linear in its source only")
    return [select_and_gather_add_p.bind(ct, operand, select_prim=select_prim,
                                         **_no_dilation(params)), None]


def _ssa_batch(args, dims, *, select_prim, window_dimensions, window_strides, padding):
    size = batching.axis_size_of(args, dims)
    args = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    return select_and_scatter_add_p.bind(
        *args, select_prim=select_prim, window_dimensions=(1,) + tuple(window_dimensions),
        window_strides=(1,) + tuple(window_strides),
        padding=((0, 0),) + tuple(padding)), 0


def _ssa_lower(ctx, source, operand, *, select_prim, window_dimensions, window_strides,
               padding):
    scalar = ShapedArray((), operand.aval.dtype)
    init = ctx.constant(np.zeros((), source.aval.dtype), scalar)
    direction = "GE" if select_prim is ew.ge_p else "LE"
    select = ctx.region([scalar, scalar], lambda c, a, y: c.compare(a, y, direction))
    scatter = ctx.region([scalar, scalar], lambda c, a, y: c.binary("stablehlo.add", a, y))
    return _emit_select_and_scatter(ctx, operand, source, init, select, scatter,
                                    window_dimensions, window_strides, padding)


def _emit_select_and_scatter(ctx, operand, source, init, select, scatter,
                             window_dimensions, window_strides, padding):
    """One stablehlo.select_and_scatter op: select_and_scatter_add and the general
    select_and_scatter_p differ only in their two regions."""
    pads = np.array(padding, np.int64).reshape(len(padding), 2)
    attrs = {"window_dimensions": hlo.i64_array(window_dimensions),
             "window_strides": hlo.i64_array(window_strides)}
    if pads.size:
        attrs["padding"] = hlo.dense_attr(pads, ShapedArray(pads.shape, np.int64))
    return ctx.op("stablehlo.select_and_scatter", [operand, source, init],
                  ctx.avals_out[0], attrs, regions=[select, scatter])


def _ssa_samples():
    out = []
    for shape, params in [((4, 6), {"window_dimensions": (2, 3), "window_strides": (2, 2),
                                    "padding": ((0, 0), (1, 0))}),
                          ((5,), {"window_dimensions": (3,), "window_strides": (1,),
                                  "padding": ((1, 1),)})]:
        out_shape = _window_out_shape("", shape, **_no_dilation(params))
        for prim in (ew.ge_p, ew.le_p):
            out.append(b.Sample([b.random_values(out_shape, np.float32, seed=5),
                                 b.random_values(shape, np.float32)],
                                dict(params, select_prim=prim)))
    return out


select_and_scatter_add_p = define_primitive(
    "select_and_scatter_add", impl=_ssa_impl, abstract_eval=_ssa_abstract_eval,
    jvp=RuleFactory(_linear_in_first_jvp), transpose=_ssa_transpose, batch=_ssa_batch,
    lower=_ssa_lower, samples=lambda: _ssa_samples())


# --- select_and_scatter: the general form, with traced select and scatter computations ----

def _sas_abstract_eval(operand, source, init_value, *, select_jaxpr, select_consts,
                       scatter_jaxpr, scatter_consts, window_dimensions, window_strides,
                       padding):
    if len(window_dimensions) != len(window_strides):
        raise TypeError("select_and_scatter got inconsistent window_strides and "
                        f"window_dimensions: got window_strides {window_strides} and "
                        f"window_dimensions {window_dimensions}.")
    shape = _window_out_shape("select_and_scatter", operand.shape, window_dimensions,
                              window_strides, padding, (1,) * operand.ndim,
                              (1,) * operand.ndim)
    if source.shape != shape:
        raise TypeError(f"select_and_scatter: source shape {source.shape} must be the "
                        f"windowed shape {shape} of operand {operand.shape}")
    if init_value.shape != () or len({operand.dtype, source.dtype, init_value.dtype}) != 1:
        raise TypeError("select_and_scatter: operand, source and a scalar init_value must "
                        f"share one dtype, got {operand.str_short(True)}, {source.str_short(True)} "
                        f"and {init_value.str_short(True)}")
    return ShapedArray(operand.shape, operand.dtype)


def _sas_impl(operand, source, init_value, *, select_jaxpr, select_consts, scatter_jaxpr,
              scatter_consts, window_dimensions, window_strides, padding):
    """XLA's SelectAndScatter: in each window (padding positions are skipped) keep the
    first element e unless select(kept, e) is false; then fold each window's source
    value into init_value at its kept position with scatter, windows in row-major order."""
    run = numpy_backend.execute_closed_jaxpr
    grid = np.indices(source.shape)
    best = np.zeros(source.shape, operand.dtype)
    where = np.zeros((operand.ndim,) + source.shape, np.intp)
    found = np.zeros(source.shape, bool)
    for offset in np.ndindex(*window_dimensions):
        coords = [g * s + o - lo for g, s, o, (lo, _) in zip(grid, window_strides, offset,
                                                             padding)]
        inside = np.ones(source.shape, bool)
        for c, n in zip(coords, operand.shape):
            inside &= (c >= 0) & (c < n)
        value = operand[tuple(np.clip(c, 0, max(n - 1, 0))
                              for c, n in zip(coords, operand.shape))] if operand.size \
            else best
        keep, = run(select_jaxpr, [best, value]) if found.any() else [True]
        take = inside & (~found | ~np.asarray(keep, bool))
        best = np.where(take, value, best)
        where = np.where(take, np.stack(coords) if coords else where, where)
        found |= inside
    out = np.full(operand.shape, init_value, operand.dtype)
    for window in zip(*np.nonzero(found)):
        at = tuple(where[(d,) + window] for d in range(operand.ndim))
        out[at], = run(scatter_jaxpr, [out[at], source[window]])
    return out


def _sas_batch(args, dims, **params):
    size = batching.axis_size_of(args, dims)
    operand, source = (batching.bdim_at_front(x, d, size) for x, d in zip(args[:2], dims))
    init_value = args[2]
    if dims[2] is not None:   # one init value per example: no single op takes that
        init_value = batching.bdim_at_front(init_value, dims[2], size)
        shape = get_aval(operand).shape[1:]
        examples = [st.expand_dims(select_and_scatter_p.bind(
            slicing.index_in_dim(operand, i, 0, keepdims=False),
            slicing.index_in_dim(source, i, 0, keepdims=False),
            slicing.index_in_dim(init_value, i, 0, keepdims=False), **params), (0,))
            for i in range(size)]
        return (st.concatenate(examples, 0) if examples else
                st.full((0,) + shape, 0, get_aval(operand).dtype)), 0
    return select_and_scatter_p.bind(
        operand, source, init_value, **dict(
            params, window_dimensions=(1,) + tuple(params["window_dimensions"]),
            window_strides=(1,) + tuple(params["window_strides"]),
            padding=((0, 0),) + tuple(params["padding"]))), 0


def _sas_lower(ctx, operand, source, init_value, *, select_jaxpr, select_consts,
               scatter_jaxpr, scatter_consts, window_dimensions, window_strides, padding):
    scalar = ShapedArray((), operand.aval.dtype)
    select = ctx.region([scalar, scalar], lambda c, a, y: c.lower_jaxpr(select_jaxpr, [a, y]))
    scatter = ctx.region([scalar, scalar],
                         lambda c, a, y: c.lower_jaxpr(scatter_jaxpr, [a, y]))
    return _emit_select_and_scatter(ctx, operand, source, init_value, select, scatter,
                                    window_dimensions, window_strides, padding)


def _scalar_computation(name, fun, dtype):
    """fun of two scalars of `dtype`, traced to a ClosedJaxpr."""
    scalar = ShapedArray((), np.dtype(dtype))
    closed, hoisted = pe.trace_to_closed_jaxpr(lambda a, y: [fun(a, y)], [scalar, scalar])
    if hoisted:
        raise NotImplementedError(f"select_and_scatter: the {name} computation closes over "
                                  "traced values; compute them outside instead.")
    return closed


def _sas_samples():
    ge = _scalar_computation("select", ew.ge, np.float32)
    add = _scalar_computation("scatter", ew.add, np.float32)
    out = []
    for shape, params in [((3, 4), {"window_dimensions": (2, 2), "window_strides": (1, 2),
                                    "padding": ((0, 0), (0, 0))}),
                          ((3,), {"window_dimensions": (3,), "window_strides": (1,),
                                  "padding": ((2, 2),)})]:
        out_shape = _window_out_shape("", shape, **_no_dilation(params))
        out.append(b.Sample([b.random_values(shape, np.float32),
                             b.random_values(out_shape, np.float32, seed=3), np.float32(1)],
                            dict(params, select_jaxpr=ge, select_consts=(),
                                 scatter_jaxpr=add, scatter_consts=())))
    return out


select_and_scatter_p = define_primitive(
    "select_and_scatter", impl=_sas_impl, abstract_eval=_sas_abstract_eval,
    jvp=NOT_DIFFERENTIABLE, transpose=NO_TRANSPOSE, batch=_sas_batch, lower=_sas_lower,
    samples=_sas_samples)


def _select_and_scatter(operand, select, window_dimensions, window_strides, padding, source,
                        init_value, scatter):
    """JAX's internal lax.windowed_reductions._select_and_scatter: binds
    select_and_scatter_p with select(a, b) -> bool and scatter(a, b) traced on scalars."""
    dtype = get_aval(operand).dtype
    return select_and_scatter_p.bind(
        operand, source, init_value,
        select_jaxpr=_scalar_computation("select", select, dtype), select_consts=(),
        scatter_jaxpr=_scalar_computation("scatter", scatter, dtype), scatter_consts=(),
        window_dimensions=tuple(window_dimensions), window_strides=tuple(window_strides),
        padding=tuple(tuple(p) for p in padding))


# --- reducers traced from user computations ---------------------------------------------------

_MONOIDS = {"add": "sum", "mul": "prod", "max": "max", "min": "min", "and": "and",
            "or": "or", "xor": "xor"}


def _trace_reducer(api_name, computation, in_tree, avals):
    """The computation as a ClosedJaxpr of (accumulators..., values...) scalars."""
    from pyjax._src import tree_util

    def flat(*args):
        n = len(avals)
        acc = tree_util.tree_unflatten(in_tree, list(args[:n]))
        val = tree_util.tree_unflatten(in_tree, list(args[n:]))
        leaves, out_tree = tree_util.tree_flatten(computation(acc, val))
        # JAX's reduce takes any container of one value per operand; reduce_window
        # wants the operands' own structure.
        if len(leaves) != n or (api_name == "reduce_window" and out_tree != in_tree):
            raise ValueError(f"{api_name} output must have the same tree structure as the "
                             f"operands {in_tree} vs. {out_tree}")
        return leaves

    closed, hoisted = pe.trace_to_closed_jaxpr(flat, list(avals) * 2)
    if hoisted:
        raise NotImplementedError(
            f"{api_name}: the reduction computation closes over traced values. Pass them "
            "as operands instead, or use jnp/lax functions of the whole array.")
    for out, aval in zip(closed.out_avals, avals):
        if out.shape != () or out.dtype != aval.dtype:
            raise TypeError(f"{api_name}: the computation must return scalars of the "
                            f"operands' dtypes {[a.dtype.name for a in avals]}, got "
                            f"{[a.str_short(True) for a in closed.out_avals]}")
    return closed


def _monoid_of(closed):
    """'sum', 'max', ... when the reducer is one lax add/mul/max/min/and/or/xor of its two
    inputs, else None."""
    jaxpr = closed.jaxpr
    if len(jaxpr.invars) != 2 or len(jaxpr.eqns) != 1 or closed.consts:
        return None
    eqn = jaxpr.eqns[0]
    kind = _MONOIDS.get(eqn.primitive.name)
    if kind is None or set(eqn.invars) != set(jaxpr.invars) or len(set(eqn.invars)) != 2:
        return None
    return kind if list(jaxpr.outvars) == list(eqn.outvars) else None


def _is_identity(init, kind):
    """Whether init is the identity of `kind` in its own dtype (as JAX checks it: -inf is
    max's identity for an integer operand too, whose own identity is then used)."""
    value = init.to_concrete_value() if isinstance(init, Tracer) else np.asarray(init)
    if value is None or np.shape(value) != ():
        return False
    return bool(value == _identity(kind, get_aval(init).dtype))


def _run_reducer(closed, args, shape, avals):
    outs = numpy_backend.execute_closed_jaxpr(closed, list(args))
    return [np.broadcast_to(np.asarray(o, a.dtype), shape) for o, a in zip(outs, avals)]


def _fold_last_axis(closed, inits, xs, avals):
    """Reduces the last axis of each array in xs with the reducer (pairwise, log2(n)
    calls), then combines the result with the init values once."""
    shape = xs[0].shape[:-1]
    n = xs[0].shape[-1]
    if n == 0:
        return [np.full(shape, i, a.dtype) for i, a in zip(inits, avals)]
    while n > 1:
        half = n // 2
        combined = _run_reducer(closed, [x[..., :half] for x in xs]
                                + [x[..., half:2 * half] for x in xs],
                                shape + (half,), avals)
        if n % 2:
            combined = [np.concatenate([c, x[..., 2 * half:]], -1)
                        for c, x in zip(combined, xs)]
        xs, n = combined, half + n % 2
    return _run_reducer(closed, [np.broadcast_to(i, shape) for i in inits]
                        + [x[..., 0] for x in xs], shape, avals)


def _apply_reducer(closed, args):
    """The scalar reducer applied elementwise to 1-D arrays of one length (vmapped)."""
    size = get_aval(args[0]).shape[0]
    batched, _ = batching.batch_jaxpr(closed, size, [True] * len(args), True)
    return jx.eval_jaxpr(batched.jaxpr, batched.consts, *args)


def _lax_fold(closed, inits, xs):
    """_fold_last_axis written with lax ops, so autodiff can go through it: xs are arrays
    of shape (n, m) reduced over n pairwise, then combined with the init values; returns
    arrays of shape (m,)."""
    n, m = get_aval(xs[0]).shape
    if m == 0:
        return [st.broadcast_in_dim(np.zeros((), get_aval(x).dtype), (0,), ()) for x in xs]
    while n > 1:
        half = n // 2
        flat = [st.reshape(slicing.slice_in_dim(x, lo, lo + half), (half * m,))
                for lo in (0, half) for x in xs]
        combined = [st.reshape(c, (half, m)) for c in _apply_reducer(closed, flat)]
        if n % 2:
            combined = [st.concatenate([c, slicing.slice_in_dim(x, 2 * half, n)], 0)
                        for c, x in zip(combined, xs)]
        xs, n = combined, half + n % 2
    spread = [st.broadcast_in_dim(i, (m,), ()) for i in inits]
    if n == 0:
        return spread
    return _apply_reducer(closed, spread + [st.reshape(x, (m,)) for x in xs])


def _expansion_jvp(prim, expand):
    """JVP of a general reduction primitive: its primal result, and the tangent of the same
    reduction spelled out in lax ops by `expand(operands, inits, **params)`. Init values
    are meant to be identities (often infinite), so as in JAX they carry no tangent."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        n = len(primals) // 2
        inits = list(primals[n:])
        _, tangents_out = ad.jvp_flat(lambda *xs: expand(list(xs), inits, **params),
                                      list(primals[:n]), list(tangents[:n]))
        return out, tangents_out
    return jvp


def _unbatch_by_loop(prim, args, dims, params):
    """Batching by running each example and stacking: for batched init values, which no
    single reduction can take."""
    size = batching.axis_size_of(args, dims)
    if size == 0:
        avals = [get_aval(x) if d is None else get_aval(x).update(
            shape=get_aval(x).shape[:d] + get_aval(x).shape[d + 1:])
            for x, d in zip(args, dims)]
        outs = prim.abstract_eval(*avals, **params)
        return [st.broadcast_in_dim(np.zeros((), o.dtype), (0,) + o.shape, ())
                for o in outs], [0] * len(outs)
    results = []
    for i in range(size):
        example = [x if d is None else slicing.index_in_dim(x, i, d, keepdims=False)
                   for x, d in zip(args, dims)]
        results.append(prim.bind(*example, **params))
    outs = [st.concatenate([st.expand_dims(r[k], (0,)) for r in results], 0)
            for k in range(len(results[0]))]
    return outs, [0] * len(outs)


def _check_variadic(name, args):
    n, rem = divmod(len(args), 2)
    if rem or n == 0:
        raise TypeError(f"{name} takes operands followed by as many init values")
    operands, inits = args[:n], args[n:]
    shapes = [init.shape for init in inits]
    if any(shapes):   # JAX's two ops word (and type) this error differently
        if name == "reduce":
            raise ValueError(f"reduce found non-scalar initial value: {shapes}")
        raise TypeError(f"{name} expected init_values to be scalars but init_values have "
                        f"shapes {shapes}.")
    for x, init in zip(operands, inits):
        if init.dtype != x.dtype:
            raise TypeError(f"{name}: init value dtype {init.dtype.name} does not match "
                            f"operand dtype {x.dtype.name}")
    if len({x.shape for x in operands}) != 1:
        raise TypeError(f"{name}: operands must have the same shape, got "
                        f"{[x.shape for x in operands]}")
    return operands, inits


def _check_reducer(name, jaxpr, inits):
    expected = [i.strip_weak_type().shape for i in inits] * 2
    if [a.shape for a in jaxpr.in_avals] != expected or \
            [a.dtype for a in jaxpr.in_avals] != [i.dtype for i in inits] * 2:
        raise TypeError(f"{name}: the reducer takes {[a.str_short(True) for a in jaxpr.in_avals]}"
                        f", which does not match the init values")


# --- the general reduce_window ----------------------------------------------------------------

def _rw_abstract_eval(*args, jaxpr, **params):
    operands, inits = _check_variadic("reduce_window", args)
    _check_reducer("reduce_window", jaxpr, inits)
    shape = _window_out_shape("reduce_window", operands[0].shape, **params)
    return [ShapedArray(shape, x.dtype) for x in operands]


def _window_taps_valid(shape, params):
    """For each window offset (row-major), which outputs' windows hold an operand element
    there rather than padding or a base-dilation hole: (out_shape + (taps,)) booleans."""
    view = _windows(np.ones(shape, bool), False, **params)
    return view.reshape(view.shape[:len(shape)] + (int(np.prod(params["window_dimensions"])),))


def _rw_impl(*args, jaxpr, **params):
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    ndim = operands[0].ndim
    valid = _window_taps_valid(operands[0].shape, params)
    shape = valid.shape[:ndim]
    taps = [_windows(x, i, **params).reshape(valid.shape) for x, i in zip(operands, inits)]
    avals = [get_aval(i) for i in inits]
    # As XLA: acc = init, then acc = f(acc, x) over the window in row-major order,
    # skipping padding and holes (this order matters to a non-associative reducer).
    acc = [np.full(shape, i, a.dtype) for i, a in zip(inits, avals)]
    for k in range(valid.shape[-1]):
        new = _run_reducer(jaxpr, acc + [t[..., k] for t in taps], shape, avals)
        acc = new if valid[..., k].all() else [np.where(valid[..., k], v, a)
                                                for v, a in zip(new, acc)]
    return acc


def _rw_batch(args, dims, *, jaxpr, **params):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        return _unbatch_by_loop(reduce_window_p, args, dims, dict(params, jaxpr=jaxpr))
    size = batching.axis_size_of(args, dims)
    operands = [batching.bdim_at_front(x, d, size) for x, d in zip(args[:n], dims[:n])]
    outs = reduce_window_p.bind(*operands, *args[n:], jaxpr=jaxpr,
                                **_insert_unit_window(params, 0))
    return outs, [0] * n


def _rw_lower(ctx, *args, jaxpr, **params):
    n = len(args) // 2
    scalars = [ShapedArray((), x.aval.dtype) for x in args[:n]]
    region = ctx.region(scalars * 2, lambda c, *xs: c.lower_jaxpr(jaxpr, list(xs)))
    return ctx.op("stablehlo.reduce_window", list(args),
                  [a.strip_weak_type() for a in ctx.avals_out], _window_attrs(**params),
                  regions=[region])


def _rw_expand(operands, inits, *, jaxpr, **params):
    """reduce_window as pad + one strided slice per window offset, folded in the order
    of _rw_impl."""
    window_dimensions, window_strides = params["window_dimensions"], params["window_strides"]
    in_shape = get_aval(operands[0]).shape
    shape = _window_out_shape("reduce_window", in_shape, **params)
    m = int(np.prod(shape))
    acc = [st.broadcast_in_dim(i, (m,), ()) for i in inits]
    if m == 0:
        return [st.reshape(a, shape) for a in acc]
    valid = _window_taps_valid(in_shape, params).reshape(m, -1)
    taps = []
    for x, init in zip(operands, inits):
        padded = st.pad(x, init, [(lo, hi, d - 1) for (lo, hi), d in
                                  zip(params["padding"], params["base_dilation"])])
        taps.append([])
        for offset in np.ndindex(*window_dimensions):
            start = [o * d for o, d in zip(offset, params["window_dilation"])]
            limit = [a + (n - 1) * s + 1 for a, n, s in zip(start, shape, window_strides)]
            taps[-1].append(st.reshape(slicing.slice(padded, start, limit, window_strides),
                                       (m,)))
    for k in range(valid.shape[-1]):
        new = _apply_reducer(jaxpr, acc + [t[k] for t in taps])
        acc = new if valid[:, k].all() else [ew.select(valid[:, k], v, a)
                                              for v, a in zip(new, acc)]
    return [st.reshape(a, shape) for a in acc]


def _rw_samples():
    from pyjax._src import tree_util
    f32 = ShapedArray((), np.dtype(np.float32))
    i32 = ShapedArray((), np.dtype(np.int32))
    tree = tree_util.tree_structure(0)
    # a reducer no fast path knows: the larger magnitude, keeping its sign
    big = _trace_reducer("reduce_window", lambda a, y: ew.select(
        ew.ge(ew.abs(a), ew.abs(y)), a, y), tree, [f32])
    pair_tree = tree_util.tree_structure((0, 0))
    # argmax as a variadic reduction: (value, index) pairs
    argmax = _trace_reducer("reduce_window", lambda a, y: (
        ew.max(a[0], y[0]), ew.select(ew.ge(a[0], y[0]), a[1], y[1])), pair_tree, [f32, i32])
    samples = []
    for s in _window_samples(np.float32):
        x = s.args[0]
        samples.append(b.Sample([x, np.float32(0.0)], dict(s.params, jaxpr=big)))
        idx = np.arange(x.size, dtype=np.int32).reshape(x.shape)
        samples.append(b.Sample([x, idx, np.float32(-np.inf), np.int32(-1)],
                                dict(s.params, jaxpr=argmax)))
    return samples


reduce_window_p = define_primitive(
    "reduce_window", multiple_results=True, impl=_rw_impl,
    abstract_eval=sharding_rules.typed(_rw_abstract_eval,
                                       sharding_rules.varying_shape("reduce_window")),
    jvp=RuleFactory(lambda prim: _expansion_jvp(prim, _rw_expand)), transpose=NO_TRANSPOSE,
    batch=_rw_batch, lower=_rw_lower, samples=_rw_samples)


# --- the general reduce -----------------------------------------------------------------------

def _reduce_abstract_eval(*args, computation, dimensions):
    operands, inits = _check_variadic("reduce", args)
    _check_reducer("reduce", computation, inits)
    ndim = operands[0].ndim
    if any(not 0 <= d < ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise TypeError(f"reduce: dimensions {dimensions} are invalid for operands of shape "
                        f"{operands[0].shape}")
    shape = tuple(s for i, s in enumerate(operands[0].shape) if i not in dimensions)
    return [ShapedArray(shape, x.dtype) for x in operands]


def _reduce_impl(*args, computation, dimensions):
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    kept = [i for i in range(operands[0].ndim) if i not in dimensions]
    shape = tuple(operands[0].shape[i] for i in kept)
    n = int(np.prod([operands[0].shape[d] for d in dimensions]))
    flat = [np.transpose(x, kept + list(dimensions)).reshape(shape + (n,))
            for x in operands]
    return _fold_last_axis(computation, inits, flat, [get_aval(i) for i in inits])


def _reduce_batch(args, dims, *, computation, dimensions):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        return _unbatch_by_loop(reduce_p, args, dims,
                                {"computation": computation, "dimensions": dimensions})
    size = batching.axis_size_of(args, dims)
    operands = [batching.bdim_at_front(x, d, size) for x, d in zip(args[:n], dims[:n])]
    outs = reduce_p.bind(*operands, *args[n:], computation=computation,
                         dimensions=tuple(d + 1 for d in dimensions))
    return outs, [0] * n


def _reduce_lower(ctx, *args, computation, dimensions):
    n = len(args) // 2
    scalars = [ShapedArray((), x.aval.dtype) for x in args[:n]]
    region = ctx.region(scalars * 2, lambda c, *xs: c.lower_jaxpr(computation, list(xs)))
    return ctx.op("stablehlo.reduce", list(args),
                  [a.strip_weak_type() for a in ctx.avals_out],
                  {"dimensions": hlo.i64_array(dimensions)}, regions=[region])


def _reduce_expand(operands, inits, *, computation, dimensions):
    """reduce as a transpose to (reduced, kept), a reshape and a pairwise fold."""
    shape = get_aval(operands[0]).shape
    kept = [i for i in range(len(shape)) if i not in dimensions]
    n = int(np.prod([shape[d] for d in dimensions]))
    out_shape = tuple(shape[i] for i in kept)
    m = int(np.prod(out_shape))
    flat = [st.reshape(st.transpose(x, tuple(dimensions) + tuple(kept)), (n, m))
            for x in operands]
    return [st.reshape(o, out_shape) for o in _lax_fold(computation, inits, flat)]


def _reduce_samples():
    return [b.Sample(s.args[:len(s.args) // 2] + s.args[len(s.args) // 2:],
                     {"computation": s.params["jaxpr"], "dimensions": dims})
            for s in _rw_samples()[:2] for dims in ((1,), (0, 1))]


reduce_p = define_primitive(
    "reduce", multiple_results=True, impl=_reduce_impl, abstract_eval=_reduce_abstract_eval,
    jvp=RuleFactory(lambda prim: _expansion_jvp(prim, _reduce_expand)),
    transpose=NO_TRANSPOSE,
    batch=_reduce_batch, lower=_reduce_lower, samples=_reduce_samples)


# --- the lax wrappers -------------------------------------------------------------------------

def _flat_args(api_name, operands, init_values):
    from pyjax._src import tree_util
    flat_ops, tree = tree_util.tree_flatten(operands)
    flat_inits, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"{api_name}: Operands must have the same tree structure as "
                         f"init_values: {tree} vs. {init_tree}")
    return flat_ops, flat_inits, tree


def _inits_of_operand_dtypes(api_name, flat_ops, flat_inits):
    """The init values of a general reduction, each of its operand's dtype (a weakly typed
    init is converted)."""
    inits = []
    for x, init in zip(flat_ops, flat_inits):
        dtype = get_aval(x).dtype
        init_aval = get_aval(init)
        if init_aval.dtype != dtype:
            if not (init_aval.weak_type or dtypes.is_python_scalar(init)):
                raise TypeError(f"{api_name}: init value dtype {init_aval.dtype.name} does "
                                f"not match operand dtype {dtype.name}")
            if isinstance(init, Tracer):
                init = ew.convert_element_type(init, dtype)
            else:
                try:
                    init = np.asarray(init, dtype)
                except OverflowError:   # e.g. -inf for an integer operand
                    raise TypeError(f"{api_name}: init value {init!r} is not representable "
                                    f"in the operand dtype {dtype.name}; pass an init "
                                    f"value of dtype {dtype.name}.") from None
        inits.append(init)
    return inits


def _window_int(v):
    """A window parameter: an int, or a symbolic dimension (jax.export), kept."""
    return v if is_symbolic_dim(v) else operator.index(v)


def _window_tuple(values, ndim, what, default=1):
    if values is None:
        return (default,) * ndim
    values = tuple(_window_int(v) for v in values)
    if len(values) != ndim:
        raise TypeError(f"reduce_window: {what} {values} must have one entry per operand "
                        f"dimension ({ndim})")
    return values


def reduce_window(operand, init_value, computation, window_dimensions, window_strides,
                  padding, base_dilation=None, window_dilation=None):
    """Reduces every window of operand (a pytree of same-shape arrays) with computation,
    starting from init_value. lax.add/max/min with their identity use the dedicated
    primitives (differentiable in reverse mode); any other computation runs as a general
    reduce_window."""
    from pyjax._src import tree_util
    flat_ops, flat_inits, tree = _flat_args("reduce_window", operand, init_value)
    shape = get_aval(flat_ops[0]).shape
    ndim = len(shape)
    window_dimensions = _window_tuple(window_dimensions, ndim, "window_dimensions")
    window_strides = _window_tuple(window_strides, ndim, "window_strides")
    base_dilation = _window_tuple(base_dilation, ndim, "base_dilation")
    window_dilation = _window_tuple(window_dilation, ndim, "window_dilation")
    if isinstance(padding, str):
        window = [_dilate(w, d) for w, d in zip(window_dimensions, window_dilation)]
        padding = padtype_to_pads(shape, window, window_strides, padding)
    padding = tuple((_window_int(lo), _window_int(hi)) for lo, hi in padding)
    params = {"window_dimensions": window_dimensions, "window_strides": window_strides,
              "padding": padding, "base_dilation": base_dilation,
              "window_dilation": window_dilation}
    avals = [ShapedArray((), get_aval(x).dtype) for x in flat_ops]
    closed = _trace_reducer("reduce_window", computation, tree, avals)
    kind = _monoid_of(closed) if len(flat_ops) == 1 else None
    fast = {"sum": reduce_window_sum_p, "max": reduce_window_max_p,
            "min": reduce_window_min_p}.get(kind)
    if fast is not None and _is_identity(flat_inits[0], kind):
        out = [fast.bind(flat_ops[0], **params)]
    else:
        inits = _inits_of_operand_dtypes("reduce_window", flat_ops, flat_inits)
        out = reduce_window_p.bind(*flat_ops, *inits, jaxpr=closed, **params)
    return tree_util.tree_unflatten(tree, out)


_MONOID_REDUCERS = {"sum": red.reduce_sum, "prod": red.reduce_prod, "max": red.reduce_max,
                    "min": red.reduce_min, "and": red.reduce_and, "or": red.reduce_or,
                    "xor": red.reduce_xor}


def reduce(operands, init_values, computation, dimensions):
    """Reduces `dimensions` of operands (a pytree of same-shape arrays) with computation
    from init_values. A single lax.add/mul/max/min/bitwise op with its identity becomes
    reduce_sum/prod/max/min/and/or/xor; anything else is a general reduce."""
    from pyjax._src import tree_util
    flat_ops, flat_inits, tree = _flat_args("reduce", operands, init_values)
    ndim = get_aval(flat_ops[0]).ndim
    from pyjax._src.util import canonicalize_axes
    if len(set(dimensions)) != len(tuple(dimensions)):
        raise ValueError(f"duplicate value in 'axes' of reduction: {tuple(dimensions)}")
    dims = canonicalize_axes(tuple(dimensions), ndim, "dimension")
    avals = [ShapedArray((), get_aval(x).dtype) for x in flat_ops]
    closed = _trace_reducer("reduce", computation, tree, avals)
    kind = _monoid_of(closed) if len(flat_ops) == 1 else None
    if kind is not None and _is_identity(flat_inits[0], kind):
        try:
            out = [_MONOID_REDUCERS[kind](flat_ops[0], dims)]
        except TypeError:      # e.g. 'and' of floats: let the general reduce report it
            inits = _inits_of_operand_dtypes("reduce", flat_ops, flat_inits)
            out = reduce_p.bind(*flat_ops, *inits, computation=closed, dimensions=dims)
    else:
        inits = _inits_of_operand_dtypes("reduce", flat_ops, flat_inits)
        out = reduce_p.bind(*flat_ops, *inits, computation=closed, dimensions=dims)
    return tree_util.tree_unflatten(tree, out)


__all__ = ["reduce_window", "reduce", "reduce_window_p", "reduce_p", "reduce_window_sum_p",
           "reduce_window_max_p", "reduce_window_min_p", "select_and_gather_add_p",
           "select_and_scatter_add_p", "select_and_scatter_p"]
