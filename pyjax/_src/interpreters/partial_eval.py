"""Staging Python functions into jaxprs. One staging trace (DynamicJaxprTrace) builds the
jaxprs of make_jaxpr, jit and control-flow bodies; its tracers know where they came from
(an argument, or an equation on a source line) so errors can say so."""
from __future__ import annotations

import os
import sys

import numpy as np

from pyjax._src.config import auto_pcast, enable_checks
from pyjax._src.core import hijax
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import ShapedArray, get_aval, typeof
from pyjax._src.core.source_info import EMPTY_NAME_STACK, SourceInfo
from pyjax._src.core.trace import (Trace, Tracer, check_for_leaks, operand_error,
                                   primitive_effects, primitive_named, set_current_trace,
                                   set_name_stack,
                                   trace_context)
from pyjax._src.interpreters.lax_hooks import lax_hooks
from pyjax._src.shape_poly import is_symbolic_dim
from pyjax._src.util import WeakCache, partition_list


class DebugInfo:
    """What the user's function is called and where it lives, for error messages."""

    __slots__ = ("func_name", "location", "arg_names")

    def __init__(self, func_name, location, arg_names):
        self.func_name, self.location, self.arg_names = func_name, location, arg_names

    def describe(self):
        return f"{self.func_name} at {self.location}" if self.location else self.func_name


def debug_info_of(fun, arg_names=None):
    inner = getattr(fun, "__wrapped__", fun)
    name = getattr(inner, "__name__", None) or type(inner).__name__
    code = getattr(inner, "__code__", None)
    location = f"{code.co_filename}:{code.co_firstlineno}" if code else None
    return DebugInfo(name, location, arg_names)


_context = trace_context()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PACKAGE_PREFIX = _PACKAGE_DIR + os.sep
# Frames in these files are not the user's: pyjax's own, and any a library excludes.
_excluded_prefixes: tuple[str, ...] = (_PACKAGE_PREFIX,)


def register_exclusion(path: str) -> None:
    """Frames of files under `path` (a library wrapping jax) are skipped when staged
    equations record their source location (jax.extend.source_info_util)."""
    global _excluded_prefixes
    if path not in _excluded_prefixes:
        _excluded_prefixes = _excluded_prefixes + (path,)


def user_frame():
    """A SourceInfo: (file, line, function) of the innermost caller outside pyjax and the
    current name stack; None if no caller is outside pyjax. While eval_jaxpr
    re-traces an equation (under jvp, partial eval, ...), the equations it stages carry
    that equation's source instead, unless user code (a custom rule) runs in between."""
    override = _context.source_info
    marker = override[1] if override else None
    frame = sys._getframe(2)
    while frame is not None:
        if frame is marker:
            return override[0]
        filename = frame.f_code.co_filename
        if not filename.startswith(_excluded_prefixes):
            return SourceInfo((filename, frame.f_lineno, frame.f_code.co_name),
                              _context.name_stack)
        frame = frame.f_back
    return override[0] if override else None


class DynamicJaxprTracer(Tracer):
    __slots__ = ("aval", "_var", "origin")

    def __init__(self, trace, aval, var, origin):
        self._trace, self.aval, self._var, self.origin = trace, aval, var, origin

    def __repr__(self):   # as JAX's: JitTracer(float32[3]), JitTracer(~int32[]) if weak
        return f"JitTracer({self.aval})"

    def _origin_description(self):
        trace, origin = self._trace, self.origin
        head = (f"While tracing the function {trace.debug_info.describe()}, "
                if trace.debug_info else "While tracing, ")
        if isinstance(origin, int):   # JAX's words
            names = trace.debug_info.arg_names if trace.debug_info else None
            which = (f"the argument {names[origin]}" if names and origin < len(names)
                     and names[origin] else f"argument {origin} (flattened)")
            where = (f"The error occurred while tracing the function "
                     f"{trace.debug_info.describe()}. " if trace.debug_info else "")
            return (f"{where}This concrete value was not available in Python because it "
                    f"depends on the value of {which}.")
        if isinstance(origin, jx.JaxprEqn):
            where = origin.source_info
            line = (f"\nThe value was created on line {where[0]}:{where[1]} ({where[2]})."
                    if where else "")
            return (f"{head}this value became a tracer due to the operation:\n  "
                    f"{origin!r}{line}")
        return f"{head}this value is a traced intermediate."


class DynamicJaxprTrace(Trace):
    """Records every primitive applied to its tracers as an equation."""

    def __init__(self, debug_info=None, parent=None, for_ad=False):
        super().__init__(parent)
        self.debug_info = debug_info
        self.for_ad = for_ad       # Array constants stay constvars (see jx.literalable)
        self.eqns = []
        self.constvars = {}        # id(const) -> (var, const)
        self.effects = set()
        # With capture_refs: the jax.Refs of enclosing scopes this trace touched, each an
        # extra input (its value on entry) and, if written, an extra output; and the
        # mutable hijax values, each input and output through its HiSlots there.
        self.ref_captures = None
        self.hi_captures = []

    def capture_ref(self, ref, outer_value):
        """The RefCapture of `ref` in this trace, made on its first use: the ref's value
        `outer_value` (of an enclosing scope) enters as a new input."""
        capture = self.ref_captures.get(ref)
        if capture is None:
            aval = get_aval(outer_value)
            tracer = DynamicJaxprTracer(self, aval, jx.Var(aval), None)
            capture = self.ref_captures[ref] = RefCapture(ref, outer_value, tracer)
        return capture

    def new_arg(self, aval, index):
        return DynamicJaxprTracer(self, aval, jx.Var(aval), index)

    def lift(self, x):
        if is_symbolic_dim(x):   # a dimension size used as a value (JAX's dimension_as_value)
            with set_current_trace(self):
                return self.own_or_lift(lax_hooks.dim_as_value(x))
        if jx.literalable(x, self.for_ad):
            lit = jx.literal(x)
            return DynamicJaxprTracer(self, lit.aval, lit, None)
        entry = self.constvars.get(id(x))
        if entry is None:
            # (as JAX's: a jax.ShapeDtypeStruct staged here is a constant of its type)
            aval = typeof(x)
            entry = self.constvars[id(x)] = (jx.Var(aval), x)
        return DynamicJaxprTracer(self, entry[0].aval, entry[0], None)

    def process_primitive(self, prim, args, params):
        if prim.stage is not None:
            outs = prim.stage(self, args, params)
            if outs is not NotImplemented:
                return outs
        try:
            tracers = [self.own_or_lift(x) for x in args]
        except TypeError as err:
            error = operand_error(prim, args)
            if error is None:
                raise
            raise error from err
        vma = None
        if not (prim.is_collective or prim.is_higher_order):   # they type vma themselves
            for t in tracers:
                # (cheap test: no manual axis types at all; tokens and refs have none)
                if getattr(t.aval, "_mat", None) is not None:
                    tracers, vma = self._match_varying(prim, tracers)
                    break
        out_aval = prim.abstract_eval(*[t.aval for t in tracers], **params)
        out_avals = out_aval if prim.multiple_results else [out_aval]
        if vma is not None:
            mat = jx.result_mat(prim, [t.aval for t in tracers], vma)
            out_avals = [a.update(mat=mat) for a in out_avals]
        outvars = [jx.Var(a) for a in out_avals]
        effects = primitive_effects(prim, params)
        eqn = jx.JaxprEqn([t._var for t in tracers], outvars, prim, params, effects,
                          user_frame(), _context.eqn_ctx)
        self.eqns.append(eqn)
        if effects:
            self.effects.update(effects)
        outs = [DynamicJaxprTracer(self, v.aval, v, eqn) for v in outvars]
        return outs if prim.multiple_results else outs[0]

    def _match_varying(self, prim, tracers):
        """Inside shard_map (check_vma): a primitive's result varies along the union of
        its operands' manual axes; operands varying along fewer are cast (an implicit
        pvary, as JAX inserts one) or, with jax_auto_pcast off, refused (JAX's message)."""
        vmas = [getattr(t.aval, "vma", frozenset()) for t in tracers]
        union = frozenset().union(*vmas)
        if all(v == union for v in vmas):
            return tracers, union
        if not auto_pcast.value:
            raise ValueError(
                f"Primitive {prim.name} requires varying manual axes to match, but got "
                f"{vmas}. Please open an issue at https://github.com/jax-ml/jax/issues and "
                "as a temporary workaround pass the check_vma=False argument to "
                "`jax.shard_map`")
        with set_current_trace(self):
            return [t if v == union else _vary(t, union - v)
                    for t, v in zip(tracers, vmas)], union

    def to_jaxpr(self, in_tracers, out_tracers):
        constvars, consts = [], []
        for var, const in self.constvars.values():
            constvars.append(var)
            consts.append(const)
        invars = [t._var for t in in_tracers]
        outvars = [t._var for t in out_tracers]
        jaxpr = jx.Jaxpr(constvars, invars, outvars, self.eqns, frozenset(self.effects),
                         self.debug_info)
        return jaxpr, consts


def _vary(x, names):
    """x cast to vary along the manual axes `names` too (as JAX inserts one): from
    invarying by pvary, from reduced (equal everywhere, cotangents partial sums) by
    reduced_vary_cast."""
    aval = get_aval(x)
    for name, wanted in (("reduced_vary_cast", names & aval.mat.reduced),
                         ("pvary", names - aval.mat.reduced)):
        if wanted:
            x = primitive_named(name).bind(x, axes=tuple(sorted(wanted, key=str)))
    return x


# Primitives whose result is linear in each operand taken alone: a partial sum times
# a whole value is a partial sum of the product.
def vary_like(x, aval):
    """x typed to vary along the manual axes `aval` varies along too (where a rule
    re-traces a body and makes new values, e.g. a loop's output buffers)."""
    missing = aval.vma - get_aval(x).vma
    return _vary(x, missing) if missing else x


def returned_ref_error(debug_info, api_name, ref, arg_name=None):
    """JAX's error for a function traced for `api_name` (jit, scan, cond) that returned
    the jax.Ref `ref`: where the ref came from, an argument or a line."""
    where = debug_info.describe() if debug_info else "<unknown>"
    origin = getattr(ref, "_origin", None)
    if arg_name is not None:
        came = f"\n\nThe returned mutable array was passed in as the argument {arg_name}."
    elif origin is not None:
        came = (f"\n\nThe returned mutable array was created on line {origin[0]}:"
                f"{origin[1]} ({origin[2]}).")
    else:
        came = ""
    return ValueError(
        f"function {where} traced for {api_name} returned a mutable array reference of "
        f"type {ref.aval.str_short(True)}, but mutable array references cannot be "
        f"returned.{came}")


class RefCapture:
    """A jax.Ref of an enclosing scope used inside a trace: its value there on entry
    (`outer`), the trace's input standing for it, and the value the trace leaves in it."""

    __slots__ = ("ref", "outer", "tracer", "value", "written")

    def __init__(self, ref, outer, tracer):
        self.ref, self.outer, self.tracer = ref, outer, tracer
        self.value, self.written = tracer, False


def trace_to_jaxpr(flat_fun, in_avals, debug_info=None, capture_refs=False):
    """Traces flat_fun(*tracers) -> sequence of outputs into (jaxpr, consts). consts may
    hold values of enclosing traces; callers pass them back in as arguments.
    With `capture_refs`, returns (jaxpr, consts, captures) instead: the jax.Refs of
    enclosing scopes the function read or wrote (RefCaptures, in first-use order) are
    extra trailing inputs, and the final values of those it wrote extra trailing
    outputs."""
    trace = DynamicJaxprTrace(debug_info)
    if capture_refs:
        trace.ref_captures, trace.hi_owned = {}, {}
    in_tracers = [trace.new_arg(a, i) for i, a in enumerate(in_avals)]
    try:   # a jaxpr's equations name only the scopes opened inside it, as in JAX
        with set_current_trace(trace), set_name_stack(EMPTY_NAME_STACK):
            outs = flat_fun(*in_tracers)
            if capture_refs:
                hijax.finish_captures(trace)
            captures = list(trace.ref_captures.values()) if capture_refs else []
            outs = list(outs) + [c.value for c in captures if c.written]
            out_tracers = [trace.own_or_lift(x) for x in outs]
    finally:
        trace.end()
        trace.hi_owned = None
    in_tracers += [c.tracer for c in captures]
    result = trace.to_jaxpr(in_tracers, out_tracers)
    for c in captures:
        c.tracer = c.value = None   # the trace has ended: keep no tracer of it
    del in_tracers, out_tracers, outs
    check_for_leaks(trace)
    if enable_checks.value:
        jx.check_jaxpr(result[0])
    return result + (captures,) if capture_refs else result


def refs_as_consts(jaxpr, consts, captures):
    """A jaxpr traced with capture_refs for inspection (make_jaxpr): the captured refs'
    values become constants, and the values written into them are dropped."""
    n_in = len(jaxpr.invars) - len(captures)
    n_out = len(jaxpr.outvars) - sum(c.written for c in captures)
    new = jx.Jaxpr(list(jaxpr.constvars) + jaxpr.invars[n_in:], jaxpr.invars[:n_in],
                   jaxpr.outvars[:n_out], jaxpr.eqns, jaxpr.effects, jaxpr.debug_info)
    return new, list(consts) + [c.outer for c in captures]


def trace_to_closed_jaxpr(flat_fun, in_avals, debug_info=None, capture_refs=False):
    """Like trace_to_jaxpr, but hoists consts that are tracers of enclosing traces into
    leading invars. Returns (ClosedJaxpr with only concrete consts, hoisted values), and
    with `capture_refs` the RefCaptures as a third item."""
    traced = trace_to_jaxpr(flat_fun, in_avals, debug_info, capture_refs)
    closed = close_over_concrete(*traced[:2])
    return closed + traced[2:]


def _split_consts(jaxpr, consts):
    """(constvars, values) of the concrete consts, then of those that are tracers (of an
    enclosing trace, or of a known jaxpr being split off)."""
    is_tracer = [isinstance(c, Tracer) for c in consts]
    concrete_vars, tracer_vars = partition_list(is_tracer, jaxpr.constvars)
    concrete, tracers = partition_list(is_tracer, consts)
    return concrete_vars, concrete, tracer_vars, tracers


def close_over_concrete(jaxpr, consts):
    if not any(isinstance(c, Tracer) for c in consts):
        return jx.ClosedJaxpr(jaxpr, consts), []
    keep_vars, keep, hoist_vars, hoist = _split_consts(jaxpr, consts)
    new = jx.Jaxpr(keep_vars, hoist_vars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns,
                   jaxpr.effects, jaxpr.debug_info)
    return jx.ClosedJaxpr(new, keep), hoist


def avals_of(values):
    return [get_aval(x) for x in values]


def zeros_like_aval(aval):
    return np.zeros(aval.shape, aval.dtype)


__all__ = ["DynamicJaxprTrace", "DynamicJaxprTracer", "trace_to_jaxpr",
           "trace_to_closed_jaxpr", "DebugInfo", "debug_info_of", "ShapedArray"]


# --- known/unknown splitting (partial evaluation) -----------------------------------------
#
# Used by linearize (primals known, tangents unknown) and by higher-order primitives under
# differentiation. Signatures other interpreters and primitive rooms rely on:
#
#   PartialEvalTrace(parent=None): an online partial evaluator. Its tracers are only the
#     *unknown* values (PartialEvalTracer, staged into `trace.staging`, a DynamicJaxprTrace);
#     a *known* value is simply a value of the parent trace (concrete at top level, so
#     Python control flow on primals works under grad). An operation whose inputs are all
#     known binds on the parent; one with an unknown input is staged, its known inputs
#     becoming residuals (constvars of the staged jaxpr). A primitive may customise the
#     split with `prim.partial_eval(trace, args, unknowns, params) -> outs` (outs: known
#     parent values or unknown tracers, a list when multiple_results).
#   trace.new_arg(aval) -> unknown tracer;  trace.is_unknown(x);  trace.instantiate(x)
#     -> x as an unknown tracer (known values are staged as residual constants);
#   trace.stage(prim, args, params) -> outs: stage one equation as unknown;
#   trace.to_jaxpr(in_tracers, out_tracers) -> (jaxpr, residuals): the unknown part, with
#     residuals for its constvars (values of the parent trace or concrete constants).
#
#   partial_eval_jaxpr_nounits(closed, unknowns, instantiate)
#     -> (known: ClosedJaxpr  [known ins] -> [known outs] + [residuals],
#         unknown: ClosedJaxpr [residuals] + [unknown ins] -> [unknown outs],
#         out_unknowns: list[bool], num_res: int)
#     `instantiate` (bool or list) forces outputs to be unknown. Results are cached per
#     (jaxpr, unknowns, instantiate).
#   forward_input_residuals(known, num_res) -> (known', sources): drops residual outputs
#     that are just known inputs (callers pass those inputs on directly).


class PartialEvalTracer(Tracer):
    """An unknown value: stands for `staged`, a tracer of the trace's staging jaxpr."""

    __slots__ = ("aval", "staged")

    def __init__(self, trace, staged):
        self._trace, self.staged, self.aval = trace, staged, staged.aval


class PartialEvalTrace(Trace):
    """Binds known work on the parent trace now; stages unknown work into a jaxpr."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.staging = DynamicJaxprTrace(parent=self.parent, for_ad=True)
        self._num_args = 0

    def new_arg(self, aval):
        self._num_args += 1
        return PartialEvalTracer(self, self.staging.new_arg(aval, self._num_args - 1))

    def is_unknown(self, x):
        return type(x) is PartialEvalTracer and x._trace is self

    def lift(self, x):
        return x

    def instantiate(self, x):
        if self.is_unknown(x):
            return x
        return PartialEvalTracer(self, self.staging.own_or_lift(x))

    def process_primitive(self, prim, args, params):
        unknowns = [self.is_unknown(x) for x in args]
        for x, unknown in zip(args, unknowns):
            if not unknown and isinstance(x, Tracer):
                self.own_or_lift(x)   # raises on a tracer that escaped its trace
        if not any(unknowns):
            with set_current_trace(self.parent):
                return prim.bind(*args, **params)
        if prim.partial_eval is not None:
            return prim.partial_eval(self, list(args), unknowns, params)
        return self.stage(prim, args, params)

    def stage(self, prim, args, params):
        staged_args = [x.staged if self.is_unknown(x) else x for x in args]
        outs = self.staging.process_primitive(prim, staged_args, params)
        if prim.multiple_results:
            return [PartialEvalTracer(self, o) for o in outs]
        return PartialEvalTracer(self, outs)

    def to_jaxpr(self, in_tracers, out_tracers):
        return self.staging.to_jaxpr([t.staged for t in in_tracers],
                                     [self.instantiate(t).staged for t in out_tracers])

    def end(self):
        super().end()
        self.staging.end()


def dce_closed_jaxpr(jaxpr, consts, used_outputs):
    """dce_jaxpr that also drops the consts of the constvars it removes."""
    const_of = dict(zip(jaxpr.constvars, consts))
    new, used_inputs = jx.dce_jaxpr(jaxpr, used_outputs)
    return new, [const_of[v] for v in new.constvars], used_inputs


_partial_eval_cache = WeakCache()


def partial_eval_jaxpr_nounits(closed, unknowns, instantiate):
    """Splits `closed` into a known and an unknown jaxpr (see the section comment)."""
    n_out = len(closed.jaxpr.outvars)
    instantiate = ([bool(instantiate)] * n_out if isinstance(instantiate, bool)
                   else [bool(i) for i in instantiate])
    unknowns = [bool(u) for u in unknowns]
    key = (tuple(unknowns), tuple(instantiate))
    return _partial_eval_cache.get(
        closed, key, lambda: _partial_eval_jaxpr(closed, unknowns, instantiate))


def _partial_eval_jaxpr(closed, unknowns, instantiate):
    in_avals = closed.in_avals
    known_avals = [a for a, uk in zip(in_avals, unknowns) if not uk]
    staged = {}

    def known_fun(*known_ins):
        trace = PartialEvalTrace()
        unknown_ins = [trace.new_arg(a) for a, uk in zip(in_avals, unknowns) if uk]
        known_it, unknown_it = iter(known_ins), iter(unknown_ins)
        ins = [next(unknown_it) if uk else next(known_it) for uk in unknowns]
        try:
            with set_current_trace(trace):
                outs = jx.eval_jaxpr(closed.jaxpr, closed.consts, *ins)
            out_unknowns = [trace.is_unknown(o) or inst for o, inst in zip(outs, instantiate)]
            jaxpr, consts = trace.to_jaxpr(
                unknown_ins, [o for o, uk in zip(outs, out_unknowns) if uk])
        finally:
            trace.end()
        # Consts that are tracers of the known jaxpr are residuals; others stay consts.
        const_vars, const_vals, res_vars, residuals = _split_consts(jaxpr, consts)
        unknown = jx.Jaxpr(const_vars, res_vars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns)
        staged.update(unknown=jx.ClosedJaxpr(unknown, const_vals), out_unknowns=out_unknowns,
                      num_res=len(residuals))
        return [o for o, uk in zip(outs, out_unknowns) if not uk] + residuals

    known, hoisted = trace_to_closed_jaxpr(known_fun, known_avals)
    assert not hoisted, "a closed jaxpr cannot close over tracers"
    return known, staged["unknown"], staged["out_unknowns"], staged["num_res"]


_forwarding_cache = WeakCache()


def call_partial_eval(primitive, trace, args, unknowns, params,
                      params_for=lambda params, jaxpr, num_args: dict(params, jaxpr=jaxpr)):
    """The partial-eval rule of a call primitive whose closed `jaxpr` param runs its
    operands: the known part runs now as a call (returning residuals); the rest is staged
    as a call of the residuals and the unknown operands. params_for(params, jaxpr, number
    of operands) gives each call's params."""
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr_nounits(
        params["jaxpr"], unknowns, instantiate=False)
    known, sources = forward_input_residuals(known, num_res)
    known_args = [a for a, uk in zip(args, unknowns) if not uk]
    known_outs = []
    if known.out_avals:
        with set_current_trace(trace.parent):
            known_outs = primitive.bind(*known_args,
                                        **params_for(params, known, len(known_args)))
    residuals = [known_args[i] if kind == "in" else known_outs[i] for kind, i in sources]
    unknown_args = residuals + [a for a, uk in zip(args, unknowns) if uk]
    unknown_outs = iter(trace.stage(primitive, unknown_args,
                                    params_for(params, unknown, len(unknown_args))))
    known_vals = iter(known_outs)
    return [next(unknown_outs) if uk else next(known_vals) for uk in out_unknowns]


def forward_input_residuals(known, num_res):
    """(known', sources) for a known jaxpr from partial_eval_jaxpr_nounits: known' no
    longer outputs the residuals that are merely its own inputs. sources[i] says where
    residual i comes from: ("in", j) is known input j, ("out", k) is output k of known'."""
    pruned, sources = _forwarding_cache.get(known, num_res,
                                            lambda: _forward_input_residuals(known, num_res))
    return (known if pruned is None else pruned), sources


def _forward_input_residuals(known, num_res):
    jaxpr = known.jaxpr
    n_out = len(jaxpr.outvars) - num_res
    forwarded = jx.forwarded_inputs(jaxpr)[n_out:]
    kept, sources = list(jaxpr.outvars[:n_out]), []
    for v, i in zip(jaxpr.outvars[n_out:], forwarded):
        if i is not None:
            sources.append(("in", i))
        else:
            sources.append(("out", len(kept)))
            kept.append(v)
    if len(kept) == len(jaxpr.outvars):
        return None, sources   # unchanged: the cache must not hold `known` itself
    return jx.ClosedJaxpr(jx.Jaxpr(jaxpr.constvars, jaxpr.invars, kept, jaxpr.eqns,
                                   jaxpr.effects, jaxpr.debug_info), known.consts), sources

__all__ += ["PartialEvalTrace", "PartialEvalTracer", "partial_eval_jaxpr_nounits",
            "dce_closed_jaxpr", "forward_input_residuals"]
