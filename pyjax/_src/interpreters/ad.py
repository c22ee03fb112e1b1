"""Automatic differentiation: the JVP trace with symbolic zero tangents, linearize (the JVP
run under partial evaluation), transposition of linear jaxprs, and the helpers that build
JVP rules in the primitive rooms. Imports core and interpreters.partial_eval only.

Entry points used by the API and by higher-order primitive rules:
  JVPTrace(parent=None), JVPTracer(trace, primal, tangent); trace.to_primal_tangent(x).
  jvp_flat(flat_fun, primals, tangents) -> (primals_out, tangents_out) (tangents may be Zero).
  linearize_flat(flat_fun, primals, differentiable) -> (primals_out, Linearized): a linear
    jaxpr with its residuals; `.jvp(tangents)` evaluates it, `.vjp(cts)` transposes it.
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

from pyjax._src import dtypes
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import RuleFactory


class Zero:
    """A tangent known to be zero, kept symbolic so no zeros are materialised."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    @staticmethod
    def from_primal_value(x):
        return Zero(tangent_aval(get_aval(x)))

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


def tangent_aval(aval):
    """Tangents of integer and bool values have dtype float0."""
    if dtypes.is_inexact(aval.dtype):
        return aval.strip_weak_type() if aval.weak_type else aval
    return ShapedArray(aval.shape, dtypes.float0)


class UndefinedPrimal:
    """A linear input whose value transposition is solving for."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x):
    return type(x) is UndefinedPrimal


# Hooks installed by lax at import, so this layer never imports lax.
class _LaxHooks:
    zeros_like_aval = None     # aval -> array of zeros (traced if under a trace)
    add_tangents = None        # (a, b) -> a + b for tangent values (add_any)
    broadcast_to = None        # (x, shape) -> x broadcast to shape (lax broadcasting)


lax_hooks = _LaxHooks()


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
            return out, Zero(tangent_aval(get_aval(out)))
        return out, prim.bind(*map(instantiate_zeros, tangents), **params)
    jvp.is_linear = True   # the completeness test requires a transpose for these
    return jvp


def _zero_jvp(prim):
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        outs = out if prim.multiple_results else [out]
        zeros = [Zero(tangent_aval(get_aval(o))) for o in outs]
        return out, (zeros if prim.multiple_results else zeros[0])
    return jvp


# The JVP of a primitive linear in all its operands: the primitive on the tangents.
linear_jvp = RuleFactory(_linear_jvp)
# The JVP of a piecewise-constant primitive (floor, sign, comparisons): zero.
zero_jvp = RuleFactory(_zero_jvp)
