"""conv_general_dilated (XLA's convolution: strides, padding, dilations, layouts, feature
and batch groups) with all its rules, and the wrappers conv, conv_with_general_padding,
conv_transpose. Imports core, interpreters, backends.stablehlo and the lax families."""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from pyjax._src import dtypes
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import ad, batching, jet
from pyjax._src.interpreters.ad import defjvp
from pyjax._src.lax import builders as b
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import sharding_rules
from pyjax._src.lax import structural as st
from pyjax._src.lax.builders import NUMBER
from pyjax._src.lax.sharding_constraint import constrain, out_sharding_for
from pyjax._src.lax.precision_ops import canonicalize_precision, is_dot_algorithm


class ConvDimensionNumbers(NamedTuple):
    """Where each role lives in the operands and result of a convolution.

    lhs_spec: (batch dim, feature dim, spatial dims...) of the input.
    rhs_spec: (output feature dim, input feature dim, spatial dims...) of the kernel.
    out_spec: (batch dim, feature dim, spatial dims...) of the result."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _spec_from_string(spec, roles, spatial_order, what):
    if len(set(spec)) != len(spec):
        raise TypeError(f"conv_dimension_numbers: {what} spec {spec!r} repeats a letter")
    for role in roles:
        if spec.count(role) != 1:
            raise TypeError(f"conv_dimension_numbers: {what} spec {spec!r} must contain "
                            f"{role!r} exactly once (roles {roles[0]!r} and {roles[1]!r} "
                            "plus one letter per spatial dimension)")
    spatial = [spec.index(c) for c in spatial_order]
    return (spec.index(roles[0]), spec.index(roles[1])) + tuple(spatial)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """ConvDimensionNumbers from None (NC..., OI..., NC...), a ConvDimensionNumbers, or a
    tuple of three layout strings such as ('NHWC', 'HWIO', 'NHWC')."""
    ndim = len(lhs_shape)
    if len(rhs_shape) != ndim:
        if isinstance(dimension_numbers, ConvDimensionNumbers):   # JAX's shape rule says it
            raise ValueError(f"conv_general_dilated lhs and rhs must have the same number of "
                             f"dimensions, but got {tuple(lhs_shape)} and "
                             f"{tuple(rhs_shape)}.")
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(ndim))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        dnums = ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))
    elif (isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3
          and all(isinstance(s, str) for s in dimension_numbers)):
        lhs, rhs, out = dimension_numbers
        if not len(lhs) == len(rhs) == len(out) == ndim:
            raise TypeError(f"conv_dimension_numbers: specs {dimension_numbers} must each "
                            f"have one letter per operand dimension ({ndim})")
        spatial = [c for c in rhs if c not in "OI"]
        if not set(spatial) == set(lhs) - set("NC") == set(out) - set("NC"):
            raise TypeError(f"conv_dimension_numbers: the spatial letters of {lhs!r}, "
                            f"{rhs!r} and {out!r} must be the same")
        dnums = ConvDimensionNumbers(_spec_from_string(lhs, "NC", spatial, "lhs"),
                                     _spec_from_string(rhs, "OI", spatial, "rhs"),
                                     _spec_from_string(out, "NC", spatial, "out"))
    else:
        raise TypeError("dimension_numbers must be None, a ConvDimensionNumbers or a tuple "
                        f"of three layout strings like ('NCHW', 'OIHW', 'NCHW'), got "
                        f"{dimension_numbers!r}")
    for name, spec in zip(("lhs", "rhs", "out"), dnums):
        if sorted(spec) != list(range(ndim)):
            raise TypeError(f"conv_dimension_numbers: {name}_spec {spec} must be a "
                            f"permutation of range({ndim})")
    return dnums


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit (lo, hi) pairs for 'SAME', 'SAME_LOWER' or 'VALID' padding: SAME keeps
    ceil(in / stride) outputs, with the odd element of padding after (SAME) or before
    (SAME_LOWER)."""
    if not isinstance(padding, str):
        raise TypeError(f"padding must be a string, got {padding!r}")
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"Unknown padding type: {padding}. Use 'SAME', 'SAME_LOWER', "
                         "'VALID' or explicit (low, high) pairs.")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-size // stride)
        total = int(max((out - 1) * stride + window - size, 0))   # Python ints, as JAX's
        small, big = total // 2, total - total // 2
        pads.append((small, big) if kind == "SAME" else (big, small))
    return pads


def _dilate(size, factor):
    return 0 if size == 0 else 1 + factor * (size - 1)


def _conv_out_spatial(lhs_sizes, rhs_sizes, window_strides, padding, lhs_dilation,
                      rhs_dilation):
    out = []
    for n, k, s, (lo, hi), ld, rd in zip(lhs_sizes, rhs_sizes, window_strides, padding,
                                         lhs_dilation, rhs_dilation):
        padded = _dilate(n, ld) + lo + hi
        if padded < 0:
            raise ValueError(f"Negative padding is larger than the size of the corresponding "
                             f"dimension: got padding={tuple(padding)} for lhs spatial sizes "
                             f"{tuple(lhs_sizes)}")
        out.append(max(0, (padded - _dilate(k, rd)) // s + 1))
    return out


def _conv_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                        dimension_numbers, feature_group_count, batch_group_count,
                        precision=None, preferred_element_type=None, out_sharding=None):
    name = "conv_general_dilated"
    if lhs.ndim != rhs.ndim:
        raise TypeError(f"{name} lhs and rhs must have the same number of dimensions, got "
                        f"shapes {lhs.shape} and {rhs.shape}")
    if lhs.ndim < 2:
        raise TypeError(f"{name} operands need a batch and a feature dimension, got shape "
                        f"{lhs.shape}")
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        f"{lhs.dtype.name}, {rhs.dtype.name}. (Tip: promote them first, "
                        "e.g. with x.astype(y.dtype).)")
    b.check_dtype(name, lhs.dtype, NUMBER)
    nsp = lhs.ndim - 2
    for what, values in (("window_strides", window_strides), ("padding", padding),
                         ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(values) != nsp:
            raise TypeError(f"{name} {what} {values} must have one entry per spatial "
                            f"dimension ({nsp})")
    for what, values in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                         ("rhs_dilation", rhs_dilation)):
        if any(v <= 0 for v in values):
            raise ValueError(f"All elements of {what} must be positive, got {values}")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    n, c = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    o, i = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    g, bg = feature_group_count, batch_group_count
    if g < 1 or bg < 1:
        raise ValueError(f"{name} feature_group_count and batch_group_count must be "
                         f"positive, got {g} and {bg}")
    if g > 1 and bg > 1:
        raise ValueError(f"At most one of batch_group_count and feature_group_count may be "
                         f"> 1, got batch_group_count={bg} and feature_group_count={g}")
    if c % g:
        raise ValueError(f"{name} feature_group_count must divide lhs feature dimension "
                         f"size, but {g} does not divide {c}.")
    if c // g != i:
        raise ValueError(f"{name} lhs feature dimension size divided by "
                         f"feature_group_count must equal the rhs input feature dimension "
                         f"size, but {c} // {g} != {i}.")
    if o % g:
        raise ValueError(f"{name} rhs output feature dimension size must be a multiple of "
                         f"feature_group_count, but {o} is not a multiple of {g}.")
    if n % bg:
        raise ValueError(f"{name} batch_group_count must divide lhs batch dimension size, "
                         f"but {bg} does not divide {n}.")
    if o % bg:
        raise ValueError(f"{name} rhs output feature dimension size must be a multiple of "
                         f"batch_group_count, but {o} is not a multiple of {bg}.")
    spatial = _conv_out_spatial([lhs.shape[d] for d in lhs_spec[2:]],
                                [rhs.shape[d] for d in rhs_spec[2:]], window_strides,
                                padding, lhs_dilation, rhs_dilation)
    logical = [n // bg, o] + spatial
    shape = [0] * lhs.ndim
    for dim, size in zip(out_spec, logical):
        shape[dim] = size
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return ShapedArray(tuple(shape), dtype, lhs.weak_type and rhs.weak_type)


def _compute_dtype(in_dtype, out_dtype):
    compute = np.promote_types(in_dtype, out_dtype)
    if compute in (dtypes.bfloat16, dtypes.float16) or not compute.isbuiltin:
        return np.dtype(np.float32)
    return compute


def _dilate_and_pad(x, dilation, padding):
    """x (N, C, spatial...) with interior zeros and (possibly negative) edge padding."""
    if any(d > 1 for d in dilation):
        shape = x.shape[:2] + tuple(_dilate(n, d) for n, d in zip(x.shape[2:], dilation))
        out = np.zeros(shape, x.dtype)
        out[(slice(None),) * 2 + tuple(slice(None, None, d) for d in dilation)] = x
        x = out
    grow = [(0, 0)] * 2 + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    if any(p != (0, 0) for p in grow):
        x = np.pad(x, grow)
    crop = tuple(slice(-lo if lo < 0 else 0, x.shape[i + 2] + hi if hi < 0 else None)
                 for i, (lo, hi) in enumerate(padding))
    return x[(slice(None),) * 2 + crop]


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision=None,
               preferred_element_type=None, out_sharding=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_dtype = np.dtype(preferred_element_type or lhs.dtype)
    compute = _compute_dtype(lhs.dtype, out_dtype)
    x = np.transpose(lhs, lhs_spec).astype(compute)          # N C spatial...
    w = np.transpose(rhs, rhs_spec).astype(compute)          # O I spatial...
    nsp = x.ndim - 2
    spatial = _conv_out_spatial(x.shape[2:], w.shape[2:], window_strides, padding,
                                lhs_dilation, rhs_dilation)
    g, bg = feature_group_count, batch_group_count
    n_out, o = x.shape[0] // bg, w.shape[0]
    logical_shape = (n_out, o) + tuple(spatial)
    if 0 in logical_shape or 0 in w.shape[1:] or 0 in x.shape:
        out = np.zeros(logical_shape, compute)
    else:
        x = _dilate_and_pad(x, lhs_dilation, padding)
        window = tuple(_dilate(k, d) for k, d in zip(w.shape[2:], rhs_dilation))
        axes = tuple(range(2, 2 + nsp))
        patches = np.lib.stride_tricks.sliding_window_view(x, window, axis=axes)
        patches = patches[(slice(None),) * 2
                          + tuple(slice(None, s * (y - 1) + 1, s)
                                  for s, y in zip(window_strides, spatial))
                          + tuple(slice(None, None, d) for d in rhs_dilation)]
        # patches: N C Y... K...; groups split N (batch groups) or C (feature groups).
        p_shape = patches.shape
        w_groups = w.reshape((g * bg, o // (g * bg)) + w.shape[1:])
        if bg > 1:
            patches = patches.reshape((bg, n_out) + p_shape[1:])
        else:
            patches = np.moveaxis(
                patches.reshape((n_out, g, p_shape[1] // g) + p_shape[2:]), 1, 0)
        letters = "abcdefghijklmnop"
        ys, ks = letters[:nsp], letters[nsp:2 * nsp]
        out = np.einsum(f"GNC{ys}{ks},GOC{ks}->NGO{ys}", patches, w_groups, optimize=True)
        out = out.reshape(logical_shape)
    return np.transpose(out, np.argsort(out_spec)).astype(out_dtype, copy=False)


# --- autodiff -----------------------------------------------------------------------------

def _swap_roles(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _split_dim(x, dim, major):
    """x with dimension `dim` split into (major, rest), major first."""
    shape = list(get_aval(x).shape)
    shape[dim:dim + 1] = [major, shape[dim] // major]
    return st.reshape(x, tuple(shape))


def _move_group(x, src, dst):
    """Merges axis `src` into dimension `dst` (numbered before the move) as its major
    part."""
    x = batching.moveaxis(x, src, dst if dst < src else dst - 1)
    dst = dst if dst < src else dst - 1
    shape = list(get_aval(x).shape)
    shape[dst:dst + 2] = [shape[dst] * shape[dst + 1]]
    return st.reshape(x, tuple(shape))


def _regroup(x, from_dim, into_dim, groups):
    """Moves the `groups` major part of dimension from_dim into dimension into_dim (as its
    major part): the reshuffle that turns feature groups into batch groups and back."""
    x = _split_dim(x, from_dim, groups)
    into = into_dim + (into_dim > from_dim)
    return _move_group(x, from_dim, into)


def _vjp_lhs_padding(in_sizes, kernel_sizes, strides, out_sizes, padding, lhs_dilation,
                     rhs_dilation):
    """Padding of the cotangent so that the transposed convolution visits, for each input
    position, every output that read it."""
    pads = []
    for n, k, s, y, (lo, _), ld, rd in zip(in_sizes, kernel_sizes, strides, out_sizes,
                                           padding, lhs_dilation, rhs_dilation):
        kd = _dilate(k, rd)
        before = kd - 1 - lo
        pads.append((before, _dilate(n, ld) + kd - 1 - _dilate(y, s) - before))
    return pads


def _vjp_rhs_padding(in_sizes, kernel_sizes, strides, out_sizes, padding, lhs_dilation,
                     rhs_dilation):
    """Padding of the input so that correlating it with the cotangent yields exactly one
    value per kernel tap."""
    pads = []
    for n, k, s, y, (lo, _), ld, rd in zip(in_sizes, kernel_sizes, strides, out_sizes,
                                           padding, lhs_dilation, rhs_dilation):
        pads.append((lo, _dilate(k, rd) - 1 + _dilate(y, s) - _dilate(n, ld) - lo))
    return pads


def _conv_transpose_lhs(ct, lhs_aval, rhs, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision, preferred_element_type,
                        out_sharding=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    rhs_aval = get_aval(rhs)
    groups = max(feature_group_count, batch_group_count)
    if groups > 1:   # group g's kernels become the g-th block of the new output features
        rhs = _regroup(rhs, rhs_spec[0], rhs_spec[1], groups)
    pads = _vjp_lhs_padding([lhs_aval.shape[d] for d in lhs_spec[2:]],
                            [rhs_aval.shape[d] for d in rhs_spec[2:]], window_strides,
                            [get_aval(ct).shape[d] for d in out_spec[2:]], padding,
                            lhs_dilation, rhs_dilation)
    kernel = st.rev(rhs, tuple(rhs_spec[2:]))
    if kernel.dtype != get_aval(ct).dtype:   # a preferred_element_type's cotangent (JAX's)
        kernel = ew.convert_element_type(kernel, get_aval(ct).dtype)
    out = conv_general_dilated_p.bind(
        ct, kernel, window_strides=tuple(lhs_dilation),
        padding=tuple(pads), lhs_dilation=tuple(window_strides),
        rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=ConvDimensionNumbers(out_spec, _swap_roles(rhs_spec), lhs_spec),
        feature_group_count=groups, batch_group_count=1, precision=precision,
        preferred_element_type=preferred_element_type,
        # typed as lhs, as JAX's (batch groups come out as feature blocks: regrouped)
        out_sharding=lhs_aval._sharding if batch_group_count == 1 else None)
    if batch_group_count > 1:   # the groups came out as feature blocks: back to batch
        out = _regroup(out, lhs_spec[1], lhs_spec[0], batch_group_count)
    return ew.convert_element_type(out, lhs_aval.dtype)


def _conv_transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision, preferred_element_type,
                        out_sharding=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_aval = get_aval(lhs)
    pads = _vjp_rhs_padding([lhs_aval.shape[d] for d in lhs_spec[2:]],
                            [rhs_aval.shape[d] for d in rhs_spec[2:]], window_strides,
                            [get_aval(ct).shape[d] for d in out_spec[2:]], padding,
                            lhs_dilation, rhs_dilation)
    if lhs_aval.dtype != get_aval(ct).dtype:   # a preferred_element_type's cotangent
        lhs = ew.convert_element_type(lhs, get_aval(ct).dtype)
    # Batch and feature roles swap: feature groups become batch groups and vice versa.
    out = conv_general_dilated_p.bind(
        lhs, ct, window_strides=tuple(rhs_dilation), padding=tuple(pads),
        lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
        dimension_numbers=ConvDimensionNumbers(_swap_roles(lhs_spec), _swap_roles(out_spec),
                                               _swap_roles(rhs_spec)),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count,
        precision=precision, preferred_element_type=preferred_element_type,
        out_sharding=rhs_aval._sharding)   # typed as rhs, as JAX's
    return ew.convert_element_type(out, rhs_aval.dtype)


def _conv_transpose(ct, lhs, rhs, **params):
    if ad.is_undefined_primal(lhs) and ad.is_undefined_primal(rhs):
        raise ValueError("conv_general_dilated is not linear in both operands at once")
    if ad.is_undefined_primal(lhs):
        return [_conv_transpose_lhs(ct, lhs.aval, rhs, **params), None]
    return [None, _conv_transpose_rhs(ct, lhs, rhs.aval, **params)]


# --- batching -----------------------------------------------------------------------------

def _merge_batch(x, bdim, dim, groups):
    """Folds batch axis `bdim` into dimension `dim` (indexed without the batch) right
    after its `groups` major part: (groups, batch, rest) flattened."""
    shape = list(get_aval(x).shape)
    dim_phys = dim + (dim >= bdim)
    size = shape[dim_phys]
    x = batching.moveaxis(x, bdim, dim_phys if dim_phys < bdim else dim_phys - 1)
    # now the batch sits just before the target dimension, at index `dim`
    nb = shape[bdim]
    x = st.reshape(x, _replace(get_aval(x).shape, dim, 2, [nb, groups, size // groups]))
    x = batching.moveaxis(x, dim, dim + 1)       # (groups, batch, rest)
    return st.reshape(x, _replace(get_aval(x).shape, dim, 3, [size * nb]))


def _split_batch(x, dim, groups, nb):
    """Inverse of _merge_batch on a result: returns (x, batch dim)."""
    size = get_aval(x).shape[dim]
    x = st.reshape(x, _replace(get_aval(x).shape, dim, 1,
                               [groups, nb, size // (groups * nb)]))
    x = batching.moveaxis(x, dim + 1, dim)        # (batch, groups, rest)
    return st.reshape(x, _replace(get_aval(x).shape, dim + 1, 2, [size // nb])), dim


def _replace(shape, start, count, new):
    shape = list(shape)
    shape[start:start + count] = new
    return tuple(shape)


def _conv_batch(args, dims, *, dimension_numbers, feature_group_count, batch_group_count,
                out_sharding=None, **params):
    """The example batch is merged into a batch or feature dimension; the merged product
    is typed by the sharding rule (out_sharding names the unbatched dimensions)."""
    del out_sharding
    (lhs, rhs), (ld, rd) = args, dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nb = batching.axis_size_of(args, dims)
    g, bg = feature_group_count, batch_group_count
    if nb == 0:             # nothing to compute, and reshapes cannot recover the sizes
        avals = [get_aval(x) for x in args]
        avals = [a if d is None else a.update(shape=_replace(a.shape, d, 1, []))
                 for a, d in zip(avals, dims)]
        out = _conv_abstract_eval(*avals, dimension_numbers=dimension_numbers,
                                  feature_group_count=g, batch_group_count=bg, **params)
        return st.broadcast_in_dim(np.zeros((), out.dtype), (0,) + out.shape, ()), 0

    def bind(lhs, rhs, g, bg):
        return conv_general_dilated_p.bind(
            lhs, rhs, dimension_numbers=dimension_numbers, feature_group_count=g,
            batch_group_count=bg, **params)

    if rd is None:          # the batch rides along the input batch dimension
        out = bind(_merge_batch(lhs, ld, lhs_spec[0], bg), rhs, g, bg)
        return _split_batch(out, out_spec[0], 1, nb)
    if ld is None:          # the batch rides along the output features
        out = bind(lhs, _merge_batch(rhs, rd, rhs_spec[0], g * bg), g, bg)
        return _split_batch(out, out_spec[1], g * bg, nb)
    if bg > 1:              # one batch group per (group, example)
        out = bind(_merge_batch(lhs, ld, lhs_spec[0], bg),
                   _merge_batch(rhs, rd, rhs_spec[0], bg), 1, bg * nb)
        return _split_batch(out, out_spec[1], bg, nb)
    out = bind(_merge_batch(lhs, ld, lhs_spec[1], g), _merge_batch(rhs, rd, rhs_spec[0], g),
               g * nb, 1)   # one feature group per (group, example)
    return _split_batch(out, out_spec[1], g, nb)


# --- lowering -----------------------------------------------------------------------------

_PRECISIONS = {"DEFAULT": "DEFAULT", "HIGH": "HIGH", "HIGHEST": "HIGHEST",
               "FASTEST": "DEFAULT", "BFLOAT16": "DEFAULT", "TENSORFLOAT32": "HIGH",
               "FLOAT32": "HIGHEST"}


def _precision_names(precision):
    """Two StableHLO precision names from None, a name, an enum or a pair of those; None
    for a dot algorithm, which convolutions ignore (as JAX does)."""
    if precision is None or is_dot_algorithm(precision):
        return None
    pair = precision if isinstance(precision, (tuple, list)) else (precision, precision)
    names = []
    for p in pair:
        text = str(getattr(p, "name", p)).upper().split(".")[-1]
        names.append(_PRECISIONS.get(text, "DEFAULT"))
    return names


def _layout_text(spec, first, second):
    roles = [""] * len(spec)
    roles[spec[0]], roles[spec[1]] = first, second
    for i, d in enumerate(spec[2:]):
        roles[d] = str(i)
    return "[" + ", ".join(roles) + "]"


def _conv_lower(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                dimension_numbers, feature_group_count, batch_group_count, precision=None,
                preferred_element_type=None, out_sharding=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out = ctx.avals_out[0]
    compute = _compute_dtype(lhs.aval.dtype, out.dtype)
    lhs, rhs = ctx.convert(lhs, compute), ctx.convert(rhs, compute)
    nsp = len(window_strides)
    layout = (f"#stablehlo.conv<{_layout_text(lhs_spec, 'b', 'f')}x"
              f"{_layout_text(rhs_spec, 'o', 'i')}->{_layout_text(out_spec, 'b', 'f')}>")
    attrs = {"dimension_numbers": layout,
             "feature_group_count": hlo.i64_attr(feature_group_count),
             "batch_group_count": hlo.i64_attr(batch_group_count)}
    if nsp:
        pads = np.array(padding, np.int64).reshape(nsp, 2)
        attrs.update(window_strides=hlo.i64_array(window_strides),
                     lhs_dilation=hlo.i64_array(lhs_dilation),
                     rhs_dilation=hlo.i64_array(rhs_dilation),
                     padding=hlo.dense_attr(pads, ShapedArray(pads.shape, np.int64)))
    names = _precision_names(precision)
    if names:
        attrs["precision_config"] = "[" + ", ".join(
            f"#stablehlo<precision {n}>" for n in names) + "]"
    result = ctx.op("stablehlo.convolution", [lhs, rhs], out.update(dtype=compute,
                                                                     weak_type=False),
                    attrs)
    return ctx.convert(result, out.dtype)


def _conv_samples():
    f = np.float32
    rv = b.random_values

    def params(nsp, strides=None, padding=None, lhs_d=None, rhs_d=None, dnums=None, g=1,
               bg=1):
        one = (1,) * nsp
        return {"window_strides": strides or one, "padding": padding or ((0, 0),) * nsp,
                "lhs_dilation": lhs_d or one, "rhs_dilation": rhs_d or one,
                "dimension_numbers": dnums or ConvDimensionNumbers(*[tuple(range(nsp + 2))]
                                                                   * 3),
                "feature_group_count": g, "batch_group_count": bg, "precision": None,
                "preferred_element_type": None}

    nhwc = ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    return [
        b.Sample([rv((1, 1, 3), f), rv((1, 1, 10), f, seed=1)], params(1, padding=((9, 9),))),
        b.Sample([rv((2, 5, 6, 3), f), rv((2, 3, 3, 4), f, seed=1)],
                 params(2, strides=(2, 1), padding=((1, 0), (2, 1)), rhs_d=(1, 2),
                        dnums=nhwc)),
        b.Sample([rv((2, 4, 5), f), rv((6, 2, 2), f, seed=1)],
                 params(1, padding=((-1, 2),), lhs_d=(2,), g=2)),
        b.Sample([rv((4, 3, 6), f), rv((4, 3, 3), f, seed=1)],
                 params(1, strides=(2,), padding=((1, 1),), bg=2)),
        b.Sample([rv((2, 2, 5), np.int32), rv((3, 2, 2), np.int32, seed=1)], params(1)),
    ]


conv_general_dilated_p = define_primitive(
    "conv_general_dilated", impl=_conv_impl, abstract_eval=sharding_rules.typed(
        _conv_abstract_eval, sharding_rules.conv_general_dilated),
    jet=jet.bilinear_rule,
    jvp=defjvp(lambda g, lhs, rhs, **p: conv_general_dilated_p.bind(g, rhs, **p),
               lambda g, lhs, rhs, **p: conv_general_dilated_p.bind(lhs, g, **p)),
    transpose=_conv_transpose, batch=_conv_batch, lower=_conv_lower,
    samples=lambda: _conv_samples())


# --- the lax wrappers ---------------------------------------------------------------------

def _int_tuple(values, n, what, default=1):
    if values is None:
        return (default,) * n
    values = tuple(operator.index(v) for v in values)
    if len(values) != n:
        raise ValueError(f"conv_general_dilated window and {what} must have the same number "
                         f"of dimensions, but got {n} and {len(values)}")
    return values


def _explicit_padding(padding, nsp):
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(f"padding argument to conv_general_dilated should be a string or a "
                         f"sequence of (low, high) pairs, got {padding!r}") from None
    if len(pads) != nsp:
        raise ValueError(f"padding {padding} must have one (low, high) pair per spatial "
                         f"dimension ({nsp})")
    return pads


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """General n-dimensional convolution (a cross-correlation, as in XLA): strides,
    explicit or 'SAME'/'SAME_LOWER'/'VALID' padding, input (lhs) and kernel (rhs)
    dilation, layouts via dimension_numbers, and feature/batch grouping. out_sharding:
    how the result is split (a Sharding, or a PartitionSpec on the current mesh)."""
    lhs_aval, rhs_aval = get_aval(lhs), get_aval(rhs)
    if lhs_aval.ndim < 2 or rhs_aval.ndim < 2:
        raise TypeError(f"conv_general_dilated operands need a batch (or output feature) and "
                        f"a feature dimension, got shapes {lhs_aval.shape} and "
                        f"{rhs_aval.shape}")
    dnums = conv_dimension_numbers(lhs_aval.shape, rhs_aval.shape, dimension_numbers)
    nsp = lhs_aval.ndim - 2
    window_strides = _int_tuple(window_strides, nsp, "window_strides")
    lhs_dilation = _int_tuple(lhs_dilation, nsp, "lhs_dilation")
    rhs_dilation = _int_tuple(rhs_dilation, nsp, "rhs_dilation")
    for what, values in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                         ("rhs_dilation", rhs_dilation)):
        if any(v <= 0 for v in values):
            raise ValueError(f"All elements of {what} must be positive, got {values}")
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution "
                             "using this op. Please either exactly specify the required "
                             "padding or use conv_transpose.")
        window = [_dilate(rhs_aval.shape[d], r) for d, r in zip(dnums.rhs_spec[2:],
                                                                rhs_dilation)]
        padding = padtype_to_pads([lhs_aval.shape[d] for d in dnums.lhs_spec[2:]], window,
                                  window_strides, padding)
    pet = None if preferred_element_type is None else \
        dtypes.canonicalize_dtype(preferred_element_type)
    precision = canonicalize_precision(precision)
    typed, placed = out_sharding_for(out_sharding, lhs_aval.ndim, "conv_general_dilated")
    out = conv_general_dilated_p.bind(
        lhs, rhs, window_strides=window_strides, padding=_explicit_padding(padding, nsp),
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=dnums,
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count), precision=precision,
        preferred_element_type=pet, out_sharding=typed)
    return out if placed is None else constrain(out, placed)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """Convolution in NC... / OI... layout without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """Convolution in NC... / OI... layout with padding and both dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """The 'deconvolution': a convolution over the input dilated by `strides`, padded so
    that the output grows by the stride ('SAME') or by the kernel overhang ('VALID').
    transpose_kernel flips the kernel's spatial dims and swaps its I/O roles, giving the
    gradient of conv_general_dilated with respect to its input. Explicit (low, high)
    pairs pad the dilated input, unless use_consistent_padding: then they are the forward
    convolution's padding, as the strings are (PyTorch's convention)."""
    lhs_aval, rhs_aval = get_aval(lhs), get_aval(rhs)
    nsp = lhs_aval.ndim - 2
    if dimension_numbers is None:   # TensorFlow's layouts, as JAX defaults to here
        if not 0 <= nsp <= 3:
            raise ValueError("conv_transpose has default dimension_numbers for 0 to 3 "
                             f"spatial dimensions only, got {nsp}; pass dimension_numbers")
        space = "HWD"[:nsp]
        dimension_numbers = (f"N{space}C", f"{space}IO", f"N{space}C")
    dnums = conv_dimension_numbers(lhs_aval.shape, rhs_aval.shape, dimension_numbers)
    strides = _int_tuple(strides, nsp, "strides")
    rhs_dilation = _int_tuple(rhs_dilation, nsp, "rhs_dilation")
    kernel = [_dilate(rhs_aval.shape[d], r) for d, r in zip(dnums.rhs_spec[2:],
                                                            rhs_dilation)]
    if isinstance(padding, str):
        kind = padding.upper()
        if kind not in ("SAME", "VALID"):
            raise ValueError(f"conv_transpose padding must be 'SAME', 'VALID' or explicit "
                             f"pairs, got {padding!r}")
        pads = []
        for k, s in zip(kernel, strides):
            if kind == "SAME":     # output n * s, split as the forward SAME conv's gradient
                total = k + s - 2
                before = k - 1 if s >= k else -(-total // 2)
            else:                  # output n * s + max(k - s, 0)
                total, before = k + s - 2 + max(k - s, 0), k - 1
            pads.append((before, total - before))
        padding = pads
    elif use_consistent_padding:
        padding = [(k - 1 - lo, k - 1 - hi)
                   for k, (lo, hi) in zip(kernel, _explicit_padding(padding, nsp))]
    if transpose_kernel:
        rhs = st.rev(rhs, tuple(dnums.rhs_spec[2:]))
        dnums = dnums._replace(rhs_spec=_swap_roles(dnums.rhs_spec))
    return conv_general_dilated(lhs, rhs, (1,) * nsp, padding, lhs_dilation=strides,
                                rhs_dilation=rhs_dilation, dimension_numbers=dnums,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "padtype_to_pads",
           "conv_general_dilated_p", "conv_general_dilated", "conv",
           "conv_with_general_padding", "conv_transpose"]
