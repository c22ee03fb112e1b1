"""checkpoint (remat): differentiate a function while saving only the residuals a policy
allows; the backward pass recomputes the others from what was saved. Also the policies,
checkpoint_name (the `name` primitive) and saved_residuals. Imports api siblings and below."""
from __future__ import annotations

import inspect
import logging
import types
import weakref
from collections.abc import Sequence

from pyjax._src import config, dtypes, errors, tree_util
from pyjax._src.sharding import tracing_context
from pyjax._src.api.shapes import abstractify
from pyjax._src.backends import numpy_backend
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import AbstractRef, ShapedArray, get_aval
from pyjax._src.core.trace import Tracer, define_primitive, set_current_trace
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import builders as b
from pyjax._src.lax.call import jit_p
from pyjax._src.lax.control_flow import common
from pyjax._src.lax.control_flow.conditionals import cond_p
from pyjax._src.lax.control_flow.scan import scan_p
from pyjax._src.lax.dot import dot_general_p
from pyjax._src.lax.precision_ops import reduce_precision_p
from pyjax._src.util import WeakCache, merge_lists, split_list, wraps


_logger = logging.getLogger("jax._src.ad_checkpoint")   # JAX's logger name

# --- policies ---------------------------------------------------------------------------
# A policy is called as policy(primitive, *input_avals, **params) for each equation whose
# result the backward pass needs, and says whether that result may be saved (True) or
# must be recomputed from saved values (False).

def everything_saveable(*_, **__):
    """Save every residual, as if jax.checkpoint were not used."""
    return True


def nothing_saveable(*_, **__):
    """Save nothing but the checkpointed function's inputs; recompute everything else
    (what jax.checkpoint does without a policy)."""
    return False


def dots_saveable(prim, *_, **__):
    """Save the results of matrix multiplications and convolutions only."""
    # By name: the convolution family loads lazily, and a jaxpr holding it has loaded it.
    return prim is dot_general_p or prim.name == "conv_general_dilated"


def dots_with_no_batch_dims_saveable(prim, *_, **params):
    """Save the results of dot_generals without batch dimensions only."""
    if prim is not dot_general_p:
        return False
    _, (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


def save_anything_except_these_names(*names):
    """Save any value except the checkpoint_name outputs with one of `names`."""
    excluded = frozenset(names)

    def policy(prim, *_, **params):
        return prim is not name_p or params["name"] not in excluded
    return policy


def save_any_names_but_these(*names):
    """Save only checkpoint_name outputs, except those with one of `names`."""
    excluded = frozenset(names)

    def policy(prim, *_, **params):
        return prim is name_p and params["name"] not in excluded
    return policy


def save_only_these_names(*names):
    """Save only the checkpoint_name outputs with one of `names`."""
    allowed = frozenset(names)

    def policy(prim, *_, **params):
        return prim is name_p and params["name"] in allowed
    return policy


def save_from_both_policies(policy_1, policy_2):
    """Save what either policy saves."""
    def policy(prim, *args, **params):
        return policy_1(prim, *args, **params) or policy_2(prim, *args, **params)
    return policy


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src,
                                      offload_dst):
    """Save the checkpoint_name outputs named in either list. pyjax has one memory
    space, so a value JAX would offload to host memory is simply saved."""
    return save_only_these_names(*names_which_can_be_saved, *names_which_can_be_offloaded)


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """dots_with_no_batch_dims_saveable (pyjax's one memory space: offloading is saving)."""
    return dots_with_no_batch_dims_saveable


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims)


# --- checkpoint -------------------------------------------------------------------------

def _static_positions(static_argnums, nargs):
    if isinstance(static_argnums, int) and not isinstance(static_argnums, bool):
        static_argnums = (static_argnums,)
    if not (isinstance(static_argnums, tuple) and all(
            isinstance(i, int) and not isinstance(i, bool) for i in static_argnums)):
        raise TypeError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` "
                        f"must be an int or a tuple of ints, but got {static_argnums!r}")
    if not all(-nargs <= i < nargs for i in static_argnums):
        raise ValueError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` "
                         f"can only take integer values greater than or equal to -{nargs} "
                         f"and less than {nargs} (the number of positional arguments "
                         f"passed), but got {static_argnums}")
    return {i % nargs for i in static_argnums}


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """fun, made to save only some residuals when differentiated (by default none but its
    inputs) and to recompute the others in the backward pass, trading compute for memory.
    `policy` (one of jax.checkpoint_policies) says which intermediates may be saved;
    prevent_cse keeps the compiler from merging the recomputation with the forward pass
    (a tuple, a tree prefix of the arguments, says it per argument);
    arguments at static_argnums are Python values baked into the trace."""
    if not callable(fun):
        raise TypeError(f"jax.checkpoint requires a callable argument, got {fun!r}.")
    if isinstance(prevent_cse, Sequence):
        prevent_cse = tuple(prevent_cse)
    if not isinstance(prevent_cse, (tuple, bool)):
        raise TypeError("prevent_cse must be a bool or tuple of bools, got "
                        f"{type(prevent_cse)=}")
    if policy is not None and not callable(policy):
        raise TypeError("the `policy` argument to `jax.checkpoint` must be a callable such "
                        f"as one of jax.checkpoint_policies, got {policy!r}.")

    @wraps(fun)
    def fun_remat(*args, **kwargs):
        nums = _static_positions(static_argnums, len(args))
        dyn = [a for i, a in enumerate(args) if i not in nums]
        leaves, in_tree = tree_util.flatten((dyn, kwargs))
        # jax.Ref arguments reach the function by closure: the trace captures them (as
        # it does refs the function closes over), their values go in last and those
        # written come back last
        is_ref = [type(get_aval(x)) is AbstractRef for x in leaves]
        refs = [x for x, r in zip(leaves, is_ref) if r]
        leaves = [x for x, r in zip(leaves, is_ref) if not r]
        statics = tuple(_Static(args[i]) for i in sorted(nums))
        in_avals = tuple(get_aval(x) for x in leaves)
        closed, hoisted, captures, out_tree = _traced(fun, args, nums, in_tree, in_avals,
                                                      statics, is_ref, refs)
        cse = prevent_cse
        if isinstance(prevent_cse, tuple):   # one flag per operand, as JAX's
            cse_args = (tuple(dyn), kwargs) if kwargs else tuple(dyn)
            flags = tree_util.prefix_broadcast(
                prevent_cse, tree_util.flatten(cse_args)[1], "prevent_cse")
            cse = ((False,) * len(hoisted) + tuple(f for f, r in zip(flags, is_ref) if not r)
                   + (False,) * len(captures))
        outs = checkpoint_p.bind(*hoisted, *leaves, *[c.ref[...] for c in captures],
                                 jaxpr=closed, prevent_cse=cse,
                                 differentiated=False, policy=policy)
        written = [c.ref for c in captures if c.written]
        for ref, value in zip(written, outs[len(outs) - len(written):]):
            ref._value = value
        return tree_util.tree_unflatten(out_tree, outs[:len(outs) - len(written)])
    return fun_remat


class _Static:
    """A static argument as part of a cache key: equal by value when hashable, else by
    identity (as JAX keys them)."""

    __slots__ = ("value", "hash", "hashable")

    def __init__(self, value):
        self.value = value
        try:
            self.hash, self.hashable = hash(value), True
        except TypeError:
            self.hash, self.hashable = id(value), False

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        if not isinstance(other, _Static):
            return NotImplemented
        if self.hashable and other.hashable:
            return type(self.value) is type(other.value) and self.value == other.value
        return self.value is other.value


_trace_cache = WeakCache()


def _traced(fun, args, nums, in_tree, in_avals, statics, is_ref, refs):
    """(closed jaxpr, hoisted tracers, captured refs, output tree) of fun at these
    argument types and static values (the leaves flagged in `is_ref` being the jax.Refs
    `refs`). Cached per function, as JAX caches it, so that a checkpointed function
    called eagerly is traced once; a trace closing over outer tracers or refs (or with a
    tracer as a static value, or a ref among the arguments) is not reusable."""
    def trace():
        found = {}

        def flat_fun(*xs):
            merged = merge_lists(is_ref, list(xs), refs)
            call_args, call_kwargs = tree_util.tree_unflatten(in_tree, merged)
            it = iter(call_args)
            full = [args[i] if i in nums else next(it) for i in range(len(args))]
            out_leaves, found["out_tree"] = tree_util.flatten(fun(*full, **call_kwargs))
            return out_leaves

        try:
            closed, hoisted, captures = pe.trace_to_closed_jaxpr(
                flat_fun, list(in_avals), pe.debug_info_of(fun), capture_refs=True)
        except errors.ConcretizationTypeError as err:
            err.add_note("In a function decorated with jax.checkpoint, mark arguments that "
                         "Python control flow depends on with the `static_argnums` "
                         "argument of jax.checkpoint.")
            raise
        return closed, hoisted, captures, found["out_tree"]

    if (refs or any(isinstance(s.value, Tracer) for s in statics)
            or not _weakly_referable(fun)):
        return trace()
    return _trace_cache.get(fun, (in_tree, statics, in_avals, tracing_context()), trace,
                            keep=lambda entry: not entry[1] and not entry[2])


def _weakly_referable(fun):
    try:
        weakref.ref(fun)
    except TypeError:
        return False
    return True

remat = checkpoint


def _checkpoint_impl(*args, jaxpr, **params):
    return numpy_backend.execute_closed_jaxpr(jaxpr, list(args))


def _checkpoint_eager(*args, jaxpr, **params):
    """Eagerly the body runs equation by equation, as JAX's does: a jitted function
    inside it runs compiled, as it would outside the checkpoint."""
    return jx.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _checkpoint_abstract_eval(*avals, jaxpr, **params):
    return jaxpr.out_avals


def with_cse(params, flags):
    """params whose per-operand prevent_cse (a tuple) is flags(it); a bool stays."""
    cse = params["prevent_cse"]
    return params if isinstance(cse, bool) else dict(params, prevent_cse=tuple(flags(cse)))


def _checkpoint_jvp(primals, tangents, **params):
    return ad.call_jvp(checkpoint_p, primals, tangents, params, lambda params, jaxpr, n: (
        with_cse(dict(params, jaxpr=jaxpr), lambda cse: cse + (True,) * (n - len(cse)))))


class _RematSplit:
    """How a checkpoint splits for given unknown inputs and policy: `known` maps the
    known inputs to the known outputs and the saved intermediates; `staged` maps the
    saved values (known inputs at `saved_inputs`, then the saved intermediates) and the
    unknown inputs to the unknown outputs, recomputing every residual it was not given."""

    __slots__ = ("known", "staged", "out_unknowns", "saved_inputs", "num_known_out")

    def __init__(self, known, staged, out_unknowns, saved_inputs, num_known_out):
        self.known, self.staged, self.out_unknowns = known, staged, out_unknowns
        self.saved_inputs, self.num_known_out = saved_inputs, num_known_out


_split_cache = WeakCache()


def _remat_split(closed, unknowns, policy):
    return _split_cache.get(closed, (tuple(unknowns), policy), lambda: _build_split(
        closed, list(unknowns), policy or nothing_saveable))


def _choose_saved(known_jaxpr, residuals, saveable):
    """Walks back from the residuals through the known equations: a needed result of an
    equation the policy allows to save (or with effects: never run twice) is saved;
    other equations are recomputed, so their inputs are needed in turn. A cond or a
    scan whose body holds values the policy saves is split (`_split_cond`,
    `_split_scan`), as JAX's policies reach inside control flow. Returns (saved
    intermediates, equations to recompute in order, the set of needed variables, the
    known equations in order)."""
    needed = {v for v in residuals if type(v) is jx.Var}
    saved, recompute, known = [], [], []
    for eqn in reversed(known_jaxpr.eqns):
        outs = [v for v in eqn.outvars if v in needed]
        split = None
        if not outs:
            pass
        elif eqn.effects or saveable(eqn.primitive, *[v.aval for v in eqn.invars],
                                     **eqn.params):
            saved.append(outs)
        elif (split := _SPLITS.get(eqn.primitive, _no_split)(eqn, outs, saveable)):
            eqn, slots, again = split
            saved.append(slots)
            if again is not None:
                recompute.append(again)
                needed.update(v for v in again.invars if type(v) is jx.Var)
        else:
            recompute.append(eqn)
            needed.update(v for v in eqn.invars if type(v) is jx.Var)
        known.append(eqn)
    return ([v for outs in reversed(saved) for v in outs], recompute[::-1], needed,
            known[::-1])


def _split_cond(eqn, outs, saveable):
    """A cond whose needed results `outs` depend on values the policy saves inside its
    branches: (the known cond, which also returns each branch's saved values in slots
    of its own, zeros in the other branches'; those slot variables; a cond recomputing
    `outs` from the operands and the slots). None when no branch saves anything (the
    cond is then recomputed whole)."""
    branches = tuple(_policy_view(br, saveable) for br in eqn.params["branches"])
    index, ops = eqn.invars[0], eqn.invars[1:]
    positions = [i for i, v in enumerate(eqn.outvars) if v in outs]
    plans = []
    for branch in branches:
        wanted = [branch.jaxpr.outvars[i] for i in positions]
        saved, again, needed, known = _choose_saved(branch.jaxpr, wanted, saveable)
        plans.append((saved, again, needed, known, wanted))
    if not any(plan[0] for plan in plans):
        return None
    slots = [(k, v.aval) for k, plan in enumerate(plans) for v in plan[0]]
    used_ops = [any(br.jaxpr.invars[i] in plan[2] for br, plan in zip(branches, plans))
                for i in range(len(ops))]

    def known_branch(k):
        branch, (saved, _, _, known, _) = branches[k], plans[k]
        body = branch.jaxpr
        jaxpr = jx.Jaxpr(body.constvars, body.invars, [*body.outvars, *saved], known,
                         body.effects, body.debug_info)
        n = len(body.outvars)

        def run(*args):
            outs = jx.eval_jaxpr(jaxpr, branch.consts, *args)
            mine = iter(outs[n:])
            return [*outs[:n], *[next(mine) if owner == k else pe.zeros_like_aval(aval)
                                 for owner, aval in slots]]
        return pe.trace_to_closed_jaxpr(run, branch.in_avals)[0]

    def recompute_branch(k):
        branch, (saved, again, _, _, wanted) = branches[k], plans[k]
        mine = iter(saved)
        slot_vars = [next(mine) if owner == k else jx.Var(aval) for owner, aval in slots]
        body = branch.jaxpr
        invars = [v for v, u in zip(body.invars, used_ops) if u] + slot_vars
        return jx.ClosedJaxpr(jx.Jaxpr(body.constvars, invars, wanted, again, body.effects,
                                       body.debug_info), branch.consts)

    slot_vars = [jx.Var(aval) for _, aval in slots]
    known = eqn.replace(outvars=[*eqn.outvars, *slot_vars], params=dict(
        eqn.params, branches=tuple(known_branch(k) for k in range(len(branches)))))
    again = eqn.replace(
        invars=[index, *[v for v, u in zip(ops, used_ops) if u], *slot_vars],
        outvars=[eqn.outvars[i] for i in positions], params=dict(
            eqn.params, branches=tuple(recompute_branch(k) for k in range(len(branches)))))
    return known, slot_vars, again


def _split_scan(eqn, outs, saveable):
    """A scan whose needed results `outs` depend on values the policy saves inside its
    body: (the known scan, which also returns the body's saved values stacked per
    iteration; the variables holding what is saved: those stacks, and the needed
    results that are saved values themselves (a final carry is the last iteration's);
    a scan recomputing the other needed results from the stacks, the consts and the
    xs, or None when there are none). The recomputing scan carries what it reads of
    the carries and recomputes their updates (from saved values too), as JAX's does.
    None when the body saves nothing (the scan is then recomputed whole)."""
    params = eqn.params
    nc, nk, length = params["num_consts"], params["num_carry"], params["length"]
    closed = _policy_view(params["jaxpr"], saveable)
    body = closed.jaxpr
    positions = [i for i, v in enumerate(eqn.outvars) if v in outs]
    saved, again, needed, known = _choose_saved(body, [body.outvars[i] for i in positions],
                                                saveable)
    direct = [i for i in positions if body.outvars[i] in saved]
    stacked = {body.outvars[i]: eqn.outvars[i] for i in direct if i >= nk}
    rest = [i for i in positions if i not in direct]
    const_in, carry_in, xs_in = split_list(body.invars, [nc, nk])
    carries = [k in rest for k in range(nk)]
    while rest:   # the carries the recomputation reads, and so recomputes: a fixed point
        wanted = [body.outvars[i] for i in rest] + common.pick(body.outvars[:nk], carries)
        saved, again, needed, known = _choose_saved(body, wanted, saveable)
        grown = [c or v in needed for c, v in zip(carries, carry_in)]
        if grown == carries:
            break
        carries = grown
    if not saved and not direct:
        return None
    extra = [v for v in saved if v not in stacked]
    slots = [jx.Var(v.aval.update(shape=(length, *v.aval.shape))) for v in extra]
    stacked.update(zip(extra, slots))
    known_body = jx.Jaxpr(body.constvars, body.invars, [*body.outvars, *extra], known,
                          body.effects, body.debug_info)
    known_eqn = eqn.replace(outvars=[*eqn.outvars, *slots], params=dict(
        params, jaxpr=jx.ClosedJaxpr(known_body, closed.consts)))
    held = [eqn.outvars[i] for i in direct] + slots
    if not rest:
        return known_eqn, held, None
    consts = [k for k, v in enumerate(const_in) if v in needed]
    xs = [k for k, v in enumerate(xs_in) if v in needed]
    invars = ([const_in[k] for k in consts] + common.pick(carry_in, carries)
              + [xs_in[k] for k in xs] + saved)
    operands = ([eqn.invars[k] for k in consts] + common.pick(eqn.invars[nc:nc + nk], carries)
                + [eqn.invars[nc + nk + k] for k in xs] + [stacked[v] for v in saved])
    again_body = jx.Jaxpr(body.constvars, invars, common.pick(body.outvars[:nk], carries)
                          + [body.outvars[i] for i in rest if i >= nk], again, body.effects,
                          body.debug_info)
    again_eqn = eqn.replace(
        invars=operands,
        outvars=[v if k in rest else jx.DropVar(v.aval) for k, v in enumerate(eqn.outvars[:nk])
                 if carries[k]] + [eqn.outvars[i] for i in rest if i >= nk],
        params=dict(params, jaxpr=jx.ClosedJaxpr(again_body, closed.consts),
                    num_consts=len(consts), num_carry=sum(carries),
                    linear=(False,) * len(operands)))
    return known_eqn, held, again_eqn


def _no_split(eqn, outs, saveable):
    return None


_SPLITS = {cond_p: _split_cond, scan_p: _split_scan}


class _InliningTrace(pe.DynamicJaxprTrace):
    """Stages the body of each jit call in place of the call."""

    def process_primitive(self, prim, args, params):
        if prim is jit_p:
            return jx.eval_jaxpr(params["jaxpr"].jaxpr, params["jaxpr"].consts, *args)
        return super().process_primitive(prim, args, params)


def _inline_jit_calls(closed):
    """closed without jit calls at its top level, so that the policy sees the equations
    inside them (a dot in a jitted helper is saveable under dots_saveable)."""
    if not any(eqn.primitive is jit_p for eqn in closed.jaxpr.eqns):
        return closed
    trace = _InliningTrace(closed.jaxpr.debug_info)
    ins = [trace.new_arg(a, i) for i, a in enumerate(closed.in_avals)]
    try:
        with set_current_trace(trace):
            outs = jx.eval_jaxpr(closed.jaxpr, closed.consts, *ins)
            outs = [trace.own_or_lift(x) for x in outs]
    finally:
        trace.end()
    return jx.ClosedJaxpr(*trace.to_jaxpr(ins, outs))


def _round_saved(closed, n_known):
    """closed with each saved float intermediate (an output past the first `n_known`)
    that its own equations also read rounded to its dtype (reduce_precision), as JAX
    does: XLA may keep a fused value in excess precision (a bf16 dot computed in f32),
    which the forward pass would then use while the backward pass gets the rounded
    saved value."""
    jaxpr = closed.jaxpr
    read = {v for eqn in jaxpr.eqns for v in eqn.invars if type(v) is jx.Var}
    raw = {v: jx.Var(v.aval) for v in jaxpr.outvars[n_known:]
           if v in read and isinstance(v.aval, ShapedArray)
           and dtypes.is_float(v.aval.dtype)}
    if not raw:
        return closed
    eqns = []
    for eqn in jaxpr.eqns:
        if not any(v in raw for v in eqn.outvars):
            eqns.append(eqn)
            continue
        eqns.append(eqn.replace(outvars=[raw.get(v, v) for v in eqn.outvars]))
        for v in eqn.outvars:
            if v in raw:
                info = dtypes.finfo(v.aval.dtype)
                eqns.append(jx.JaxprEqn([raw[v]], [v], reduce_precision_p,
                                        {"exponent_bits": info.nexp,
                                         "mantissa_bits": info.nmant},
                                        source_info=eqn.source_info, ctx=eqn.ctx))
    return jx.ClosedJaxpr(jx.Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns,
                                   jaxpr.effects, jaxpr.debug_info), closed.consts)


def _policy_view(closed, saveable):
    """closed as the policy sees it: with the equations of its jit calls in place of the
    calls (a policy that saves everything saves each call whole)."""
    return closed if saveable is everything_saveable else _inline_jit_calls(closed)


def _build_split(closed, unknowns, saveable):
    closed = _policy_view(closed, saveable)
    known, unknown, out_uk, num_res = pe.partial_eval_jaxpr_nounits(closed, unknowns, False)
    kj = known.jaxpr
    n_known = len(out_uk) - sum(out_uk)
    residuals = kj.outvars[n_known:] if any(out_uk) else []
    saved, recompute, needed, known_eqns = _choose_saved(kj, residuals, saveable)
    saved_inputs = [i for i, v in enumerate(kj.invars) if v in needed]
    saved_vars = [kj.invars[i] for i in saved_inputs] + saved
    known_part = jx.ClosedJaxpr(jx.Jaxpr(kj.constvars, kj.invars, kj.outvars[:n_known] + saved,
                                         known_eqns, None, kj.debug_info), known.consts)
    known_part, _ = jx.prune_closed_jaxpr(known_part, [True] * (n_known + len(saved)),
                                          [True] * len(kj.invars))
    known_part = _round_saved(known_part, n_known)
    # the recomputation is named as JAX names it ('rematted_computation/cos')
    recompute = [e.replace(source_info=e.source_info.under("rematted_computation"))
                 if e.source_info else e for e in recompute]
    rebuild, _ = jx.prune_closed_jaxpr(
        jx.ClosedJaxpr(jx.Jaxpr(kj.constvars, saved_vars, residuals, recompute),
                       known.consts), [True] * len(residuals), [True] * len(saved_vars))
    n_saved = len(saved_vars)

    def staged_fun(*args):
        res = jx.eval_jaxpr(rebuild.jaxpr, rebuild.consts, *args[:n_saved])
        return jx.eval_jaxpr(unknown.jaxpr, unknown.consts, *res, *args[n_saved:])

    in_avals = [v.aval for v in saved_vars] + [
        a for a, uk in zip(closed.in_avals, unknowns) if uk]
    staged, hoisted = pe.trace_to_closed_jaxpr(staged_fun, in_avals, kj.debug_info)
    assert not hoisted, "a closed jaxpr cannot close over tracers"
    return _RematSplit(known_part, staged, out_uk, saved_inputs, n_known)


def _checkpoint_partial_eval(trace, args, unknowns, params):
    """Known outputs and the residuals the policy saves are computed now (by a known
    checkpoint); the unknown outputs are staged as a checkpoint of the saved values and
    the unknown inputs, which recomputes the residuals that were not saved."""
    if common.has_io_effect(params["jaxpr"]):   # recomputing would repeat the callback
        raise NotImplementedError(
            "Effects not supported in partial-eval of `checkpoint`/`remat`: "
            f"{sorted(map(str, params['jaxpr'].effects))}")
    if all(unknowns):
        return trace.stage(checkpoint_p, args, params)
    split = _remat_split(params["jaxpr"], unknowns, params["policy"])
    # per-operand prevent_cse: saved inputs keep their flags, saved intermediates get True
    known_params = with_cse(params, lambda cse: [c for c, uk in zip(cse, unknowns) if not uk])
    staged_params = with_cse(params, lambda cse: [
        known_params["prevent_cse"][i] for i in split.saved_inputs] + [True] * (
        len(split.known.out_avals) - split.num_known_out) + [
        c for c, uk in zip(cse, unknowns) if uk])
    _log_saved(split)
    known_args = [a for a, uk in zip(args, unknowns) if not uk]
    known_outs = []
    if split.known.out_avals:
        with set_current_trace(trace.parent):
            known_outs = checkpoint_p.bind(*known_args, **dict(known_params, jaxpr=split.known))
    known_vals, saved = split_list(known_outs, [split.num_known_out])
    unknown_outs = []
    if any(split.out_unknowns):
        staged_args = ([known_args[i] for i in split.saved_inputs] + saved
                       + [a for a, uk in zip(args, unknowns) if uk])
        unknown_outs = trace.stage(checkpoint_p, staged_args,
                                   dict(staged_params, jaxpr=split.staged, differentiated=True))
    return merge_lists(split.out_unknowns, known_vals, unknown_outs)


def _log_saved(split):
    """Logs what a differentiated checkpoint saves: its inputs, then its intermediates
    with the line making each (JAX's words; WARNING under jax_log_checkpoint_residuals,
    else DEBUG)."""
    level = logging.WARNING if config.log_checkpoint_residuals.value else logging.DEBUG
    if not _logger.isEnabledFor(level):
        return
    known = split.known.jaxpr
    inputs = [known.invars[i].aval.str_short() for i in split.saved_inputs]
    producers = {v: e for e in known.eqns for v in e.outvars}
    saved = [(v.aval.str_short(), _describe(v, producers, {}))
             for v in known.outvars[split.num_known_out:]]
    _logger.log(level, "remat-decorated function "
                + "saving inputs with shapes:\n" * bool(inputs) + "  %s\n" * len(inputs)
                + "and " * (bool(inputs) and bool(saved))
                + "saving these intermediates:\n" * bool(saved) + "  %s from %s\n" * len(saved),
                *inputs, *[x for pair in saved for x in pair])


def _checkpoint_transpose(cts, *args, **params):
    """A checkpoint of the transposed jaxpr: the recomputation of the non-linear part
    happens inside it (where prevent_cse guards it) in the backward pass."""
    linear = [ad.is_undefined_primal(a) for a in args]
    return ad.call_transpose(checkpoint_p, cts, args, params, lambda params, jaxpr, n: with_cse(
        dict(params, jaxpr=jaxpr, differentiated=True), lambda cse: [
            c for c, lin in zip(cse, linear) if not lin] + [True] * len(cts)))


def _checkpoint_dce(used_outputs, eqn):
    closed, used_inputs = jx.prune_closed_jaxpr(eqn.params["jaxpr"], used_outputs)
    params = with_cse(eqn.params, lambda cse: [c for c, u in zip(cse, used_inputs) if u])
    return eqn.replace(invars=[v for v, u in zip(eqn.invars, used_inputs) if u],
                       outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
                       params=dict(params, jaxpr=closed))


def _checkpoint_lower(ctx, *args, jaxpr, prevent_cse, differentiated, policy):
    """Inline; a differentiated checkpoint with prevent_cse reads its inputs (those it
    flags, when it is a tuple) through an optimization barrier, so XLA cannot merge the
    recomputation with the forward pass (its results keep the inputs' types: an
    unreduced one stays partial sums)."""
    args = list(args)
    flags = [prevent_cse] * len(args) if isinstance(prevent_cse, bool) else prevent_cse
    barred = [i for i, flag in enumerate(flags) if flag]
    if differentiated and barred:
        avals = [ctx.avals_in[i] for i in barred]
        outs = ctx.constrained_to_types(ctx.op(
            "stablehlo.optimization_barrier", [args[i] for i in barred], avals), avals)
        for i, out in zip(barred, outs):
            args[i] = out
    return ctx.lower_jaxpr(jaxpr, args, ("checkpoint",))


def _checkpoint_samples():
    from pyjax._src.lax import elementwise as ew
    x = b.random_values((2, 3), "float32")
    closed, _ = pe.trace_to_closed_jaxpr(lambda a: [ew.sin(ew.sin(a))], [get_aval(x)])
    return [b.Sample([x], {"jaxpr": closed, "prevent_cse": True, "differentiated": False,
                           "policy": None}),
            b.Sample([x], {"jaxpr": closed, "prevent_cse": True, "differentiated": True,
                           "policy": dots_saveable})]


checkpoint_p = define_primitive(
    "checkpoint", multiple_results=True, impl=_checkpoint_impl, eager=_checkpoint_eager,
    abstract_eval=_checkpoint_abstract_eval, jvp=_checkpoint_jvp,
    partial_eval=_checkpoint_partial_eval, transpose=_checkpoint_transpose,
    lower=_checkpoint_lower, batch=batching.call_rule, dce=_checkpoint_dce,
    effects=lambda jaxpr, **_: jaxpr.effects, samples=_checkpoint_samples, is_higher_order=True)


# --- checkpoint_name --------------------------------------------------------------------

def _name_jvp(primals, tangents, *, name):
    (x,), (t,) = primals, tangents
    return name_p.bind(x, name=name), t


def _name_batch(args, dims, *, name):
    return name_p.bind(args[0], name=name), dims[0]


def _name_samples():
    return [b.Sample([b.random_values((2, 3), "float32")], {"name": "a"})]


name_p = define_primitive(
    "name", impl=lambda x, *, name: x, abstract_eval=lambda x, *, name: x,
    jvp=_name_jvp, transpose=lambda ct, x, *, name: [ct], batch=_name_batch,
    lower=lambda ctx, x, *, name: x, samples=_name_samples)


def checkpoint_name(x, name):
    """x unchanged (every array leaf of a pytree), tagged with `name` so that checkpoint
    policies such as save_only_these_names can refer to it."""
    return tree_util.tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


# --- saved residuals --------------------------------------------------------------------

def _arg_names(fun, args, kwargs):
    """A name per flattened argument leaf, as JAX prints it: `W1`, `params[0]`, `x['a']`."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
    varargs = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    names = []
    for path, _ in tree_util.tree_flatten_with_path((args, kwargs))[0]:
        where, key, rest = path[0].idx, path[1], path[2:]
        if where == 1:
            head = str(key.key)
        elif key.idx < len(positional):
            head = positional[key.idx]
        elif varargs is not None:
            head = f"{varargs}[{key.idx - len(positional)}]"
        else:
            head = None
        names.append(None if head is None else head + tree_util.keystr(rest))
    return names


def _where(eqn):
    info = eqn.source_info
    return f"{info[0]}:{info[1]} ({info[2]})" if info else "an unknown location"


def _describe(var, producers, arg_names, outer=None):
    """Where a residual comes from, following it into checkpoints (whose saved outputs
    are made by the equations the policy allowed). `outer` is (inner invar -> outer
    variable, the outer scope's producers, arg_names and outer) inside a checkpoint."""
    if type(var) is jx.Literal:
        return "from a literal"
    if var in arg_names:
        name = arg_names[var]
        return (f"from the argument {name}" if isinstance(name, str)
                else f"from the argument at flattened index {name}")
    if outer is not None and var in outer[0]:
        return _describe(outer[0][var], *outer[1:])
    eqn = producers.get(var)
    if eqn is None:
        return "from a constant"
    if eqn.primitive is reduce_precision_p:   # _round_saved's: look through it, as JAX
        return _describe(eqn.invars[0], producers, arg_names, outer)
    if eqn.primitive is checkpoint_p:
        inner = eqn.params["jaxpr"].jaxpr
        return _describe(inner.outvars[eqn.outvars.index(var)],
                         {v: e for e in inner.eqns for v in e.outvars}, {},
                         (dict(zip(inner.invars, eqn.invars)), producers, arg_names, outer))
    if eqn.primitive is name_p:
        return f"named '{eqn.params['name']}' from {_where(eqn)}"
    if eqn.primitive is jit_p:
        return f"output of jitted function '{eqn.params['name']}' from {_where(eqn)}"
    return f"output of {eqn.primitive.name} from {_where(eqn)}"


def saved_residuals(f, *args, **kwargs):
    """[(aval, description)] of the values jax.vjp(f, *args, **kwargs) would save for
    the backward pass: inputs, constants, and intermediates with the line making them."""
    leaves, in_tree = tree_util.flatten((args, kwargs))
    avals = [abstractify(x) for x in leaves]
    trace = pe.DynamicJaxprTrace(pe.debug_info_of(f))
    tracers = [trace.new_arg(a, i) for i, a in enumerate(avals)]

    def flat_fun(*xs):
        call_args, call_kwargs = tree_util.tree_unflatten(in_tree, xs)
        return tree_util.flatten(f(*call_args, **call_kwargs))[0]

    try:
        with set_current_trace(trace):
            _, linear = ad.linearize_flat(flat_fun, tracers)
    finally:
        trace.end()
    names = _arg_names(f, args, kwargs)
    arg_names = {t._var: (n if n is not None else i)
                 for i, (t, n) in enumerate(zip(tracers, names))}
    producers = {v: e for e in trace.eqns for v in e.outvars}
    order = {v: i for i, v in enumerate(producers)}
    order.update({t._var: -len(tracers) + i for i, t in enumerate(tracers)})
    results = []
    for res in linear.consts:
        var = res._var if isinstance(res, pe.DynamicJaxprTracer) and res._trace is trace \
            else None
        aval = get_aval(res)
        rank = -len(tracers) - 1 if var is None else order.get(var, -len(tracers) - 1)
        desc = "from a constant" if var is None else _describe(var, producers, arg_names)
        results.append((rank, aval, desc))
    results.sort(key=lambda r: r[0])
    return [(aval, desc) for _, aval, desc in results]


def print_saved_residuals(f, *args, **kwargs):
    """Prints one line per residual jax.vjp(f, *args, **kwargs) would save: its type and
    where it comes from."""
    for aval, desc in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(True)} {desc}")
