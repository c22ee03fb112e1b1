"""JAX's partial evaluation API for libraries (jax.interpreters.partial_eval.PartialVal and
trace_to_jaxpr_nounits): a function runs with some inputs known (values) and others
unknown (avals); known work happens now and gives known outputs, work depending on the
unknowns is staged into a jaxpr. Built on pyjax's PartialEvalTrace."""
from __future__ import annotations

from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import set_current_trace
from pyjax._src.interpreters import partial_eval as pe


class PartialVal(tuple):
    """(aval, None) for an unknown value, (None, value) for a known one."""

    def __new__(cls, pair):
        aval, value = pair
        if (aval is None) == (value is None) and value is not None:
            raise ValueError("PartialVal: give either an aval (unknown) or a value (known)")
        return super().__new__(cls, (aval, value))

    @classmethod
    def known(cls, value):
        return cls((None, value))

    @classmethod
    def unknown(cls, aval):
        return cls((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self):
        return self[1] if self[0] is None else None

    def get_aval(self):
        return get_aval(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """Runs `fun` (a linear_util WrappedFun over flat inputs) with the known values of
    `pvals` and the unknown ones abstract. Returns (jaxpr of the unknown outputs, taking
    the unknown inputs; out_pvals; the jaxpr's consts)."""
    trace = pe.PartialEvalTrace()
    try:
        in_tracers, ins = [], []
        for pv in pvals:
            if pv.is_known():
                ins.append(pv.get_known())
            else:
                in_tracers.append(trace.new_arg(pv[0]))
                ins.append(in_tracers[-1])
        with set_current_trace(trace):
            outs = list(fun.call_wrapped(*ins))
        flags = [instantiate] * len(outs) if isinstance(instantiate, bool) else instantiate
        unknown = [trace.is_unknown(o) or bool(inst) for o, inst in zip(outs, flags)]
        out_pvals = [PartialVal.unknown(get_aval(o)) if u else PartialVal.known(o)
                     for o, u in zip(outs, unknown)]
        jaxpr, consts = trace.to_jaxpr(in_tracers, [o for o, u in zip(outs, unknown) if u])
    finally:
        trace.end()
    return jaxpr, out_pvals, consts
