"""with_sharding_constraint: asks XLA's SPMD partitioner to lay a value out as a
NamedSharding at this point of the program (sdy.sharding_constraint in the StableHLO
text). The value is unchanged; at top level it is device_put to the sharding. Imports
core, interpreters, backends and sharding."""
from __future__ import annotations

import functools
import inspect

import numpy as np

from pyjax._src import sharding as sharding_mod
from pyjax._src import tree_util
from pyjax._src.array import Array, sharded_array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch
from pyjax._src.backends.stablehlo import LoweringError
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import ad
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
    sharding.shard_shape(aval.shape)   # IndivisibleError / a too long spec raise here
    # Over a mesh with Explicit axes the value's type takes the new sharding (reshard).
    typed = sharding_mod.type_sharding(sharding, aval.ndim)
    return aval if typed is None else aval.update(sharding=typed)


def _eager(x, *, sharding):
    """At top level the constraint is a transfer: x laid out as `sharding`, which must
    use the devices (in their order) that x is committed to, as in JAX."""
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
    if type(x) is Array and x._sharding is not None and \
            sharding_mod.same_layout(x._sharding, sharding, aval.ndim):
        return x
    value = x._value if type(x) is Array else np.asarray(x, aval.dtype)
    return sharded_array(value, aval, sharding)


def _transpose(ct, x, *, sharding):
    """The cotangent goes back to the split of x's type (a reshard's inverse), or, for
    an untyped x, keeps the constraint."""
    typed = x.aval._sharding
    if typed is not None and isinstance(sharding.mesh, sharding_mod.Mesh):
        sharding = sharding_mod.concrete_sharding(typed, sharding.mesh)
    return [sharding_constraint_p.bind(ad.instantiate_zeros(ct), sharding=sharding)]


def _batch(args, dims, *, sharding):
    (x,), (d,) = args, dims
    if d is None:
        return sharding_constraint_p.bind(x, sharding=sharding), None
    spec = sharding.spec
    entries = list(spec.partitions) + [None] * (get_aval(x).ndim - 1 - len(spec))
    entries.insert(d, None)   # the batch dimension is not split
    spec = spec.update(partitions=entries)
    return sharding_constraint_p.bind(
        x, sharding=sharding_mod.NamedSharding(sharding.mesh, spec)), d


def _lower(ctx, x, *, sharding):
    mesh = ctx.module.mesh   # (a type's sharding names the mesh's abstract mesh)
    if mesh is None or sharding.mesh not in (mesh, mesh.abstract_mesh):
        raise LoweringError(
            f"with_sharding_constraint to {sharding} in a program partitioned over "
            f"{ctx.module.mesh}: every sharding in one jit must use the same mesh.")
    attr = sharding.to_shardy(x.aval.ndim)
    return ctx.op("sdy.sharding_constraint", [x], x.aval, {"sharding": attr})


def _samples():
    mesh = sharding_mod.Mesh(np.array(devices_mod.devices()[:1], dtype=object), ("x",))
    return [b.Sample([b.random_values((2, 3), np.float32)],
                     {"sharding": sharding_mod.NamedSharding(mesh, sharding_mod.P("x"))})]


sharding_constraint_p = define_primitive(
    "sharding_constraint", impl=lambda x, *, sharding: x, abstract_eval=_abstract_eval,
    jvp=ad.linear_jvp, transpose=_transpose, batch=_batch, lower=_lower, eager=_eager,
    samples=_samples, lowers_own_sharding=True)


def with_sharding_constraint(x, shardings):
    """x (a pytree) with each leaf constrained to its sharding (a Sharding, or a
    PartitionSpec on the current mesh; a pytree prefix of x)."""
    leaves, tree = tree_util.tree_flatten(x)
    if isinstance(shardings, (sharding_mod.Sharding, sharding_mod.PartitionSpec)):
        targets = [shardings] * len(leaves)
    else:
        targets = tree_util.prefix_broadcast(shardings, tree, "with_sharding_constraint "
                                             "shardings")
    out = []
    for leaf, target in zip(leaves, targets):
        target = sharding_mod.canonical_sharding(target, "with_sharding_constraint")
        if isinstance(target, sharding_mod.SingleDeviceSharding):
            raise ValueError(f"with_sharding_constraint needs a NamedSharding (or a "
                             f"PartitionSpec on the current mesh), got {target}.")
        out.append(sharding_constraint_p.bind(leaf, sharding=target))
    return tree_util.tree_unflatten(tree, out)


def _check_spec_has_mesh(target):
    """A bare PartitionSpec names axes of the current mesh: without one, JAX's error."""
    if isinstance(target, sharding_mod.PartitionSpec) and \
            sharding_mod.current_mesh() is None:
        raise ValueError(
            "Using PartitionSpec when you are not under a mesh context is not allowed. "
            "Please pass a NamedSharding instance or enter into a mesh context via "
            f"`jax.set_mesh`. Got {target}")


def out_sharding_for(out_sharding, ndim, what):
    """What a function's `out_sharding=` argument (a Sharding, or a PartitionSpec on the
    current mesh) asks of its result of rank `ndim`: (the sharding its type takes, over
    the mesh's Explicit axes, or None; the sharding to constrain it to, where the mesh
    has no Explicit axes, or None)."""
    if out_sharding is None:
        return None, None
    _check_spec_has_mesh(out_sharding)
    given = sharding_mod.canonical_sharding(out_sharding, what)
    typed = sharding_mod.type_sharding(given, ndim)
    return (typed, None) if typed is not None else (None, given)


def apply_out_sharding(x, out_sharding, what):
    """x laid out as a function's `out_sharding=` argument asks (None: as it is)."""
    if out_sharding is None:
        return x
    _, placed = out_sharding_for(out_sharding, get_aval(x).ndim, what)
    return reshard(x, out_sharding) if placed is None else \
        with_sharding_constraint(x, placed)


def takes_out_sharding(fn):
    """`fn` with JAX's keyword `out_sharding=` (a Sharding, or a PartitionSpec on the
    current mesh): its result laid out as asked."""
    what = fn.__name__

    @functools.wraps(fn)
    def run(*args, out_sharding=None, **kwargs):
        return apply_out_sharding(fn(*args, **kwargs), out_sharding, what)

    signature = inspect.signature(fn)
    run.__signature__ = signature.replace(parameters=[
        *signature.parameters.values(),
        inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return run


def reshard(xs, out_shardings):
    """xs (a pytree) laid out as out_shardings (Shardings, or PartitionSpecs on the
    current mesh; a pytree prefix of xs): a transfer at top level, a sharding
    constraint under a trace. Only a mesh's Explicit axes may be named."""
    for target in tree_util.tree_leaves(
            out_shardings, is_leaf=lambda s: isinstance(s, sharding_mod.PartitionSpec)):
        _check_spec_has_mesh(target)
        if isinstance(target, sharding_mod.NamedSharding):
            mesh = target.mesh
            for entry in target.spec.partitions:
                for name in () if entry is None or entry is sharding_mod.UNCONSTRAINED \
                        else (entry,) if isinstance(entry, str) else entry:
                    kind = mesh.axis_types[mesh.axis_names.index(name)]
                    if kind != sharding_mod.AxisType.Explicit:
                        raise ValueError(
                            "PartitionSpec passed to reshard cannot contain axis names "
                            "that are of type Auto or Manual. Got PartitionSpec: "
                            f"{target.spec} with axis name: {name} of type: "
                            f"AxisType.{kind.name}.")
    return with_sharding_constraint(xs, out_shardings)


def _mesh_of(shardings, name):
    """The mesh `name` runs on: the context mesh, or else the one of its NamedShardings
    (they must agree); None when there is neither."""
    meshes = {s.mesh for s in tree_util.tree_leaves(shardings)
              if isinstance(s, sharding_mod.NamedSharding)}
    if len(meshes) > 1:
        raise ValueError(f"Shardings passed to {name} should have the same mesh. Got "
                         f"meshes {sorted(map(str, meshes))}.")
    context = sharding_mod.current_mesh()
    if context is not None and meshes and meshes != {context}:
        raise ValueError(f"Context mesh {context.abstract_mesh} must match the mesh "
                         f"passed to shardings {next(iter(meshes)).abstract_mesh}. "
                         "Recommended approach is to use `jax.set_mesh` context manager.")
    return context if context is not None else next(iter(meshes), None)


def _sharding_argument(given, kwargs, keyword):
    if given is not None:
        return given
    if keyword not in kwargs:
        raise TypeError(f"Missing required keyword argument: '{keyword}'")
    return kwargs.pop(keyword)


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """f run with the mesh axes `axes` (all by default) left to XLA's propagation, its
    outputs then resharded to out_sharding (given here or as f's `out_sharding=`
    keyword). pyjax does not retype f's operands: inside f they keep the splits of
    their types (JAX drops them from the types there); the output is then resharded."""
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def run(*args, **kwargs):
        target = _sharding_argument(out_sharding, kwargs, "out_sharding")
        mesh = _mesh_of(target, "auto_axes")
        if mesh is None:
            return f(*args, **kwargs)
        names = mesh.axis_names if axes is None else \
            (axes,) if isinstance(axes, str) else tuple(axes)
        if set(mesh.auto_axes) == set(names):   # already Auto: nothing changes
            return f(*args, **kwargs)
        return reshard(f(*args, **kwargs), target)
    return run


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """f run on its arguments resharded to in_sharding (given here or as f's
    `in_sharding=` keyword), with the mesh axes `axes` explicit inside. Needs a mesh
    (jax.set_mesh)."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def run(*args, **kwargs):
        target = _sharding_argument(in_sharding, kwargs, "in_sharding")
        if _mesh_of(target, "explicit_axes") is None:
            raise ValueError("Context mesh cannot be empty. Please use `jax.set_mesh` "
                             "API to enter into a mesh context when using "
                             "`explicit_axes` API.")
        return f(*reshard(args, target), **kwargs)
    return run
