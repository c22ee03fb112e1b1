"""The NumPy executor: a jaxpr interpreter over NumPy values (jit's executor when XLA is
off or missing), and the conversions between host values and Arrays that eager ops
(backends/eager.py) share with it."""
from __future__ import annotations

import numpy as np

from pyjax._src import config
from pyjax._src.array import Array
from pyjax._src.backends.debug_nans import check_nans
from pyjax._src.core.avals import get_aval
from pyjax._src.core.jaxpr import DropVar, Literal
from pyjax._src.core.tokens import AbstractToken, Token


def host_value(x, aval):
    """The numpy value of a non-tracer operand, in its canonical dtype (a token is
    itself: it holds nothing)."""
    if type(aval) is AbstractToken:
        return x
    if type(x) is Array:
        return x._value
    if type(x) is np.ndarray and x.dtype == aval.dtype:
        return x
    return np.asarray(x, dtype=aval.dtype)


def wrap(value, aval):
    """The host value `value` as an Array of `aval` (converted to its dtype); a token
    stays a token."""
    if type(aval) is AbstractToken:
        return Token()
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    if value.dtype != aval.dtype:
        value = value.astype(aval.dtype)
    return Array(value, aval=aval)


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

