"""What a library may ask about tracing: an opaque token for the current trace state (to
tell whether two calls ran under the same transformations), whether no transformation is
active, the base class of effects, and a jaxpr as a callable. Imports core only."""
from __future__ import annotations

import weakref

from pyjax._src.core import trace as core_trace
from pyjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr


class Effect:
    """Base class of the side effects a primitive's abstract evaluation can report."""


class OpaqueTraceState:
    """The current trace, compared by identity and held weakly (a token: it keeps no
    trace alive and exposes nothing about it)."""

    __slots__ = ("_trace_ref", "_hash")

    def __init__(self, trace):
        # weakref.ref returns one shared ref per trace, so tokens of an ended trace still
        # compare equal to each other (and to no live trace's).
        self._trace_ref = weakref.ref(trace)
        self._hash = hash(self._trace_ref)

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._trace_ref == other._trace_ref

    def __hash__(self):
        return self._hash


def get_opaque_trace_state(convention=None) -> OpaqueTraceState:
    """A token equal to another exactly when both were taken under the same trace."""
    return OpaqueTraceState(core_trace.current_trace())


def trace_state_clean() -> bool:
    """True when no transformation is tracing in this thread (the eager trace is current)."""
    return core_trace.current_trace() is core_trace.Trace.root


def jaxpr_as_fun(closed: ClosedJaxpr):
    """The closed jaxpr as a function of its inputs, returning the list of its outputs."""
    def fun(*args):
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return fun
