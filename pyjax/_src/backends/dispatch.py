"""Runs closed jaxprs on the chosen executor: XLA (the default, when jaxlib imports) or
NumPy (config `pyjax_executor` / PYJAX_EXECUTOR=numpy). Computation follows data:
committed arguments choose the device. Executables are cached per jaxpr, donation and
device; donated arguments are deleted after the call."""
from __future__ import annotations

import warnings
import weakref
from typing import NamedTuple

import numpy as np

from pyjax._src import config
from pyjax._src.array import Array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import numpy_backend, stablehlo
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr, sub_jaxprs
from pyjax._src.core.trace import primitive_effects


class NumpyExecutable:
    """A jaxpr on the NumPy executor, with the same calling convention as XLA's."""

    def __init__(self, closed, device):
        self.jaxpr, self.device = closed.jaxpr, device
        self.consts = [numpy_backend.host_value(c, v.aval)
                       for c, v in zip(closed.consts, closed.jaxpr.constvars)]
        self.out_avals = closed.out_avals

    def __call__(self, args, committed=False):
        jaxpr = self.jaxpr
        values = [numpy_backend.host_value(x, v.aval) for x, v in zip(args, jaxpr.invars)]
        outs = numpy_backend.execute_jaxpr(jaxpr, self.consts, values)
        results = [numpy_backend._wrap(o, a) for o, a in zip(outs, self.out_avals)]
        if committed:
            for r in results:
                r._device, r.committed = self.device, True
        return results


class InterpretedExecutable:
    """A jaxpr holding a primitive that runs its own XLA program (pmap: flagged
    `runs_own_program`), which no other module can contain: its equations run one at a
    time on the eval trace, each as it runs eagerly (pmap compiles its replicated
    program; nested jit calls compile theirs)."""

    def __init__(self, closed, device):
        self.closed, self.device = closed, device
        self.out_avals = closed.out_avals

    def __call__(self, args, committed=False):
        outs = eval_jaxpr(self.closed.jaxpr, self.closed.consts, *args)
        results = []
        for x, aval in zip(outs, self.out_avals):
            if type(x) is not Array or committed:   # fresh Arrays: inputs stay as they are
                x = numpy_backend._wrap(numpy_backend.host_value(x, aval), aval)
            if committed:
                x._device, x.committed = self.device, True
            results.append(x)
        return results


def runs_own_program(jaxpr):
    """Whether a jaxpr (or one nested in it) holds a primitive that runs its own
    program (see InterpretedExecutable)."""
    return any(e.primitive.runs_own_program
               or any(runs_own_program(sub) for sub in sub_jaxprs(e)) for e in jaxpr.eqns)


class _Entry:
    """An executable and the inputs whose buffers it takes over (donation)."""

    __slots__ = ("run", "donated")

    def __init__(self, run, donated):
        self.run, self.donated = run, donated


def _function_name(closed):
    info = closed.jaxpr.debug_info
    return getattr(info, "func_name", None) or "main"


def _make_entry(closed, donated_invars, device):
    name = _function_name(closed)
    xla = devices_mod.xla_backend()
    if xla is None:
        aliases, unusable = stablehlo.donation_aliases(
            closed.in_avals, donated_invars or (False,) * len(closed.in_avals),
            closed.out_avals)
        run = NumpyExecutable(closed, device)
    elif runs_own_program(closed.jaxpr):
        aliases, unusable = {}, []     # no buffers to alias: donated inputs stay alive
        run = InterpretedExecutable(closed, device)
    else:
        lowered = stablehlo.lower_module(closed, name, donated_invars)
        aliases, unusable = lowered.aliases, lowered.unusable_donations
        run = xla.Executable(lowered, device, closed.consts, name)
    if unusable:
        warnings.warn("Some donated buffers were not usable: "
                      + ", ".join(stablehlo.layout_str(a) for a in unusable),
                      UserWarning, stacklevel=5)
    return _Entry(run, tuple(sorted(aliases)))


# closed jaxpr -> {(executor, donated, device): _Entry}; dies with the jaxpr.
_executables = weakref.WeakKeyDictionary()


def _entry_for(closed, donated_invars, device):
    per_jaxpr = _executables.get(closed)
    if per_jaxpr is None:
        per_jaxpr = _executables[closed] = {}
    key = (config.executor.value, donated_invars, device)
    entry = per_jaxpr.get(key)
    if entry is None:
        entry = per_jaxpr[key] = _make_entry(closed, donated_invars, device)
    return entry


def executable_for(closed, donated_invars=(), device=None):
    """A callable (list[Array], committed=False) -> list[Array] that runs `closed` on the
    configured executor on `device` (default: the default device)."""
    device = devices_mod.default_device() if device is None else device
    return _entry_for(closed, tuple(donated_invars), device).run


def run_closed_jaxpr(closed, args, donated_invars=(), device=None, where=None):
    """Runs `closed` on Arrays where the data is: on the device the committed arguments
    share (or `device`), else on the default device. Results are committed when an
    argument was. Donated arguments are deleted."""
    committed = device is not None
    if not committed:
        for x in args:
            if x.committed:
                device = devices_mod.common_device(args, where or _where(closed))
                committed = True
                break
        else:
            device = devices_mod.default_device()
    entry = _entry_for(closed, tuple(donated_invars), device)
    outs = entry.run(args, committed)
    for i in entry.donated:
        x = args[i]
        if type(x) is Array:
            x.delete("donated")
    return outs


def route(closed, donated_invars, device=None):
    """(executable, donated input positions, device) for calls of `closed` whose committed
    arguments are all on `device` (None: no argument is committed, so the default device):
    what jit caches per argument signature for its fast path."""
    device = devices_mod.default_device() if device is None else device
    entry = _entry_for(closed, tuple(donated_invars), device)
    return entry.run, entry.donated, device


class CommittedKind(NamedTuple):
    """What a jit fast path expects of a committed Array argument: its aval and device."""
    aval: object
    device: object

    def fits(self, x):
        return (type(x) is Array and x.committed and x._device is self.device
                and x.aval == self.aval)


class HostArrayKind(NamedTuple):
    """What a jit fast path expects of a NumPy-array argument: exactly an ndarray of this
    dtype and shape (the program's aval has the canonical dtype)."""
    dtype: np.dtype
    shape: tuple

    def fits(self, x):
        return type(x) is np.ndarray and x.shape == self.shape and x.dtype == self.dtype


# A generated fast entry is a method (self, *args, **kwargs) of the jitted function; a
# call it does not fit goes on to the general path, which the entry's source names `miss`.
NO_FIT = "return miss(self, args, kwargs)"


def default_route_state():
    """What the default route depends on besides the arguments: a fast entry made now
    stays valid while this is unchanged and the thread is at the root trace."""
    return config.config.version, devices_mod.default_device_state.override


def _where(closed):
    return f"jitted computation {_function_name(closed)}"


# --- eager primitives on committed arrays ---------------------------------------------------

_single_primitive_jaxprs = {}


def _apply_committed(trace, prim, args, params):
    """Eager op with a committed argument: on CPU devices the NumPy impl runs on host
    views and the results are committed there; elsewhere a cached one-primitive
    executable runs on the device."""
    arrays = [x for x in args if type(x) is Array]
    device = devices_mod.common_device(arrays, f"the primitive '{prim.name}'")
    if runs_on_host(device):
        outs = trace.run_on_host(prim, args, params)
        for r in (outs if prim.multiple_results else [outs]):
            r._device, r.committed = device, True
        return outs
    args = [x if type(x) is Array else _as_array(x) for x in args]
    closed = _single_primitive_jaxpr(prim, [x.aval for x in args], params)
    outs = run_closed_jaxpr(closed, args, device=device)
    return outs if prim.multiple_results else outs[0]


def runs_on_host(device):
    """Whether eager ops on arrays committed to `device` may use host views."""
    return device.platform == "cpu"


def _as_array(x):
    from pyjax._src.core.avals import get_aval
    aval = get_aval(x)
    return numpy_backend._wrap(numpy_backend.host_value(x, aval), aval)


def _single_primitive_jaxpr(prim, avals, params):
    try:
        key = (prim, tuple(avals), tuple(params.items()))
        closed = _single_primitive_jaxprs.get(key)
    except TypeError:   # unhashable params: build it every time
        key, closed = None, None
    if closed is None:
        out = prim.abstract_eval(*avals, **params)
        out_avals = list(out) if prim.multiple_results else [out]
        invars = [Var(a) for a in avals]
        outvars = [Var(a) for a in out_avals]
        eqn = JaxprEqn(invars, outvars, prim, params, primitive_effects(prim, params))
        closed = ClosedJaxpr(Jaxpr((), invars, outvars, [eqn]), ())
        if key is not None:
            _single_primitive_jaxprs[key] = closed
    return closed


numpy_backend.placement_hooks.apply_committed = _apply_committed


def is_array(x):
    return type(x) is Array
