"""Ahead-of-time compilation: jit(f).lower(*args) gives a Lowered (its StableHLO text),
whose compile() gives a Compiled callable with cost_analysis(). Imports api, backends,
tree_util and config."""
from __future__ import annotations

import dataclasses

import numpy as np

from pyjax._src import layout as layout_mod
from pyjax._src import sharding as sharding_mod
from pyjax._src import tree_util
from pyjax._src.api import shapes
from pyjax._src.array import Array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch, numpy_backend, stablehlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Var
from pyjax._src.core.trace import Tracer


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """What a staged computation knows of one argument leaf: its type and whether it is
    donated (the leaves of Traced/Lowered/Compiled.args_info)."""
    _aval: ShapedArray
    donated: bool

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)


def _out_info(out_tree, avals, shardings):
    """The outputs as a pytree of ShapeDtypeStructs (with their shardings)."""
    return tree_util.tree_unflatten(out_tree, [
        shapes.ShapeDtypeStruct(a.shape, a.dtype, sharding=s, weak_type=a.weak_type)
        for a, s in zip(avals, shardings)])


def compiler_ir(module, dialect=None):
    """A lowered module as an MLIR module (dialect "stablehlo", the default) or as XLA's
    HLO computation (dialect "hlo"): Lowered.compiler_ir of jit and pmap."""
    if dialect == "hlo":
        return dispatch.required_xla_backend(
            "compiler_ir(dialect='hlo')").xla_computation(module)
    if dialect not in (None, "stablehlo"):
        raise ValueError(f"compiler_ir: unknown dialect {dialect!r}; use 'stablehlo' or "
                         "'hlo'.")
    return dispatch.required_xla_backend("compiler_ir()").mlir_module(module)


def stablehlo_text(module, debug_info=False):
    """A lowered module's StableHLO text as jaxlib's MLIR prints it (as JAX shows it);
    pyjax's own generic-form text where the NumPy executor is selected."""
    xla = dispatch.xla_backend()
    return module.text if xla is None else xla.mlir_text(module, debug_info)


def args_info(in_tree, in_avals, donated):
    """The pytree ((args...), {kwargs}) of ArgInfo for a computation's dynamic arguments."""
    return tree_util.tree_unflatten(in_tree, [ArgInfo(a, bool(d))
                                              for a, d in zip(in_avals, donated)])


def result_names(out_tree):
    """'result' followed by each output leaf's key path ("result", "result[0]",
    "result['a'].u"): the names JAX gives a lowered computation's results."""
    example = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    return [f"result{tree_util.keystr(path)}"
            for path, _ in tree_util.tree_flatten_with_path(example)[0]]


def donate_argnums(args_info):
    """The flat indices of the donated argument leaves (Lowered/Compiled.donate_argnums,
    as JAX's)."""
    return tuple(i for i, x in enumerate(tree_util.tree_leaves(args_info)) if x.donated)


class Lowered:
    """A traced and lowered computation for one set of argument types."""

    def __init__(self, closed, in_tree, out_tree, donated, name, device, plan=None,
                 compiler_options=None, refs=None, hi=None):
        self._closed, self.in_tree, self.out_tree = closed, in_tree, out_tree
        self._donated, self._name, self._device = donated, name, device
        # jax.Refs: (positions of the Ref argument leaves, the refs the function closes
        # over, those of them it writes), as jit's CacheEntry holds them
        self._refs = refs
        self._hi = hi   # hijax arguments and results: jit's CacheEntry.hi
        self._plan = plan   # a dispatch.ShardingPlan when partitioned over a mesh
        self._compiler_options = compiler_options   # jit's, as (name, value) pairs
        self._module = None

    @property
    def module(self):
        if self._module is None:
            plan = self._plan
            names = result_names(self.out_tree)
            self._module = stablehlo.lower_module(
                self._closed, self._name, self._donated, result_names=names) \
                if plan is None else stablehlo.lower_module(
                    self._closed, self._name, self._donated, mesh=plan.mesh,
                    in_shardings=plan.in_shardings, out_shardings=plan.out_shardings,
                    result_names=names, in_layouts=plan.in_layouts,
                    out_layouts=plan.out_layouts)
        return self._module

    def standalone_module(self, platform_index=False):
        """The module with its constants printed inside, @main taking the arguments only
        (what jax.export serializes); with `platform_index`, first an i32 scalar that
        names the platform it runs on (JAX's convention for multi-platform modules)."""
        closed, donated, plan = self._closed, self._donated, self._plan
        names = result_names(self.out_tree)
        if platform_index:
            jaxpr = closed.jaxpr
            index = Var(ShapedArray((), np.dtype(np.int32)))
            closed = ClosedJaxpr(Jaxpr(jaxpr.constvars, [index, *jaxpr.invars],
                                       jaxpr.outvars, jaxpr.eqns, jaxpr.effects),
                                 closed.consts)
            donated = (False, *donated)
        if plan is None:
            return stablehlo.lower_module(closed, self._name, donated, const_args=False,
                                          platform_index=platform_index, result_names=names)
        in_shardings = (None, *plan.in_shardings) if platform_index else plan.in_shardings
        in_layouts = (None, *plan.in_layouts) if platform_index and plan.in_layouts \
            else plan.in_layouts
        return stablehlo.lower_module(
            closed, self._name, donated, mesh=plan.mesh, in_shardings=in_shardings,
            out_shardings=plan.out_shardings, const_args=False,
            platform_index=platform_index, result_names=names, in_layouts=in_layouts,
            out_layouts=plan.out_layouts)

    def as_text(self, dialect=None, *, debug_info=False):
        """The StableHLO module pyjax prints for this computation (MLIR text), or with
        dialect="hlo" XLA's HLO text of it (before XLA's optimizations)."""
        if dialect not in (None, "stablehlo", "mhlo", "hlo"):
            raise ValueError(f"Lowered.as_text: unknown dialect {dialect!r}; use "
                             "'stablehlo' (the default) or 'hlo'.")
        if dialect == "hlo":
            xla = dispatch.xla_backend()
            if xla is None:
                raise RuntimeError("Lowered.as_text(dialect='hlo') needs XLA (jaxlib) as "
                                   "the executor; the StableHLO text (the default dialect) "
                                   "needs no compiler.")
            return xla.hlo_text(self.module, debug_info)
        return stablehlo_text(self.module, debug_info)

    def compiler_ir(self, dialect=None):
        """The module as an MLIR module, or with dialect="hlo" as XLA's HLO computation."""
        return compiler_ir(self.module, dialect)

    @property
    def _arg_avals(self):
        """The avals of the arguments (the computation's last inputs may be the values of
        jax.Refs the function closes over)."""
        return self._closed.in_avals[:self.in_tree.num_leaves]

    @property
    def _result_avals(self):
        """The avals of the results (its last outputs may be values stored in Refs)."""
        return self._closed.out_avals[:self.out_tree.num_leaves]

    @property
    def args_info(self):
        return args_info(self.in_tree, self._arg_avals, self._donated)

    @property
    def donate_argnums(self):
        return donate_argnums(self.args_info)

    @property
    def in_avals(self):
        """The arguments' avals as the ((args...), {kwargs}) pytree, each carrying the
        type-level sharding of the layout it is compiled for (as JAX's)."""
        return in_avals(self.in_tree, self._arg_avals, self._plan)

    @property
    def out_info(self):
        """The outputs' shapes and dtypes (their shardings are known once compiled)."""
        avals = self._result_avals
        return _out_info(self.out_tree, avals, [None] * len(avals))

    def compile(self, compiler_options=None, *, device_assignment=None):
        """Compiles now (or fetches from the caches) and returns a Compiled.
        `compiler_options` are XLA's (name -> value; XLA checks them), added to jit's;
        `device_assignment`, if given, must be the devices the computation was lowered
        for; for one lowered over an AbstractMesh (for named platforms), it is required
        and gives the devices."""
        plan = self._plan
        if plan is not None and isinstance(plan.mesh, sharding_mod.AbstractMesh):
            if device_assignment is None:
                raise RuntimeError("device_assignment cannot be `None` during compilation. "
                                   "Please pass a tuple of devices to "
                                   "`.compile(device_assignment=)`")
            plan = concrete_plan(plan, tuple(device_assignment))
        elif device_assignment is not None:
            devices = list(self._plan.mesh._flat_devices) if self._plan is not None \
                else [self._device]
            if [d.id for d in device_assignment] != [d.id for d in devices]:
                raise ValueError(
                    "device_assignment passed to `.compile` must match the "
                    "device_assignment calculated from array shardings and out_shardings. "
                    f"Got device ids passed to compile: {[d.id for d in device_assignment]}"
                    " and devices ids calculated from array shardings and out_shardings: "
                    f"{[d.id for d in devices]}")
        options = dict(self._compiler_options or ())
        options.update(compiler_options or {})
        return Compiled(self, plan, options_key(options))

    def cost_analysis(self):
        """XLA's estimate of flops, transcendentals and bytes accessed."""
        return self.compile().cost_analysis()

    def __repr__(self):
        return f"<Lowered jit({self._name})>"


class Compiled:
    """A compiled computation; call it with arguments of the lowered types (without the
    static ones)."""

    def __init__(self, lowered, plan, compiler_options=None):
        self._lowered, self._plan = lowered, plan   # the plan over concrete devices
        self._compiler_options = compiler_options
        closed = lowered._closed
        if plan is not None and devices_mod.xla_runtime() is not None:
            self._executable = dispatch.sharded_executable(closed, lowered._donated,
                                                           plan, compiler_options).run
        else:
            self._executable = dispatch.executable_for(closed, lowered._donated,
                                                       lowered._device,
                                                       compiler_options).run
        self.in_tree, self.out_tree = lowered.in_tree, lowered.out_tree
        self.args_info = lowered.args_info
        self.in_avals = lowered.in_avals
        self.donate_argnums = lowered.donate_argnums

    @property
    def input_shardings(self):
        """The Sharding of each argument leaf, as the (args, kwargs) pytree."""
        return tree_util.tree_unflatten(self.in_tree, self._shardings("in"))

    @property
    def output_shardings(self):
        return tree_util.tree_unflatten(self.out_tree, self._shardings("out"))

    @property
    def out_info(self):
        """The outputs' shapes, dtypes and shardings."""
        return _out_info(self.out_tree, self._lowered._result_avals,
                         self._shardings("out"))

    @property
    def input_formats(self):
        """The Format (layout XLA compiled for, and sharding) of each argument leaf, as
        the (args, kwargs) pytree."""
        return tree_util.tree_unflatten(self.in_tree, self._formats("in"))

    @property
    def output_formats(self):
        """The Format (layout and sharding) of each result leaf, as the output pytree."""
        return tree_util.tree_unflatten(self.out_tree, self._formats("out"))

    def _formats(self, which):
        ins, outs = dispatch.xla_backend().program_layouts(
            self._xla_executable(f"Compiled.{which}put_formats").loaded)
        nconsts = len(ins) - len(self._lowered._closed.in_avals)
        layouts = ins[nconsts:][:self.in_tree.num_leaves] if which == "in" else \
            outs[:self.out_tree.num_leaves]
        return [layout_mod.Format(layout, s)
                for layout, s in zip(layouts, self._shardings(which))]

    def _shardings(self, which):
        plan, exe = self._plan, self._executable
        found = getattr(exe, f"{which}_shardings", None)
        if found is None:   # one device
            device = self._lowered._device
            count = self.in_tree.num_leaves if which == "in" else self.out_tree.num_leaves
            return [sharding_mod.SingleDeviceSharding(device)] * count
        if which == "in":
            return [a if a is not None else s for a, s in zip(plan.in_shardings, found)]
        return [dispatch.settled_sharding(a, s, v) if a is not None else s
                for a, s, v in zip(plan.out_shardings, found, self._lowered._closed.out_avals)]

    def __call__(self, *args, **kwargs):
        leaves, in_tree = tree_util.flatten((args, kwargs))
        for x in leaves:
            if isinstance(x, Tracer):
                raise TypeError(
                    "Cannot apply JAX transformations to a function lowered and compiled "
                    "for a particular signature. Detected argument of Tracer type "
                    f"{type(x)}.")
        closed = self._lowered._closed
        if in_tree != self.in_tree:
            raise TypeError(_tree_mismatch(in_tree, self.in_tree))
        written = []
        hi, hi_leaves = self._lowered._hi, leaves
        if self._lowered._refs is not None:
            # the Refs' values go in; what the computation leaves in them is stored back
            ref_leaves, closed_refs, closed_written = self._lowered._refs
            written = [leaves[i] for i in ref_leaves] + list(closed_written)
            leaves = [x[...] if i in ref_leaves else x for i, x in enumerate(leaves)]
            leaves = (hi.lower_args(leaves) if hi is not None else leaves) + \
                [ref[...] for ref in closed_refs]
        elif hi is not None:
            leaves = hi.lower_args(leaves)
        avals = [get_aval(x) for x in leaves]
        expected = closed.in_avals
        wrong = [i for i, (a, e) in enumerate(zip(avals, expected)) if not a.same_type(e)]
        if wrong:
            names = dispatch.arg_labels(closed)
            raise TypeError(
                "Argument types differ from the types for which this computation was "
                "compiled. Perhaps you are calling the compiled executable with a different "
                "enable_x64 mode than when it was AOT compiled? The mismatches are:\n"
                + "\n".join(f"Argument '{names[i]}' compiled with "
                            f"{dispatch.jax_type_str(expected[i])} and called with "
                            f"{dispatch.jax_type_str(avals[i])}" for i in wrong))
        dispatch.check_execution_allowed(self._lowered._name)
        arrays = [x if type(x) is Array else numpy_backend.wrap(
            numpy_backend.host_value(x, e), e) for x, e in zip(leaves, expected)]
        plan = self._plan
        if plan is not None:
            outs = dispatch.run_sharded(closed, arrays, self._lowered._donated,
                                        plan.in_shardings, plan.out_shardings,
                                        compiler_options=self._compiler_options,
                                        layouts=(plan.in_layouts, plan.out_layouts))
        else:
            outs = dispatch.run_closed_jaxpr(closed, arrays, self._lowered._donated,
                                             compiler_options=self._compiler_options)
        num_out = len(outs) - len(written)
        for ref, value in zip(written, outs[num_out:]):
            ref._value = value
        results = list(outs[:num_out])
        if hi is not None:   # store the mutable arguments' values, raise hijax results
            num_out -= hi.num_final()
            hi.store(hi_leaves, results[num_out:])
            results = hi.raise_results(results[:num_out])
        return tree_util.tree_unflatten(self.out_tree, results[:num_out])

    def _xla_executable(self, what):
        if not hasattr(self._executable, "loaded"):
            raise NotImplementedError(
                f"{what} needs the XLA executor; the NumPy executor is selected "
                "(pyjax_executor / PYJAX_EXECUTOR) or jaxlib is not installed.")
        return self._executable

    def cost_analysis(self):
        """XLA's cost estimate: a dict with 'flops', 'transcendentals', 'bytes accessed'."""
        return self._xla_executable("cost_analysis").cost_analysis()

    def memory_analysis(self):
        """XLA's memory statistics of the program: its argument, output, alias and
        temporary sizes in bytes (argument_size_in_bytes, ...), as JAX's."""
        loaded = self._xla_executable("memory_analysis").loaded
        return dispatch.xla_backend().memory_analysis(loaded)

    def runtime_executable(self):
        """The executable XLA's runtime loaded (jaxlib's LoadedExecutable), as JAX's;
        None where there is none (the NumPy executor)."""
        return getattr(self._executable, "loaded", None)

    def as_text(self):
        """The optimised HLO that XLA compiled (the NumPy executor has none)."""
        text = getattr(self._executable, "as_text", None)
        return text() if text is not None else None

    def __repr__(self):
        return f"<Compiled jit({self._lowered._name})>"


def _tree_mismatch(given, compiled):
    """JAX's message for a compiled function called with arguments of another structure."""
    errors = list(tree_util.equality_errors_pytreedef(given, compiled))
    lines = [f"Function compiled with input pytree does not match the input pytree it was "
             f"called with. There are {len(errors)} mismatches, including:"]
    for (where, *path), now, seen, why in errors:
        base = ("args", "kwargs")[where.idx]
        lines.append(f"    * at {base}{tree_util.keystr(tuple(path))}, seen {seen} but now "
                     f"given {now}, so {why}")
    return "\n".join(lines)


def options_key(compiler_options):
    """XLA compiler options (a dict) as the hashable (name, value) pairs caches key on,
    or None for none."""
    return tuple(sorted(compiler_options.items())) if compiler_options else None


def in_avals(in_tree, avals, plan):
    """The ((args...), {kwargs}) pytree of argument avals typed as `plan` lays them out."""
    if plan is not None:
        avals = [a if s is None else sharding_mod.typed_aval(a, s)
                 for a, s in zip(avals, plan.in_shardings)]
    return tree_util.tree_unflatten(in_tree, avals)


def concrete_plan(plan, devices):
    """A ShardingPlan over an AbstractMesh laid over `devices` (JAX's errors when their
    number differs from a sharding's mesh)."""
    in_shardings, out_shardings = (
        tuple(sharding_mod.concretize_sharding(s, devices) for s in shardings)
        for shardings in (plan.in_shardings, plan.out_shardings))
    if plan.mesh.size != len(devices):
        raise ValueError(f"The size of abstract mesh {plan.mesh.size} must match the "
                         f"length of device assignment: {len(devices)}")
    return dispatch.ShardingPlan(sharding_mod.concretize_mesh(plan.mesh, devices),
                                 in_shardings, out_shardings, plan.in_layouts,
                                 plan.out_layouts)


def lower(closed, in_tree, out_tree, donated, name, leaves, device=None, shardings=None,
          compiler_options=None, lowering_platforms=None, traced_mesh=None, refs=None,
          hi=None):
    """The Lowered for a traced jaxpr and the argument leaves it was traced with
    (`shardings`: per argument and result leaf, the Sharding jit asks for, or None,
    when the program is partitioned over a mesh; `compiler_options`: jit's). With
    `lowering_platforms`, shardings over an AbstractMesh alone lower without devices.
    `traced_mesh`: the AbstractMesh the trace was made under (use_abstract_mesh), which
    the program is then partitioned over."""
    if shardings is not None:
        plan = dispatch.sharding_plan(closed, leaves, *shardings, where=f"jit({name})",
                                      abstract_ok=lowering_platforms is not None,
                                      context_abstract=traced_mesh)
        return Lowered(closed, in_tree, out_tree, tuple(donated), name, None, plan,
                       compiler_options)
    arrays = [x for x in leaves if type(x) is Array]
    device = device or devices_mod.common_device(arrays, f"jitted computation {name}") \
        or devices_mod.default_device()
    return Lowered(closed, in_tree, out_tree, tuple(donated), name, device,
                   compiler_options=compiler_options, refs=refs, hi=hi)
