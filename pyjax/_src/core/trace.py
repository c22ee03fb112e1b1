"""Primitives, traces and tracers. Dispatch is context based: `bind` hands a primitive to
the current trace; each trace knows its parent and runs its rules with the parent as the
current trace. A value of another, enclosing trace is a constant to this one."""
from __future__ import annotations

import contextlib
import gc
import sys
import threading
import types
from typing import Any

import numpy as np

from pyjax._src import errors
from pyjax._src.config import check_tracer_leaks
from pyjax._src.core.avals import (ShapedArray, check_bool_conversion,
                                   check_integer_conversion, check_scalar_conversion,
                                   get_aval)
from pyjax._src.core.source_info import EMPTY_NAME_STACK, NameStack, Transform
from pyjax._src.core.rule_types import (AbstractEvalRule, AxisBatchRule, BatchRule, ImplRule,
                                        JvpRule, LowerRule, TransposeRule)


class _Declared:
    """A rule slot that is knowingly empty, with the reason a user will read."""

    def __init__(self, name, reason):
        self.name, self.reason = name, reason

    def __repr__(self):
        return self.name

    def __bool__(self):
        return False


MISSING = _Declared("MISSING", "no rule was written for this primitive")
NOT_DIFFERENTIABLE = _Declared("NOT_DIFFERENTIABLE", "it has no derivative")
NO_TRANSPOSE = _Declared("NO_TRANSPOSE", "it is not linear in any operand")
NO_BATCHING = _Declared("NO_BATCHING", "it cannot be batched")
NO_LOWERING = _Declared("NO_LOWERING", "it cannot be compiled with XLA")

RULE_SLOTS = ("impl", "abstract_eval", "jvp", "transpose", "batch", "lower")

# JAX's words for a rule that nobody gave a primitive, per slot
_MISSING_RULE_MESSAGES = {
    "impl": "Evaluation rule for '{}' not implemented",
    "abstract_eval": "Abstract evaluation for '{}' not implemented",
    "jvp": "Differentiation rule for '{}' not implemented",
    "transpose": "Transpose rule (for reverse-mode differentiation) for '{}' not implemented",
    "batch": "Batching rule for '{}' not implemented",
    "lower": "MLIR translation rule for primitive '{}' not found",
}


class _MissingRule(_Declared):
    """The empty rule slot of one primitive (MISSING, naming the primitive): calling it
    raises JAX's NotImplementedError for that rule. A primitive made through jax.extend
    gets its rules one by one, and any rule it lacks may be reached first."""

    def __init__(self, prim_name, slot):
        super().__init__("MISSING", MISSING.reason)
        self.message = _MISSING_RULE_MESSAGES[slot].format(prim_name)

    def __call__(self, *args, **params):
        raise NotImplementedError(self.message)


def missing_rule(prim: Primitive, slot: str) -> _MissingRule:
    """The empty `slot` of `prim`."""
    return _MissingRule(prim.name, slot)


def is_missing(rule: Any) -> bool:
    """Whether a rule slot holds MISSING (nobody wrote the rule nor declared its absence)."""
    return rule is MISSING or type(rule) is _MissingRule


def no_samples(reason):
    """Declares that a primitive cannot have harness samples, and why."""
    return _Declared("NO_SAMPLES", reason)


def no_lowering(reason):
    """Declares that a primitive has no StableHLO lowering, and why."""
    return _Declared("NO_LOWERING", reason)


class Primitive:
    """A named operation. Every rule and flag of the primitive lives in its slot, set by
    one `define_primitive` call in the primitive's family file and not changed after.
    The rule signatures are the Protocols of core/rule_types.py."""

    impl: ImplRule | _Declared
    abstract_eval: AbstractEvalRule | _Declared
    jvp: JvpRule | _Declared
    transpose: TransposeRule | _Declared
    batch: BatchRule | AxisBatchRule | _Declared
    lower: LowerRule | _Declared

    def __init__(self, name: str, multiple_results: bool = False):
        self.name = name
        self.multiple_results = multiple_results
        for slot in RULE_SLOTS:
            setattr(self, slot, missing_rule(self, slot))
        self.partial_eval = None      # custom known/unknown split (higher-order prims)
        self.dce = None               # (used_outputs, eqn) -> eqn pruned inside
        self.jet = None               # Taylor-mode rule (interpreters/jet.py), if any
        self.eager = None             # eager rule taking Arrays (jit, callbacks, loops);
        # it returns NotImplemented to leave the op to the NumPy impl
        self.stage = None             # (trace, args, params) -> how a staging trace records
        # it (jit(inline=True): the body's equations); NotImplemented: one equation
        self.effects = None           # params -> frozenset of effects
        self.samples = ()             # inputs for the uniform rule tests
        self.shown_params = None      # params -> what the jaxpr printer shows (as JAX does)
        # Declared flags (given to define_primitive like the rules):
        self.is_higher_order = False  # its params hold jaxprs (cond, scan, jit, ...)
        self.is_collective = False    # names vmap/pmap axes in `axes` or `axis_name`
        self.is_linear = False        # its jvp applies it to the tangents: needs a transpose
        self.batch_needs_axis = False  # the batch rule takes the vmap's AxisData first
        self.runs_own_program = False  # dispatch runs jaxprs holding it equation by equation
        self.lowers_own_sharding = False  # its lowering constrains its output's sharding
        # Where JAX re-binds an equation with other keywords than its params (`subfuns`
        # for custom_jvp_call): an object whose to_jax(params) gives those keywords and
        # whose from_jax(keywords) gives the params back.
        self.bind_params: Any = None
        # its transpose may give nonzero cotangents for zero ones (a custom_vjp's bwd), so
        # a backward pass runs it even then, as JAX runs every linear equation's
        self.transposes_zero_cotangents = False

    def bind(self, *args: Any, **params: Any) -> Any:
        return _context.trace.process_primitive(self, args, params)

    def def_impl(self, impl: Any) -> Any:
        """JAX's `Primitive.def_impl`: from now on `impl` runs this primitive wherever its
        impl rule ran (eager ops, the NumPy executor; compiled code never calls it, as in
        JAX), taking and returning what that rule does: NumPy values and the params. The
        rule read from `.impl` before stays callable, so wrapping it (to count calls) and
        putting it back works as on JAX."""
        self.impl = impl
        return impl

    def get_bind_params(self, params: dict) -> dict:
        """The keywords that re-bind an equation with these params (JAX's hook for
        interpreters that walk jaxprs): a pyjax equation's params are its bind keywords,
        except where `bind_params` gives JAX's (which bind takes too)."""
        return params if self.bind_params is None else self.bind_params.to_jax(params)

    def __repr__(self):
        return self.name

    def rule(self, slot: str) -> Any:
        """The rule in `slot`, or a NotImplementedError saying why there is none."""
        rule = getattr(self, slot)
        if type(rule) is _MissingRule:
            raise NotImplementedError(rule.message)
        if not rule:
            reason = rule.reason if isinstance(rule, _Declared) else "unset"
            raise NotImplementedError(
                f"Primitive '{self.name}' has no {slot} rule: {reason}.")
        return rule


class _RebindablePrimitive(Primitive):
    """A primitive with `bind_params`: bind takes JAX's keywords for its equations (those
    get_bind_params gives, holding `subfuns`) as well as its own params."""

    def bind(self, *args: Any, **params: Any) -> Any:
        if "subfuns" in params:
            params = self.bind_params.from_jax(params)
        return _context.trace.process_primitive(self, args, params)


class RuleFactory:
    """A rule that needs its own primitive to be built (e.g. a JVP that re-binds it).
    `declares`: flags the rule implies (a linear jvp declares is_linear=True), applied
    unless the define_primitive call gives them itself."""

    def __init__(self, make, declares=None):
        self.make = make
        self.declares = declares or {}


_registry: dict[str, Primitive] = {}


def define_primitive(name: str, *, multiple_results: bool = False, **rules) -> Primitive:
    """Creates and registers a primitive with its rules: impl (NumPy), abstract_eval,
    jvp, transpose, batch, lower, samples, optional partial_eval/dce/eager/stage/jet/
    effects/shown_params/bind_params, and its declared flags (is_higher_order, is_collective,
    is_linear, batch_needs_axis, runs_own_program, lowers_own_sharding,
    transposes_zero_cotangents)."""
    if name in _registry:
        raise ValueError(f"primitive {name!r} is defined twice")
    kind = Primitive if rules.get("bind_params") is None else _RebindablePrimitive
    prim = kind(name, multiple_results)
    declared = {}
    for value in rules.values():
        if isinstance(value, RuleFactory):
            declared.update(value.declares)
    # a rule given as None is left unset here: a factory's declaration of it stands, or
    # it stays MISSING until someone declares it
    declared.update((key, value) for key, value in rules.items() if value is not None)
    for key, value in declared.items():
        if not hasattr(prim, key):
            raise TypeError(f"define_primitive({name!r}): unknown rule {key!r}")
        setattr(prim, key, value.make(prim) if isinstance(value, RuleFactory) else value)
    _registry[name] = prim
    return prim


def registered_primitives() -> dict[str, Primitive]:
    return dict(_registry)


def primitive_named(name: str) -> Primitive:
    """The registered primitive called `name` (for rules of a lower layer that stage a
    primitive a higher one defines)."""
    return _registry[name]


def primitive_effects(prim, params):
    return prim.effects(**params) if prim.effects else frozenset()


# --- traces -----------------------------------------------------------------------------

class EqnContext:
    """What the context of a staged equation adds to it: the XLA metadata
    (jax.experimental.xla_metadata.set_xla_metadata) its ops are tagged with when lowered,
    as a dict {name: value}, and the abstract mesh set with use_abstract_mesh (None: none
    is), which its rules see again when the equation is re-traced (e.g. transposed), as
    in JAX. Equal contexts compare and hash equal (jit keys on them)."""

    __slots__ = ("xla_metadata", "abstract_mesh", "_key")

    def __init__(self, xla_metadata, abstract_mesh=None):
        self.xla_metadata = dict(xla_metadata)
        self.abstract_mesh = abstract_mesh
        self._key = (tuple(sorted(self.xla_metadata.items(), key=lambda kv: kv[0])),
                     abstract_mesh)

    def updated(self, changes):
        """This context with `changes` applied; a value of None removes that name."""
        merged = {**self.xla_metadata, **changes}
        return EqnContext({k: v for k, v in merged.items() if v is not None},
                          self.abstract_mesh)

    def with_abstract_mesh(self, mesh):
        return EqnContext(self.xla_metadata, mesh)

    def __eq__(self, other):
        return isinstance(other, EqnContext) and other._key == self._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return (f"EqnContext(xla_metadata={self.xla_metadata}, "
                f"abstract_mesh={self.abstract_mesh})")


EMPTY_EQN_CONTEXT = EqnContext({})


class _Context(threading.local):
    # Class attributes are every thread's starting values: install_root_trace sets
    # `trace` here, so each new thread starts at the root (eager) trace.
    trace: Any = None
    source_info = None   # (where, eval_jaxpr frame) while an equation is re-traced
    name_stack = EMPTY_NAME_STACK   # named scopes and transformations, outermost first
    eqn_ctx = EMPTY_EQN_CONTEXT   # what equations staged now carry (set_xla_metadata)


@contextlib.contextmanager
def set_name_stack(name_stack):
    """Equations staged inside carry `name_stack` (a NameStack)."""
    saved = _context.name_stack
    _context.name_stack = name_stack
    try:
        yield
    finally:
        _context.name_stack = saved


def extend_name_stack(name):
    """Equations staged inside carry `name` in their name stack (jax.named_scope)."""
    return set_name_stack(NameStack((*_context.name_stack, name)))


def transform_name_stack(name):
    """Equations staged inside carry the transformation `name` ('jvp', 'vmap') in their
    name stack: it wraps the scope that follows it."""
    return set_name_stack(NameStack((*_context.name_stack, Transform(name))))


def current_name_stack():
    return _context.name_stack


_context = _Context()


def current_trace():
    return _context.trace


def trace_context():
    """The thread's tracing state (current trace, source location being re-traced)."""
    return _context


@contextlib.contextmanager
def set_current_trace(trace):
    saved = _context.trace
    _context.trace = trace
    try:
        yield trace
    finally:
        _context.trace = saved


def install_root_trace(trace):
    """Called once by the eager backend: the trace at the bottom of every thread's stack."""
    _Context.trace = trace
    Trace.root = trace


class Trace:
    """Base of all traces. Subclasses implement process_primitive; rules that must run
    on the enclosing computation do so with `with set_current_trace(self.parent)`."""

    root = None
    new_ref_error: str | None = None   # why jax.new_ref cannot be called in this trace
    # a HiPrimitive bound here runs its to_lojax rule on the hijax values (core/hijax.py);
    # traces that transform hijax values by the primitive's own rules (JVP, vmap) say no
    requires_low = True
    # staging traces that capture: the mutable hijax values they made or were given (by
    # id), which they do not capture (core/hijax.py)
    hi_owned: dict[int, Any] | None = None

    def __init__(self, parent=None):
        self.parent = _context.trace if parent is None else parent
        self.depth = 0 if self.parent is None else self.parent.depth + 1
        self.alive = True

    def process_primitive(self, prim, args, params):
        raise NotImplementedError

    def typed_constant(self, value, aval):
        """`value` (a scalar) as a constant of exactly `aval`, whatever the config says
        now: the root trace implements it (its values are what every trace lifts)."""
        raise NotImplementedError

    def is_ancestor_of(self, other):
        t = other.parent
        while t is not None:
            if t is self:
                return True
            t = t.parent
        return False

    def own_or_lift(self, x):
        """x as a tracer of this trace: its own tracers pass, anything else is lifted."""
        if isinstance(x, Tracer):
            trace = x._trace
            if trace is self:
                return x
            if not trace.alive or not trace.is_ancestor_of(self):
                raise escaped_tracer_error(x, self)
        return self.lift(x)

    def lift(self, x):
        raise NotImplementedError

    def end(self):
        self.alive = False

    @property
    def main(self):
        """This trace: JAX's deprecated `Trace.main` (its tag), which libraries compare with
        `is` to tell whether a tracer belongs to a given trace."""
        return self

    def __repr__(self):
        return f"{type(self).__name__}(level=0/{self.depth})"


def operand_error(prim, args):
    """JAX's error for an operand of `prim` that is not a JAX value (a string or object
    array, an arbitrary object), or None when every operand is one."""
    for i, x in enumerate(args):
        if isinstance(x, Tracer):
            continue
        try:
            get_aval(x)
        except TypeError:
            return TypeError(f"Error interpreting argument to {prim.name} as a JAX value. The "
                             f"problematic value is of type {type(x)} and was passed to "
                             f"{prim.name} at position {i}.\n")
    return None


def escaped_tracer_error(tracer, where):
    status = "has already ended" if not tracer._trace.alive else "is not active here"
    origin = tracer._origin_description()
    return errors.UnexpectedTracerError(
        f"Encountered an unexpected tracer: {tracer!r}. The transformation that created "
        f"it ({type(tracer._trace).__name__}) {status}, so it cannot be used in "
        f"{type(where).__name__}." + (f"\nThe leaked value: {origin}" if origin else ""))


def check_for_leaks(trace):
    """With `jax_check_tracer_leaks` on, raises UnexpectedTracerError if a tracer of the
    ended `trace` is still alive (kept in a global, a closure, an object ...), even if it
    is never used again. Callers drop their own references to its tracers first."""
    if not check_tracer_leaks.value:
        return
    gc.collect()
    leaked = [r for r in gc.get_referrers(trace) if isinstance(r, Tracer) and r._trace is trace]
    if not leaked:
        return
    parts = []
    for i in range(min(len(leaked), 5)):
        origin = leaked[i]._origin_description()
        holders = _holder_lines(leaked[i], skip={id(leaked)})
        parts.append("\n".join([repr(leaked[i])] + ([origin] if origin else []) + holders))
    more = f"\n\n... and {len(leaked) - 5} more" if len(leaked) > 5 else ""
    raise errors.UnexpectedTracerError(
        f"Leaked trace {trace!r}: {len(leaked)} of its tracer(s) outlived it. Leaked "
        "tracer(s):\n\n" + "\n\n".join(parts) + more)


def _holder_lines(obj, skip, depth=3, limit=8):
    """'X is referred to by Y' lines, following containers up to a module global."""
    module_of = {id(m.__dict__): name for name, m in list(sys.modules.items())
                 if isinstance(getattr(m, "__dict__", None), dict)}
    objs, labels, lines = [obj], [f"<{type(obj).__name__} {id(obj)}>"], []
    skip = skip | {id(objs), id(labels), id(lines)}
    for _ in range(depth):
        next_objs, next_labels = [], []
        skip |= {id(next_objs), id(next_labels)}
        for i in range(len(objs)):     # no zip: its tuples would refer to the targets
            target, label = objs[i], labels[i]
            for ref in gc.get_referrers(target):
                if id(ref) in skip or isinstance(ref, types.FrameType):
                    continue
                name, is_global = _holder_name(ref, target, module_of)
                lines.append(f"{label} is referred to by {name}")
                if len(lines) >= limit:
                    return lines
                if not is_global:
                    next_objs.append(ref)
                    next_labels.append(f"<{type(ref).__name__} {id(ref)}>")
        objs, labels = next_objs, next_labels
    return lines


def _holder_name(ref, target, module_of):
    if isinstance(ref, dict):
        key = next((k for k, v in ref.items() if v is target), None)
        if id(ref) in module_of:
            return f"the global {module_of[id(ref)]}.{key}", True
        return f"<dict {id(ref)}>[{key!r}]", False
    if isinstance(ref, (list, tuple)):
        index = next((i for i, v in enumerate(ref) if v is target), None)
        return f"<{type(ref).__name__} {id(ref)}>[{index}]", False
    if isinstance(ref, types.CellType):
        return "a closure cell", False
    if isinstance(ref, types.FunctionType):
        return f"the function {ref.__qualname__}", False
    return f"<{type(ref).__name__} {id(ref)}>", False


# --- tracers ----------------------------------------------------------------------------

class PrintedText:
    """Text as JAX's pretty-printer documents give it (`.format()`)."""

    def __init__(self, text: str):
        self.text = text

    def format(self) -> str:
        return self.text

    __str__ = format


class Tracer:
    """Stands in for an array during a transformation. Operators and array methods are
    installed by `jax.numpy` when it is imported (an upward hook, see DESIGN.md)."""

    __slots__ = ("_trace", "__weakref__")
    __array_priority__ = 1000

    aval: ShapedArray
    _trace: Trace   # the trace it belongs to (a slot)

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    mat = property(lambda self: self.aval.mat)   # inside shard_map: its manual axis type
    itemsize = property(lambda self: self.aval.dtype.itemsize)
    nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)

    def __init__(self, trace, aval):
        """As JAX's: a Tracer subclass outside pyjax (with a __dict__) may call
        super().__init__(trace, aval); pyjax's own tracers set their slots themselves."""
        self._trace = trace
        self.aval = aval

    def to_concrete_value(self):
        """The value as a numpy array when this tracer knows it (e.g. a JVP tracer over a
        concrete primal), else None."""
        return None

    @property
    def sharding(self):
        # an Array's attribute that a traced value has not (AttributeError, as JAX's, so
        # that hasattr and getattr with a default still work)
        raise AttributeError(
            "The 'sharding' attribute is not available on traced array with shape "
            f"{self.aval.str_short()}. To query sharding information on tracers, use "
            "`jax.typeof(x)`.")

    def _origin_description(self):
        return ""

    def __repr__(self):
        return f"Traced<{self.aval!r}>with<{self._trace!r}>"

    def _contents(self) -> list[tuple[str, Any]]:
        """What the tracer carries, named (its verbose text shows them)."""
        return []

    def _pretty_print(self, verbose: bool = False) -> PrintedText:
        """JAX's debugging text of a tracer: its repr, or with `verbose` its type, its
        trace's kind and what it carries."""
        if not verbose:
            return PrintedText(repr(self))
        text = f"Traced<{self.aval}>with<{type(self._trace).__name__}>"
        contents = self._contents()
        if contents:
            text += " with" + "".join(f"\n  {name} = {value!r}" for name, value in contents)
        return PrintedText(text)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __bool__(self):
        check_bool_conversion(self.aval.shape)
        value = self.to_concrete_value()
        if value is None:
            raise errors.TracerBoolConversionError(self)
        return bool(value)

    def _concrete_scalar(self, convert, error):
        value = self.to_concrete_value()
        if value is None:
            raise error(self)
        return convert(value)

    def __index__(self):
        check_integer_conversion(self.aval.shape, self.aval.dtype)
        return self._concrete_scalar(lambda v: int(v), errors.TracerIntegerConversionError)

    def __int__(self):
        check_scalar_conversion(self.aval.shape)
        return self._concrete_scalar(lambda v: int(v), _conversion_error("int"))

    def __float__(self):
        check_scalar_conversion(self.aval.shape)
        return self._concrete_scalar(lambda v: float(v), _conversion_error("float"))

    def __complex__(self):
        check_scalar_conversion(self.aval.shape)
        return self._concrete_scalar(lambda v: complex(v), _conversion_error("complex"))

    def item(self, *args):
        return self._concrete_scalar(lambda v: np.asarray(v).item(*args),
                                     _value_method_error("item"))

    def tolist(self):
        return self._concrete_scalar(lambda v: np.asarray(v).tolist(),
                                     _value_method_error("tolist"))

    def tobytes(self, order="C"):
        return self._concrete_scalar(lambda v: np.asarray(v).tobytes(order),
                                     _value_method_error("tobytes"))

    def __array__(self, dtype=None, copy=None):
        value = self.to_concrete_value()
        if value is None:
            raise errors.TracerArrayConversionError(self)
        return np.asarray(value, dtype=dtype)

    # Unhashable, as JAX's tracers: hash() raises and isinstance(x, Hashable) is False.
    __hash__ = None   # type: ignore[assignment]

    def __reduce__(self):
        raise errors.ConcretizationTypeError(
            self, "The error occurred in the __reduce__ method, which may indicate an "
            "attempt to serialize/pickle a traced value.\n")

    def __setitem__(self, index, value):
        raise TypeError(errors.IMMUTABLE_ARRAY_MESSAGE)

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))


def _value_method_error(name):
    def make(tracer):
        return errors.ConcretizationTypeError(
            tracer, f"The {name}() method was called on {errors.traced_array(tracer)}. "
            "It returns the array's values as Python objects: they are not known while "
            "tracing. Keep working with the array itself, or use `jax.debug.print` to see "
            "it.\n")
    return make


def _conversion_error(name):
    def make(tracer):
        return errors.ConcretizationTypeError(
            tracer, f"The problem arose with the `{name}` function. If trying to convert "
            f"the data type of a value, try using `x.astype({name})` or "
            f"`jnp.array(x, {name})` instead.\n")
    return make
