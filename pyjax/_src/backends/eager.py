"""Eager ops: the root trace, at the bottom of every thread's trace stack, runs each
primitive as it is bound: its NumPy impl on host values, or, when an operand is committed
to a device, by dispatch's placement rules."""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src import config
from pyjax._src.array import Array
from pyjax._src.backends import dispatch
from pyjax._src.backends.debug_nans import check_nans
from pyjax._src.backends.numpy_backend import host_value, wrap
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import (Trace, Tracer, escaped_tracer_error, install_root_trace,
                                   operand_error)
from pyjax._src.sharding import _mesh_state, mesh_context_set

# (primitive, avals, params) -> the result's aval(s)
abstract_eval_cache: dict[tuple, Any] = {}


class EvalTrace(Trace):
    """The root trace: runs primitives now, on host NumPy values."""

    def lift(self, x):
        return x

    def typed_constant(self, value, aval):
        return Array(np.asarray(value, aval.dtype), aval=aval)

    def process_primitive(self, prim, args, params):
        if prim.eager is not None:
            out = prim.eager(*args, **params)
            if out is not NotImplemented:
                return out
        avals, values = [], []
        for x in args:
            if type(x) is Array:
                if x.committed:   # placement rules apply
                    return dispatch.apply_committed(self, prim, args, params)
                avals.append(x.aval)
                values.append(x._npy if x._npy is not None else x._value)
            elif isinstance(x, Tracer):
                raise escaped_tracer_error(x, self)
            else:
                try:
                    aval = get_aval(x)
                except TypeError as err:
                    raise operand_error(prim, args) from err
                avals.append(aval)
                values.append(host_value(x, aval))
        if mesh_context_set():   # the context mesh types the result: not memoised
            out_aval = prim.abstract_eval(*avals, **params)
        else:
            try:   # abstract_eval validates inputs; memoised since eager ops repeat types
                key = (prim, *avals, *params.items()) if params else (prim, *avals)
                out_aval = abstract_eval_cache[key]
            except KeyError:
                out_aval = abstract_eval_cache[key] = prim.abstract_eval(*avals, **params)
            except TypeError:   # an unhashable param
                out_aval = prim.abstract_eval(*avals, **params)
        out = prim.impl(*values, **params)
        if prim.multiple_results:
            outs = [wrap(v, a) for v, a in zip(out, out_aval)]
            if config.debug_nans.value or config.debug_infs.value:
                check_nans(prim.name, [o._value for o in outs], values)
            if _mesh_state.context or any(o.aval._sharding is not None for o in outs):
                return [dispatch.laid_out_in_context(o) for o in outs]
            return outs
        if type(out) is not np.ndarray or out.dtype != out_aval.dtype:
            out = np.asarray(out).astype(out_aval.dtype, copy=False)
        result = Array(out, False, None, False, out_aval)
        if config.debug_nans.value or config.debug_infs.value:
            check_nans(prim.name, [out], values)
        if out_aval._sharding is not None or _mesh_state.context:   # placed by a mesh
            return dispatch.laid_out_in_context(result)
        return result

    def run_on_host(self, prim, args, params):
        """The NumPy impl on host values, ignoring where the arguments are committed."""
        values = [Array(x._value, aval=x.aval) if type(x) is Array else x for x in args]
        return self.process_primitive(prim, values, params)


eval_trace = EvalTrace(parent=None)
install_root_trace(eval_trace)
