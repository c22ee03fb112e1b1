"""pmap: one XLA program replicated over devices, one replica per slice of the mapped axis,
with real cross-replica collectives (psum, all_gather, ...). Imports tree_util, config,
core, interpreters, backends, array, lax and api.jit's argument helpers.

Design
------
`pmap(f)(x)` traces f once per argument signature on per-device shapes (the mapped axis
removed), with the axis name bound so collectives type-check, and binds `xla_pmap`: a
call primitive whose params are that per-device jaxpr, the axis name and size, and the
in/out axis of every operand and result.

* At top level (its `eager` rule) with the XLA executor, the jaxpr is lowered ONCE as a
  module with `mhlo.num_replicas = n` (collectives become all_reduce / all_gather /
  replica_id over the replicas), inputs are sliced along their in_axes onto the first n
  devices, and the per-device results are gathered back to the host and stacked along
  their out_axes: the result is an ordinary host-backed, uncommitted Array (pyjax has no
  sharded Array type). `out_axes=None` returns replica 0's value.
* With the NumPy executor (and as the primitive's `impl`) the body runs once under vmap
  semantics: the batching rules resolve the collectives, so results agree with XLA. The
  device count does not limit the NumPy executor.
* Under transformations the primitive has rules: jvp (a pmap of the body's jvp), partial
  evaluation and transpose (so grad of pmap works), batching (vmap of pmap) and DCE.
* Inside jit, `xla_pmap` has no lowering (XLA cannot nest a replicated program in a
  single-device one); the jit's equations then run one at a time on the eval trace
  (backends/dispatch.py), with the pmap running its own replicated program.
* Nested pmap raises NotImplementedError; use vmap with an axis_name for inner axes.
"""
from __future__ import annotations

import functools
import operator
import threading
import weakref

import numpy as np

from pyjax._src import config, dtypes, tree_util
from pyjax._src.api import aot, shapes
from pyjax._src.api.jit import (_HashableStatic, _arg_names, _flat_arg_names, _location,
                                 normalize_argnums)
from pyjax._src.api.devices import make_array_from_single_device_arrays
from pyjax._src.array import Array, sharded_array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch, numpy_backend, stablehlo
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import ShapedArray, get_aval, is_valid_jax_type
from pyjax._src.core.trace import (Trace, current_trace, define_primitive, no_lowering,
                                   set_current_trace)
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import reductions as red
from pyjax._src.lax import structural as st
from pyjax._src.sharding import Mesh, NamedSharding, PartitionSpec
from pyjax._src.util import WeakCache, check_callable, fun_name


def _mapped(aval, axis, n):
    """The full aval of a per-device aval carried along `axis` (None: unmapped)."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    shape.insert(axis, n)
    return aval.update(shape=tuple(shape))


def _unmapped(aval, axis):
    if axis is None:
        return aval
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


# --- the primitive ----------------------------------------------------------------------

def _pmap_abstract_eval(*avals, jaxpr, axis_name, axis_size, in_axes, out_axes, devices,
                        backend, name):
    for i, (aval, axis, expected) in enumerate(zip(avals, in_axes, jaxpr.in_avals)):
        fits = axis is None or (axis < aval.ndim and aval.shape[axis] == axis_size)
        if not fits or not _unmapped(aval, axis).same_type(expected):
            raise TypeError(
                f"pmap of {name}: operand {i} has type {aval.str_short(True)}, but the traced "
                f"body expects {_mapped(expected, axis, axis_size).str_short(True)} (in_axes "
                f"{axis}, axis size {axis_size}).")
    return [_mapped(a, axis, axis_size) for a, axis in zip(jaxpr.out_avals, out_axes)]


def _pmap_impl(*values, jaxpr, axis_name, axis_size, in_axes, out_axes, devices, backend,
               name):
    """The NumPy executor: all replicas at once, as a vmap over the mapped axis."""
    args = [np.asarray(v) if axis is None else np.moveaxis(v, axis, 0)
            for v, axis in zip(values, in_axes)]
    batched, _ = batching.batch_jaxpr(jaxpr, axis_size, [a is not None for a in in_axes],
                                      True, axis_name)
    outs = numpy_backend.execute_closed_jaxpr(batched, args)
    return [np.asarray(o)[0] if axis is None else np.moveaxis(np.asarray(o), 0, axis)
            for o, axis in zip(outs, out_axes)]


def _pmap_eager(*args, **params):
    avals = [get_aval(x) for x in args]
    out_avals = _pmap_abstract_eval(*avals, **params)
    xla = dispatch.xla_backend()
    if xla is None:
        values = [numpy_backend.host_value(x, a) for x, a in zip(args, avals)]
        return [numpy_backend.wrap(o, a)
                for o, a in zip(_pmap_impl(*values, **params), out_avals)]
    return _run_replicated(xla, args, out_avals, **params)


_executables = WeakCache()   # per-device jaxpr -> {(devices, axis name): executable}
live_wrappers = weakref.WeakSet()            # every pmap-wrapped function alive


def _replicated_executable(xla, jaxpr, devices, axis_name, name):
    ordered = sorted(str(e) for e in jaxpr.effects if getattr(e, "ordered", False))
    if ordered and len(devices) > 1:   # replicas have no order among themselves (as JAX)
        raise ValueError("The following ordered effects are not supported for more than 1 "
                         f"device: {ordered}. pmap of {name}: use ordered=False, or run "
                         "the ordered callback outside the pmap.")

    def build():
        lowered = lower_replicated(jaxpr, name, axis_name, len(devices))
        return xla.ReplicatedExecutable(lowered, devices, jaxpr.consts, name)
    return _executables.get(jaxpr, (tuple(devices), axis_name), build)


def lower_replicated(jaxpr, name, axis_name, n):
    """The StableHLO module of a pmap body: n replicas forming the axis `axis_name`."""
    return stablehlo.lower_module(jaxpr, name, num_replicas=n, axis_env=((axis_name, n),))


def _run_replicated(xla, args, out_avals, *, jaxpr, axis_name, axis_size, in_axes,
                    out_axes, devices, backend, name, executable=None):
    """Runs the replicated program (`executable`, else the cached one for jaxpr)."""
    n = axis_size
    devices = _devices_for(n, devices, backend, name)
    exe = executable or _replicated_executable(xla, jaxpr, devices, axis_name, name)
    per_argument = []
    for x, axis, aval in zip(args, in_axes, jaxpr.in_avals):
        if axis is None:
            x = x if type(x) is Array else numpy_backend.wrap(
                numpy_backend.host_value(x, aval), aval)
            per_argument.append([x] * n)
        else:
            value = numpy_backend.host_value(x, get_aval(x))
            per_argument.append([Array(np.take(value, i, axis=axis), aval=aval)
                                 for i in range(n)])
    results = []
    for shards, axis, aval in zip(exe(per_argument), out_axes, out_avals):
        if aval.dtype == dtypes.float0:   # XLA holds no float0 buffers: a host value
            results.append(np.zeros(aval.shape, dtypes.float0))
            continue
        sharding = _result_sharding(tuple(devices), axis_name, axis)
        if axis is None:   # each replica keeps its own copy, as JAX's
            results.append(make_array_from_single_device_arrays(aval.shape, sharding,
                                                                shards))
        else:
            value = np.stack([s._value for s in shards], axis=axis)
            results.append(sharded_array(value, aval, sharding))
    return results


@functools.lru_cache(maxsize=512)   # one object per layout, as JAX's (cheap to compare)
def _result_sharding(devices, axis_name, out_axis):
    """Where a pmap result lives, as in JAX: on a 1-D mesh of the replicas' devices,
    split along its out axis (replicated when out_axes is None)."""
    name = axis_name if isinstance(axis_name, str) else "_internal_pmap_axis_name"
    mesh = Mesh(np.array(devices), (name,))
    spec = PartitionSpec() if out_axis is None else PartitionSpec(*[None] * out_axis, name)
    return NamedSharding(mesh, spec)


def _devices_for(n, devices, backend, name):
    """The devices of the n replicas: `devices` (exactly n of them) or the first n."""
    if devices is not None:
        if len(devices) != n:
            raise ValueError(
                f"pmap of {name}: the mapped axis has size {n}, but devices= lists "
                f"{len(devices)} devices; when devices are given, the mapped axis size "
                "must equal their number.")
        return list(devices)
    available = devices_mod.devices(backend)
    if n > len(available):
        raise ValueError(
            f"compiling pmap of {name} requires {n} logical devices (the size of the "
            f"mapped axis), but only {len(available)} XLA devices are available "
            f"(num_replicas={n}). Map over at most jax.local_device_count() = "
            f"{len(available)} shards (e.g. reshape to ({len(available)}, -1, ...) and "
            "vmap inside the pmap), or ask for more CPU devices before first use with "
            f"XLA_FLAGS=--xla_force_host_platform_device_count={n} or "
            f"jax.config.update('jax_num_cpu_devices', {n}).")
    return list(available[:n])


def _pmap_jvp(primals, tangents, **params):
    """A pmap of the body's JVP: tangents are mapped like their primals."""
    name, size = params["axis_name"], params["axis_size"]
    return ad.jvp_mapped_call(xla_pmap_p, primals, tangents, params, "in_axes", "out_axes",
                              lambda: batching.extend_axis_env(name, size),
                              lambda aval, axis: _mapped(aval, axis, size))


def _pmap_partial_eval(trace, args, unknowns, params):
    """A known pmap runs now and returns its residuals mapped along axis 0; an unknown
    pmap of (residuals, unknown inputs) is staged."""
    in_axes, out_axes = params["in_axes"], params["out_axes"]
    with batching.extend_axis_env(params["axis_name"], params["axis_size"]):
        known, unknown, out_unknowns, num_res = pe.partial_eval_jaxpr_nounits(
            params["jaxpr"], unknowns, instantiate=False)
    known, sources = pe.forward_input_residuals(known, num_res)
    known_args = [a for a, uk in zip(args, unknowns) if not uk]
    known_in_axes = tuple(a for a, uk in zip(in_axes, unknowns) if not uk)
    num_known_outs = len(known.out_avals) - sum(kind == "out" for kind, _ in sources)
    known_outs = []
    if known.out_avals:
        known_out_axes = tuple(a for a, uk in zip(out_axes, out_unknowns) if not uk) \
            + (0,) * (len(known.out_avals) - num_known_outs)
        with set_current_trace(trace.parent):
            known_outs = xla_pmap_p.bind(*known_args, **dict(
                params, jaxpr=known, in_axes=known_in_axes, out_axes=known_out_axes))
    residuals = [known_args[i] if kind == "in" else known_outs[i] for kind, i in sources]
    residual_axes = tuple(known_in_axes[i] if kind == "in" else 0 for kind, i in sources)
    unknown_args = residuals + [a for a, uk in zip(args, unknowns) if uk]
    unknown_outs = iter(trace.stage(xla_pmap_p, unknown_args, dict(
        params, jaxpr=unknown,
        in_axes=residual_axes + tuple(a for a, uk in zip(in_axes, unknowns) if uk),
        out_axes=tuple(a for a, uk in zip(out_axes, out_unknowns) if uk))))
    known_vals = iter(known_outs[:num_known_outs])
    return [next(unknown_outs) if uk else next(known_vals) for uk in out_unknowns]


def _pmap_transpose(cts, *args, jaxpr, axis_name, axis_size, in_axes, out_axes, **params):
    """A pmap of the body's transpose. An unmapped output was replica 0's value, so its
    cotangent goes to replica 0 alone; an unmapped linear input gets the sum of the
    replicas' cotangents."""
    linear = [ad.is_undefined_primal(a) for a in args]
    with batching.extend_axis_env(axis_name, axis_size):
        transposed = ad.transpose_jaxpr(jaxpr, linear)
    nonlinear = [a for a, lin in zip(args, linear) if not lin]
    ct_args = []
    for ct, axis in zip(cts, out_axes):
        ct = ad.instantiate_zeros(ct)
        ct_args.append(ct if axis is not None else _on_replica_zero(ct, axis_size))
    linear_axes = [a for a, lin in zip(in_axes, linear) if lin]
    outs = iter(xla_pmap_p.bind(
        *nonlinear, *ct_args, jaxpr=transposed, axis_name=axis_name, axis_size=axis_size,
        in_axes=tuple(a for a, lin in zip(in_axes, linear) if not lin)
        + tuple(0 if a is None else a for a in out_axes),
        out_axes=tuple(0 if a is None else a for a in linear_axes), **params))
    results = []
    for lin, axis in zip(linear, in_axes):
        if not lin:
            results.append(None)
            continue
        ct = next(outs)
        if axis is None and get_aval(ct).dtype != dtypes.float0:
            ct = red.reduce_sum(ct, (0,))
        elif axis is None:
            ct = np.zeros(get_aval(ct).shape[1:], dtypes.float0)
        results.append(ct)
    return results


def _on_replica_zero(ct, n):
    """ct stacked along a new axis 0 for n replicas: ct at replica 0, zeros elsewhere."""
    aval = get_aval(ct)
    if aval.dtype == dtypes.float0:
        return np.zeros((n,) + aval.shape, dtypes.float0)
    zero = np.zeros((), aval.dtype)
    return st.pad(st.expand_dims(ct, (0,)), zero,
                  ((0, n - 1, 0),) + ((0, 0, 0),) * aval.ndim)


def _pmap_batch(axis, args, dims, *, jaxpr, axis_name, axis_size, in_axes, out_axes,
                **params):
    """vmap of pmap: each replica's body is batched (batch at dim 0 of its values); the
    pmap axis of a batched operand sits right after the batch."""
    in_batched = [d is not None for d in dims]
    if not any(in_batched) and not batching.jaxpr_uses_axis(jaxpr, axis.name):
        return xla_pmap_p.bind(*args, jaxpr=jaxpr, axis_name=axis_name,
                               axis_size=axis_size, in_axes=in_axes, out_axes=out_axes,
                               **params), [None] * len(out_axes)
    moved, new_in_axes = [], []
    for x, d, a in zip(args, dims, in_axes):
        if d is None:
            moved.append(x)
            new_in_axes.append(a)
        else:
            moved.append(batching.moveaxis(x, d, 0))
            new_in_axes.append(None if a is None else a + 1)
    with batching.extend_axis_env(axis_name, axis_size):
        batched, _ = batching.batch_jaxpr(jaxpr, axis, in_batched, True)
    outs = xla_pmap_p.bind(*moved, jaxpr=batched, axis_name=axis_name, axis_size=axis_size,
                           in_axes=tuple(new_in_axes),
                           out_axes=tuple(None if a is None else a + 1 for a in out_axes),
                           **params)
    return outs, [0] * len(outs)


def _pmap_dce(used_outputs, eqn):
    return jx.dce_mapped_call(used_outputs, eqn, "in_axes", "out_axes")


def _pmap_samples():
    """One replica (the test process may have one device): a body with a collective, a
    mapped and an unmapped operand, and outputs mapped at 0 and 1."""
    from pyjax._src.lax import elementwise as ew
    from pyjax._src.lax import parallel
    from pyjax._src.lax.builders import Sample, random_values

    x, y = random_values((1, 2, 3), np.float32), random_values((2, 3), np.float32, seed=1)
    with batching.extend_axis_env("i", 1):
        closed, _ = pe.trace_to_closed_jaxpr(
            lambda a, b: [parallel.psum(ew.mul(ew.sin(a), b), "i"), ew.cos(b)],
            [get_aval(y), get_aval(y)])
    return [Sample([x, y], {"jaxpr": closed, "axis_name": "i", "axis_size": 1,
                            "in_axes": (0, None), "out_axes": (0, 1), "devices": None,
                            "backend": None, "name": "f"})]


xla_pmap_p = define_primitive(
    "xla_pmap", multiple_results=True, impl=_pmap_impl, abstract_eval=_pmap_abstract_eval,
    eager=_pmap_eager, jvp=_pmap_jvp, partial_eval=_pmap_partial_eval,
    transpose=_pmap_transpose, batch=_pmap_batch, dce=_pmap_dce,
    lower=no_lowering("a pmap runs its own replicated XLA program, which "
                    "cannot be nested in another module (jit runs it as a separate step)"),
    effects=lambda jaxpr, **_: jaxpr.effects, samples=_pmap_samples,
    is_higher_order=True, batch_needs_axis=True,
    runs_own_program=True)   # dispatch runs jaxprs holding it op by op


# --- collectives under divergent control flow -------------------------------------------
# A replica that skips a collective the others run leaves them waiting forever (XLA then
# aborts the process). So a pmap body is checked once, when traced: a cond or while_loop
# whose predicate may differ between replicas must not communicate over the pmap axis.

def _communicates(jaxpr, name):
    """Whether `jaxpr` (or one nested in it) runs a collective over axis `name`."""
    return any((e.primitive.is_collective and e.primitive.name
                != "axis_index" and name in batching.axis_names_of(e.params))
               or any(_communicates(sub, name) for sub in jx.sub_jaxprs(e))
               for e in jaxpr.eqns)


def _check_replicas_agree(jaxpr, varying_in, name, where):
    """Which outputs of `jaxpr` may differ between replicas, given which inputs may;
    raises where a cond or while_loop with such a predicate communicates."""
    varying = {v for v, b in zip(jaxpr.invars, varying_in) if b}
    for eqn in jaxpr.eqns:
        ins = [type(v) is not jx.Literal and v in varying for v in eqn.invars]
        prim, params = eqn.primitive, eqn.params
        if prim.is_collective and name in batching.axis_names_of(params):
            outs = [prim.name == "axis_index"] * len(eqn.outvars)
        elif prim.name == "cond":
            outs = [ins[0]] * len(eqn.outvars)
            for branch in params["branches"]:
                found = _check_replicas_agree(branch.jaxpr, ins[1:], name, where)
                outs = [a or b for a, b in zip(outs, found)]
            if ins[0] and any(_communicates(b.jaxpr, name) for b in params["branches"]):
                raise _divergence_error("a lax.cond (or lax.switch)", name, where)
        elif prim.name == "while":
            outs = _while_varying(params, ins, name, where)
        elif prim.name == "scan":
            outs = _scan_varying(params, ins, name, where)
        elif prim.name == "jit":
            outs = _check_replicas_agree(params["jaxpr"].jaxpr, ins, name, where)
        else:   # other primitives (scan, custom rules...): varying in, varying out
            outs = [any(ins) or any(batching.jaxpr_uses_axis(sub, name)
                                    for sub in jx.sub_jaxprs(eqn))] * len(eqn.outvars)
        varying.update(v for v, b in zip(eqn.outvars, outs) if b)
    return [type(v) is not jx.Literal and v in varying for v in jaxpr.outvars]


def _while_varying(params, ins, name, where):
    cond, body = params["cond_jaxpr"].jaxpr, params["body_jaxpr"].jaxpr
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cond_consts, body_consts, carry = ins[:nc], ins[nc:nc + nb], ins[nc + nb:]
    while True:   # a carry varies once any iteration can make it vary
        after = _check_replicas_agree(body, body_consts + carry, name, where)
        grown = [a or b for a, b in zip(carry, after)]
        if grown == carry:
            break
        carry = grown
    (predicate,) = _check_replicas_agree(cond, cond_consts + carry, name, where)
    if predicate and (_communicates(body, name) or _communicates(cond, name)):
        raise _divergence_error("a lax.while_loop (or fori_loop)", name, where)
    return carry


def _scan_varying(params, ins, name, where):
    body, nc, ncarry = params["jaxpr"].jaxpr, params["num_consts"], params["num_carry"]
    consts, carry, xs = ins[:nc], ins[nc:nc + ncarry], ins[nc + ncarry:]
    while True:
        outs = _check_replicas_agree(body, consts + carry + xs, name, where)
        grown = [a or b for a, b in zip(carry, outs[:ncarry])]
        if grown == carry:
            return grown + outs[ncarry:]
        carry = grown


def _divergence_error(what, name, where):
    return ValueError(
        f"pmap of {where}: {what} whose predicate can differ between replicas (it depends "
        f"on the mapped data or the replica index) runs a collective over axis {name!r} "
        "(psum, pmean, all_gather, ...) in a branch or loop body. Replicas that skip the "
        "collective would leave the others waiting forever. Make the predicate the same on "
        f"every replica (e.g. compute it from lax.pmax(..., {name!r}) or psum results), or "
        "compute both alternatives and choose with jnp.where.")


# --- the user-facing wrapper ------------------------------------------------------------

_KWARGS_NOTE = (
    "\n\nWhen some arguments are passed by keyword to the pmapped function, they are not "
    "included in the comparison to `in_axes`. Instead, each argument passed by keyword is "
    "mapped over its leading axis. See the description of `in_axes` in the `pmap` "
    "docstring.")


class _Nesting(threading.local):
    depth = 0    # pmap bodies being traced


_nesting = _Nesting()


class _Entry:
    __slots__ = ("closed", "in_tree", "full_avals", "out_tree", "out_axes", "hoisted")

    def __init__(self, closed, in_tree, full_avals, out_tree, out_axes, hoisted):
        self.closed, self.in_tree, self.full_avals = closed, in_tree, full_avals
        self.out_tree, self.out_axes, self.hoisted = out_tree, out_axes, hoisted


class PmapWrapped:
    """The callable returned by pmap(f)."""

    def __init__(self, fun, axis_name, in_axes, out_axes, static_broadcasted_argnums,
                 devices, backend, axis_size, donate_argnums):
        functools.update_wrapper(self, fun, updated=())
        self.fun, self.axis_name = fun, axis_name
        self.in_axes, self.out_axes = in_axes, out_axes
        self.static_argnums = normalize_argnums(static_broadcasted_argnums,
                                                "pmap static_broadcasted_argnums")
        self.donate_argnums = normalize_argnums(donate_argnums, "pmap donate_argnums")
        self.devices = None if devices is None else tuple(devices)
        self.backend, self.axis_size = backend, axis_size
        self._name = fun_name(fun)
        self._arg_names = _arg_names(fun)
        self._cache = {}
        live_wrappers.add(self)   # for jax.clear_caches

    def __repr__(self):
        return f"<PmapFunction of {self.fun!r}>"

    def __get__(self, obj, objtype=None):   # a pmapped method binds like a function
        if obj is None:
            return self
        return functools.partial(self, obj)

    def _cache_size(self):
        return len(self._cache)

    def __call__(self, *args, **kwargs):
        entry, leaves, in_axes, n, donated = self._prepare(args, kwargs)
        outs = xla_pmap_p.bind(*entry.hoisted, *leaves, **self._params(entry, in_axes, n))
        if current_trace() is Trace.root:
            for x in donated:
                if type(x) is Array:
                    x.delete("donated")
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def _params(self, entry, in_axes, n):
        """xla_pmap's params for a call prepared as `entry`."""
        return dict(axis_name=self.axis_name, axis_size=n,
                    in_axes=(None,) * len(entry.hoisted) + in_axes, out_axes=entry.out_axes,
                    devices=self.devices, backend=self.backend, name=self._name,
                    jaxpr=entry.closed)

    def lower(self, *args, **kwargs):
        """The replicated StableHLO module for these arguments (`.as_text()`); arguments
        may also be ShapeDtypeStructs or ShapedArrays."""
        entry, leaves, in_axes, n, donated = self._prepare(args, kwargs, abstract=True)
        if entry.hoisted:
            raise ValueError(f"pmap({self._name}).lower() was called inside a "
                             "transformation; lower at top level.")
        donated_ids = {id(x) for x in donated}
        return PmapLowered(lower_replicated(entry.closed, self._name, self.axis_name, n),
                           self, args, entry, self._params(entry, in_axes, n),
                           [id(x) in donated_ids for x in leaves])

    # -- preparing a call ----------------------------------------------------------------
    def _prepare(self, args, kwargs, abstract=False):
        if _nesting.depth:
            raise NotImplementedError(
                f"nested pmap is not supported: pmap({self._name}) was called inside the "
                "body of another pmap. Use vmap(..., axis_name=...) for the inner axis "
                "(collectives work over both), or merge the two axes into one pmap.")
        nargs = len(args)
        statics = {i % nargs for i in self.static_argnums if -nargs <= i < nargs}
        if self.static_argnums and max(self.static_argnums) >= nargs:   # JAX's words
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={self.static_argnums} "
                f"but was called with only {nargs} positional argument"
                f"{'s' if nargs > 1 else ''}. All static broadcasted arguments must be "
                "passed positionally.")
        for i in self.static_argnums:
            if i < -nargs:
                raise ValueError(f"pmap of {self._name}: static_broadcasted_argnums "
                                 f"{i} is out of range for {nargs} positional arguments.")
        dyn_args = tuple(x for i, x in enumerate(args) if i not in statics)
        static_key = tuple(_HashableStatic(args[i], f"static argument {i}")
                           for i in sorted(statics))
        leaves, in_tree = tree_util.flatten((dyn_args, kwargs))
        axes = self._leaf_axes(args, statics, dyn_args, kwargs)
        n, axes = self._axis_size(leaves, axes, abstract)
        if devices_mod.xla_runtime() is not None or self.devices is not None:
            _devices_for(n, self.devices, self.backend, self._name)
        full_avals = tuple((shapes.abstractify if abstract else get_aval)(x) for x in leaves)
        key = (in_tree, static_key, full_avals, axes, n, config.config.trace_state())
        entry = self._cache.get(key)
        if entry is None:
            entry = self._trace(args, kwargs, statics, in_tree, full_avals, axes, n)
            if not entry.hoisted:
                self._cache[key] = entry
        donated = [x for i in sorted(d % nargs for d in self.donate_argnums
                                     if -nargs <= d < nargs and d % nargs not in statics)
                   for x in tree_util.tree_leaves(args[i])]
        return entry, leaves, axes, n, donated

    def _leaf_axes(self, args, statics, dyn_args, kwargs):
        in_axes = self.in_axes
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        if isinstance(in_axes, tuple):
            if len(in_axes) != len(args):
                raise ValueError(
                    f"pmap in_axes must be an int, None, or a tuple of entries "
                    f"corresponding to the positional arguments passed to the function, "
                    f"but got len(in_axes)={len(in_axes)}, len(args)={len(args)}"
                    + (_KWARGS_NOTE if kwargs else ""))
            in_axes = tuple(a for i, a in enumerate(in_axes) if i not in statics)
        leaves = tree_util.tree_leaves(in_axes, is_leaf=lambda x: x is None)
        if not all(a is None or type(a) is int for a in leaves):
            raise TypeError(f"pmap in_axes must be an int, None, or (nested) container "
                            f"with those types as leaves, but got {self.in_axes}.")
        # Keyword arguments are always mapped over axis 0, as in JAX (whose errors name
        # the positional ones "pmap in_axes[0]..." for that reason).
        full_tree = tree_util.flatten((dyn_args, kwargs))[1]
        return tree_util.prefix_broadcast((in_axes, 0), full_tree, "pmap in_axes")

    def _axis_size(self, leaves, axes, abstract=False):
        canonical, sizes = [], set()
        for i, (x, axis) in enumerate(zip(leaves, axes)):
            if axis is None:
                canonical.append(None)
                continue
            if abstract and isinstance(x, (ShapedArray, shapes.ShapeDtypeStruct)):
                aval = shapes.abstractify(x)   # lower() takes types in place of values
            elif not is_valid_jax_type(x):
                raise TypeError(f"pmap of {self._name}: argument leaf {i} of type "
                                f"{type(x).__name__} is not a valid JAX type; mapped "
                                "arguments must be arrays. Pass it with in_axes None, mark "
                                "it static (static_broadcasted_argnums), or close over it.")
            else:
                aval = get_aval(x)
            if not -aval.ndim <= axis < aval.ndim:
                raise ValueError(
                    f"pmap of {self._name} was requested to map argument leaf {i} of "
                    f"type {aval.str_short(True)} along axis {axis}, which it does not have "
                    f"(rank {aval.ndim}).")
            axis %= aval.ndim
            canonical.append(axis)
            sizes.add(aval.shape[axis])
        if self.axis_size is not None:
            sizes.add(operator.index(self.axis_size))
        if not sizes:
            raise ValueError("pmap requires at least one argument with a mapped axis. "
                             f"(pmap of {self._name}: give one argument a non-None "
                             "in_axes entry, or pass axis_size.)")   # JAX's words first
        if len(sizes) > 1:
            raise ValueError(f"pmap of {self._name} got inconsistent sizes for the mapped "
                             f"axes: {sorted(sizes)}. Every mapped argument (and "
                             "axis_size, if given) must have the same size along its "
                             "in_axes entry.")
        n = sizes.pop()
        if n < 1:
            raise ValueError(f"pmap of {self._name} needs a mapped axis of size >= 1, "
                             f"got {n}.")
        return n, tuple(canonical)

    def _trace(self, args, kwargs, statics, in_tree, full_avals, axes, n):
        out = {}

        def flat_fun(*leaf_tracers):
            call_args, call_kwargs = tree_util.tree_unflatten(in_tree, leaf_tracers)
            dyn = iter(call_args)
            full = [args[i] if i in statics else next(dyn) for i in range(len(args))]
            result = self.fun(*full, **call_kwargs)
            out_leaves, out["tree"] = tree_util.flatten(result)
            for leaf in out_leaves:
                if not is_valid_jax_type(leaf):
                    raise TypeError(f"pmap of {self._name} returned a value of type "
                                    f"{type(leaf).__name__}, which is not a valid JAX "
                                    "type; pmapped functions must return arrays "
                                    "(in pytrees).")
            return out_leaves

        avals = [_unmapped(a, axis) for a, axis in zip(full_avals, axes)]
        debug = pe.DebugInfo(self._name, _location(self.fun),
                             _flat_arg_names(self._arg_names, args, statics, kwargs))
        _nesting.depth += 1
        try:
            with batching.extend_axis_env(self.axis_name, n):
                closed, hoisted = pe.trace_to_closed_jaxpr(flat_fun, avals, debug)
        finally:
            _nesting.depth -= 1
        if self.axis_name is not None:
            _check_replicas_agree(closed.jaxpr, [False] * len(hoisted)
                                  + [a is not None for a in axes], self.axis_name,
                                  self._name)
        out_axes = []
        spec = tree_util.prefix_broadcast(self.out_axes, out["tree"], "pmap out_axes")
        for aval, axis in zip(closed.out_avals, spec):
            if axis is not None and type(axis) is not int:
                raise TypeError(f"pmap out_axes must be an int, None, or (nested) "
                                f"container with those types as leaves, but got "
                                f"{self.out_axes}.")
            if axis is not None and not -aval.ndim - 1 <= axis <= aval.ndim:
                raise ValueError(f"pmap out_axes {axis} is out of bounds for an output of "
                                 f"rank {aval.ndim + 1} (with the mapped axis) of "
                                 f"{self._name}.")
            out_axes.append(None if axis is None else axis % (aval.ndim + 1))
        return _Entry(closed, in_tree, full_avals, out["tree"], tuple(out_axes), hoisted)


class PmapLowered(aot.Lowered):
    """A pmap lowered for one set of argument types: its replicated StableHLO module.
    compile() gives a PmapCompiled that runs it for arguments of those types. A
    jax.stages.Lowered, as JAX's pmap gives (libraries annotate with it); the base's
    module property returns the replicated module set here."""

    _no_kwargs = False   # keyword arguments are accepted (mapped over axis 0), as in JAX

    def __init__(self, module, wrapped, args, entry, params, donated):
        self._module = module
        self._wrapped, self._entry, self._params = wrapped, entry, params
        nargs = len(args)
        self._statics = {i % nargs: args[i % nargs] for i in wrapped.static_argnums
                         if -nargs <= i < nargs}
        self.in_tree = entry.in_tree
        self._in_avals = list(entry.full_avals)
        self._donated = donated

    @property
    def in_avals(self):
        """The dynamic arguments' avals (with the mapped axis), as ((args...), {kwargs})."""
        return tree_util.tree_unflatten(self.in_tree, self._in_avals)

    @property
    def args_info(self):
        """The dynamic arguments as a ((args...), {kwargs}) pytree of ArgInfo."""
        return aot.args_info(self.in_tree, self._in_avals, self._donated)

    def as_text(self, dialect=None):
        """The module as StableHLO (MLIR) text, or as HLO text with dialect="hlo"."""
        if dialect == "hlo":
            return _xla("HLO text").hlo_text(self.module)
        if dialect not in (None, "stablehlo", "mhlo"):
            raise ValueError(f"as_text: unknown dialect {dialect!r}; use 'stablehlo' or "
                             "'hlo'.")
        return aot.stablehlo_text(self.module)

    def compiler_ir(self, dialect=None):
        """The module as an MLIR module (dialect "stablehlo", the default) or as XLA's HLO
        computation (dialect "hlo")."""
        return aot.compiler_ir(self.module, dialect)

    @property
    def out_info(self):
        """The outputs' shapes (with the mapped axis) and dtypes."""
        size = self._params["axis_size"]
        avals = [a if d is None else a.update(shape=(*a.shape[:d], size, *a.shape[d:]))
                 for a, d in zip(self._entry.closed.out_avals, self._entry.out_axes)]
        return aot._out_info(self._entry.out_tree, avals, [None] * len(avals))

    def compile(self, compiler_options=None):
        """Compiles the module; `compiler_options` are XLA's (name -> value), checked by
        XLA (an unknown name or a bad value raises JaxRuntimeError)."""
        return PmapCompiled(self, compiler_options)

    def __repr__(self):
        return f"<Lowered pmap({self._wrapped._name})>"

    def cost_analysis(self):
        """XLA's estimate of flops, transcendentals and bytes accessed."""
        return self.compile().cost_analysis()


def _xla(what):
    return dispatch.required_xla_backend(what)


class PmapCompiled(aot.Compiled):
    """A compiled pmap: call it with arguments of the lowered types (without the static
    ones); it runs its own replicated executable (with the NumPy executor, the pmap). A
    jax.stages.Compiled, as JAX's."""

    _no_kwargs = False

    def __init__(self, lowered, compiler_options=None):
        self._lowered = lowered
        self.in_tree, self.in_avals = lowered.in_tree, lowered.in_avals
        xla = dispatch.xla_backend()
        self._executable = None
        if xla is not None:
            w, closed = lowered._wrapped, lowered._entry.closed
            devices = _devices_for(lowered._params["axis_size"], w.devices, w.backend,
                                   w._name)
            if compiler_options:
                self._executable = xla.ReplicatedExecutable(
                    lowered.module, devices, closed.consts, w._name, compiler_options)
            else:
                self._executable = _replicated_executable(xla, closed, devices,
                                                          w.axis_name, w._name)

    def __call__(self, *args, **kwargs):
        low = self._lowered
        leaves, in_tree = tree_util.flatten((args, kwargs))
        if in_tree != low.in_tree:
            raise TypeError("Function compiled with input pytree does not match the input "
                            f"pytree it was called with: compiled for {low.in_tree}, called "
                            f"with {in_tree}.")
        mismatches = [f"Argument 'flat_args[{i}]' compiled with {e._dtype_and_shape()} and "
                      f"called with {get_aval(x)._dtype_and_shape()}"
                      for i, (x, e) in enumerate(zip(leaves, low._in_avals))
                      if not get_aval(x).strip_weak_type().same_type(e.strip_weak_type())]
        if mismatches:
            raise TypeError("Argument types differ from the types for which this "
                            "computation was compiled. The mismatches are:\n" +
                            "\n".join(mismatches))
        if self._executable is None or current_trace() is not Trace.root:
            full = list(args)
            for i in sorted(low._statics):
                full.insert(i, low._statics[i])
            return low._wrapped(*full, **kwargs)
        outs = _run_replicated(dispatch.xla_backend(), leaves,
                               _pmap_abstract_eval(*map(get_aval, leaves), **low._params),
                               executable=self._executable, **low._params)
        return tree_util.tree_unflatten(low._entry.out_tree, outs)

    def _loaded(self, what):
        if self._executable is None:
            raise NotImplementedError(f"{what} needs the XLA executor; the NumPy executor is "
                                      "selected or jaxlib is not installed.")
        return self._executable.loaded

    def as_text(self):
        """The optimised HLO that XLA compiled (None with the NumPy executor)."""
        return None if self._executable is None else \
            self._executable.loaded.hlo_modules()[0].to_string()

    def cost_analysis(self):
        return self._loaded("cost_analysis").cost_analysis()

    def memory_analysis(self):
        return dispatch.xla_backend().memory_analysis(self._loaded("memory_analysis"))

    def runtime_executable(self):
        """XLA's loaded executable."""
        return self._loaded("runtime_executable")

    @property
    def out_info(self):
        return self._lowered.out_info

    @property
    def input_shardings(self):
        raise NotImplementedError("pmap's Compiled.input_shardings (PmapShardings) are not "
                                  "available in pyjax; use jax.jit or jax.shard_map for "
                                  "sharded programs.")

    output_shardings = input_shardings

    def __repr__(self):
        return f"<Compiled pmap({self._lowered._wrapped._name})>"


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         global_arg_shapes=None):
    """Maps `fun` over an axis of its arguments like vmap, but runs each slice as one
    replica of a compiled XLA program on its own device; collectives (lax.psum, pmean,
    all_gather, axis_index, ...) over `axis_name` communicate between the replicas. The
    mapped size must not exceed the device count. Results come back as ordinary Arrays
    stacked along `out_axes` (see this module's docstring)."""
    check_callable(fun, "pmap")
    if global_arg_shapes is not None:
        raise NotImplementedError("pmap(global_arg_shapes=...) is for multi-process "
                                  "programs, which pyjax does not support.")
    if devices is not None and not len(devices):
        raise ValueError("'devices' argument to pmap must be non-empty, or None.")
    if devices is not None and not all(hasattr(d, "platform") for d in devices):
        raise TypeError(f"pmap devices must be a sequence of Devices (from jax.devices()), "
                        f"got {devices!r}")
    if backend is not None:
        devices_mod.devices(backend)     # an unknown backend raises here, not later
    if axis_size is not None and (not isinstance(axis_size, (int, np.integer))
                                  or isinstance(axis_size, bool) or axis_size < 0):
        raise TypeError(f"pmap axis_size must be a non-negative int, got {axis_size!r}")
    return PmapWrapped(fun, axis_name, in_axes, out_axes, static_broadcasted_argnums,
                       devices, backend, axis_size, donate_argnums)
