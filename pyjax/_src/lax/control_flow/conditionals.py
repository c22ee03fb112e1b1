"""cond_p: apply one of several closed jaxprs (`branches`) chosen by an int32 index, and the
public `cond` (also the legacy per-branch-operand form) and `switch`. Imports core,
interpreters, backends and the lax families."""
from __future__ import annotations

import collections
import functools
import itertools
from collections.abc import Sequence

import numpy as np

from pyjax._src import config, dtypes, tree_util
from pyjax._src.array import as_array
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import ShapedArray, get_aval, is_valid_jax_type
from pyjax._src.core.trace import define_primitive, set_current_trace
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.ad_util import stop_gradient
from pyjax._src.lax import structural as st
from pyjax._src.lax.control_flow import common
from pyjax._src.util import merge_lists, split_list
from pyjax._src.traceback_util import api_boundary

_NO_OPERAND = object()


# --- the primitive ----------------------------------------------------------------------

def _cond_abstract_eval(index, *ops, branches):
    common.check_param("cond", branches, "branches", "tuple of ClosedJaxpr",
                       type(branches) is tuple
                       and all(type(b) is jx.ClosedJaxpr for b in branches))
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond branch index must be an int32 scalar, got {index}")
    arity = len(branches[0].in_avals)
    for i, branch in enumerate(branches[1:], 1):
        if len(branch.in_avals) != arity:
            raise jx.JaxprTypeError(f"cond branch 0 takes {arity} inputs, branch {i} takes "
                                    f"{len(branch.in_avals)}")
    for i, branch in enumerate(branches):
        common.check_operands(f"cond branch {i}", branch, ops)
    first = branches[0].out_avals
    for i, branch in enumerate(branches[1:], 1):
        outs = branch.out_avals
        if len(outs) != len(first) or any(not a.same_type(b) for a, b in zip(first, outs)):
            raise TypeError(f"cond branches 0 and {i} have different output types: "
                            f"{[a.str_short(True) for a in first]} and "
                            f"{[a.str_short(True) for a in outs]}")
    return list(first)   # branch 0's types, weak types included, as JAX's cond gives


def _cond_impl(index, *ops, branches):
    which = int(np.clip(index, 0, len(branches) - 1))
    return common.run_closed(branches[which], ops)


def _cond_effects(branches):
    return frozenset().union(*(b.effects for b in branches))


def _cond_jvp(primals, tangents, branches):
    index, *ops = primals
    ops_nz = [common.nonzero(t) for t in tangents[1:]]
    out_nz = [any(flags) for flags in
              zip(*(ad.jvp_jaxpr(b, ops_nz, False)[1] for b in branches))]
    jvps = tuple(ad.jvp_jaxpr(b, ops_nz, out_nz)[0] for b in branches)
    dots = [t for t, nz in zip(tangents[1:], ops_nz) if nz]
    outs = cond_p.bind(index, *ops, *dots, branches=jvps)
    primals_out, dots_out = split_list(outs, [len(out_nz)])
    return primals_out, common.merge_tangents(primals_out, out_nz, dots_out)


def _cond_partial_eval(trace, args, unknowns, params):
    """Known index: a known cond computes the known outputs and every branch's residuals
    (zeros for the branches not taken); an unknown cond over those residuals computes
    the rest. Unknown index: the whole cond is unknown."""
    branches = params["branches"]
    index, *ops = args
    index_uk, *ops_uk = unknowns
    if index_uk:
        return trace.stage(cond_p, args, params)
    out_uk = [any(flags) for flags in zip(
        *(pe.partial_eval_jaxpr_nounits(b, ops_uk, False)[2] for b in branches))]
    splits = [pe.partial_eval_jaxpr_nounits(b, ops_uk, out_uk) for b in branches]
    n_known = len(out_uk) - sum(out_uk)
    all_res, slots = _merge_branch_residuals(
        [known.out_avals[n_known:] for known, _, _, _ in splits])
    known_branches = tuple(_with_all_residuals(known, own, n_known, all_res)
                           for (known, _, _, _), own in zip(splits, slots))
    unknown_branches = tuple(_taking_all_residuals(unknown, own, all_res)
                             for (_, unknown, _, _), own in zip(splits, slots))
    known_ops, unknown_ops = [], []
    for x, uk in zip(ops, ops_uk):
        (unknown_ops if uk else known_ops).append(x)
    with set_current_trace(trace.parent):
        known_outs = cond_p.bind(index, *known_ops, branches=known_branches)
    known_outs, residuals = split_list(known_outs, [n_known])
    unknown_outs = []
    if any(out_uk):
        unknown_outs = trace.stage(cond_p, [index, *residuals, *unknown_ops],
                                   dict(branches=unknown_branches))
    return merge_lists(out_uk, known_outs, unknown_outs)


def _merge_branch_residuals(res_avals):
    """As JAX's: the branches share residual slots, the k-th residual of a type in any
    branch taking the k-th slot of that type. Returns (every slot's aval, per branch:
    the slot of each of its residuals)."""
    tagged = []
    for avals in res_avals:
        counts: dict = collections.defaultdict(itertools.count)
        tagged.append([(a, next(counts[a])) for a in avals])
    index: dict = {}
    for key in (k for branch in tagged for k in branch):
        index.setdefault(key, len(index))
    return [a for a, _ in index], [[index[k] for k in branch] for branch in tagged]


def _with_all_residuals(known, own_slots, n_known, all_res):
    """A branch's known jaxpr returning its residuals in its slots, zeros in the rest."""
    def fun(*args):
        outs = jx.eval_jaxpr(known.jaxpr, known.consts, *args)
        res = [st.zeros_like_aval(a) for a in all_res]
        for slot, r in zip(own_slots, outs[n_known:]):
            res[slot] = r
        return outs[:n_known] + res
    return common.trace_closed(fun, known.in_avals)


def _taking_all_residuals(unknown, own_slots, all_res):
    """A branch's unknown jaxpr, taking every residual slot (reading only its own)."""
    jaxpr = unknown.jaxpr
    res_vars = [jx.Var(a) for a in all_res]
    for slot, v in zip(own_slots, jaxpr.invars[:len(own_slots)]):
        res_vars[slot] = v
    return common.with_binders(unknown, res_vars + jaxpr.invars[len(own_slots):])


def _cond_transpose(cts, index, *ops, branches):
    if ad.is_undefined_primal(index):
        raise ValueError("cond is not linear in its branch index")
    linear = [ad.is_undefined_primal(x) for x in ops]
    residuals = [x for x in ops if not ad.is_undefined_primal(x)]
    cts = common.instantiate_cts(cts, branches[0].out_avals)
    transposed = tuple(ad.transpose_jaxpr(b, linear) for b in branches)
    outs = iter(cond_p.bind(index, *residuals, *cts, branches=transposed))
    return [None] + [next(outs) if lin else None for lin in linear]


def _cond_batch(axis, args, dims, branches):
    index, *ops = args
    index_dim, *op_dims = dims
    n_out = len(branches[0].out_avals)
    if all(d is batching.not_mapped for d in dims) and not any(
            batching.jaxpr_uses_axis(b, axis.name) for b in branches):
        return cond_p.bind(*args, branches=branches), [batching.not_mapped] * n_out
    if index_dim is not batching.not_mapped:
        # A per-example index: run every branch on every example, then select. An
        # io_callback would then run in branches the example did not take (JAX refuses).
        if common.has_io_effect(*branches):
            raise NotImplementedError("IO effect not supported in vmap-of-cond.")
        ops = [batching.bdim_at_front(x, d, axis.size) for x, d in zip(ops, op_dims)]
        index = batching.moveaxis(index, index_dim, 0)
        results = []
        for i, b in enumerate(branches):
            # A branch sees its operands differentiably only in the examples that take
            # it, so a branch not taken adds no NaN to a gradient (as JAX's select).
            taken = ew.eq(index, np.int32(i))
            ops_i = [ew.select_n(_broadcast_index(taken, get_aval(x).shape),
                                 stop_gradient(x), x) for x in ops]
            batched, _ = batching.batch_jaxpr(b, axis, [True] * len(ops), True)
            results.append(jx.eval_jaxpr(batched.jaxpr, batched.consts, *ops_i))
        outs = [ew.select_n(_broadcast_index(index, get_aval(cases[0]).shape), *cases)
                for cases in zip(*results)]
        return outs, [0] * n_out
    in_batched = [d is not batching.not_mapped for d in op_dims]
    ops = [batching.moveaxis(x, d, 0) if b else x for x, d, b in zip(ops, op_dims, in_batched)]
    out_batched = [any(flags) for flags in zip(*(
        batching.batch_jaxpr(b, axis, in_batched, False)[1]
        for b in branches))]
    batched = tuple(batching.batch_jaxpr(b, axis, in_batched, out_batched)[0]
                    for b in branches)
    outs = cond_p.bind(index, *ops, branches=batched)
    return outs, [0 if b else batching.not_mapped for b in out_batched]


def _broadcast_index(index, shape):
    return index if len(shape) == 1 else st.broadcast_in_dim(index, shape, (0,))


def _cond_dce(used_outputs, eqn):
    """Every branch computes only the used outputs; the operands no branch reads go."""
    branches = eqn.params["branches"]
    used_ops = [any(flags) for flags in zip(
        *(jx.prune_closed_jaxpr(b, used_outputs)[1] for b in branches))]
    pruned = tuple(jx.prune_closed_jaxpr(b, used_outputs, used_ops)[0] for b in branches)
    index, *ops = eqn.invars
    return eqn.replace(invars=[index] + [v for v, u in zip(ops, used_ops) if u],
                       outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
                       params=dict(eqn.params, branches=pruned))


def _cond_lower(ctx, index, *ops, branches):
    """stablehlo.case; its regions read the operands from the enclosing scope. XLA sends
    an out-of-range index to the last branch, so clamp it as the impl does."""
    if len(branches) == 1:
        return ctx.lower_jaxpr(branches[0], list(ops))
    avals_out = ctx.avals_out
    lo, hi = ctx.full(0, (), np.int32), ctx.full(len(branches) - 1, (), np.int32)
    index = ctx.op("stablehlo.clamp", [lo, index, hi], index.aval.strip_weak_type())
    regions = [ctx.region([], lambda c, i=i, b=b: c.lower_jaxpr(
        b, list(ops), ("cond", f"branch_{i}_fun"))) for i, b in enumerate(branches)]
    outs = ctx.op("stablehlo.case", [index], [a.strip_weak_type() for a in avals_out],
                  regions=regions)
    return ctx.constrained_to_types(outs, avals_out)


def _cond_samples():
    from pyjax._src.lax.builders import Sample, random_values
    f32 = ShapedArray((3,), np.float32)
    branches = tuple(common.trace_closed(f, [f32, f32]) for f in (
        lambda a, b: [ew.mul(ew.sin(a), b), a],
        lambda a, b: [ew.add(a, b), ew.neg(b)],
        lambda a, b: [ew.mul(a, a), ew.exp(b)]))
    x, y = random_values((3,), np.float32, seed=1), random_values((3,), np.float32, seed=2)
    return [Sample([np.int32(1), x, y], {"branches": branches[:2]}),
            Sample([np.int32(0), x, y], {"branches": branches[:2]}),
            Sample([np.int32(2), x, y], {"branches": branches})]


cond_p = define_primitive(
    "cond", multiple_results=True, impl=_cond_impl, abstract_eval=_cond_abstract_eval,
    samples=lambda: _cond_samples(),
    jvp=_cond_jvp, transpose=_cond_transpose, batch=_cond_batch, lower=_cond_lower,
    effects=_cond_effects, partial_eval=_cond_partial_eval, dce=_cond_dce,
    is_higher_order=True, batch_needs_axis=True)


# --- public wrappers --------------------------------------------------------------------

def _operands(operands, operand):
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                        f"passed, got operand={operand!r} and positional operands "
                        f"{operands!r}")
    return (operand,)


def _bind_branches(api_name, index, funs, names, operands, display_order=None):
    ops, ops_tree = tree_util.flatten(operands)
    for x in ops:
        if not is_valid_jax_type(x):
            raise TypeError(f"{api_name}: operand {x!r:.100} of type {type(x)} is not a "
                            "valid JAX type; operands must be arrays or scalars (in pytrees).")
    funs, ops, ops_tree = common.refs_by_closure(funs, ops, ops_tree, api_name)
    jaxprs, consts, out_trees, refs = common.trace_branches(
        funs, ops_tree, common.avals_of(ops), api_name)
    num_out = len(jaxprs[0].out_avals) - len(refs)
    order = display_order or range(len(funs))
    common.check_branch_outputs(api_name, [names[i] for i in order], [funs[i] for i in order],
                                [out_trees[i] for i in order],
                                [jaxprs[i].out_avals[:num_out] for i in order])
    # As JAX's cond: an output every branch passes through from the same operand is that
    # operand, not an output of the cond (so vmap keeps it unbatched where it was).
    # The values of the jax.Refs the branches close over go in last and come back last.
    args = consts + ops + [ref[...] for ref in refs]
    forwarded = [f[0] if len(set(f)) == 1 else None
                 for f in zip(*[jx.forwarded_inputs(j.jaxpr) for j in jaxprs])]
    jaxprs = [jx.prune_closed_jaxpr(j, [f is None for f in forwarded], [True] * len(args))[0]
              for j in jaxprs]
    outs = iter(cond_p.bind(index, *args, branches=tuple(jaxprs)))
    outs = [next(outs) if f is None else as_array(args[f]) for f in forwarded]
    for ref, value in zip(refs, outs[num_out:]):
        ref._value = value
    return tree_util.tree_unflatten(out_trees[0], outs[:num_out])


def _cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _operands(operands, operand)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of " + (
            f"type {type(pred)}" if isinstance(pred, Sequence)
            else f"shape {np.shape(pred)}."))
    try:
        pred_dtype = dtypes.result_type(pred)
    except TypeError as err:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
    if pred_dtype.kind != "b":
        if pred_dtype.kind not in "iuf":
            raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
        pred = ew.ne(pred, np.zeros((), get_aval(pred).dtype))
    if config.disable_jit_flag.value and common.is_concrete(pred):
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    index = ew.convert_element_type(pred, np.int32)
    return _bind_branches("cond", index, (false_fun, true_fun), ("false_fun", "true_fun"),
                          operands, display_order=(1, 0))


def _cond_with_per_branch_args(pred, true_operand, true_fun, false_operand, false_fun):
    """The legacy form cond(pred, true_operand, true_fun, false_operand, false_fun)."""
    @functools.wraps(true_fun)
    def on_true(ops):
        return true_fun(ops[0])

    @functools.wraps(false_fun)
    def on_false(ops):
        return false_fun(ops[1])

    return _cond(pred, on_true, on_false, (true_operand, false_operand))


@api_boundary
def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """Applies true_fun(*operands) if pred else false_fun(*operands). Both branches are
    traced (once each); only the chosen one runs. pred is a scalar bool or number.

    The legacy form cond(pred, true_operand, true_fun, false_operand, false_fun) is also
    accepted, as JAX accepts it: where the second argument is not callable (two callable
    operands after two functions are operands)."""
    if not callable(true_fun) and callable(false_fun) and len(operands) == 2 and \
            callable(operands[1]):
        return _cond_with_per_branch_args(pred, true_fun, false_fun, *operands)
    return _cond(pred, true_fun, false_fun, *operands, operand=operand)


@api_boundary
def switch(index, branches, *operands, operand=_NO_OPERAND):
    """Applies branches[index](*operands), with index clamped to [0, len(branches) - 1].
    Every branch is traced once; only the chosen one runs."""
    try:
        branches = tuple(branches)
    except TypeError:
        branches = None
    if branches is None or not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    operands = _operands(operands, operand)
    if np.ndim(index) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape "
                        f"{np.shape(index)}.")
    try:
        index_dtype = dtypes.result_type(index)
    except TypeError as err:
        raise TypeError(f"Index type must be an integer, got {index}.") from err
    if index_dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = ew.convert_element_type(index, np.int32)
    index = ew.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    if config.disable_jit_flag.value and common.is_concrete(index):
        return branches[int(index)](*operands)
    # (JAX's words, spaced as JAX spaces them)
    names = ("branch 0",) + tuple(f"branch{i}" for i in range(1, len(branches)))
    return _bind_branches("switch", index, branches, names, operands)
