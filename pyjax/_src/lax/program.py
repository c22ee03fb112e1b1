"""lax operations about the program more than the values: optimization_barrier
(optimization_barrier_p, XLA's barrier against moving work across it), stage (lifts a
value into the active trace), dce_sink (keeps a value's computation), platform_dependent
(the branch for the platform the code runs on), composite (a named decomposition),
shape_as_value and dtype. Imports core, interpreters, backends and the lax families."""
from __future__ import annotations

import functools
import operator

import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src.array import Array, as_array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Trace, current_trace, define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters.ad import Zero
from pyjax._src.lax import builders as b
from pyjax._src.lax.callbacks import Effect


# --- optimization_barrier -----------------------------------------------------------------

def _barrier_jvp(primals, tangents):
    outs = optimization_barrier_p.bind(*primals)
    nonzero = [t for t in tangents if type(t) is not Zero]
    moved = iter(optimization_barrier_p.bind(*nonzero) if nonzero else ())
    return outs, [t if type(t) is Zero else next(moved) for t in tangents]


def _barrier_transpose(cts, *args):
    linear = [ad.is_undefined_primal(a) for a in args]
    values = [ad.instantiate_zeros(ct) for ct, lin in zip(cts, linear) if lin]
    moved = iter(optimization_barrier_p.bind(*values) if values else ())
    return [next(moved) if lin else None for lin in linear]


def _barrier_lower(ctx, *xs):
    if not xs:
        return []
    return ctx.op("stablehlo.optimization_barrier", list(xs), [x.aval for x in xs])


optimization_barrier_p = define_primitive(
    "optimization_barrier", multiple_results=True, impl=lambda *xs: list(xs),
    abstract_eval=lambda *avals: list(avals), jvp=_barrier_jvp, transpose=_barrier_transpose,
    batch=lambda args, dims: (optimization_barrier_p.bind(*args), list(dims)),
    lower=_barrier_lower,
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32), np.arange(4, dtype=np.int32)]),
             b.Sample([b.random_values((3,), np.float32)])], is_linear=True)


def optimization_barrier(operand):
    """Returns operand (a pytree) unchanged, while keeping XLA from moving computations
    across this point (e.g. to stop rematerialized work from being merged back)."""
    leaves, tree = tree_util.tree_flatten(operand)
    return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


# --- stage ---------------------------------------------------------------------------------

stage_p = define_primitive(
    "stage", impl=np.asarray, abstract_eval=lambda x: x, jvp=ad.linear_jvp,
    transpose=lambda ct, x: [ct], batch=batching.same_shape_rule,
    lower=lambda ctx, x: x,
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32)]),
                     b.Sample([np.arange(4, dtype=np.int32)])])


def stage(x, /):
    """Lifts x (a Python scalar, NumPy array or Array) into the active trace: logically
    the identity. Outside any trace it returns an Array; inside one, a value of that
    trace with no equation recorded (a constant stays a literal of the jaxpr)."""
    trace = current_trace()
    if trace is Trace.root:
        return stage_p.bind(as_array(x))
    return trace.own_or_lift(as_array(x))


# --- dce_sink ---------------------------------------------------------------------------

class NoDCEEffect(Effect):
    """Marks an equation that dead-code elimination must keep."""
    name = "NoDCE"


no_dce_effect = NoDCEEffect()
dce_sink_p = define_primitive(
    "dce_sink", multiple_results=True, impl=lambda x, **_: [],
    abstract_eval=lambda x, **_: [], effects=lambda **_: frozenset({no_dce_effect}),
    jvp=lambda primals, tangents, **params: (dce_sink_p.bind(*primals, **params), []),
    transpose=lambda cts, x, **_: [None], is_linear=True,
    batch=lambda args, dims, **params: (dce_sink_p.bind(*args, **params), []),
    lower=lambda ctx, x, **_: [],
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32)],
                              {"prevent_mlir_dce": False})])


def dce_sink(val, *, prevent_mlir_dce: bool = False):
    """Marks every leaf of val as used, so jaxpr dead-code elimination keeps the
    computation that produces it. Returns nothing. (XLA may still remove it: pyjax
    lowers no side-effecting custom call for prevent_mlir_dce=True.)"""
    for leaf in tree_util.tree_leaves(val):
        dce_sink_p.bind(leaf, prevent_mlir_dce=bool(prevent_mlir_dce))


# --- platform_dependent ---------------------------------------------------------------------

_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


def platform_dependent(*args, default=None, **per_platform):
    """Calls the branch for the platform of the default device with `args`: keyword
    branches are named 'cpu', 'cuda', 'rocm' or 'tpu'; `default` serves the others."""
    unknown = sorted(set(per_platform) - set(_PLATFORMS))
    if unknown:
        raise ValueError(f"platform_dependent: unknown platform(s) {unknown}; the branches "
                         f"are named {list(_PLATFORMS)} (or passed as default=).")
    for name, branch in list(per_platform.items()) + [("default", default)]:
        if branch is not None and not callable(branch):
            raise TypeError(f"platform_dependent: the {name} branch must be callable, got "
                            f"{branch!r}.")
    platform = devices_mod.default_device().platform
    branch = per_platform.get(platform) or per_platform.get(
        {"gpu": "cuda"}.get(platform, platform)) or default
    if branch is None:
        raise NotImplementedError(
            f"platform_dependent: no branch for platform {platform!r} and no default; "
            f"branches were given for {sorted(per_platform)}.")
    return branch(*args)


# --- composite --------------------------------------------------------------------------------

def composite(decomposition, name, version=0):
    """Marks `decomposition` as the composite operation `name` (version `version`): the
    returned function calls the decomposition; pyjax keeps no separate kernel for it, so
    the name and version are metadata (available as `.name` and `.version`)."""
    if not callable(decomposition):
        raise TypeError(f"composite expects a callable decomposition, got {decomposition!r}.")
    if not isinstance(name, str) or not name:
        raise TypeError(f"composite: name must be a non-empty string, got {name!r}.")
    version = operator.index(version)
    if version < 0:
        raise ValueError(f"composite: version must be nonnegative, got {version}.")

    @functools.wraps(decomposition)
    def composite_fun(*args, **kwargs):
        return decomposition(*args, **kwargs)
    composite_fun.name, composite_fun.version = name, version
    return composite_fun


# --- values from shapes and dtypes ----------------------------------------------------------

def shape_as_value(shape):
    """A shape as a 1-D integer array of its dimensions."""
    dims = [operator.index(d) for d in shape]
    return Array(np.array(dims, dtypes.default_int_dtype()))


_PYTHON_TYPES = {bool: dtypes.bool_, int: dtypes.int64, float: dtypes.float64,
                 complex: dtypes.complex128}


def dtype(x, *, canonicalize=False):
    """The NumPy dtype of an array, a scalar, a dtype or a Python scalar type (Python
    scalars are 64-bit); canonicalize=True maps it to the dtype pyjax computes in."""
    if isinstance(x, type) and x in _PYTHON_TYPES:
        found = _PYTHON_TYPES[x]
    elif dtypes.is_python_scalar(x):
        found = _PYTHON_TYPES[next(t for t in (bool, int, float, complex) if isinstance(x, t))]
    elif hasattr(x, "aval"):
        found = get_aval(x).dtype
    elif hasattr(x, "dtype") and not isinstance(x, type):
        found = np.dtype(x.dtype)
    else:
        try:
            found = np.dtype(x)
        except TypeError:
            raise TypeError(f"Cannot determine dtype of {x!r}") from None
    if found not in dtypes.supported_dtypes and found != dtypes.float0:
        raise TypeError(f"JAX does not support dtype {found}")
    return dtypes.canonicalize_dtype(found) if canonicalize else found


__all__ = ["optimization_barrier_p", "optimization_barrier", "stage_p", "stage", "dce_sink_p",
           "dce_sink", "platform_dependent",
           "composite", "shape_as_value", "dtype"]
