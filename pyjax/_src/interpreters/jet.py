"""Taylor-mode automatic differentiation (jax.experimental.jet): the jet trace, which
carries each value's truncated Taylor series through a function, and the helpers that
build jet rules in the primitive rooms. Imports core, interpreters.partial_eval and
interpreters.lax_hooks only.

A series here is unscaled: the coefficients [x1, x2, ...] of x(t) = x0 + x1 t + x2 t^2 +
..., so that rules are the recurrences of power series (the public jet scales by
factorials). A primitive's `jet` rule is `rule(primals, series, **params) ->
(primal_out, series_out)`, where every operand's series is a list of `order` arrays
(zeros instantiated) and, for a primitive of several results, primal_out and series_out
hold one entry per result. Entry points:
  JetTrace(order), JetTracer(trace, primal, terms); trace.to_primal_terms(x).
  jet_flat(flat_fun, order, primals, series) -> (primals_out, series_out): series_out
    entries are zero_series where an output does not depend on the inputs' series.
  compose(fun, primals, series) -> (primal_out, terms_out): the jet of a function of
    one output, written with primitives that have jet rules (zeros instantiated); what
    rules defined by a composition of simpler primitives call.
  jet_jaxpr(closed, order) -> ClosedJaxpr taking [primals..., series terms...] and
    returning [primals_out..., series terms out...] (cached per jaxpr and order).
Rule builders: linear_rule and zero_rule (RuleFactories that ad.linear_jvp and
ad.zero_jvp declare, so every linear or piecewise-constant primitive has its jet rule),
linear_in, bilinear_rule, deriv_rule, composite_rule, call_rule, jaxpr_rule, chain_terms."""
from __future__ import annotations

from pyjax._src import errors, tree_util
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import RuleFactory, Trace, Tracer, set_current_trace
from pyjax._src.interpreters.lax_hooks import lax_hooks
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.util import WeakCache


class ZeroTerm:
    """The one `zero_term`: a coefficient of a series known to be zero."""

    def __repr__(self):
        return "zero_term"


class ZeroSeries:
    """The one `zero_series`: a whole series known to be zero (a value that does not
    depend on the series of the inputs)."""

    def __repr__(self):
        return "zero_series"


zero_term = ZeroTerm()
zero_series = ZeroSeries()
tree_util.register_pytree_node(ZeroTerm, lambda z: ((), None), lambda _, xs: zero_term)
tree_util.register_pytree_node(ZeroSeries, lambda z: ((), None), lambda _, xs: zero_series)


class JetTracer(Tracer):
    """A primal value (of the parent trace) carrying its Taylor series."""

    __slots__ = ("aval", "primal", "terms")

    def __init__(self, trace, primal, terms):
        self._trace, self.primal, self.terms = trace, primal, terms
        self.aval = get_aval(primal)

    def __array__(self, dtype=None, copy=None):
        raise errors.TracerArrayConversionError(self)

    def __repr__(self):
        return f"JetTracer(primal={self.primal}, terms={self.terms})"

    def _contents(self):
        return [("primal", self.primal), ("terms", self.terms)]


class JetTrace(Trace):
    """Taylor mode: each primitive runs its jet rule on (primals, series)."""

    def __init__(self, order, parent=None):
        super().__init__(parent)
        self.order = order

    def lift(self, x):
        return JetTracer(self, x, zero_series)

    def to_primal_terms(self, x):
        if type(x) is JetTracer and x._trace is self:
            return x.primal, x.terms
        if isinstance(x, Tracer):
            self.own_or_lift(x)   # raises on a tracer that escaped its trace
        return x, zero_series

    def pack(self, primal, terms):
        return primal if terms is zero_series else JetTracer(self, primal, terms)

    def process_primitive(self, prim, args, params):
        primals, series = [], []
        for x in args:
            p, s = self.to_primal_terms(x)
            primals.append(p)
            series.append(s)
        with set_current_trace(self.parent):
            if all(s is zero_series for s in series):
                return prim.bind(*primals, **params)
            if prim.jet is None:
                raise NotImplementedError(
                    f"Primitive '{prim.name}' has no jet rule: jax.experimental.jet does "
                    "not propagate Taylor series through it.")
            series = [_instantiate(x, s, self.order) for x, s in zip(primals, series)]
            out, terms = prim.jet(primals, series, **params)
        if prim.multiple_results:
            return [self.pack(o, t) for o, t in zip(out, terms)]
        return self.pack(out, terms)


def _instantiate(primal, terms, order):
    """`terms` as a list of `order` arrays: zero terms (and a zero series) made zeros
    shaped like the primal."""
    if terms is zero_series:
        terms = [zero_term] * order
    if all(t is not zero_term for t in terms):
        return list(terms)
    zero = lax_hooks.zeros_like_aval(get_aval(primal))
    return [zero if t is zero_term else t for t in terms]


def jet_flat(flat_fun, order, primals, series):
    """flat_fun(*primals) -> list under a new jet trace of `order` terms. Returns
    (primals_out, series_out), a series_out entry being zero_series for an output that
    does not depend on the input series."""
    trace = JetTrace(order)
    ins = [JetTracer(trace, p, list(s)) for p, s in zip(primals, series)]
    try:
        with set_current_trace(trace):
            outs = flat_fun(*ins)
        pairs = [trace.to_primal_terms(o) for o in outs]
    finally:
        trace.end()
    return [p for p, _ in pairs], [s for _, s in pairs]


def compose(fun, primals, series):
    """(primal_out, terms_out) of fun(*primals), a function of one output, with
    instantiated terms."""
    order = len(series[0])
    (out,), (terms,) = jet_flat(lambda *xs: [fun(*xs)], order, primals, series)
    return out, _instantiate(out, terms, order)


def chain_terms(u, c):
    """The series v of a function g of u whose derivative's series along u is c:
    v' = c u', i.e. v[k] = sum_{j=1..k} j c[k-j] u[j] / k, for k = 1..len(u)-1 (u and c
    given with their 0th coefficients)."""
    return [sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k for k in range(1, len(u))]


def _linear_rule(prim):
    def rule(primals, series, **params):
        out = prim.bind(*primals, **params)
        terms = [prim.bind(*coefficients, **params) for coefficients in zip(*series)]
        if prim.multiple_results:
            terms = [list(t) for t in zip(*terms)]
        return out, terms
    return rule


def _zero_rule(prim):
    def rule(primals, series, **params):
        out = prim.bind(*primals, **params)
        return out, ([zero_series] * len(out) if prim.multiple_results else zero_series)
    return rule


def _bilinear_rule(prim):
    def rule(primals, series, **params):
        u = [primals[0], *series[0]]
        w = [primals[1], *series[1]]
        v = [sum(prim.bind(u[j], w[k - j], **params) for j in range(k + 1))
             for k in range(1, len(u))]
        return prim.bind(u[0], w[0], **params), v
    return rule


def linear_in(*positions):
    """The jet rule of a primitive linear in the operands at `positions` and taking the
    others (indices) as they are: the primitive on each coefficient of those."""
    def make(prim):
        def rule(primals, series, **params):
            def operands(k):
                return [series[i][k] if i in positions else x for i, x in enumerate(primals)]
            return (prim.bind(*primals, **params),
                    [prim.bind(*operands(k), **params) for k in range(len(series[0]))])
        return rule
    return RuleFactory(make)


# The jet of a primitive linear in all its operands: the primitive on each coefficient.
linear_rule = RuleFactory(_linear_rule)
# The jet of a piecewise-constant primitive: a zero series.
zero_rule = RuleFactory(_zero_rule)
# The jet of a primitive linear in each of two operands (mul, dot_general, conv): the
# Cauchy product of the two series.
bilinear_rule = RuleFactory(_bilinear_rule)


def deriv_rule(deriv):
    """The jet rule of a unary primitive from its first derivative `deriv` (a function
    of the operand): the series of deriv along the operand's, then chain_terms."""
    def make(prim):
        def rule(primals, series, **params):
            c0, cs = compose(deriv, primals, series)
            return (prim.bind(*primals, **params),
                    chain_terms([primals[0], *series[0]], [c0, *cs]))
        return rule
    return RuleFactory(make)


def composite_rule(comp):
    """The jet rule of a primitive equal to `comp`, a composition of simpler primitives
    (taking the primitive's params as keywords, which it may ignore)."""
    def rule(primals, series, **params):
        return compose(lambda *xs: comp(*xs, **params), primals, series)
    return rule


_jet_jaxpr_cache = WeakCache()


def jet_jaxpr(closed, order):
    """The jet of a closed jaxpr as a closed jaxpr (see the module docstring)."""
    return _jet_jaxpr_cache.get(closed, order, lambda: _jet_jaxpr(closed, order))


def _jet_jaxpr(closed, order):
    n = len(closed.in_avals)
    term_avals = [a for a in closed.in_avals for _ in range(order)]

    def fun(*args):
        series = [args[n + i * order:n + (i + 1) * order] for i in range(n)]
        outs, out_series = jet_flat(
            lambda *xs: jx.eval_jaxpr(closed.jaxpr, closed.consts, *xs), order,
            args[:n], series)
        return list(outs) + [t for o, s in zip(outs, out_series)
                             for t in _instantiate(o, s, order)]

    jet_closed, hoisted = pe.trace_to_closed_jaxpr(fun, list(closed.in_avals) + term_avals)
    assert not hoisted, "a closed jaxpr cannot close over tracers"
    return jet_closed


def call_rule(primitive, primals, series, params, params_for):
    """The jet rule of a call primitive (jit) whose closed `jaxpr` param runs its
    operands: one call of the jaxpr's jet, on the primals and every series term.
    params_for(params, jaxpr, number of operands) gives its params."""
    closed = params["jaxpr"]
    order = len(series[0])
    operands = [*primals, *[t for terms in series for t in terms]]
    outs = primitive.bind(*operands, **params_for(params, jet_jaxpr(closed, order),
                                                    len(operands)))
    n = len(closed.out_avals)
    return outs[:n], [list(outs[n + i * order:n + (i + 1) * order]) for i in range(n)]


def jaxpr_rule(primals, series, jaxpr):
    """The jet of a primitive that applies the closed `jaxpr` to its operands, taken
    through the jaxpr's equations (custom_jvp and custom_vjp calls: jet uses the
    function, not its custom rule, as JAX does)."""
    order = len(series[0])
    outs, out_series = jet_flat(lambda *xs: jx.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs),
                                order, primals, series)
    return outs, [_instantiate(o, s, order) for o, s in zip(outs, out_series)]
