"""jax.export: a jitted function lowered to a StableHLO module that stands alone (its
constants inside), with the calling convention around it (argument and result pytrees,
avals, shardings, platforms) in an `Exported`; `Exported.call` runs it from any JAX
program through the `call_exported` primitive, whose lowering inlines the module, and
differentiates it through the VJP exported beside it. Imports api, backends, lax (custom
derivatives), core and tree_util."""
from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence

import numpy as np

from pyjax._src import config, dtypes, tree_util
from pyjax._src import sharding as sharding_mod
from pyjax._src.api import custom_derivatives, jit as jit_mod
from pyjax._src.api.autodiff import vjp as api_vjp
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch, numpy_backend, stablehlo
from pyjax._src import shape_poly
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.jaxpr import eval_jaxpr
from pyjax._src.export import serialization
from pyjax._src.random import keys
from pyjax._src.core.trace import NO_BATCHING, NO_TRANSPOSE, NOT_DIFFERENTIABLE, \
    define_primitive, no_samples

_PLATFORMS_WITH_DONATION = ("cpu", "cuda", "rocm", "tpu", "neuron")

minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10


class DisabledSafetyCheck:
    """A safety check to skip on (de)serialization: build one with `platform()` or
    `custom_call(target_name)`."""
    _impl: str

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        """Allows the compilation platform to differ from the export platform."""
        return DisabledSafetyCheck("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        """Allows the serialization of a call target not known to be stable."""
        return DisabledSafetyCheck(f"custom_call:{target_name}")

    def is_custom_call(self) -> str | None:
        """The custom call target this directive allows, else None."""
        m = re.match(r"custom_call:(.+)$", self._impl)
        return m.group(1) if m else None

    def __init__(self, _impl: str):
        self._impl = _impl

    def __str__(self):
        return self._impl
    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, DisabledSafetyCheck) and self._impl == other._impl

    def __hash__(self) -> int:
        return hash(self._impl)


@dataclasses.dataclass(frozen=True)
class Exported:
    """A JAX function lowered to StableHLO, with its calling convention (JAX's fields;
    `in_shardings_hlo`/`out_shardings_hlo` are all None, as in JAX's exports since
    3/2026: the shardings are the NamedShardings over abstract meshes that
    `in_shardings_jax`/`out_shardings_jax` lay over a mesh)."""
    fun_name: str
    in_tree: tree_util.PyTreeDef
    in_avals: tuple
    out_tree: tree_util.PyTreeDef
    out_avals: tuple
    _has_named_shardings: bool
    _in_named_shardings: tuple
    _out_named_shardings: tuple
    in_shardings_hlo: tuple
    out_shardings_hlo: tuple
    nr_devices: int
    platforms: tuple
    ordered_effects: tuple
    unordered_effects: tuple
    disabled_safety_checks: Sequence[DisabledSafetyCheck]
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple
    uses_global_constants: bool
    _get_vjp: Callable[[Exported], Exported] | None

    def mlir_module(self) -> str:
        """The StableHLO module (MLIR text) of `mlir_module_serialized`."""
        return _module_text(self.mlir_module_serialized)

    def __str__(self):
        return f"Exported(fun_name={self.fun_name}, ...)"

    def in_shardings_jax(self, mesh):
        """The arguments' shardings laid over `mesh` (a Mesh or AbstractMesh with the
        axes of the export's), None where unspecified."""
        return tuple(_sharding_over(s, mesh) for s in self._in_named_shardings)

    def out_shardings_jax(self, mesh):
        """The results' shardings laid over `mesh` (see in_shardings_jax)."""
        return tuple(_sharding_over(s, mesh) for s in self._out_named_shardings)

    def has_vjp(self) -> bool:
        """Whether this Exported can give its VJP."""
        return self._get_vjp is not None

    def vjp(self) -> Exported:
        """The exported VJP: takes the flat primal arguments then one cotangent per
        primal output, returns the cotangents of the flat primal arguments."""
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        return self._get_vjp(self)

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The bytes `deserialize` reads back, with `vjp_order` orders of VJPs (2 lets
        jax.grad(jax.grad(f)) run on the deserialized function)."""
        vjp_blob = self.vjp().serialize(vjp_order - 1) if vjp_order > 0 else None
        return serialization.encode(self, vjp_blob)

    def call(self, *args, **kwargs):
        """Calls the exported function from a JAX program (eagerly, under jit, under
        grad) with arguments of the exported pytree structure and types."""
        return call_exported(self)(*args, **kwargs)


def deserialize(blob) -> Exported:
    """The Exported that `Exported.serialize` wrote into `blob` (pyjax's format)."""
    fields, vjp_blob = serialization.decode(blob)
    checks = tuple(DisabledSafetyCheck(c) for c in fields.pop("disabled_safety_checks"))
    return Exported(**fields, disabled_safety_checks=checks,
                    _get_vjp=None if vjp_blob is None else lambda _: deserialize(vjp_blob))


def _sharding_over(named, mesh):
    if named is None:
        return None
    if mesh is None:
        return named
    abstract = mesh if isinstance(mesh, sharding_mod.AbstractMesh) else mesh.abstract_mesh
    if (abstract.axis_sizes != named.mesh.axis_sizes
            or abstract.axis_names != named.mesh.axis_names
            or abstract.axis_types != named.mesh.axis_types):
        raise ValueError(f"NamedSharding new mesh {mesh} does not match the mesh used for "
                         f"export {named.mesh}.")
    return sharding_mod.NamedSharding(mesh, named.spec, memory_kind=named.memory_kind)


@functools.lru_cache(maxsize=64)   # each call of an Exported lowers from its text
def _module_text(blob):
    return dispatch.required_xla_backend(
        "reading an exported StableHLO module", ValueError).artifact_text(blob)


def default_export_platform() -> str:
    """The platform exports are for by default: one of 'tpu', 'cpu', 'cuda', 'rocm'."""
    platform = devices_mod.default_backend()
    return "cuda" if platform == "gpu" else platform


def export(fun_jit, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = ()):
    """Exports a jitted function: returns a function of arguments (arrays, or anything
    with .shape and .dtype, such as ShapeDtypeStructs) that traces and lowers it for
    those types and returns an Exported."""
    if not isinstance(fun_jit, jit_mod.Wrapped):
        raise ValueError(
            f"Function to be exported must be the result of `jit` but is: {fun_jit}")

    def do_export(*args_specs, **kwargs_specs) -> Exported:
        chosen = (default_export_platform(),) if platforms is None else tuple(platforms)
        if not chosen or not all(isinstance(p, str) for p in chosen):
            raise TypeError(f"export: platforms must be a sequence of platform names "
                            f"(e.g. ('cpu', 'tpu')), got {platforms!r}.")
        _check_one_scope(fun_jit, args_specs, kwargs_specs)
        # pyjax's lowering is the same for every platform but for
        # lax.platform_dependent, which picks its branch by these
        with config.export_platforms(chosen):
            traced = fun_jit.trace(*args_specs, **kwargs_specs)
            lowered = traced.lower(lowering_platforms=(default_export_platform(),))
        return _export_lowered(lowered, traced.jaxpr, chosen, tuple(disabled_checks))
    return do_export


def _check_one_scope(fun_jit, args_specs, kwargs_specs):
    """The symbolic dimensions of all the arguments must share one scope."""
    first = None
    for path, spec in tree_util.tree_flatten_with_path((args_specs, kwargs_specs))[0]:
        for d in getattr(spec, "shape", ()):
            if not shape_poly.is_symbolic_dim(d):
                continue
            if first is None:
                first = (d.scope, _args_path(path))
                continue
            name = getattr(fun_jit, "__name__", "<unnamed function>")
            first[0]._check_same(d, when=f"when exporting {name}",
                                 self_descr=f"current (from {first[1]}) ",
                                 other_descr=_args_path(path))


def _export_lowered(lowered, closed, platforms, disabled_checks) -> Exported:
    version = config.export_calling_convention_version.value
    if not (minimum_supported_calling_convention_version <= version
            <= maximum_supported_calling_convention_version):
        raise ValueError(
            f"The requested export calling convention version {version} is outside the "
            f"range of supported versions [{minimum_supported_calling_convention_version}"
            f"..{maximum_supported_calling_convention_version}]")
    multi = len(platforms) > 1
    with_donation = [p for p in platforms if p in _PLATFORMS_WITH_DONATION]
    if multi and with_donation and len(with_donation) != len(platforms) and \
            any(lowered._donated):
        raise NotImplementedError(
            "In multi-platform lowering either all or no lowering platforms should support "
            f"donation. Lowering for {platforms} of which only {with_donation} support "
            "donation")
    module = lowered.standalone_module(platform_index=multi)
    _check_module(module, disabled_checks)
    blob = dispatch.required_xla_backend("jax.export", ValueError).portable_artifact(module)
    plan = lowered._plan
    in_tree, in_avals = _user_view(lowered.in_tree, closed.in_avals)
    out_tree, out_avals = _user_view(lowered.out_tree, closed.out_avals)
    if plan is None:
        nr_devices = 1
        in_named = (None,) * len(in_avals)
        out_named = (None,) * len(out_avals)
    else:
        nr_devices = plan.mesh.size
        in_named = _user_shardings(lowered.in_tree, plan.in_shardings)
        out_named = _user_shardings(lowered.out_tree, plan.out_shardings)

    def get_vjp(primal: Exported) -> Exported:
        return _export_vjp(closed, primal)

    return Exported(
        fun_name=lowered._name, in_tree=in_tree, in_avals=in_avals,
        out_tree=out_tree, out_avals=out_avals, _has_named_shardings=True,
        _in_named_shardings=in_named, _out_named_shardings=out_named,
        in_shardings_hlo=(None,) * len(in_avals), out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=nr_devices, platforms=tuple(platforms), ordered_effects=(),
        unordered_effects=(), disabled_safety_checks=disabled_checks,
        mlir_module_serialized=blob, calling_convention_version=version,
        module_kept_var_idx=tuple(range(len(in_avals))),
        uses_global_constants=multi or module.dynamic_shapes,
        _get_vjp=get_vjp)


# JAX's custom call targets with compatibility guarantees (jax/_src/export/_export.py)
_CUSTOM_CALL_TARGETS_GUARANTEED_STABLE = frozenset({
    *(f"lapack_{t}{routine}_ffi" for t in "sdcz" for routine in (
        "potrf", "geqrf", "geev", "gesdd", "getrf", "gehrd", "gees", "trsm", "gtsv")),
    *(f"lapack_{t}{routine}_ffi" for t in "sd" for routine in ("orgqr", "syevd", "sytrd")),
    *(f"lapack_{t}{routine}_ffi" for t in "cz" for routine in ("ungqr", "heevd", "hetrd")),
    "cu_lu_pivots_to_permutation", "cusolver_getrf_ffi", "hip_lu_pivots_to_permutation",
    "hipsolver_getrf_ffi", "cusolver_geqrf_ffi", "cusolver_orgqr_ffi", "hipsolver_geqrf_ffi",
    "hipsolver_orgqr_ffi", "cusolver_potrf_ffi", "hipsolver_potrf_ffi",
    "cusolver_syevd_ffi", "hipsolver_syevd_ffi", "cusolver_gesvd_ffi",
    "cusolver_gesvdj_ffi", "hipsolver_gesvd_ffi", "hipsolver_gesvdj_ffi",
    "hipsolver_gesdd_ffi", "cusolver_sytrd_ffi", "hipsolver_sytrd_ffi",
    "cusparse_gtsv2_ffi", "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
    "annotate_device_placement", "cu_threefry2x32_ffi", "hip_threefry2x32_ffi", "Eigh",
    "Qr", "ProductOfElementaryHouseholderReflectors", "LuDecomposition", "ApproxTopK",
    "stablehlo.dynamic_approx_top_k", "tf.call_tf_function", "tpu_custom_call",
    "AllocateBuffer", "mosaic_gpu_v2", "stablehlo.dynamic_reduce_window",
    "stablehlo.dynamic_rng_bit_generator", "stablehlo.dynamic_top_k", "shape_assertion"})
_CALL_TARGET = re.compile(r'call_target_name = "([^"]+)"')


def _check_module(module, disabled_checks):
    """JAX's checks of a module before it is exported: no host callbacks (their
    addresses live in this process), and only custom calls with compatibility
    guarantees unless a DisabledSafetyCheck.custom_call allows one ("ALL": any)."""
    if module.host_callbacks:
        raise NotImplementedError("serialization of host_callbacks is not yet implemented")
    allowed = _CUSTOM_CALL_TARGETS_GUARANTEED_STABLE | {
        c.is_custom_call() for c in disabled_checks if c.is_custom_call() is not None}
    if "ALL" in allowed:
        return
    bad = sorted({t for t in _CALL_TARGET.findall(module.text) if t not in allowed})
    if bad:
        raise ValueError(
            "Cannot serialize code with custom calls whose targets have no compatibility "
            "guarantees. See https://docs.jax.dev/en/latest/export/export.html"
            "#compatibility-guarantees-for-custom-calls. Examples are:\n"
            + "\n".join(f"stablehlo.custom_call @{t}" for t in bad) + ".\n")


def _user_view(tree, avals):
    """The treedef and avals JAX shows for a pytree of `avals` (pyjax's flat avals of
    `tree`): typed key arrays are leaves, of KeyAvals (inside pyjax, nodes over their
    uint32 data)."""
    example = tree_util.tree_unflatten(tree, list(avals))
    leaves, user_tree = tree_util.user_tree_flatten(example)
    return user_tree, tuple(x.aval if isinstance(x, keys.PRNGKeyArray) else x
                            for x in leaves)


def _user_shardings(tree, shardings):
    """Per user leaf, the exported NamedSharding (a key array's is its data's)."""
    nodes = tree_util.tree_unflatten(tree, [_abstract_named(s) for s in shardings])
    return tuple(x._base if isinstance(x, keys.PRNGKeyArray) else x
                 for x in tree_util.user_tree_leaves(nodes, is_leaf=lambda x: x is None))


def _flat(avals):
    """pyjax's flat avals of JAX's `avals`, and the treedef that rebuilds the list of
    their values (key arrays around their data)."""
    example = [keys.PRNGKeyArray(a.dtype._impl, ShapedArray(
        (*a.shape, *a.dtype._impl.key_shape), np.dtype(np.uint32)))
        if isinstance(a, keys.KeyAval) else a for a in avals]
    leaves, tree = tree_util.tree_flatten(example)
    return tuple(leaves), tree


def _abstract_named(s):
    """A NamedSharding over the abstract mesh of its own; None for any other."""
    if not isinstance(s, sharding_mod.NamedSharding):
        return None
    mesh = s.mesh if isinstance(s.mesh, sharding_mod.AbstractMesh) else s.mesh.abstract_mesh
    return sharding_mod.NamedSharding(mesh, s.spec, memory_kind=s.memory_kind)


def _export_vjp(closed, primal: Exported) -> Exported:
    """The VJP of `closed` exported: flat primals and output cotangents in, the flat
    primals' cotangents out (over the primal's shardings)."""
    n = len(primal.in_avals)

    def fun_vjp(*args_and_cts):
        _, pullback = api_vjp(lambda *xs: list(eval_jaxpr(closed.jaxpr, closed.consts, *xs)),
                              *args_and_cts[:n])
        return pullback(list(args_and_cts[n:]))

    in_avals = [*_flat(primal.in_avals)[0],
                *(a.to_tangent_aval() for a in _flat(primal.out_avals)[0])]
    options = {}
    if primal.nr_devices > 1:
        mesh = next(s.mesh for s in primal._in_named_shardings + primal._out_named_shardings
                    if s is not None)
        concrete = sharding_mod.concretize_mesh(
            mesh, tuple(devices_mod.devices()[:primal.nr_devices]))
        options = dict(
            in_shardings=tuple(_sharding_over(s, concrete) for s in
                               primal._in_named_shardings + primal._out_named_shardings),
            out_shardings=tuple(_sharding_over(s, concrete)
                                for s in primal._in_named_shardings))
    fun_vjp.__name__ = f"vjp_{primal.fun_name}"
    specs = [_spec_of(a) for a in in_avals]
    return export(jit_mod.jit(fun_vjp, **options), platforms=primal.platforms,
                  disabled_checks=primal.disabled_safety_checks)(*specs)


def _spec_of(aval):
    from pyjax._src.api.shapes import ShapeDtypeStruct
    return ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)


# --- calling ------------------------------------------------------------------------------

def call_exported(exported: Exported) -> Callable:
    """A function of the exported argument pytree that runs `exported` (JAX's
    jax.export.call)."""
    if not isinstance(exported, Exported):
        raise ValueError(f"The exported argument must be an export.Exported. "
                         f"Found {exported}.")

    flat_outs = _flat(exported.out_avals)[1]

    @custom_derivatives.custom_vjp
    def f_flat(*args_flat):
        return tuple(call_exported_p.bind(*args_flat, exported=exported))

    def f_flat_vjp_fwd(*args_flat):
        return f_flat(*args_flat), args_flat

    def f_flat_vjp_bwd(args_flat, cts):
        exp_vjp = exported.vjp()
        cts = [np.zeros(a.shape, dtypes.float0) if a.dtype == dtypes.float0 else ct
               for ct, a in zip(cts, exp_vjp.in_avals[len(args_flat):])]
        return tuple(call_exported(exp_vjp)(*args_flat, *cts))

    f_flat.defvjp(f_flat_vjp_fwd, f_flat_vjp_bwd)

    def f_imported(*args, **kwargs):
        args_flat, in_tree = tree_util.user_tree_flatten((args, kwargs))
        if in_tree != exported.in_tree:
            got = tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves)
            want = tree_util.tree_unflatten(exported.in_tree,
                                            [0] * exported.in_tree.num_leaves)
            diffs = "".join(
                f"   - {_args_path(path)} is a {thing1} in the invocation and a {thing2} "
                f"when exported, so {why}.\n"
                for path, thing1, thing2, why in tree_util.equality_errors(got, want))
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as "
                f"when the function '{exported.fun_name}' was exported, but they have the "
                f"following structural differences:\n{diffs}")
        outs = flat_outs.unflatten(list(f_flat(*tree_util.tree_leaves(args_flat))))
        return tree_util.tree_unflatten(exported.out_tree, outs)
    return f_imported


def _args_path(path):
    """A key path into (args, kwargs) as JAX writes it: args[0], kwargs['b']."""
    if not path:
        return "args"
    first, rest = path[0], tuple(path[1:])
    base = ("args", "kwargs")[first.idx]
    return base + tree_util.keystr(rest)


def _argument_place(exported, arg_idx, dim_idx=None):
    """args[0] / kwargs['b'].shape[1]: where a flat argument sits in (args, kwargs)."""
    paths = tree_util.tree_flatten_with_path(
        tree_util.tree_unflatten(exported.in_tree, [0] * exported.in_tree.num_leaves))[0]
    where = _args_path(paths[arg_idx][0]) if arg_idx < len(paths) else f"arg {arg_idx}"
    return where if dim_idx is None else f"{where}.shape[{dim_idx}]"


def _call_abstract_eval(*in_avals, exported):
    wanted = _flat(exported.in_avals)[0]
    for i, (want, got) in enumerate(zip(wanted, in_avals)):
        if len(want.shape) != len(got.shape):
            raise ValueError(f"Rank mismatch for {_argument_place(exported, i)}: expected "
                             f"{want.shape} and called with {got.shape}")
        if want.dtype != got.dtype:
            raise ValueError(f"Dtype mismatch for {_argument_place(exported, i)}: expected "
                             f"{want.dtype} and called with {got.dtype}")
        for d, (w, g) in enumerate(zip(want.shape, got.shape)):
            if not shape_poly.is_symbolic_dim(w) and w != g:
                raise ValueError(
                    f"Shape mismatch for {_argument_place(exported, i, d)} (expected same "
                    f"constant): expected {want.shape} and called with {got.shape}")
    env = shape_poly.solve_dim_vars(
        (_argument_place(exported, i), want.shape, got.shape)
        for i, (want, got) in enumerate(zip(wanted, in_avals)))
    return [a.update(shape=tuple(shape_poly.evaluate_dim(d, env) for d in a.shape))
            if env else a for a in _flat(exported.out_avals)[0]]


def _call_impl(*values, exported):
    dispatch.required_xla_backend(f"calling the exported function '{exported.fun_name}'")


def _call_eager(*args, exported):
    arrays = [x if dispatch.is_array(x) else numpy_backend.wrap(
        numpy_backend.host_value(x, get_aval(x)), get_aval(x)) for x in args]
    closed = dispatch.single_primitive_jaxpr(call_exported_p, [x.aval for x in arrays],
                                             {"exported": exported})
    return dispatch.run_closed_jaxpr(closed, arrays)


def _call_lower(ctx, *args, exported):
    platform = default_export_platform()
    if platform in exported.platforms:
        index = exported.platforms.index(platform)
    elif DisabledSafetyCheck.platform() in exported.disabled_safety_checks:
        index = 0
    else:
        raise ValueError(f"Function '{exported.fun_name}' was exported for platforms "
                         f"'{exported.platforms}' but it is used on '{(platform,)}'.")
    devices = ctx.module.mesh.size if ctx.module.mesh is not None else 1
    if devices != exported.nr_devices and exported.nr_devices != 1:
        raise ValueError(f"Function {exported.fun_name} was exported for "
                         f"{exported.nr_devices} devices and is called in a context with "
                         f"{devices} devices, which is not allowed.")
    args = _constrained(ctx, args, exported._in_named_shardings)
    in_avals, out_avals = _flat(exported.in_avals)[0], _flat(exported.out_avals)[0]
    # a shape-polymorphic module (or one that calls one): its dynamic types meet the
    # call's through converts, and compiling refines them from the caller's shapes
    if exported.uses_global_constants and len(exported.platforms) == 1:
        ctx.module.dynamic_shapes = True
    args = [_with_type(ctx, v, a) for v, a in zip(args, in_avals)]
    if len(exported.platforms) > 1:   # the module takes the platform's index first
        args = [ctx.constant(np.int32(index)), *args]
    outs = ctx.call_module(exported.mlir_module(), list(args), out_avals,
                           f"call_exported_{exported.fun_name}")
    outs = [_with_type(ctx, v, a) for v, a in zip(outs, ctx.avals_out)]
    return _constrained(ctx, outs, exported._out_named_shardings)


def _with_type(ctx, value, aval):
    """`value` converted to the type of `aval` where their dimensions differ (one of
    them dynamic)."""
    target = value.aval.update(shape=aval.shape)
    if stablehlo.tensor_type(target) == value.type:   # the same type: retyped only
        return stablehlo.Value(value.name, target)
    ctx.module.dynamic_shapes = True
    return ctx.op("stablehlo.convert", [value], target)


def _constrained(ctx, values, shardings):
    """`values` constrained to the exported shardings (as JAX lays the call's arguments
    and results out), in a module partitioned over a mesh."""
    mesh = ctx.module.mesh
    if mesh is None:
        return list(values)
    out = []
    for v, s in zip(values, shardings):
        if s is not None and s.mesh.size == mesh.size:   # (one device's: any context)
            name = ctx.module.mesh_name(s.mesh, f"the sharding {s} of an exported function")
            v = ctx.op("sdy.sharding_constraint", [v], v.aval,
                       {"sharding": s.to_shardy(v.aval.ndim, mesh_name=name)})
        out.append(v)
    return out


call_exported_p = define_primitive(
    "call_exported", multiple_results=True, impl=_call_impl,
    abstract_eval=_call_abstract_eval, eager=_call_eager, jvp=NOT_DIFFERENTIABLE,
    transpose=NO_TRANSPOSE, batch=NO_BATCHING, lower=_call_lower,
    samples=no_samples("needs an Exported, made by jax.export from a jitted function"),
    shown_params=lambda params: {"exported": str(params["exported"])})


# --- symbolic shapes ----------------------------------------------------------------------

def symbolic_args_specs(args, shapes_specs, constraints: Sequence[str] = (),
                        scope: shape_poly.SymbolicScope | None = None):
    """ShapeDtypeStructs for the pytree `args` (arrays or ShapeDtypeStructs), their shapes
    given by `shapes_specs`: None (the arguments' own), one spec for all, or a pytree
    prefix of `args` of specs (see symbolic_shape, which fills '_' and '...' from each
    argument's shape). All the shapes share one scope."""
    from pyjax._src.api.shapes import ShapeDtypeStruct
    if scope is None:
        scope = shape_poly.SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot use both `scope` and `constraints`")
    if isinstance(args, tuple) and isinstance(shapes_specs, list):
        shapes_specs = tuple(shapes_specs)

    def specs_for(spec, subtree):
        return tree_util.tree_map(
            lambda a: ShapeDtypeStruct(
                shape_poly.symbolic_shape(spec, like=np.shape(a), scope=scope),
                dtypes.canonicalize_dtype(a.dtype if hasattr(a, "dtype")
                                          else np.result_type(a))), subtree)

    if shapes_specs is None or isinstance(shapes_specs, str):
        return specs_for(shapes_specs, args)
    try:
        return tree_util.tree_map(specs_for, shapes_specs, args,
                                  is_leaf=lambda x: x is None)
    except ValueError as e:
        raise ValueError(f"export.symbolic_args_specs shapes_specs must be a pytree prefix "
                         f"of the arguments: {e}") from None
