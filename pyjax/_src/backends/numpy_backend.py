"""The NumPy executor: the eager trace that runs each primitive's NumPy impl, and a
jaxpr interpreter over NumPy values (jit's executor when XLA is off or missing)."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src import config
from pyjax._src.array import Array
from pyjax._src.backends.debug_nans import check_nans
from pyjax._src.core.avals import get_aval
from pyjax._src.core.jaxpr import DropVar, Literal
from pyjax._src.core.trace import Trace, Tracer, escaped_tracer_error, install_root_trace

_abstract_eval_cache: dict[tuple, Any] = {}


def host_value(x, aval):
    """The numpy value of a non-tracer operand, in its canonical dtype."""
    if type(x) is Array:
        return x._value
    if type(x) is np.ndarray and x.dtype == aval.dtype:
        return x
    return np.asarray(x, dtype=aval.dtype)


def _wrap(value, aval):
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    if value.dtype != aval.dtype:
        value = value.astype(aval.dtype)
    return Array(value, aval=aval)


class _PlacementHooks:
    """Eager ops on committed arrays: dispatch replaces this with the placement rules."""

    @staticmethod
    def apply_committed(trace, prim, args, params):
        return trace.run_on_host(prim, args, params)


placement_hooks = _PlacementHooks()


class EvalTrace(Trace):
    """The root trace: runs primitives now, on host NumPy values."""

    def lift(self, x):
        return x

    def process_primitive(self, prim, args, params):
        if prim.eager is not None:
            return prim.eager(*args, **params)
        avals, values = [], []
        for x in args:
            if type(x) is Array:
                if x.committed:   # placement rules apply (installed by dispatch)
                    return placement_hooks.apply_committed(self, prim, args, params)
                avals.append(x.aval)
                values.append(x._npy if x._npy is not None else x._value)
            elif isinstance(x, Tracer):
                raise escaped_tracer_error(x, self)
            else:
                aval = get_aval(x)
                avals.append(aval)
                values.append(host_value(x, aval))
        try:   # abstract_eval validates inputs; memoised since eager ops repeat types
            key = (prim, *avals, *params.items()) if params else (prim, *avals)
            out_aval = _abstract_eval_cache[key]
        except KeyError:
            out_aval = _abstract_eval_cache[key] = prim.abstract_eval(*avals, **params)
        except TypeError:   # an unhashable param
            out_aval = prim.abstract_eval(*avals, **params)
        out = prim.impl(*values, **params)
        if prim.multiple_results:
            outs = [_wrap(v, a) for v, a in zip(out, out_aval)]
            if config.debug_nans.value or config.debug_infs.value:
                check_nans(prim.name, [o._value for o in outs], values)
            return outs
        if type(out) is not np.ndarray or out.dtype != out_aval.dtype:
            out = np.asarray(out).astype(out_aval.dtype, copy=False)
        result = Array(out, False, None, False, out_aval)
        if config.debug_nans.value or config.debug_infs.value:
            check_nans(prim.name, [out], values)
        return result

    def run_on_host(self, prim, args, params):
        """The NumPy impl on host values, ignoring where the arguments are committed."""
        values = [Array(x._value, aval=x.aval) if type(x) is Array else x for x in args]
        return self.process_primitive(prim, values, params)


def execute_jaxpr(jaxpr, consts, args):
    """Runs a jaxpr on NumPy values by calling each primitive's impl directly (no
    re-validation: the jaxpr was type-checked when it was built)."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    checking = config.debug_nans.value or config.debug_infs.value
    for eqn in jaxpr.eqns:
        invals = [v.val if type(v) is Literal else env[v] for v in eqn.invars]
        invals = [np.asarray(x, v.aval.dtype) if type(v) is Literal else x
                  for x, v in zip(invals, eqn.invars)]
        outs = eqn.primitive.impl(*invals, **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = (outs,)
        if checking:
            check_nans(eqn.primitive.name, [np.asarray(o) for o in outs], invals,
                       eqn.source_info)
        for v, x in zip(eqn.outvars, outs):
            if type(v) is not DropVar:
                env[v] = x
    return [np.asarray(v.val, v.aval.dtype) if type(v) is Literal else env[v]
            for v in jaxpr.outvars]


def execute_closed_jaxpr(closed, args):
    consts = [host_value(c, get_aval(c)) for c in closed.consts]
    return execute_jaxpr(closed.jaxpr, consts, args)


eval_trace = EvalTrace(parent=None)
install_root_trace(eval_trace)
