"""Primitives that libraries define through JAX's extension API (jax.extend.core.Primitive
with def_impl/def_abstract_eval, and rules registered in the tables of
jax.interpreters.ad/batching/mlir). Each table writes the rule, adapted to pyjax's rule
conventions, into the primitive's slot, so an extension primitive is traced, differentiated,
transposed, batched and compiled (through pyjax's StableHLO printer) like a built-in one.
Imports core, interpreters, backends.stablehlo, lax.callbacks and array."""
from __future__ import annotations

import copy
import weakref
from collections.abc import MutableMapping

import numpy as np

from pyjax._src.array import Array
from pyjax._src.core import trace as core_trace
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace import Tracer, registered_primitives
from pyjax._src.interpreters import ad
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax.callbacks import lower_host_call


class _AnyPrimitive(type):
    """In JAX every primitive, built-in or not, is a `jax.extend.core.Primitive`: code that
    walks jaxprs checks `isinstance(eqn.primitive, Primitive)` (jaxtyping annotations)."""

    def __instancecheck__(cls, instance):
        if cls is Primitive:
            return isinstance(instance, core_trace.Primitive)
        return super().__instancecheck__(instance)


class Primitive(core_trace.Primitive, metaclass=_AnyPrimitive):
    """A primitive defined outside pyjax (JAX's `jax.extend.core.Primitive`). Its impl and
    abstract evaluation are given with `def_impl`/`def_abstract_eval`; its other rules go
    in the tables of `jax.interpreters` (ad.primitive_jvps, batching.primitive_batchers,
    mlir.register_lowering ...)."""

    def __init__(self, name: str):
        super().__init__(name, multiple_results=False)
        self._user_impl = None
        self.eager = self.impl   # until def_impl: JAX's "Evaluation rule ... not implemented"
        _extension_primitives.add(self)

    def def_impl(self, impl):
        """`impl(*arrays, **params)` runs the primitive eagerly (on pyjax Arrays; it may
        call jax.numpy)."""
        self._user_impl = impl
        self.impl = self._run_impl
        # bound outside any transformation, the primitive is its impl on the arguments as
        # given (JAX's eager evaluation needs no abstract evaluation rule)
        self.eager = impl
        return impl

    def _run_impl(self, *values, **params):
        if any(isinstance(v, Tracer) for v in values):
            # called by user code under a transformation (as JAX's `prim.impl(...)` may
            # be): the impl is JAX code, traced like any other
            return self._user_impl(*values, **params)
        args = [Array(v) if isinstance(v, np.ndarray) else v for v in values]
        with core_trace.set_current_trace(core_trace.Trace.root):
            out = self._user_impl(*args, **params)
        if self.multiple_results:
            return [np.asarray(o) for o in out]
        return np.asarray(out)

    def def_abstract_eval(self, abstract_eval):
        """`abstract_eval(*avals, **params)` gives the output aval (a list of them with
        multiple_results)."""
        def checked(*avals, **params):
            return self._checked_output(abstract_eval(*avals, **params))
        self.abstract_eval = checked
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval):
        """Like def_abstract_eval, for a rule returning (avals, effects)."""
        def abstract_eval(*avals, **params):
            return self._checked_output(effectful_abstract_eval(*avals, **params)[0])
        self.abstract_eval = abstract_eval
        self.effects = lambda **params: frozenset()
        return effectful_abstract_eval

    def _checked_output(self, out):
        if isinstance(out, (tuple, list)) != bool(self.multiple_results):   # JAX's words
            raise ValueError(f"{self.name}.abstract_eval() method should return a tuple or "
                             f"a list iff {self.name}.multiple_results.")
        return out

    def bind_with_trace(self, trace, args, params):
        with core_trace.set_current_trace(trace):
            return self.bind(*args, **params)


_extension_primitives: weakref.WeakSet = weakref.WeakSet()


def _extension_primitive(prim, table):
    if prim not in _extension_primitives:
        raise TypeError(
            f"{table}: {prim!r} is one of pyjax's own primitives, whose rules are fixed where "
            "it is defined; only primitives made with jax.extend.core.Primitive take rules "
            "from this table.")
    return prim


class RuleTable(MutableMapping):
    """JAX's rule table for one kind of rule (a dict keyed by primitive), stored in the
    primitives' own rule slots. Reading gives any primitive's rule; writing is for
    extension primitives and adapts JAX's rule signature to pyjax's."""

    def __init__(self, name: str, slot: str, adapt=lambda prim, rule: rule, flags=None):
        self.name, self.slot, self.adapt = name, slot, adapt
        self.flags = flags or {}   # what a rule of this table implies (its signature)

    def _has(self, prim):
        return isinstance(prim, core_trace.Primitive) and bool(getattr(prim, self.slot))

    def __getitem__(self, prim):
        if not self._has(prim):
            raise KeyError(prim)
        return getattr(prim, self.slot)

    def __setitem__(self, prim, rule):
        prim = _extension_primitive(prim, self.name)
        setattr(prim, self.slot, self.adapt(prim, rule))
        for flag, value in self.flags.items():   # JAX's tables are mutable by design
            setattr(prim, flag, value)

    def __delitem__(self, prim):
        prim = _extension_primitive(prim, self.name)
        setattr(prim, self.slot, core_trace.missing_rule(prim, self.slot))

    def _primitives(self):
        extension = [p for p in _extension_primitives if self._has(p)]
        return [p for p in registered_primitives().values() if self._has(p)] + extension

    def __iter__(self):
        return iter(self._primitives())

    def __len__(self):
        return len(self._primitives())

    def __repr__(self):
        return f"<{self.name}: {len(self)} rules>"


# --- batching ---------------------------------------------------------------------------

# JAX's traces hand rules their operands as tuples (rules may add to them: dims + (0,)).

def _jvp_rule(prim, rule):
    """JAX's primitive_jvps signature: rule(primals, tangents, **params), tuples."""
    def jvp(primals, tangents, **params):
        return rule(tuple(primals), tuple(tangents), **params)
    return jvp


def _batcher(prim, rule):
    """JAX's primitive_batchers signature: rule(vals, dims, **params), tuples."""
    def batch(vals, dims, **params):
        return rule(tuple(vals), tuple(dims), **params)
    return batch


def _axis_batcher(prim, rule):
    """JAX's axis_primitive_batchers signature: rule(axis_size, axis_name, trace_type,
    vals, dims, **params)."""
    def batch(axis, vals, dims, **params):
        return rule(axis.size, axis.name, None, tuple(vals), tuple(dims), **params)
    return batch


def _fancy_batcher(prim, rule):
    """JAX's fancy_primitive_batchers signature: rule(axis_data, vals, dims, **params)."""
    def batch(axis, vals, dims, **params):
        return rule(axis, tuple(vals), tuple(dims), **params)
    return batch


# --- lowering ---------------------------------------------------------------------------

class LoweringRule:
    """A lowering through pyjax's StableHLO printer: `fun` (JAX operations) traced at the
    equation's input types and printed inline (what JAX's mlir.lower_fun makes). Called
    inside a rule written with MLIR's bindings, it prints `fun` as a private function
    that the rule's function calls."""

    def __init__(self, fun, multiple_results: bool):
        self.fun, self.multiple_results = fun, multiple_results

    def __call__(self, ctx, *values, **params):
        def flat_fun(*args):
            out = self.fun(*args, **params)
            return list(out) if self.multiple_results else [out]
        closed, hoisted = pe.trace_to_closed_jaxpr(flat_fun, list(ctx.avals_in))
        assert not hoisted, "a lowering traced at abstract inputs closes over no tracer"
        if isinstance(ctx, LoweringRuleContext):   # JAX's form: a list, one value per output
            symbol = ctx.lowering.function(closed, getattr(self.fun, "__name__", "lower_fun"))
            return ctx.call_function(symbol, values, closed.out_avals)
        outs = ctx.lower_jaxpr(closed, list(values))
        return outs if self.multiple_results else outs[0]


def lower_fun(fun, multiple_results: bool = True) -> LoweringRule:
    """A lowering rule that compiles `fun(*args, **params)`, written with jax operations."""
    return LoweringRule(fun, multiple_results)


class LoweringRuleContext:
    """The `ctx` a lowering rule written with MLIR's Python bindings receives (JAX's
    LoweringRuleContext): the primitive, the equation's avals, and the module context
    (its MLIR context, module and insertion point), over pyjax's own lowering context."""

    def __init__(self, prim, lowering, module, ip):
        self.primitive, self.lowering = prim, lowering
        self.avals_in, self.avals_out = tuple(lowering.avals_in), list(lowering.avals_out)
        self.module_context = ModuleContext(module, ip)

    def __repr__(self):   # as JAX's dataclass shows its fields (pyjax's own left out)
        return (f"LoweringRuleContext(module_context={self.module_context!r}, "
                f"primitive={self.primitive}, avals_in={self.avals_in!r}, "
                f"avals_out={self.avals_out!r})")

    def replace(self, **fields):
        """A copy with `fields` (avals_in, avals_out, ...) replaced, as JAX's dataclass
        gives (a rule calls mlir.lower_fun with other avals this way)."""
        new = copy.copy(self)
        for name, value in fields.items():
            if not hasattr(self, name):
                raise TypeError(f"LoweringRuleContext.__init__() got an unexpected keyword "
                                f"argument '{name}'")
            setattr(new, name, value)
        return new

    def call_function(self, symbol, args, out_avals):
        """Calls the private function `symbol` that pyjax printed into its module (a
        host callback, a lower_fun) on the bindings' values `args`; its results."""
        from pyjax._src.backends import mlir_bindings
        return mlir_bindings.call_declared(self.module_context.module, symbol, list(args),
                                           list(out_avals))


    def op(self, name, operands, result, attrs=None, regions=()):
        """pyjax's FunctionContext.op, with which pyjax's own lowering helpers build
        (jax.ffi.ffi_lowering's rule, called inside this rule), as an op of the
        bindings: the result's value for one aval, else a list of them."""
        from pyjax._src.backends import mlir_bindings
        if regions:
            raise NotImplementedError(f"{name} with regions inside a lowering rule written "
                                      "with MLIR's bindings: build it with the bindings")
        single = not isinstance(result, (list, tuple))
        outs = mlir_bindings.create_op(name, operands, [result] if single else result, attrs)
        return outs[0] if single else outs


class ModuleContext:
    """The module a LoweringRuleContext's rule builds in (JAX's ModuleContext): its MLIR
    context, module, insertion point, symbol table (where a rule inserts the functions
    it makes) and platforms."""

    platforms = ("cpu",)

    def __init__(self, module, ip):
        from pyjax._src.backends import mlir_bindings
        self.module, self.ip = module, ip
        self.context = module.context
        self.symbol_table = mlir_bindings.bindings("ir").SymbolTable(module.operation)
        self.keepalives = []

    def __repr__(self):
        return (f"ModuleContext(context={self.context!r}, module={self.module!r}, "
                f"ip={self.ip!r}, symbol_table={self.symbol_table!r}, "
                f"platforms={self.platforms!r}, keepalives={self.keepalives!r})")

    def add_keepalive(self, keepalive):
        self.keepalives.append(keepalive)


class MlirLowering:
    """A lowering rule in JAX's form, `rule(ctx, *values, **params)` returning a sequence
    of values (one per output), written with MLIR's Python bindings (jaxlib's). It runs
    on the block arguments of a function of the equation's operand types, built with the
    bindings; the function's ops, printed as MLIR text, are emitted inline on the
    equation's operands (as JAX's rules emit theirs)."""

    def __init__(self, prim, rule):
        self.prim, self.rule = prim, rule

    def __call__(self, ctx, *values, **params):
        from pyjax._src.backends import mlir_bindings

        def build(module, ip, args):
            return self.rule(LoweringRuleContext(self.prim, ctx, module, ip), *args, **params)
        body, functions = mlir_bindings.function_text(ctx.avals_in, ctx.avals_out, build,
                                                      ctx.op_location)
        outs = ctx.inline_function(body, functions, list(values), list(ctx.avals_out))
        return outs if self.prim.multiple_results else outs[0]


def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals, *,
                         has_side_effect, returns_token=True, partitioned=False,
                         sharding=None):
    """JAX's `mlir.emit_python_callback`: a custom call that runs `callback(*arrays)` on
    the host and returns its results, one array per aval of `result_avals`. Returns
    (result values, token, keepalive)."""
    if not isinstance(ctx, LoweringRuleContext):
        raise TypeError("mlir.emit_python_callback takes the `ctx` a lowering rule "
                        f"registered with mlir.register_lowering receives, got {ctx!r:.100}.")
    if sharding is not None:
        raise NotImplementedError("mlir.emit_python_callback(sharding=...) is not supported "
                                  "by pyjax; the callback runs on the program's device.")

    def body(fctx, *args):
        return lower_host_call(fctx, list(args), callback, list(result_avals),
                               "mlir.emit_python_callback", has_side_effect,
                               partitioned=partitioned)
    symbol = ctx.lowering.private_function("callback", list(operand_avals), body)
    return ctx.call_function(symbol, operands, result_avals), token, None


# the platforms a lowering may be registered for: JAX's known ones (its backends and
# their aliases), although pyjax lowers for the CPU only
KNOWN_PLATFORMS = ("cpu", "cuda", "gpu", "oneapi", "rocm", "tpu")


def register_lowering(prim, rule, platform=None, inline: bool = True,
                      cacheable: bool = True) -> None:
    """Sets the lowering of an extension primitive: a rule made by `lower_fun` (traced
    and printed through pyjax's StableHLO printer), or one written with MLIR's Python
    bindings (see MlirLowering). pyjax lowers for the CPU: a rule for another known
    platform is accepted and unused. `inline` and `cacheable` are JAX's choices of how
    its lowering prints and caches the rule's ops; pyjax prints a bindings rule as a
    function and a lower_fun inline, and lowers each equation afresh."""
    if platform is not None and platform not in KNOWN_PLATFORMS:
        raise NotImplementedError(
            f"Registering an MLIR lowering rule for primitive {prim} for an unknown "
            f"platform {platform}. Known platforms are: {', '.join(KNOWN_PLATFORMS)}.")
    prim = _extension_primitive(prim, "mlir.register_lowering")
    if platform in (None, "cpu"):
        prim.lower = rule if isinstance(rule, LoweringRule) else MlirLowering(prim, rule)


# --- avals ------------------------------------------------------------------------------

def mapped_aval(size: int, axis, aval: ShapedArray) -> ShapedArray:
    """The aval of one slice along `axis` (None: not mapped)."""
    if axis is None:
        return aval
    shape = aval.shape
    if shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short(True)} is not of "
                         f"size {size}")
    return aval.update(shape=shape[:axis] + shape[axis + 1:])


def unmapped_aval(size: int, axis, aval: ShapedArray, explicit_mesh_axis=None) -> ShapedArray:
    """The aval of `size` values of type `aval` stacked along `axis` (None: not mapped)."""
    if axis is None:
        return aval
    shape = aval.shape
    return aval.update(shape=shape[:axis] + (size,) + shape[axis:])


def find_top_trace(xs):
    """The innermost trace among the tracers in `xs` (the current trace if none)."""
    traces = [x._trace for x in xs if isinstance(x, Tracer)]
    return max(traces, key=lambda t: t.depth) if traces else core_trace.current_trace()


# The tables of jax.interpreters.ad / batching / mlir.
primitive_jvps = RuleTable("ad.primitive_jvps", "jvp", _jvp_rule)
primitive_transposes = RuleTable("ad.primitive_transposes", "transpose")
primitive_batchers = RuleTable("batching.primitive_batchers", "batch", _batcher,
                               flags={"batch_needs_axis": False})
axis_primitive_batchers = RuleTable("batching.axis_primitive_batchers", "batch", _axis_batcher,
                                    flags={"batch_needs_axis": True})
fancy_primitive_batchers = RuleTable("batching.fancy_primitive_batchers", "batch",
                                     _fancy_batcher, flags={"batch_needs_axis": True})


# --- jax.interpreters.ad's helpers that fill the tables (JAX's definitions) ---------------

def _jvp_from_rules(primitive, rules, with_output):
    """The JVP of a single-result `primitive` summing one rule per operand,
    `rule(g, *primals, **params)` (with_output: `rule(g, out, *primals, **params)`)
    giving that operand's tangent contribution (None: not differentiated)."""
    def jvp(primals, tangents, **params):
        val_out = primitive.bind(*primals, **params)
        before = (val_out,) if with_output else ()
        total = ad.Zero.from_primal_value(val_out)
        for rule, t in zip(rules, tangents):
            if rule is not None and type(t) is not ad.Zero:
                total = ad.add_tangents(total, rule(t, *before, *primals, **params))
        return val_out, total
    return jvp


def defjvp(primitive, *jvprules):
    """The JVP of a single-result `primitive` from one rule per operand,
    `rule(g, *primals, **params)` giving that operand's tangent contribution (None: the
    operand is not differentiated)."""
    primitive_jvps[primitive] = _jvp_from_rules(primitive, jvprules, with_output=False)


def defjvp2(primitive, *jvprules):
    """defjvp with rules that also take the output: `rule(g, out, *primals, **params)`."""
    primitive_jvps[primitive] = _jvp_from_rules(primitive, jvprules, with_output=True)


def deflinear2(primitive, transpose_rule):
    """A primitive linear in all its operands: its JVP applies it to the tangents, its
    transpose is `transpose_rule(cotangent, *operands, **params)` (undefined primals
    among them; a list, one per operand)."""
    primitive_jvps[primitive] = ad.linear_jvp.make(primitive)
    primitive_transposes[primitive] = lambda ct, *args, **params: (
        [None] * len(args) if type(ct) is ad.Zero else transpose_rule(ct, *args, **params))


def deflinear(primitive, transpose_rule):
    """deflinear2 with a transpose rule that takes only the cotangent:
    `transpose_rule(cotangent, **params)`."""
    deflinear2(primitive, lambda ct, *args, **params: transpose_rule(ct, **params))


def defbilinear(prim, lhs_rule, rhs_rule):
    """A primitive of two operands, linear in each: `lhs_rule(ct, x, y, **params)` and
    `rhs_rule(...)` transpose it in x and in y."""
    defjvp(prim, lambda g, x, y, **params: prim.bind(g, y, **params),
           lambda g, x, y, **params: prim.bind(x, g, **params))

    def transpose(ct, x, y, **params):
        if ad.is_undefined_primal(x):
            return (ad.Zero(x.aval) if type(ct) is ad.Zero else
                    lhs_rule(ct, x, y, **params)), None
        return None, (ad.Zero(y.aval) if type(ct) is ad.Zero else
                      rhs_rule(ct, x, y, **params))
    primitive_transposes[prim] = transpose


def get_primitive_transpose(p):
    """The transpose rule of `p`; NotImplementedError (JAX's words) if it has none."""
    try:
        return primitive_transposes[p]
    except KeyError as err:
        raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                  f"'{p}' not implemented") from err


def absent_primitive(name: str) -> core_trace.Primitive:
    """A primitive of JAX's that pyjax never stages (its jaxprs have no `name` equations),
    for libraries that name it as a key of their own rule tables; binding it says so."""
    prim = core_trace.Primitive(name, multiple_results=True)

    def abstract_eval(*avals, **params):
        raise NotImplementedError(
            f"Primitive '{name}' is JAX's, not pyjax's: pyjax stages function calls as "
            "'jit' equations and never creates or runs this one.")
    prim.abstract_eval = abstract_eval
    return prim
