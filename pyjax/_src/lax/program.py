"""lax operations about the program more than the values: optimization_barrier
(optimization_barrier_p, XLA's barrier against moving work across it), stage (lifts a
value into the active trace), dce_sink (keeps a value's computation), platform_dependent
(the branch for the platform the code runs on), composite (a named decomposition),
shape_as_value and dtype. Imports core, interpreters, backends and the lax families."""
from __future__ import annotations

import functools
import operator

import numpy as np

from pyjax._src import config, dtypes, tree_util
from pyjax._src.array import Array, as_array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import numpy_backend
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Trace, Tracer, current_trace, define_primitive
from pyjax._src.errors import UnexpectedTracerError
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
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


def _dce_sink_lowering(ctx, x, *, prevent_mlir_dce):
    if prevent_mlir_dce:   # a side-effecting call of jaxlib's no-op target: XLA keeps it
        ctx.op("stablehlo.custom_call", [x], [],
               {"call_target_name": '"dce_sink"', "api_version": "4 : i32",
                "has_side_effect": "true", "backend_config": "{}"})
    return []


dce_sink_p = define_primitive(
    "dce_sink", multiple_results=True, impl=lambda x, **_: [],
    abstract_eval=lambda x, **_: [], effects=lambda **_: frozenset({no_dce_effect}),
    jvp=lambda primals, tangents, **params: (dce_sink_p.bind(*primals, **params), []),
    transpose=lambda cts, x, **_: [None], is_linear=True,
    batch=lambda args, dims, **params: (dce_sink_p.bind(*args, **params), []),
    lower=_dce_sink_lowering,
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32)],
                              {"prevent_mlir_dce": p}) for p in (False, True)])


def dce_sink(val, *, prevent_mlir_dce: bool = False):
    """Marks every leaf of val as used, so jaxpr dead-code elimination keeps the
    computation that produces it. Returns nothing. With prevent_mlir_dce, XLA keeps it
    too (a side-effecting custom call consumes the value)."""
    for leaf in tree_util.tree_leaves(val):
        dce_sink_p.bind(leaf, prevent_mlir_dce=bool(prevent_mlir_dce))


# --- platform_dependent ---------------------------------------------------------------------

def platform_dependent(*args, default=None, **per_platform):
    """Calls the branch for the platform of the default device with `args`: keyword
    branches are named by platform ('cpu', 'cuda', 'rocm', 'tpu', or any other name, as
    in JAX, which then never matches here); `default` serves the others."""
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a "
                            "callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
    exporting = config.export_platforms.value   # jax.export's platforms, else None
    if exporting is not None and len(exporting) > 1:
        branches = {per_platform.get(p, default) for p in exporting}
        if len(branches) > 1:
            raise ValueError(
                f"lax.platform_dependent has different branches for the platforms "
                f"{exporting} being exported together; pyjax lowers one branch per "
                "module: export for each platform separately.")
        platform = exporting[0]
    else:
        platform = exporting[0] if exporting is not None \
            else devices_mod.default_device().platform
    branch = per_platform.get({"gpu": "cuda"}.get(platform, platform), default)
    if branch is None:
        # JAX's words: its platform_index has no lowering for a platform without a branch
        groups: dict = {}
        for name, fun in per_platform.items():
            groups.setdefault(id(fun), []).append(name)
        platforms = tuple(tuple(names) for names in groups.values())
        raise NotImplementedError(
            f"MLIR translation rule for primitive 'platform_index(platforms={platforms})' "
            f"not found for platform {platform}")
    return branch(*args)


# --- composite --------------------------------------------------------------------------------

def composite(decomposition, name, version=0):
    """`decomposition` as the composite operation `name` (version `version`): one
    composite_p equation, lowered to stablehlo.composite whose decomposition is a private
    function, so a compiler that knows `name` may emit its own kernel. Positional
    arguments are the operands; keyword arguments are attributes (static: Python
    scalars, strings, dtypes, NumPy arrays; None leaves one out)."""
    if not callable(decomposition):
        raise TypeError(f"composite expects a callable decomposition, got {decomposition!r}.")
    if not isinstance(name, str) or not name:
        raise TypeError(f"composite: name must be a non-empty string, got {name!r}.")
    version = operator.index(version)
    if version < 0:
        raise ValueError(f"composite: version must be nonnegative, got {version}.")

    @functools.wraps(decomposition)
    def composite_fun(*args, **kwargs):
        if any(isinstance(v, Tracer) for v in tree_util.tree_leaves(kwargs)):
            raise UnexpectedTracerError(
                "Found a JAX Tracer as an attribute in the decomposition for the composite "
                f"op '{name}'. This means that the decomposition function closes over a "
                "value that is involved in a JAX transformation. Any values that aren't "
                "explicitly known at compile time must be explicitly passed as arguments "
                "to the composite.\n\nNote: If you are passing jax arrays as attributes, "
                "use numpy arrays instead.")
        leaves, in_tree = tree_util.tree_flatten(args)
        found = {}

        def flat(*xs):
            out = decomposition(*tree_util.tree_unflatten(in_tree, xs), **kwargs)
            out_leaves, found["tree"] = tree_util.tree_flatten(out)
            return out_leaves

        jaxpr, consts = pe.trace_to_jaxpr(flat, [get_aval(x) for x in leaves],
                                          pe.debug_info_of(decomposition))
        if any(isinstance(c, Tracer) for c in consts):
            raise UnexpectedTracerError(
                "Found a JAX Tracer as a constant in the decomposition for the composite "
                f"op '{name}'. This means that the decomposition function closes over a "
                "value that is involved in a JAX transformation. Any values that aren't "
                "explicitly known at compile time must be explicitly passed as arguments "
                "to the composite.")
        # constants are the decomposition's leading arguments, as JAX lowers them
        closed = jx.ClosedJaxpr(jx.convert_constvars_to_invars(jaxpr))
        outs = composite_p.bind(*consts, *leaves, name=name, version=version, jaxpr=closed,
                                attributes=tuple(kwargs.items()))
        return tree_util.tree_unflatten(found["tree"], outs)
    return composite_fun


def _no_derivative(which, *args, **params):
    raise ValueError(f"{which} rule for composite not implemented. You can use "
                     "`jax.custom_jvp` to add support. See "
                     "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


def _attribute_text(value, where, in_array=False):
    """An attribute value as MLIR prints it (as JAX's ir_attribute converts it). Inside
    an array attribute (a tuple or list) MLIR leaves out the default i64/f64 types."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return f"{int(value)}" + ("" if in_array else " : i64")
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6e}" + ("" if in_array else " : f64")
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_attribute_text(v, where, True) for v in value) + "]"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value,
                                                                             np.generic)):
        return hlo.element_type(value)
    if isinstance(value, (np.ndarray, Array)):
        value = np.asarray(value)
        return hlo.dense_attr(value, get_aval(value))
    raise TypeError(f"composite {where}: attribute values must be Python scalars, strings, "
                    f"dtypes, NumPy arrays or sequences of them, got "
                    f"{type(value).__name__} {value!r}.")


def _composite_lower(ctx, *args, name, version, jaxpr, attributes):
    fname = ctx.function(jaxpr, name)
    attrs = {"name": f'"{name}"'}
    shown = {k: _attribute_text(v, name) for k, v in attributes if v is not None}
    if shown:
        attrs["composite_attributes"] = "{" + ", ".join(
            f"{k} = {v}" for k, v in sorted(shown.items())) + "}"
    attrs["decomposition"] = f"@{fname}"
    if version:
        attrs["version"] = f"{version} : i32"
    return ctx.op("stablehlo.composite", list(args),
                  [a.strip_weak_type() for a in jaxpr.out_avals], attrs)


def _composite_samples():
    from pyjax._src.lax import elementwise as ew
    x = b.random_values((2, 3), np.float32)
    jaxpr, _ = pe.trace_to_jaxpr(lambda a: [ew.mul(a, a)], [get_aval(x)])
    return [b.Sample([x], {"name": "my.square", "version": 1, "jaxpr": jx.ClosedJaxpr(jaxpr),
                           "attributes": (("k", 3), ("tag", "t"))})]


composite_p = define_primitive(
    "composite", multiple_results=True,
    impl=lambda *args, jaxpr, **_: numpy_backend.execute_closed_jaxpr(jaxpr, list(args)),
    abstract_eval=lambda *avals, jaxpr, **_: jaxpr.out_avals,
    jvp=functools.partial(_no_derivative, "JVP"),
    transpose=functools.partial(_no_derivative, "Transpose"),
    batch=batching.call_rule, lower=_composite_lower, samples=_composite_samples,
    shown_params=lambda params: dict(sorted(params.items())),   # JAX prints them sorted
    is_higher_order=True)


# --- values from shapes and dtypes ----------------------------------------------------------

def shape_as_value(shape):
    """A shape as a 1-D integer array of its dimensions."""
    dims = [operator.index(d) for d in shape]
    return Array(np.array(dims, dtypes.default_int_dtype()))


def dtype(x):
    """The dtype JAX computes `x` in: Python scalars and their types give the default
    dtypes; NumPy values, scalar types, dtypes and names are canonicalized (a 64-bit one
    while jax_enable_x64 is off follows jax_explicit_x64_dtypes); a JAX array's own dtype
    is kept, as JAX 0.10.2's lax.dtype does."""
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if isinstance(x, type) and (x in (bool, int, float, complex) or issubclass(x, np.generic)):
        return dtypes.check_user_dtype(x, "dtype")
    if dtypes.is_python_scalar(x):
        return dtypes.check_user_dtype(next(t for t in (bool, int, float, complex)
                                            if isinstance(x, t)), "dtype")
    if hasattr(x, "aval"):
        return get_aval(x).dtype
    explicit = isinstance(x, (str, np.dtype))
    if explicit:
        found = np.dtype(x)
    elif isinstance(getattr(x, "dtype", None), np.dtype):
        found = x.dtype
    else:
        try:
            found = np.result_type(x)
        except TypeError:
            raise TypeError(f"Cannot determine dtype of {x}") from None
    if found not in dtypes.supported_dtypes and found != dtypes.float0:
        raise TypeError(f"Value '{x}' with dtype {found} is not a valid JAX array type. Only "
                        "arrays of numeric types are supported by JAX.")
    return dtypes.check_user_dtype(found, "dtype") if explicit \
        else dtypes.canonicalize_dtype(found)


__all__ = ["optimization_barrier_p", "optimization_barrier", "stage_p", "stage", "dce_sink_p",
           "dce_sink", "platform_dependent",
           "composite_p", "composite", "shape_as_value", "dtype"]
