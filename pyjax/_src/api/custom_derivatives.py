"""User-defined derivatives: custom_jvp (defjvp, defjvps) and custom_vjp (defvjp), kept in
jaxprs as the custom_jvp_call / custom_vjp_call primitives so that jit(f) and grad(jit(f))
still use the rules; and closure_convert. Imports api siblings and below."""
from __future__ import annotations

import dataclasses
import functools
import inspect
import weakref

from pyjax._src import dtypes, tree_util
from pyjax._src.errors import UnexpectedTracerError
from pyjax._src.api.jit import _infer_argnums_and_argnames, _parameters
from pyjax._src.array import as_array
from pyjax._src.backends import numpy_backend
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import AbstractRef, get_aval
from pyjax._src.core.trace import (NO_TRANSPOSE, Trace, Tracer, current_trace,
                                   define_primitive, no_samples, set_current_trace)
from pyjax._src.interpreters import ad, batching, jet
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import ad_util
from pyjax._src.lax import builders as b
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions
from pyjax._src.lax.control_flow.common import operand_names
from pyjax._src.util import fun_name as _name
from pyjax._src.traceback_util import api_boundary


class CustomJVPException(Exception):
    """Differentiation that a custom_jvp rule cannot express (a closed-over value)."""


class CustomVJPException(Exception):
    """Differentiation that a custom_vjp rule cannot express (a closed-over value)."""


class SymbolicZero:
    """A zero tangent or cotangent handed to rules defined with symbolic_zeros=True."""

    def __init__(self, aval):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)

    @staticmethod
    def from_primal_value(x):
        """The symbolic zero tangent of the value x."""
        return SymbolicZero(ad.tangent_aval(get_aval(x)))

    def __repr__(self):
        return f"SymbolicZero({self.aval.str_short(True)})"


def zero_from_primal(val, symbolic_zeros=False):
    """The zero tangent of each leaf of val: zeros of its tangent type (float0 for integer
    and boolean values), or SymbolicZeros, for rules defined with symbolic_zeros."""
    def zero(x):
        t = SymbolicZero.from_primal_value(x)
        return t if symbolic_zeros else ad.instantiate_zeros(ad.Zero(t.aval))
    return tree_util.user_tree_map(zero, val)


@dataclasses.dataclass(slots=True)
class CustomVJPPrimal:
    """What a custom_vjp fwd rule defined with symbolic_zeros=True gets for each primal:
    the value, and whether it is perturbed (has a nonzero tangent). A record, not a
    pytree node (as JAX's): tree functions see it as one leaf."""
    value: object
    perturbed: bool


def custom_vjp_primal_tree_values(tree):
    """The values of the CustomVJPPrimal records of a tree, as a symbolic_zeros fwd rule
    gets its arguments: the arguments as they were passed."""
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_util.user_tree_map(value, tree)


def _primal_records(in_tree, values, perturbed):
    """The arguments as a symbolic_zeros fwd rule gets them: each leaf as users see trees
    (a key array is one) a CustomVJPPrimal of its value and whether it is perturbed."""
    leaves, tree = tree_util.user_tree_flatten(tree_util.tree_unflatten(in_tree, values))
    flags = iter(perturbed)
    return tree.unflatten([CustomVJPPrimal(x, any([next(flags) for _ in
                                                   tree_util.flatten(x)[0]]))
                           for x in leaves])


def resolve_args(kind, fun, args, kwargs):
    """Keyword arguments bound to positions and defaults filled in, as JAX does: custom
    rules take positional primals, and nondiff_argnums may name defaulted parameters.
    `kind` ("custom_jvp", ...) names the decorator in the error."""
    if not kwargs and getattr(fun, "__defaults__", True) is None and \
            getattr(fun, "__kwdefaults__", True) is None:   # a plain def without defaults
        return tuple(args)
    signature = inspect.signature(
        (lambda *args, **kwargs: None) if isinstance(fun, functools.partial) else fun)
    try:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        # keyword-only parameters left to their defaults are dropped (the function
        # applies them itself), as JAX does; passed ones have no position to go to
        passed = [k for k in bound.kwargs if k in kwargs]
        if passed:
            raise TypeError("The following keyword arguments could not be resolved to "
                            f"positions: {', '.join(passed)}")
    except TypeError as err:
        raise TypeError(f"The input arguments to the {kind}-decorated function {_name(fun)} "
                        "could not be resolved to positional-only arguments. Binding failed "
                        f"with the error:\n{err}") from None
    return tuple(bound.args)


def _split_nondiff(args, nondiff_argnums, name):
    nums = {n % len(args) if -len(args) <= n < len(args) else n for n in nondiff_argnums}
    for n in nums:
        if not 0 <= n < len(args):
            raise TypeError(f"{name} has nondiff_argnums={tuple(nondiff_argnums)} but was "
                            f"called with only {len(args)} positional arguments.")
    nondiff = [a for i, a in enumerate(args) if i in nums]
    diff = [a for i, a in enumerate(args) if i not in nums]
    return nums, nondiff, diff


def _merge_nondiff(nums, nondiff, diff):
    nd, d = iter(nondiff), iter(diff)
    return [next(nd) if i in nums else next(d) for i in range(len(nondiff) + len(diff))]


def _as_value(x):
    return x if isinstance(x, Tracer) else as_array(x)


def _as_rule_output(x):
    """A rule's output as JAX keeps it: a Python scalar stays one (a rule computing on
    Python-scalar primals returns Python scalars); anything else is a JAX value."""
    return x if dtypes.is_python_scalar(x) else _as_value(x)


def _without_tangent(x):
    """A nondiff_argnums value as JAX passes it to the rule: never differentiated, by
    this differentiation or an enclosing one."""
    if isinstance(x, Tracer):
        x = ad_util.stop_gradient(x)
        trace = current_trace()
        return trace.primal_of(x) if type(trace) is ad.JVPTrace else x
    return x


def _rule_tangents(tangents, symbolic_zeros):
    """Tangents as a rule gets them: zeros materialised, or SymbolicZero if it asked."""
    if symbolic_zeros:
        return [SymbolicZero(t.aval) if type(t) is ad.Zero else t for t in tangents]
    return [ad.instantiate_zeros(t) for t in tangents]


def _trace_call(fun, nums, nondiff, leaves, in_tree, check_out=lambda out: out):
    """Stages fun (with its non-differentiated arguments fixed) to a closed jaxpr of the
    flat differentiable leaves. Values fun closes over that belong to enclosing traces
    become leading `hoisted` arguments. `check_out(out)`: fun's output as checked."""
    found = {}

    def flat_fun(*xs):
        out = check_out(
            fun(*_merge_nondiff(nums, nondiff, tree_util.tree_unflatten(in_tree, xs))))
        out_leaves, found["out_tree"] = tree_util.flatten(out)
        return out_leaves

    closed, hoisted = pe.trace_to_closed_jaxpr(flat_fun, [get_aval(x) for x in leaves],
                                               pe.debug_info_of(fun))
    return closed, hoisted, found["out_tree"]


def _check_closure(name, const_tangents, kind):
    if any(type(t) is not ad.Zero for t in const_tangents):
        exc = CustomJVPException if kind == "custom_jvp" else CustomVJPException
        hint = ("adapt the custom JVP rule" if kind == "custom_jvp" else
                "adapt the fwd and bwd rules (jax.closure_convert can turn closed-over "
                "values of a function argument into explicit arguments)")
        raise exc(f"Detected differentiation of the {kind} function {name} with respect to "
                  "a value it closes over. Its rule only says how to differentiate with "
                  "respect to its explicit arguments: pass the closed-over value in as an "
                  f"argument and {hint}.")


def forward_def_methods(self, name):
    """__getattr__ of the custom-function wrappers: a def* method they lack is the wrapped
    function's, as in JAX (custom_vmap(custom_jvp(f)).defjvp sets f's JVP rule)."""
    if name.startswith("def"):
        return getattr(self.fun, name)
    raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class _CustomRuleFunction:
    """What custom_jvp and custom_vjp share. A call outside any transformation just runs
    fun; otherwise fun is staged to a jaxpr of its flat differentiable arguments and the
    subclass binds its call primitive (`_bind`) with that jaxpr and the user's rules."""

    _kind = _rule = _rule_attr = ""   # e.g. "custom_jvp", "JVP", the attribute holding it
    _inline_unknown = False   # partial evaluation of unknown values runs fun, not the rule

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        # names become the positions of fun's positional parameters so named, as in JAX
        # (names of no such parameter are ignored)
        named, _ = _infer_argnums_and_argnames(_parameters(fun), None,
                                               tuple(nondiff_argnames))
        self.nondiff_argnums = tuple(sorted({*nondiff_argnums, *named}))
        self.symbolic_zeros = False

    __getattr__ = forward_def_methods

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    @api_boundary
    def __call__(self, *args, **kwargs):
        name = _name(self.fun)
        if getattr(self, self._rule_attr) is None:
            raise AttributeError(f"No {self._rule} defined for {self._kind} function {name} "
                                 f"using def{self._rule.lower()}.")
        args = resolve_args(self._kind, self.fun, args, kwargs)
        nums, nondiff, diff = _split_nondiff(args, self.nondiff_argnums, name)
        self._check_refs(args)
        trace = current_trace()
        if trace is Trace.root:
            return self._checked_primal_output(self.fun(*args))
        self._check_nondiff(name, args, nums)
        leaves, in_tree = tree_util.flatten(tuple(diff))
        leaves = [_as_value(x) for x in leaves]
        # Like JAX, each kind of trace calls what it needs and nothing more: the JVP trace
        # only the rule, partial evaluation of known values the parent's way; the others
        # stage fun to a jaxpr that keeps the rules for a later differentiation.
        if type(trace) is ad.JVPTrace:
            return self._differentiate(trace, nums, nondiff, in_tree, leaves)
        if type(trace) is batching.BatchTrace and any(
                trace.to_batch_info(x)[1] is not batching.not_mapped for x in leaves):
            return self._batch(trace, nums, nondiff, in_tree, leaves)
        if type(trace) is pe.PartialEvalTrace:
            if not any(trace.is_unknown(x) for x in tree_util.tree_leaves(args)):
                with set_current_trace(trace.parent):
                    return self(*args)
            if self._inline_unknown:
                return self.fun(*args)
        closed, hoisted, out_tree = _trace_call(self.fun, nums, nondiff, leaves, in_tree,
                                                self._checked_primal_output)
        outs = self._bind(name, nums, nondiff, in_tree, out_tree, closed, hoisted, leaves)
        return tree_util.tree_unflatten(out_tree, outs)

    def _check_refs(self, args):
        """Arguments are checked where JAX checks them (custom_vjp: no jax.Ref twice)."""

    def _checked_primal_output(self, out):
        """fun's output, checked where JAX checks it (custom_vjp: no jax.Ref in it)."""
        return out

    def _differentiate(self, trace, nums, nondiff, in_tree, leaves):
        """The call under a JVP trace: the rule runs on the parent trace with the primals
        (concrete where the parent is eager or partial evaluation), fun is not called
        unless the rule calls it; with no nonzero tangent, the call goes to the parent."""
        pairs = [trace.to_primal_tangent(x) for x in leaves]
        primals, tangents = [p for p, _ in pairs], [t for _, t in pairs]
        nondiff = [tree_util.tree_map(_without_tangent, a) for a in nondiff]
        if all(type(t) is ad.Zero for t in tangents):
            args = _merge_nondiff(nums, nondiff, tree_util.tree_unflatten(in_tree, primals))
            with set_current_trace(trace.parent):
                return self(*args)
        with set_current_trace(trace.parent):
            out_tree, outs, t_outs = self._apply_rule(nums, nondiff, in_tree, primals,
                                                      tangents)
        return tree_util.tree_unflatten(
            out_tree, [trace.pack(o, t) for o, t in zip(outs, t_outs)])

    def _batch(self, trace, nums, nondiff, in_tree, leaves):
        """The call under a vmap trace, as JAX makes it: the same kind of call on the
        parent trace, of fun and rules that run per example on this trace. So each runs
        only when and as the parent calls it (under grad: only the rule). Every output
        comes back batched; so calls with no batched argument are staged instead (the
        batch rule of the staged call leaves outputs that do not depend on the batch
        unbatched, for out_axes=None)."""
        pairs = [trace.to_batch_info(x) for x in leaves]
        nondiff = [tree_util.tree_map(_without_tangent, a) for a in nondiff]
        per_example = _PerExample(trace, [d is not batching.not_mapped for _, d in pairs])
        with set_current_trace(trace.parent):
            vals = [v if d is batching.not_mapped else batching.moveaxis(v, d, 0)
                    for v, d in pairs]
            outs = self._batched(per_example, nums, nondiff, in_tree)(*vals)
        return tree_util.tree_unflatten(per_example.out_tree,
                                        [trace.wrap(o, 0) for o in outs])

    def _batched_fun(self, per_example, nums, nondiff, in_tree):
        def fun(*vals):
            return per_example.to_front(per_example.run(
                lambda xs: per_example.flatten_out(
                    self.fun(*_merge_nondiff(nums, nondiff, tree_util.tree_unflatten(
                        in_tree, xs)))), vals))
        fun.__name__ = _name(self.fun)
        return fun

    def _check_nondiff(self, name, args, nums):
        """Raises where the nondiff_argnums arguments hold values the rules cannot take
        (custom_jvp takes any)."""


# --- custom_jvp -------------------------------------------------------------------------

class custom_jvp(_CustomRuleFunction):
    """Wraps fun so that differentiation uses a rule set with `defjvp` (or `defjvps`)
    instead of differentiating fun's body. Arguments at nondiff_argnums are passed to the
    rule first, as they are, and are not differentiated."""

    _kind, _rule, _rule_attr = "custom_jvp", "JVP", "jvp"
    _inline_unknown = True   # JAX: unknowns only occur building linear functions

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.jvp = None

    def defjvp(self, jvp, symbolic_zeros=False):
        """Sets the rule `jvp(*nondiff_args, primals, tangents) -> (primal_out,
        tangent_out)`. Returns jvp, so this can be used as a decorator."""
        self.jvp, self.symbolic_zeros = jvp, bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument, `jvp_i(g_i, primal_out, *primals)` giving that argument's
        tangent contribution (None: no contribution); contributions are summed."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            parts = [f(t, primal_out, *primals) for f, t in zip(jvps, tangents)
                     if f is not None]
            if not parts:
                return primal_out, tree_util.tree_map(ew.zeros_like, primal_out)
            return primal_out, tree_util.tree_map(_sum_tangents, *parts)
        jvp.__name__ = f"{_name(self.fun)}_jvps"
        self.defjvp(jvp)

    def _batched(self, per_example, nums, nondiff, in_tree):
        """A custom_jvp over the flat values with the batch at 0 (see _batch)."""
        def jvp(primals, tangents):
            def run(xs):
                ps, ts = xs[:len(primals)], xs[len(primals):]
                ts = [SymbolicZero(_example_aval(t.aval, b)) if isinstance(t, SymbolicZero)
                      else x for t, x, b in zip(tangents, ts, per_example.batched)]
                out, t_out = self.jvp(*nondiff, tree_util.tree_unflatten(in_tree, ps),
                                      tree_util.tree_unflatten(in_tree, ts))
                t_leaves = tree_util.tree_flatten(
                    t_out, is_leaf=lambda x: isinstance(x, SymbolicZero))[0]
                return per_example.flatten_out(out) + t_leaves
            outs = per_example.run(run, [*primals, *(
                None if isinstance(t, SymbolicZero) else t for t in tangents)],
                per_example.batched * 2)
            outs = per_example.to_front(outs)
            return outs[:len(outs) // 2], outs[len(outs) // 2:]
        jvp.__name__ = _name(self.jvp)
        batched = custom_jvp(self._batched_fun(per_example, nums, nondiff, in_tree))
        batched.defjvp(jvp, symbolic_zeros=self.symbolic_zeros)
        return batched

    def _apply_rule(self, nums, nondiff, in_tree, primals, tangents):
        rule = _JVPRule(self, nondiff, in_tree)
        outs, t_outs = rule(primals, _rule_tangents(tangents, self.symbolic_zeros), [])
        return rule.out_tree, outs, t_outs

    def _bind(self, name, nums, nondiff, in_tree, out_tree, closed, hoisted, leaves):
        rule = _JVPRule(self, nondiff, in_tree, out_tree, closed.out_avals, hoisted)
        return custom_jvp_call_p.bind(*hoisted, *leaves, name=name, call_jaxpr=closed,
                                      jvp_jaxpr_fun=rule, num_consts=len(hoisted),
                                      symbolic_zeros=self.symbolic_zeros)


def _sum_tangents(*ts):
    total = ts[0]
    for t in ts[1:]:
        total = ew.add_any_p.bind(total, t)
    return total


def _primal_output_error(rule, output, fname, got, want):
    """JAX's TypeError for a rule whose primal outputs (got: (tree, avals)) differ from
    the function's (want). `rule` describes the rule ("Custom JVP rule f_jvp for function
    f"), `output` what its first element should be."""
    def typed(tree, avals):
        return str(tree_util.tree_unflatten(tree, [a.str_short() for a in avals])).replace(
            "'", "")
    kind = "jvp" if "JVP" in rule else "vjp"
    if got[0] != want[0]:
        what, end = "container/pytree structure", "."
    else:
        what, end = "shapes/dtypes of", ""
    return TypeError(f"{rule} must produce a pair (list or tuple of length two) where the "
                     f"first element represents the primal output ({output}), but instead "
                     f"the {'JVP' if kind == 'jvp' else 'fwd'} rule output's first element "
                     f"had {what}:\n    {typed(*got)}\nwhile the custom_{kind}-decorated "
                     f"function {fname} had output {what}:\n    {typed(*want)}{end}")


class _JVPRule:
    """The user's JVP rule over flat leaves, with the checks JAX makes on its output
    (against fun's output types where fun has been traced: out_tree, out_avals).
    Traced nondiff_argnums values are among the call's hoisted consts: the rule gets their
    primal values and their tangents are dropped (JAX's semantics: never differentiated)."""

    def __init__(self, cj, nondiff, in_tree, out_tree=None, out_avals=None, hoisted=()):
        self.cj, self.in_tree = cj, in_tree
        self.out_tree, self.out_avals = out_tree, out_avals
        self.__name__ = _name(cj.jvp)
        leaves, self.nondiff_tree = tree_util.flatten(list(nondiff))
        self.nondiff_leaves = leaves
        self.const_index = [next((i for i, h in enumerate(hoisted) if h is x), None)
                            for x in leaves]
        self.nondiff_consts = frozenset(i for i in self.const_index if i is not None)

    def _nondiff_args(self, consts):
        # stop_gradient: enclosing differentiations do not differentiate them either
        leaves = [x if i is None else ad_util.stop_gradient(consts[i])
                  for x, i in zip(self.nondiff_leaves, self.const_index)]
        return tree_util.tree_unflatten(self.nondiff_tree, leaves)

    def __call__(self, primals, tangents, consts):
        fname, rname = _name(self.cj.fun), self.__name__
        args = tree_util.tree_unflatten(self.in_tree, primals)
        targs = tree_util.tree_unflatten(self.in_tree, tangents)
        result = self.cj.jvp(*self._nondiff_args(consts), args, targs)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"Custom JVP rule {rname} for function {fname} must produce a "
                            "pair (list or tuple of length two) representing primal and "
                            f"tangent outputs, but got {result!r:.200}.")
        p_leaves, p_tree = tree_util.flatten(result[0])
        p_leaves = [_as_rule_output(p) for p in p_leaves]
        t_leaves, t_tree = tree_util.tree_flatten(
            result[1], is_leaf=lambda x: isinstance(x, SymbolicZero))
        if self.out_tree is None:   # fun has not run: the rule's output is the reference
            self.out_tree = p_tree
        p_avals = [get_aval(p) for p in p_leaves]
        want_avals = p_avals if self.out_avals is None else self.out_avals
        if p_tree != self.out_tree or not all(
                a.same_type(w) for a, w in zip(p_avals, want_avals)):
            raise _primal_output_error(
                f"Custom JVP rule {rname} for function {fname}",
                f"equal in value to the output of the custom_jvp-decorated function {fname}, "
                "and in particular " + ("of the same container/pytree structure"
                                        if p_tree != self.out_tree else
                                        "with leaves of the same shape/dtype"),
                fname, (p_tree, p_avals), (self.out_tree, want_avals))
        if t_tree != p_tree:
            raise TypeError(f"Custom JVP rule {rname} for function {fname} must produce "
                            "primal and tangent outputs with equal container (pytree) "
                            f"structures, but got {p_tree} and {t_tree} respectively.")
        t_out, mismatched = [], []
        for p_aval, t in zip(p_avals, t_leaves):
            want = ad.tangent_aval(p_aval)
            if want.dtype == dtypes.float0 or isinstance(t, SymbolicZero):
                t_out.append(ad.Zero(want))
                continue
            t = _as_rule_output(t)
            t_aval = get_aval(t)
            if t_aval.shape != want.shape or t_aval.dtype != want.dtype:
                mismatched.append((p_aval, want, t_aval))
            t_out.append(t)
        if mismatched:
            head = ("Custom JVP rule must produce primal and tangent outputs with "
                    "corresponding shapes and dtypes")
            if len(p_avals) == 1:
                (p_aval, want, t_aval), = mismatched
                raise TypeError(f"{head}. Expected {want.str_short()} (tangent type of "
                                f"{p_aval.str_short()}) but got {t_aval.str_short()}.")
            raise TypeError(f"{head}, but got:\n" + "\n".join(
                f"  primal {p.str_short()} with tangent {t.str_short()}, expecting tangent "
                f"{w.str_short()}" for p, w, t in mismatched))
        return p_leaves, t_out


def _custom_jvp_call_impl(*args, name, call_jaxpr, jvp_jaxpr_fun, num_consts,
                          symbolic_zeros):
    return numpy_backend.execute_closed_jaxpr(call_jaxpr, list(args))


def _custom_jvp_call_abstract_eval(*in_avals, call_jaxpr, **params):
    return call_jaxpr.out_avals


def _custom_jvp_call_jvp(primals, tangents, *, name, call_jaxpr, jvp_jaxpr_fun, num_consts,
                         symbolic_zeros):
    _check_closure(name, [t for i, t in enumerate(tangents[:num_consts])
                          if i not in jvp_jaxpr_fun.nondiff_consts], "custom_jvp")
    args, arg_tangents = primals[num_consts:], tangents[num_consts:]
    return _staged_rule(jvp_jaxpr_fun, list(args),
                        _rule_tangents(arg_tangents, symbolic_zeros), list(primals[:num_consts]))


_STAGED = ("call_jaxpr", "jvp_jaxpr_fun", "num_consts")


class _CallFun:
    """custom_jvp_call's function as JAX's get_bind_params hands it out (a linear_util
    WrappedFun of the call's jaxpr): call_wrapped(*args) gives the call's outputs, from
    its flat arguments, consts first."""

    def __init__(self, params):
        self.params = params

    def call_wrapped(self, *args):
        closed = self.params["call_jaxpr"]
        return jx.eval_jaxpr(closed.jaxpr, closed.consts, *args)


class _JVPFun:
    """custom_jvp_call's JVP as JAX's get_bind_params hands it out (lift_jvp):
    call_wrapped(*args, *tangents), a SymbolicZero for a zero tangent, gives the outputs
    and then their tangents (SymbolicZero where the rule gives none)."""

    def __init__(self, params):
        self.params = params

    def call_wrapped(self, *xs):
        n = len(xs) // 2
        tangents = [ad.Zero(t.aval) if isinstance(t, SymbolicZero) else t for t in xs[n:]]
        outs, t_outs = _custom_jvp_call_jvp(list(xs[:n]), tangents, **self.params)
        return [*outs, *(SymbolicZero(t.aval) if type(t) is ad.Zero else t for t in t_outs)]


class _CustomJVPCallBindParams:
    """custom_jvp_call's params as JAX re-binds its equations (get_bind_params):
    `subfuns`, the call's function and its JVP, in place of call_jaxpr, jvp_jaxpr_fun
    and num_consts (equinox's finalise_jaxpr calls the function); binding with them
    gives the equation back."""

    @staticmethod
    def to_jax(params):
        rest = {k: v for k, v in params.items() if k not in _STAGED}
        return {**rest, "subfuns": (_CallFun(params), _JVPFun(params))}

    @staticmethod
    def from_jax(keywords):
        keywords = dict(keywords)
        fun, jvp = keywords.pop("subfuns")
        if type(fun) is not _CallFun or type(jvp) is not _JVPFun:
            raise NotImplementedError(
                "custom_jvp_call_p.bind(subfuns=...) takes the functions its "
                "get_bind_params gave: pyjax stages a custom_jvp's function and rule "
                "itself. To call a function with a custom JVP, use jax.custom_jvp.")
        return {**fun.params, **keywords}


# rule -> {(input types, nonzero tangents): (jaxpr of the rule, its zero tangent outputs)}
_staged_rules = weakref.WeakKeyDictionary()


def _staged_rule(rule, primals, tangents, consts):
    """The rule of a staged custom_jvp call, traced to a jaxpr once per input types and
    symbolic-zero pattern and evaluated from it afterwards, as JAX memoizes its JVP
    thunk: differentiating the same jaxpr again (cond and scan rules, fixpoints) does not
    call the user's rule again."""
    nonzero = tuple(not isinstance(t, SymbolicZero) for t in tangents)
    ins = [*primals, *(t for t, nz in zip(tangents, nonzero) if nz), *consts]
    avals = tuple(get_aval(x) for x in ins)
    per_rule = _staged_rules.setdefault(rule, {})
    traced = per_rule.get((avals, nonzero))
    if traced is None:
        found = {}

        def flat_rule(*xs):
            it = iter(xs[len(primals):len(xs) - len(consts)])
            ts = [next(it) if nz else t for t, nz in zip(tangents, nonzero)]
            outs, t_outs = rule(list(xs[:len(primals)]), ts, list(xs[len(xs) - len(consts):]))
            found["zeros"] = [t if type(t) is ad.Zero else None for t in t_outs]
            return list(outs) + [t for t in t_outs if type(t) is not ad.Zero]

        closed, hoisted = pe.trace_to_closed_jaxpr(flat_rule, list(avals),
                                                   pe.debug_info_of(rule))
        traced = (closed, found["zeros"])
        if hoisted:   # it closes over values of enclosing traces: good for this call only
            ins = hoisted + ins
        else:
            per_rule[(avals, nonzero)] = traced
    closed, zeros = traced
    outs = jx.eval_jaxpr(closed.jaxpr, closed.consts, *ins)
    n = len(outs) - sum(z is None for z in zeros)
    it = iter(outs[n:])
    return outs[:n], [next(it) if z is None else z for z in zeros]


def _custom_jvp_call_transpose(cts, *args, call_jaxpr, **params):
    """A linear custom_jvp function (under linear_transpose) transposes as its body: the
    rule says how to differentiate it, not how to transpose it (as in JAX)."""
    return ad.backward_pass(call_jaxpr.jaxpr, call_jaxpr.consts, list(args), list(cts))


def _custom_call_lower(ctx, *args, call_jaxpr, **params):
    return ctx.lower_jaxpr(call_jaxpr, list(args))


def _custom_jvp_samples():
    x = b.random_values((3,), "float32")
    cj = custom_jvp(ew.sin)
    cj.defjvps(lambda g, ans, x: ew.mul(g, ew.cos(x)))
    closed, _, out_tree = _trace_call(cj.fun, set(), [], [x], tree_util.flatten((x,))[1])
    rule = _JVPRule(cj, [], tree_util.flatten((x,))[1], out_tree, closed.out_avals)
    return [b.Sample([x], {"name": "sin", "call_jaxpr": closed, "jvp_jaxpr_fun": rule,
                           "num_consts": 0, "symbolic_zeros": False})]


# --- custom_vjp -------------------------------------------------------------------------

class custom_vjp(_CustomRuleFunction):
    """Wraps fun so that reverse-mode differentiation uses `fwd` and `bwd` set with
    `defvjp`: fwd(*args) -> (out, residuals), bwd(*nondiff_args, residuals, ct_out) ->
    a tuple of cotangents, one per differentiable argument (None means zero)."""

    _kind, _rule, _rule_attr = "custom_vjp", "VJP", "fwd"

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, bool(symbolic_zeros)

    def _check_refs(self, args):
        leaves, in_tree = tree_util.flatten(tuple(args))
        seen = {}
        for i, x in enumerate(leaves):
            if not _is_ref(x):
                continue
            if id(x) in seen:
                names = operand_names(self.fun, in_tree)
                raise ValueError(
                    "only one reference to a mutable array may be passed as an argument to "
                    f"a function, but custom_vjp function {_name(self.fun)} got the same "
                    f"mutable array reference of type {get_aval(x).str_short(True)} at "
                    f"{names[seen[id(x)]]} and {names[i]}.")
            seen[id(x)] = i

    def _checked_primal_output(self, out):
        for x in tree_util.tree_leaves(out):
            if _is_ref(x):
                raise ValueError(
                    f"custom_vjp primal function {_name(self.fun)} returned a mutable array "
                    f"reference of type {get_aval(x).str_short(True)} that was not an "
                    "argument.")
        return out

    def _check_nondiff(self, name, args, nums):
        for i in sorted(nums):
            if any(isinstance(x, Tracer) for x in tree_util.tree_leaves(args[i])):
                raise UnexpectedTracerError(
                    f"custom_vjp function {name} got a traced value as argument {i}, which "
                    "is in nondiff_argnums. nondiff_argnums are for non-array values "
                    "(callables, shapes, strings); pass arrays as regular arguments and "
                    "return None as their cotangent from bwd.", escaped=False)

    def _batched(self, per_example, nums, nondiff, in_tree):
        """A custom_vjp over the flat values with the batch at 0 (see _batch)."""
        found = {}

        def fwd(*args):
            symbolic = self.symbolic_zeros
            vals = [a.value if symbolic else a for a in args]

            def run(xs):
                diff = _primal_records(in_tree, xs, [a.perturbed for a in args]) \
                    if symbolic else tree_util.tree_unflatten(in_tree, xs)
                out, res = self.fwd(*_merge_nondiff(nums, nondiff, diff))
                res_leaves, found["res_tree"] = tree_util.flatten(res)
                return per_example.flatten_out(out) + res_leaves
            outs = per_example.to_front(per_example.run(run, vals))
            n = per_example.out_tree.num_leaves
            return outs[:n], outs[n:]

        def bwd(residuals, cts):
            def run(xs):
                res, cs = xs[:len(residuals)], xs[len(residuals):]
                cs = [SymbolicZero(_example_aval(c.aval, True)) if isinstance(c, SymbolicZero)
                      else x for c, x in zip(cts, cs)]
                out = self.bwd(*nondiff, tree_util.tree_unflatten(found["res_tree"], res),
                               tree_util.tree_unflatten(per_example.out_tree, cs))
                return [None if isinstance(c, SymbolicZero) else c for c in
                        _flat_cotangents(out, in_tree, _name(self.bwd), _name(self.fun))]
            cts_in = per_example.run(run, [*residuals, *(
                None if isinstance(c, SymbolicZero) else c for c in cts)],
                [True] * (len(residuals) + len(cts)))
            return tuple(per_example.sum_or_front(cts_in))

        fwd.__name__, bwd.__name__ = _name(self.fwd), _name(self.bwd)
        batched = custom_vjp(self._batched_fun(per_example, nums, nondiff, in_tree))
        batched.defvjp(fwd, bwd, symbolic_zeros=self.symbolic_zeros)
        return batched

    def _apply_rule(self, nums, nondiff, in_tree, primals, tangents):
        rule = _VJPRule(self, nums, nondiff, in_tree, None, None,
                        [get_aval(p) for p in primals])
        outs, t_outs = _forward_with_rule(rule.fwd, rule.bwd, primals, tangents)
        return rule.out_tree, outs, t_outs

    def _bind(self, name, nums, nondiff, in_tree, out_tree, closed, hoisted, leaves):
        rule = _VJPRule(self, nums, nondiff, in_tree, out_tree, closed.out_avals,
                        [get_aval(x) for x in leaves])
        return custom_vjp_call_p.bind(*hoisted, *leaves, name=name, call_jaxpr=closed,
                                      fwd=rule.fwd, bwd=rule.bwd, num_consts=len(hoisted),
                                      symbolic_zeros=self.symbolic_zeros)


def _is_ref(x):
    """Whether x is a jax.Ref (or a tracer of one)."""
    return type(getattr(x, "aval", None)) is AbstractRef


class _VJPRule:
    """The user's fwd and bwd over flat leaves, with JAX's checks on their outputs
    (against fun's output types where fun has been traced: out_tree, out_avals)."""

    def __init__(self, cv, nums, nondiff, in_tree, out_tree, out_avals, in_avals):
        self.cv, self.nums, self.nondiff, self.in_tree = cv, nums, nondiff, in_tree
        self.out_tree, self.out_avals, self.in_avals = out_tree, out_avals, in_avals
        self.res_tree = None
        fname = _name(cv.fun)
        self.fwd = functools.partial(_VJPRule._fwd, self)
        self.fwd.__name__ = f"{fname}_fwd"
        self.bwd = functools.partial(_VJPRule._bwd, self)
        self.bwd.__name__ = f"{fname}_bwd"

    def _fwd(self, primals, perturbed):
        fname = _name(self.cv.fun)
        diff = _primal_records(self.in_tree, primals, perturbed) \
            if self.cv.symbolic_zeros else tree_util.tree_unflatten(self.in_tree, primals)
        # JAX linearizes on one trace, which runs fwd on its parent, where the primals
        # live; pyjax's linearize is a JVP over partial evaluation, whose known values
        # live on its parent: fwd runs there too (so what fwd makes, flax's Variables,
        # belongs to the trace that fwd's outputs are checked on, as in JAX)
        trace = current_trace()
        if type(trace) is pe.PartialEvalTrace and not any(
                trace.is_unknown(x) for x in primals + tree_util.tree_leaves(self.nondiff)):
            trace = trace.parent
        with set_current_trace(trace):
            result = self.cv.fwd(*_merge_nondiff(self.nums, self.nondiff, diff))
        rule = f"Custom VJP fwd rule {_name(self.cv.fwd)} for function {fname}"
        output = (f"equal to the output of the custom_vjp-decorated function {fname}) and the "
                  "second element represents residuals (i.e. values stored from the forward "
                  "pass for use on the backward pass")
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise TypeError(f"{rule} must produce a pair (list or tuple of length two) where "
                            f"the first element represents the primal output ({output}), but "
                            f"instead of a pair the fwd rule {_name(self.cv.fwd)} produced "
                            f"{result!r:.200}.")
        out_leaves, out_tree = tree_util.flatten(result[0])
        out_leaves = [_as_value(o) for o in out_leaves]
        out_avals = [get_aval(o) for o in out_leaves]
        if self.out_tree is None:   # fun has not run: fwd's output is the reference
            self.out_tree, self.out_avals = out_tree, out_avals
        if out_tree != self.out_tree or not all(
                a.same_type(w) for a, w in zip(out_avals, self.out_avals)):
            raise _primal_output_error(rule, output, fname, (out_tree, out_avals),
                                       (self.out_tree, self.out_avals))
        res_leaves, self.res_tree = tree_util.flatten(result[1])
        given = {id(x) for x in primals}
        for path, r in tree_util.tree_flatten_with_path(result)[0]:
            if _is_ref(r) and id(r) not in given:
                raise ValueError(
                    f"custom_vjp fwd function {_name(self.cv.fwd)} returned a mutable array "
                    f"reference of type {get_aval(r).str_short(True)} at output tree path "
                    f"{tree_util.keystr(path)} that was not an argument.")
        return out_leaves, [_as_rule_output(r) for r in res_leaves]

    def _bwd(self, residuals, cts):
        fname, bname = _name(self.cv.fun), _name(self.cv.bwd)
        res = tree_util.tree_unflatten(self.res_tree,
                                       [_as_rule_output(r) for r in residuals])
        cts = [c if type(c) is ad.Zero else _as_value(c) for c in cts]
        cts = _rule_tangents(cts, self.cv.symbolic_zeros)
        ct_out = tree_util.tree_unflatten(self.out_tree, cts)
        leaves = _flat_cotangents(self.cv.bwd(*self.nondiff, res, ct_out), self.in_tree,
                                  bname, fname)
        out = []
        for i, (ct, aval) in enumerate(zip(leaves, self.in_avals)):
            want = ad.tangent_aval(aval)
            if ct is None or isinstance(ct, SymbolicZero) or want.dtype == dtypes.float0:
                out.append(ad.Zero(want))
                continue
            ct = _as_value(ct)
            c_aval = get_aval(ct)
            # JAX (for now) lets a float input take a cotangent of another dtype
            mismatches = [what for what, bad in (
                ("dtypes", c_aval.dtype != want.dtype and not dtypes.is_inexact(want.dtype)),
                ("shapes", c_aval.shape != want.shape),
                ("manual axis types", bool(want.vma - c_aval.vma)))   # inside shard_map
                if bad]
            if mismatches:
                path = tree_util.keystr(tree_util.tree_flatten_with_path(
                    tree_util.tree_unflatten(self.in_tree, range(len(leaves))))[0][i][0])
                listed = [f"the {what} do not match" for what in mismatches]
                raise ValueError(
                    "Custom VJP bwd rule must produce an output with the same type as the "
                    f"args tuple of the primal function, but at output{path} the bwd rule "
                    f"produced an output of type {c_aval._dtype_and_shape()} corresponding "
                    f"to an input of type {aval._dtype_and_shape()}, so "
                    + (listed[0] if len(listed) == 1 else
                       ", ".join(listed[:-1]) + ", and " + listed[-1]))
            out.append(ct)
        return out


def _custom_vjp_call_impl(*args, name, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros):
    return numpy_backend.execute_closed_jaxpr(call_jaxpr, list(args))


def _custom_vjp_call_jvp(primals, tangents, *, name, call_jaxpr, fwd, bwd, num_consts,
                         symbolic_zeros):
    """Runs fwd on the primals; the tangents go through custom_lin, a linear primitive
    whose transpose is bwd (and which refuses to be evaluated: no forward mode)."""
    _check_closure(name, tangents[:num_consts], "custom_vjp")
    # JAX traces a staged call's fwd at its input types, so fwd never sees a Python
    # scalar (a literal of the jaxpr): it gets arrays, which have .shape and .dtype.
    args = [as_array(a) for a in primals[num_consts:]]
    return _forward_with_rule(fwd, bwd, args, tangents[num_consts:])


def _flat_cotangents(result, in_tree, bname, fname):
    """A bwd rule's output (one entry per argument, None for zero), matched against the
    arguments' structure as JAX matches it, as one entry per flat leaf of the arguments:
    a cotangent, None or a SymbolicZero. Each leaf of an entry (None included) stands for
    the whole subtree of the arguments at its place: None for zeros there, a cotangent
    for each of its leaves (none where the argument is an empty subtree, such as the
    None leaves of an equinox partition)."""
    n_args = len(in_tree.children())
    if not isinstance(result, (tuple, list)) or len(result) != n_args:
        raise TypeError(f"Custom VJP bwd rule {bname} for function {fname} must produce "
                        "a tuple with one entry per differentiable argument of the "
                        f"function ({n_args}), but got {result!r:.200}.")
    leaves = []

    def is_leaf(x):
        return x is None or isinstance(x, SymbolicZero)

    def match(ct, primal):
        n = len(tree_util.flatten(primal)[0])
        if ct is not None and tree_util.is_array_node(primal):
            # a key array: a float0 cotangent is zeros of its leaves
            zero = getattr(ct, "dtype", None) == dtypes.float0
            leaves.extend([None] * n if zero else tree_util.flatten(ct)[0])
        else:
            leaves.extend([ct] * n)

    for i, (entry, sub) in enumerate(zip(result, in_tree.children())):
        # compared as users see trees: a key array is one leaf, its cotangent float0
        primal = sub.unflatten([_ARGUMENT] * sub.num_leaves)
        try:
            tree_util.user_tree_map(match, entry, primal, is_leaf=is_leaf)
        except ValueError:
            e_tree = tree_util.user_tree_structure(entry, is_leaf=is_leaf)
            raise TypeError(f"Custom VJP bwd rule {bname} for function {fname} must "
                            "produce an output with the same container (pytree) "
                            "structure as the args tuple of the primal function, but at "
                            f"output[{i}] got {e_tree} for primal input structure "
                            f"{tree_util.user_tree_structure(primal)}.") from None
    return leaves


_ARGUMENT = object()   # a placeholder for one flat leaf of the arguments


class _PerExample:
    """Runs a user's function per example on a vmap trace for the same call one level
    down (custom rules under vmap): the trace is lent to whichever trace is current when
    the parent calls, as JAX makes a new trace of the same axis, so values the function
    closes over from this vmap stay its own. Records the output structure."""

    def __init__(self, trace, batched):
        self.trace, self.batched = trace, batched
        self.out_tree = None

    def flatten_out(self, out):
        leaves, self.out_tree = tree_util.flatten(out)
        return leaves

    def run(self, fn, vals, batched=None):
        """fn(per-example values) -> list, under this trace; returns (value, batch dim)
        pairs on the current trace. `vals` with the batch at 0 where `batched`; None
        entries pass as they are."""
        trace, batched = self.trace, self.batched if batched is None else batched
        saved, trace.parent = trace.parent, current_trace()
        try:
            with batching.extend_axis_env(trace.axis.name, trace.axis.size), \
                    set_current_trace(trace):
                outs = fn([v if v is None else trace.wrap(v, 0 if b else batching.not_mapped)
                           for v, b in zip(vals, batched)])
            return [(None, None) if o is None else trace.to_batch_info(o) for o in outs]
        finally:
            trace.parent = saved

    def to_front(self, pairs):
        size = self.trace.axis.size
        return [SymbolicZero(v.aval.update(shape=(size, *v.aval.shape)))
                if isinstance(v, SymbolicZero) else batching.bdim_at_front(v, d, size)
                for v, d in pairs]

    def sum_or_front(self, pairs):
        """Cotangents of the call's inputs: at 0 for batched ones, summed over the batch
        for the others (each example contributed); None stays (zero)."""
        size = self.trace.axis.size
        return [None if v is None else
                batching.bdim_at_front(v, d, size) if b else
                v if d is batching.not_mapped else reductions.reduce_sum(v, (d,))
                for (v, d), b in zip(pairs, self.batched)]


def _forward_with_rule(fwd, bwd, args, arg_tangents):
    outs, residuals = fwd(list(args), [type(t) is not ad.Zero for t in arg_tangents])
    # a jax.Ref argument has no tangent: bwd writes its cotangent into it, if anything
    differentiable = tuple(not _is_ref(a) and ad.tangent_aval(get_aval(a)).dtype
                           != dtypes.float0 for a in args)
    lin_in = [ad.instantiate_zeros(t) for t, d in zip(arg_tangents, differentiable) if d]
    out_avals = tuple(ad.tangent_aval(get_aval(o)) for o in outs)
    lin_out = iter(custom_lin_p.bind(*residuals, *lin_in, num_res=len(residuals), bwd=bwd,
                                     out_avals=out_avals, differentiable=differentiable))
    return outs, [ad.Zero(a) if a.dtype == dtypes.float0 else next(lin_out)
                  for a in out_avals]


def _custom_lin_abstract_eval(*avals, num_res, bwd, out_avals, differentiable):
    return [a for a in out_avals if a.dtype != dtypes.float0]


def _custom_lin_impl(*args, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_lin_jvp(primals, tangents, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, differentiable):
    residuals = list(args[:num_res])
    nz = iter(cts)
    all_cts = [ad.Zero(a) if a.dtype == dtypes.float0 else next(nz) for a in out_avals]
    cts_in = bwd(residuals, all_cts)
    return [None] * num_res + [ct for ct, d in zip(cts_in, differentiable) if d]


# --- batching: the rules run per example under a batch trace ----------------------------

def _to_front(trace, x, size):
    val, dim = trace.to_batch_info(x)
    return batching.bdim_at_front(val, dim, size)


def _example_aval(aval, batched):
    return aval.update(shape=aval.shape[1:]) if batched else aval


def _batched_output(trace, x, batched, name):
    """A rule's per-example output as the batched call gives it: batch at 0 where the
    call's output is batched; unbatched where it is not (a call with no batched argument
    whose body only uses the axis through collectives), which the rule must agree with."""
    val, dim = trace.to_batch_info(x)
    if batched:
        return batching.bdim_at_front(val, dim, trace.axis.size)
    if dim is not None:
        raise ValueError(f"the custom rule {name} gives an output that varies along the vmap "
                         f"axis {trace.axis.name!r} where the function's output does not")
    return val


def _call_out_batched(call_jaxpr, axis, in_batched):
    """(batched call_jaxpr, which outputs it batches): all of them, unless no argument is
    batched (only collectives over the axis: psum's result does not vary along it)."""
    return batching.batch_jaxpr(call_jaxpr, axis, in_batched, any(in_batched))


class _BatchedJVPRule:
    """A custom_jvp rule over values carrying the batch at 0 (where in_batched): the
    user's rule runs per example under a batch trace; outputs come back batched as the
    call's (out_batched)."""

    def __init__(self, rule, axis, in_batched, consts_batched, out_batched):
        self.rule, self.axis, self.in_batched = rule, axis, in_batched
        self.consts_batched, self.out_batched = consts_batched, out_batched
        self.nondiff_consts = rule.nondiff_consts
        self.__name__ = getattr(rule, "__name__", "jvp")

    def __call__(self, primals, tangents, consts):
        size = self.axis.size
        with batching.subtrace(self.axis) as trace:
            ps = [trace.wrap(p, 0 if b else None) for p, b in zip(primals, self.in_batched)]
            ts = [SymbolicZero(_example_aval(t.aval, b)) if isinstance(t, SymbolicZero)
                  else trace.wrap(t, 0 if b else None)
                  for t, b in zip(tangents, self.in_batched)]
            cs = [trace.wrap(c, 0 if b else None) for c, b in zip(consts, self.consts_batched)]
            outs, t_outs = self.rule(ps, ts, cs)
        return ([_batched_output(trace, o, b, self.__name__)
                 for o, b in zip(outs, self.out_batched)],
                [(ad.Zero(t.aval.update(shape=(size,) + t.aval.shape)) if b else t)
                 if type(t) is ad.Zero else _batched_output(trace, t, b, self.__name__)
                 for t, b in zip(t_outs, self.out_batched)])


def _custom_jvp_call_batch(axis, args, dims, *, call_jaxpr, jvp_jaxpr_fun, num_consts,
                           **params):
    in_batched = [d is not None for d in dims]
    if not any(in_batched) and not batching.jaxpr_uses_axis(call_jaxpr, axis.name):
        outs = custom_jvp_call_p.bind(*args, call_jaxpr=call_jaxpr, jvp_jaxpr_fun=jvp_jaxpr_fun,
                                      num_consts=num_consts, **params)
        return outs, [None] * len(outs)
    args = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
    batched, out_batched = _call_out_batched(call_jaxpr, axis, in_batched)
    outs = custom_jvp_call_p.bind(
        *args, call_jaxpr=batched, num_consts=num_consts,
        jvp_jaxpr_fun=_BatchedJVPRule(jvp_jaxpr_fun, axis, in_batched[num_consts:],
                                      in_batched[:num_consts], out_batched), **params)
    return outs, [0 if b else None for b in out_batched]


class _BatchedVJPRule:
    """fwd and bwd over values carrying the batch at 0: the user's rules run per example
    under a batch trace. An unbatched input gets the sum of every example's cotangent."""

    def __init__(self, fwd, bwd, axis, in_batched, in_avals, out_batched):
        self._fwd, self._bwd, self.axis = fwd, bwd, axis
        self.in_batched, self.in_avals, self.out_batched = in_batched, in_avals, out_batched
        self.fwd = functools.partial(_BatchedVJPRule._run_fwd, self)
        self.fwd.__name__ = getattr(fwd, "__name__", "fwd")
        self.bwd = functools.partial(_BatchedVJPRule._run_bwd, self)
        self.bwd.__name__ = getattr(bwd, "__name__", "bwd")

    def _run_fwd(self, primals, perturbed):
        size = self.axis.size
        with batching.subtrace(self.axis) as trace:
            outs, residuals = self._fwd([trace.wrap(p, 0 if b else None)
                                         for p, b in zip(primals, self.in_batched)], perturbed)
        return ([_batched_output(trace, o, b, self.fwd.__name__)
                 for o, b in zip(outs, self.out_batched)],
                [_to_front(trace, r, size) for r in residuals])

    def _run_bwd(self, residuals, cts):
        with batching.subtrace(self.axis) as trace:
            cts_in = self._bwd([trace.wrap(r, 0) for r in residuals],
                               [ad.Zero(_example_aval(c.aval, b)) if type(c) is ad.Zero
                                else trace.wrap(c, 0 if b else None)
                                for c, b in zip(cts, self.out_batched)])
        out = []
        for ct, batched, aval in zip(cts_in, self.in_batched, self.in_avals):
            if type(ct) is ad.Zero:
                out.append(ad.Zero(ad.tangent_aval(aval)))
                continue
            val, dim = trace.to_batch_info(ct)
            if batched:
                out.append(batching.bdim_at_front(val, dim, self.axis.size))
            else:
                out.append(val if dim is None else reductions.reduce_sum(val, (dim,)))
        return out


def _custom_vjp_call_batch(axis, args, dims, *, call_jaxpr, fwd, bwd, num_consts, **params):
    in_batched = [d is not None for d in dims]
    if not any(in_batched) and not batching.jaxpr_uses_axis(call_jaxpr, axis.name):
        outs = custom_vjp_call_p.bind(*args, call_jaxpr=call_jaxpr, fwd=fwd, bwd=bwd,
                                      num_consts=num_consts, **params)
        return outs, [None] * len(outs)
    args = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
    batched, out_batched = _call_out_batched(call_jaxpr, axis, in_batched)
    rule = _BatchedVJPRule(fwd, bwd, axis, in_batched[num_consts:],
                           [get_aval(a) for a in args[num_consts:]], out_batched)
    outs = custom_vjp_call_p.bind(*args, call_jaxpr=batched, fwd=rule.fwd, bwd=rule.bwd,
                                  num_consts=num_consts, **params)
    return outs, [0 if b else None for b in out_batched]


def _custom_vjp_samples():
    x = b.random_values((3,), "float32")
    cv = custom_vjp(ew.sin)
    cv.defvjp(lambda x: (ew.sin(x), ew.cos(x)), lambda c, g: (ew.mul(g, c),))
    in_tree = tree_util.flatten((x,))[1]
    closed, _, out_tree = _trace_call(cv.fun, set(), [], [x], in_tree)
    rule = _VJPRule(cv, set(), [], in_tree, out_tree, closed.out_avals, [get_aval(x)])
    return [b.Sample([x], {"name": "sin", "call_jaxpr": closed, "fwd": rule.fwd,
                           "bwd": rule.bwd, "num_consts": 0, "symbolic_zeros": False})]



# --- the primitives (defined after their batch rules and samples, which they hold) ------

def _custom_call_jet(primals, series, *, call_jaxpr, **params):
    """jet takes a custom_jvp or custom_vjp function through its own body, never its
    custom rule (as JAX's)."""
    return jet.jaxpr_rule(primals, series, call_jaxpr)


custom_jvp_call_p = define_primitive(
    "custom_jvp_call", multiple_results=True, impl=_custom_jvp_call_impl, jet=_custom_call_jet,
    abstract_eval=_custom_jvp_call_abstract_eval, jvp=_custom_jvp_call_jvp,
    transpose=_custom_jvp_call_transpose, batch=_custom_jvp_call_batch,
    lower=_custom_call_lower, samples=_custom_jvp_samples, is_higher_order=True,
    batch_needs_axis=True, bind_params=_CustomJVPCallBindParams())
custom_vjp_call_p = define_primitive(
    "custom_vjp_call", multiple_results=True, impl=_custom_vjp_call_impl, jet=_custom_call_jet,
    abstract_eval=_custom_jvp_call_abstract_eval, jvp=_custom_vjp_call_jvp,
    transpose=NO_TRANSPOSE, batch=_custom_vjp_call_batch, lower=_custom_call_lower,
    samples=_custom_vjp_samples, is_higher_order=True, batch_needs_axis=True)
# custom_lin only exists to be transposed; applying it (batched or not) is forward mode.
custom_lin_p = define_primitive(
    "custom_lin", multiple_results=True, impl=_custom_lin_impl,
    abstract_eval=_custom_lin_abstract_eval, jvp=_custom_lin_jvp,
    transpose=_custom_lin_transpose, batch=lambda args, dims, **params: _custom_lin_impl(),
    lower=lambda ctx, *args, **params: _custom_lin_impl(), transposes_zero_cotangents=True,
    samples=no_samples("evaluating custom_lin is the documented forward-mode error"))


# --- closure_convert --------------------------------------------------------------------

def _maybe_perturbed(x):
    """JAX's heuristic for what closure_convert hoists: whether x may carry a nonzero
    tangent. Concrete values cannot; values being differentiated can; staged values can
    unless their tangent type is float0 (they may be differentiated later)."""
    if not isinstance(x, Tracer):
        return False
    if isinstance(x, ad.JVPTracer):   # (values with a zero tangent carry none)
        return True
    if isinstance(x, pe.DynamicJaxprTracer):
        return ad.tangent_aval(x.aval).dtype != dtypes.float0
    return any(_maybe_perturbed(v) for _, v in x._contents())


def closure_convert(fun, *example_args):
    """(converted_fun, consts): fun specialised to the types of example_args, with the
    values it closes over that may be perturbed (differentiated; see _maybe_perturbed)
    hoisted into `consts`, so converted_fun(*args, *consts) == fun(*args) and consts can
    cross a custom_vjp boundary as explicit (differentiable) arguments."""
    leaves, in_tree = tree_util.flatten(example_args)
    leaves = [_as_value(x) for x in leaves]
    found = {}

    def flat_fun(*xs):
        out = fun(*tree_util.tree_unflatten(in_tree, xs))
        out_leaves, found["out_tree"] = tree_util.flatten(out)
        return out_leaves

    jaxpr, consts = pe.trace_to_jaxpr(flat_fun, [get_aval(x) for x in leaves],
                                      pe.debug_info_of(fun))
    hoist = [_maybe_perturbed(c) for c in consts]
    kept_vars = [v for v, h in zip(jaxpr.constvars, hoist) if not h]
    kept = [c for c, h in zip(consts, hoist) if not h]
    hoisted_vars = [v for v, h in zip(jaxpr.constvars, hoist) if h]
    hoisted = [c for c, h in zip(consts, hoist) if h]
    converted_jaxpr = jx.Jaxpr(kept_vars, jaxpr.invars + hoisted_vars, jaxpr.outvars,
                               jaxpr.eqns, jaxpr.effects, jaxpr.debug_info)
    out_tree, n_args = found["out_tree"], len(leaves)

    def converted_fun(*args_and_consts):
        split = len(args_and_consts) - len(hoisted)
        args, extra = args_and_consts[:split], args_and_consts[split:]
        arg_leaves, arg_tree = tree_util.flatten(tuple(args))
        if arg_tree != in_tree:
            raise TypeError("The inputs to the closure produced by closure_convert must have "
                            "the same Pytree structure as the example arguments passed when "
                            f"closure_convert was called. Expected {in_tree}, but got "
                            f"{arg_tree}")
        outs = jx.eval_jaxpr(converted_jaxpr, kept, *arg_leaves[:n_args], *extra)
        return tree_util.tree_unflatten(out_tree, outs)

    converted_fun.__name__ = _name(fun)
    return converted_fun, hoisted


__all__ = ["custom_jvp", "custom_vjp", "closure_convert", "CustomVJPPrimal", "SymbolicZero",
           "CustomJVPException", "CustomVJPException"]
