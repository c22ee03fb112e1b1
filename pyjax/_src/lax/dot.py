"""dot_general: contraction with batch dimensions, the primitive behind dot, matmul,
einsum and tensordot. Its transpose is a dot_general again, with dimensions permuted."""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import ad, batching, jet
from pyjax._src.interpreters.ad import defjvp
from pyjax._src.lax import builders as b
from pyjax._src.lax import sharding_rules
from pyjax._src.lax import structural as st
from pyjax._src.lax.builders import NUMBER
from pyjax._src.lax.sharding_constraint import constrain, out_sharding_for
from pyjax._src.lax.precision_ops import (DotAlgorithmPreset, canonicalize_precision,
                                             is_dot_algorithm)
from pyjax._src.util import quietly


# ((lhs contracting, rhs contracting), (lhs batch, rhs batch)), as dot_general takes them.
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]


def _free_dims(ndim, contract, batch):
    return [d for d in range(ndim) if d not in contract and d not in batch]


def _precision_rank(dtype):
    """XLA's order of 'higher precision' types (primitive_util's HigherPrecisionType):
    complex over real, then exponent range, mantissa, bit width, signed over unsigned."""
    real = dtypes.real_dtype(dtype)
    info = dtypes.finfo(real) if dtypes.is_float(real) else None
    return (dtypes.is_complex(dtype), info.maxexp if info else -1,
            info.nmant if info else -1, 1 if real == np.bool_ else dtypes.itemsize_bits(real),
            real.kind != "u")


def dot_result_dtype(lhs_dtype, rhs_dtype):
    """The dtype of a dot_general of mixed operand dtypes: the higher-precision one, as
    JAX and XLA decide (int32 . float32 is float32, int8 . int32 is int32)."""
    lhs_dtype, rhs_dtype = np.dtype(lhs_dtype), np.dtype(rhs_dtype)
    if lhs_dtype == rhs_dtype:
        return lhs_dtype
    lhs_rank, rhs_rank = _precision_rank(lhs_dtype), _precision_rank(rhs_dtype)
    if lhs_rank == rhs_rank:
        raise TypeError(f"lax.dot_general argument type error: {lhs_dtype}, {rhs_dtype}")
    return lhs_dtype if lhs_rank > rhs_rank else rhs_dtype


def _dot_general_abstract_eval(lhs, rhs, dimension_numbers, precision=None,
                               preferred_element_type=None, out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    for operand in (lhs, rhs):
        b.check_dtype("dot_general", operand.dtype, NUMBER + (b.BOOL,))
    for name, dims, aval in (("lhs contracting", lc, lhs), ("rhs contracting", rc, rhs),
                             ("lhs batch", lb, lhs), ("rhs batch", rb, rhs)):
        if any(not 0 <= d < aval.ndim for d in dims) or len(set(dims)) != len(dims):
            raise TypeError(f"dot_general {name} dimensions {dims} are invalid for shape "
                            f"{aval.shape}")
    for side, contract, batch in (("lhs", lc, lb), ("rhs", rc, rb)):
        if set(contract) & set(batch):
            raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint "
                            f"from contracting dimensions, got {side}_batch {batch} and "
                            f"{side}_contracting {contract}.")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(f"dot_general needs as many lhs as rhs contracting and batch "
                        f"dimensions, got {dimension_numbers}")
    # JAX's words, batch dimensions first
    for what, l_dims, r_dims in (("lhs batch dimensions and rhs batch dimensions", lb, rb),
                                 ("contracting dimensions", lc, rc)):
        l_sizes = tuple(lhs.shape[d] for d in l_dims)
        r_sizes = tuple(rhs.shape[d] for d in r_dims)
        if l_sizes != r_sizes:
            raise TypeError(f"dot_general requires {what} to have the same shape, got "
                            f"{l_sizes} and {r_sizes}.")
    shape = ([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in _free_dims(lhs.ndim, lc, lb)]
             + [rhs.shape[d] for d in _free_dims(rhs.ndim, rc, rb)])
    dtype = dot_result_dtype(lhs.dtype, rhs.dtype) if preferred_element_type is None \
        else preferred_element_type
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


# The presets XLA's CPU backend accepts. It does not read the algorithm itself: a dot
# computes in its operand and result types, which the lowering sets to the preset's.
_CPU_PRESETS = frozenset(DotAlgorithmPreset[name] for name in (
    "DEFAULT", "F16_F16_F16", "F32_F32_F32", "F64_F64_F64", "BF16_BF16_F32",
    "BF16_BF16_F32_X3", "BF16_BF16_F32_X6"))


def _algorithm_types(algorithm, lhs_dtype, rhs_dtype, out_dtype):
    """(lhs, rhs, result) dtypes of a dot under `algorithm` on CPU: a type the preset
    takes stays, any other becomes the preset's first (as JAX lowers it); ValueError for
    the algorithms CPU cannot run."""
    if algorithm not in _CPU_PRESETS:
        raise ValueError(f"The precision '{algorithm}' is not supported by dot_general on CPU")

    def pick(dtype, supported):
        return np.dtype(dtype) if supported is None or dtype in supported else supported[0]
    lhs = pick(lhs_dtype, algorithm.supported_lhs_types)
    rhs = pick(rhs_dtype, algorithm.supported_rhs_types)
    return lhs, rhs, pick(out_dtype, algorithm.supported_output_types(lhs, rhs))


def _algorithm_attr(preset):
    """#stablehlo.dot_algorithm of a CPU preset, read off its name (BF16_BF16_F32_X3:
    bfloat16 operands, float32 accumulation, three products)."""
    operand, _, accumulation, *products = preset.name.lower().split("_")
    count = int(products[0][1:]) if products else 1
    return (f"#stablehlo.dot_algorithm<lhs_precision_type = {operand}, rhs_precision_type = "
            f"{operand}, accumulation_type = {accumulation}, lhs_component_count = 1, "
            f"rhs_component_count = 1, num_primitive_operations = {count}, "
            f"allow_imprecise_accumulation = false>")


def _cast(x, dtype):
    """x as dtype, as XLA converts: complex to real keeps the real part."""
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        x = x.real
    return x.astype(dtype, copy=False)


def _dot_general_impl(lhs, rhs, dimension_numbers, precision=None,
                      preferred_element_type=None, out_sharding=None):
    out_dtype = preferred_element_type or dot_result_dtype(lhs.dtype, rhs.dtype)
    if not is_dot_algorithm(precision):
        return _contract(lhs, rhs, dimension_numbers, out_dtype)
    lhs_dtype, rhs_dtype, result_dtype = _algorithm_types(precision, lhs.dtype, rhs.dtype,
                                                          out_dtype)
    out = _contract(_cast(lhs, lhs_dtype), _cast(rhs, rhs_dtype), dimension_numbers,
                    result_dtype)
    return _cast(out, out_dtype)


_quiet_matmul = quietly(np.matmul)   # inf * 0 is NaN silently, as in XLA


def _contract(lhs, rhs, dimension_numbers, out_dtype):
    (lc, rc), (lb, rb) = dimension_numbers
    compute = np.promote_types(out_dtype, dot_result_dtype(lhs.dtype, rhs.dtype))
    if compute in (dtypes.bfloat16, dtypes.float16) or compute.kind == "b":
        compute = np.dtype(np.float32) if compute.kind != "b" else np.dtype(np.int32)
    if not lb and lhs.ndim <= 2 and rhs.ndim <= 2 and tuple(lc) == (lhs.ndim - 1,) \
            and tuple(rc) == (0,):   # a plain matrix/vector product (most eager dots)
        out = _quiet_matmul(lhs.astype(compute, copy=False), rhs.astype(compute, copy=False))
    else:   # as one batched matmul: (batch, free, contracted) @ (batch, contracted, free)
        lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
        shape_of = lambda x, ds: [x.shape[d] for d in ds]   # noqa: E731
        nb = math.prod(shape_of(lhs, lb))
        nl, nr = math.prod(shape_of(lhs, lf)), math.prod(shape_of(rhs, rf))
        nc = math.prod(shape_of(lhs, lc))
        left = lhs.transpose(list(lb) + lf + list(lc)).reshape(nb, nl, nc)
        right = rhs.transpose(list(rb) + list(rc) + rf).reshape(nb, nc, nr)
        out = _quiet_matmul(left.astype(compute, copy=False), right.astype(compute, copy=False))
        out = out.reshape(shape_of(lhs, lb) + shape_of(lhs, lf) + shape_of(rhs, rf))
    if np.dtype(out_dtype).kind == "b":
        out = out != 0
    return _cast(np.asarray(out), out_dtype)


def _ranges_like(*lists):
    start = 0
    for xs in lists:
        yield list(range(start, start + len(xs)))
        start += len(xs)


def _transpose_lhs(ct, x_aval, y, dimension_numbers, precision, preferred_element_type,
                   swap_ans=False):
    """The cotangent of x, split as x's type is (the contraction is over the result's
    split dimensions, which would be ambiguous)."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    y_ndim = get_aval(y).ndim
    x_kept = _free_dims(x_aval.ndim, x_contract, x_batch)
    y_kept = _free_dims(y_ndim, y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((tuple(ans_y), tuple(y_kept)), (tuple(ans_batch), tuple(y_batch)))
    x_contract_sorted_by_y = [x_contract[i] for i in np.argsort(y_contract)]
    out_axes = np.argsort(list(x_batch) + x_kept + x_contract_sorted_by_y)
    out_sharding = None
    if x_aval._sharding is None:
        # An operand of no type over the mesh: its cotangent is summed over whatever
        # split the contraction has (not left ambiguous), as JAX's typed cotangent says.
        typed = get_aval(ct)._sharding or get_aval(y)._sharding
        if typed is not None and typed.mesh.explicit_axes:
            out_sharding = sharding_rules.with_entries(typed, [None] * x_aval.ndim)
    else:
        x_spec = sharding_rules.entries(x_aval)
        order = list(x_batch) + x_kept + x_contract_sorted_by_y
        out_sharding = sharding_rules.with_entries(x_aval._sharding,
                                                   [x_spec[d] for d in order])
        # x reduced over the mesh axes the contraction sums over: its cotangent is
        # left a partial sum there (no all-reduce).
        ct_spec = sharding_rules.entries(get_aval(ct))
        summed = {n for d in dims[0][0] for n in sharding_rules.axes_of(ct_spec[d])}
        if summed and summed == x_aval._sharding.spec.reduced:
            out_sharding = sharding_rules.with_entries(
                x_aval._sharding, [x_spec[d] for d in order], unreduced=frozenset(summed))
    out = dot_general_p.bind(ct, y, dimension_numbers=dims,
                             precision=canonicalize_precision(precision),
                             preferred_element_type=preferred_element_type,
                             out_sharding=out_sharding)
    out = st.transpose(out, tuple(int(a) for a in out_axes))
    from pyjax._src.lax.elementwise import convert_element_type
    return convert_element_type(out, x_aval.dtype) if get_aval(out).dtype != x_aval.dtype \
        else out


def _dot_general_transpose(ct, lhs, rhs, dimension_numbers, precision=None,
                           preferred_element_type=None, out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    if ad.is_undefined_primal(lhs) and ad.is_undefined_primal(rhs):
        raise ValueError("dot_general is not linear in both operands at once")
    if ad.is_undefined_primal(lhs):
        return [_transpose_lhs(ct, lhs.aval, rhs, dimension_numbers, precision,
                               preferred_element_type), None]
    swapped = ((rc, lc), (rb, lb))
    return [None, _transpose_lhs(ct, rhs.aval, lhs, swapped, precision,
                                 preferred_element_type, swap_ans=True)]


def _dot_samples():
    f = np.float32
    return [
        b.Sample([b.random_values((3, 4), f), b.random_values((4, 5), f, seed=1)],
                 {"dimension_numbers": (((1,), (0,)), ((), ()))}),
        b.Sample([b.random_values((2, 3, 4), f), b.random_values((2, 4, 5), f, seed=1)],
                 {"dimension_numbers": (((2,), (1,)), ((0,), (0,)))}),
        b.Sample([b.random_values((4,), f), b.random_values((3, 4), f, seed=1)],
                 {"dimension_numbers": (((0,), (1,)), ((), ()))}),
        b.Sample([b.random_values((3, 4), np.int32), b.random_values((4,), np.int32, seed=1)],
                 {"dimension_numbers": (((1,), (0,)), ((), ()))}),
        b.Sample([b.random_values((3, 4), f), b.random_values((4, 2), f, seed=1)],
                 {"dimension_numbers": (((1,), (0,)), ((), ())),
                  "precision": DotAlgorithmPreset.F64_F64_F64}),
    ]


def _dot_general_batch(args, dims, dimension_numbers, precision=None,
                       preferred_element_type=None, out_sharding=None):
    """Both operands batched: the batch becomes a leading dot batch dimension; one
    batched: it becomes a free dimension of that side. Nothing moves or broadcasts."""
    (lhs, rhs), (ld, rd) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    shift = lambda ds, d: tuple(a + (a >= d) for a in ds) if d is not None else ds  # noqa
    lc, lb, rc, rb = shift(lc, ld), shift(lb, ld), shift(rc, rd), shift(rb, rd)
    if ld is not None and rd is not None:
        dims_out, out_dim = ((lc, rc), ((ld,) + lb, (rd,) + rb)), 0
    else:
        dims_out = ((lc, rc), (lb, rb))
        lhs_free = _free_dims(get_aval(lhs).ndim, lc, lb)
        if ld is not None:
            out_dim = len(lb) + lhs_free.index(ld)
        else:
            out_dim = (len(lb) + len(lhs_free) +
                       _free_dims(get_aval(rhs).ndim, rc, rb).index(rd))
    if out_sharding is not None:
        out_ndim = (get_aval(lhs).ndim + get_aval(rhs).ndim - 2 * len(dims_out[0][0])
                    - len(dims_out[1][0]))
        out_sharding = batching.batched_sharding(out_sharding, out_dim, ndim=out_ndim - 1)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dims_out, precision=precision,
                              preferred_element_type=preferred_element_type,
                              out_sharding=out_sharding), out_dim


def _dot_general_lower(ctx, lhs, rhs, dimension_numbers, precision=None,
                       preferred_element_type=None, out_sharding=None):
    """One stablehlo.dot_general in the dtype the impl computes in; booleans multiply
    as int32 and compare with zero. A dot algorithm first casts the operands to its
    types and rides along as an attribute."""
    (lc, rc), (lb, rb) = dimension_numbers
    out = ctx.avals_out[0]
    result_dtype, attrs = out.dtype, {}
    if is_dot_algorithm(precision):
        lhs_dtype, rhs_dtype, result_dtype = _algorithm_types(
            precision, lhs.aval.dtype, rhs.aval.dtype, out.dtype)
        lhs, rhs = ctx.convert(lhs, lhs_dtype), ctx.convert(rhs, rhs_dtype)
        if precision is not DotAlgorithmPreset.DEFAULT:
            attrs["algorithm"] = _algorithm_attr(precision)
    elif precision is not None:
        attrs["precision_config"] = "[" + ", ".join(
            f"#stablehlo<precision {p.name}>" for p in precision) + "]"
    compute = np.promote_types(result_dtype, dot_result_dtype(lhs.aval.dtype, rhs.aval.dtype))
    if compute == np.bool_:
        compute = np.dtype(np.int32)
    lhs, rhs = ctx.convert(lhs, compute), ctx.convert(rhs, compute)
    fields = [(name, dims) for name, dims in (
        ("lhs_batching_dimensions", lb), ("rhs_batching_dimensions", rb),
        ("lhs_contracting_dimensions", lc), ("rhs_contracting_dimensions", rc)) if dims]
    numbers = ", ".join(f"{name} = [{', '.join(map(str, dims))}]" for name, dims in fields)
    attrs["dot_dimension_numbers"] = f"#stablehlo.dot<{numbers}>"
    result = ctx.op("stablehlo.dot_general", [lhs, rhs], out.update(dtype=compute), attrs)
    return ctx.convert(result, out.dtype)


def _dot_general_shown(params):
    """As JAX prints it: no params that are None, the out_sharding left to the binder's
    type, the dimension numbers as lists (shorter)."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    shown = {k: v for k, v in sorted(params.items()) if v is not None and k != "out_sharding"}
    shown["dimension_numbers"] = ((list(lhs_contract), list(rhs_contract)),
                                  (list(lhs_batch), list(rhs_batch)))
    return shown


dot_general_p = define_primitive(
    "dot_general", impl=_dot_general_impl, abstract_eval=sharding_rules.typed(
        _dot_general_abstract_eval, sharding_rules.dot_general,
        sharding_rules.dot_general_ur),
    batch=_dot_general_batch, lower=_dot_general_lower,
    jet=jet.bilinear_rule,
    jvp=defjvp(lambda g, x, y, **p: dot_general_p.bind(g, y, **p),
               lambda g, x, y, **p: dot_general_p.bind(x, g, **p)),
    transpose=_dot_general_transpose, samples=lambda: _dot_samples(),
    shown_params=_dot_general_shown)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    """General tensor contraction: dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch)); output dims are batch, lhs free, rhs free. out_sharding:
    how the result is split (a Sharding, or a PartitionSpec on the current mesh)."""
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        dims = ((tuple(operator.index(d) for d in lc), tuple(operator.index(d) for d in rc)),
                (tuple(operator.index(d) for d in lb), tuple(operator.index(d) for d in rb)))
    except (TypeError, ValueError):
        raise TypeError(f"dot_general dimension_numbers must be ((lhs_contracting, "
                        f"rhs_contracting), (lhs_batch, rhs_batch)), each a sequence of ints, "
                        f"got {dimension_numbers!r}") from None
    pet = None if preferred_element_type is None else \
        dtypes.canonicalize_dtype(preferred_element_type)
    out_ndim = (get_aval(lhs).ndim + get_aval(rhs).ndim - 2 * len(dims[0][0])
                - len(dims[1][0]))
    typed, placed = out_sharding_for(out_sharding, out_ndim, "dot_general")
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=dims,
                             precision=canonicalize_precision(precision),
                             preferred_element_type=pet, out_sharding=typed)
    return out if placed is None else constrain(out, placed)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    """dot_general with `dimension_numbers` defaulting to the vector/matrix product of
    rank 1 and 2 operands (lax.dot)."""
    if dimension_numbers is None:
        lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
        if not (1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2
                and lhs_shape[-1] == rhs_shape[0]):
            raise ValueError(
                "jax.lax.dot: dimension_numbers must be specified when not performing "
                "simple un-batched matrix-matrix, matrix-vector, or vector-vector "
                f"products; got lhs_shape={lhs_shape} rhs_shape={rhs_shape}")
        dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type,
                       out_sharding)
