"""with_sharding_constraint: asks XLA's SPMD partitioner to lay a value out as a
NamedSharding at this point of the program (sdy.sharding_constraint in the StableHLO
text). The value is unchanged; at top level it is device_put to the sharding. Also
shard_alike, which asks the partitioner to lay two values out alike. Imports core,
interpreters, backends and sharding."""
from __future__ import annotations

import functools
import inspect

import numpy as np

from pyjax._src import layout as layout_mod
from pyjax._src import sharding as sharding_mod
from pyjax._src import tree_util
from pyjax._src.array import Array, sharded_array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch
from pyjax._src.core.avals import cotangent_sharding, get_aval
from pyjax._src.core.trace import RuleFactory, Tracer, define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.lax import builders as b


def _abstract_eval(aval, *, sharding):
    around = sharding_mod.current_manual()   # inside a shard_map body being traced
    manual = around[1] if around is not None else ()
    if any(n in manual for entry in sharding.spec._normalized(aval.ndim)
           if entry is not sharding_mod.UNCONSTRAINED for n in entry):
        raise ValueError(
            f"pspec {sharding.spec} contains a manual axes {manual} of mesh which is not "
            "allowed. If you are using a with_sharding_constraint under a shard_map, only "
            "use the mesh axis in PartitionSpec which are not manual.")
    # Over a mesh with Explicit axes the value's type takes the new sharding (reshard);
    # over its own mesh with those axes made Auto (auto_axes), it leaves the type.
    typed = sharding_mod.type_sharding(sharding, aval.ndim)
    try:
        sharding.shard_shape(aval.shape)   # a too long spec raises here
    except sharding_mod.IndivisibleError:
        if typed is not None:   # a type splits evenly; a constraint alone may not (JAX)
            typed.shard_shape(aval.shape)
    if typed is None and not (aval._sharding is not None and
                              aval._sharding.mesh.axis_names == sharding.mesh.axis_names):
        return aval
    return aval.update(sharding=typed)


def _eager(x, *, sharding):
    """At top level the constraint is a transfer: x laid out as `sharding`, which must
    use the devices (in their order) that x is committed to, as in JAX. A sharding over
    an AbstractMesh names the mesh x is laid out over."""
    if sharding_mod.UNCONSTRAINED in sharding.spec.partitions:
        sharding = _kept_where_open(x, sharding)
    if isinstance(sharding.mesh, sharding_mod.AbstractMesh):
        sharding = _on_mesh_of(x, sharding)
    aval = _abstract_eval(get_aval(x), sharding=sharding)
    if type(x) is Array and x.committed:
        held = x._sharding._device_assignment if x._sharding is not None else (x._device,)
        if held != sharding._device_assignment:
            raise ValueError(
                f"Received incompatible devices for jitted computation. Got argument x of "
                f"with_sharding_constraint with shape {dispatch.jax_type_str(aval)} and with "
                f"device ids {[d.id for d in held]} on platform CPU and explicit output sharding "
                f"with device ids {[d.id for d in sharding._device_assignment]} on "
                "platform CPU")
    if type(x) is Array and x._sharding is not None and x.aval is aval and \
            sharding_mod.same_layout(x._sharding, sharding, aval.ndim):
        return x   # (a new type, e.g. split over a size-1 axis, makes a new Array)
    value = x._value if type(x) is Array else np.asarray(x, aval.dtype)
    if aval._sharding is not None and aval._sharding.mesh.explicit_axes:   # named by type
        sharding = sharding_mod.NamedSharding(sharding.mesh,
                                              sharding.spec.padded(aval.ndim))
    return sharded_array(value, aval, sharding)


def _kept_where_open(x, sharding):
    """`sharding` with each UNCONSTRAINED dimension split as x already is (over a mesh of
    its shape), else unsplit: a top-level cast moves no data it need not move."""
    held = x._sharding if type(x) is Array else None
    ndim = get_aval(x).ndim
    kept = held.spec._normalized(ndim) if isinstance(held, sharding_mod.NamedSharding) \
        and held.mesh.shape_tuple == sharding.mesh.shape_tuple else ((),) * ndim
    entries = [(k if k else None) if e is sharding_mod.UNCONSTRAINED else e
               for e, k in zip(tuple(sharding.spec.partitions)
                               + (None,) * (ndim - len(sharding.spec)), kept)]
    return sharding_mod.NamedSharding(sharding.mesh, sharding.spec.update(
        partitions=sharding_mod._strip_trailing_none(entries)))


def _on_device(x, device):
    """At top level, a constraint to one device is a transfer there (committed)."""
    aval = get_aval(x)
    if type(x) is Array and x.committed:
        held = x._sharding._device_assignment if x._sharding is not None else (x._device,)
        if held != (device,):
            raise ValueError(
                f"Received incompatible devices for jitted computation. Got argument x of "
                f"with_sharding_constraint with shape {dispatch.jax_type_str(aval)} and with "
                f"device ids {[d.id for d in held]} on platform CPU and explicit output "
                f"sharding with device ids [{device.id}] on platform CPU")
    value = x._value if type(x) is Array else np.asarray(x, aval.dtype)
    return Array(np.asarray(value), device=device, committed=True, aval=aval)


def _on_mesh_of(x, sharding):
    """`sharding` (over an AbstractMesh) over the context mesh when that mesh has its
    axes (a spec under jax.set_mesh names it), else over the concrete mesh that x is
    laid out over (or, for a value on no mesh, the context mesh), with the abstract
    mesh's axis types (auto_axes and explicit_axes retype values so); JAX's errors
    where there is none or it has another shape."""
    shape = dispatch.jax_type_str(get_aval(x))
    placed = x._sharding if type(x) is Array else None
    context = sharding_mod.context_mesh()
    if context is not None and (context.shape_tuple == sharding.mesh.shape_tuple or (
            placed is None and not (type(x) is Array and x.committed))):
        mesh = context
    elif type(x) is not Array:
        raise ValueError("Target sharding contains a `jax.sharding.AbstractMesh` which "
                         "requires the input passed should be a `jax.Array`. Got "
                         f"{type(x)} with shape {shape}")
    elif not isinstance(placed, sharding_mod.NamedSharding):
        raise TypeError("The sharding on the input must be a `NamedSharding` since the "
                        "target sharding has an `AbstractMesh` in it. Got sharding type "
                        f"{type(x.sharding)} for shape {shape}")
    else:
        mesh = placed.mesh
    if mesh.shape_tuple != sharding.mesh.shape_tuple:
        raise ValueError(f"Mesh shape of the input {mesh.shape_tuple} does not "
                         "match the mesh shape of the target sharding "
                         f"{sharding.mesh.shape_tuple} for shape {shape}")
    return sharding_mod.NamedSharding(sharding_mod.concrete_mesh_of(sharding.mesh, mesh),
                                      sharding.spec)


def _transpose(prim, ct, x, *, sharding):
    """The cotangent goes back to the split of x's cotangent type (a reshard's inverse:
    reduced -> sharded transposes to sharded -> unreduced), over x's own mesh on the
    constraint's devices; it is replicated for an x of no type over the mesh; a
    constraint that types nothing keeps it (as JAX's)."""
    typed = x.aval._sharding
    if sharding_mod.type_sharding(sharding, x.aval.ndim) is None:
        pass
    elif typed is None or typed.mesh.empty:
        # a reshard of a value of no type over the mesh: its cotangent is replicated
        sharding = sharding_mod.NamedSharding(sharding.mesh, sharding_mod.PartitionSpec())
    else:   # x's own type, over its axis types (e.g. the Auto axes auto_axes made)
        target = cotangent_sharding(typed)
        mesh = sharding_mod.concrete_mesh_of(typed.mesh, sharding.mesh) \
            if isinstance(sharding.mesh, sharding_mod.Mesh) else None
        sharding = target if mesh is None else sharding_mod.concrete_sharding(target, mesh)
    return [prim.bind(ad.instantiate_zeros(ct), sharding=sharding)]


def as_cotangent_of(ct, aval):
    """ct (a cotangent of a value of type `aval`) cast to aval's cotangent type where
    that type is partial (unreduced) or reduced and ct is not of it yet: a replicated
    value becomes a partial sum held by the first devices along those axes."""
    typed = aval._sharding
    if typed is None or not (typed.spec.unreduced or typed.spec.reduced):
        return ct
    return as_type(ct, cotangent_sharding(typed))


def as_type(x, wanted):
    """x cast to the type sharding `wanted` (over the current mesh), where it is not of
    it yet; x itself where no current mesh is the one `wanted` names."""
    mesh = sharding_mod.current_mesh()
    if get_aval(x)._sharding == wanted or mesh is None or mesh.abstract_mesh != wanted.mesh:
        return x
    return sharding_constraint_p.bind(x, sharding=sharding_mod.concrete_sharding(wanted, mesh))


def _batch(prim, axis, args, dims, *, sharding):
    """The batch dimension is split over vmap's spmd_axis_name (mesh axes the spec must
    not use already), else not split, as JAX's rule does."""
    (x,), (d,) = args, dims
    if d is None:
        return prim.bind(x, sharding=sharding), None
    axis = batching.current_axis()
    if axis.spmd_name is not None:   # the batch splits over vmap's spmd_axis_name
        used = {n for e in sharding.spec._normalized(get_aval(x).ndim - 1)
                if e is not sharding_mod.UNCONSTRAINED for n in e}
        if used & set(axis.spmd_name):
            raise ValueError(f"vmap spmd_axis_name {axis.spmd_name} cannot appear in "
                             f"with_sharding_constraint spec, but got spec {sharding.spec}")
        spmd = axis.spmd_name[0] if len(axis.spmd_name) == 1 else axis.spmd_name
        axis = axis._replace(batch_sharding=sharding_mod.NamedSharding(
            sharding.mesh, sharding_mod.PartitionSpec(spmd)))
    return prim.bind(x, sharding=batching.batched_sharding(
        sharding, d, axis, get_aval(x).ndim - 1)), d


def _lower(ctx, x, *, sharding):
    name = ctx.module.mesh_name(sharding.mesh, f"with_sharding_constraint to {sharding}")
    attr = sharding.to_shardy(x.aval.ndim, mesh_name=name)
    return ctx.op("sdy.sharding_constraint", [x], ctx.avals_out[0], {"sharding": attr})


def _samples():
    mesh = sharding_mod.Mesh(np.array(devices_mod.devices()[:1], dtype=object), ("x",))
    return [b.Sample([b.random_values((2, 3), np.float32)],
                     {"sharding": sharding_mod.NamedSharding(mesh, sharding_mod.P("x"))})]


def _rules():
    """The rules of a sharding constraint, and of a reshard (JAX's reshard_p, which
    reshard and auto_axes/explicit_axes bind): one operation, two names in jaxprs."""
    binding = lambda rule: RuleFactory(lambda prim: functools.partial(rule, prim))
    return dict(impl=lambda x, *, sharding: x, abstract_eval=_abstract_eval,
                jvp=ad.linear_jvp, transpose=binding(_transpose), batch=binding(_batch),
                batch_needs_axis=True, lower=_lower, eager=_eager, samples=_samples,
                lowers_own_sharding=True)


sharding_constraint_p = define_primitive("sharding_constraint", **_rules())
reshard_p = define_primitive("reshard", **_rules())


# --- shard_alike -----------------------------------------------------------------------

def _shard_alike_jvp(primals, tangents):
    outs = shard_alike_p.bind(*primals)
    if all(type(t) is ad.Zero for t in tangents):
        return outs, list(tangents)
    return outs, shard_alike_p.bind(*map(ad.instantiate_zeros, tangents))


def _shard_alike_transpose(cts, x, y):
    if any(type(ct) is ad.Zero for ct in cts):
        return list(cts)
    return shard_alike_p.bind(*cts)


def _shard_alike_batch(args, dims):
    (x, y), (xd, yd) = args, dims
    if xd is batching.not_mapped:
        x, xd = batching.move_or_broadcast(x, xd, yd, get_aval(y).shape[yd]), yd
    elif yd is batching.not_mapped:
        y = batching.move_or_broadcast(y, yd, xd, get_aval(x).shape[xd])
    else:
        y = batching.moveaxis(y, yd, xd)
    return shard_alike_p.bind(x, y), [xd, xd]


def _shard_alike_lower(ctx, x, y):
    """Both values join one Shardy sharding group: XLA's partitioner lays them out
    alike (as JAX lowers shard_alike_p)."""
    group = ctx.module.sharding_group_id()
    for v in (x, y):
        ctx.op("sdy.sharding_group", [v], [], {"group_id": f"{group} : i64"})
    return [x, y]


shard_alike_p = define_primitive(
    "shard_alike", multiple_results=True, impl=lambda x, y: [x, y],
    abstract_eval=lambda x, y: [x, y], jvp=_shard_alike_jvp,
    transpose=_shard_alike_transpose, batch=_shard_alike_batch, lower=_shard_alike_lower,
    is_linear=True, lowers_own_sharding=True,
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32),
                               b.random_values((2, 3), np.float32)])])


def shard_alike(x, y):
    """(x, y) unchanged, with each pair of leaves laid out alike by XLA's partitioner
    (jax.experimental.shard_alike): the sharding one of them gets, the other gets too.
    x and y must be pytrees of one structure whose leaves have equal shapes."""
    x_flat, x_tree = tree_util.tree_flatten(x)
    y_flat, y_tree = tree_util.tree_flatten(y)
    if x_tree != y_tree:
        raise ValueError(f"Trees should be equal. Got x_tree: {x_tree}, y_tree: {y_tree}")
    for x_, y_ in zip(x_flat, y_flat):
        x_shape, y_shape = get_aval(x_).shape, get_aval(y_).shape
        if x_shape != y_shape:
            raise ValueError(
                "The leaves shapes of `x` and `y` should match. Got `x` leaf shape: "
                f"{x_shape} and `y` leaf shape: {y_shape}. File an issue at "
                "https://github.com/jax-ml/jax/issues if you want this feature.")
    outs = [shard_alike_p.bind(x_, y_) for x_, y_ in zip(x_flat, y_flat)]
    return (tree_util.tree_unflatten(x_tree, [o[0] for o in outs]),
            tree_util.tree_unflatten(y_tree, [o[1] for o in outs]))


def with_sharding_constraint(x, shardings):
    """x (a pytree) with each leaf constrained to its sharding (a Sharding, or a
    PartitionSpec on the current mesh; a pytree prefix of x). Under a context mesh whose
    axes are all Explicit, the split is in the types: the constraint asserts it."""
    return constrain(x, shardings,
                     sharding_mod.get_abstract_mesh().are_all_axes_explicit)


def constrain(x, shardings, assert_typed=False, cast=False):
    """x (a pytree) laid out as `shardings` (a prefix): the constraint, which retypes a
    value split over Explicit axes (reshard, device_put under a trace); with
    `assert_typed`, a check that the types already say so. With `cast` (reshard), a
    dimension split over no Explicit axis of a mesh with Auto axes is left to the
    partitioner (as JAX lowers a reshard: only the type is cast)."""
    leaves, tree = tree_util.tree_flatten(x)
    if isinstance(shardings, (sharding_mod.Sharding, sharding_mod.PartitionSpec,
                              layout_mod.Format)):
        targets = [shardings] * len(leaves)
    else:
        targets = tree_util.prefix_broadcast(shardings, tree, "with_sharding_constraint "
                                             "shardings")
    out = []
    for leaf, target in zip(leaves, targets):
        if isinstance(target, layout_mod.Format):
            # its sharding applies; pyjax keeps XLA's default layouts (values are alike)
            target = target.sharding
        if target is None:
            raise ValueError("One of with_sharding_constraint arguments got sharding None "
                             "which is not allowed. Please only pass "
                             "`jax.sharding.Sharding` instances.")
        target = sharding_mod.canonical_sharding(target, "with_sharding_constraint",
                                                 abstract=True)
        if isinstance(target, sharding_mod.SingleDeviceSharding):
            if _spmd_batched(leaf):   # JAX's vmap rule takes only NamedShardings
                raise ValueError(
                    "If you are using spmd_axis_name parameter of jax.vmap, please make "
                    "sure to run your jitted function inside the mesh context manager. "
                    "Only `jax.lax.with_sharding_constraint` with "
                    "`jax.sharding.NamedSharding` as an input can be transformed with "
                    "spmd_axis_name batching rules outside of an explicit mesh context "
                    f"manager scope{target!r}")
            if isinstance(leaf, Tracer):
                raise ValueError(f"with_sharding_constraint inside a traced function needs "
                                 f"a NamedSharding (or a PartitionSpec on the current "
                                 f"mesh), got {target}.")
            out.append(_on_device(leaf, target.device))
            continue
        if assert_typed:
            _assert_typed_as(get_aval(leaf), target)
            out.append(leaf)
            continue
        if cast:
            target = _open_unsplit(target, get_aval(leaf).ndim)
        else:
            target = _keep_typed_split(target, get_aval(leaf))
        out.append((reshard_p if cast else sharding_constraint_p).bind(leaf, sharding=target))
    return tree_util.tree_unflatten(tree, out)


def _keep_typed_split(target, aval):
    """A constraint over a mesh's Auto axes on a value its type splits over Explicit
    axes: each dimension split over the type's axes, then the constraint's (as JAX
    combines them: P('x') typed, constrained to P('y'), is laid out as P(('x', 'y')))."""
    typed = aval._sharding
    if not (isinstance(target, sharding_mod.NamedSharding) and typed is not None
            and typed.mesh.explicit_axes and typed.mesh.auto_axes):
        return target
    ndim = len(aval.shape)
    pad = (None,) * ndim
    merged = []
    for kept, asked in zip((tuple(typed.spec.partitions) + pad)[:ndim],
                           (tuple(target.spec.partitions) + pad)[:ndim]):
        if asked is sharding_mod.UNCONSTRAINED or kept is None:
            merged.append(asked)
            continue
        axes = _axes(kept) + tuple(a for a in _axes(asked) if a not in _axes(kept))
        merged.append(axes[0] if len(axes) == 1 else axes)
    if tuple(merged[:len(target.spec)]) == tuple(target.spec.partitions) and \
            all(e is None for e in merged[len(target.spec):]):
        return target
    return sharding_mod.NamedSharding(target.mesh, target.spec.update(partitions=merged))


def _axes(entry):
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def _open_unsplit(target, ndim):
    """`target` with its unsplit dimensions UNCONSTRAINED where its mesh has Auto axes."""
    if not (isinstance(target, sharding_mod.NamedSharding) and target.mesh.auto_axes):
        return target
    spec = target.spec
    entries = [sharding_mod.UNCONSTRAINED if e is None else e
               for e in tuple(spec.partitions) + (None,) * (ndim - len(spec))]
    return sharding_mod.NamedSharding(target.mesh, spec.update(partitions=entries))
def _spmd_batched(x) -> bool:
    """Whether x is mapped by a vmap with spmd_axis_name."""
    return isinstance(x, batching.BatchTracer) and x.batch_dim is not None and \
        x._trace.axis.spmd_name is not None


def _assert_typed_as(aval, target):
    """JAX's check that a value's type is split as `target` says (dimensions left
    UNCONSTRAINED match any split)."""
    have = sharding_mod.PartitionSpec(*aval.sharding.spec._normalized(aval.ndim))
    typed = sharding_mod.type_sharding(target, aval.ndim)   # (as types name axes)
    want = sharding_mod.PartitionSpec(*[
        sharding_mod.UNCONSTRAINED if t is sharding_mod.UNCONSTRAINED else w
        for t, w in zip(target.spec._normalized(aval.ndim),
                        typed.spec._normalized(aval.ndim))])
    if any(w is not sharding_mod.UNCONSTRAINED and h != w
           for h, w in zip(have.partitions, want.partitions)):
        raise AssertionError(
            "`with_sharding_constraint` acts as an assert when all axes of mesh are of "
            f"type `Explicit`. The array sharding: {aval.sharding.spec} did not match the "
            f"sharding provided: {target.spec}. Please use `jax.sharding.reshard` to "
            "shard your input to the sharding you want.")


def check_spec_has_mesh(target):
    """A bare PartitionSpec names axes of the current mesh: without one, JAX's error."""
    if isinstance(target, sharding_mod.PartitionSpec) and \
            sharding_mod.current_mesh() is None and \
            sharding_mod.get_abstract_mesh().empty:
        raise ValueError(
            "Using PartitionSpec when you are not under a mesh context is not allowed. "
            "Please pass a NamedSharding instance or enter into a mesh context via "
            f"`jax.set_mesh`. Got {target}")


def out_sharding_for(out_sharding, ndim, what):
    """What a function's `out_sharding=` argument (a Sharding, or a PartitionSpec on the
    current mesh) asks of its result of rank `ndim`: (the sharding its type takes, over
    the mesh's Explicit axes, or None; the sharding to constrain it to, where the mesh
    has no Explicit axes, or None). A NamedSharding over the empty mesh (the sharding
    of a value's type outside any mesh, `jax.typeof(x).sharding`) asks nothing, as in JAX."""
    if out_sharding is None or (isinstance(out_sharding, sharding_mod.NamedSharding)
                                and out_sharding.mesh.empty):
        return None, None
    check_spec_has_mesh(out_sharding)
    given = sharding_mod.canonical_sharding(out_sharding, what)
    check_context_mesh(given, what)
    if isinstance(given, sharding_mod.NamedSharding) and given.memory_kind is not None \
            and isinstance(given.mesh, sharding_mod.AbstractMesh):   # (a type's sharding)
        raise ValueError("sharding with memory_kind is not allowed. Please use "
                         "`jax.device_put` to transfer to different memory spaces. Got "
                         f"sharding={given!r}")
    check_explicit_axes(given, what)
    typed = sharding_mod.type_sharding(given, ndim)
    return (typed, None) if typed is not None else (None, given)


def apply_out_sharding(x, out_sharding, what):
    """x laid out as a function's `out_sharding=` argument asks (None: as it is)."""
    typed, placed = out_sharding_for(out_sharding, get_aval(x).ndim, what)
    if typed is None and placed is None:
        return x
    if typed is not None and get_aval(x)._sharding == typed:
        return x   # already of that type (a partial sum stays one)
    return reshard(x, out_sharding) if placed is None else \
        constrain(x, placed)


def takes_out_sharding(fn):
    """`fn` with JAX's keyword `out_sharding=` (a Sharding, or a PartitionSpec on the
    current mesh): its result laid out as asked."""
    what = fn.__name__

    @functools.wraps(fn)
    def run(*args, out_sharding=None, **kwargs):
        out = fn(*args, **kwargs)
        if out_sharding is None:
            return placed_in_context(out) if sharding_mod.context_mesh() is not None \
                else out
        return apply_out_sharding(out, out_sharding, what)

    signature = inspect.signature(fn)
    run.__signature__ = signature.replace(parameters=[
        *signature.parameters.values(),
        inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return run


def placed_in_context(out):
    """`out` (a pytree) with each Array made on the host, not yet placed, laid out on
    the context mesh (jax.set_mesh) as JAX places the values it makes there."""
    return tree_util.tree_map(
        lambda x: dispatch.laid_out_in_context(x) if type(x) is Array and not x.committed
        and x._sharding is None else x, out)


def check_context_mesh(target, what):
    """JAX's error for a function's out_sharding= over another mesh than the context's
    (unless both have only Auto axes; shard_map bodies name their mesh's axes)."""
    context = sharding_mod.get_abstract_mesh()
    if not isinstance(target, sharding_mod.NamedSharding) or context.empty or \
            sharding_mod.current_manual() is not None:
        return
    mesh = target.mesh.abstract_mesh
    if mesh != context and not (mesh.are_all_axes_auto and context.are_all_axes_auto):
        raise ValueError(f"Context mesh {context} should match the mesh of sharding {mesh} "
                         f"passed to {what}.")


def check_explicit_axes(target, what):
    """JAX's error for a sharding that names Auto or Manual mesh axes where only
    Explicit ones may be named (a function's out_sharding=, reshard)."""
    if not isinstance(target, sharding_mod.NamedSharding):
        return
    mesh, spec = target.mesh, target.spec
    for entry in spec.partitions:
        for name in () if entry is None or entry is sharding_mod.UNCONSTRAINED \
                else (entry,) if isinstance(entry, str) else entry:
            kind = mesh.axis_types[mesh.axis_names.index(name)]
            if kind != sharding_mod.AxisType.Explicit:
                raise ValueError(
                    f"PartitionSpec passed to {what} cannot contain axis names that are "
                    f"of type Auto or Manual. Got PartitionSpec: {spec} with axis name: "
                    f"{name} of type: AxisType.{kind.name}.")


def reshard(xs, out_shardings):
    """xs (a pytree) laid out as out_shardings (Shardings, or PartitionSpecs on the
    current mesh; a pytree prefix of xs): a transfer at top level, a sharding
    constraint under a trace. Only a mesh's Explicit axes may be named."""
    for target in tree_util.tree_leaves(
            out_shardings, is_leaf=lambda s: isinstance(s, sharding_mod.PartitionSpec)):
        check_spec_has_mesh(target)
        check_explicit_axes(target, "reshard")
    return constrain(xs, out_shardings, cast=True)


def _retyped_mesh(axes, axis_type, name, shardings=None):
    """(the abstract mesh auto_axes/explicit_axes start from: the context's, or that
    of `shardings`; it with `axes` (all by default) made `axis_type`; those axes), or
    None when there is no mesh. JAX's errors for meshes that disagree."""
    context = sharding_mod.get_abstract_mesh()
    meshes = {s.mesh.abstract_mesh for s in tree_util.tree_leaves(shardings)
              if isinstance(s, sharding_mod.NamedSharding)}
    if len(meshes) > 1:
        raise ValueError(f"Shardings passed to {name} should have the same mesh. Got "
                         f"meshes {sorted(map(str, meshes))}.")
    given = next(iter(meshes), None)
    if given is not None and not context.empty and given != context:
        raise ValueError(f"Context mesh {context} must match the mesh passed to shardings "
                         f"{given}. Recommended approach is to use `jax.set_mesh` context "
                         "manager.")
    mesh = context if not context.empty else given
    if mesh is None:
        return None
    axes = mesh.axis_names if axes is None else (axes,) if isinstance(axes, str) \
        else tuple(axes)
    if any(mesh.axis_types[mesh.axis_names.index(a)] == sharding_mod.AxisType.Manual
           for a in axes):
        raise NotImplementedError(
            "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not allowed. "
            "Please file a bug at https://github.com/jax-ml/jax/issues with your use case")
    return mesh, mesh.update_axis_types({a: axis_type for a in axes}), axes


def _explicit_spec(x, mesh):
    """The spec of x's type with only the Explicit axes of `mesh` kept."""
    return sharding_mod.type_sharding(
        sharding_mod.NamedSharding(mesh, get_aval(x).sharding.spec), get_aval(x).ndim).spec


def _sharding_argument(given, kwargs, keyword):
    if given is not None:
        return given
    if keyword not in kwargs:
        raise TypeError(f"Missing required keyword argument: '{keyword}'")
    return kwargs.pop(keyword)


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """f run with the mesh axes `axes` (all by default) made Auto (left to XLA's
    propagation, gone from the types: its arguments are retyped so), its outputs then
    resharded to out_sharding (given here or as f's `out_sharding=` keyword)."""
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def run(*args, **kwargs):
        target = _sharding_argument(out_sharding, kwargs, "out_sharding")
        found = _retyped_mesh(axes, sharding_mod.AxisType.Auto, "auto_axes", target)
        if found is None:
            return f(*args, **kwargs)
        mesh, auto_mesh, names = found
        if set(mesh.auto_axes) == set(names):   # already Auto: nothing changes
            return f(*args, **kwargs)
        with sharding_mod.use_abstract_mesh(auto_mesh):
            args = reshard(args, tree_util.tree_map(
                lambda x: _explicit_spec(x, auto_mesh), args))
            out = f(*args, **kwargs)
        return reshard(out, target)
    return run


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """f run with the mesh axes `axes` (all by default) made Explicit, on its arguments
    resharded to in_sharding (given here or as f's `in_sharding=` keyword); its outputs
    are then retyped back, the axes gone from their types. Needs a mesh
    (jax.set_mesh)."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def run(*args, **kwargs):
        target = _sharding_argument(in_sharding, kwargs, "in_sharding")
        found = _retyped_mesh(axes, sharding_mod.AxisType.Explicit, "explicit_axes")
        if found is None:
            raise ValueError("Context mesh cannot be empty. Please use `jax.set_mesh` "
                             "API to enter into a mesh context when using "
                             "`explicit_axes` API.")
        mesh, explicit_mesh, _ = found
        with sharding_mod.use_abstract_mesh(explicit_mesh):
            out = f(*reshard(args, target), **kwargs)
        with sharding_mod.use_abstract_mesh(mesh):
            return reshard(out, tree_util.tree_map(lambda x: _explicit_spec(x, mesh), out))
    return run
