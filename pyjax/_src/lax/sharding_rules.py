"""Sharding in types: how each primitive's output sharding follows from its operands'
when arrays are split over a mesh's Explicit axes (JAX's sharding rules). A rule gives
the output's PartitionSpec entries; `typed` joins it to a primitive's shape rule, and
runs it only when an operand carries a sharding, so unsharded tracing pays one check.
Imports core, sharding and errors."""
from __future__ import annotations

import math

from pyjax._src import sharding as sharding_mod
from pyjax._src.core.trace import RuleFactory
from pyjax._src.errors import ShardingTypeError


def _mesh_of(avals):
    """The abstract mesh the sharded operands share (ShardingTypeError if they differ;
    None when they lie on two meshes of Auto axes only, whose results JAX leaves
    untyped).
    An operand split nowhere (e.g. made under a context mesh whose axis types another
    operand's cast changed) joins the mesh of a split one when it has its shape; so does
    a scalar (one value everywhere) join that of an array."""
    typed = [a._sharding for a in avals if getattr(a, "_sharding", None) is not None]
    split = [s for s in typed if _is_split(s)]
    arrays = [a._sharding for a in avals
              if getattr(a, "_sharding", None) is not None and a.shape]
    mesh = None
    for s in split or arrays or typed:
        if mesh is not None and s.mesh != mesh:
            if not mesh.explicit_axes and not s.mesh.explicit_axes:
                return None   # as JAX: operands on two all-Auto meshes give no mesh
            refuse_closed_over_explicit(avals)
            raise ShardingTypeError(f"Mesh for all inputs should be equal. Got one "
                                    f"mesh: {mesh} and another mesh: {s.mesh}")
        mesh = s.mesh
    for s in typed:
        if s.mesh.shape_tuple != mesh.shape_tuple:
            raise ShardingTypeError(f"Mesh for all inputs should be equal. Got one "
                                    f"mesh: {mesh} and another mesh: {s.mesh}")
    return mesh


def refuse_closed_over_explicit(avals):
    """In a shard_map body over Manual and Auto axes, an operand typed over another mesh
    with Explicit axes was closed over from outside (JAX's NotImplementedError)."""
    here = sharding_mod.get_abstract_mesh()
    if not here.manual_axes or here.explicit_axes:
        return
    for a in avals:
        s = getattr(a, "_sharding", None)
        if s is not None and s.mesh != here and s.mesh.explicit_axes:
            raise NotImplementedError(
                "Closing over inputs to shard_map where the input is sharded on `Explicit` "
                "axes is not implemented. As a workaround, please pass those inputs as an "
                f"argument to shard_map. Got input with shape {a.str_short(True)}")


def _is_split(sharding):
    """Whether a type's sharding splits its value (or leaves it partial or reduced)."""
    return sharding is not None and (any(p is not None for p in sharding.spec.partitions)
                                     or sharding.spec.unreduced or sharding.spec.reduced)


def typed(shape_rule, sharding_rule, ur_rule=None, checks_meshes=True):
    """An abstract_eval rule: `shape_rule`'s aval, carrying the sharding that
    `sharding_rule(out_aval, *avals, **params)` gives (a tuple of spec entries, or a
    NamedSharding given by an out_sharding parameter) when an operand is sharded.
    `ur_rule(*avals, **params)` gives the result's (unreduced, reduced) mesh axes;
    without one, unreduced or reduced operands are refused. For a primitive with
    several results the rule gives one sharding per result (and no ur_rule). Operands
    must be typed over the context mesh and one another's (JAX's checks), but without
    `checks_meshes`: then the rule picks an operand's type (a sharding, or None)."""
    return RuleFactory(lambda prim: _typed_abstract_eval(
        prim.name if checks_meshes else None, shape_rule, sharding_rule, ur_rule))


def _typed_abstract_eval(checked_name, shape_rule, sharding_rule, ur_rule):
    def abstract_eval(*avals, **params):
        out = shape_rule(*avals, **params)
        sharded = _any_sharded(avals)
        if sharded and checked_name is None:
            found = sharding_rule(out, *avals, **params)
            if found is not None and any(getu(a) or getr(a) for a in avals):
                found = _with_reductions(found, *ur_rule(*avals, **params))
            return out if found is None else out.update(sharding=found)
        if sharded:
            _check_context_mesh(avals, checked_name)
        if isinstance(out, (list, tuple)):
            return _typed_results(out, avals, sharding_rule(out, *avals, **params)
                                  if sharded else None)
        asked = params.get("out_sharding") or params.get("sharding")
        if asked is not None and not asked.mesh.explicit_axes and not asked.mesh.empty:
            # over a mesh of Auto axes only: typed over it, the split left to XLA
            _refuse(asked, avals)
            return out.update(sharding=sharding_mod.type_sharding(asked, len(out.shape)))
        if asked is not None and asked.mesh.explicit_axes:
            if ur_rule is None:
                _refuse(asked, avals)
                return out.update(sharding=asked)
            unreduced, reduced = ur_rule(*avals, **params)
            return out.update(sharding=_with_reductions(asked, unreduced, reduced))
        mesh = _mesh_of(avals) if sharded else None
        if mesh is None:   # no sharded operand: typed by the context mesh, if one is set
            context = sharding_mod.context_type_sharding(len(out.shape))
            return out if context is None else out.update(sharding=context)
        found = sharding_rule(out, *avals, **params)
        if not isinstance(found, sharding_mod.NamedSharding):
            found = sharding_mod.NamedSharding(mesh, sharding_mod.PartitionSpec(*found))
        if ur_rule is None:
            _refuse(None, avals)
        elif any(getu(a) or getr(a) for a in avals):
            found = _with_reductions(found, *ur_rule(*avals, **params))
        return out.update(sharding=found)
    return abstract_eval


def _check_context_mesh(avals, name):
    """JAX's error for an operand typed over Explicit axes of another mesh than the
    context's. (JAX also refuses one typed over a mesh of Auto axes only under another
    context mesh; pyjax lets it be, as it re-traces such values outside the auto_axes
    they came from, e.g. when scan's loop is built. Shard_map bodies type their values
    themselves.)"""
    context = sharding_mod.get_abstract_mesh()
    if context.empty or sharding_mod.current_manual() is not None:
        return
    for a in avals:
        s = a._sharding
        if s is None or not s.mesh.explicit_axes or s.mesh == context:
            continue
        raise ValueError(f"For primitive {name}, context mesh {context} should match the "
                         f"aval mesh {s.mesh} for shape {a.str_short(True)}.")


def _any_sharded(avals):
    return any(getattr(a, "_sharding", None) is not None for a in avals)


def _typed_results(outs, avals, found):
    """The results `outs` of a multiple-results primitive typed as `found` (one spec
    tuple or NamedSharding per result; None: no operand is sharded)."""
    if found is None:
        return outs
    _refuse(None, avals)
    mesh = _mesh_of(avals)
    if mesh is None:
        return outs
    return type(outs)(
        o.update(sharding=f if isinstance(f, sharding_mod.NamedSharding)
                 else sharding_mod.NamedSharding(mesh, sharding_mod.PartitionSpec(*f)))
        for o, f in zip(outs, found))


def _with_reductions(sharding, unreduced, reduced):
    spec = sharding.spec
    if spec.unreduced == unreduced and spec.reduced == reduced:
        return sharding
    return sharding_mod.NamedSharding(
        sharding.mesh, spec.update(unreduced=unreduced, reduced=reduced))


def _refuse(asked, avals):
    """JAX's error for an operation with no rule for unreduced/reduced values."""
    if any(getu(a) or getr(a) for a in avals) or (
            asked is not None and (asked.spec.unreduced or asked.spec.reduced)):
        raise NotImplementedError(
            "unreduced/reduced rule for this operation is not implemented. Please file "
            "an issue at https://github.com/jax-ml/jax/issues")


def getu(aval):
    """The mesh axes over which aval's value is a partial sum (its type's unreduced)."""
    s = getattr(aval, "_sharding", None)
    return s.spec.unreduced if s is not None else frozenset()


def getr(aval):
    """The mesh axes over which aval's value is reduced (its type's reduced)."""
    s = getattr(aval, "_sharding", None)
    return s.spec.reduced if s is not None else frozenset()


def _replicated_axes(aval):
    """The mesh axes aval is replicated over; none for a scalar (one value everywhere is
    reduced over any axis: JAX casts such scalars to reduced)."""
    s = aval._sharding
    if s is None or not aval.shape:
        return frozenset()
    split = {n for e in s.spec.partitions for n in axes_of(e)}
    return frozenset(s.mesh.axis_names) - split - s.spec.unreduced - s.spec.reduced


def nary_reduced(*avals):
    """JAX's default_nary_reduced_rule: the operands' common reduced axes, which no
    other operand may be replicated or split over."""
    found = {r for a in avals if (r := getr(a))}
    if len(found) > 1:
        raise ShardingTypeError(f"All inputs should be reduced across the same mesh axes. "
                                f"Got specs: {found}")
    reduced = found.pop() if found else frozenset()
    if reduced:
        for a in avals:
            if _replicated_axes(a) & reduced:
                raise ShardingTypeError(
                    "Inputs cannot be replicated on the same axes that another input is "
                    f"reduced on. Got input type: {a} and reduced spec: {reduced}")
            if {n for e in entries(a) for n in axes_of(e)} & reduced:
                raise ShardingTypeError(
                    "Inputs cannot be sharded/varying on the same axes that another "
                    "input is reduced on. Reshard the input which is reduced to be "
                    "sharded on the mesh axes it is reduced on via "
                    f"`jax.sharding.reshard(inp, jax.P(...))`. Got input type: {a} and "
                    f"reduced spec: {reduced}")
    return reduced


def nary_ur(name):
    """Elementwise ops: reduced operands give a reduced result; partial sums cannot go
    through a nonlinear op."""

    def rule(*avals, **params):
        reduced = nary_reduced(*avals)
        if any(getu(a) for a in avals):
            raise NotImplementedError(f"unreduced rule for {name} is not implemented. "
                                      "Please file an issue at "
                                      "https://github.com/jax-ml/jax/issues")
        return frozenset(), reduced
    return rule


def add_ur(x, y, **params):
    """Partial sums add up when both are partial over the same axes."""
    reduced = nary_reduced(x, y)
    xu, yu = getu(x), getu(y)
    if xu and yu and xu != yu:
        raise ShardingTypeError("lhs and rhs to `add` must be unreduced along the same "
                                f"mesh axes. Got lhs={xu}, rhs={yu}")
    if bool(xu) != bool(yu):
        lhs, rhs = ("lhs", "rhs") if xu else ("rhs", "lhs")
        raise ShardingTypeError(
            f"{lhs} is unreduced while {rhs} is not. `add` operation does not allow this "
            "because there will be implicit communication. Please reduce "
            f"{lhs} via `reshard` before calling `add`.")
    return xu, reduced


def mul_ur(x, y, **params):
    """A partial sum times a value reduced (equal on every device) over the same axes
    is a partial sum."""
    reduced = nary_reduced(x, y)
    xu, yu = getu(x), getu(y)
    if xu and yu:
        raise ShardingTypeError("lhs and rhs to `mul` cannot be unreduced since mul is "
                                f"bilinear. Got lhs={xu}, rhs={yu}")
    if xu and xu != _reduced_or_scalar(y, xu):
        raise ShardingTypeError("RHS should be reduced along the same axes LHS is "
                                f"unreduced on. Got lhs={x} and rhs={y}")
    if yu and yu != _reduced_or_scalar(x, yu):
        raise ShardingTypeError("LHS should be reduced along the same axes RHS is "
                                f"unreduced on. Got lhs={x} and rhs={y}")
    unreduced = xu or yu
    return unreduced, frozenset() if unreduced else reduced


def _reduced_or_scalar(aval, axes):
    """aval's reduced axes; `axes` for a replicated scalar (the same value on every
    device, which JAX casts to reduced where it meets a partial sum)."""
    if not aval.shape and not getu(aval) and all(e is None for e in entries(aval)):
        return getr(aval) or axes
    return getr(aval)


def operand_ur(x, *rest, **params):
    """Moving or casting elements keeps partial sums partial and reduced values
    reduced (the first operand's)."""
    return getu(x), getr(x)


def same_ur(*avals, **params):
    """Joining operands (concatenate): all alike unreduced and alike reduced."""
    for get, what in ((getu, "unreduced"), (getr, "reduced")):
        found = {s for a in avals if (s := get(a))}
        if len(found) > 1:
            raise ShardingTypeError(f"All operands should be {what} along the same mesh "
                                    f"axes. Got {what} specs: {found}")
    return (next((u for a in avals if (u := getu(a))), frozenset()),
            next((r for a in avals if (r := getr(a))), frozenset()))


def select_ur(which, *cases, **params):
    """select_n picks among cases alike unreduced/reduced."""
    return same_ur(*cases)


def reshape_ur(x, *, sharding=None, **params):
    """A reshape keeps partial sums and reduced values; an out_sharding must agree."""
    for get, what in ((getu, "unreduced"), (getr, "reduced")):
        if get(x) and sharding is not None and get(x) != getattr(sharding.spec, what):
            raise ValueError(f"out_sharding passed to reshape must be {what} over the same "
                             f"mesh axes as operand. Got out_sharding: {sharding.spec} and "
                             f"operand type: {x.str_short(True)}")
        if not get(x) and sharding is not None and getattr(sharding.spec, what):
            raise ValueError(f"out_sharding passed to `reshape` cannot contain {what} "
                             f"axes. Got {sharding}")
    return getu(x), getr(x)


def dot_general_ur(lhs, rhs, *, dimension_numbers, out_sharding=None, **params):
    """A contraction over split dimensions leaves partial sums when out_sharding asks
    for them unreduced over exactly those mesh axes."""
    if getu(lhs) or getu(rhs):
        raise ShardingTypeError(f"lhs or rhs passed to dot_general cannot be unreduced. "
                                f"Got lhs={lhs} and rhs={rhs}")
    if out_sharding is None or not out_sharding.spec.unreduced:
        return frozenset(), frozenset()
    (lc, rc), _ = dimension_numbers
    lspec = tuple(entries(lhs)[i] for i in lc)
    rspec = tuple(entries(rhs)[i] for i in rc)
    if lspec != rspec:
        raise ShardingTypeError(
            "lhs and rhs contracting dims should be sharded identically when out_sharding "
            "provided to dot_general mentions unreduced_axes. Got "
            f"lhs_contracting_spec={lspec}, rhs_contracting_spec={rspec}")
    if out_sharding.spec.unreduced != {n for e in lspec for n in axes_of(e)}:
        raise ShardingTypeError(
            "out_sharding's unreduced axes should be equal to the contracting specs. Got "
            f"unreduced axes={out_sharding.spec.unreduced} and contracting spec={lspec}")
    return out_sharding.spec.unreduced, frozenset()


def reduce_sum_ur(x, *, axes, out_sharding=None, **params):
    """Summing over split dimensions may leave partial sums over their mesh axes."""
    if out_sharding is None or not out_sharding.spec.unreduced:
        return getu(x), getr(x)
    parts = entries(x)
    summed = {n for i in axes for n in axes_of(parts[i])} | getu(x)
    if not out_sharding.spec.unreduced <= summed:
        raise ShardingTypeError(
            "out_sharding's unreduced axes should be in operand's specs that were summed "
            f"over. Got operand={x}, axes={tuple(axes)}, "
            f"unreduced_spec={out_sharding.spec.unreduced}")
    return out_sharding.spec.unreduced, getr(x)


def with_entries(sharding, parts, unreduced=frozenset()):
    """`sharding` (a type's) with the spec entries `parts` (and `unreduced` axes)."""
    return sharding_mod.NamedSharding(
        sharding.mesh, sharding_mod.PartitionSpec(*parts, unreduced=unreduced))


def shown_unset(name):
    """A shown_params rule for a primitive bound without its sharding param `name` while
    it is None: the printer shows `name=None`, as JAX, which always binds it, prints it."""
    return lambda params: dict(sorted({name: None, **params}.items()))


def entries(aval):
    """aval's spec padded to its rank: one entry per dimension (None: not split)."""
    s = aval._sharding
    if s is None:
        return (None,) * len(aval.shape)
    parts = s.spec.partitions
    return tuple(parts) + (None,) * (len(aval.shape) - len(parts))


def axes_of(entry):
    """The mesh axes of one spec entry, as a tuple."""
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def _spec_str(specs):
    return ", ".join(str(tuple(s)) for s in specs)


def same(out, x, *rest, **params):
    """The output is split as the (first) operand: unary elementwise ops, casts."""
    return entries(x)


def elementwise(name):
    """Operands of one shape (rank-0 ones broadcast) are split alike; where one leaves a
    dimension unsplit (or has size 1 there) another's split wins."""

    def rule(out, *avals, **params):
        ranked = [a for a in avals if a.shape]
        if not ranked:
            return ()
        specs = [entries(a) for a in ranked]
        result = []
        for column in zip(*specs):
            chosen = None
            for entry in column:
                if entry is None:
                    continue
                if chosen is not None and entry != chosen:
                    raise ShardingTypeError(f"{name} got incompatible shardings for "
                                            f"broadcasting: {_spec_str(specs)}.")
                chosen = entry
            result.append(chosen)
        _check_axes_used_once(name, avals, out, result)
        return tuple(result)
    return rule


def _check_axes_used_once(name, operands, out, result):
    """JAX's error for a result whose spec `result` splits two dimensions over one mesh
    axis."""
    used = [n for e in result for n in axes_of(e)]
    if len(used) == len(set(used)):
        return
    shown = ",".join(str(d) if e is None else f"{d}@{e}" if isinstance(e, str)
                     else f"{d}@({','.join(e)})" for d, e in zip(out.shape, result))
    raise ShardingTypeError(
        f"{name} operation with inputs: {', '.join(o.str_short(True) for o in operands)} "
        f"produces an illegally sharded result: {out.str_short(True).split('[')[0]}[{shown}]")


def add_any(out, x, y):
    """A sum of (co)tangents is typed as its first operand, as JAX's add_any (JAX adds
    values of one type, but for meshes of no Explicit axes, e.g. auto_axes'); as the
    second where only that one is split (the first, e.g. a zero pyjax made, is not)."""
    return y._sharding if _is_split(y._sharding) and not _is_split(x._sharding) \
        else x._sharding


def reduction(out, x, *rest, axes, **params):
    """Reduced dimensions leave the spec (their split is summed over)."""
    drop = set(axes)
    return tuple(e for i, e in enumerate(entries(x)) if i not in drop)


def transpose(out, x, *, permutation):
    parts = entries(x)
    return tuple(parts[i] for i in permutation)


def broadcast_in_dim(out, x, *rest, shape, broadcast_dimensions, **params):
    parts = iter(entries(x))
    dims = set(broadcast_dimensions)
    return tuple(next(parts) if i in dims else None for i in range(len(shape)))


def squeeze(out, x, *, dimensions):
    drop = set(dimensions)
    return tuple(e for i, e in enumerate(entries(x)) if i not in drop)


def concatenate(out, *operands, **params):
    """Operands split alike (the concatenated dimension unsplit) keep that split; an
    operand split nowhere (e.g. a block made under the context mesh) joins any."""
    specs = {entries(o) for o in operands if o._sharding is not None}
    if len(specs) > 1:
        specs.discard((None,) * out.ndim)
    if len(specs) > 1:
        raise ShardingTypeError("All operands should have the same sharding. Got "
                                "shardings " + ", ".join(str(o.sharding) for o in operands))
    return specs.pop()


def dot_general(out, lhs, rhs, *, dimension_numbers, **params):
    """Batch dimensions, then lhs's free ones, then rhs's keep their splits; split
    contracting dimensions on both sides are ambiguous (out_sharding says)."""
    (lc, rc), (lb, rb) = dimension_numbers
    lp, rp = entries(lhs), entries(rhs)
    lhs_batch, rhs_batch = tuple(lp[i] for i in lb), tuple(rp[i] for i in rb)
    if lhs_batch != rhs_batch:
        raise ShardingTypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have "
            f"the same sharding, got {lhs_batch} and {rhs_batch}.")
    lhs_contracting_spec = tuple(lp[i] for i in lc)
    rhs_contracting_spec = tuple(rp[i] for i in rc)
    if any(a is not None and b is not None
           for a, b in zip(lhs_contracting_spec, rhs_contracting_spec)):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should "
            "be sharded. Please specify the output sharding via the `out_sharding` "
            f"parameter. Got {lhs_contracting_spec=} and {rhs_contracting_spec=}")
    lhs_free = tuple(e for i, e in enumerate(lp) if i not in set(lc) | set(lb))
    rhs_free = tuple(e for i, e in enumerate(rp) if i not in set(rc) | set(rb))
    result = lhs_batch + lhs_free + rhs_free
    _check_axes_used_once("dot_general", (lhs, rhs), out, result)
    return result


def linalg(name, ranks=(2,)):
    """A linear-algebra primitive over batches of operands whose trailing `ranks`
    dimensions are the matrices (or vectors): every result is split as the operands'
    batch dimensions (alike in all of them), the rest whole (JAX's
    linalg_sharding_rule)."""
    def rule(outs, *avals, **params):
        batch_specs = []
        for i, (rank, aval) in enumerate(zip(ranks, avals)):
            spec = entries(aval)
            if any(e is not None for e in spec[len(spec) - rank:]):
                raise ShardingTypeError(
                    f"Input {i} to {name} must be unsharded on non-batch dimensions, but "
                    f"got {sharding_mod.PartitionSpec(*spec)}.")
            batch_specs.append(spec[:len(spec) - rank])
        batch = batch_specs[0]
        if any(other != batch for other in batch_specs[1:]):
            raise ShardingTypeError(
                f"All inputs to {name} must have the same batch sharding, but got "
                + " and ".join(map(str, batch_specs)) + ".")
        if isinstance(outs, (list, tuple)):
            return [batch + (None,) * (o.ndim - len(batch)) for o in outs]
        return batch + (None,) * (outs.ndim - len(batch))
    return rule


def sliced(name):
    """Slices keep the operand's split where each output dimension still divides over
    its mesh axes."""

    def rule(out, x, *rest, **params):
        parts = entries(x)
        if x._sharding is None or not out.shape or all(d == 1 for d in out.shape):
            return (None,) * len(out.shape)
        mesh = x._sharding.mesh
        for d_in, d_out, e in zip(x.shape, out.shape, parts):
            size = math.prod(mesh.shape[n] for n in axes_of(e))
            if d_in != d_out and e is not None and d_out % size:
                raise ShardingTypeError(
                    f"{name} on sharded dims where out dim ({d_out}) is not divisible by "
                    f"mesh axes ({size}) with spec ({e}) is not implemented. Got input "
                    f"type={x.str_short(True)} and output shape={out.shape}")
        return parts
    return rule


_conv_slice = sliced("conv_general_dilated")


def conv_general_dilated(out, lhs, rhs, *, dimension_numbers, **params):
    """JAX's rule: with rhs whole and lhs's feature dimension unsplit, the result is
    split as lhs, dimension by dimension (as a slice of it); otherwise out_sharding
    must say how."""
    if any(e is not None for e in entries(rhs)) or \
            entries(lhs)[dimension_numbers.lhs_spec[1]] is not None:
        raise ShardingTypeError("Please specify the output sharding via `out_sharding` "
                                "parameter of `conv_general_dilated`")
    return _conv_slice(out, lhs)


def _reshape_error(x, new_sizes):
    raise ShardingTypeError(
        "This reshape is not supported. Please specify the sharding of the output via the "
        "`out_sharding` argument of jax.lax.reshape. Got operand type: "
        f"{x.str_short(True)}, new sizes: {tuple(new_sizes)}")


def _groups(small, big):
    """How the dims of `small` (size-1 dims left out) split into those of `big`: per dim
    of small, its size or the list of big's sizes it splits into (at most one dim
    splits); None when that is not how they relate."""
    small = [s for s in small if s != 1]
    big = [s for s in big if s != 1]
    if len(big) <= len(small):
        return None
    out, j, splits = [], 0, 0
    for d in small:
        if j < len(big) and big[j] == d:
            out.append(d)
            j += 1
            continue
        splits += 1
        group = []
        while j < len(big) and math.prod(group) < d:
            group.append(big[j])
            j += 1
        if math.prod(group) != d or splits > 1:
            return None
        out.append(group)
    return out if j == len(big) else None


def _split_axes(mesh, names, sizes, x, new_sizes):
    """The mesh axes `names` (outermost first) spread over dims of `sizes`, major first."""
    names = iter(names)
    result = []
    for size in sizes:
        dim = []
        while size > 1:
            n = next(names, None)
            if n is None:
                break
            size, rem = divmod(size, mesh.shape[n])
            if rem:
                _reshape_error(x, new_sizes)
            dim.append(n)
        result.append(None if not dim else dim[0] if len(dim) == 1 else tuple(dim))
    if next(names, None) is not None:
        _reshape_error(x, new_sizes)
    return result


def reshape(out, x, *, new_sizes, dimensions, **params):
    """JAX's reshape rule: size-1 dims come and go unsplit; one dim split into several
    gives its mesh axes to the leading ones; several merged into one keep a split only
    of the leading ones. Anything else needs out_sharding."""
    parts = entries(x)
    if all(e is None for e in parts):
        return (None,) * len(new_sizes)
    mesh = x._sharding.mesh
    kept = [e for d, e in zip(x.shape, parts) if d != 1]
    if [d for d in x.shape if d != 1] == [d for d in new_sizes if d != 1]:
        it = iter(kept)
        return tuple(None if n == 1 else next(it) for n in new_sizes)
    if dimensions is not None:
        _reshape_error(x, new_sizes)
    split = _groups(x.shape, new_sizes)
    merged = None if split is not None else _groups(new_sizes, x.shape)
    if split is None and merged is None:
        _reshape_error(x, new_sizes)
    spec = []
    if split is not None:
        for group, e in zip(split, kept):
            if not isinstance(group, list):
                spec.append(e)
            elif e is None:
                spec += [None] * len(group)
            else:
                spec += _split_axes(mesh, axes_of(e), group, x, new_sizes)
    else:
        it = iter(kept)
        for size, group in zip([n for n in new_sizes if n != 1], merged):
            if not isinstance(group, list):
                spec.append(next(it))
                continue
            names = [axes_of(next(it)) for _ in group]
            while names and not names[-1]:
                names.pop()
            if any(not n for n in names):
                _reshape_error(x, new_sizes)
            flat = [n for ns in names for n in ns]
            spec += _split_axes(mesh, flat, [size], x, new_sizes) if flat else [None]
    it = iter(spec)
    return tuple(None if n == 1 else next(it) for n in new_sizes)


def gather_ur(operand, indices, **params):
    """A gathered value is whole on every device that holds it: an operand reduced
    over some mesh axes gives a result that is not; partial sums are refused."""
    if getu(operand) or getu(indices):
        raise NotImplementedError("unreduced rule for gather is not implemented. Please "
                                  "file an issue at https://github.com/jax-ml/jax/issues")
    return frozenset(), frozenset()


def gather(out, operand, indices, *, dimension_numbers, slice_sizes, **params):
    """JAX's gather rule: window dimensions keep the operand's split where the slice is
    full or the dimension unsplit; batch dimensions take the indices' split (operand and
    indices batching dimensions must agree). Where that is ambiguous (JAX raises and
    asks for out_sharding) the result is replicated; an out_sharding reshards it."""
    d = dimension_numbers
    op, ix = entries(operand), list(entries(indices))
    pairs = list(zip(d.operand_batching_dims, d.start_indices_batching_dims))
    unambiguous = (
        all(slice_sizes[i] == operand.shape[i] or op[i] is None for i in d.start_index_map)
        and all(ix[j] == op[i] or op[i] is None or ix[j] is None for i, j in pairs)
        and all(e is None for j, e in enumerate(ix)
                if j not in d.start_indices_batching_dims))
    if not unambiguous:
        return (None,) * len(out.shape)
    for i, j in pairs:
        ix[j] = ix[j] or op[i]
    window = iter(i for i in range(operand.ndim)
                  if i not in d.collapsed_slice_dims and i not in d.operand_batching_dims)
    batch = iter(ix)
    return tuple(op[next(window)] if i in d.offset_dims else next(batch)
                 for i in range(len(out.shape)))


def top_k(outs, x, *, axis=-1, **params):
    """Both results split as the operand, which must not be split along the axis."""
    parts = entries(x)
    if parts[axis] is not None:
        raise ShardingTypeError("The input should be unsharded over the axis along which "
                                f"to compute the top_k values. Got input type={x} and "
                                f"axis={axis % x.ndim}")
    return [parts] * len(outs)


def varying_shape(name):
    """Results split as their (first) operand, each of whose split dimensions still
    divides over its mesh axes (reduce_window and other windowed results)."""
    rule = sliced(name)

    def results(outs, x, *rest, **params):
        return [rule(o, x) for o in outs]
    return results


def bitcast_convert_type(out, x, *, new_dtype):
    """Equal widths keep the split; a narrower result gains an unsplit last dimension; a
    wider one loses the operand's last."""
    parts = entries(x)
    return parts + (None,) * (out.ndim - x.ndim) if out.ndim >= x.ndim else parts[:-1]
