"""while_p: iterate a body jaxpr while a cond jaxpr holds, and the public `while_loop`.
Imports core, interpreters, backends and the lax families (fori_loop, built on both scan
and while_loop, is in fori.py)."""
from __future__ import annotations

import functools

import numpy as np

from pyjax._src import config, errors, tree_util
from pyjax._src.array import as_array
from pyjax._src.backends import numpy_backend
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive, set_current_trace
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions
from pyjax._src.lax import structural as st
from pyjax._src.lax.control_flow import common
from pyjax._src.util import WeakCache, merge_lists, split_list
from pyjax._src.traceback_util import api_boundary

_BOOL_SCALAR = ShapedArray((), np.bool_)


# --- the primitive ----------------------------------------------------------------------

def _while_abstract_eval(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, init = split_list(args, [cond_nconsts, body_nconsts])
    common.check_operands("while_loop cond_fun", cond_jaxpr, cond_consts + init)
    common.check_operands("while_loop body_fun", body_jaxpr, body_consts + init)
    if len(cond_jaxpr.out_avals) != 1 or not (
            cond_jaxpr.out_avals[0].same_type(_BOOL_SCALAR) or _lane_predicate(
                cond_jaxpr.out_avals[0], init)):
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"{cond_jaxpr.out_avals}.")
    outs = body_jaxpr.out_avals
    if len(outs) != len(init) or any(not a.same_type(b) for a, b in zip(init, outs)):
        raise TypeError(f"while_loop body_fun output types {[a.str_short(True) for a in outs]} "
                        f"differ from the carry types {[a.str_short(True) for a in init]}")
    return [b.update(weak_type=a.weak_type and b.weak_type) for a, b in zip(init, outs)]


def _lane_predicate(pred, carry):
    """Whether `pred` is a per-lane predicate of a vmapped while_loop: booleans whose
    shape leads every carry's (the lanes; JAX's batched predicate)."""
    return (pred.dtype == np.bool_ and pred.ndim > 0
            and all(c.shape[:pred.ndim] == pred.shape for c in carry))


def predicate_is_batched(params):
    """Whether the while loop of `params` has a per-lane predicate (vmap made it)."""
    return params["cond_jaxpr"].out_avals[0].ndim > 0


def _scalar_predicate(args, params):
    """(args, params) of a while loop with a scalar predicate that means what a loop with
    a per-lane predicate means: it runs while any lane's predicate holds, and finished
    lanes keep their carry (the body, which takes the cond consts before its own,
    recomputes the predicate and selects). As JAX lowers such a loop."""
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    cond_consts, body_consts, init = split_list(args, [nc, nb])
    new_cond, new_body = _scalar_predicate_jaxprs.get(
        cond_jaxpr, (body_jaxpr, nc, nb),
        lambda: _lane_masked(cond_jaxpr, body_jaxpr, nc, nb))
    return [*cond_consts, *cond_consts, *body_consts, *init], dict(
        cond_jaxpr=new_cond, body_jaxpr=new_body, cond_nconsts=nc, body_nconsts=nc + nb)


_scalar_predicate_jaxprs = WeakCache()


def _lane_masked(cond_jaxpr, body_jaxpr, nc, nb):
    cond_avals, body_avals = cond_jaxpr.in_avals, body_jaxpr.in_avals

    def any_lane(*args):
        return _any_lane(*jx.eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *args))

    def step_live_lanes(*args):
        cc, bc, carry = split_list(args, [nc, nb])
        (pred,) = jx.eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cc, *carry)
        new = jx.eval_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, *bc, *carry)
        return _keep_finished(pred, *new, *carry)

    return (common.trace_closed(any_lane, cond_avals),
            common.trace_closed(step_live_lanes, cond_avals[:nc] + body_avals))


def _any_lane(pred):
    return [reductions.reduce_or(pred, tuple(range(pred.ndim)))]


def _keep_finished(pred, *new_and_old):
    """The new carries in the lanes whose predicate held, the old ones in the others."""
    new, old = split_list(new_and_old, [len(new_and_old) // 2])
    return [ew.select(pred if pred.ndim == n.ndim else st.broadcast_in_dim(
        pred, n.shape, tuple(range(pred.ndim))), n, c) for n, c in zip(new, old)]


@functools.lru_cache(maxsize=256)
def _lane_ops(pred_aval, carry_avals):
    """The jaxprs of _any_lane and _keep_finished for these types (for the lowering)."""
    return (common.trace_closed(_any_lane, [pred_aval]),
            common.trace_closed(_keep_finished, [pred_aval, *carry_avals, *carry_avals]))


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    if cond_jaxpr.out_avals[0].ndim:
        args, params = _scalar_predicate(args, dict(
            cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
            body_nconsts=body_nconsts))
        return _while_impl(*args, **params)
    cond_consts, body_consts, carry = split_list(args, [cond_nconsts, body_nconsts])
    while common.run_closed(cond_jaxpr, cond_consts + carry)[0]:
        carry = common.run_closed(body_jaxpr, body_consts + carry)
    return carry


def _while_eager(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """An eager while loop runs its first iterations on the NumPy executor (a short loop
    ends before XLA could compile it); one still running after
    common.LONG_LOOP_EQUATIONS equations goes on from its carry compiled, as in JAX."""
    if not common.may_compile_eager_loop(args, cond_jaxpr, body_jaxpr):
        return NotImplemented
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    if cond_jaxpr.out_avals[0].ndim:
        args, params = _scalar_predicate(args, params)
        return _while_eager(*args, **params)
    avals = [get_aval(x) for x in args]
    carry_avals = _while_abstract_eval(*avals, **params)
    values = [numpy_backend.host_value(x, a) for x, a in zip(args, avals)]
    cond_consts, body_consts, carry = split_list(values, [cond_nconsts, body_nconsts])
    work = len(cond_jaxpr.jaxpr.eqns) + len(body_jaxpr.jaxpr.eqns) + 1
    for _ in range(common.LONG_LOOP_EQUATIONS // work):
        if not common.run_closed(cond_jaxpr, cond_consts + carry)[0]:
            return [numpy_backend.wrap(v, a) for v, a in zip(carry, carry_avals)]
        carry = common.run_closed(body_jaxpr, body_consts + carry)
    carry = [numpy_backend.wrap(v, a) for v, a in zip(carry, carry_avals)]
    return common.run_compiled(while_p, [*args[:cond_nconsts + body_nconsts], *carry], params)


def _while_effects(cond_jaxpr, body_jaxpr, **_):
    return cond_jaxpr.effects | body_jaxpr.effects


def _bind_while(cond_consts, body_consts, carry, cond_jaxpr, body_jaxpr):
    return while_p.bind(*cond_consts, *body_consts, *carry, body_jaxpr=body_jaxpr,
                        body_nconsts=len(body_consts), cond_jaxpr=cond_jaxpr,
                        cond_nconsts=len(cond_consts))


def _while_jvp(primals, tangents, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, init = split_list(primals, [cond_nconsts, body_nconsts])
    _, body_dots, init_dots = split_list(tangents, [cond_nconsts, body_nconsts])
    bconst_nz = [common.nonzero(t) for t in body_dots]
    carry_nz = common.carry_fixpoint(
        lambda nz: ad.jvp_jaxpr(body_jaxpr, bconst_nz + nz, nz)[1],
        [common.nonzero(t) for t in init_dots])
    body_jvp, _ = ad.jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz)
    nb, nc = len(body_consts), len(init)
    n_bdots = sum(bconst_nz)
    # jvp order [bconsts, carry, bconst dots, carry dots] -> while's [consts, carry].
    order = (list(range(nb)) + list(range(nb + nc, nb + nc + n_bdots)) +
             list(range(nb, nb + nc)) + list(range(nb + nc + n_bdots, len(body_jvp.in_avals))))
    body_jvp = common.permute_binders(body_jvp, in_order=order)
    dot_avals = [ad.tangent_aval(get_aval(x)) for x, nz in zip(init, carry_nz) if nz]
    cond_jvp = common.add_unused_invars(cond_jaxpr, dot_avals, len(cond_jaxpr.in_avals))
    bdots = [t for t, nz in zip(body_dots, bconst_nz) if nz]
    dots = [ad.instantiate_zeros(t) for t, nz in zip(init_dots, carry_nz) if nz]
    outs = _bind_while(cond_consts, body_consts + bdots, init + dots, cond_jvp, body_jvp)
    carry, dots_out = split_list(outs, [nc])
    return carry, common.merge_tangents(carry, carry_nz, dots_out)


def _while_partial_eval(trace, args, unknowns, params):
    """The carries that never depend on unknown values are computed now by a known loop;
    the unknown carries need the whole loop, which is staged (with forward-mode results
    this is what linearize needs; transposing it raises the reverse-mode error)."""
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    nc_cond, nc_body = params["cond_nconsts"], params["body_nconsts"]
    cond_uk, body_uk, init_uk = split_list(unknowns, [nc_cond, nc_body])
    carry_uk = common.carry_fixpoint(
        lambda uk: pe.partial_eval_jaxpr_nounits(body_jaxpr, body_uk + uk, uk)[2], init_uk)
    pred_uk = pe.partial_eval_jaxpr_nounits(cond_jaxpr, cond_uk + carry_uk, False)[2][0]
    if pred_uk or all(carry_uk):
        return trace.stage(while_p, args, params)
    cond_consts, body_consts, init = split_list(args, [nc_cond, nc_body])
    known_cond = _known_part(cond_jaxpr, cond_uk + carry_uk, [False])
    known_body = _known_part(body_jaxpr, body_uk + carry_uk, carry_uk)
    with set_current_trace(trace.parent):
        known = _bind_while(
            [x for x, uk in zip(cond_consts, cond_uk) if not uk],
            [x for x, uk in zip(body_consts, body_uk) if not uk],
            [x for x, uk in zip(init, carry_uk) if not uk], known_cond, known_body)
    staged = trace.stage(while_p, args, params)
    return merge_lists(carry_uk, known, [x for x, uk in zip(staged, carry_uk) if uk])


def _known_part(closed, unknowns, instantiate):
    """The jaxpr computing the known outputs from the known inputs (no residuals)."""
    known, _, out_uk, num_res = pe.partial_eval_jaxpr_nounits(closed, unknowns, instantiate)
    n_known = len(out_uk) - sum(out_uk)
    jaxpr, consts, _ = pe.dce_closed_jaxpr(known.jaxpr, known.consts,
                                           [True] * n_known + [False] * num_res)
    return jx.ClosedJaxpr(jaxpr, consts)


def _while_transpose(cts, *args, **params):
    raise ValueError(REVERSE_MODE_ERROR)


def _while_batch(axis, args, dims, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    if all(d is batching.not_mapped for d in dims) and not (
            batching.jaxpr_uses_axis(cond_jaxpr, axis.name)
            or batching.jaxpr_uses_axis(body_jaxpr, axis.name)):
        return while_p.bind(*args, **params), [batching.not_mapped] * (
            len(args) - cond_nconsts - body_nconsts)
    size = axis.size
    batched = [d is not batching.not_mapped for d in dims]
    cond_b, body_b, init_b = split_list(batched, [cond_nconsts, body_nconsts])
    carry_b = common.carry_fixpoint(
        lambda b: batching.batch_jaxpr(body_jaxpr, axis, body_b + b, b)[1], init_b)
    pred_b = batching.batch_jaxpr(cond_jaxpr, axis, cond_b + carry_b, False)[1][0]
    if cond_jaxpr.out_avals[0].ndim and not pred_b and any(carry_b):
        # the lanes of an inner vmap, which this one does not split: its batch goes
        # behind them in the carries, as the loop's scalar form batches it
        args, params = _scalar_predicate(args, params)
        nc = cond_nconsts
        return _while_batch(axis, args, [*dims[:nc], *dims[:nc], *dims[nc:]], **params)
    if pred_b:
        # Lanes finish at different trips: every carry is per-lane, the loop runs while
        # any lane's predicate holds, and finished lanes keep their carry (the loop's
        # predicate stays per lane: _scalar_predicate says what it means). Finished
        # lanes would still run an io_callback's effect (JAX refuses).
        if common.has_io_effect(cond_jaxpr, body_jaxpr):
            raise NotImplementedError(
                "IO effect not supported in while_loop with batched predicate.")
        carry_b = [True] * len(carry_b)
    cond_consts, body_consts, init = split_list(
        [batching.moveaxis(x, d, 0) if b else x for x, d, b in zip(args, dims, batched)],
        [cond_nconsts, body_nconsts])
    init = [batching.bdim_at_front(x, d, size) if b and d is batching.not_mapped
            else x for x, d, b in zip(init, dims[cond_nconsts + body_nconsts:], carry_b)]
    cond_bj, _ = batching.batch_jaxpr(cond_jaxpr, axis, cond_b + carry_b, pred_b)
    body_bj, _ = batching.batch_jaxpr(body_jaxpr, axis, body_b + carry_b, carry_b)
    outs = _bind_while(cond_consts, body_consts, init, cond_bj, body_bj)
    return outs, [0 if b else batching.not_mapped for b in carry_b]


def _while_dce(used_outputs, eqn):
    """Keeps the carries that are used, that the predicate reads, or that the kept body
    work reads (a fixed point); the body computes only those."""
    params = eqn.params
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    nc_cond, nc_body = params["cond_nconsts"], params["body_nconsts"]
    cond_consts_used, cond_reads = split_list(
        jx.prune_closed_jaxpr(cond_jaxpr, [True])[1], [nc_cond])
    live = common.carry_fixpoint(
        lambda c: jx.prune_closed_jaxpr(body_jaxpr, c)[1][nc_body:],
        [u or r for u, r in zip(used_outputs, cond_reads)])
    body_consts_used = jx.prune_closed_jaxpr(body_jaxpr, live)[1][:nc_body]
    body, _ = jx.prune_closed_jaxpr(body_jaxpr, live, body_consts_used + live)
    cond, _ = jx.prune_closed_jaxpr(cond_jaxpr, [True], cond_consts_used + live)
    cond_consts, body_consts, carry = split_list(eqn.invars, [nc_cond, nc_body])
    outvars = [v if u else jx.DropVar(v.aval)
               for v, u, k in zip(eqn.outvars, used_outputs, live) if k]
    return eqn.replace(
        invars=(common.pick(cond_consts, cond_consts_used)
                + common.pick(body_consts, body_consts_used) + common.pick(carry, live)),
        outvars=outvars,
        params=dict(params, cond_jaxpr=cond, body_jaxpr=body,
                    cond_nconsts=sum(cond_consts_used), body_nconsts=sum(body_consts_used)))


def _while_lower(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """stablehlo.while; the consts ride along in the loop state (unchanged), so the
    regions read nothing from the enclosing scope. A per-lane predicate is lowered as
    JAX's: the loop runs while any lane's holds, and the body recomputes it (under
    'body_pred') to keep the finished lanes' carries."""
    avals = [a.strip_weak_type() for a in ctx.avals_in]
    n_consts = cond_nconsts + body_nconsts
    avals_out = ctx.avals_out
    pred_aval = cond_jaxpr.out_avals[0]
    if pred_aval.ndim:
        any_lane, keep_finished = _lane_ops(pred_aval, tuple(avals[n_consts:]))

    def cond_region(c, *state):
        cond_consts, _, carry = split_list(state, [cond_nconsts, body_nconsts])
        pred = c.lower_jaxpr(cond_jaxpr, cond_consts + carry, ("while", "cond"))
        return c.lower_jaxpr(any_lane, pred, ("while", "cond")) if pred_aval.ndim else pred

    def body_region(c, *state):
        consts, carry = list(state[:n_consts]), list(state[n_consts:])
        new = c.lower_jaxpr(body_jaxpr, consts[cond_nconsts:] + carry, ("while", "body"))
        if pred_aval.ndim:
            pred = c.lower_jaxpr(cond_jaxpr, consts[:cond_nconsts] + carry,
                                 ("while", "body_pred"))
            new = c.lower_jaxpr(keep_finished, pred + new + carry, ("while", "body"))
        return consts + new

    outs = ctx.op("stablehlo.while", list(args), avals,
                  regions=[ctx.region(avals, cond_region), ctx.region(avals, body_region)])
    return ctx.constrained_to_types(outs[n_consts:], avals_out)


def _while_samples():
    from pyjax._src.lax.builders import Sample, random_values
    i32, f32 = ShapedArray((), np.int32), ShapedArray((3,), np.float32)
    cond = common.trace_closed(lambda i, x: [ew.lt(i, np.int32(3))], [i32, f32])
    body = common.trace_closed(lambda c, i, x: [ew.add(i, np.int32(1)),
                                                ew.mul(ew.sin(x), c)], [f32, i32, f32])
    args = [random_values((3,), np.float32, seed=1), np.int32(0),
            random_values((3,), np.float32, seed=2)]
    return [Sample(args, {"body_jaxpr": body, "body_nconsts": 1, "cond_jaxpr": cond,
                          "cond_nconsts": 0})]


while_p = define_primitive(
    "while", multiple_results=True, impl=_while_impl, eager=_while_eager,
    abstract_eval=_while_abstract_eval,
    samples=lambda: _while_samples(),
    jvp=_while_jvp, transpose=_while_transpose, batch=_while_batch, lower=_while_lower,
    effects=_while_effects, partial_eval=_while_partial_eval, dce=_while_dce,
    is_higher_order=True, batch_needs_axis=True)

REVERSE_MODE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
    "start/stop.")


# --- while_loop -------------------------------------------------------------------------

def _trace_while(cond_fun, body_fun, init_val):
    init_vals, in_tree = tree_util.flatten((init_val,))
    init_avals = common.avals_of(init_vals)
    cond_jaxpr, cond_consts, cond_tree, cond_refs = common.trace_fun(
        cond_fun, in_tree, init_avals, "lax.while_loop", capture_refs=True)
    body_jaxpr, body_consts, body_tree, body_refs = common.trace_fun(
        body_fun, in_tree, init_avals, "lax.while_loop", capture_refs=True)
    if not tree_util.treedef_is_leaf(cond_tree) or len(cond_jaxpr.out_avals) != 1:
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
    if not cond_jaxpr.out_avals[0].same_type(_BOOL_SCALAR):   # (any mesh; may vary)
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"{cond_jaxpr.out_avals}.")
    return (init_vals, init_avals, in_tree.children()[0], cond_jaxpr, cond_consts,
            body_jaxpr, body_consts, body_tree, (cond_refs, body_refs))


@api_boundary
def while_loop(cond_fun, body_fun, init_val):
    """Runs `val = body_fun(val)` while `cond_fun(val)` is True and returns the final val.
    Both functions are traced once; the carry keeps one structure and type throughout.
    Forward-mode differentiable; reverse mode needs scan or a fori_loop with static
    bounds."""
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    if config.disable_jit_flag.value:
        try:   # every carry leaf an Array, so a body's in-place `+=` mutates no input
            val = tree_util.tree_map(as_array, init_val)
            while cond_fun(val):
                val = tree_util.tree_map(as_array, body_fun(val))
            return val
        except errors.ConcretizationTypeError:
            pass   # a traced predicate (e.g. under vmap): stage the loop instead
    traced = _trace_while(cond_fun, body_fun, init_val)
    init_vals, init_avals, init_tree, _, _, body_jaxpr, _, body_tree, _ = traced
    new_vals, changed = common.promote_weak_carry(init_vals, init_avals,
                                                  body_jaxpr.out_avals)
    if changed:
        init_val = tree_util.tree_unflatten(init_tree, new_vals)
        traced = _trace_while(cond_fun, body_fun, init_val)
    (init_vals, init_avals, init_tree, cond_jaxpr, cond_consts, body_jaxpr, body_consts,
     body_tree, (cond_refs, body_refs)) = traced
    num_out = len(body_jaxpr.out_avals) - sum(c.written for c in body_refs)
    common.check_carry_type("while_loop body", body_fun, init_tree, init_avals, body_tree,
                            body_jaxpr.out_avals[:num_out])
    # jax.Refs either function closes over are carried through the loop and stored back
    refs = common.union_of_captures(cond_refs, body_refs)
    if refs:
        cond_jaxpr = common.refs_as_carries(cond_jaxpr, len(cond_consts) + len(init_vals), 1,
                                            cond_refs, refs, outputs=False)
        body_jaxpr = common.refs_as_carries(body_jaxpr, len(body_consts) + len(init_vals),
                                            len(init_vals), body_refs, refs)
        init_vals = init_vals + [c.ref[...] for c in refs]
    cond_jaxpr, body_jaxpr, moved = _read_only_carries(cond_jaxpr, len(cond_consts),
                                                       body_jaxpr, len(body_consts))
    moved_vals = [x for x, m in zip(init_vals, moved) if m]
    outs = _bind_while(cond_consts, moved_vals + list(body_consts),
                       [x for x, m in zip(init_vals, moved) if not m], cond_jaxpr, body_jaxpr)
    outs = merge_lists(moved, outs, moved_vals)
    if refs:
        outs, ref_values = split_list(outs, [len(outs) - len(refs)])
        for c, value in zip(refs, ref_values):
            c.ref._value = value
    return tree_util.tree_unflatten(body_tree, outs)


def _read_only_carries(cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    """As JAX's while_loop: a carry the body returns unchanged and the predicate does not
    read becomes a body const, and the loop's output is the initial value itself (vmap
    with a batched predicate then leaves it unbatched). Returns the new cond and body and,
    per carry, whether it moved."""
    nk = len(body_jaxpr.out_avals)
    fwd = jx.forwarded_inputs(body_jaxpr.jaxpr)
    _, cond_reads = jx.prune_closed_jaxpr(cond_jaxpr, [True])
    moved = [fwd[i] == body_nconsts + i and not cond_reads[cond_nconsts + i] for i in range(nk)]
    if not any(moved):
        return cond_jaxpr, body_jaxpr, moved
    cond_in = cond_jaxpr.jaxpr.invars
    cond_jaxpr = common.with_binders(cond_jaxpr, cond_in[:cond_nconsts] + [
        v for v, m in zip(cond_in[cond_nconsts:], moved) if not m])
    body_in = body_jaxpr.jaxpr.invars
    carry_in = body_in[body_nconsts:]
    body_jaxpr = common.with_binders(
        body_jaxpr,
        [v for v, m in zip(carry_in, moved) if m] + body_in[:body_nconsts]
        + [v for v, m in zip(carry_in, moved) if not m],
        [v for v, m in zip(body_jaxpr.jaxpr.outvars, moved) if not m])
    return cond_jaxpr, body_jaxpr, moved
