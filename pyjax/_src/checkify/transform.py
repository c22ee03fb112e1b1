"""The checkify transformation: the function is staged to a jaxpr, which an interpreter
re-runs under the current trace while threading an `Error` value through it: `check`
equations merge into it, enabled automatic checks (NaN, division by zero, out-of-bounds
indices) add to it, and higher-order primitives carry it through checkified sub-jaxprs.
Level 7: imports core, interpreters, lax and api (the primitives it has rules for)."""
from __future__ import annotations

import collections.abc

import functools

import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src.api import checkpoint as checkpoint_mod
from pyjax._src.api import custom_derivatives as cd
from pyjax._src.api import pmap as pmap_mod
from pyjax._src.api import shard_map as shard_map_mod
from pyjax._src.checkify import errors as ce
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import get_aval
from pyjax._src.array import Array
from pyjax._src.core.trace import Tracer, registered_primitives
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions, slicing, structural
from pyjax._src.lax.call import jit_p
from pyjax._src.lax.control_flow import common
from pyjax._src.lax.control_flow.conditionals import cond_p
from pyjax._src.lax.control_flow import loops
from pyjax._src.lax.control_flow.loops import while_p
from pyjax._src.lax.control_flow.scan import scan_p
from pyjax._src.sharding import PartitionSpec
from pyjax._src.util import WeakCache, split_list

user_checks = frozenset({ce.FailedCheckError})
nan_checks = frozenset({ce.NaNError})
index_checks = frozenset({ce.OOBError})
div_checks = frozenset({ce.DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


def _enabled_set(errors):
    # Any collection of categories, as JAX takes them (an empty dict or list: none).
    if isinstance(errors, (str, bytes)) or not isinstance(errors, collections.abc.Iterable):
        raise TypeError("checkify's `errors` must be a set of error categories (e.g. "
                        "checkify.user_checks | checkify.nan_checks), got "
                        f"{errors!r} of type {type(errors)}")
    unknown = [e for e in errors if e not in ce.CATEGORIES]
    if unknown:
        raise TypeError(f"checkify's `errors` holds {unknown}, which are no error "
                        "categories: use the sets user_checks, nan_checks, index_checks, "
                        "div_checks, float_checks, automatic_checks or all_checks "
                        "(combined with | and -).")
    return frozenset(errors)


def checkify(f, errors=user_checks):
    """Returns a function that runs `f` and returns `(err, out)`: `out` is f's result,
    `err` an Error holding the first failure among the enabled checks (user checks by
    default; add nan_checks, div_checks, index_checks or all_checks via `errors`)."""
    if not callable(f):
        raise TypeError(f"checkify expects a callable, got {f!r}")
    enabled = _enabled_set(errors)

    @functools.wraps(f)
    def checked(*args, **kwargs):
        box = {}

        def flat_fun():
            # The arguments are closed over, so f sees them as they were passed.
            leaves, box["tree"] = tree_util.tree_flatten(f(*args, **kwargs))
            return leaves

        jaxpr, consts = pe.trace_to_jaxpr(flat_fun, [], pe.debug_info_of(f))
        error, outs = checkify_jaxpr(jaxpr, consts, enabled, ce.init_error, [])
        return error, tree_util.tree_unflatten(box["tree"], outs)
    return checked


# --- the interpreter --------------------------------------------------------------------

_RULES = {}   # primitive name -> rule(error, enabled, where, args, params) -> (error, outs)


def checkify_jaxpr(jaxpr, consts, enabled, error, args):
    """Runs `jaxpr` under the current trace with `error` threaded through it; returns
    (error, outputs)."""
    env = {}

    def read(v):
        return v.value() if type(v) is jx.Literal else env[v]

    env.update(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    # Like eval_jaxpr: what the rules stage keeps the source line of its equation.
    with jx.SourceReplay() as replay:
        for eqn in jaxpr.eqns:
            replay.at(eqn)
            invals = [read(v) for v in eqn.invars]
            rule = _RULES.get(eqn.primitive.name)
            if rule is None:
                outs = eqn.primitive.bind(*invals, **eqn.params)
            else:
                error, outs = rule(error, enabled, _where(eqn.source_info), invals,
                                   eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
            for v, x in zip(eqn.outvars, outs):
                if type(v) is not jx.DropVar:
                    env[v] = x
    return error, [_as_value(read(v), v.aval) for v in jaxpr.outvars]


def _as_value(x, aval):
    """Outputs that are inline constants (literals, numpy values) become Arrays."""
    if isinstance(x, (Array, Tracer)):
        return x
    return Array(np.asarray(x, aval.dtype), aval=aval)


def _checkify_closed(closed, enabled, error, args):
    return checkify_jaxpr(closed.jaxpr, closed.consts, enabled, error, list(args))


def _where(source_info):
    return tuple(source_info[:3]) if source_info else None


def _strong(x):
    """x without a weak type: error leaves cross loop and branch boundaries, whose
    types must match exactly."""
    aval = get_aval(x)
    return ew.convert_element_type(x, aval.dtype) if aval.weak_type else x


def _error_leaves(error, strong=True):
    leaves = tree_util.tree_leaves(error)
    return [_strong(x) for x in leaves] if strong else leaves


_checked_cache = WeakCache()   # sub-jaxpr -> {signature: (closed, tree)}


def _checked_jaxpr(run, error, avals, err_at, owner, tag, strong=True):
    """Traces run(error, values) -> (error, outs) into a ClosedJaxpr taking
    [*avals[:err_at], *error leaves, *avals[err_at:]] and returning [*error leaves,
    *outs]. Returns (closed, out_structure) where out_structure rebuilds the error.
    Cached per sub-jaxpr `owner`, `tag` (what run does with it) and error structure, so
    a jit inside a checkified function compiles once. Error leaves lose weak types
    (`strong`) where they cross a loop or branch boundary; a call keeps them, as JAX's
    jit does for the arguments of a failed check's message."""
    leaves, tree = tree_util.tree_flatten(error)
    n = len(leaves)
    err_avals = [get_aval(x).strip_weak_type() if strong else get_aval(x) for x in leaves]
    signature = (tag, tuple(error.effects()), tuple(err_avals), tuple(avals), err_at)
    def build():
        box = {}

        def flat(*values):
            before, err_vals, after = split_list(list(values), [err_at, n])
            out_err, outs = run(tree_util.tree_unflatten(tree, err_vals), before + after)
            out_leaves, box["tree"] = tree_util.tree_flatten(out_err)
            if strong:
                out_leaves = [_strong(x) for x in out_leaves]
            return out_leaves + list(outs)

        closed = common.trace_closed(
            flat, list(avals[:err_at]) + err_avals + list(avals[err_at:]))
        return closed, box["tree"]
    return _checked_cache.get(owner, signature, build)


def _rebuild(out_tree, leaves, *metadata):
    """The error from a checked jaxpr's outputs. Its codes name checks of the input
    error too, whose templates `metadata` (dicts) supply (the structure may be cached)."""
    error = tree_util.tree_unflatten(out_tree, list(leaves))
    for extra in metadata:
        error._metadata = {**error._metadata, **extra}
    return error


def _out_effects(tree):
    """The error slots an error treedef describes, and its templates."""
    dummy = tree_util.tree_unflatten(tree, [None] * tree.num_leaves)
    return set(dummy._pred), dummy._metadata


def _merged(run, error, avals, err_at, owner, tag):
    """`error` with placeholder slots for every slot `run` can add (found by tracing it
    once), so that its output error has the structure of its input error."""
    _, tree = _checked_jaxpr(run, error, avals, err_at, owner, tag)
    return ce.add_placeholders(error, _out_effects(tree)[0])


# --- automatic checks -------------------------------------------------------------------

def _any(pred):
    ndim = get_aval(pred).ndim
    return reductions.reduce_or(pred, tuple(range(ndim))) if ndim else pred


def check_nans(error, enabled, where, name, outs):
    """`error` with a NaN failure where any floating-point output holds a NaN."""
    if ce.NaNError not in enabled:
        return error
    preds = [_any(ew.ne(o, o)) for o in outs if dtypes.is_inexact(get_aval(o).dtype)]
    if not preds:
        return error
    pred = functools.reduce(ew.bitwise_or, preds)
    return ce.assert_error(error, pred, ce.NaNError, (where, name))


def _nan_rule(name):
    def rule(error, enabled, where, args, params):
        prim = _primitive(name)
        out = prim.bind(*args, **params)
        outs = out if prim.multiple_results else [out]
        return check_nans(error, enabled, where, name, outs), out
    return rule


@functools.cache
def _primitive(name):
    return registered_primitives()[name]


# The primitives whose outputs nan_checks inspects: JAX's set, those that can make a NaN.
NAN_PRIMITIVES = (
    "acos", "acosh", "add", "asin", "asinh", "atan2", "atan", "atanh", "bessel_i0e",
    "bessel_i1e", "cbrt", "conv_general_dilated", "cos", "cosh", "cumlogsumexp", "cummax",
    "cummin", "cumprod", "cumsum", "digamma", "dot_general", "erf_inv", "erf", "erfc",
    "exp", "expm1", "fft", "igamma_grad_a", "igamma", "igammac", "integer_pow", "lgamma",
    "custom_linear_solve", "log1p", "log", "logistic", "mul", "pad", "pow", "psum",
    "reduce", "reduce_prod", "reduce_sum", "reduce_window", "reduce_window_sum",
    "regularized_incomplete_beta", "rem", "rng_uniform", "rsqrt", "sin", "sinh", "sqrt",
    "sub", "tan", "tanh")
for _name in NAN_PRIMITIVES:
    _RULES[_name] = _nan_rule(_name)


def _div_rule(error, enabled, where, args, params):
    if ce.DivisionByZeroError in enabled:
        y = args[1]
        zero = _any(ew.eq(y, ew.zeros_like(y)))
        error = ce.assert_error(error, zero, ce.DivisionByZeroError, (where,))
    return _nan_rule("div")(error, enabled, where, args, params)


_RULES["div"] = _div_rule


def _int32(x):
    return ew.convert_element_type(x, np.int32)


def _oob_payload(mask, indices, dims_map, operand_shape):
    """[index, axis, axis size] of the first out-of-bounds entry of `indices` (whose last
    axis runs over the operand axes `dims_map`)."""
    size = int(np.prod(get_aval(mask).shape))
    flat_mask = structural.reshape(_int32(mask), (size,))
    first = reductions.argmax(flat_mask, 0, np.int32)
    position = ew.rem(first, np.int32(len(dims_map)))
    def pick(values, i):   # i is never negative
        return slicing.dynamic_index_in_dim(values, i, 0, False, allow_negative_indices=False)
    axis = pick(np.asarray(dims_map, np.int32), position)
    axis_size = pick(np.asarray(operand_shape, np.int32), axis)
    index = pick(structural.reshape(_int32(indices), (size,)), first)
    parts = [structural.reshape(v, (1,)) for v in (index, axis, axis_size)]
    return structural.concatenate(parts, 0)


def _assert_oob(error, mask, indices, dims_map, operand_shape, where, name):
    if not get_aval(mask).size:
        return error
    payload = _oob_payload(mask, indices, dims_map, operand_shape)
    return ce.assert_error(error, _any(mask), ce.OOBError,
                           (where, name, tuple(operand_shape)), [payload])


def _bounds_mask(starts, sizes, dims):
    """starts < 0 or starts + sizes > dims, elementwise over the last axis of starts."""
    sizes, dims = np.asarray(sizes, np.int32), np.asarray(dims, np.int32)
    shape = get_aval(starts).shape
    upper = structural.broadcast_in_dim(dims - sizes, shape, (len(shape) - 1,))
    below = ew.lt(starts, ew.zeros_like(starts))
    return ew.bitwise_or(below, ew.gt(starts, upper))


def _start_vector(indices):
    return structural.concatenate([structural.reshape(_int32(i), (1,)) for i in indices], 0)


def _dynamic_slice_rule(name, num_operands, window):
    """dynamic_slice / dynamic_update_slice: the start indices follow `num_operands`
    operands; `window(args, params)` is the size of the window they place."""
    def rule(error, enabled, where, args, params):
        out = _primitive(name).bind(*args, **params)
        shape = get_aval(args[0]).shape
        starts = args[num_operands:]
        if ce.OOBError in enabled and starts:
            starts = _start_vector(starts)
            mask = _bounds_mask(starts, window(args, params), shape)
            error = _assert_oob(error, mask, starts, range(len(shape)), shape, where, name)
        return error, out
    return rule


_RULES["dynamic_slice"] = _dynamic_slice_rule(
    "dynamic_slice", 1, lambda args, params: params["slice_sizes"])
_RULES["dynamic_update_slice"] = _dynamic_slice_rule(
    "dynamic_update_slice", 2, lambda args, params: get_aval(args[1]).shape)


def _gather_rule(error, enabled, where, args, params):
    out = _primitive("gather").bind(*args, **params)
    operand, indices = args
    # Whatever the mode, as JAX: jnp's mode="clip" clamps static indices before this.
    if ce.OOBError not in enabled:
        return error, out
    shape = get_aval(operand).shape
    dims = params["dimension_numbers"].start_index_map
    sizes = [params["slice_sizes"][d] for d in dims]
    mask = _bounds_mask(_int32(indices), sizes, [shape[d] for d in dims])
    return _assert_oob(error, mask, indices, dims, shape, where, "gather"), out


_RULES["gather"] = _gather_rule


def _scatter_rule(name):
    def rule(error, enabled, where, args, params):
        out = _primitive(name).bind(*args, **params)
        operand, indices, updates = args
        if ce.OOBError not in enabled:
            return error, out
        dnums = params["dimension_numbers"]
        shape, update_shape = get_aval(operand).shape, get_aval(updates).shape
        window = iter(dnums.update_window_dims)
        sizes = [1 if (d in dnums.inserted_window_dims or d in dnums.operand_batching_dims)
                 else update_shape[next(window)] for d in range(len(shape))]
        dims = dnums.scatter_dims_to_operand_dims
        mask = _bounds_mask(_int32(indices), [sizes[d] for d in dims],
                            [shape[d] for d in dims])
        error = _assert_oob(error, mask, indices, dims, shape, where, name)
        return check_nans(error, enabled, where, name, [out]), out
    return rule


for _name in ("scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min",
              "scatter-max"):
    _RULES[_name] = _scatter_rule(_name)


# --- checks and higher-order primitives -------------------------------------------------

def _check_rule(error, enabled, where, args, params):
    """A check joins the threaded error (its own categories only if enabled)."""
    new = tree_util.tree_unflatten(params["err_tree"], list(args))
    for effect in new.effects():
        if effect.error_type in enabled:
            error = ce.update_error(error, effect, new._pred[effect], new._code[effect],
                                    new._payload[effect], new._metadata)
    return error, []


_RULES["check"] = _check_rule


def _call_rule(prim, extra_params):
    """jit and checkpoint: the body, checkified, takes and returns the error first."""
    def rule(error, enabled, where, args, params):
        closed = params["jaxpr"]
        run = functools.partial(_checkify_closed, closed, enabled)
        checked, out_tree = _checked_jaxpr(run, error, closed.in_avals, 0, closed, enabled,
                                           strong=False)
        leaves = _error_leaves(error, strong=False)
        new_params = dict(params, jaxpr=checked, **extra_params(params, len(leaves)))
        outs = prim.bind(*leaves, *args, **new_params)
        n = out_tree.num_leaves
        return _rebuild(out_tree, outs[:n], error._metadata), outs[n:]
    return rule


_RULES["jit"] = _call_rule(jit_p, lambda params, n: {
    "donated_invars": (False,) * n + tuple(params["donated_invars"])})
_RULES["checkpoint"] = _call_rule(checkpoint_mod.checkpoint_p, lambda params, n: (
    {} if isinstance(params["prevent_cse"], bool)
    else {"prevent_cse": (False,) * n + params["prevent_cse"]}))


def _pmap_rule(error, enabled, where, args, params):
    """Each replica checks its own part: the error goes in unmapped and comes out mapped,
    one slot value per device (get() reports the failing devices, as JAX)."""
    closed = params["jaxpr"]
    run = functools.partial(_checkify_closed, closed, enabled)
    with batching.extend_axis_env(params["axis_name"], params["axis_size"]):
        checked, out_tree = _checked_jaxpr(run, error, closed.in_avals, 0, closed, enabled)
    leaves = _error_leaves(error)
    n_out = out_tree.num_leaves
    outs = pmap_mod.xla_pmap_p.bind(*leaves, *args, **dict(
        params, jaxpr=checked, in_axes=(None,) * len(leaves) + tuple(params["in_axes"]),
        out_axes=(0,) * n_out + tuple(params["out_axes"])))
    return _rebuild(out_tree, outs[:n_out], error._metadata), outs[n_out:]


_RULES["xla_pmap"] = _pmap_rule


def _shard_map_rule(error, enabled, where, args, params):
    """Each device checks its own blocks: the error goes in replicated and comes out one
    slot value per device (dimension 0 split over every manual axis; get() reports the
    failing devices, as JAX)."""
    closed = params["jaxpr"]

    def run(err, values):
        err, outs = _checkify_closed(closed, enabled, err, values)
        return tree_util.tree_map(lambda x: structural.expand_dims(x, (0,)), err), outs

    with shard_map_mod.body_axes(params):
        checked, out_tree = _checked_jaxpr(run, error, closed.in_avals, 0, closed,
                                           ("shard_map", enabled))
    leaves = _error_leaves(error)
    n_out = out_tree.num_leaves
    per_device = PartitionSpec(params["manual_axes"])
    outs = shard_map_mod.shard_map_p.bind(*leaves, *args, **dict(
        params, jaxpr=checked, in_specs=(PartitionSpec(),) * len(leaves) +
        tuple(params["in_specs"]), out_specs=(per_device,) * n_out +
        tuple(params["out_specs"])))
    return _rebuild(out_tree, outs[:n_out], error._metadata), outs[n_out:]


_RULES["shard_map"] = _shard_map_rule


def _cond_rule(error, enabled, where, args, params):
    index, *ops = args
    branches = params["branches"]
    runs = [functools.partial(_checkify_closed, b, enabled) for b in branches]
    effects = set(error._pred)
    for run, branch in zip(runs, branches):
        _, tree = _checked_jaxpr(run, error, branch.in_avals, 0, branch, enabled)
        effects |= _out_effects(tree)[0]
    error = ce.add_placeholders(error, effects)
    traced = [_checked_jaxpr(run, error, b.in_avals, 0, b, enabled)
              for run, b in zip(runs, branches)]
    metadata = {}
    for _, tree in traced:
        metadata.update(_out_effects(tree)[1])
    leaves = _error_leaves(error)
    outs = cond_p.bind(index, *leaves, *ops, branches=tuple(c for c, _ in traced))
    n = len(leaves)
    return _rebuild(traced[0][1], outs[:n], metadata, error._metadata), outs[n:]


_RULES["cond"] = _cond_rule


def _scan_rule(error, enabled, where, args, params):
    body, nc = params["jaxpr"], params["num_consts"]
    consts, rest = split_list(args, [nc])
    run = functools.partial(_checkify_closed, body, enabled)
    error = _merged(run, error, body.in_avals, nc, body, enabled)
    checked, out_tree = _checked_jaxpr(run, error, body.in_avals, nc, body, enabled)
    leaves = _error_leaves(error)
    n = len(leaves)
    linear = tuple(params["linear"])
    outs = scan_p.bind(*consts, *leaves, *rest, **dict(
        params, jaxpr=checked, num_carry=params["num_carry"] + n,
        linear=linear[:nc] + (False,) * n + linear[nc:]))
    return _rebuild(out_tree, outs[:n], error._metadata), outs[n:]


_RULES["scan"] = _scan_rule


def _while_rule(error, enabled, where, args, params):
    cond_j, body_j = params["cond_jaxpr"], params["body_jaxpr"]
    ncc, nbc = params["cond_nconsts"], params["body_nconsts"]
    if loops.predicate_is_batched(params):
        raise ValueError("Checkify does not support batched while-loops "
                         "(checkify-of-vmap-of-while). \nHint: if possible, move the vmap "
                         "to the outer level to get vmap-of-checkify-of-while.")
    cond_consts, body_consts, carry = split_list(args, [ncc, nbc])
    # The first evaluation of the predicate; the body checks each later one.
    error, _ = _checkify_closed(cond_j, enabled, error, cond_consts + carry)

    def run(err, values):
        cc, bc, xs = split_list(values, [ncc, nbc])
        err, new = _checkify_closed(body_j, enabled, err, bc + xs)
        err, _ = _checkify_closed(cond_j, enabled, err, cc + new)
        return err, new

    avals = cond_j.in_avals[:ncc] + body_j.in_avals
    tag = (enabled, cond_j)
    error = _merged(run, error, avals, ncc + nbc, body_j, tag)
    body, out_tree = _checked_jaxpr(run, error, avals, ncc + nbc, body_j, tag)
    leaves = _error_leaves(error)
    n = len(leaves)

    def cond(*values):
        # The body already checked this evaluation: its error is dropped here.
        cc, _, xs = split_list(list(values), [ncc, n])
        return _checkify_closed(cond_j, enabled, ce.init_error, cc + xs)[1]

    err_avals = [get_aval(x) for x in leaves]
    new_cond = common.trace_closed(cond, cond_j.in_avals[:ncc] + err_avals
                                   + cond_j.in_avals[ncc:])
    outs = while_p.bind(*cond_consts, *cond_consts, *body_consts, *leaves, *carry,
                        cond_jaxpr=new_cond, cond_nconsts=ncc, body_jaxpr=body,
                        body_nconsts=ncc + nbc)
    return _rebuild(out_tree, outs[:n], error._metadata), outs[n:]


_RULES["while"] = _while_rule


# Custom derivative functions: the primal function is checkified; the user's rules are
# not (as in JAX), so under differentiation the error entering the call passes through,
# and the call adds no checks (`ran` says a rule ran instead of the checked function).

class _ErrorForwardingJVP:
    def __init__(self, rule, num_errors):
        self.rule, self.n = rule, num_errors
        self.nondiff_consts = rule.nondiff_consts
        self.__name__ = getattr(rule, "__name__", "jvp")
        self.ran = False

    def __call__(self, primals, tangents, consts):
        self.ran = True
        errs, args = primals[:self.n], primals[self.n:]
        outs, t_outs = self.rule(list(args), list(tangents[self.n:]), consts)
        zeros = [ad.Zero(ad.tangent_aval(get_aval(e))) for e in errs]
        return list(errs) + list(outs), zeros + list(t_outs)


class _ErrorForwardingVJP:
    def __init__(self, fwd, bwd, num_errors, error_avals):
        self._fwd, self._bwd, self.n, self.error_avals = fwd, bwd, num_errors, error_avals
        self.fwd = functools.partial(_ErrorForwardingVJP._run_fwd, self)
        self.fwd.__name__ = getattr(fwd, "__name__", "fwd")
        self.bwd = functools.partial(_ErrorForwardingVJP._run_bwd, self)
        self.bwd.__name__ = getattr(bwd, "__name__", "bwd")
        self.ran = False

    def _run_fwd(self, primals, perturbed):
        self.ran = True
        outs, residuals = self._fwd(list(primals[self.n:]), list(perturbed[self.n:]))
        return list(primals[:self.n]) + list(outs), residuals

    def _run_bwd(self, residuals, cts):
        cts_in = self._bwd(residuals, list(cts[self.n:]))
        return [ad.Zero(ad.tangent_aval(a)) for a in self.error_avals] + list(cts_in)


def _custom_call_rule(prim, rules):
    def rule(error, enabled, where, args, params):
        closed, nc = params["call_jaxpr"], params["num_consts"]
        run = functools.partial(_checkify_closed, closed, enabled)
        error = _merged(run, error, closed.in_avals, nc, closed, enabled)
        checked, out_tree = _checked_jaxpr(run, error, closed.in_avals, nc, closed, enabled)
        leaves = _error_leaves(error)
        consts, rest = split_list(args, [nc])
        user_rules, forwarding = rules(params, leaves)
        outs = prim.bind(*consts, *leaves, *rest,
                         **dict(params, call_jaxpr=checked, **user_rules))
        n = len(leaves)
        if forwarding.ran:   # the entering error passed through; no check of ours ran
            return _rebuild(tree_util.tree_structure(error), outs[:n]), outs[n:]
        return _rebuild(out_tree, outs[:n], error._metadata), outs[n:]
    return rule


def _jvp_rules(params, leaves):
    wrapped = _ErrorForwardingJVP(params["jvp_jaxpr_fun"], len(leaves))
    return {"jvp_jaxpr_fun": wrapped}, wrapped


def _vjp_rules(params, leaves):
    wrapped = _ErrorForwardingVJP(params["fwd"], params["bwd"], len(leaves),
                                  [get_aval(x) for x in leaves])
    return {"fwd": wrapped.fwd, "bwd": wrapped.bwd}, wrapped


_RULES["custom_jvp_call"] = _custom_call_rule(cd.custom_jvp_call_p, _jvp_rules)
_RULES["custom_vjp_call"] = _custom_call_rule(cd.custom_vjp_call_p, _vjp_rules)
