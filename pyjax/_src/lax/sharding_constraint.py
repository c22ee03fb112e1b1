"""with_sharding_constraint: asks XLA's SPMD partitioner to lay a value out as a
NamedSharding at this point of the program (sdy.sharding_constraint in the StableHLO
text). The value is unchanged; at top level it is device_put to the sharding. Imports
core, interpreters, backends and sharding."""
from __future__ import annotations

import numpy as np

from pyjax._src import sharding as sharding_mod
from pyjax._src import tree_util
from pyjax._src.array import Array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends.stablehlo import LoweringError
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import ad
from pyjax._src.lax import builders as b


def _abstract_eval(aval, *, sharding):
    sharding.shard_shape(aval.shape)   # IndivisibleError / a too long spec raise here
    return aval


def _eager(x, *, sharding):
    """At top level the constraint is a transfer: x laid out as `sharding`."""
    aval = _abstract_eval(get_aval(x), sharding=sharding)
    if type(x) is Array and x._sharding is not None and \
            sharding_mod.same_layout(x._sharding, sharding, aval.ndim):
        return x
    value = x._value if type(x) is Array else np.asarray(x, aval.dtype)
    xla = devices_mod.xla_backend()
    if xla is None:
        return Array(np.asarray(value), aval=aval, committed=True, sharding=sharding)
    return xla.sharded_array(value, aval, sharding)


def _transpose(ct, x, *, sharding):
    return [sharding_constraint_p.bind(ad.instantiate_zeros(ct), sharding=sharding)]


def _batch(args, dims, *, sharding):
    (x,), (d,) = args, dims
    if d is None:
        return sharding_constraint_p.bind(x, sharding=sharding), None
    entries = list(sharding.spec) + [None] * (get_aval(x).ndim - 1 - len(sharding.spec))
    entries.insert(d, None)   # the batch dimension is not split
    spec = sharding_mod.PartitionSpec(*entries)
    return sharding_constraint_p.bind(
        x, sharding=sharding_mod.NamedSharding(sharding.mesh, spec)), d


def _lower(ctx, x, *, sharding):
    if ctx.module.mesh is None or ctx.module.mesh != sharding.mesh:
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
    samples=_samples)


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
