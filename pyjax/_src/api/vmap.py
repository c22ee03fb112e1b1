"""vmap: vectorizing a function over an axis of its arguments by running it once on
BatchTracers (interpreters/batching.py). Imports tree_util, core, interpreters, array."""
from __future__ import annotations

import inspect
import operator

from pyjax._src import config, tree_util
from pyjax._src.array import as_array
from pyjax._src.core.avals import AbstractRef, get_aval, is_valid_jax_type
from pyjax._src.core.trace import check_for_leaks, set_current_trace, transform_name_stack
from pyjax._src.interpreters import batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.util import check_callable
from pyjax._src.util import wraps
from pyjax._src.traceback_util import api_boundary

_VMAP_DOC = ("Vectorized version of {fun}. Takes similar arguments as {fun} but with "
             "additional array axes over which {fun} is mapped.")


def _check_axes_spec(axes, what):
    """JAX's rules: ints (not bools) or None as leaves; in_axes' top level is a tuple."""
    if what == "in_axes" and not (axes is None or type(axes) in (int, tuple)):
        raise TypeError(f"vmap in_axes must be an int, None, or a tuple of entries "
                        f"corresponding to the positional arguments passed to the "
                        f"function, but got {axes}.")
    leaves = tree_util.tree_leaves(axes, is_leaf=lambda x: x is None)
    if not all(x is None or type(x) is int for x in leaves):
        raise TypeError(f"vmap {what} must be an int, None, or (nested) container with "
                        f"those types as leaves, but got {axes}.")


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
    """Vectorizes `fun` over one axis: argument leaves are mapped along their `in_axes`
    entry (None: not mapped; keyword arguments along axis 0), and results carry the mapped
    axis at `out_axes`. `axis_name` names the axis for collectives (lax.psum, ...);
    `axis_size` gives the size when no argument is mapped. `spmd_axis_name` (mesh axis
    names) splits the mapped axis over those mesh axes where the function runs a
    shard_map (its specs gain them); elsewhere it changes nothing."""
    check_callable(fun, "vmap")
    if isinstance(in_axes, list):   # lists are tuples here, as in JAX
        in_axes = tuple(in_axes)
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if axis_size is not None:
        try:
            axis_size = operator.index(axis_size)
        except TypeError:
            raise TypeError(f"vmap axis_size must be an int, got {axis_size!r}") from None
        if axis_size < 0:
            raise ValueError(f"vmap axis_size must be non-negative, got {axis_size}")

    spmd_name = (None if spmd_axis_name is None else tuple(spmd_axis_name)
                 if isinstance(spmd_axis_name, (tuple, list)) else (spmd_axis_name,))

    @wraps(fun, docstr=_VMAP_DOC + ("\n\nOriginal documentation:\n\n" + fun.__doc__
                                     if getattr(fun, "__doc__", None) else ""))
    @api_boundary
    def vmap_f(*args, **kwargs):
        return _call(fun, in_axes, out_axes, axis_name, axis_size, args, kwargs, spmd_name)

    return vmap_f


def _call(fun, in_axes, out_axes, axis_name, axis_size, args, kwargs, spmd_name=None):
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries "
                         f"corresponding to the positional arguments passed to the "
                         f"function, but got len(in_axes)={len(in_axes)}, "
                         f"len(args)={len(args)}")
    # a vmappable container (a sparse array) is mapped as a whole, along its own axis
    arg_leaves, arg_tree = tree_util.tree_flatten(args, is_leaf=batching.is_vmappable)
    kw_leaves, kw_tree = tree_util.tree_flatten(kwargs, is_leaf=batching.is_vmappable)
    leaves = arg_leaves + kw_leaves
    axes = tree_util.prefix_broadcast(in_axes, arg_tree, "vmap in_axes") + [0] * len(kw_leaves)
    # jax.Ref arguments mapped along an axis: the function sees a Ref holding the
    # batched value, and the value it leaves there is stored back, mapped alike
    refs = {i: x for i, x in enumerate(leaves) if type(x) is AbstractRef.ref_type}
    if refs:
        _refuse_ref_views(fun, args, kwargs)
    if len({id(r) for r in refs.values()}) < len(refs):
        raise ValueError("only one reference to a mutable array may be passed as an "
                         "argument to a function, but vmap was given the same jax.Ref "
                         "twice.")
    values = [refs[i][...] if i in refs else x for i, x in enumerate(leaves)]
    size, axes = _mapped_size(fun, args, kwargs, values, axes, axis_size)
    split = _batch_sharding(values, axes)
    if split is not None and spmd_name is not None:
        spmd_name = _spmd_name_for(spmd_name, split)
    axis = batching.AxisData(axis_name, size, spmd_name, split)
    trace = batching.BatchTrace(axis)
    ins = [x if ax is None else batching.to_elt(trace, x, ax)
           for x, ax in zip(values, axes)]
    mapped_refs = {i: AbstractRef.ref_type(ins[i], owner=trace)
                   for i in refs if axes[i] is not None}
    for i, ref in refs.items():
        ins[i] = mapped_refs.get(i, ref)
    try:
        entry = () if split is None else split.spec.partitions[0]
        with batching.extend_axis_env(axis_name, size), set_current_trace(trace), \
                batching.map_over_mesh_axes((entry,) if isinstance(entry, str) else entry,
                                            spmd_name), transform_name_stack("vmap"):
            # rebuilt under the batch trace, as JAX does: pytree nodes that record the
            # trace they were made in (flax's Variables) see the vmap's
            call_args = tree_util.tree_unflatten(arg_tree, ins[:len(arg_leaves)])
            call_kwargs = tree_util.tree_unflatten(kw_tree, ins[len(arg_leaves):])
            out = fun(*call_args, **call_kwargs)
        out_leaves, out_tree = tree_util.tree_flatten(out, is_leaf=batching.is_vmappable)
        out_axes_flat = tree_util.prefix_broadcast(out_axes, out_tree, "vmap out_axes")
        # a vmappable output is rebuilt now (its buffers are this trace's tracers)
        infos = [(batching.from_elt(trace, x, out_axis), None)
                 if batching.is_vmappable(x) and out_axis is not None
                 else trace.to_batch_info(x)
                 for x, out_axis in zip(out_leaves, out_axes_flat)]
        ref_infos = {i: trace.to_batch_info(ref[...]) for i, ref in mapped_refs.items()}
    finally:
        trace.end()
    del ins, call_args, call_kwargs, out, out_leaves, mapped_refs
    check_for_leaks(trace)
    for i, (val, dim) in ref_infos.items():
        with batching.rule_axis(axis):
            refs[i]._value = batching.move_or_broadcast(val, dim, axes[i], size)
    results = []
    for i, ((val, dim), out_axis) in enumerate(zip(infos, out_axes_flat)):
        if batching.is_vmappable(val):
            results.append(val)
            continue
        if not is_valid_jax_type(val):
            raise TypeError(f"Output from batched function {val!r} with type {type(val)} "
                            "is not a valid JAX type")   # (JAX's words)
        if out_axis is None:
            if dim is not None and axis_name is not None:
                raise ValueError(f"vmap has mapped output (axis_name={axis_name}) but "
                                 "out_axes is None")
            if dim is not None:   # JAX names the output by its path
                path = tree_util.tree_flatten_with_path(
                    tree_util.tree_unflatten(out_tree, range(len(infos))))[0][i][0]
                raise ValueError(f"at vmap out_axes{tree_util.keystr(path)}, got axis spec "
                                 f"None but output was batched on axis {dim}")
            results.append(val)   # unchanged, as in JAX (a Python scalar stays one)
            continue
        ndim = get_aval(val).ndim + (dim is None)
        if not -ndim <= out_axis < ndim:
            raise ValueError(f"axis {out_axis} is out of bounds for array of dimension "
                             f"{ndim}")   # (JAX's words; the rank counts the mapped axis)
        with batching.rule_axis(axis):
            results.append(as_array(batching.move_or_broadcast(val, dim, out_axis % ndim,
                                                               size)))
    return tree_util.tree_unflatten(out_tree, results)


def _refuse_ref_views(fun, args, kwargs):
    """JAX's TypeError for a view of a jax.Ref (ref.at[idx]) among vmap's arguments."""
    is_view = lambda x: type(x) is AbstractRef.view_type   # noqa: E731
    found = tree_util.tree_flatten_with_path((args, kwargs), is_leaf=is_view)[0]
    for path, x in found:
        if is_view(x):
            try:
                params = list(inspect.signature(fun).parameters)
            except (TypeError, ValueError):
                params = []
            top = path[1].idx if path[0].idx == 0 else None
            name = (params[top] if top is not None and top < len(params)
                    else tree_util.keystr(path)) + tree_util.keystr(path[2:]) + ".ref"
            raise TypeError(
                f"When tracing {pe.debug_info_of(fun).describe()} for vmap, TransformedRefs "
                f"are not allowed, but got a TransformedRef with name {name}.")


def _batch_sharding(leaves, axes):
    """How the mapped arguments split the mapped dimension over Explicit mesh axes (a
    NamedSharding of rank 1), or None where they do not; JAX's ValueErrors where they
    split it differently, or an unmapped argument is split over those mesh axes."""
    mapped = [(get_aval(x)._sharding if is_valid_jax_type(x) else None, ax)
              for x, ax in zip(leaves, axes) if ax is not None]
    specs = [s.spec.padded(ax + 1).partitions[ax] if s is not None else None
             for s, ax in mapped]
    for e in specs[1:]:
        if e != specs[0]:
            raise ValueError("Mapped away dimension of inputs passed to vmap should be "
                             "sharded the same. Got inconsistent axis specs: "
                             f"{specs[0]} vs {e}")
    entry = specs[0] if specs else None
    if entry is None:
        return None
    names = (entry,) if isinstance(entry, str) else tuple(entry)
    for x, ax in zip(leaves, axes):
        s = get_aval(x)._sharding if ax is None and is_valid_jax_type(x) else None
        used = {n for e in (s.spec.partitions if s is not None else ())
                for n in ((e,) if isinstance(e, str) else e or ())}
        if used & set(names):
            raise ValueError("Unmapped values passed to vmap cannot be sharded along the "
                             f"mesh axis you are vmapping over. Got type: "
                             f"{get_aval(x).str_short(True)}, in_axes: {ax} and vmapped mesh "
                             f"axis: {names}")
    found = mapped[0][0]
    return type(found)(found.mesh, type(found.spec)(entry))


def _spmd_name_for(spmd_name, split):
    """vmap's spmd_axis_name where the mapped arguments already split the batch over
    Explicit mesh axes: it must name those axes (then it adds nothing)."""
    names = split.spec.partitions[0]
    names = (names,) if isinstance(names, str) else tuple(names)
    if config.remove_size_one_mesh_axis_from_type.value:
        spmd_name = tuple(n for n in spmd_name if split.mesh.shape[n] != 1)
    if spmd_name != names:
        raise ValueError("Only one of spmd_axis_name or arrays sharded on `Explicit` mesh "
                         f"axis type is allowed. Got spmd_axis_name={spmd_name} and arrays "
                         f"sharded on explicit_mesh_axis={names}")
    return None


def _mapped_size(fun, args, kwargs, leaves, axes, axis_size):
    """The batch size and the non-negative axis of each leaf; ValueErrors name the
    argument, its type and the axis."""
    mapped = []    # (leaf index, axis, size)
    canonical = []
    for i, (x, ax) in enumerate(zip(leaves, axes)):
        if ax is None:
            canonical.append(None)
            continue
        if batching.is_vmappable(x):
            if not -x.ndim <= ax < x.ndim:
                raise ValueError(f"vmap: axis {ax} is out of bounds for "
                                 f"{_leaf_name(fun, args, kwargs, i)} of shape {x.shape}")
            canonical.append(ax % x.ndim)
            mapped.append((i, ax % x.ndim, x.shape[ax % x.ndim]))
            continue
        if not is_valid_jax_type(x):
            raise TypeError(f"vmap: {_leaf_name(fun, args, kwargs, i)} of type "
                            f"{type(x).__name__} is not a valid JAX type; mapped arguments "
                            f"must be arrays (or pytrees of arrays). Pass it with in_axes "
                            f"None, or close over it.")
        aval = get_aval(x)
        if not -aval.ndim <= ax < aval.ndim:
            raise ValueError(
                f"vmap was requested to map its argument along axis {ax}, which implies "
                f"that its rank should be at least {ax + 1 if ax >= 0 else -ax}, but is "
                f"only {aval.ndim} (its shape is {aval.shape}): "
                f"{_leaf_name(fun, args, kwargs, i)} of type {aval.str_short(True)}.")
        ax %= aval.ndim
        canonical.append(ax)
        mapped.append((i, ax, aval.shape[ax]))
    if not mapped and axis_size is None:   # JAX's words, then why
        if not leaves:
            raise ValueError("vmap wrapped function must be passed at least one argument "
                             "containing an array or axis_size must be specified, got empty "
                             f"*args={args} and **kwargs={kwargs}: with no mapped argument "
                             "the batch size is unknown.")
        raise ValueError("vmap must have at least one non-None value in in_axes or "
                         "axis_size must be specified: with no mapped argument the batch "
                         "size is unknown.")
    sizes = {n for _, _, n in mapped}
    if axis_size is not None:
        sizes.add(axis_size)
    if len(sizes) > 1:
        raise ValueError(_inconsistent_sizes(fun, args, kwargs, leaves, mapped, axis_size))
    return sizes.pop(), canonical


def _inconsistent_sizes(fun, args, kwargs, leaves, mapped, axis_size):
    def where(i, ax):
        return (f"axis {ax} of {_leaf_name(fun, args, kwargs, i)} of type "
                f"{get_aval(leaves[i]).str_short()}")

    lines = []
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size}")
    by_size = {}
    for i, ax, n in mapped:
        by_size.setdefault(n, []).append((i, ax))
    for n, places in sorted(by_size.items(), key=lambda kv: -len(kv[1])):
        if len(places) == 1:
            lines.append(f"  * one axis had size {n}: {where(*places[0])}")
        else:
            lines.append(f"  * most axes ({len(places)} of them) had size {n}, e.g. "
                         f"{where(*places[0])}")
    return ("vmap got inconsistent sizes for array axes to be mapped:\n"
            + ";\n".join(lines))


def _leaf_name(fun, args, kwargs, index):
    """Flattened leaf `index` of (args, kwargs) as JAX names it: argument x, argument
    x['w'], argument args[2], kwargs['y']."""
    try:
        params = inspect.signature(fun).parameters.values()
        names = [p.name for p in params
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    paths, _ = tree_util.tree_flatten_with_path((args, kwargs))
    path = paths[index][0]
    top, key, rest = path[0].idx, path[1], tree_util.keystr(path[2:])
    if top == 1:
        return f"kwargs[{key.key!r}]{rest}"
    return "argument " + (names[key.idx] if key.idx < len(names) else f"args[{key.idx}]") \
        + rest
