"""Staging Python functions into jaxprs. One staging trace (DynamicJaxprTrace) builds the
jaxprs of make_jaxpr, jit and control-flow bodies; its tracers know where they came from
(an argument, or an equation on a source line) so errors can say so."""
from __future__ import annotations

import os
import sys

import numpy as np

from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import (Trace, Tracer, primitive_effects, set_current_trace)


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


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_PACKAGE_PREFIX = _PACKAGE_DIR + os.sep


def user_frame():
    """(file, line, function) of the innermost caller outside pyjax, or None."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_PREFIX):
            return filename, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back
    return None


class DynamicJaxprTracer(Tracer):
    __slots__ = ("aval", "var", "origin")

    def __init__(self, trace, aval, var, origin):
        self._trace, self.aval, self.var, self.origin = trace, aval, var, origin

    def _origin_description(self):
        trace, origin = self._trace, self.origin
        head = (f"While tracing the function {trace.debug_info.describe()}, "
                if trace.debug_info else "While tracing, ")
        if isinstance(origin, int):
            names = trace.debug_info.arg_names if trace.debug_info else None
            which = (f"argument '{names[origin]}'" if names and origin < len(names)
                     and names[origin] else "an argument")
            return (f"{head}this value is {which} (flattened position {origin}), whose "
                    "value is not known while the computation is staged out.")
        if isinstance(origin, jx.JaxprEqn):
            where = origin.source_info
            line = f"\nfrom line {where[0]}:{where[1]} ({where[2]})" if where else ""
            return (f"{head}this value became a tracer due to the operation:\n  "
                    f"{origin!r}{line}")
        return f"{head}this value is a traced intermediate."


class DynamicJaxprTrace(Trace):
    """Records every primitive applied to its tracers as an equation."""

    def __init__(self, debug_info=None, parent=None):
        super().__init__(parent)
        self.debug_info = debug_info
        self.eqns = []
        self.constvars = {}        # id(const) -> (var, const)
        self.effects = set()

    def new_arg(self, aval, index):
        return DynamicJaxprTracer(self, aval, jx.Var(aval), index)

    def lift(self, x):
        if jx.literalable(x):
            lit = jx.literal(x)
            return DynamicJaxprTracer(self, lit.aval, lit, None)
        entry = self.constvars.get(id(x))
        if entry is None:
            aval = get_aval(x)
            entry = self.constvars[id(x)] = (jx.Var(aval), x)
        return DynamicJaxprTracer(self, entry[0].aval, entry[0], None)

    def process_primitive(self, prim, args, params):
        tracers = [self.own_or_lift(x) for x in args]
        out_aval = prim.abstract_eval(*[t.aval for t in tracers], **params)
        out_avals = out_aval if prim.multiple_results else [out_aval]
        outvars = [jx.Var(a) for a in out_avals]
        effects = primitive_effects(prim, params)
        eqn = jx.JaxprEqn([t.var for t in tracers], outvars, prim, params, effects,
                          user_frame())
        self.eqns.append(eqn)
        if effects:
            self.effects.update(effects)
        outs = [DynamicJaxprTracer(self, v.aval, v, eqn) for v in outvars]
        return outs if prim.multiple_results else outs[0]

    def to_jaxpr(self, in_tracers, out_tracers):
        constvars, consts = [], []
        for var, const in self.constvars.values():
            constvars.append(var)
            consts.append(const)
        invars = [t.var for t in in_tracers]
        outvars = [t.var for t in out_tracers]
        jaxpr = jx.Jaxpr(constvars, invars, outvars, self.eqns, frozenset(self.effects),
                         self.debug_info)
        return jaxpr, consts


def trace_to_jaxpr(flat_fun, in_avals, debug_info=None):
    """Traces flat_fun(*tracers) -> sequence of outputs into (jaxpr, consts). consts may
    hold values of enclosing traces; callers pass them back in as arguments."""
    trace = DynamicJaxprTrace(debug_info)
    in_tracers = [trace.new_arg(a, i) for i, a in enumerate(in_avals)]
    try:
        with set_current_trace(trace):
            outs = flat_fun(*in_tracers)
            out_tracers = [trace.own_or_lift(x) for x in outs]
    finally:
        trace.end()
    return trace.to_jaxpr(in_tracers, out_tracers)


def trace_to_closed_jaxpr(flat_fun, in_avals, debug_info=None):
    """Like trace_to_jaxpr, but hoists consts that are tracers of enclosing traces into
    leading invars. Returns (ClosedJaxpr with only concrete consts, hoisted values)."""
    jaxpr, consts = trace_to_jaxpr(flat_fun, in_avals, debug_info)
    return close_over_concrete(jaxpr, consts)


def close_over_concrete(jaxpr, consts):
    if not any(isinstance(c, Tracer) for c in consts):
        return jx.ClosedJaxpr(jaxpr, consts), []
    keep_vars, keep, hoist_vars, hoist = [], [], [], []
    for v, c in zip(jaxpr.constvars, consts):
        if isinstance(c, Tracer):
            hoist_vars.append(v)
            hoist.append(c)
        else:
            keep_vars.append(v)
            keep.append(c)
    new = jx.Jaxpr(keep_vars, hoist_vars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns,
                   jaxpr.effects, jaxpr.debug_info)
    return jx.ClosedJaxpr(new, keep), hoist


def avals_of(values):
    return [get_aval(x) for x in values]


def zeros_like_aval(aval):
    return np.zeros(aval.shape, aval.dtype)


__all__ = ["DynamicJaxprTrace", "DynamicJaxprTracer", "trace_to_jaxpr",
           "trace_to_closed_jaxpr", "DebugInfo", "debug_info_of", "ShapedArray"]
