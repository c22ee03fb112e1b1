"""Collectives over named axes that reduce: psum, pmax, pmin, pmean; and axis_index
(collective_exchange.py has those that move data). A name is
bound by vmap(axis_name=...) (whose batch rules below reduce or gather over the batch) or
by pmap (whose XLA program runs them as cross-replica collectives: the `lower` rules).
Imports core, interpreters, backends.stablehlo, tree_util and the lax families."""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from pyjax._src import config, dtypes, tree_util
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ManualAxisType, ShapedArray, get_aval
from pyjax._src.core.trace import NO_TRANSPOSE, RuleFactory, Tracer, define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters.ad import Zero
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as red
from pyjax._src.lax import structural as st
from pyjax._src import sharding as sharding_mod
from pyjax._src.sharding import PartitionSpec


def axis_names(axis_name, api):
    """The named axes a collective called `api` runs over, as a tuple; NameError (JAX's
    message) when nothing binds one of them."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for name in names:
        batching.axis_env_size(name, api)
    return names


def _unbound_impl(*args, **params):
    """Reached only when no transformation handled the collective."""
    raise batching.unbound_axis_error(batching.axis_names_of(params)[0])


def _scaled(x, n):
    """x * n in x's own dtype and weak type."""
    aval = get_aval(x)
    if aval.weak_type:
        factor = {"f": float, "c": complex}.get(aval.dtype.kind, int)(n)
    else:
        factor = np.array(n, aval.dtype)
    return ew.mul(x, factor)


# --- psum, pmax, pmin -------------------------------------------------------------------

def _reduction_batch(reduce, unmapped):
    """The batch rule of a collective reduction: `reduce` over the vmapped axis named in
    `axes`, `unmapped(x, size)` for operands not batched along it."""
    def make(prim):
        return functools.partial(_reduce_over_axis, prim, reduce, unmapped)
    return RuleFactory(make, declares={"batch_needs_axis": True})


def _reduce_over_axis(prim, reduce, unmapped, axis, args, dims, *, axes,
                      axis_index_groups):
    if axis.name not in axes:   # an enclosing transformation's axis: the batch stays
        return prim.bind(*args, axes=axes, axis_index_groups=axis_index_groups), list(dims)
    no_grouped_vmap(axis_index_groups)
    outs = [unmapped(x, axis.size) if d is None else reduce(x, (d,))
            for x, d in zip(args, dims)]
    rest = tuple(n for n in axes if n != axis.name)
    if rest:
        outs = prim.bind(*outs, axes=rest, axis_index_groups=None)
    return outs, [None] * len(outs)


def no_grouped_vmap(axis_index_groups):
    """vmap runs no collective over subgroups of its axis (as in JAX)."""
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap collectives. "
                                  "Please open a feature request!")


def _psum_jvp(primals, tangents, **params):
    out = psum_p.bind(*primals, **params)
    nonzero = [t for t in tangents if type(t) is not Zero]
    summed = iter(psum_p.bind(*nonzero, **params))
    return out, [t if type(t) is Zero else next(summed) for t in tangents]


def _psum_transpose(cts, *args, **params):
    # As in JAX under vmap and pmap: the transpose of psum is psum.
    linear = [ad.is_undefined_primal(a) for a in args]
    cts = [ad.instantiate_zeros(ct) for ct, lin in zip(cts, linear) if lin]
    summed = iter(psum_p.bind(*cts, **params))
    return [next(summed) if lin else None for lin in linear]


def _chooser_jvp(prim):
    """The tangent of the members holding the extreme, averaged over ties."""
    def jvp(primals, tangents, **params):
        outs = prim.bind(*primals, **params)
        tangent_outs = []
        for x, t, out in zip(primals, tangents, outs):
            if type(t) is Zero:
                tangent_outs.append(Zero(ad.tangent_aval(get_aval(out))))
                continue
            wins = ew.convert_element_type(ew.eq(x, out), get_aval(t).dtype)
            # (apart: the count is primal work, not tangent)
            count = psum(wins, params["axes"], axis_index_groups=params["axis_index_groups"])
            total = psum(ew.mul(t, wins), params["axes"],
                         axis_index_groups=params["axis_index_groups"])
            tangent_outs.append(ew.div(total, count))
        return outs, tangent_outs
    return jvp


def _reduced_avals(*avals, axes, axis_index_groups):
    """A reduction's results agree along the reduced axes (shard_map's vma types)."""
    return [a.update(mat=a.mat.update(varying=[n for n in a.mat.varying_order if n not in axes]))
            if a.vma else a for a in avals]


# --- lowerings: cross-replica collectives over the replicas of the pmap being compiled ---

def _all_reduce_lowering(op_name):
    def body(c, a, b):
        if op_name == "stablehlo.add":
            return c.binary(op_name, a, b)
        return hlo.max_min_body(c, a, b, op_name)

    def lower(ctx, *xs, axes, axis_index_groups):
        outs = []
        for x in xs:
            if op_name != "stablehlo.add" and dtypes.is_complex(x.aval.dtype):
                outs.append(_gathered_max_min(ctx, x, axes, axis_index_groups, op_name))
                continue
            scalar = ShapedArray((), x.aval.dtype)
            outs.append(ctx.op("stablehlo.all_reduce", [x], x.aval.strip_weak_type(),
                               ctx.module.collective_attrs(axes,
                                                           index_groups=axis_index_groups),
                               regions=[ctx.region([scalar, scalar], body)]))
        return outs
    lower.__name__ = f"lower_all_reduce_{op_name.split('.')[-1]}"
    return lower


def _gathered_max_min(ctx, x, axes, axis_index_groups, op_name):
    """Complex pmax/pmin (XLA's all_reduce takes no complex ordering): gather the group's
    values along a new dimension, then reduce it locally."""
    if axis_index_groups is not None and len({len(g) for g in axis_index_groups}) > 1:
        raise hlo.LoweringError("complex pmax/pmin over axis_index_groups of different "
                                "sizes is not supported.")
    size = len(axis_index_groups[0]) if axis_index_groups is not None else \
        int(np.prod([ctx.module.axis_position(name)[1] for name in axes]))
    slab = ctx.reshape(x, (1,) + x.aval.shape)
    gathered = ctx.op("stablehlo.all_gather", [slab],
                      x.aval.update(shape=(size,) + x.aval.shape, weak_type=False),
                      {"all_gather_dim": hlo.i64_attr(0),
                       **ctx.module.collective_attrs(axes, index_groups=axis_index_groups)})
    return hlo.reduce(ctx, gathered, (0,), op_name)


# Collectives' impl needs a binding transformation: they have no eager samples.
psum_p = define_primitive("psum", multiple_results=True, impl=_unbound_impl,
                          abstract_eval=_reduced_avals, jvp=_psum_jvp,
                          transpose=_psum_transpose,
                          batch=_reduction_batch(red.reduce_sum, _scaled),
                          lower=_all_reduce_lowering("stablehlo.add"), is_collective=True)
pmax_p = define_primitive("pmax", multiple_results=True, impl=_unbound_impl,
                          abstract_eval=_reduced_avals, jvp=RuleFactory(_chooser_jvp),
                          transpose=NO_TRANSPOSE,
                          batch=_reduction_batch(red.reduce_max, lambda x, n: x),
                          lower=_all_reduce_lowering("stablehlo.maximum"), is_collective=True)
pmin_p = define_primitive("pmin", multiple_results=True, impl=_unbound_impl,
                          abstract_eval=_reduced_avals, jvp=RuleFactory(_chooser_jvp),
                          transpose=NO_TRANSPOSE,
                          batch=_reduction_batch(red.reduce_min, lambda x, n: x),
                          lower=_all_reduce_lowering("stablehlo.minimum"), is_collective=True)


def _reduce_leaves(prim, x, axis_name, axis_index_groups):
    names = axis_names(axis_name, prim.name)
    if axis_index_groups is not None and len(names) != 1:
        raise NotImplementedError(f"{prim.name} with axis_index_groups over several axes "
                                  f"at once ({names}) is not supported; use one axis name.")
    groups = index_groups(axis_index_groups, names, prim.name, same_sizes=False)
    leaves, tree = tree_util.tree_flatten(x)
    if not leaves:
        return x
    leaves = [vary_along(ew.convert_element_type(v, np.int32)
                         if get_aval(v).dtype == np.bool_ else v, names) for v in leaves]
    return tree_util.tree_unflatten(
        tree, prim.bind(*leaves, axes=names, axis_index_groups=groups))


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of x (a pytree) over the members of the named axis (or axes); every member
    gets the total. Inside vmap the members are the batch elements. With
    axis_index_groups (lists of indices along the axis, each index in one list), the sum
    is over the member's own group. Inside a shard_map body typed with check_vma it is
    psum_invariant (as JAX's): a value varying along the axes becomes invariant."""
    typed = sharding_mod.vma_axes()
    if typed and axis_index_groups is None:
        names = axis_names(axis_name, "psum")
        if any(n in typed for n in names):
            return tree_util.tree_map(lambda v: _typed_psum(v, names), x)
    return _reduce_leaves(psum_p, x, axis_name, axis_index_groups)


def _typed_psum(v, names):
    """psum of one array in a typed body: partial sums add up into a value no longer
    unreduced (unreduced_psum); others are cast to vary first (psum_invariant)."""
    if get_aval(v).dtype == np.bool_:
        v = ew.convert_element_type(v, np.int32)
    if state_along(get_aval(v), names, "jax.lax.psum") == "unreduced":
        return unreduced_psum_p.bind(v, axes=names)
    return psum_invariant_p.bind(vary_along(v, names), axes=names)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of x (a pytree) over the members of the named axis (or axes)."""
    return _reduce_leaves(pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of x (a pytree) over the members of the named axis (or axes)."""
    return _reduce_leaves(pmin_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of x (a pytree) over the members of the named axis (or axes); integer
    inputs give floats, as x / n does in jnp."""
    n = psum(1, axis_name, axis_index_groups=axis_index_groups)
    # psum, not psum_p: in a check_vma body the sum must be psum_invariant, whose
    # transpose does not sum the cotangent again (psum_p's would: N times the gradient)
    summed = psum(x, axis_name, axis_index_groups=axis_index_groups)

    def mean(v):
        dtype = get_aval(v).dtype
        if not dtypes.is_inexact(dtype):
            dtype = dtypes.default_float_dtype()
            v = ew.convert_element_type(v, dtype)
        return ew.div(v, ew.convert_element_type(n, dtype))
    return tree_util.tree_map(mean, summed)


def index_groups(axis_index_groups, names, what, same_sizes=True):
    """axis_index_groups as a tuple of tuples of ints (None stays None), checked as JAX
    does: every member of the named axes (numbered with the first name outermost) in
    exactly one group and, where `same_sizes`, groups of one size (the collective's
    result shape depends on it)."""
    if axis_index_groups is None:
        return None
    try:
        groups = tuple(tuple(operator.index(i) for i in g) for g in axis_index_groups)
    except TypeError:
        raise TypeError(f"{what}: axis_index_groups must be a list of lists of integer "
                        f"indices, got {axis_index_groups!r}.") from None
    size = math.prod(batching.axis_env_size(n, what) for n in names)
    if same_sizes and len({len(g) for g in groups}) > 1:
        raise ValueError(f"{what}: axis_index_groups must all be the same size, got "
                         f"{[list(g) for g in groups]}.")
    if sorted(i for g in groups for i in g) != list(range(size)):
        raise ValueError(f"{what}: axis_index_groups must cover all indices exactly once "
                         f"(0..{size - 1} over {names}), got {[list(g) for g in groups]}.")
    return groups


# --- axis_index -------------------------------------------------------------------------

def _axis_index_batch(axis, args, dims, *, axis_name):
    if axis_name != axis.name:
        return axis_index_p.bind(axis_name=axis_name), None
    return st.iota(np.int32, axis.size), 0


def _axis_index_lower(ctx, *, axis_name):
    mesh, manual = ctx.module.mesh, ctx.module.manual_axes
    if mesh is not None and manual and len(manual) < len(mesh.axis_names):
        # Inside a shard_map whose other axes stay automatic, partition ids are not the
        # device's own: read it where every axis is manual (as JAX does).
        rest = [n for n in mesh.axis_names if n not in manual]
        index = ShapedArray((), np.int32)
        return ctx.manual_computation(
            rest, [], [], [], [index], [PartitionSpec()],
            lambda inner: [_axis_index_lower(inner, axis_name=axis_name)])[0]
    stride, size = ctx.module.axis_position(axis_name)
    # Replicas number a pmap's members; partitions a shard_map's (a partitioned module).
    partitioned = ctx.module.mesh is not None
    replica = ctx.op("stablehlo.partition_id" if partitioned else "stablehlo.replica_id",
                     [], ShapedArray((), np.uint32))
    index = ctx.convert(replica, np.int32)
    if stride != 1:
        index = ctx.binary("stablehlo.divide", index, ctx.full(stride, (), np.int32))
    total = ctx.module.mesh.size if partitioned else ctx.module.num_replicas
    if size * stride != total:
        index = ctx.binary("stablehlo.remainder", index, ctx.full(size, (), np.int32))
    return index


def _axis_index_abstract_eval(*, axis_name):
    """Inside shard_map (check_vma) a device's index varies along its manual axis."""
    if axis_name in sharding_mod.vma_axes():
        return ShapedArray((), np.int32, manual_axis_type=ManualAxisType(varying=(axis_name,)))
    return ShapedArray((), np.int32)


axis_index_p = define_primitive(
    "axis_index", impl=_unbound_impl,
    abstract_eval=_axis_index_abstract_eval, jvp=ad.zero_jvp,
    transpose=NO_TRANSPOSE, batch=_axis_index_batch, lower=_axis_index_lower,
    is_collective=True, batch_needs_axis=True)


def axis_index(axis_name):
    """This member's position (int32) along the named axis; for a tuple of axes, its
    position in their product, the first axis outermost (as JAX numbers it)."""
    names = axis_names(axis_name, "axis_index")
    index = None
    for name in names:
        position = axis_index_p.bind(axis_name=name)
        index = position if index is None else ew.add(
            ew.mul(index, np.int32(batching.axis_env_size(name))), position)
    return index if index is not None else np.int32(0)


collective_primitives = (psum_p, pmax_p, pmin_p, axis_index_p)


# --- psum_invariant: the psum of shard_map bodies typed with check_vma -------------------

def _psum_invariant_abstract_eval(aval, *, axes):
    if not set(axes) & aval.vma:
        raise ValueError(
            "psum is a variant->invariant collective. This means that the axis names "
            "mentioned in `axes` passed to `psum` must be present in "
            f"`jax.typeof(inp).mat.varying`. Got axes={axes} and "
            f"jax.typeof(inp).mat.varying={aval.vma}")
    return aval.update(mat=aval.mat.update(
        varying=[n for n in aval.mat.varying_order if n not in axes]))


def _psum_invariant_batch(axis, args, dims, *, axes):
    (x,), (d,) = args, dims
    if axis.name not in axes:   # an enclosing transformation's axis: the batch stays
        return psum_invariant_p.bind(x, axes=axes), d
    out = _scaled(x, axis.size) if d is None else red.reduce_sum(x, (d,))
    rest = tuple(n for n in axes if n != axis.name)
    return (psum_invariant_p.bind(out, axes=rest) if rest else out), None


_lower_psum = _all_reduce_lowering("stablehlo.add")

# Typed sums transpose into typed casts and back (as JAX's): the cotangent of a value
# made invariant is invariant, and goes back to every device that added its share.
psum_invariant_p = define_primitive(
    "psum_invariant", impl=_unbound_impl, abstract_eval=_psum_invariant_abstract_eval,
    jvp=ad.linear_jvp,
    transpose=lambda ct, x, *, axes: [pvary_p.bind(ad.instantiate_zeros(ct), axes=axes)],
    batch=_psum_invariant_batch, batch_needs_axis=True,
    lower=lambda ctx, x, *, axes: _lower_psum(ctx, x, axes=axes, axis_index_groups=None)[0],
    is_collective=True)


# --- pvary: a value typed as varying along more manual axes ------------------------------

def _pvary_abstract_eval(aval, *, axes):
    if set(axes) & aval.vma:
        raise ValueError(
            "pvary is a invariant->variant collective. This means that the axis names "
            "mentioned in `axes` passed to `pvary` must not be present in "
            f"`jax.typeof(inp).mat.varying`. Got axes={axes} and jax.typeof(inp)={aval}")
    return aval.update(mat=aval.mat.update(
        varying=sharding_mod.order_wrt_mesh(aval.vma | set(axes))))


def _cast_batch(prim):
    """A cast of the type only, under the vmap of one of its axes: every member already
    holds its own value."""
    def batch(axis, args, dims, *, axes):
        (x,), (d,) = args, dims
        rest = tuple(n for n in axes if n != axis.name)
        return (prim.bind(x, axes=rest) if rest else x), d
    return batch


# A cast of the type only: every device keeps its value (also where the NumPy executor
# runs a body's blocks under vmap, which leaves a cast of an unbatched value in place).
# Its cotangent varies along the axes: the devices' shares add up (psum_invariant).
pvary_p = define_primitive(
    "pvary", impl=lambda x, *, axes: x, abstract_eval=_pvary_abstract_eval, jvp=ad.linear_jvp,
    transpose=lambda ct, x, *, axes: [
        psum_invariant_p.bind(ad.instantiate_zeros(ct), axes=axes)],
    batch=RuleFactory(_cast_batch), batch_needs_axis=True,
    lower=lambda ctx, x, *, axes: hlo.Value(x.name, ctx.avals_out[0]),
    is_collective=True)


def vary_along(x, names):
    """x (one array) cast to vary along those of the manual axes `names` it does not
    vary along yet, inside a shard_map body typed with check_vma (as JAX does before a
    collective); x itself elsewhere."""
    typed = sharding_mod.vma_axes()
    missing = [n for n in names if n in typed and n not in get_aval(x).vma]
    return pvary_p.bind(x, axes=sharding_mod.order_wrt_mesh(missing)) if missing else x




# --- partial sums and reduced values in shard_map bodies typed with check_vma ------------
# Along a manual axis a value varies from device to device, is unreduced (each device
# holds a partial sum of it), reduced (the whole value, equal everywhere, whose
# cotangents are partial sums) or invarying (equal everywhere). Casts between these
# states change types only; unreduced_psum adds partial sums up (as JAX's).

def state_along(aval, axes, name):
    """The state of `aval` along the manual axes `axes`: one of "varying",
    "unreduced", "reduced", "invarying" (JAX's _get_from); ValueError if they differ."""
    mat = aval.mat
    found = {"varying" if a in mat.varying else "unreduced" if a in mat.unreduced
             else "reduced" if a in mat.reduced else "invarying" for a in axes}
    if len(found) > 1:
        raise ValueError(f"{name} can only accept axis_name which corresponds to one of "
                         "varying, unreduced, reduced or invarying state of the input. Got "
                         f"input type: {aval}, axes: {axes} and input state: {found}")
    return found.pop()


def moved_along(name, source, target):
    """The abstract eval of a collective taking values from state `source` to `target`
    along its axes."""
    def abstract_eval(aval, *, axes):
        if state_along(aval, axes, name) != source:
            raise ValueError(f"{name} is a {source.capitalize()}->{target.capitalize()} "
                             f"collective: the axes {axes} passed to it must be {source} "
                             f"in the input's type. Got jax.typeof(x)={aval}")
        fields = {"varying": aval.mat.varying, "unreduced": aval.mat.unreduced,
                  "reduced": aval.mat.reduced, "invarying": frozenset()}
        fields[source] = fields[source] - set(axes)
        fields[target] = fields[target] | set(axes)
        return aval.update(mat=ManualAxisType(
            varying=sharding_mod.order_wrt_mesh(fields["varying"]),
            unreduced=fields["unreduced"], reduced=fields["reduced"]))
    return abstract_eval


def _define_cast(name, source, target, transpose):
    """A cast between states: the value is unchanged on every device."""
    return define_primitive(
        name, impl=lambda x, *, axes: x, abstract_eval=moved_along(name, source, target),
        jvp=ad.linear_jvp, transpose=transpose, batch=RuleFactory(_cast_batch),
        batch_needs_axis=True, lower=lambda ctx, x, *, axes: hlo.Value(x.name, ctx.avals_out[0]),
        is_collective=True)


# The cotangent of a reduced value is a partial sum, which unreduced_psum adds up.
preduced_p = _define_cast("preduced", "invarying", "reduced", lambda ct, x, *, axes: [
    unreduced_psum_p.bind(ad.instantiate_zeros(ct), axes=axes)])
vary_unreduced_cast_p = _define_cast(
    "vary_unreduced_cast", "varying", "unreduced",
    lambda ct, x, *, axes: [reduced_vary_cast_p.bind(ad.instantiate_zeros(ct), axes=axes)])
reduced_vary_cast_p = _define_cast(
    "reduced_vary_cast", "reduced", "varying",
    lambda ct, x, *, axes: [vary_unreduced_cast_p.bind(ad.instantiate_zeros(ct), axes=axes)])


def _unreduced_psum_batch(axis, args, dims, *, axes):
    (x,), (d,) = args, dims
    if axis.name not in axes:
        return unreduced_psum_p.bind(x, axes=axes), d
    out = _scaled(x, axis.size) if d is None else red.reduce_sum(x, (d,))
    rest = tuple(n for n in axes if n != axis.name)
    return (unreduced_psum_p.bind(out, axes=rest) if rest else out), None


unreduced_psum_p = define_primitive(
    "unreduced_psum", impl=_unbound_impl,
    abstract_eval=moved_along("unreduced_psum", "unreduced", "invarying"),
    jvp=ad.linear_jvp,
    transpose=lambda ct, x, *, axes: [preduced_p.bind(ad.instantiate_zeros(ct), axes=axes)],
    batch=_unreduced_psum_batch, batch_needs_axis=True,
    lower=lambda ctx, x, *, axes: _lower_psum(ctx, x, axes=axes, axis_index_groups=None)[0],
    is_collective=True)


_PCAST_TARGETS = ("varying", "reduced", "unreduced")
_PCASTS = {("invarying", "varying"): pvary_p, ("invarying", "reduced"): preduced_p,
           ("varying", "unreduced"): vary_unreduced_cast_p,
           ("reduced", "varying"): reduced_vary_cast_p}


def pcast(x, axis_name, *, to: str):
    """Casts x (a pytree) inside shard_map to vary along the manual axes `axis_name`
    (to="varying": with check_vma=True its type then records them, a pvary), to be the
    partial sums of a value over them (to="unreduced": each device's block is its
    partial sum, reduced where a shard_map out_spec or psum says), or to a value reduced
    over them (to="reduced"). The blocks are unchanged by any of these casts."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    if not axis_name:
        return x
    if to not in _PCAST_TARGETS:
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                         f"{set(_PCAST_TARGETS)}")
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    mesh = sharding_mod.get_abstract_mesh()
    if config.remove_size_one_mesh_axis_from_type.value and not mesh.empty:
        names = tuple(n for n in names if n not in mesh.shape or mesh.shape[n] != 1)
    if not names:
        return x
    if any(not isinstance(v, Tracer) for v in tree_util.tree_leaves(x)) and not all(
            batching.is_bound(n) for n in names):
        raise ValueError("pvary should be called under jax.shard_map.")
    axis_names(names, "pvary")
    if not all(n in sharding_mod.vma_axes() for n in names):
        return x   # check_vma=False, or vmap's axes: types record no variation
    names = sharding_mod.order_wrt_mesh(names)

    def cast(v):
        source = state_along(get_aval(v), names, "jax.lax.pcast")
        prim = _PCASTS.get((source, to))
        if prim is None:
            raise ValueError(f"Unsupported pcast from={source}, to={to!r}")
        return prim.bind(v, axes=names)
    return tree_util.tree_map(cast, x)
