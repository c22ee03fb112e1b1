"""JAX's partial evaluation API for libraries (jax.interpreters.partial_eval.PartialVal and
trace_to_jaxpr_nounits): a function runs with some inputs known (values) and others
unknown (avals); known work happens now and gives known outputs, work depending on the
unknowns is staged into a jaxpr. Built on pyjax's PartialEvalTrace."""
from __future__ import annotations

from pyjax._src import dtypes
from pyjax._src.core.avals import ShapedArray, get_aval
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


def _physical(x):
    """x, or the physical data of an array of an extended dtype (a typed key)."""
    dtype = getattr(x, "dtype", None)
    return dtype.to_physical(x) if isinstance(dtype, dtypes.ExtendedDType) else x


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
                aval = pv[0]
                extended = isinstance(aval.dtype, dtypes.ExtendedDType)
                if extended:   # typed keys: the jaxpr takes their physical data
                    aval = ShapedArray(aval.shape + aval.dtype.physical_shape,
                                       aval.dtype.physical_dtype)
                in_tracers.append(trace.new_arg(aval))
                ins.append(pv[0].dtype.from_physical(in_tracers[-1]) if extended
                           else in_tracers[-1])
        with set_current_trace(trace):
            outs = list(fun.call_wrapped(*ins))
        physical = [_physical(o) for o in outs]
        flags = [instantiate] * len(outs) if isinstance(instantiate, bool) else instantiate
        unknown = [trace.is_unknown(p) or bool(inst) for p, inst in zip(physical, flags)]
        out_pvals = [PartialVal.unknown(get_aval(o)) if u else PartialVal.known(o)
                     for o, u in zip(outs, unknown)]
        jaxpr, consts = trace.to_jaxpr(in_tracers,
                                       [p for p, u in zip(physical, unknown) if u])
    finally:
        trace.end()
    return jaxpr, out_pvals, consts
