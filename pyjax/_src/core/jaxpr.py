"""The jaxpr IR: Var, Literal, DropVar, JaxprEqn, Jaxpr (with constvars and effects),
ClosedJaxpr; and the passes every layer uses: check_jaxpr, eval_jaxpr, dead-code
elimination and the printer. Knows no particular primitive."""
from __future__ import annotations

import functools
import itertools
import sys

import numpy as np

from pyjax._src import dtypes
from pyjax._src.util import WeakCache
from pyjax._src.core import source_info
from pyjax._src.core.avals import ManualAxisType, ShapedArray, get_aval
from pyjax._src.core.trace import EMPTY_EQN_CONTEXT, Trace, Tracer, trace_context


class Var:
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Var({self.aval.str_short(True)})"


class DropVar(Var):
    """An output nobody reads (printed as `_`)."""
    __slots__ = ()


class Literal:
    """A scalar constant written inline in the jaxpr."""
    __slots__ = ("val", "aval")

    def __init__(self, val, aval):
        self.val, self.aval = val, aval

    def value(self):
        """The constant, as a value that binds with this literal's aval: a jaxpr traced
        inside `with enable_x64():` may run outside it (a backward pass), where the
        Python scalar 0.5 would be a float32."""
        val = self.val
        if get_aval(val) == self.aval:
            return val
        return Trace.root.typed_constant(val, self.aval)

    def __repr__(self):
        return f"Literal({self.val})"


class JaxprEqn:
    __slots__ = ("invars", "outvars", "primitive", "params", "effects", "source_info",
                 "ctx")

    def __init__(self, invars, outvars, primitive, params, effects=frozenset(),
                 source_info=None, ctx=EMPTY_EQN_CONTEXT):
        self.invars, self.outvars = list(invars), list(outvars)
        self.primitive, self.params = primitive, params
        self.effects, self.source_info = effects, source_info
        self.ctx = ctx   # EqnContext: the XLA metadata its lowered ops carry

    def replace(self, **changes):
        fields = {k: getattr(self, k) for k in self.__slots__}
        fields.update(changes)
        return JaxprEqn(**fields)

    def __repr__(self):
        return _print_eqn(self, _Namer(), "").strip()


class Jaxpr:
    # Read-only views of underscored fields, as JAX's Jaxpr has: code that edits a jaxpr
    # in place (JAX's own tests of check_jaxpr do) writes the underscored ones.
    __slots__ = ("_constvars", "_invars", "_outvars", "_eqns", "_effects", "_debug_info",
                 "__weakref__")

    def __init__(self, constvars, invars, outvars, eqns, effects=None, debug_info=None):
        self._constvars, self._invars = list(constvars), list(invars)
        self._outvars, self._eqns = list(outvars), list(eqns)
        self._effects = (frozenset().union(*(e.effects for e in self._eqns))
                         if effects is None else effects)
        self._debug_info = debug_info

    constvars = property(lambda self: self._constvars)
    invars = property(lambda self: self._invars)
    outvars = property(lambda self: self._outvars)
    eqns = property(lambda self: self._eqns)
    effects = property(lambda self: self._effects)
    debug_info = property(lambda self: self._debug_info)
    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def __str__(self):
        return pp_jaxpr(self)

    __repr__ = __str__

    def pretty_print(self, *, source_info=False, print_shapes=True, name_stack=False,
                     custom_pp_eqn_rules=True, print_effects=False, **kwargs):
        """The jaxpr's text (JAX's signature; pyjax's printer has no source-location or
        name-stack annotations, so those options add nothing)."""
        return pp_jaxpr(self)


class ClosedJaxpr:
    """A jaxpr with values for its constvars. Hashed by identity: params hold them."""
    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr, consts=()):
        self.jaxpr, self.consts = jaxpr, list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    effects = property(lambda self: self.jaxpr.effects)
    eqns = property(lambda self: self.jaxpr.eqns)
    # the jaxpr's variables, as JAX's ClosedJaxpr forwards them
    constvars = property(lambda self: self.jaxpr.constvars)
    invars = property(lambda self: self.jaxpr.invars)
    outvars = property(lambda self: self.jaxpr.outvars)
    debug_info = property(lambda self: self.jaxpr.debug_info)
    # JAX's older name for consts, still used by its "Writing custom interpreters" page
    literals = property(lambda self: self.consts)

    def __str__(self):
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **options):
        """The jaxpr's text (see Jaxpr.pretty_print)."""
        return self.jaxpr.pretty_print(**options)

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


def convert_constvars_to_invars(jaxpr):
    """The same computation with its constvars moved to the front of its invars."""
    return Jaxpr((), jaxpr.constvars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns,
                 jaxpr.effects, jaxpr.debug_info)


# --- evaluation -------------------------------------------------------------------------

def eval_jaxpr(jaxpr, consts, *args):
    """Runs a jaxpr by binding each equation's primitive under the current trace: eager
    at top level, or re-traced under any transformation."""
    env = {}

    def read(v):
        return v.value() if type(v) is Literal else env[v]

    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    with SourceReplay() as replay:
        for eqn in jaxpr.eqns:
            replay.at(eqn)
            outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = (outs,)
            for v, x in zip(eqn.outvars, outs):
                if type(v) is not DropVar:
                    env[v] = x
    return [read(v) for v in jaxpr.outvars]


class SourceReplay:
    """What an interpreter's rules stage while it re-binds a jaxpr's equations keeps the
    source line and metadata of the equation it came from: `at(eqn)` before each one,
    and the trace context is restored on leaving the `with` block. Must be made in the
    interpreter's own frame: partial_eval.user_frame stops at that frame, so user code
    running below it (a custom rule) still names its own line."""

    __slots__ = ("_context", "_outer", "_frame")

    def __init__(self):
        self._context = trace_context()
        self._outer = self._context.source_info, self._context.eqn_ctx
        self._frame = sys._getframe(1)

    def __enter__(self):
        return self

    def at(self, eqn, source=None):
        """Stages from here on as `eqn` (recording `source` in place of its source info)."""
        context = self._context
        if eqn.source_info:
            context.source_info = (eqn.source_info if source is None else source, self._frame)
        else:
            context.source_info = self._outer[0]
        context.eqn_ctx = eqn.ctx

    def __exit__(self, *exc_info):
        self._context.source_info, self._context.eqn_ctx = self._outer
        self._frame = None   # the interpreter's frame holds this object: a reference cycle


# --- checking ---------------------------------------------------------------------------

class JaxprTypeError(TypeError):
    pass


_MULTILINEAR = frozenset({"mul", "dot_general"})


def result_mat(prim, avals, vma):
    """The manual axis type of a primitive's result inside a typed shard_map body: it
    varies along `vma` (its operands' union), is a partial sum where a linear operation
    takes partial sums alike (or a multilinear one takes one of them), and reduced where
    every operand is (as JAX's rules); other operations on partial sums are refused."""
    mats = [a.mat for a in avals if isinstance(a, ShapedArray)]
    unreduced = frozenset().union(*(m.unreduced for m in mats))
    reduced = frozenset.intersection(*(m.reduced for m in mats)) if mats else frozenset()
    if unreduced:
        alike = all(m.unreduced == unreduced for m in mats)
        single = sum(bool(m.unreduced) for m in mats) == 1
        if not ((prim.is_linear and alike) or (prim.name in _MULTILINEAR and single)
                or (prim.name == "convert_element_type" and alike)):
            raise NotImplementedError(
                f"unreduced rule for {prim.name} is not implemented. Please file an issue "
                "at https://github.com/jax-ml/jax/issues")
    return ManualAxisType(varying=vma, unreduced=unreduced,
                          reduced=reduced - unreduced)


def check_jaxpr(jaxpr) -> None:
    """Checks that every variable is bound once before use and that each equation's
    outputs have the types its primitive's abstract_eval gives (sub-jaxprs too). Raises
    JaxprTypeError saying what is wrong, in which equation, and showing the jaxpr around
    it, as JAX does."""
    @functools.cache
    def names():
        """A namer naming the variables as the printed jaxpr does (made only for an
        error message: printing is the costly part)."""
        namer = _Namer()
        _print_jaxpr(jaxpr, namer, "")
        return namer

    try:
        _check_jaxpr(jaxpr, names)
    except JaxprTypeError as e:
        if len(e.args) == 2:
            message, eqn_index = e.args
            shown = _print_jaxpr(jaxpr, names(), "", (eqn_index - 10, eqn_index + 10))
        else:
            message, = e.args
            shown = _print_jaxpr(jaxpr, names(), "", (0, 20))
        raise JaxprTypeError(
            "\n\n".join([message, "while checking jaxpr:", shown])) from None


def _check_jaxpr(jaxpr, names):
    bound = set()

    def bind(v, aval):
        if v in bound:
            raise JaxprTypeError(f"Variable '{names()(v)}' already bound")
        if v.aval != aval:
            raise JaxprTypeError(
                f"Value for variable '{names()(v)}' inconsistently typed as "
                f"{aval.str_short(True)} for let-binder of type {v.aval.str_short(True)}")
        if type(v) is not DropVar:
            bound.add(v)

    def read(v):
        if type(v) is not Literal and v not in bound:
            raise JaxprTypeError(f"Variable '{names()(v)}' not defined")
        return v.aval

    for v in itertools.chain(jaxpr.constvars, jaxpr.invars):
        bind(v, v.aval)
    for i, eqn in enumerate(jaxpr.eqns):
        try:
            out = _eqn_out_avals(eqn, [read(v) for v in eqn.invars])
            if len(out) != len(eqn.outvars):
                raise JaxprTypeError(f"{eqn.primitive.name} gives {len(out)} results but "
                                     f"the equation binds {len(eqn.outvars)}")
            for sub in sub_jaxprs(eqn):
                check_jaxpr(sub)
            for v, aval in zip(eqn.outvars, out):
                bind(v, aval)
        except JaxprTypeError as e:
            shown = _print_eqn(eqn, names(), "  ")[2:]   # continuation lines nested by 2
            source = source_info.describe(eqn.source_info, full_path=True)
            raise JaxprTypeError("\n\n".join(
                [e.args[0], "in equation:", shown, f"from source: {source}"]), i) from None
    for v in jaxpr.outvars:
        read(v)


def _eqn_out_avals(eqn, in_avals):
    """The output types of `eqn` given its operands' (a type error as JaxprTypeError)."""
    prim = eqn.primitive
    try:
        out = prim.abstract_eval(*in_avals, **eqn.params)
    except JaxprTypeError:
        raise
    except TypeError as e:
        raise JaxprTypeError(str(e)) from e
    out = list(out) if prim.multiple_results else [out]
    if not (prim.is_collective or prim.is_higher_order) and any(
            getattr(a, "_mat", None) is not None for a in in_avals):
        # (inside shard_map: the manual axis type staging gives, see partial_eval)
        vma = frozenset().union(*(getattr(a, "vma", frozenset()) for a in in_avals))
        mat = result_mat(prim, in_avals, vma)
        out = [a.update(mat=mat) for a in out]
    return out


def _sub_jaxprs(param):
    if isinstance(param, ClosedJaxpr):
        yield param.jaxpr
    elif isinstance(param, Jaxpr):
        yield param
    elif isinstance(param, tuple):
        for p in param:
            yield from _sub_jaxprs(p)


def sub_jaxprs(eqn):
    for param in eqn.params.values():
        yield from _sub_jaxprs(param)


def forwarded_inputs(jaxpr):
    """Per output of `jaxpr`: the index of the input it is, or None."""
    position = {v: i for i, v in enumerate(jaxpr.invars)}
    return [position.get(v) for v in jaxpr.outvars]


# --- dead-code elimination --------------------------------------------------------------

def dce_jaxpr(jaxpr, used_outputs=None, keep_inputs=True):
    """Drops equations whose results are unused and that have no effects. A primitive
    with a `dce` rule (`dce(used_outputs, eqn) -> eqn` with unneeded inputs removed) is
    pruned inside too, so e.g. a scan keeps only the loop work its used outputs need.
    Returns the new jaxpr and, per input, whether it is still used."""
    used_outputs = [True] * len(jaxpr.outvars) if used_outputs is None else used_outputs
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs) if u]
    live = {v for v in outvars if type(v) is Var}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        used = [type(v) is not DropVar and v in live for v in eqn.outvars]
        if not eqn.effects and not any(used):
            continue
        if eqn.primitive.dce is not None and not eqn.effects and not all(used):
            eqn = eqn.primitive.dce(used, eqn)
        kept.append(eqn)
        live.update(v for v in eqn.invars if type(v) is Var)
    kept.reverse()
    used_inputs = [v in live for v in jaxpr.invars]
    invars = jaxpr.invars if keep_inputs else [v for v in jaxpr.invars if v in live]
    constvars = [v for v in jaxpr.constvars if v in live]
    new = Jaxpr(constvars, invars, outvars, kept, None, jaxpr.debug_info)
    return new, used_inputs


_prune_cache = WeakCache()


def prune_closed_jaxpr(closed, used_outputs, keep_inputs=None):
    """`closed` computing only its used outputs and taking only the inputs they read (and
    those flagged in keep_inputs). Returns (ClosedJaxpr, per input: whether it is still
    taken). Cached per flags, and `closed` itself when nothing changes, so caches keyed on
    a jaxpr's identity keep hitting; the DCE rules of higher-order primitives use it."""
    key = (tuple(bool(u) for u in used_outputs),
           None if keep_inputs is None else tuple(bool(k) for k in keep_inputs))
    pruned, used = _prune_cache.get(closed, key, lambda: _prune(closed, *key))
    return (closed if pruned is None else pruned), list(used)


def dce_mapped_call(used_outputs, eqn, in_param: str, out_param: str):
    """The DCE rule of a call equation whose params hold its closed `jaxpr` and a tuple
    with one entry per input (`in_param`) and per output (`out_param`), e.g. pmap's axes
    or shard_map's specs: the equation computing only its used outputs."""
    params = eqn.params
    closed, used_inputs = prune_closed_jaxpr(params["jaxpr"], used_outputs)
    return eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
        params=dict(params, jaxpr=closed, **{
            in_param: tuple(a for a, u in zip(params[in_param], used_inputs) if u),
            out_param: tuple(a for a, u in zip(params[out_param], used_outputs) if u)}))


def _prune(closed, used_outputs, keep_inputs):
    jaxpr = closed.jaxpr
    new, used = dce_jaxpr(jaxpr, list(used_outputs))
    if keep_inputs is not None:
        used = [u or k for u, k in zip(used, keep_inputs)]
    if all(used) and all(used_outputs) and len(new.eqns) == len(jaxpr.eqns) and all(
            a is b for a, b in zip(new.eqns, jaxpr.eqns)):   # (a DCE rule prunes inside)
        return None, used   # unchanged (not stored: the cache must not hold `closed`)
    const_of = dict(zip(jaxpr.constvars, closed.consts))
    pruned = Jaxpr(new.constvars, [v for v, u in zip(jaxpr.invars, used) if u],
                   new.outvars, new.eqns, None, jaxpr.debug_info)
    return ClosedJaxpr(pruned, [const_of[v] for v in new.constvars]), used


# --- printing ---------------------------------------------------------------------------

class _Namer:
    def __init__(self):
        self.names = {}
        self.counter = itertools.count()

    def __call__(self, v):
        if type(v) is Literal:
            return _literal_str(v)
        if type(v) is DropVar:
            return "_"
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = _var_name(next(self.counter))
        return name

    def suggest(self, for_vars, like_vars):
        """Names each of `for_vars` not named yet as its counterpart in `like_vars` (a
        Var, or None for none), each counterpart once: JAX's suggest_same_var_names."""
        if len(for_vars) != len(like_vars):
            return
        taken = set()
        for for_v, like_v in zip(for_vars, like_vars):
            if (like_v is not None and type(like_v) is not Literal and like_v not in taken
                    and type(for_v) is not Literal and for_v not in self.names):
                taken.add(like_v)
                self.names[for_v] = self(like_v)


def _var_name(i):
    """The i-th name, as JAX's printer gives it: i written in base 26 with digits a..z
    (so z is followed by ba, bb, ...)."""
    name = ""
    while not name or i:
        i, digit = divmod(i, 26)
        name = chr(ord("a") + digit) + name
    return name


def _literal_str(lit):
    """The value and its type, as JAX prints it: `2.0:f32[]`."""
    val = np.asarray(lit.val)
    if val.dtype == np.bool_:
        text = str(bool(val))
    elif val.ndim == 0:
        text = repr(val.item()) if val.dtype.kind != "f" else str(float(val.item()))
    else:
        return f"[{lit.aval.str_short(True)}]"
    return f"{text}:{lit.aval.str_short(True)}"


def _binder(v, namer):
    return f"{namer(v)}:{v.aval.str_short(True)}"


_WIDTH = 80   # JAX's line width: shorter equations, and jaxprs of such, stay on one line


class SharedNames:
    """A jaxpr parameter whose binders the printer names as its equation's operands and
    results, the rest going on from the outer jaxpr's names (JAX 0.10.2 prints a jit
    body so)."""

    def __init__(self, jaxpr):
        self.jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr


def _is_jaxpr_param(value):
    return isinstance(value, (Jaxpr, ClosedJaxpr, SharedNames)) or (
        isinstance(value, tuple) and value and all(
            isinstance(x, (Jaxpr, ClosedJaxpr)) for x in value))


def _param_str(value, namer, indent, column=None):
    """A parameter's value; `indent` is that of the line it starts on, `column` where on
    that line it starts (by default at the indent)."""
    if isinstance(value, SharedNames):
        return _print_jaxpr(value.jaxpr, namer, indent, column=column)
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        inner = value.jaxpr if isinstance(value, ClosedJaxpr) else value
        return _print_jaxpr(inner, namer, indent, column=column)
    if _is_jaxpr_param(value):
        inner = indent + "  "
        parts = [inner + _param_str(x, namer, inner) for x in value]
        return "(\n" + "\n".join(parts) + "\n" + indent + ")"
    if isinstance(value, np.dtype):
        return value.name
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


def _print_eqn(eqn, namer, indent, used=None):
    """`lhs = prim[params] args` on one line, or, where that is too long or a parameter
    is a jaxpr, with one parameter a line, as JAX prints it. Outputs not in `used` print
    as `_`, as JAX drops the variables of outputs nothing reads when it traces."""
    read = [used is None or v in used for v in eqn.outvars]
    lhs = " ".join(_binder(v, namer) if r else f"_:{v.aval.str_short(True)}"
                   for v, r in zip(eqn.outvars, read))   # named before inner jaxprs
    lhs = f"{lhs} = " if lhs else ""   # effect-only equations bind nothing
    rhs = " ".join(namer(v) for v in eqn.invars)
    head = f"{indent}{lhs}{eqn.primitive.name}"
    shown = eqn.primitive.shown_params
    # JAX prints params sorted by name, but where a primitive's own rule orders them
    params = dict(sorted(eqn.params.items())) if shown is None else shown(eqn.params)
    if not params:
        return f"{head} {rhs}".rstrip()
    for value in params.values():
        if isinstance(value, SharedNames):
            namer.suggest(value.jaxpr.invars, eqn.invars)
            namer.suggest(value.jaxpr.outvars,
                          [v if r else None for v, r in zip(eqn.outvars, read)])
    # Each param printed once, as on its own line: a jaxpr fitting there fits on the
    # equation's line too, if the whole equation does (printing twice would double the
    # work at each level of nested jaxprs)
    inner = indent + "  "
    texts = {k: _param_str(v, namer, inner, len(inner) + len(k) + 1)
             for k, v in params.items()}
    items = " ".join(f"{k}={text}" for k, text in texts.items())
    if "\n" not in items and len(head) + len(items) + 2 <= _WIDTH:
        return f"{head}[{items}] {rhs}".rstrip()
    lines = [f"{inner}{k}={text}" for k, text in texts.items()]
    return "\n".join([head + "["] + lines + [f"{indent}] {rhs}".rstrip()])


def _print_jaxpr(jaxpr, namer, indent, eqn_range=None, column=None):
    """`indent` is that of the line the jaxpr starts on: equations go 4 deeper; `column`
    where on that line it starts (a jaxpr fitting the line from there is printed on it).
    With `eqn_range` (lo, hi), only those equations, `...` standing for the others."""
    consts = " ".join(_binder(v, namer) for v in jaxpr.constvars)
    ins = " ".join(_binder(v, namer) for v in jaxpr.invars)
    head = f"{{ lambda {consts}; {ins}. let" if consts else f"{{ lambda ; {ins}. let"
    used = {v for eqn in jaxpr.eqns for v in eqn.invars if type(v) is not Literal}
    used.update(jaxpr.outvars)
    eqns = [_print_eqn(eqn, namer, indent + "    ", used) for eqn in jaxpr.eqns]
    if eqn_range is not None:
        lo = max(eqn_range[0], 0)
        hi = max(lo, min(eqn_range[1], len(eqns)))
        elided = indent + "    ..."
        eqns = ([elided] if lo else []) + eqns[lo:hi] + ([elided] if hi < len(eqns) else [])
    outs = ", ".join(namer(v) for v in jaxpr.outvars)
    tail = f"in ({outs},) }}" if len(jaxpr.outvars) == 1 else f"in ({outs}) }}"
    if not eqns:
        return f"{head}  {tail}"
    if not any("\n" in eqn for eqn in eqns):   # JAX joins short ones with "; "
        one_line = f"{head} {'; '.join(eqn.strip() for eqn in eqns)} {tail}"
        if (len(indent) if column is None else column) + len(one_line) <= _WIDTH:
            return one_line
    return "\n".join([head] + eqns + [f"{indent}  {tail}"])


def pp_jaxpr(jaxpr):
    return _print_jaxpr(jaxpr, _Namer(), "")


def literal(value):
    """A Literal for a Python or NumPy scalar or a 0-d Array, typed as a traced value of it
    would be. A 0-d Array stays the Array (as JAX's Literal keeps its constant): what reads
    the jaxpr back (a backward pass handing residuals to a custom_vjp's bwd) gets a JAX
    value, weakly typed if it was, not a Python scalar."""
    aval = get_aval(value)
    if isinstance(value, (np.generic, np.ndarray)):
        value = np.asarray(value, aval.dtype)
    return Literal(value, aval)


def literalable(x, for_ad=False):
    """Scalars are written inline, as JAX does, 0-d Array constants included (a gradient's
    seed 1.0, jnp.float32(2)); arrays with more elements become constvars. A weakly typed
    0-d Array qualifies where the Python scalar of its value has its type. `for_ad`: the
    known values an AD linearization stages keep their Arrays as constvars (JAX's
    is_literalable(x, for_ad)), so that a vjp's residuals are its constants."""
    if dtypes.is_python_scalar(x) or (
            isinstance(x, (np.generic, np.ndarray)) and np.ndim(x) == 0):
        return True
    aval = getattr(x, "aval", None)
    if (for_ad or aval is None or isinstance(x, Tracer) or getattr(aval, "shape", None) != ()
            or np.dtype(aval.dtype).kind not in "biufc"):   # (a token has no shape)
        return False
    return not aval.weak_type or get_aval(np.asarray(x).item()) == aval


__all__ = ["Var", "DropVar", "Literal", "JaxprEqn", "Jaxpr", "ClosedJaxpr", "ShapedArray",
           "eval_jaxpr", "check_jaxpr", "dce_jaxpr", "prune_closed_jaxpr", "pp_jaxpr"]
