"""Structural primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims (via
broadcast_in_dim/reshape), concatenate, pad, rev, iota. All are linear."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src import dtypes
from pyjax._src.array import as_array
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, cotangent_sharding, get_aval
from pyjax._src.core.trace import define_primitive, no_samples
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters.ad import linear_jvp
from pyjax._src.shape_poly import is_symbolic_dim
from pyjax._src.lax import builders as b
from pyjax._src.lax import sharding_rules
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.sharding_constraint import constrain, out_sharding_for
from pyjax._src.util import canonicalize_axis, prod
from pyjax._src.lax.sharding_constraint import takes_out_sharding


def _static_shape(shape, where, allow_infer=False):
    try:   # symbolic dimensions (jax.export's shape polymorphism) stand as they are
        out = tuple(d if is_symbolic_dim(d) else operator.index(d) for d in shape)
    except TypeError as err:
        from pyjax._src.core.trace import Tracer
        bad = next((d for d in shape if isinstance(d, Tracer)), None)
        if bad is not None:
            from pyjax._src import errors
            raise errors.ConcretizationTypeError(
                bad, f"The error arose in {where}: shapes must be static Python integers.\n"
            ) from None
        raise TypeError(f"{where}: Shapes must be 1D sequences of concrete values of "
                        f"integer type, got {shape}.") from err
    if any(not is_symbolic_dim(d) and d < 0 and not (allow_infer and d == -1)
           for d in out):
        raise TypeError(f"{where} shape must have every element be nonnegative, got {out}.")
    return out


# --- broadcast_in_dim -------------------------------------------------------------------

def _broadcast_in_dim_abstract_eval(x, shape, broadcast_dimensions, sharding=None):
    dims = broadcast_dimensions
    if len(dims) != x.ndim:
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must have length equal to "
                        f"operand ndim; got broadcast_dimensions {dims} for operand ndim "
                        f"{x.ndim}.")
    if len(shape) < x.ndim:
        raise TypeError(f"broadcast_in_dim target broadcast shape must have equal or higher "
                        f"rank to the operand shape; got operand ndim {x.ndim} and target "
                        f"broadcast ndim {len(shape)}.")
    if any(not 0 <= d < len(shape) for d in dims):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must be a subset of output "
                        f"dimensions, got {dims} for operand ndim {x.ndim} and shape {shape}.")
    if any(n not in (1, shape[d]) for n, d in zip(x.shape, dims)):
        raise TypeError(f"broadcast_in_dim operand dimension sizes must either be 1, or be "
                        f"equal to their corresponding dimensions in the target broadcast "
                        f"shape; got operand of shape {x.shape}, target broadcast shape "
                        f"{shape}, broadcast_dimensions {dims}")
    if len(set(dims)) != len(dims):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must not contain duplicates, "
                        f"got broadcast_dimensions {dims}")
    # The wrapper sorts the dimensions (transposing the operand), so rules may rely on it.
    if list(dims) != sorted(dims):
        raise TypeError(f"the broadcast_in_dim primitive takes increasing "
                        f"broadcast_dimensions, got {dims}; call lax.broadcast_in_dim")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_impl(x, shape, broadcast_dimensions, sharding=None):
    if x.ndim == 0 and prod(shape) <= 4096:   # filling a small array beats making a view
        return np.full(shape, x)
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(np.reshape(x, expanded), shape)


def _broadcast_in_dim_transpose(ct, x, shape, broadcast_dimensions, sharding=None):
    in_shape = x.aval.shape
    new_dims = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    stretched = tuple(d for i, d in enumerate(broadcast_dimensions)
                      if in_shape[i] == 1 and shape[d] != 1)
    summed = b.bind_primitive("reduce_sum", ct, axes=tuple(sorted(new_dims + stretched))) \
        if (new_dims or stretched) else ct
    return [reshape(summed, in_shape) if stretched else summed]


def _broadcast_in_dim_batch(args, dims, shape, broadcast_dimensions, sharding=None):
    (x,), (d,) = args, dims
    # The batch lands just after the output dim of the operand dim before it: no transpose.
    at = broadcast_dimensions[d - 1] + 1 if d > 0 else 0
    moved = tuple(bd if i < d else bd + 1 for i, bd in enumerate(broadcast_dimensions))
    out_shape = shape[:at] + (get_aval(x).shape[d],) + shape[at:]
    if sharding is not None:
        sharding = batching.batched_sharding(sharding, at, ndim=len(shape))
    return broadcast_in_dim_p.bind(x, shape=out_shape,
                                   broadcast_dimensions=moved[:d] + (at,) + moved[d:],
                                   sharding=sharding), at


def _broadcast_in_dim_shown(params):
    """As JAX prints it: the shape and sharding are the binder's type, and no
    broadcast_dimensions while there are none."""
    return {k: v for k, v in sorted(params.items()) if k not in ("shape", "sharding")
            and not (k == "broadcast_dimensions" and not v)}


broadcast_in_dim_p = define_primitive(
    "broadcast_in_dim", impl=_broadcast_in_dim_impl,
    abstract_eval=sharding_rules.typed(
        _broadcast_in_dim_abstract_eval, sharding_rules.broadcast_in_dim,
        sharding_rules.operand_ur), jvp=linear_jvp,
    transpose=_broadcast_in_dim_transpose, batch=_broadcast_in_dim_batch,
    shown_params=_broadcast_in_dim_shown,
    lower=lambda ctx, x, shape, broadcast_dimensions, sharding=None: ctx.op(
        "stablehlo.broadcast_in_dim", [x], ctx.avals_out[0],
        {"broadcast_dimensions": hlo.i64_array(broadcast_dimensions)}),
    samples=lambda: [b.Sample([b.random_values((3,), np.float32)],
                      {"shape": (2, 3), "broadcast_dimensions": (1,)}),
             b.Sample([b.random_values((3, 1), np.float32)],
                      {"shape": (3, 4), "broadcast_dimensions": (0, 1)}),
             b.Sample([np.float32(2.0)], {"shape": (2, 2), "broadcast_dimensions": ()})])


@takes_out_sharding
def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """Broadcasts operand to `shape`, operand dim i landing on broadcast_dimensions[i]."""
    shape = _static_shape(shape, "broadcast_in_dim")
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    aval = get_aval(operand)
    if aval.shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return as_array(operand)
    if (len(broadcast_dimensions) == aval.ndim
            and len(set(broadcast_dimensions)) == aval.ndim
            and list(broadcast_dimensions) != sorted(broadcast_dimensions)
            and all(0 <= d < len(shape) and n in (1, shape[d])
                    for n, d in zip(aval.shape, broadcast_dimensions))):
        # Operand dimensions may land in any order: put them in output order first (bad
        # dimensions go to the primitive as given, for its error to name them).
        order = tuple(int(i) for i in np.argsort(broadcast_dimensions))
        operand = transpose(operand, order)
        broadcast_dimensions = tuple(sorted(broadcast_dimensions))
    return broadcast_in_dim_p.bind(operand, shape=shape,
                                   broadcast_dimensions=broadcast_dimensions)


@takes_out_sharding
def broadcast(operand, sizes):
    """Adds leading dimensions of the given sizes."""
    aval = get_aval(operand)
    sizes = tuple(sizes)
    return broadcast_in_dim(operand, sizes + aval.shape,
                            tuple(range(len(sizes), len(sizes) + aval.ndim)))


def broadcast_to_shape(x, shape):
    """NumPy-style broadcast (trailing alignment) expressed with broadcast_in_dim."""
    aval = get_aval(x)
    shape = tuple(shape)
    if aval.shape == shape:
        return x
    lead = len(shape) - aval.ndim
    if lead < 0 or any(d not in (1, s) for d, s in zip(aval.shape, shape[lead:])):
        raise ValueError(f"Incompatible shapes for broadcasting: {aval.shape} and "
                         f"requested shape {shape}")
    return broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


# --- reshape ----------------------------------------------------------------------------

def _reshape_abstract_eval(x, new_sizes, dimensions=None, sharding=None):
    if prod(new_sizes) != x.size or any(not is_symbolic_dim(d) and d < 0
                                        for d in new_sizes):
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                        f"for shape {x.shape}.")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _reshape_impl(x, new_sizes, dimensions=None, sharding=None):
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return np.reshape(x, new_sizes)


def _reshape_transpose(ct, x, new_sizes, dimensions=None, sharding=None):
    if dimensions is None:   # back to x's shape and to the split of x's cotangent type
        typed = x.aval._sharding
        return [reshape_p.bind(ct, new_sizes=x.aval.shape, dimensions=None,
                               sharding=None if typed is None else cotangent_sharding(typed))]
    shape_before = tuple(x.aval.shape[d] for d in dimensions)
    return [transpose(reshape(ct, shape_before), tuple(np.argsort(dimensions)))]


def _reshape_batch(args, dims, new_sizes, dimensions=None, sharding=None):
    (x,), (d,) = args, dims
    x = batching.moveaxis(x, d, 0)
    dims_after = None if dimensions is None else (0,) + tuple(i + 1 for i in dimensions)
    if sharding is not None:
        sharding = batching.batched_sharding(sharding, 0, ndim=len(new_sizes))
    return reshape_p.bind(x, new_sizes=(get_aval(x).shape[0],) + tuple(new_sizes),
                          dimensions=dims_after, sharding=sharding), 0


def _reshape_lower(ctx, x, new_sizes, dimensions=None, sharding=None):
    if dimensions is not None:
        x = _transpose_lower(ctx, x, dimensions)
    return ctx.reshape(x, new_sizes)


reshape_p = define_primitive(
    "reshape", impl=_reshape_impl, abstract_eval=sharding_rules.typed(
        _reshape_abstract_eval, sharding_rules.reshape,
        sharding_rules.reshape_ur), jvp=linear_jvp,
    transpose=_reshape_transpose, batch=_reshape_batch, lower=_reshape_lower,
    shown_params=sharding_rules.shown_unset("sharding"),
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32)], {"new_sizes": (3, 2)}),
             b.Sample([b.random_values((2, 3), np.float32)], {"new_sizes": (6,),
                                                              "dimensions": (1, 0)})])


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """Reshapes operand (optionally transposing by `dimensions` first). -1 infers a size.
    out_sharding: how the result is split (a Sharding, or a PartitionSpec on the current
    mesh)."""
    new_sizes = _static_shape(new_sizes if isinstance(new_sizes, (tuple, list))
                              else (new_sizes,), "reshape", allow_infer=True)
    aval = get_aval(operand)
    if -1 in new_sizes:
        known = prod(d for d in new_sizes if d != -1)
        if new_sizes.count(-1) > 1 or known == 0 or aval.size % known:
            raise TypeError(f"cannot reshape array of shape {aval.shape} (size {aval.size}) "
                            f"into {new_sizes}: at most one -1 is allowed and the other "
                            "sizes must divide the array size.")
        new_sizes = tuple(aval.size // known if d == -1 else d for d in new_sizes)
    dims = None if dimensions is None or tuple(dimensions) == tuple(range(aval.ndim)) \
        else tuple(operator.index(d) for d in dimensions)
    if dims is not None and sorted(dims) != list(range(aval.ndim)):
        raise TypeError("reshape dimensions must be a permutation of operand dimensions, "
                        f"got dimensions {dims} for shape {aval.shape}.")
    typed, placed = out_sharding_for(out_sharding, len(new_sizes), "reshape")
    if dims is None and new_sizes == aval.shape and out_sharding is None:
        return as_array(operand)
    out = reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims, sharding=typed)
    return out if placed is None else constrain(out, placed)


# --- transpose --------------------------------------------------------------------------

def _transpose_abstract_eval(x, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(f"transpose permutation {permutation} is not a permutation of the "
                        f"operand dimensions {tuple(range(x.ndim))}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


def _transpose_batch(args, dims, permutation):
    (x,), (d,) = args, dims
    perm = [p + (p >= d) for p in permutation]
    perm.insert(d, d)
    return transpose_p.bind(x, permutation=tuple(perm)), d


def _transpose_lower(ctx, x, permutation):
    shape = tuple(x.aval.shape[p] for p in permutation)
    return ctx.op("stablehlo.transpose", [x], x.aval.update(shape=shape),
                  {"permutation": hlo.i64_array(permutation)})


transpose_p = define_primitive(
    "transpose", impl=lambda x, permutation: np.transpose(x, permutation),
    abstract_eval=sharding_rules.typed(
        _transpose_abstract_eval, sharding_rules.transpose,
        sharding_rules.operand_ur), jvp=linear_jvp, batch=_transpose_batch,
    lower=_transpose_lower,
    transpose=lambda ct, x, permutation: [transpose(ct, tuple(np.argsort(permutation)))],
    samples=lambda: [b.Sample([b.random_values((2, 3, 4), np.float32)],
                      {"permutation": (2, 0, 1)})])


def transpose(operand, permutation):
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


# --- squeeze / expand_dims ----------------------------------------------------------------

def _squeeze_abstract_eval(x, dimensions):
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"dimensions are not unique: {dimensions}")
    for d in dimensions:
        if x.shape[d] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal "
                            f"to one, got shape={x.shape} and dimensions={dimensions}")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions),
                       x.dtype, x.weak_type)


def _squeeze_batch(args, dims, dimensions):
    (x,), (d,) = args, dims
    return (squeeze_p.bind(x, dimensions=tuple(a + (a >= d) for a in dimensions)),
            d - sum(a < d for a in dimensions))


squeeze_p = define_primitive(
    "squeeze", impl=lambda x, dimensions: np.squeeze(x, dimensions),
    abstract_eval=sharding_rules.typed(
        _squeeze_abstract_eval, sharding_rules.squeeze,
        sharding_rules.operand_ur), jvp=linear_jvp, batch=_squeeze_batch,
    lower=lambda ctx, x, dimensions: ctx.reshape(x, ctx.avals_out[0].shape),
    transpose=lambda ct, x, dimensions: [reshape(ct, x.aval.shape)],
    samples=lambda: [b.Sample([b.random_values((2, 1, 3), np.float32)], {"dimensions": (1,)})])


def squeeze(array, dimensions):
    aval = get_aval(array)
    dims = tuple(sorted(canonicalize_axis(operator.index(d), aval.ndim)
                        for d in dimensions))
    return squeeze_p.bind(array, dimensions=dims) if dims else array


def expand_dims(array, dimensions):
    aval = get_aval(array)
    ndim_out = aval.ndim + len(dimensions)
    dims = sorted(canonicalize_axis(d, ndim_out) for d in dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in expand_dims: {tuple(dimensions)}")
    shape = list(aval.shape)
    for d in dims:
        shape.insert(d, 1)
    return broadcast_in_dim(array, tuple(shape),
                            tuple(i for i in range(ndim_out) if i not in dims))


# --- concatenate ------------------------------------------------------------------------

def _concatenate_abstract_eval(*xs, dimension):
    if not xs:
        raise TypeError("concatenate requires at least one operand")
    b.same_dtypes("concatenate", list(xs))
    first = xs[0]
    if not 0 <= dimension < first.ndim:
        raise TypeError(f"concatenate dimension {dimension} out of range for {first.shape}")
    for x in xs[1:]:
        if x.ndim != first.ndim or any(a != c for i, (a, c) in
                                       enumerate(zip(x.shape, first.shape)) if i != dimension):
            raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions "
                            f"other than the one being concatenated: {[x.shape for x in xs]}")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


def _concatenate_transpose(ct, *xs, dimension):
    out, start, shape = [], 0, get_aval(ct).shape
    for x in xs:
        size = (x.aval if ad.is_undefined_primal(x) else get_aval(x)).shape[dimension]
        if ad.is_undefined_primal(x):   # lax.slice_in_dim (slicing.py is above this family)
            starts = tuple(start if d == dimension else 0 for d in range(len(shape)))
            limits = tuple(start + size if d == dimension else n for d, n in enumerate(shape))
            out.append(b.bind_primitive("slice", ct, start_indices=starts,
                                        limit_indices=limits, strides=None))
        else:
            out.append(None)
        start += size
    return out


def _concatenate_batch(args, dims, dimension):
    size = batching.axis_size_of(args, dims)
    xs = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


concatenate_p = define_primitive(
    "concatenate", impl=lambda *xs, dimension: np.concatenate(xs, dimension),
    abstract_eval=sharding_rules.typed(
        _concatenate_abstract_eval, sharding_rules.concatenate,
        sharding_rules.same_ur), jvp=linear_jvp,
    transpose=_concatenate_transpose, batch=_concatenate_batch,
    lower=lambda ctx, *xs, dimension: ctx.op("stablehlo.concatenate", list(xs),
                                             ctx.avals_out[0],
                                             {"dimension": hlo.i64_attr(dimension)}),
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32, seed=0),
                       b.random_values((1, 3), np.float32, seed=1)], {"dimension": 0})])


def concatenate(operands, dimension):
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


# --- pad --------------------------------------------------------------------------------

def _pad_abstract_eval(x, padding_value, padding_config):
    b.same_dtypes("pad", [x, padding_value])
    if padding_value.shape:
        raise ValueError(f"padding_value must be a scalar; got np.shape(padding_value)="
                         f"{padding_value.shape}")
    if len(padding_config) != x.ndim:
        raise ValueError(f"length of padding_config must equal the number of axes of "
                         f"operand, got padding_config {padding_config} for operand shape "
                         f"{x.shape}")
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError(f"interior padding in padding_config must be nonnegative, got "
                         f"padding_config {padding_config}")
    shape = tuple(lo + hi + d + max(d - 1, 0) * interior
                  for d, (lo, hi, interior) in zip(x.shape, padding_config))
    if any(d < 0 for d in shape):
        raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                         f"{shape}, for padding_config {padding_config} and operand shape "
                         f"{x.shape}")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _pad_impl(x, padding_value, padding_config):
    # Interior padding first, then (possibly negative) edge padding.
    shape = [d + max(d - 1, 0) * it for d, (_, _, it) in zip(x.shape, padding_config)]
    out = np.full(shape, padding_value, x.dtype)
    out[tuple(slice(None, None, it + 1) for _, _, it in padding_config)] = x
    edges = [(max(lo, 0), max(hi, 0)) for lo, hi, _ in padding_config]
    out = np.pad(out, edges, constant_values=padding_value)
    crop = tuple(slice(-lo if lo < 0 else 0, out.shape[i] + hi if hi < 0 else None)
                 for i, (lo, hi, _) in enumerate(padding_config))
    return out[crop]


def _pad_transpose(ct, x, padding_value, padding_config):
    unpadded = pad(ct, np.array(0, get_aval(ct).dtype),
                   [(-lo, -hi, 0) for lo, hi, _ in padding_config])
    strides = tuple(it + 1 for _, _, it in padding_config)
    x_ct = b.bind_primitive("slice", unpadded, start_indices=(0,) * len(strides),
                            limit_indices=get_aval(unpadded).shape,
                            strides=None if all(s == 1 for s in strides) else strides)
    if ad.is_undefined_primal(padding_value):
        total = b.bind_primitive("reduce_sum", ct, axes=tuple(range(get_aval(ct).ndim)))
        inner = b.bind_primitive("reduce_sum", x_ct, axes=tuple(range(get_aval(x_ct).ndim)))
        return [x_ct if ad.is_undefined_primal(x) else None, ew.sub(total, inner)]
    return [x_ct, None]


def _pad_batch(args, dims, padding_config):
    (x, value), (d, vd) = args, dims
    if vd is None:
        config = padding_config[:d] + ((0, 0, 0),) + padding_config[d:]
        return pad_p.bind(x, value, padding_config=config), d
    # A batched padding value: pad with zeros, then select the value where padding landed.
    size = batching.axis_size_of(args, dims)
    x = batching.bdim_at_front(x, d, size)
    dtype = get_aval(x).dtype
    padded = pad_p.bind(x, np.zeros((), dtype), padding_config=((0, 0, 0),) + padding_config)
    in_pad = pad_p.bind(full(get_aval(x).shape[1:], np.False_), np.True_,
                        padding_config=padding_config)
    shape = get_aval(padded).shape
    in_pad = broadcast_in_dim(in_pad, shape, tuple(range(1, len(shape))))
    values = batching.broadcast_batched(value, vd, size, shape[1:])
    return ew.select_n(in_pad, padded, values), 0


pad_p = define_primitive(
    "pad", impl=_pad_impl, abstract_eval=_pad_abstract_eval, jvp=linear_jvp,
    transpose=_pad_transpose, batch=_pad_batch,
    lower=lambda ctx, x, padding_value, padding_config: ctx.op(
        "stablehlo.pad", [x, padding_value], ctx.avals_out[0],
        {"edge_padding_low": hlo.i64_array(lo for lo, _, _ in padding_config),
         "edge_padding_high": hlo.i64_array(hi for _, hi, _ in padding_config),
         "interior_padding": hlo.i64_array(it for _, _, it in padding_config)}),
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32), np.float32(0.0)],
                      {"padding_config": ((1, 2, 0), (0, 1, 1))}),
             b.Sample([b.random_values((4,), np.float32), np.float32(1.5)],
                      {"padding_config": ((-1, 1, 1),)})])


def pad(operand, padding_value, padding_config):
    """Pads with lo/hi (may be negative) and interior padding per dimension."""
    try:
        config = tuple((operator.index(lo), operator.index(hi), operator.index(it))
                       for lo, hi, it in padding_config)
    except (TypeError, ValueError):
        raise TypeError(f"pad padding_config must be a sequence of (low, high, interior) "
                        f"integer triples, got {padding_config!r}") from None
    return pad_p.bind(operand, padding_value, padding_config=config)


# --- rev --------------------------------------------------------------------------------

def _rev_abstract_eval(x, dimensions):
    if any(not 0 <= d < x.ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions {dimensions} invalid for shape {x.shape}")
    return x


def _rev_batch(args, dims, dimensions):
    (x,), (d,) = args, dims
    return rev_p.bind(x, dimensions=tuple(a + (a >= d) for a in dimensions)), d


rev_p = define_primitive(
    "rev", impl=lambda x, dimensions: np.flip(x, dimensions) if dimensions else x,
    abstract_eval=sharding_rules.typed(
        _rev_abstract_eval, sharding_rules.same,
        sharding_rules.operand_ur), jvp=linear_jvp, batch=_rev_batch,
    lower=lambda ctx, x, dimensions: ctx.op("stablehlo.reverse", [x], x.aval, {
        "dimensions": hlo.i64_array(dimensions)}) if dimensions else x,
    transpose=lambda ct, x, dimensions: [rev(ct, dimensions)],
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32)], {"dimensions": (1,)})])


def rev(operand, dimensions):
    return rev_p.bind(operand, dimensions=tuple(int(d) for d in dimensions))


# --- iota -------------------------------------------------------------------------------

def _iota_abstract_eval(dtype, shape, dimension):
    if not 0 <= dimension < len(shape):
        raise TypeError(f"iota dimension {dimension} out of range for shape {shape}")
    if np.dtype(dtype) == np.bool_:
        raise TypeError("iota does not accept dtype bool; use an integer or floating dtype.")
    return ShapedArray(shape, dtype)


def _iota_impl(dtype, shape, dimension):
    line = np.arange(shape[dimension], dtype=dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(line.reshape(expanded), shape)


iota_p = define_primitive(
    "iota", impl=_iota_impl, abstract_eval=_iota_abstract_eval, jvp=ad.zero_jvp,
    batch=batching.no_operands_rule,
    lower=lambda ctx, dtype, shape, dimension: ctx.op(
        "stablehlo.iota", [], ctx.avals_out[0], {"iota_dimension": hlo.i64_attr(dimension)}),
    samples=lambda: [b.Sample([], {"dtype": np.dtype(np.int32), "shape": (4,), "dimension": 0}),
             b.Sample([], {"dtype": np.dtype(np.float32), "shape": (2, 3),
                           "dimension": 1})])


def iota(dtype, size):
    return broadcasted_iota(dtype, (size,), 0)


# --- symbolic dimensions as values (jax.export's shape polymorphism) --------------------

def _dim_as_value_impl(dim):
    raise NotImplementedError(
        "Evaluation rule for 'dim_as_value' is not implemented. It seems that you are "
        "using shape polymorphism outside jax.export.")


dim_as_value_p = define_primitive(
    "dim_as_value", impl=_dim_as_value_impl,
    abstract_eval=lambda dim: ShapedArray((), dtypes.default_int_dtype(), weak_type=True),
    jvp=ad.zero_jvp, batch=batching.no_operands_rule,
    lower=lambda ctx, dim: ctx.convert(ctx.dim_value(dim), ctx.avals_out[0].dtype),
    samples=no_samples("needs a symbolic dimension, which only jax.export's lowering "
                       "can compute"))


def dim_as_value(d, dtype=None):
    """A dimension size as an integer value (of `dtype`, else the default int): a
    constant for an int; for a symbolic dimension, computed from the arguments' shapes
    when lowered."""
    if not is_symbolic_dim(d):
        return np.asarray(d, dtype or dtypes.default_int_dtype())
    value = dim_as_value_p.bind(dim=d)
    return value if dtype is None else ew.convert_element_type(value, dtype)


@takes_out_sharding
def broadcasted_iota(dtype, shape, dimension):
    return iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype),
                       shape=_static_shape(shape, "iota"), dimension=int(dimension))


@takes_out_sharding
def full(shape, fill_value, dtype=None):
    """An array of `shape` filled with fill_value (a scalar), as one broadcast."""
    shape = _static_shape(shape if isinstance(shape, (tuple, list)) else (shape,), "full")
    aval = get_aval(fill_value)
    if aval.shape:
        raise TypeError(f"full must be called with a scalar fill_value, got shape "
                        f"{aval.shape}")
    dtype = dtypes.canonicalize_dtype(dtype) if dtype is not None else aval.dtype
    value = np.array(fill_value, dtype) if not hasattr(fill_value, "aval") else \
        ew.convert_element_type(fill_value, dtype)
    return broadcast_in_dim(value, shape, ())


def zeros_like_aval(aval):
    """Zeros of `aval`'s shape and dtype, split over the mesh as its type says."""
    typed = aval._sharding
    if typed is not None and (typed.spec.unreduced or typed.spec.reduced):
        typed = type(typed)(typed.mesh, typed.spec.update(unreduced=frozenset(),
                                                          reduced=frozenset()))
    # a weak aval's zeros stay weak, as JAX's (a Python scalar of its dtype's kind)
    zero = np.zeros((), aval.dtype)
    return broadcast_in_dim_p.bind(zero.item() if aval.weak_type else zero, shape=aval.shape,
                                   broadcast_dimensions=(), sharding=typed)
