"""Automatic differentiation: the JVP trace with symbolic zero tangents, linearize (the JVP
run under partial evaluation), transposition of linear jaxprs, and the helpers that build
JVP rules in the primitive rooms. Imports core and interpreters.partial_eval only.

Entry points used by the API and by higher-order primitive rules:
  JVPTrace(parent=None), JVPTracer(trace, primal, tangent); trace.to_primal_tangent(x).
  jvp_flat(flat_fun, primals, tangents, has_aux=False) -> (primals_out, tangents_out)
    (tangents may be Zero; plus the aux outputs when has_aux).
  linearize_flat(flat_fun, primals, has_aux=False) -> (primals_out, Linearized): a linear
    jaxpr over residuals; `.jvp(tangents)` evaluates it, `.vjp(cts)` transposes it.
  backward_pass(jaxpr, consts, args, cts_out) -> cts_in: args holds UndefinedPrimal(aval) for
    the linear inputs and values for the others; non-linear equations are evaluated forward,
    cotangents accumulate with add_any, symbolic zeros are skipped. cts_out entries may be
    Zero; cts_in holds a value or Zero for each UndefinedPrimal, None for the others.
  jvp_jaxpr(closed, nonzeros, instantiate) -> (ClosedJaxpr taking [primals..., nonzero
    tangents...] and returning [primals_out..., nonzero tangents_out...], out_nonzeros).
    Outputs with float0 tangents (integer/bool) are never instantiated.
  transpose_jaxpr(closed, linear) -> ClosedJaxpr taking [non-linear ins..., cts of every
    output...] and returning [cts of the linear ins...] (zeros instantiated).
The three jaxpr-level helpers cache their results per (jaxpr, flags)."""
from __future__ import annotations


import numpy as np

from pyjax._src import dtypes, errors
from pyjax._src.util import WeakCache
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import cotangent_sharding, get_aval, tangent_aval
from pyjax._src.core.source_info import BackwardSource, NameStack, Transform
from pyjax._src.core.trace import (RuleFactory, Trace, Tracer, current_name_stack,
                                   set_current_trace, transform_name_stack)
from pyjax._src.interpreters import jet
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.interpreters.lax_hooks import lax_hooks


class Zero:
    """A tangent known to be zero, kept symbolic so no zeros are materialised."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    @staticmethod
    def from_primal_value(x):
        aval = get_aval(x)   # a hijax type says its tangent type
        return Zero(aval.to_tangent_aval() if aval.is_high else tangent_aval(aval))

    def __repr__(self):
        return f"Zero({self.aval.str_short(True)})"


def cotangent_aval(aval):
    """The type of a cotangent of a value of type `aval`: its tangent type, with the
    mesh axes it is reduced and unreduced over swapped."""
    t = tangent_aval(aval)
    if t is aval and aval._sharding is not None:
        t = aval.update(sharding=cotangent_sharding(aval._sharding))
    mat = getattr(t, "_mat", None)   # (likewise inside shard_map: its manual axis type)
    if mat is not None and (mat.unreduced or mat.reduced):
        t = t.update(mat=mat.update(unreduced=mat.reduced, reduced=mat.unreduced))
    return t


class UndefinedPrimal:
    """A linear input whose value transposition is solving for."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short(True)})"


def is_undefined_primal(x):
    return type(x) is UndefinedPrimal


def instantiate_zeros(t):
    if type(t) is Zero:
        if t.aval.dtype == dtypes.float0:
            return np.zeros(t.aval.shape, dtypes.float0)
        return lax_hooks.zeros_like_aval(t.aval)
    return t


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return lax_hooks.add_tangents(a, b)


def defjvp(*per_operand):
    """A JVP rule from one function per operand, each `f(g, *primals, **params)` giving
    that operand's contribution to the output tangent (None: not differentiable there)."""

    def rule(prim):
        def jvp(primals, tangents, **params):
            out = prim.bind(*primals, **params)
            total = Zero(tangent_aval(get_aval(out)))
            shape = total.aval.shape
            for f, t in zip(per_operand, tangents):
                if f is not None and type(t) is not Zero:
                    contribution = f(t, *primals, **params)
                    if get_aval(contribution).shape != shape:   # a broadcast operand
                        contribution = lax_hooks.broadcast_to(contribution, shape)
                    total = add_tangents(total, contribution)
            return out, total
        return jvp
    return RuleFactory(rule)


def defjvp_with_output(f):
    """A JVP rule `f(g, out, *primals, **params)` for unary primitives that reuse their
    output (exp, tanh, sqrt, logistic)."""

    def rule(prim):
        def jvp(primals, tangents, **params):
            out = prim.bind(*primals, **params)
            (t,) = tangents
            if type(t) is Zero:
                return out, Zero(tangent_aval(get_aval(out)))
            return out, f(t, out, *primals, **params)
        return jvp
    return RuleFactory(rule)


def _linear_jvp(prim):
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            if prim.multiple_results:
                return out, [Zero.from_primal_value(o) for o in out]
            return out, Zero.from_primal_value(out)
        return out, prim.bind(*map(instantiate_zeros, tangents), **params)
    return jvp


def _zero_jvp(prim):
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        outs = out if prim.multiple_results else [out]
        zeros = [Zero(tangent_aval(get_aval(o))) for o in outs]
        return out, (zeros if prim.multiple_results else zeros[0])
    return jvp


# The JVP of a primitive linear in all its operands: the primitive on the tangents (it
# declares the primitive linear: the completeness test requires a transpose for these).
# Its jet (Taylor series) is the primitive on each coefficient of the series.
linear_jvp = RuleFactory(_linear_jvp, declares={"is_linear": True, "jet": jet.linear_rule})
# The JVP of a piecewise-constant primitive (floor, sign, comparisons): zero, as is its jet.
zero_jvp = RuleFactory(_zero_jvp, declares={"jet": jet.zero_rule})


# --- the JVP trace ----------------------------------------------------------------------

class JVPTracer(Tracer):
    """A primal value (of the parent trace) carrying its tangent (never a symbolic Zero:
    values whose tangent is zero are left as plain primals)."""

    __slots__ = ("aval", "primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace, self.primal, self.tangent = trace, primal, tangent
        self.aval = get_aval(primal)

    def to_concrete_value(self):
        primal = self.primal
        if isinstance(primal, Tracer):
            return primal.to_concrete_value()
        return np.asarray(primal, dtype=self.aval.dtype)

    def __array__(self, dtype=None, copy=None):
        # As every JAX tracer, even with a known primal: NumPy would drop the tangent
        # (np.exp(x) under grad would have derivative 0).
        raise errors.TracerArrayConversionError(self)

    def _origin_description(self):
        describe = getattr(self.primal, "_origin_description", None)
        return describe() if describe else ""

    def __repr__(self):   # as JAX's: under grad/vjp/linearize the tangent is staged
        if isinstance(self._trace.parent, pe.PartialEvalTrace):
            return (f"GradTracer(primal={self.primal}, "
                    f"typeof(tangent)={get_aval(self.tangent).str_short(True)})")
        return f"JVPTracer(primal={self.primal}, tangent={self.tangent})"

    def _contents(self):
        return [("primal", self.primal), ("tangent", self.tangent)]


class JVPTrace(Trace):
    """Forward mode: each primitive runs its JVP rule on (primals, tangents)."""

    requires_low = False   # a hijax primitive applies its jvp rule here

    def lift(self, x):
        return JVPTracer(self, x, Zero.from_primal_value(x))

    def to_primal_tangent(self, x):
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer):
            self.own_or_lift(x)   # raises on a tracer that escaped its trace
        return x, Zero.from_primal_value(x)

    def primal_of(self, x):
        """x without its tangent (auxiliary outputs: anything passes through)."""
        return x.primal if type(x) is JVPTracer and x._trace is self else x

    def pack(self, primal, tangent):
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)

    def process_primitive(self, prim, args, params):
        primals, tangents = [], []
        for x in args:
            p, t = self.to_primal_tangent(x)
            primals.append(p)
            tangents.append(t)
        with set_current_trace(self.parent):
            if all(type(t) is Zero for t in tangents):
                return prim.bind(*primals, **params)
            out, tangent_out = prim.rule("jvp")(primals, tangents, **params)
        if prim.multiple_results:
            return [self.pack(o, t) for o, t in zip(out, tangent_out)]
        return self.pack(out, tangent_out)


def _run_jvp(trace, flat_fun, ins, has_aux):
    """flat_fun(*ins) under the JVP trace: a (primal, tangent) pair per output, and the
    aux primals when has_aux (flat_fun then returns (outs, aux_leaves))."""
    with set_current_trace(trace), transform_name_stack("jvp"):
        outs = flat_fun(*ins)
    outs, aux = outs if has_aux else (outs, ())
    return [trace.to_primal_tangent(o) for o in outs], [trace.primal_of(a) for a in aux]


def jvp_flat(flat_fun, primals, tangents, has_aux=False):
    """Runs flat_fun(*primals) -> list under a new JVP trace. Returns (primals_out,
    tangents_out) (tangents may be Zero), plus the aux primals when has_aux (flat_fun then
    returns (outs, aux_leaves))."""
    trace = JVPTrace()
    ins = [trace.pack(p, t) for p, t in zip(primals, tangents)]
    try:
        pairs, aux = _run_jvp(trace, flat_fun, ins, has_aux)
    finally:
        trace.end()
    primals_out, tangents_out = [p for p, _ in pairs], [t for _, t in pairs]
    return (primals_out, tangents_out, aux) if has_aux else (primals_out, tangents_out)


# --- linearize --------------------------------------------------------------------------

class Linearized:
    """A linear map of tangents: `jaxpr` over residual `consts`. Only inputs and outputs
    flagged nonzero are jaxpr invars/outvars; the others are symbolically zero."""

    def __init__(self, jaxpr, consts, in_avals, out_avals, in_nonzeros, out_nonzeros):
        self.jaxpr, self.consts = jaxpr, consts
        self.in_avals, self.out_avals = in_avals, out_avals
        self.in_nonzeros, self.out_nonzeros = in_nonzeros, out_nonzeros

    def jvp(self, tangents):
        args = [instantiate_zeros(t) for t, nz in zip(tangents, self.in_nonzeros) if nz]
        outs = iter(jx.eval_jaxpr(self.jaxpr, self.consts, *args))
        return [next(outs) if nz else Zero(a)
                for a, nz in zip(self.out_avals, self.out_nonzeros)]

    def vjp(self, cts):
        cts = [ct for ct, nz in zip(cts, self.out_nonzeros) if nz]
        args = [UndefinedPrimal(v.aval) for v in self.jaxpr.invars]
        cts_in = iter(backward_pass(self.jaxpr, self.consts, args, cts))
        return [next(cts_in) if nz else Zero(a)
                for a, nz in zip(self.in_avals, self.in_nonzeros)]


def linearize_flat(flat_fun, primals, has_aux=False):
    """The JVP of flat_fun at primals, run with primals known and tangents unknown under
    partial evaluation: primal work happens now (on the current trace), tangent work is
    staged into a linear jaxpr. Returns (primals_out, Linearized) (+ aux primals)."""
    pe_trace = pe.PartialEvalTrace()
    jvp_trace = JVPTrace(parent=pe_trace)
    in_avals = [tangent_aval(get_aval(p)) for p in primals]
    in_nonzeros = [a.dtype != dtypes.float0 for a in in_avals]
    tangent_ins = [pe_trace.new_arg(a) for a, nz in zip(in_avals, in_nonzeros) if nz]
    it = iter(tangent_ins)
    ins = [JVPTracer(jvp_trace, p, next(it)) if nz else p
           for p, nz in zip(primals, in_nonzeros)]
    try:
        pairs, aux = _run_jvp(jvp_trace, flat_fun, ins, has_aux)
        jvp_trace.end()
        for p in [p for p, _ in pairs] + aux:
            if pe_trace.is_unknown(p):
                raise ValueError(
                    "Linearization failed to produce known values for all output primals. "
                    "This is typically caused by attempting to differentiate a function "
                    "uses an operation that does not support reverse-mode autodiff.")
        out_nonzeros = [type(t) is not Zero for _, t in pairs]
        jaxpr, consts = pe_trace.to_jaxpr(tangent_ins, [t for _, t in pairs
                                                        if type(t) is not Zero])
    finally:
        jvp_trace.end()
        pe_trace.end()
    jaxpr, consts, _ = pe.dce_closed_jaxpr(jaxpr, consts, None)
    out_avals = [tangent_aval(get_aval(p)) for p, _ in pairs]
    linear = Linearized(jaxpr, consts, in_avals, out_avals, in_nonzeros, out_nonzeros)
    primals_out = [p for p, _ in pairs]
    return (primals_out, linear, aux) if has_aux else (primals_out, linear)


# --- transposition ----------------------------------------------------------------------

def _transposed_name_stack(forward):
    """The name stack of an equation's transpose, as JAX's: the current one, then
    'transpose' wrapping what the forward equation's stack adds to it."""
    current = current_name_stack()
    if forward[:len(current)] == current:
        forward = forward[len(current):]
    return NameStack((*current, Transform("transpose"), *forward))


def backward_pass(jaxpr, consts, args, cts_out, transform_stack=True):
    """Transposes `jaxpr` with respect to its UndefinedPrimal args (see module docstring).
    What each equation stages or runs carries its source line: the forward equation's,
    as a BackwardSource that also names the select_n (jnp.where) a cotangent came through
    (jax_debug_nans reports the where-trap with it). With transform_stack, their name
    stacks say 'transpose' (a jaxpr transposed into another keeps its own, as in JAX)."""
    env = {}
    linear = set()

    def read(v):
        return v.value() if type(v) is jx.Literal else env[v]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        if type(a) is UndefinedPrimal:
            linear.add(v)
        else:
            env[v] = a
    with jx.SourceReplay() as replay:
        linear_eqns = []
        for eqn in jaxpr.eqns:
            if any(v in linear for v in eqn.invars):
                linear_eqns.append(eqn)
                linear.update(eqn.outvars)
                continue
            replay.at(eqn)
            outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
            for v, x in zip(eqn.outvars, outs if eqn.primitive.multiple_results else (outs,)):
                env[v] = x

        ct_env = {}
        masked = {}   # var -> source_info of the select_n its cotangent went through

        def write_ct(v, ct):
            if ct is None or type(ct) is Zero or v not in linear:
                return
            ct_env[v] = add_tangents(ct_env[v], ct) if v in ct_env else ct

        for v, ct in zip(jaxpr.outvars, cts_out):
            write_ct(v, ct)
        for eqn in reversed(linear_eqns):
            cts = [ct_env.pop(v, None) for v in eqn.outvars]
            if all(ct is None for ct in cts) and not eqn.primitive.transposes_zero_cotangents:
                continue
            invals = [UndefinedPrimal(v.aval) if v in linear else read(v)
                      for v in eqn.invars]
            if eqn.primitive.multiple_results:
                ct = [Zero(v.aval) if c is None else c for c, v in zip(cts, eqn.outvars)]
            else:
                ct = cts[0]
            mask = next((masked[v] for v in eqn.outvars if v in masked), None)
            # the backward pass of an op keeps its metadata, its source marked as such
            if eqn.source_info:
                stack = eqn.source_info.name_stack
                replay.at(eqn, BackwardSource(
                    eqn.source_info, _transposed_name_stack(stack) if transform_stack
                    else stack, mask))
            else:
                replay.at(eqn)
            cts_in = eqn.primitive.rule("transpose")(ct, *invals, **eqn.params)
            if eqn.primitive.name == _SELECT:   # each case's cotangent is zero elsewhere
                mask = eqn.source_info
            for v, c in zip(eqn.invars, cts_in):
                write_ct(v, c)
                if mask is not None and v in linear:
                    masked.setdefault(v, mask)
    return [ct_env.get(v, Zero(v.aval)) if type(a) is UndefinedPrimal else None
            for v, a in zip(jaxpr.invars, args)]


_SELECT = "select_n"   # (lax.select_n_p; lax imports this module)


# --- jaxpr-level helpers for higher-order primitives ------------------------------------

def _flags(value, n):
    return [bool(value)] * n if isinstance(value, bool) else [bool(v) for v in value]


_jvp_jaxpr_cache = WeakCache()


def jvp_jaxpr(closed, nonzeros, instantiate):
    """The JVP of a closed jaxpr as a closed jaxpr (see module docstring)."""
    nonzeros = [bool(nz) for nz in nonzeros]
    instantiate = _flags(instantiate, len(closed.jaxpr.outvars))
    return _jvp_jaxpr_cache.get(closed, (tuple(nonzeros), tuple(instantiate)),
                   lambda: _jvp_jaxpr(closed, nonzeros, instantiate))


def _jvp_jaxpr(closed, nonzeros, instantiate):
    in_avals = closed.in_avals
    n = len(in_avals)
    tangent_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzeros) if nz]
    found = {}

    def fun(*args):
        it = iter(args[n:])
        tangents = [next(it) if nz else Zero(tangent_aval(a))
                    for a, nz in zip(in_avals, nonzeros)]
        primals_out, tangents_out = jvp_flat(
            lambda *xs: jx.eval_jaxpr(closed.jaxpr, closed.consts, *xs), args[:n], tangents)
        out_nonzeros = [type(t) is not Zero or (inst and t.aval.dtype != dtypes.float0)
                        for t, inst in zip(tangents_out, instantiate)]
        found["out_nonzeros"] = out_nonzeros
        return list(primals_out) + [instantiate_zeros(t) for t, nz
                                    in zip(tangents_out, out_nonzeros) if nz]

    jvp_closed, hoisted = pe.trace_to_closed_jaxpr(fun, list(in_avals) + tangent_avals)
    assert not hoisted, "a closed jaxpr cannot close over tracers"
    return jvp_closed, found["out_nonzeros"]


def _with_jaxpr(params, jaxpr, num_args):
    return dict(params, jaxpr=jaxpr)


def call_jvp(primitive, primals, tangents, params, params_for=_with_jaxpr):
    """The JVP rule of a call primitive (jit, checkpoint, ...) whose closed `jaxpr` param
    runs its operands: one call of the jaxpr's JVP computing the primals and the nonzero
    tangents together. params_for(params, jaxpr, number of operands) gives its params."""
    jaxpr = params["jaxpr"]
    nonzeros = [type(t) is not Zero for t in tangents]
    jvp_closed, out_nonzeros = jvp_jaxpr(jaxpr, nonzeros, instantiate=False)
    operands = [*primals, *[t for t in tangents if type(t) is not Zero]]
    outs = primitive.bind(*operands, **params_for(params, jvp_closed, len(operands)))
    n = len(jaxpr.out_avals)
    nz_out = iter(outs[n:])
    return outs[:n], [next(nz_out) if nz else Zero(tangent_aval(a))
                      for a, nz in zip(jaxpr.out_avals, out_nonzeros)]


def call_transpose(primitive, cts, args, params, params_for=_with_jaxpr):
    """The transpose rule of a call primitive: one call of the transposed jaxpr, taking
    the non-linear operands and the nonzero cotangents. The jaxpr is first pruned to the
    outputs that have them, as JAX's is: what computes only the others (a comparison
    of a linear input, say) is not transposed."""
    linear = [is_undefined_primal(a) for a in args]
    nonzero = [type(ct) is not Zero for ct in cts]
    jaxpr, _ = jx.prune_closed_jaxpr(params["jaxpr"], nonzero, [True] * len(args))
    transposed = transpose_jaxpr(jaxpr, linear)
    operands = [a for a, lin in zip(args, linear) if not lin] + [
        ct for ct, nz in zip(cts, nonzero) if nz]
    outs = iter(primitive.bind(*operands, **params_for(params, transposed, len(operands))))
    return [next(outs) if lin else None for lin in linear]


def jvp_mapped_call(primitive, primals, tangents, params, in_param: str, out_param: str,
                    body_axes, full_aval):
    """The JVP rule of a call primitive that maps its closed `jaxpr` over named axes
    (pmap, shard_map): the same primitive over the body's JVP, each tangent mapped like
    its primal. `in_param`/`out_param` name the params holding one entry per input and
    output (axes or specs); `body_axes()` binds the named axes while tracing the body;
    `full_aval(aval, entry)` is the caller-side aval of a body output."""
    closed, ins, outs = params["jaxpr"], params[in_param], params[out_param]
    nonzeros = [type(t) is not Zero for t in tangents]
    with body_axes():
        jvp_closed, out_nonzeros = jvp_jaxpr(closed, nonzeros, instantiate=False)
    results = primitive.bind(
        *primals, *[t for t, nz in zip(tangents, nonzeros) if nz], **dict(
            params, jaxpr=jvp_closed,
            **{in_param: ins + tuple(e for e, nz in zip(ins, nonzeros) if nz),
               out_param: outs + tuple(e for e, nz in zip(outs, out_nonzeros) if nz)}))
    n = len(outs)
    tangents_out = iter(results[n:])
    return results[:n], [
        next(tangents_out) if nz else Zero(tangent_aval(full_aval(a, e)))
        for a, e, nz in zip(closed.out_avals, outs, out_nonzeros)]


_transpose_jaxpr_cache = WeakCache()


def transpose_jaxpr(closed, linear):
    """The transpose of a closed jaxpr linear in the inputs flagged `linear`."""
    linear = [bool(lin) for lin in linear]
    return _transpose_jaxpr_cache.get(closed, tuple(linear),
                   lambda: _transpose_jaxpr(closed, linear))


def _transpose_jaxpr(closed, linear):
    in_avals = closed.in_avals
    nonlinear_avals = [a for a, lin in zip(in_avals, linear) if not lin]
    ct_avals = [cotangent_aval(a) for a in closed.out_avals]
    n = len(nonlinear_avals)

    def fun(*args):
        it = iter(args[:n])
        full = [UndefinedPrimal(a) if lin else next(it) for a, lin in zip(in_avals, linear)]
        cts_in = backward_pass(closed.jaxpr, closed.consts, full, list(args[n:]),
                               transform_stack=False)
        return [instantiate_zeros(ct) for ct, lin in zip(cts_in, linear) if lin]

    transposed, hoisted = pe.trace_to_closed_jaxpr(fun, nonlinear_avals + ct_avals)
    assert not hoisted, "a closed jaxpr cannot close over tracers"
    return transposed
