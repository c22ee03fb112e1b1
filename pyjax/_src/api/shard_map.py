"""shard_map: a function written for one block of each array, run on every device of a
mesh at once, with collectives (psum, all_gather, ppermute, ...) over the mesh's named
axes. Imports tree_util, sharding, core, interpreters, backends and lax.

Design
------
`shard_map(f, mesh=, in_specs=, out_specs=)(*args)` traces f once on the per-device
blocks (each argument's shape divided as its PartitionSpec says), with the mesh axes
bound as named axes so collectives type-check, and binds `shard_map`: a call primitive
whose params are that per-block jaxpr, the mesh, and a PartitionSpec per operand and
result.

* Lowered (inside jit, or eagerly as a one-equation program) it is Shardy's
  `sdy.manual_computation` over all mesh axes in a module partitioned over the mesh:
  XLA's SPMD partitioner hands each device its block, and the collectives are XLA
  collectives between partitions (channel handles, groups of partition ids).
* The NumPy executor (its `impl`) runs the body under nested vmaps, one per mesh axis
  (innermost last): the batching rules resolve the collectives, so results agree.
* jvp, partial evaluation, transpose (so grad works), vmap and DCE have rules. An
  output replicated over an axis (not named in its out_spec) stands for any one device's
  value; transposing treats it as their mean, and an input replicated over an axis gets
  the sum of the devices' cotangents.
"""
from __future__ import annotations

import contextlib
import inspect
import math

import numpy as np

from pyjax._src import config
from pyjax._src import sharding as sharding_mod
from pyjax._src import tree_util
from pyjax._src.array import Array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch, numpy_backend
from pyjax._src.backends.stablehlo import LoweringError
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import ManualAxisType, ShapedArray, get_aval
from pyjax._src.core.trace import (Trace, Tracer, current_trace, define_primitive,
                                   set_current_trace)
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import parallel, sharding_rules
from pyjax._src.lax import structural as st
from pyjax._src.sharding import NamedSharding, PartitionSpec
from pyjax._src.util import fun_name


@contextlib.contextmanager
def _mesh_axes(mesh, manual_axes, check_vma, eager=False):
    """While tracing a body: binds the axes this shard_map makes manual as named axes
    (outermost first), and marks them manual together with those of the shard_maps
    around it (jax.sharding.get_abstract_mesh inside says so); with check_vma, values'
    types record the manual axes they vary along; `eager`: the shard_map is called
    outside any transformation."""
    around = sharding_mod.current_manual()
    before = around[1] if around is not None and around[0] == mesh else ()
    with contextlib.ExitStack() as stack:
        for name, size in zip(mesh.axis_names, mesh.axis_sizes):
            if name in manual_axes:
                stack.enter_context(batching.extend_axis_env(name, size))
        stack.enter_context(sharding_mod.manual_axes(
            mesh, [n for n in mesh.axis_names if n in before or n in manual_axes],
            vma_typed=check_vma, eager=eager))
        yield


def body_axes(params):
    """The context in which the body of a shard_map equation (of `params`) is traced."""
    return _mesh_axes(params["mesh"], params["manual_axes"], params["check_vma"])


def _pieces(mesh, spec, ndim):
    """How many blocks each dimension is cut into."""
    return [math.prod(mesh.shape[n] for n in entry) for entry in spec._normalized(ndim)]


def _block_aval(aval, spec, mesh, where):
    if len(spec) > aval.ndim:
        raise ValueError(f"{where}: its PartitionSpec {spec} has {len(spec)} entries, but "
                         f"the array has rank {aval.ndim} ({aval.str_short(True)}).")
    pieces = _pieces(mesh, spec, aval.ndim)
    for d, (size, p) in enumerate(zip(aval.shape, pieces)):
        if size % p:
            raise ValueError(
                f"{where}: the spec {spec} splits dimension {d} of an array of shape "
                f"{aval.shape} into {p} blocks, but {size} is not divisible by {p}.")
    return aval.update(shape=tuple(s // p for s, p in zip(aval.shape, pieces)))


def _global_aval(aval, spec, mesh, manual_axes):
    """The whole array of blocks `aval` laid out as `spec`: it no longer varies along
    this shard_map's axes as a value inside it (only along those of shard_maps around
    it). Over a mesh of Explicit axes its type carries that layout: the spec's split
    over the manual axes, then the blocks' own split over the Explicit axes left
    automatic, partial sums and reduced values included (as JAX's)."""
    pieces = _pieces(mesh, spec, aval.ndim)
    shape = tuple(s * p for s, p in zip(aval.shape, pieces))
    # (Partial sums and reduced values show in the sharding of the type, if anywhere.)
    mat = ManualAxisType(varying=[n for n in aval.mat.varying_order if n not in manual_axes])
    if not mesh.are_all_axes_explicit:   # (Auto axes: the layout is XLA's, or out_specs')
        return aval.update(shape=shape, mat=mat)
    inner = aval._sharding
    # The mesh around this shard_map: the body's, with this shard_map's axes restored.
    types = dict(zip(mesh.axis_names, mesh.axis_types))
    outer = mesh.abstract_mesh if inner is None else inner.mesh.update_axis_types(
        {n: types[n] for n in manual_axes})
    block = inner.spec._normalized(aval.ndim) if inner is not None else [()] * aval.ndim
    entries = [_entry(tuple(m) + tuple(b))
               for m, b in zip(spec._normalized(aval.ndim), block)]
    typed = sharding_mod.type_sharding(NamedSharding(outer, PartitionSpec(
        *entries, unreduced=spec.unreduced, reduced=spec.reduced)), aval.ndim)
    return aval.update(shape=shape, sharding=typed, mat=mat)


def _entry(names):
    """A PartitionSpec entry splitting a dimension over the mesh axes `names`."""
    return None if not names else names[0] if len(names) == 1 else names


def _body_sharding(aval, manual_axes, ndim):
    """The type sharding of a block, inside the body (traced within _mesh_axes): over
    the body's mesh (its manual axes typed Manual), split as the argument `aval` is over
    the Explicit axes that stay automatic (as JAX types it)."""
    mesh = sharding_mod.get_abstract_mesh()
    outer = aval._sharding
    free = set(mesh.explicit_axes) - set(manual_axes)
    block = outer.spec._normalized(ndim) if outer is not None else [()] * ndim
    return NamedSharding(mesh, PartitionSpec(
        *[_entry(tuple(n for n in names if n in free)) for names in block]))


def _spec_axes(spec, ndim):
    """The mesh axes a PartitionSpec splits some dimension over."""
    return {n for entry in spec._normalized(ndim) for n in entry}


def _vma_block_aval(aval, spec, mesh, where):
    """A body's argument (traced inside _mesh_axes): a block of `aval`, typed (check_vma)
    as varying along the axes its spec splits it over and those it varied along outside."""
    block = _block_aval(aval, spec, mesh, where)
    block = block.update(sharding=_body_sharding(aval, sharding_mod.current_manual()[1],
                                                 aval.ndim))
    typed = sharding_mod.vma_axes()
    if not typed:
        return block
    axes = _spec_axes(spec, aval.ndim) | aval.vma
    return block.update(mat=block.mat.update(
        varying=[n for n in mesh.axis_names if n in axes and n in typed],
        unreduced=spec.unreduced, reduced=spec.reduced))


def _missing_axes(mesh, manual_axes, spec, ndim):
    """The manual axes (of size > 1) a spec does not name: a value is replicated over
    them. (Over its unreduced axes the blocks are partial sums, and over its reduced
    ones a value reduced there, whose cotangents are partial sums: no copies.)"""
    named = {n for entry in spec._normalized(ndim) for n in entry}
    named |= spec.unreduced | spec.reduced
    return tuple(n for n, s in zip(mesh.axis_names, mesh.axis_sizes)
                 if n in manual_axes and n not in named and s > 1)


def _untyped_sum_axes(mesh, manual_axes, spec, ndim):
    """The manual axes (of size > 1) over which check_vma=False's transpose shares (and
    then sums) the cotangent of a value laid out as `spec`: those its cotangent's spec
    neither splits it over nor holds partial sums over (as JAX: a cotangent reduced
    over an axis, of a partial-sum input, is summed over it too)."""
    ct = _cotangent_spec(spec)
    named = _spec_axes(ct, ndim) | ct.unreduced
    return tuple(n for n, size in zip(mesh.axis_names, mesh.axis_sizes)
                 if n in manual_axes and n not in named and size > 1)


def _cotangent_spec(spec):
    """The spec of a cotangent of a value laid out as `spec` (reduced and unreduced
    axes swap, as JAX's to_ct_spec)."""
    if not spec.unreduced and not spec.reduced:
        return spec
    return spec.update(unreduced=spec.reduced, reduced=spec.unreduced)


def _all_axes_spec(manual_axes):
    """Dimension 0 split over every manual axis: one row per block (residuals)."""
    return PartitionSpec(tuple(manual_axes))


def _manual_mesh(mesh, manual_axes):
    """The mesh of the manual axes alone (one device along each automatic axis): its
    devices hold a shard_map's blocks, whatever the automatic axes do with them. (An
    AbstractMesh is laid over the first devices: the NumPy executor needs the blocks
    only.)"""
    if isinstance(mesh, sharding_mod.AbstractMesh):
        mesh = sharding_mod.concretize_mesh(mesh, devices_mod.devices()[:mesh.size])
    keep = tuple(slice(None) if n in manual_axes else 0 for n in mesh.axis_names)
    return sharding_mod.Mesh(mesh.devices[keep],
                             [n for n in mesh.axis_names if n in manual_axes])


# --- the primitive ----------------------------------------------------------------------

def _abstract_eval(*avals, jaxpr, mesh, manual_axes, in_specs, out_specs, check_vma,
                   name):
    for i, (aval, spec, expected) in enumerate(zip(avals, in_specs, jaxpr.in_avals)):
        block = _block_aval(aval, spec, mesh, f"shard_map of {name}, argument {i}")
        if not block.same_type(expected):
            raise TypeError(f"shard_map of {name}: operand {i} has type "
                            f"{aval.str_short(True)}, whose blocks "
                            f"({block.str_short(True)}) differ "
                            f"from what the body was traced for ({expected.str_short(True)}).")
    return [_global_aval(a, s, mesh, manual_axes) for a, s in zip(jaxpr.out_avals,
                                                                  out_specs)]


def _impl(*values, jaxpr, mesh, manual_axes, in_specs, out_specs, check_vma, name):
    """The NumPy executor: every block at once, under one vmap per manual axis."""
    mesh = _manual_mesh(mesh, manual_axes)
    sizes = tuple(mesh.axis_sizes)
    stacked = []
    for v, spec in zip(values, in_specs):
        v = np.asarray(v)
        blocks = [v[index] for index in NamedSharding(mesh, spec)._indices(v.shape)]
        stacked.append(np.stack(blocks).reshape(sizes + blocks[0].shape))
    batched = jaxpr
    names = list(mesh.axis_names)
    for k in reversed(range(len(names))):   # innermost axis first, outer ones still bound
        with contextlib.ExitStack() as stack:
            for name_, size in zip(names[:k], sizes[:k]):
                stack.enter_context(batching.extend_axis_env(name_, size))
            batched, _ = batching.batch_jaxpr(batched, sizes[k], [True] * len(values), True,
                                              names[k])
    outs = numpy_backend.execute_closed_jaxpr(batched, stacked)
    results = []
    for out, aval, spec in zip(outs, jaxpr.out_avals, out_specs):
        out = np.asarray(out).reshape((-1,) + aval.shape)
        shape = _global_aval(aval, spec, mesh, manual_axes).shape
        full = np.empty(shape, aval.dtype)
        for block, index in zip(out, NamedSharding(mesh, spec)._indices(shape)):
            full[index] = block
        results.append(full)
    return results


def _eager(*args, **params):
    """At top level: one SPMD program over the mesh (XLA), or the NumPy executor."""
    if devices_mod.xla_runtime() is None:
        avals = [get_aval(x) for x in args]
        outs = _impl(*[numpy_backend.host_value(x, a) for x, a in zip(args, avals)],
                     **params)
        return [numpy_backend.wrap(o, a)
                for o, a in zip(outs, _abstract_eval(*avals, **params))]
    arrays = [x if type(x) is Array else dispatch.as_host_array(x) for x in args]
    # The program computes what the results need, as jit's would (dead work in the body,
    # e.g. of a primitive with no lowering, is not compiled).
    body, _ = jx.prune_closed_jaxpr(params["jaxpr"], [True] * len(params["out_specs"]),
                                    [True] * len(args))
    closed = dispatch.single_primitive_jaxpr(shard_map_p, [x.aval for x in arrays],
                                             dict(params, jaxpr=body))
    mesh = params["mesh"]
    # Fully manual, the results are laid out as out_specs say (as JAX, size-1 axes kept);
    # automatic axes are left to the partitioner.
    out_shardings = ([NamedSharding(mesh, s) for s in params["out_specs"]]
                     if len(params["manual_axes"]) == len(mesh.axis_names) else None)
    return dispatch.run_sharded(closed, arrays, out_shardings=out_shardings,
                                where=f"shard_map of {params['name']}")


def _lower(ctx, *xs, jaxpr, mesh, manual_axes, in_specs, out_specs, check_vma, name):
    if ctx.module.mesh != mesh and not (isinstance(mesh, sharding_mod.AbstractMesh) and
                                        ctx.module.mesh.abstract_mesh == mesh):
        raise LoweringError(f"shard_map of {name} over {mesh} inside a program partitioned "
                            f"over {ctx.module.mesh}: one jit takes one mesh.")
    # (Rules that trace while lowering the body, e.g. scan's, see the body's mesh.)
    with _mesh_axes(mesh, manual_axes, check_vma):
        return ctx.manual_computation(manual_axes, list(xs), in_specs, jaxpr.in_avals,
                                      ctx.avals_out, out_specs,
                                      lambda c, *args: c.lower_jaxpr(jaxpr, list(args)))


def _jvp(primals, tangents, **params):
    mesh, manual_axes = params["mesh"], params["manual_axes"]
    return ad.jvp_mapped_call(
        shard_map_p, primals, tangents, params, "in_specs", "out_specs",
        lambda: _mesh_axes(mesh, manual_axes, params["check_vma"]),
        lambda aval, spec: _global_aval(aval, spec, mesh, manual_axes))


def _trace_body(fn, avals, mesh, manual_axes, check_vma):
    with _mesh_axes(mesh, manual_axes, check_vma):
        closed, hoisted = pe.trace_to_closed_jaxpr(fn, avals)
    assert not hoisted, "a shard_map rule's body closes over no outer tracer"
    return closed


def _partial_eval(trace, args, unknowns, params):
    """The known part runs now, returning its residuals one row per device (dimension 0
    split over every mesh axis); the unknown part, staged, takes them back."""
    jaxpr, mesh, manual = params["jaxpr"], params["mesh"], params["manual_axes"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    check_vma = params["check_vma"]
    with _mesh_axes(mesh, manual, check_vma):
        known, unknown, out_unknowns, num_res = pe.partial_eval_jaxpr_nounits(
            jaxpr, unknowns, instantiate=False)
    num_known = len(known.out_avals) - num_res
    res_avals = known.out_avals[num_known:]
    rows = _all_axes_spec(manual)

    def known_body(*xs):
        outs = jx.eval_jaxpr(known.jaxpr, known.consts, *xs)
        return outs[:num_known] + [st.reshape(r, (1,) + get_aval(r).shape)
                                   for r in outs[num_known:]]

    def unknown_body(*xs):
        residuals = [st.reshape(r, a.shape) for r, a in zip(xs[:num_res], res_avals)]
        return jx.eval_jaxpr(unknown.jaxpr, unknown.consts, *residuals, *xs[num_res:])

    known_args = [a for a, uk in zip(args, unknowns) if not uk]
    known_specs = tuple(s for s, uk in zip(in_specs, unknowns) if not uk)
    known_closed = _trace_body(known_body, known.in_avals, mesh, manual, check_vma)
    with set_current_trace(trace.parent):
        known_outs = shard_map_p.bind(*known_args, **dict(
            params, jaxpr=known_closed, in_specs=known_specs,
            out_specs=tuple(s for s, uk in zip(out_specs, out_unknowns) if not uk)
            + (rows,) * num_res))
    residuals = known_outs[num_known:]
    unknown_in_avals = [a.update(shape=(1,) + a.shape) for a in res_avals] + \
        [a for a, uk in zip(jaxpr.in_avals, unknowns) if uk]
    unknown_closed = _trace_body(unknown_body, unknown_in_avals, mesh, manual, check_vma)
    unknown_outs = iter(trace.stage(shard_map_p, residuals + [
        a for a, uk in zip(args, unknowns) if uk], dict(
            params, jaxpr=unknown_closed,
            in_specs=(rows,) * num_res + tuple(s for s, uk in zip(in_specs, unknowns) if uk),
            out_specs=tuple(s for s, uk in zip(out_specs, out_unknowns) if uk))))
    known_vals = iter(known_outs[:num_known])
    return [next(unknown_outs) if uk else next(known_vals) for uk in out_unknowns]


def _transpose(cts, *args, jaxpr, mesh, manual_axes, in_specs, out_specs, check_vma,
               **params):
    linear = [ad.is_undefined_primal(a) for a in args]
    with _mesh_axes(mesh, manual_axes, check_vma):
        transposed = ad.transpose_jaxpr(jaxpr, linear)
    nonlinear_avals = [a for a, lin in zip(jaxpr.in_avals, linear) if not lin]
    out_avals = jaxpr.out_avals
    linear_specs = [(s, a) for s, a, lin in zip(in_specs, jaxpr.in_avals, linear) if lin]

    def body(*xs):
        primals, cts_in = xs[:len(nonlinear_avals)], list(xs[len(nonlinear_avals):])
        if check_vma:   # the types place the sums (pvary transposes to psum_invariant)
            return jx.eval_jaxpr(transposed.jaxpr, transposed.consts, *primals, *cts_in)
        # Untyped (as JAX's check_vma=False): a replicated output's cotangent is shared
        # among its copies, and a replicated input's is the sum of the devices' shares.
        for i, (ct, spec, aval) in enumerate(zip(cts_in, out_specs, out_avals)):
            copies = math.prod(mesh.shape[n] for n in
                               _untyped_sum_axes(mesh, manual_axes, spec, aval.ndim))
            if copies > 1 and np.issubdtype(aval.dtype, np.inexact):
                cts_in[i] = ew.div(ct, np.array(copies, aval.dtype))   # a replicated output
        outs = jx.eval_jaxpr(transposed.jaxpr, transposed.consts, *primals, *cts_in)
        summed = []
        for ct, (spec, aval) in zip(outs, linear_specs):
            missing = _untyped_sum_axes(mesh, manual_axes, spec, aval.ndim)
            summed.append(parallel.psum(ct, missing) if missing else ct)
        return summed

    closed = _trace_body(body, nonlinear_avals + [ad.cotangent_aval(a) for a in out_avals],
                         mesh, manual_axes, check_vma)
    nonlinear = [a for a, lin in zip(args, linear) if not lin]
    outs = iter(shard_map_p.bind(
        *nonlinear, *[ad.instantiate_zeros(ct) for ct in cts], jaxpr=closed, mesh=mesh,
        manual_axes=manual_axes,
        in_specs=tuple(s for s, lin in zip(in_specs, linear) if not lin)
        + tuple(_cotangent_spec(s) for s in out_specs),
        out_specs=tuple(_cotangent_spec(s) for s, _ in linear_specs), check_vma=check_vma,
        **params))
    return [next(outs) if lin else None for lin in linear]


def _batch(axis, args, dims, *, jaxpr, mesh, manual_axes, in_specs, out_specs, check_vma,
           **params):
    """vmap of shard_map: the batch dimension (moved to 0) is split over the mesh axes
    of vmap's spmd_axis_name (each device maps its slice), or not split: without one,
    or where a spec already uses those axes (JAX refuses such user specs; pyjax's own
    residual specs name every manual axis, so it keeps the batch whole then)."""
    in_batched = [d is not None for d in dims]
    moved = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
    size, entry = axis.size, None
    spmd = axis.spmd_name
    if spmd is not None and not _uses_axes(in_specs + out_specs, spmd):
        pieces = math.prod(mesh.shape[n] for n in spmd)
        if size % pieces:
            raise ValueError(f"vmap of size {size} with spmd_axis_name={spmd}: the "
                             f"{pieces} devices of those mesh axes must divide the batch.")
        size //= pieces
        entry = spmd if len(spmd) > 1 else spmd[0]
    body_axis = batching.AxisData(axis.name, size)
    with _mesh_axes(mesh, manual_axes, check_vma):
        explicit = axis.batch_entry
        if explicit is not None:
            # The batch splits over Explicit axes left automatic: inside the body too.
            names = (explicit,) if isinstance(explicit, str) else explicit
            if _uses_axes(in_specs, names):
                raise ValueError("vmapped away explicit mesh axis cannot appear in "
                                 "shard_map in_specs")
            if not set(names) & set(manual_axes):
                body_axis = body_axis._replace(batch_sharding=NamedSharding(
                    sharding_mod.get_abstract_mesh(), PartitionSpec(explicit)))
        batched, _ = batching.batch_jaxpr(jaxpr, body_axis, in_batched, True)
    split = lambda spec: spec.update(partitions=(entry,) + spec.partitions)  # noqa: E731
    outs = shard_map_p.bind(
        *moved, jaxpr=batched, mesh=mesh, manual_axes=manual_axes,
        in_specs=tuple(split(s) if b else s for s, b in zip(in_specs, in_batched)),
        out_specs=tuple(split(s) for s in out_specs), check_vma=check_vma, **params)
    return outs, [0] * len(outs)


def _uses_axes(specs, names):
    """Whether one of the PartitionSpecs `specs` splits a dimension over one of `names`."""
    return any(n in names for spec in specs for part in spec.partitions
               if isinstance(part, (str, tuple))
               for n in ((part,) if isinstance(part, str) else part))


def _dce(used_outputs, eqn):
    return jx.dce_mapped_call(used_outputs, eqn, "in_specs", "out_specs")


def _samples():
    """A one-device mesh (the test process may have one device): a psum and an
    axis_index inside, a split and a replicated operand."""
    from pyjax._src.lax.builders import Sample, random_values
    mesh = sharding_mod.Mesh(np.array(devices_mod.devices()[:1], dtype=object), ("i",))
    x, y = random_values((2, 3), np.float32), random_values((2, 3), np.float32, seed=1)
    specs = (PartitionSpec("i"), PartitionSpec())
    with _mesh_axes(mesh, ("i",), True):   # (the body's arguments, typed as shard_map's)
        avals = [_vma_block_aval(get_aval(v), s, mesh, "sample") for v, s in zip((x, y), specs)]
    closed = _trace_body(lambda a, b: [parallel.psum(ew.mul(ew.sin(a), b), "i"),
                                       ew.cos(b)], avals, mesh, ("i",), True)
    return [Sample([x, y], {"jaxpr": closed, "mesh": mesh, "manual_axes": ("i",),
                            "in_specs": specs,
                            "out_specs": (PartitionSpec(), PartitionSpec()),
                            "check_vma": True, "name": "f"})]


shard_map_p = define_primitive(
    "shard_map", multiple_results=True, impl=_impl, abstract_eval=_abstract_eval,
    eager=_eager, jvp=_jvp, partial_eval=_partial_eval, transpose=_transpose,
    batch=_batch, batch_needs_axis=True, dce=_dce, lower=_lower, is_higher_order=True,
    effects=lambda jaxpr, **_: jaxpr.effects, samples=_samples)


# --- the API ------------------------------------------------------------------------------

class _InferFromArgs:
    """shard_map's and smap's default in_specs/in_axes: taken from the arguments'
    shardings (over Explicit mesh axes)."""

    def __repr__(self):
        return "jax.sharding.Infer"


Infer = _InferFromArgs()


def _as_spec(spec, what):
    if spec is None:
        return PartitionSpec()
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"shard_map {what} entries must be PartitionSpecs (jax.P(...)), "
                        f"got {spec!r} of type {type(spec)}.")
    return spec


def _is_spec_leaf(x):
    return x is None or isinstance(x, PartitionSpec)


def _leaf_specs(specs, tree, what):
    """Per leaf of `tree`: (the key path of its entry in the prefix `specs`, the entry)."""
    entries, spec_tree = tree_util.tree_flatten_with_path(specs, is_leaf=_is_spec_leaf)
    positions = tree_util.prefix_broadcast(
        tree_util.tree_unflatten(spec_tree, list(range(len(entries)))), tree, what)
    return [entries[i] for i in positions]


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(),
              check_vma=True, check_rep=None):
    """f, written for one block of each argument, run on every device of `mesh`: each
    argument is split as its PartitionSpec in `in_specs` says (a pytree prefix of the
    arguments; None marks a static, non-array argument; by default each argument's
    sharding over Explicit mesh axes), and the results are assembled from the blocks as
    `out_specs` says."""
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                   axis_names=axis_names, check_vma=check_vma,
                                   check_rep=check_rep)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, but got "
                        f"{f} of type {type(f)}.")
    name = fun_name(f)
    if check_rep is not None:
        check_vma = check_rep

    def wrapped(*args):
        the_mesh, manual = _mesh_and_manual_axes(mesh, axis_names, name)
        if in_specs is Infer:
            _check_explicit(the_mesh, manual, "shard_map")
        else:
            _check_specs("in", in_specs, manual, the_mesh)
            _check_reductions("in", the_mesh, manual, in_specs)
        _check_specs("out", out_specs, manual, the_mesh)
        _check_reductions("out", the_mesh, manual, out_specs)
        _check_spmd_names("in", in_specs)
        leaf_paths, in_tree = tree_util.tree_flatten_with_path(args)
        leaves = [x for _, x in leaf_paths]
        if in_specs is Infer:
            entries = [((), _inferred_spec(x, the_mesh, manual, name)) for x in leaves]
        else:
            entries = _leaf_specs(in_specs, in_tree, "shard_map in_specs")
        dynamic = [spec is not None for _, spec in entries]
        specs = tuple(_as_spec(s, "in_specs") for (_, s), d in zip(entries, dynamic) if d)
        dyn_leaves = [x for x, d in zip(leaves, dynamic) if d]
        avals = [get_aval(x) for x in dyn_leaves]
        for spec, aval in zip(specs, avals):
            NamedSharding(the_mesh, spec)   # unknown or repeated axis names raise here
            _check_reductions_match(spec, aval)
        in_fails = [(path, aval, key) for (key, spec), (path, _), d, aval in zip(
            entries, leaf_paths, dynamic, _spread(avals, dynamic)) if d]
        _check_in_ranks(f, name, in_fails, specs)
        _check_divisible(f, name, the_mesh, in_fails, specs)
        if in_specs is not Infer:
            _check_explicit_specs_match(the_mesh, manual, specs, avals)
        if isinstance(the_mesh, sharding_mod.AbstractMesh) and \
                current_trace() is Trace.root:
            the_mesh = _concrete_mesh(the_mesh, dyn_leaves)
        if current_trace() is Trace.root and not _has_reductions((specs, out_specs)):
            return _run_eagerly(f, name, the_mesh, manual, check_vma, leaves, dynamic,
                                in_tree, specs, out_specs)
        out_box = []

        def flat_body(*block_leaves):
            blocks = iter(block_leaves)
            full = [next(blocks) if d else x for x, d in zip(leaves, dynamic)]
            out = f(*tree_util.tree_unflatten(in_tree, full))
            out_paths, out_tree = tree_util.tree_flatten_with_path(out)
            out_entries = _leaf_specs(out_specs, out_tree, "shard_map out_specs")
            # (the paths only: the leaves are tracers, which must not outlive the trace)
            out_box.append(([path for path, _ in out_paths], out_tree, out_entries))
            outs = [x for _, x in out_paths]
            if not check_vma:
                return outs
            return [_cast_to_spec(x, spec) for x, (_, spec) in zip(outs, out_entries)]

        with _mesh_axes(the_mesh, manual, check_vma, current_trace() is Trace.root):
            blocks = [_vma_block_aval(a, s, the_mesh, f"shard_map of {name}, argument {i}")
                      for i, (a, s) in enumerate(zip(avals, specs))]
            closed, hoisted = pe.trace_to_closed_jaxpr(flat_body, blocks)
        out_paths, out_tree, out_entries = out_box[-1]
        o_specs = tuple(_as_spec(s, "out_specs") for _, s in out_entries)
        for spec in o_specs:
            NamedSharding(the_mesh, spec)
        _check_spmd_names("out", o_specs)
        out_fails = [(path, aval, key) for (key, _), path, aval in zip(
            out_entries, out_paths, closed.out_avals)]
        _check_out_ranks(name, out_fails, o_specs)
        if check_vma:
            _check_replication(closed.out_avals, o_specs, [key for key, _ in out_entries],
                               the_mesh, manual, name)
        outs = shard_map_p.bind(
            *hoisted, *dyn_leaves, jaxpr=closed, mesh=the_mesh, manual_axes=manual,
            in_specs=(PartitionSpec(),) * len(hoisted) + specs, out_specs=o_specs,
            check_vma=bool(check_vma), name=name)
        return tree_util.tree_unflatten(out_tree, outs)

    wrapped.__name__ = getattr(f, "__name__", "shard_map")
    wrapped.__wrapped__ = f
    return wrapped


# --- eager: called outside every transformation, the body runs op by op ------------------

class _EagerTracer(Tracer):
    """A value inside an eager shard_map body: `stored` holds the blocks of every device,
    stacked along a leading dimension split over the manual axes the value varies along
    (with check_vma; over every manual axis without), so one the same on every device is
    held once; `aval` is one block's type, as the traced body has it."""

    __slots__ = ("stored", "aval")

    def __init__(self, trace, stored, aval):
        self._trace, self.stored, self.aval = trace, stored, aval

    def to_concrete_value(self):
        # Known where the types say every device holds the same value (as JAX's).
        mat = self.aval.mat
        if not self._trace.check_vma or mat.varying or mat.unreduced or mat.reduced:
            return None
        return np.asarray(self.stored)[0]

    def __str__(self):   # every device's block, as JAX prints them
        mesh = self._trace.mesh
        stacked = _stored_axes(self._trace, self.aval)
        blocks = np.asarray(self.stored)
        names = ", ".join(map(str, mesh.axis_names))
        lines = []
        for index, device in np.ndenumerate(mesh.devices):
            at = dict(zip(mesh.axis_names, index))
            row = 0
            for n in stacked:
                row = row * mesh.shape[n] + at[n]
            lines.append(f"On {device} at mesh coordinates ({names},) = {index}:\n"
                         f"{blocks[row]}\n")
        return "\n".join(lines)

    __repr__ = __str__


def _stored_axes(trace, aval):
    """The manual axes (mesh order) an _EagerTracer's leading dimension is split over."""
    axes = aval.vma if trace.check_vma else trace.manual_axes
    return tuple(n for n in trace.mesh.axis_names if n in axes)


class _EagerTrace(Trace):
    """JAX's eager shard_map: each primitive the body binds runs at once, as a one-op
    shard_map program over the blocks, so Python sees concrete values (a psum's result
    can steer an `if`) and printing a value shows every device's block."""

    new_ref_error = ("Eager shard_map cannot return a `jax.Ref`. Please wrap your "
                     "shard_map in `jax.jit`.")

    def __init__(self, mesh, manual_axes, check_vma, name):
        super().__init__()
        self.mesh, self.manual_axes, self.check_vma, self.name = (mesh, manual_axes,
                                                                    check_vma, name)

    def lift(self, x):
        """A value from outside the body (a constant): the same on every device."""
        sharding_rules.refuse_closed_over_explicit([get_aval(x)])
        return self.enter(x, PartitionSpec())

    def enter(self, x, spec):
        """The blocks of the array `x` laid out as `spec`, as a tracer of this trace."""
        with set_current_trace(self.parent):
            where = f"shard_map of {self.name}"
            with _mesh_axes(self.mesh, self.manual_axes, self.check_vma):
                block = _vma_block_aval(get_aval(x), spec, self.mesh, where)
            stored_spec = PartitionSpec(_stored_axes(self, block))
            [stored] = self._run(lambda b: [st.expand_dims(b, (0,))], [x], (spec,),
                                 (stored_spec,))
        return _EagerTracer(self, stored, block)

    def leave(self, tracer, spec):
        """The global array of `tracer`'s blocks laid out as `spec` (an out_spec)."""
        source = PartitionSpec(_stored_axes(self, tracer.aval))

        def body(b):
            b = st.squeeze(b, (0,))
            return [_cast_to_spec(b, spec) if self.check_vma else b]

        with set_current_trace(self.parent):
            return self._run(body, [tracer.stored], (source,), (spec,))[0]

    def _run(self, body, args, in_specs, out_specs):
        """`body` over the blocks of `args`, one shard_map program run now."""
        return self._bind(self._trace_over_blocks(body, args, in_specs), args, in_specs, out_specs)

    def _trace_over_blocks(self, body, args, in_specs):
        """`body` traced over the blocks of `args` (laid out as `in_specs`)."""
        with _mesh_axes(self.mesh, self.manual_axes, self.check_vma):
            blocks = [_vma_block_aval(get_aval(x), s, self.mesh, self.name)
                      for x, s in zip(args, in_specs)]
        return _trace_body(body, blocks, self.mesh, self.manual_axes, self.check_vma)

    def _bind(self, closed, args, in_specs, out_specs):
        return shard_map_p.bind(*args, jaxpr=closed, mesh=self.mesh,
                                manual_axes=self.manual_axes, in_specs=in_specs,
                                out_specs=out_specs, check_vma=self.check_vma,
                                name=self.name)

    def process_primitive(self, prim, args, params):
        tracers = [self.own_or_lift(x) for x in args]
        closed, in_specs, out_specs, out_avals = self._op_program(prim, params, tracers)
        with set_current_trace(self.parent):
            outs = self._bind(closed, [t.stored for t in tracers], in_specs, out_specs)
        outs = [_EagerTracer(self, o, a) for o, a in zip(outs, out_avals)]
        return outs if prim.multiple_results else outs[0]

    def _op_program(self, prim, params, tracers):
        """(the one-op body, its in/out specs, the op's result types), cached per op and
        operand types so each op compiles once."""
        key = (prim, self.mesh, self.manual_axes, self.check_vma,
               *[(t.aval, get_aval(t.stored)) for t in tracers], *params.items())
        try:
            return _op_programs[key]
        except KeyError:
            pass
        except TypeError:   # an unhashable param: built every time
            key = None
        in_specs = tuple(PartitionSpec(_stored_axes(self, t.aval)) for t in tracers)
        op_avals = []

        def body(*blocks):
            outs = prim.bind(*[st.squeeze(b, (0,)) for b in blocks], **params)
            outs = list(outs) if prim.multiple_results else [outs]
            op_avals.extend(get_aval(o) for o in outs)
            if not all(isinstance(a, ShapedArray) for a in op_avals):
                raise NotImplementedError(
                    f"Eager shard_map of {self.name}: {prim.name} gives a token, which "
                    "eager shard_map does not implement (each op runs as its own "
                    "program). Please wrap your shard_map in `jax.jit`.")
            return [st.expand_dims(o, (0,)) for o in outs]

        with set_current_trace(self.parent):
            closed = self._trace_over_blocks(body, [t.stored for t in tracers], in_specs)
        for aval in op_avals:
            if aval.mat.unreduced or aval.mat.reduced:
                raise NotImplementedError(
                    f"Eager shard_map of {self.name}: {prim.name} gives a value with "
                    "unreduced/reduced axes, which eager shard_map does not implement. "
                    "Please wrap your shard_map in `jax.jit`.")
        program = (closed, in_specs,
                   tuple(PartitionSpec(_stored_axes(self, a)) for a in op_avals), op_avals)
        if key is not None:
            if len(_op_programs) >= _MAX_OP_PROGRAMS:   # (e.g. a new callback each call)
                _op_programs.clear()
            _op_programs[key] = program
        return program


# (op, mesh, operand types, params) -> _EagerTrace._op_program's result. A race only
# builds an equal program twice.
_op_programs: dict = {}
_MAX_OP_PROGRAMS = 4096


def _run_eagerly(f, name, mesh, manual, check_vma, leaves, dynamic, in_tree, specs,
                 out_specs):
    """shard_map called outside every transformation: f runs once, in Python, on
    _EagerTracers (as JAX's eager shard_map), its results assembled as out_specs say."""
    trace = _EagerTrace(mesh, manual, check_vma, name)
    try:
        with _mesh_axes(mesh, manual, check_vma, eager=True):
            blocks = iter([trace.enter(x, s) for x, s in
                           zip([x for x, d in zip(leaves, dynamic) if d], specs)])
            full = [next(blocks) if d else x for x, d in zip(leaves, dynamic)]
            with set_current_trace(trace):
                out = f(*tree_util.tree_unflatten(in_tree, full))
            out_paths, out_tree = tree_util.tree_flatten_with_path(out)
            outs = [trace.own_or_lift(x) for _, x in out_paths]
    finally:
        trace.end()
    out_entries = _leaf_specs(out_specs, out_tree, "shard_map out_specs")
    o_specs = tuple(_as_spec(s, "out_specs") for _, s in out_entries)
    for spec in o_specs:
        NamedSharding(mesh, spec)
    _check_spmd_names("out", o_specs)
    keys = [key for key, _ in out_entries]
    _check_out_ranks(name, [(path, t.aval, key) for (path, _), t, key in
                            zip(out_paths, outs, keys)], o_specs)
    if check_vma:
        _check_replication([t.aval for t in outs], o_specs, keys, mesh, manual, name)
    return tree_util.tree_unflatten(out_tree, [trace.leave(t, s)
                                               for t, s in zip(outs, o_specs)])


def _concrete_mesh(mesh, args):
    """The devices an eager shard_map over the AbstractMesh `mesh` runs on: those of the
    context mesh, or of the mesh its arguments are laid out over (JAX's errors where
    they are not laid out over a mesh of its shape)."""
    found = sharding_mod.concrete_mesh_of(mesh, sharding_mod.current_mesh())
    for x in args:
        held = getattr(x, "_sharding", None) if type(x) is Array else None
        if isinstance(held, NamedSharding) and held.mesh.size > 1:
            if held.mesh.shape_tuple != mesh.shape_tuple:
                raise ValueError(
                    f"Mesh shape of the input {held.mesh.shape_tuple} does not match the "
                    f"mesh shape passed to shard_map {mesh.shape_tuple} for shape "
                    f"{x.aval._dtype_and_shape()}")
            found = held.mesh
    if found is None:
        raise ValueError("Please pass `jax.Array`s with a `NamedSharding` as input to "
                         "`shard_map` when passing `AbstractMesh` to the mesh argument.")
    return found


def _check_spmd_names(prefix, specs):
    """A vmap around with spmd_axis_name splits its batch over those mesh axes: the specs
    may not name them (JAX's error; jax_disable_vmap_shmap_error lets them, the batch
    then staying whole)."""
    spmd = batching.spmd_mesh_axes()
    if not spmd or config.disable_vmap_shmap_error.value:
        return
    leaves = tree_util.tree_leaves(specs, is_leaf=lambda x: isinstance(x, PartitionSpec))
    if _uses_axes([s for s in leaves if isinstance(s, PartitionSpec)], spmd):
        raise ValueError(f"vmap spmd_axis_name cannot appear in shard_map {prefix}_specs")


def _cast_to_spec(x, spec):
    """A body's output as its out_spec types it (as JAX casts it): varying along the axes
    the spec splits it over (an implicit pvary), and partial sums over the spec's
    unreduced axes it varies along."""
    if not isinstance(spec, PartitionSpec) or len(spec) > get_aval(x).ndim:
        return x   # (its spec is refused after tracing)
    x = parallel.vary_along(x, _spec_axes(spec, get_aval(x).ndim))
    unreduced = spec.unreduced - get_aval(x).mat.unreduced
    if unreduced:
        x = parallel.vary_unreduced_cast_p.bind(
            x, axes=sharding_mod.order_wrt_mesh(unreduced))
    return x


def _has_reductions(specs):
    """Whether a PartitionSpec among `specs` names unreduced or reduced axes."""
    return any(isinstance(s, PartitionSpec) and (s.unreduced or s.reduced)
               for s in tree_util.tree_leaves(specs, is_leaf=_is_spec_leaf))


def _spread(values, flags):
    """`values` placed at the True positions of `flags` (None elsewhere)."""
    it = iter(values)
    return [next(it) if flag else None for flag in flags]


def _check_explicit(mesh, manual_axes, api):
    """Specs can be inferred from the arguments only over Explicit axes (JAX's message)."""
    types = dict(zip(mesh.axis_names, mesh.axis_types))
    if all(types[n] == sharding_mod.AxisType.Explicit for n in manual_axes):
        return
    names = frozenset(manual_axes)
    kinds = ", ".join(f"AxisType.{types[n].name}" for n in manual_axes)
    if api == "smap":
        raise TypeError(f"in_axes was not specified when axis_name={names} was of "
                        f"type {kinds}")
    raise TypeError("shard_map in_specs argument must be a pytree of "
                    "`jax.sharding.PartitionSpec` instances, but it was `None` when "
                    f"axis_names={names} are of type {kinds}")


def _check_explicit_specs_match(mesh, manual_axes, specs, avals):
    """Over a mesh whose axes are all manual here and all Explicit, each argument is
    already laid out by its type: in_specs must say that layout (JAX's check; it leaves
    out the axes a vmap maps over)."""
    types = dict(zip(mesh.axis_names, mesh.axis_types))
    if (frozenset(mesh.axis_names) - batching.mapped_mesh_axes() != frozenset(manual_axes)
            or any(types[n] != sharding_mod.AxisType.Explicit for n in manual_axes)):
        return
    for spec, aval in zip(specs, avals):
        # as the argument's type would say it (padded; size-1 axes dropped if so set)
        given = sharding_mod.type_sharding(NamedSharding(mesh, spec), aval.ndim).spec
        if aval.sharding.spec != given:
            raise ValueError(
                f"in_specs passed to shard_map: {given} does not match the specs of the "
                f"input: {aval.sharding.spec} for arg: {aval.str_short()}. `in_specs` is "
                "an optional argument so you can omit specifying it and shard_map will "
                "infer the in_specs from the arguments. If you want to reshard your "
                "inputs, you can use `jax.reshard` on the arguments and then pass those "
                "args to shard_map.")


def _inferred_spec(x, mesh, manual_axes, name):
    """An argument's own spec, restricted to the manual axes (in_specs=Infer): its type's
    sharding (partial sums and reduced values included), so an unsharded value is
    replicated, eagerly and under a trace alike."""
    sharding = get_aval(x).sharding
    parts = []
    for entry in sharding.spec.partitions:
        names = () if entry is None else (entry,) if isinstance(entry, str) else entry
        kept = tuple(n for n in names if n in manual_axes)
        parts.append(None if not kept else kept[0] if len(kept) == 1 else kept)
    spec = PartitionSpec(*parts, unreduced=sharding.spec.unreduced,
                         reduced=sharding.spec.reduced)
    _check_reductions("in", mesh, manual_axes, [spec])
    return spec


def _check_reductions_match(spec, aval):
    """An in_spec names the partial sums / reduced axes its argument's type has."""
    typed = aval._sharding
    for what in ("unreduced", "reduced"):
        held = getattr(typed.spec, what) if typed is not None else frozenset()
        if getattr(spec, what) != held:
            raise ValueError(f"in_specs containing {what} {spec} passed to shard_map should "
                             f"be equal to the {what} present on the in_aval "
                             f"{aval.str_short(True)}")


def _check_reductions(prefix, mesh, manual_axes, specs):
    """JAX's checks of unreduced/reduced axes in shard_map specs."""
    types = dict(zip(mesh.axis_names, mesh.axis_types))
    for s in tree_util.tree_leaves(specs, is_leaf=lambda x: isinstance(x, PartitionSpec)):
        if not isinstance(s, PartitionSpec) or not (s.unreduced or s.reduced):
            continue
        if frozenset(mesh.axis_names) != frozenset(manual_axes):
            raise NotImplementedError(
                f"unreduced/reduced can only be passed to {prefix}_specs when shard_map is "
                f"in full manual mode. Got mesh axis names {mesh.axis_names}, manual_axes: "
                f"{frozenset(manual_axes)}, specs: {s}. Please file a bug at "
                "https://github.com/jax-ml/jax/issues.")
        for what, axes in (("unreduced", s.unreduced), ("reduced", s.reduced)):
            if any(types[n] != sharding_mod.AxisType.Explicit for n in axes):
                raise ValueError(
                    f"{what} in {prefix}_specs {s} can only be used when the mesh passed "
                    "to shard_map contains axis names all of type `Explicit`. Got mesh "
                    f"{mesh}")


def _arg_where(f, path):
    """For messages: which parameter of f the argument at `path` (into args) binds."""
    name = fun_name(f)
    try:
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.kind not in (p.KEYWORD_ONLY, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        return ""
    index = path[0].idx
    if index < len(params) and params[index].kind != params[index].VAR_POSITIONAL:
        return f", where args{path[0]} is bound to {name}'s parameter '{params[index].name}',"
    if params and params[-1].kind == params[-1].VAR_POSITIONAL:
        return (f", where args{path[0]} is the index {index - len(params) + 1} component "
                f"of {name}'s varargs parameter '{params[-1].name}',")
    return ""   # f cannot take these arguments: its call will say so


def _rank_error(name, prefix, base, fails):
    msgs = [f"* {prefix}_specs{tree_util.keystr(key)} is {spec} which has length "
            f"{len(spec)}, but {base}{tree_util.keystr(path)}{where} has shape "
            f"{aval._dtype_and_shape()}, which has rank {aval.ndim} (and {aval.ndim} < {len(spec)})"
            for path, aval, key, spec, where in fails]
    msg = (f"shard_map applied to the function '{name}' was given an {prefix}_specs entry "
           "which is too long to be compatible with the corresponding "
           f"{prefix}put value from the function:\n\n" + _bullets(msgs) + "\n\n"
           f"Entries in {prefix}_specs must be of length no greater than the number of "
           f"axes in the corresponding {prefix}put value.\n\nEither revise the spec to be "
           f"shorter, or modify '{name}' so that its {prefix}puts have sufficient rank.")
    if any(aval.ndim == 0 for _, aval, *_ in fails):
        msg += (f"\n\nFor scalar values (rank 0), consider using an {prefix}_specs entry "
                "of `P()`, where `P = jax.sharding.PartitionSpec`.")
    return ValueError(msg)


def _bullets(msgs):
    return msgs[0][2:] if len(msgs) == 1 else "\n\n".join(msgs)


def _check_in_ranks(f, name, fails, specs):
    bad = [(path, aval, key, spec, _arg_where(f, path))
           for (path, aval, key), spec in zip(fails, specs) if len(spec) > aval.ndim]
    if bad:
        raise _rank_error(name, "in", "the passed args", bad)


def _check_out_ranks(name, fails, specs):
    bad = [(path, aval, key, spec, "")
           for (path, aval, key), spec in zip(fails, specs) if len(spec) > aval.ndim]
    if bad:
        raise _rank_error(name, "out", f"{name}(*args)", bad)


def _check_divisible(f, name, mesh, fails, specs):
    msgs = []
    for (path, aval, key), spec in zip(fails, specs):
        for d, names in enumerate(spec._normalized(aval.ndim)):
            size = math.prod(mesh.shape[n] for n in names)
            if aval.shape[d] % size:
                axis = f"axes {names}" if len(names) > 1 else f"axis '{names[0]}'"
                total = "total " if len(names) > 1 else ""
                msgs.append(
                    f"* the passed args{tree_util.keystr(path)} of shape "
                    f"{aval._dtype_and_shape()}{_arg_where(f, path)} corresponds to "
                    f"in_specs{tree_util.keystr(key)} of value {spec}, which maps array "
                    f"axis {d} (of size {aval.shape[d]}) to mesh {axis} (of {total}size "
                    f"{size}), but {size} does not evenly divide {aval.shape[d]}")
    if msgs:
        raise ValueError(
            f"shard_map applied to the function '{name}' was given argument arrays with "
            "axis sizes that are not evenly divisible by the corresponding mesh axis "
            f"sizes:\n\nThe mesh given has shape {tuple(mesh.axis_sizes)} with "
            f"corresponding axis names {mesh.axis_names}.\n\n" + _bullets(msgs) +
            "\n\nArray arguments' axis sizes must be evenly divisible by the mesh axis or "
            "axes indicated by the corresponding elements of the argument's in_specs "
            "entry. Consider checking that in_specs are correct, and if so consider "
            f"changing the mesh axis sizes or else padding the input and adapting '{name}' "
            "appropriately.")


def _mesh_and_manual_axes(mesh, axis_names, name):
    """The mesh a shard_map runs over (`mesh`, or the one of the shard_map or context
    around it) and the axes it makes manual, in mesh order: `axis_names` (default: every
    axis not already manual); the others stay automatic, for XLA to partition."""
    around = sharding_mod.current_manual()
    if mesh is None:
        mesh = around[0] if around is not None else sharding_mod.current_mesh()
        if mesh is None:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` "
                             f"to enter into a mesh context (shard_map of {name}), or pass "
                             "mesh=jax.make_mesh(...).")
    else:
        context = sharding_mod.get_abstract_mesh()
        if not isinstance(mesh, (sharding_mod.Mesh, sharding_mod.AbstractMesh)):
            raise TypeError(f"shard_map requires a `jax.sharding.Mesh` or a "
                            f"`jax.sharding.AbstractMesh` instance for its second "
                            f"argument, but got {mesh} of type {type(mesh)}.")
        if not context.empty and mesh.abstract_mesh != context:
            raise ValueError(f"The context mesh {context} should match the mesh passed "
                             f"to shard_map {mesh}")
    if not isinstance(axis_names, (set, frozenset)):
        raise TypeError("`axis_names` argument of shard_map should be of type "
                        f"`frozenset` or `set`. Got type: {type(axis_names)}")
    already = around[1] if around is not None and around[0] == mesh else ()
    # (The Explicit axes a vmap around maps over are its batch's, not the body's.)
    available = frozenset(mesh.axis_names) - frozenset(already) - \
        batching.mapped_mesh_axes()
    axis_names = frozenset(axis_names) or available
    if not axis_names <= available:
        raise ValueError(f"jax.shard_map requires axis_names={set(axis_names)} to be a "
                         f"subset of mesh.axis_names={set(available)}")
    return mesh, tuple(n for n in mesh.axis_names if n in axis_names)


def _check_specs(prefix, specs, manual_axes, mesh):
    """Specs may split dimensions over the manual axes only (JAX's message)."""
    found = []
    for path, spec in tree_util.tree_flatten_with_path(
            specs, is_leaf=lambda x: x is None or isinstance(x, PartitionSpec))[0]:
        if not isinstance(spec, PartitionSpec):
            continue
        for entry in spec.partitions:
            for n in (() if entry is None or entry is sharding_mod.UNCONSTRAINED else
                      (entry,) if isinstance(entry, str) else entry):
                if n not in manual_axes:
                    found.append(f"  {prefix}_specs{tree_util.keystr(path)} refers to "
                                 f"{n!r}")
    if found:
        raise ValueError(
            f"shard_map {prefix}_specs argument must refer to an axis marked as manual "
            f"({set(manual_axes)}), but:\n\n" + "\n\n".join(found) +
            f"\n\nCheck the {prefix}_specs values passed to shard_map.")


# --- smap: shard_map over one mesh axis ----------------------------------------------------

def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """shard_map over the one mesh axis `axis_name` of the context mesh (jax.set_mesh),
    with vmap-style axes: in_axes/out_axes say which array dimension is split over that
    axis (None: not split; the value is the same on every device)."""
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got "
                        f"{axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or a tuple "
                        "of entries corresponding to the positional arguments passed to "
                        f"the function, but got {in_axes}.")
    is_axis = lambda a: a is None or isinstance(a, int)   # noqa: E731
    if in_axes is not Infer and not all(isinstance(a, int) for a in tree_util.tree_leaves(
            in_axes)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) "
                        f"container with those types as leaves, but got {in_axes}.")
    if not all(isinstance(a, int) for a in tree_util.tree_leaves(out_axes)):
        raise TypeError("smap out_axes must be an int, None, or (nested) container with "
                        f"those types as leaves, but got {out_axes}.")
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)

    def spec(axis):
        return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, axis_name)

    def wrapped(*args):
        mesh = sharding_mod.current_mesh()
        if mesh is None:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                             "enter into a mesh context")
        if in_axes is Infer:
            _check_explicit(mesh, (axis_name,), "smap")
        in_specs = Infer if in_axes is Infer else tree_util.tree_map(spec, in_axes,
                                                                     is_leaf=is_axis)
        out_specs = tree_util.tree_map(spec, out_axes, is_leaf=is_axis)
        # The context's mesh (inside a shard_map body, with its manual axes), as JAX.
        return shard_map(f, in_specs=in_specs, out_specs=out_specs,
                         axis_names=frozenset({axis_name}))(*args)

    wrapped.__name__ = getattr(f, "__name__", "smap")
    wrapped.__wrapped__ = f
    return wrapped


# --- check_vma: out_specs against the types ---------------------------------------------

def _check_replication(out_avals, out_specs, out_keys, mesh, manual_axes, name):
    """JAX's check_vma: an out_spec that leaves a manual axis out claims the value agrees
    along it; refuse a value whose type says it may vary there (JAX's message)."""
    in_mesh_order = lambda axes: ",".join(n for n in mesh.axis_names if n in axes)  # noqa: E731
    msgs = []
    for aval, spec, key in zip(out_avals, out_specs, out_keys):
        named = _spec_axes(spec, aval.ndim)
        axes = aval.vma
        agreeing = _missing_axes(mesh, manual_axes, spec, aval.ndim) + tuple(spec.reduced)
        if not any(n in axes for n in agreeing):
            continue
        unmentioned = [n for n in manual_axes if n not in named]
        where = f"* out_specs{tree_util.keystr(key)} is {spec} which implies that the "
        if len(unmentioned) > 1:
            msgs.append(
                f"{where}corresponding output value is only varying across mesh axes "
                f"{{{in_mesh_order(named)}}} and not "
                f"{{{in_mesh_order([n for n in unmentioned if n in axes])}}}, but it was "
                f"inferred to be possibly varying over {{{in_mesh_order(axes)}}}")
        else:
            msgs.append(f"{where}corresponding output value is replicated across mesh "
                        f"axis '{unmentioned[0]}', but could not infer replication over "
                        "any axes")
    if msgs:
        raise ValueError(
            f"shard_map applied to the function '{name}' was given out_specs which "
            "require replication which can't be statically inferred given the mesh:\n\n"
            f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis "
            f"names {mesh.axis_names}.\n\n" + _bullets(msgs) + "\n\nCheck if these "
            "output values are meant to be replicated over those mesh axes. If not, "
            "consider revising the corresponding out_specs entries. If so, consider "
            "disabling the check by passing the check_vma=False argument to "
            "`jax.shard_map`.")


def experimental_shard_map(f, mesh, in_specs, out_specs, check_rep=True, auto=frozenset()):
    """jax.experimental.shard_map.shard_map: the older positional spelling (`auto`: the
    mesh axes left automatic)."""
    return shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                     check_vma=check_rep,
                     axis_names=frozenset(mesh.axis_names) - frozenset(auto))
