"""Sharding in types: how each primitive's output sharding follows from its operands'
when arrays are split over a mesh's Explicit axes (JAX's sharding rules). A rule gives
the output's PartitionSpec entries; `typed` joins it to a primitive's shape rule, and
runs it only when an operand carries a sharding, so unsharded tracing pays one check.
Imports core, sharding and errors."""
from __future__ import annotations

import math

from pyjax._src import sharding as sharding_mod
from pyjax._src.errors import ShardingTypeError


def _mesh_of(avals):
    """The abstract mesh the sharded operands share (ShardingTypeError if they differ)."""
    mesh = None
    for a in avals:
        s = getattr(a, "_sharding", None)
        if s is not None:
            if mesh is not None and s.mesh != mesh:
                raise ShardingTypeError(f"Mesh for all inputs should be equal. Got one "
                                        f"mesh: {mesh} and another mesh: {s.mesh}")
            mesh = s.mesh
    return mesh


def typed(shape_rule, sharding_rule):
    """An abstract_eval: `shape_rule`'s aval, carrying the sharding that
    `sharding_rule(out_aval, *avals, **params)` gives (a tuple of spec entries, or a
    NamedSharding given by an out_sharding parameter) when an operand is sharded."""

    def abstract_eval(*avals, **params):
        out = shape_rule(*avals, **params)
        asked = params.get("out_sharding") or params.get("sharding")
        if asked is not None and asked.mesh.explicit_axes:
            return out.update(sharding=asked)
        for a in avals:
            if getattr(a, "_sharding", None) is not None:
                break
        else:
            return out
        mesh = _mesh_of(avals)
        found = sharding_rule(out, *avals, **params)
        if not isinstance(found, sharding_mod.NamedSharding):
            found = sharding_mod.NamedSharding(mesh, sharding_mod.PartitionSpec(*found))
        return out.update(sharding=found)
    return abstract_eval


def with_entries(sharding, parts):
    """`sharding` (a type's) with the spec entries `parts`."""
    return sharding_mod.NamedSharding(sharding.mesh, sharding_mod.PartitionSpec(*parts))


def hide_unset(*names):
    """A shown_params rule: the jaxpr printer leaves out these params while None."""
    return lambda params: {k: v for k, v in params.items()
                           if not (k in names and v is None)}


def entries(aval):
    """aval's spec padded to its rank: one entry per dimension (None: not split)."""
    s = aval._sharding
    if s is None:
        return (None,) * len(aval.shape)
    parts = s.spec.partitions
    return tuple(parts) + (None,) * (len(aval.shape) - len(parts))


def _names(entry):
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
        used = [n for e in result for n in _names(e)]
        if len(used) != len(set(used)):
            raise ShardingTypeError(f"{name} got incompatible shardings for "
                                    f"broadcasting: {_spec_str(specs)}.")
        return tuple(result)
    return rule


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
    """Operands split alike (the concatenated dimension unsplit) keep that split."""
    specs = {entries(o) for o in operands if o._sharding is not None}
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
    used = [n for e in result for n in _names(e)]
    if len(used) != len(set(used)):   # one mesh axis would split two dimensions
        shown = ",".join(str(d) if e is None else f"{d}@{e}" if isinstance(e, str)
                         else f"{d}@({','.join(e)})" for d, e in zip(out.shape, result))
        raise ShardingTypeError(
            f"dot_general operation with inputs: {lhs.str_short()}, {rhs.str_short()} "
            f"produces an illegally sharded result: "
            f"{out.str_short().split('[')[0]}[{shown}]")
    return result


def sliced(name):
    """Slices keep the operand's split where each output dimension still divides over
    its mesh axes."""

    def rule(out, x, *rest, **params):
        mesh = x._sharding.mesh
        parts = entries(x)
        if not out.shape or all(d == 1 for d in out.shape):
            return (None,) * len(out.shape)
        for d_in, d_out, e in zip(x.shape, out.shape, parts):
            size = math.prod(mesh.shape[n] for n in _names(e))
            if d_in != d_out and e is not None and d_out % size:
                raise ShardingTypeError(
                    f"{name} on sharded dims where out dim ({d_out}) is not divisible by "
                    f"mesh axes ({size}) with spec ({e}) is not implemented. Got input "
                    f"type={x.str_short()} and output shape={out.shape}")
        return parts
    return rule


def _reshape_error(x, new_sizes):
    raise ShardingTypeError(
        "This reshape is not supported. Please specify the sharding of the output via the "
        "`out_sharding` argument of jax.lax.reshape. Got operand type: "
        f"{x.str_short()}, new sizes: {tuple(new_sizes)}")


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
                spec += _split_axes(mesh, _names(e), group, x, new_sizes)
    else:
        it = iter(kept)
        for size, group in zip([n for n in new_sizes if n != 1], merged):
            if not isinstance(group, list):
                spec.append(next(it))
                continue
            names = [_names(next(it)) for _ in group]
            while names and not names[-1]:
                names.pop()
            if any(not n for n in names):
                _reshape_error(x, new_sizes)
            flat = [n for ns in names for n in ns]
            spec += _split_axes(mesh, flat, [size], x, new_sizes) if flat else [None]
    it = iter(spec)
    return tuple(None if n == 1 else next(it) for n in new_sizes)
