"""Host callbacks as primitives: `debug_callback` (jax.debug.print/callback; effectful, no
results), `pure_callback` (results, no effects: removed when unused) and `io_callback`
(results and an IO effect: never removed; ordered on request). The NumPy executor calls
them directly; XLA calls them through a custom call into Python (see `lower_host_call`).
Also `inspect_sharding` (jax.debug.inspect_array_sharding), called back as the program
compiles, and the user functions pure_callback and io_callback. Imports core,
interpreters, backends and the lax families."""
from __future__ import annotations

import logging
import traceback

import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src.array import Array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends.callback_threads import running_multi_device_callback
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.backends.numpy_backend import host_value
from pyjax._src.core.avals import ShapedArray, get_aval, is_valid_jax_type
from pyjax._src.core.trace import Trace, define_primitive, set_current_trace
from pyjax._src.errors import JaxRuntimeError
from pyjax._src.interpreters import batching
from pyjax._src.lax import builders as b
from pyjax._src.lax import parallel, slicing
from pyjax._src.sharding import PartitionSpec, SingleDeviceSharding
from pyjax._src.util import fun_name

# JAX's logger for failed callbacks: libraries filter its records by this name (equinox
# hides the "jax.pure_callback failed" of its own runtime errors).
_logger = logging.getLogger("jax._src.callback")

# --- effects --------------------------------------------------------------------------------


class Effect:
    """A side effect an equation has; jaxprs keep effectful equations through DCE.
    Ordered effects run in program order."""

    name = "Effect"
    ordered = False
    io = False     # an io_callback's: vmap of a batched cond/while and remat refuse it

    def __repr__(self):
        return self.name

    __str__ = __repr__


class DebugEffect(Effect):
    name = "Debug"


class OrderedDebugEffect(Effect):
    name = "OrderedDebug"
    ordered = True


class IOEffect(Effect):
    name = "IO"
    io = True


class OrderedIOEffect(Effect):
    name = "OrderedIO"
    ordered = True
    io = True


debug_effect, ordered_debug_effect = DebugEffect(), OrderedDebugEffect()
io_effect, ordered_io_effect = IOEffect(), OrderedIOEffect()


# --- calling Python -------------------------------------------------------------------------

class FlatCallback:
    """A user callback taking flat arguments, rebuilt into (args, kwargs) by `in_tree`;
    `statics` are (position, value) leaves that are no JAX values (a dtype, a string),
    passed as they are. Equal for the same function, argument structure and statics, so
    jit caches stay warm."""

    __slots__ = ("fun", "in_tree", "statics", "__name__")

    def __init__(self, fun, in_tree, statics=()):
        self.fun, self.in_tree, self.statics = fun, in_tree, statics
        self.__name__ = fun_name(fun)

    def __call__(self, *flat_args):
        flat_args = list(flat_args)
        for i, value in self.statics:
            flat_args.insert(i, value)
        args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
        return self.fun(*args, **kwargs)

    def __eq__(self, other):
        return (type(other) is FlatCallback and self.fun is other.fun
                and self.in_tree == other.in_tree and self.statics == other.statics)

    def __hash__(self):
        return hash((id(self.fun), self.in_tree, tuple(i for i, _ in self.statics)))


def call_on_host(callback, values, api):
    """Runs `callback` on host values, as Arrays, outside any transformation (XLA may call
    from one of its own threads, where no trace is current yet). A failure is logged with
    its traceback, as JAX does: inside XLA the exception reaches the caller reworded."""
    arrays = [x if isinstance(x, Array) else Array(np.asarray(x)) for x in values]
    with set_current_trace(Trace.root):
        try:
            return callback(*arrays)
        except BaseException:
            _logger.exception("%s failed", api)
            raise


def call_as_program(callback, args, result_avals, api):
    """A pure or io callback's impl: the callback on host values, results checked. JAX
    runs these callbacks inside an XLA program even eagerly, so a failure reaches the
    caller as XLA reports a failed host callback: a JaxRuntimeError holding the
    traceback."""
    try:
        return check_results(call_on_host(callback, args, api), result_avals, api)
    except Exception:
        raise JaxRuntimeError("INTERNAL: CpuCallback error calling callback: "
                              + traceback.format_exc().rstrip()) from None


def check_results(results, result_avals, api):
    """The callback's results as numpy arrays of the declared shapes and dtypes."""
    leaves = tree_util.tree_leaves(results)
    if len(leaves) != len(result_avals):
        raise RuntimeError(f"{api}: mismatched number of outputs from the callback. "
                           f"Expected {len(result_avals)}, got {len(leaves)} "
                           "(compare with result_shape_dtypes).")
    out = []
    for i, (x, aval) in enumerate(zip(leaves, result_avals)):
        x = np.asarray(x)
        if x.dtype != aval.dtype and dtypes.canonicalize_dtype(x.dtype) == aval.dtype:
            x = x.astype(aval.dtype)
        if x.shape != aval.shape:
            raise RuntimeError(f"{api}: incorrect output shape for return value #{i}: "
                               f"expected {aval.shape}, got {x.shape}.")
        if x.dtype != aval.dtype:
            raise RuntimeError(f"{api}: incorrect output dtype for return value #{i}: "
                               f"expected {aval.dtype}, got {x.dtype}.")
        out.append(x)
    return out


class HostCall:
    """What an XLA custom call runs: the callback on numpy buffers, results checked
    (result_avals None: results ignored, as for debug callbacks). Chained calls take and
    give one extra uint8 scalar that orders them.

    In a program over several devices (`defer_errors`), a failure must not stop the
    device running the call: the others would wait for it at the next collective until
    XLA aborts the whole process. The call then gives zeros, keeps the failure's
    traceback in `errors`, and the executable raises it once the program has ended
    (backends/xla.py's `_execute_and_wait`). The callback must not start another program
    over several devices meanwhile (see backends/callback_threads.py)."""

    def __init__(self, callback, result_avals, api, chained, defer_errors=False):
        self.callback, self.result_avals = callback, result_avals
        self.api, self.chained, self.defer_errors = api, chained, defer_errors
        self.errors: list[str] = []

    def __call__(self, *buffers):
        if self.chained:
            buffers = buffers[1:]
        if not self.defer_errors:   # XLA stops the program at a failure and reports it
            return self._outputs(self._run(buffers))
        try:
            with running_multi_device_callback():
                outs = self._run(buffers)
        except Exception:
            self.errors.append(traceback.format_exc())
            outs = [np.zeros(a.shape, a.dtype) for a in self.result_avals or ()]
        return self._outputs(outs)

    def _run(self, buffers):
        results = call_on_host(self.callback, buffers, self.api)
        return [] if self.result_avals is None else \
            check_results(results, self.result_avals, self.api)

    def _outputs(self, outs):
        return tuple(outs) + ((np.zeros((), np.uint8),) if self.chained else ())


_CHAIN = ShapedArray((), np.dtype(np.uint8))


def lower_host_call(ctx, args, callback, result_avals, api, side_effect, sharding=None,
                     partitioned=False):
    """A stablehlo.custom_call of XLA's CPU Python callback target. Side-effecting calls
    in one function are chained by a dummy operand, so they run in program order. A
    partitioned call (no results, not chained) goes to the partitioned target, which
    XLA's partitioner leaves on every device with that device's blocks of the operands."""
    callbacks = getattr(ctx.module, "host_callbacks", None)
    if callbacks is None:
        raise hlo.LoweringError(f"{api} needs a module that can hold host callbacks")
    chained = side_effect and not partitioned
    mesh = ctx.module.mesh
    multi_device = ctx.module.num_replicas > 1 or (mesh is not None and mesh.size > 1)
    call = HostCall(callback, result_avals, api, chained=chained, defer_errors=multi_device)
    operands = list(args)
    out_avals = [a.strip_weak_type() for a in result_avals or ()]
    if chained:
        previous = getattr(ctx, "_callback_chain", None)
        operands.insert(0, previous if previous is not None else ctx.full(0, (), np.uint8))
        out_avals.append(_CHAIN)
    callbacks.append(call)
    target = "xla_ffi_partitioned_python_cpu_callback" if partitioned \
        else "xla_ffi_python_cpu_callback"
    attrs = {"call_target_name": f'"{target}"',
             "api_version": "4 : i32",
             "has_side_effect": "true" if side_effect else "false",
             "backend_config": f"{{index = {len(callbacks) - 1} : ui64}}"}
    if partitioned:   # its partitioner needs the layouts given (row-major, as JAX's)
        attrs["operand_layouts"] = "[" + ", ".join(_row_major(v.aval.ndim) for v in operands) + "]"
        attrs["result_layouts"] = "[]"
    if ctx.module.mesh is not None:
        attrs["sdy.sharding"] = _callback_sharding(ctx.module, out_avals, sharding)
    outs = ctx.op("stablehlo.custom_call", operands, out_avals, attrs)
    if chained:
        ctx._callback_chain = outs[-1]
        outs = outs[:-1]
    return outs


def _row_major(ndim):
    dims = ", ".join(str(d) for d in reversed(range(ndim)))
    return f"dense<[{dims}]> : tensor<{ndim}xindex>" if ndim else "dense<> : tensor<0xindex>"


def _device_sharding(sharding, api):
    """A callback's `sharding`: None, or the SingleDeviceSharding of the device it runs on
    in a partitioned program (as JAX takes it)."""
    if sharding is None or isinstance(sharding, SingleDeviceSharding):
        return sharding
    raise NotImplementedError(f"{api}(sharding=...) takes a SingleDeviceSharding (the "
                              f"device to run the callback on), got {sharding!r}.")


def _callback_sharding(module, out_avals, sharding=None):
    """Where a callback runs in a partitioned program (as JAX places it): inside a
    shard_map over every mesh axis, on each device with its block; elsewhere once, on
    the device of `sharding` (by default the program's first device)."""
    mesh, manual = module.mesh, module.manual_axes
    if manual and len(manual) < len(mesh.axis_names):
        raise NotImplementedError(
            "callbacks are only supported in spmd computations when all mesh axes are "
            "partitioned manually (no partial automatic sharding).")
    if manual:
        name = module.declare_mesh("empty_mesh", "<[]>")
        per_value = [f"<@{name}, [{', '.join(['{}'] * a.ndim)}]>" for a in out_avals]
    else:
        index = 0
        if sharding is not None:
            ids = [d.id for d in mesh.devices.flat]
            if sharding.device.id not in ids:
                raise ValueError(f"a callback's sharding puts it on {sharding.device}, "
                                 f"which is not among the program's devices {ids}.")
            index = ids.index(sharding.device.id)
        name = module.declare_mesh(f"maximal_mesh_{index}", f"<[], device_ids=[{index}]>")
        per_value = [f"<@{name}, []>"] * len(out_avals)
    return f"#sdy.sharding_per_value<[{', '.join(per_value or [f'<@{name}, []>'])}]>"


def host_lowering(prim):
    """A lowering that runs `prim`'s NumPy impl on the host through XLA's CPU callback
    target: for primitives XLA has no kernel for (SciPy's special functions). The call
    has no side effect, so XLA may drop it when its results are unused."""
    def lower(ctx, *args, **params):
        avals_out = list(ctx.avals_out)

        def run(*values):
            outs = prim.impl(*(np.asarray(v) for v in values), **params)
            outs = outs if prim.multiple_results else [outs]
            return [np.asarray(o, a.dtype) for o, a in zip(outs, avals_out)]
        outs = lower_host_call(ctx, args, HostImpl(run), avals_out, prim.name, False)
        return outs if prim.multiple_results else outs[0]
    lower.__name__ = f"lower_{prim.name}_on_host"
    return lower


class HostImpl:
    """Calls an impl with numpy values (call_on_host passes Arrays)."""

    def __init__(self, run):
        self.run = run

    def __call__(self, *arrays):
        return self.run(*(np.asarray(a) for a in arrays))


# --- debug_callback ---------------------------------------------------------------------------

def _debug_impl(*args, callback, effect, partitioned):
    call_on_host(callback, args, "jax.debug.callback")
    return []


def _debug_eager(*args, callback, effect, partitioned):
    """Outside jit the callback sees whole arrays (sharded ones gathered), partitioned
    or not, as in JAX."""
    call_on_host(callback, [host_value(x, get_aval(x)) for x in args], "jax.debug.callback")
    return []


def _debug_jvp(primals, tangents, **params):
    return debug_callback_p.bind(*primals, **params), []


def _debug_transpose(cts, *args, **params):
    raise ValueError("Transpose doesn't support debugging callbacks (jax.debug.print / "
                     "jax.debug.callback on values being transposed).")


def _debug_batch(args, dims, **params):
    """One call per example, in order (the callback sees unbatched values)."""
    size = batching.axis_size_of(args, dims)
    for i in range(size):
        sliced = [x if d is None else slicing.index_in_dim(x, i, d, keepdims=False)
                  for x, d in zip(args, dims)]
        debug_callback_p.bind(*sliced, **params)
    return [], []


def _debug_lower(ctx, *args, callback, effect, partitioned):
    mesh, manual = ctx.module.mesh, ctx.module.manual_axes
    if mesh is None or not manual or len(manual) == len(mesh.axis_names):
        return lower_host_call(ctx, args, callback, None, "jax.debug.callback", True,
                                partitioned=partitioned)
    # In a shard_map body whose other axes stay automatic (as JAX lowers it): the
    # operands are gathered over those axes, and the devices at index 0 along them all
    # run the callback (once per block of the manual axes).
    rest = [n for n in mesh.axis_names if n not in manual]

    def on_first(inner, *gathered):
        index = inner.full(0, (), np.int32)
        for name in rest:
            index = inner.binary("stablehlo.add", index,
                                 parallel.axis_index_p.rule("lower")(inner, axis_name=name))
        index = inner.op("stablehlo.clamp", [inner.full(0, (), np.int32), index,
                                             inner.full(1, (), np.int32)], index.aval)
        run = inner.region([], lambda c: lower_host_call(
            c, gathered, callback, None, "jax.debug.callback", True, partitioned=partitioned))
        inner.op("stablehlo.case", [index], [], regions=[run, inner.region([], lambda c: [])])
        return []
    ctx.manual_computation(rest, list(args), [PartitionSpec()] * len(args),
                           [x.aval for x in args], [], [], on_first)
    return []


def _noop(*args):
    return None


debug_callback_p = define_primitive(
    "debug_callback", multiple_results=True, impl=_debug_impl, eager=_debug_eager,
    abstract_eval=lambda *avals, callback, effect, partitioned: [],
    effects=lambda callback, effect, partitioned: frozenset({effect}),
    jvp=_debug_jvp, transpose=_debug_transpose, batch=_debug_batch, lower=_debug_lower,
    samples=lambda: [b.Sample([b.random_values((3,), np.float32)],
                      {"callback": FlatCallback(_noop, tree_util.tree_structure(
                          ((0,), {}))), "effect": debug_effect, "partitioned": p})
                     for p in (False, True)])


def debug_callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """Calls `callback(*args, **kwargs)` on the host with concrete arrays when the
    computation runs (at every call of a jitted function, per example under vmap), and
    not while tracing. ordered=True keeps calls in program order; partitioned=True calls
    it on each device with that device's blocks of the arrays (no gathering first)."""
    if not callable(callback):
        raise TypeError(f"jax.debug.callback expects a callable, got {callback!r}")
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    # As JAX: leaves that are no JAX values (a dtype, a string) reach the callback as is.
    statics = tuple((i, a) for i, a in enumerate(flat_args) if not is_valid_jax_type(a))
    dynamic = [a for a in flat_args if is_valid_jax_type(a)]
    effect = ordered_debug_effect if ordered else debug_effect
    debug_callback_p.bind(*dynamic, callback=FlatCallback(callback, in_tree, statics),
                          effect=effect, partitioned=bool(partitioned))


# --- inspect_sharding ---------------------------------------------------------------------------

def _inspect_impl(x, *, callback):
    """On the NumPy executor every value lives on the default device."""
    callback(SingleDeviceSharding(devices_mod.default_device()))
    return []


def _inspect_eager(x, *, callback):
    callback(x.sharding if isinstance(x, Array) else
             SingleDeviceSharding(devices_mod.default_device()))
    return []


def _inspect_jvp(primals, tangents, *, callback):
    return inspect_sharding_p.bind(*primals, callback=callback), []


def _inspect_batch(args, dims, *, callback):
    """The batched value's sharding, as JAX reports it."""
    inspect_sharding_p.bind(*args, callback=callback)
    return [], []


def _inspect_lower(ctx, x, *, callback):
    """On one device the callback gets that device's sharding as the module compiles;
    over a mesh an InspectSharding custom call (jaxlib's) calls it back from XLA's SPMD
    partitioner with the sharding the partitioner chose for x."""
    if ctx.module.num_replicas > 1:
        raise NotImplementedError("jax.debug.inspect_array_sharding is not supported "
                                  "inside pmap (as in JAX); use jit over a mesh, or "
                                  "shard_map, instead.")
    placeholder = ctx.module.inspect_sharding(callback, x.aval.ndim)
    if placeholder is not None:
        ctx.op("stablehlo.custom_call", [x], x.aval.strip_weak_type(),
               {"call_target_name": '"InspectSharding"', "has_side_effect": "true",
                "backend_config": f'"{placeholder}"'})
    return []


inspect_sharding_p = define_primitive(
    "inspect_sharding", multiple_results=True, impl=_inspect_impl, eager=_inspect_eager,
    abstract_eval=lambda aval, *, callback: [],
    effects=lambda callback: frozenset({debug_effect}),   # kept although it has no results
    jvp=_inspect_jvp, transpose=lambda cts, x, *, callback: [None], batch=_inspect_batch,
    lower=_inspect_lower,
    samples=lambda: [b.Sample([b.random_values((3,), np.float32)], {"callback": _noop})])


# --- pure_callback ----------------------------------------------------------------------------

def _pure_impl(*args, callback, result_avals, vmap_method, sharding):
    return call_as_program(callback, args, result_avals, "jax.pure_callback")


def _pure_jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


def _pure_transpose(cts, *args, **params):
    raise ValueError("Pure callbacks do not support transpose. Please use `jax.custom_vjp` "
                     "to use callbacks while taking gradients.")


def _sequential(prim, args, dims, params):
    """The callback once per example: a scan over the batched arguments."""
    from pyjax._src.lax.control_flow.scan import scan
    size = batching.axis_size_of(args, dims)
    batched = [batching.moveaxis(x, d, 0) for x, d in zip(args, dims) if d is not None]
    flags = [d is not None for d in dims]

    def step(carry, xs):
        it = iter(xs)
        merged = [next(it) if f else x for x, f in zip(args, flags)]
        return carry, prim.bind(*merged, **params)

    _, outs = scan(step, (), batched, length=size)
    return outs, [0] * len(outs)


def batch_by_vmap_method(prim, args, dims, params):
    """A callback primitive's batching, as its `vmap_method` param says: once per example
    (sequential), or once with the batch as the leading axis of the batched arguments
    (legacy_vectorized), of every argument (broadcast_all), or with a size-1 leading axis
    on the unbatched ones (expand_dims)."""
    vmap_method = params["vmap_method"]
    size = batching.axis_size_of(args, dims)
    if vmap_method in ("sequential", "sequential_unrolled"):
        return _sequential(prim, args, dims, params)
    if vmap_method not in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        raise NotImplementedError(
            f"vmap is only supported for the {prim.name} primitive when vmap_method is one "
            "of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method}.")
    batched_avals = tuple(ShapedArray((size, *a.shape), a.dtype)
                          for a in params["result_avals"])
    moved = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
    if vmap_method in ("expand_dims", "broadcast_all"):
        width = size if vmap_method == "broadcast_all" else 1
        moved = [batching.move_or_broadcast(x, None, 0, width) if d is None else x
                 for x, d in zip(moved, dims)]
    outs = prim.bind(*moved, **dict(params, result_avals=batched_avals))
    return outs, [0] * len(outs)


def _pure_batch(args, dims, **params):
    return batch_by_vmap_method(pure_callback_p, args, dims, params)


def _pure_lower(ctx, *args, callback, result_avals, vmap_method, sharding):
    return lower_host_call(ctx, args, callback, result_avals, "jax.pure_callback", False,
                            sharding)


def _square_host(x):
    return np.square(np.asarray(x))


_SAMPLE_TREE = tree_util.tree_structure(((0,), {}))

pure_callback_p = define_primitive(
    "pure_callback", multiple_results=True, impl=_pure_impl,
    abstract_eval=lambda *avals, callback, result_avals, vmap_method, sharding: list(
        result_avals),
    jvp=_pure_jvp, transpose=_pure_transpose, batch=_pure_batch, lower=_pure_lower,
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32)],
                      {"callback": FlatCallback(_square_host, _SAMPLE_TREE),
                       "result_avals": (ShapedArray((2, 3), np.dtype(np.float32)),),
                       "vmap_method": "expand_dims", "sharding": None})])

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None)


def shape_dtype_avals(result_shape_dtypes, api):
    leaves, out_tree = tree_util.tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError(f"{api}: result_shape_dtypes must be a pytree of objects with "
                            f"`shape` and `dtype` (e.g. jax.ShapeDtypeStruct), got {leaf!r}")
        dtype = np.dtype(leaf.dtype)
        if dtypes.canonicalize_dtype(dtype) != dtype:
            raise ValueError(f"{api}: result_shape_dtypes cannot specify 64-bit types when "
                             f"`jax_enable_x64` is disabled (got {dtype}).")
        avals.append(ShapedArray(tuple(leaf.shape), dtype))
    return tuple(avals), out_tree


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Calls the pure host function `callback(*args, **kwargs)` from inside transformed
    code; its results must match `result_shape_dtypes`. The call may be skipped when its
    results are unused. Under vmap it runs as `vmap_method` says; it has no derivative
    (wrap it in jax.custom_jvp to give it one)."""
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be one of the allowed methods {VMAP_METHODS}, "
                         f"but got: {vmap_method}")
    if not callable(callback):
        raise TypeError(f"jax.pure_callback expects a callable, got {callback!r}")
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    avals, out_tree = shape_dtype_avals(result_shape_dtypes, "jax.pure_callback")
    outs = pure_callback_p.bind(*flat_args, callback=FlatCallback(callback, in_tree),
                                result_avals=avals, vmap_method=vmap_method,
                                sharding=_device_sharding(sharding, "jax.pure_callback"))
    return tree_util.tree_unflatten(out_tree, outs)


# --- io_callback ------------------------------------------------------------------------------

def _io_impl(*args, callback, result_avals, ordered, sharding):
    return call_as_program(callback, args, result_avals, "jax.io_callback")


def _io_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _io_transpose(cts, *args, **params):
    raise ValueError("IO callbacks do not support transpose.")


def _io_batch(args, dims, *, callback, result_avals, ordered, sharding):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _sequential(io_callback_p, args, dims,
                       dict(callback=callback, result_avals=result_avals, ordered=False,
                            sharding=sharding))


def _io_lower(ctx, *args, callback, result_avals, ordered, sharding):
    return lower_host_call(ctx, args, callback, result_avals, "jax.io_callback", True,
                            sharding)


io_callback_p = define_primitive(
    "io_callback", multiple_results=True, impl=_io_impl,
    abstract_eval=lambda *avals, callback, result_avals, ordered, sharding: list(
        result_avals),
    effects=lambda callback, result_avals, ordered, sharding: frozenset(
        {ordered_io_effect if ordered else io_effect}),
    jvp=_io_jvp, transpose=_io_transpose, batch=_io_batch, lower=_io_lower,
    samples=lambda: [b.Sample([b.random_values((3,), np.float32)],
                      {"callback": FlatCallback(_square_host, _SAMPLE_TREE),
                       "result_avals": (ShapedArray((3,), np.dtype(np.float32)),),
                       "ordered": False, "sharding": None})])


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False,
                **kwargs):
    """Calls the impure host function `callback(*args, **kwargs)` from inside transformed
    code, once per execution and never removed; ordered=True keeps calls in program order
    (and forbids vmap)."""
    if not callable(callback):
        raise TypeError(f"io_callback expects a callable, got {callback!r}")
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    avals, out_tree = shape_dtype_avals(result_shape_dtypes, "io_callback")
    outs = io_callback_p.bind(*flat_args, callback=FlatCallback(callback, in_tree),
                              result_avals=avals, ordered=bool(ordered),
                              sharding=_device_sharding(sharding, "io_callback"))
    return tree_util.tree_unflatten(out_tree, outs)


def effects_barrier():
    """Waits until the effects of every dispatched computation have happened. Computations
    with callbacks finish them before their call returns, so there is nothing left to wait
    for; kept for programs written for JAX, where prints may lag behind."""


__all__ = ["effects_barrier", "debug_callback_p", "pure_callback_p", "io_callback_p",
           "debug_callback", "pure_callback", "io_callback", "host_lowering", "DebugEffect",
           "OrderedDebugEffect", "IOEffect", "OrderedIOEffect", "Effect", "HostImpl",
           "VMAP_METHODS", "shape_dtype_avals", "lower_host_call", "batch_by_vmap_method"]
