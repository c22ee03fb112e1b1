"""High-level types (JAX's hijax, public as jax.experimental.hijax): Python values whose
type a library defines, which primitives of its own (HiPrimitives) read and write, and
which every computation sees as the low-level values (arrays) they are made of.

A hijax type is an aval class that says how its values lower: an immutable `HiType`
by `lo_ty` (the avals of the arrays a value is made of), `lower_val` and `raise_val`; a
mutable `MutableHiType` by the same three with its *quasi-dynamic data* (its `qdd`, the
part of its type that mutation may change, e.g. the structure a Box holds now):
`lo_ty_qdd`, `read_loval`, `new_from_loval` and `update_from_loval`. `register_hitype`
tells `jax.typeof` the type of a value class.

Values are lowered where they enter a computation, as JAX's `to_lojax` does: a
HiPrimitive bound at the root (eager) or inside a staged function (jit, scan, ...) runs
its `to_lojax` rule there, on the hi values themselves, which then hold that trace's
tracers (traces that transform hi values by rules of their own, JVP and vmap, set
`requires_low` False and apply the primitive's `jvp` and `batch` methods). `jit` gives
the function hi values raised from its traced low-level inputs and returns the arrays a
mutable argument holds at the end, which the call stores back (`LoweredArgs`)."""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Any

from pyjax._src.core.avals import AbstractValue, get_aval, register_value_type, typeof
from pyjax._src.core.trace import Primitive, Trace, _context

# An attribute of an aval class meant for the values of that type: a property computed
# from the value (`fget(value)`), or a method bound to it. (JAX's tracers of a hijax type
# forward them; pyjax traces a hijax value as the value itself, whose own class has them.)
aval_property = namedtuple("aval_property", ["fget"])
aval_method = namedtuple("aval_method", ["fun"])


def _must_override(self, name):
    raise NotImplementedError(f"{type(self).__name__} must define {name}, which hijax "
                              "calls here.")


class HiType(AbstractValue):
    """An immutable high-level type: its values lower to the arrays of `lo_ty()`."""

    is_high = True
    has_qdd = False

    def lo_ty(self) -> list:
        _must_override(self, "lo_ty")
        return []

    def lower_val(self, hi_val) -> list:
        _must_override(self, "lower_val")
        return []

    def raise_val(self, *lo_vals) -> Any:
        _must_override(self, "raise_val")

    def to_tangent_aval(self):
        _must_override(self, "to_tangent_aval")

    def to_ct_aval(self):
        return self.to_tangent_aval()


class MutableHiType(AbstractValue):
    """A mutable high-level type: its values lower, given their current quasi-dynamic
    data, to the arrays of `lo_ty_qdd(qdd)`; `update_from_loval` stores new ones."""

    is_high = True
    has_qdd = True
    is_writer = False

    def lo_ty_qdd(self, qdd, /) -> list:
        _must_override(self, "lo_ty_qdd")
        return []

    def lo_ty(self):
        raise TypeError("a mutable hijax type lowers by lo_ty_qdd(qdd), not lo_ty()")

    def new_from_loval(self, qdd, /, *lo_vals) -> Any:
        _must_override(self, "new_from_loval")

    def read_loval(self, qdd, val, /) -> list:
        _must_override(self, "read_loval")
        return []

    def read_loval_in(self, qdd, val, /) -> list:
        return self.read_loval(qdd, val)

    def update_from_loval(self, qdd, val, /, *lo_vals) -> None:
        _must_override(self, "update_from_loval")

    def to_tangent_aval(self):
        _must_override(self, "to_tangent_aval")

    def to_ct_aval(self):
        return self.to_tangent_aval()


@dataclass(frozen=True)
class AvalQDD:
    """A mutable hijax type with its quasi-dynamic data (what an abstract_eval rule
    returns for a new mutable value, and what jit's cache key holds for an argument)."""

    aval: Any
    qdd: Any
    is_high = True
    has_qdd = True

    def lo_ty(self):
        return self.aval.lo_ty_qdd(self.qdd)

    def read_loval(self, val):
        return self.aval.read_loval(self.qdd, val)

    def new_from_loval(self, *lo_vals):
        return self.aval.new_from_loval(self.qdd, *lo_vals)

    def to_tangent_aval(self):
        return AvalQDD(self.aval.to_tangent_aval(),
                       self.qdd and self.qdd.to_tangent_qdd())

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return self.aval.str_short(short_dtypes)


class MutableQuasiDynamicData:
    """A value's quasi-dynamic data as it changes: the first, and the current."""

    def __init__(self, val):
        self.init_val = self.cur_val = val

    def update(self, val):
        self.cur_val = val

    def __repr__(self):
        return (f"MutableQuasiDynamicData(init_val={self.init_val}, "
                f"cur_val={self.cur_val})")


@dataclass(frozen=True)
class AvalMutableQDD:
    """A mutable hijax type with its changing quasi-dynamic data (abstract_eval rules of
    primitives that mutate a value update it)."""

    aval: Any
    mutable_qdd: MutableQuasiDynamicData


def cur_qdd(x):
    """The quasi-dynamic data a mutable hijax value has now (jax.experimental.cur_qdd)."""
    method = getattr(type(x), "cur_qdd", None)
    if method is None:
        raise TypeError(f"cur_qdd: expected a value of a mutable hijax type, got "
                        f"{type(x).__name__}")
    return method(x)


def register_hitype(val_cls, typeof_fn) -> None:
    """Declares `val_cls` a hijax value class: `typeof_fn(value)` is its type (a HiType
    or MutableHiType), which jax.typeof and every computation taking it read."""
    register_value_type(val_cls, typeof_fn)


class HiPrimitive(Primitive):
    """A primitive over hijax values. A subclass defines `abstract_eval` (returning the
    result type(s) and the effects), `to_lojax` (the computation on the values' low-level
    contents), and `jvp` / `transpose` where it is differentiated; `is_high` says whether
    a binding is high-level (default: always)."""

    multiple_results = False

    def __init__(self, name):
        super().__init__(name, type(self).multiple_results)
        # the rules this subclass defines take the place of the missing ones
        for slot in ("impl", "abstract_eval", "jvp", "transpose"):
            if getattr(type(self), slot, None) is not getattr(Primitive, slot, None):
                delattr(self, slot)

    def is_high(self, *avals, **params) -> bool:
        return True

    def is_effectful(self, params) -> bool:
        return False

    def abstract_eval(self, *avals, **params):
        _must_override(self, "abstract_eval")

    def to_lojax(self, *args, **params):
        _must_override(self, "to_lojax")

    def jvp(self, primals, tangents, **params):
        _must_override(self, "jvp")

    def transpose(self, *args, **params):
        _must_override(self, "transpose")

    def bind(self, *args, **params):
        trace: Trace = _context.trace
        avals = [typeof(x) for x in args]
        if not (trace.requires_low and self.is_high(*avals, **params)):
            return trace.process_primitive(self, args, params)
        for x, a in zip(args, avals):
            if a.has_qdd:
                _capture(x, a)
        out = self.to_lojax(*args, **params)
        if trace.hi_owned is not None:   # mutable values made here are this trace's own
            for o in (out if self.multiple_results else [out]):
                if get_aval(o).has_qdd:
                    trace.hi_owned[id(o)] = o
        return out


def _physical(lo_types, lo_vals) -> list:
    """A hijax value's low-level values as the arrays traces carry: a typed key array
    (KeyAval.lo_ty) as its key data, an array as itself."""
    return [t.lower_val(v)[0] for t, v in zip(lo_types, lo_vals)]


def _typed(lo_types, arrays) -> list:
    return [t.raise_val(x) for t, x in zip(lo_types, arrays)]


def _lo_types(aval, qdd=None) -> list:
    return aval.lo_ty_qdd(qdd) if aval.has_qdd else aval.lo_ty()


class LoweredArgs:
    """A jitted function's argument leaves, some of hijax types (their avals `in_avals`,
    an AvalQDD for a mutable one): the low-level avals it is traced at, how the traced
    function's hi values are raised from them, and, once traced, the quasi-dynamic data
    its mutable arguments end with."""

    def __init__(self, in_avals) -> None:
        self.in_avals = in_avals
        self.lo_types = [a.lo_ty() for a in in_avals]
        self.lo_avals = [p for types in self.lo_types for t in types for p in t.lo_ty()]
        self.mutable = [i for i, a in enumerate(in_avals) if type(a) is AvalQDD]
        self.final_qdds: list = []
        self.out_types: list = []   # per result: its HiType, None for an array

    def raise_args(self, lo_vals) -> list:
        """The function's argument leaves, made of its traced low-level inputs."""
        leaves: list = []
        pos = 0
        owned = _context.trace.hi_owned
        for a, types in zip(self.in_avals, self.lo_types):
            vals = _typed(types, lo_vals[pos:pos + len(types)])
            pos += len(types)
            if type(a) is AvalQDD:
                leaves.append(a.new_from_loval(*vals))
                if owned is not None:   # the trace's own value: not captured
                    owned[id(leaves[-1])] = leaves[-1]
            else:
                leaves.append(a.raise_val(*vals))
        return leaves

    def final_lovals(self, leaves) -> list:
        """What the mutable arguments hold at the end of the traced function (recording
        their final quasi-dynamic data)."""
        outs: list = []
        self.final_qdds = []
        for i in self.mutable:
            qdd = cur_qdd(leaves[i])
            self.final_qdds.append(qdd)
            aval = self.in_avals[i].aval
            outs += _physical(aval.lo_ty_qdd(qdd), aval.read_loval(qdd, leaves[i]))
        return outs

    def lower_args(self, leaves) -> list:
        """A call's argument leaves as the low-level values the traced jaxpr takes."""
        lo: list = []
        for a, types, x in zip(self.in_avals, self.lo_types, leaves):
            lo += _physical(types, a.read_loval(x) if type(a) is AvalQDD else a.lower_val(x))
        return lo

    def num_final(self):
        return sum(len(self.in_avals[i].aval.lo_ty_qdd(q))
                   for i, q in zip(self.mutable, self.final_qdds))

    def raise_results(self, lo_vals) -> list:
        """The function's results, its hijax ones raised from their arrays."""
        if not self.out_types:
            return lo_vals
        results: list = []
        pos = 0
        for ty in self.out_types:
            if ty is None:
                results.append(lo_vals[pos])
                pos += 1
            else:
                types = ty.lo_ty()
                results.append(ty.raise_val(*_typed(types, lo_vals[pos:pos + len(types)])))
                pos += len(types)
        return results

    def store(self, leaves, final_vals):
        """Stores the values the call left in its mutable arguments back into them."""
        pos = 0
        for i, qdd in zip(self.mutable, self.final_qdds):
            aval = self.in_avals[i].aval
            types = aval.lo_ty_qdd(qdd)
            aval.update_from_loval(qdd, leaves[i], *_typed(types, final_vals[pos:pos + len(types)]))
            pos += len(types)


def lower_results(leaves, types) -> list:
    """A traced function's result leaves with its hijax ones (`types`: their types, None
    for the others) as their arrays. A mutable one cannot be a result."""
    lo: list = []
    for x, ty in zip(leaves, types):
        if ty is None:
            lo.append(x)
        elif ty.has_qdd:
            raise TypeError(f"a traced function returned the mutable hijax value {x!r} "
                            f"of type {ty.str_short()}, which it cannot return: pass it "
                            "as an argument or close over it instead.")
        else:
            lo += _physical(ty.lo_ty(), ty.lower_val(x))
    return lo


class HiCapture:
    """A mutable hijax value of an enclosing scope that a staging trace reads or writes
    (as a jax.Ref is captured, partial_eval.py): each of its low-level values enters the
    trace as an input, through a slot (`HiSlot`) that stands for it where the trace's
    RefCaptures are, and what the value holds at the end of the trace leaves it as
    outputs; meanwhile the value holds the trace's tracers."""

    def __init__(self, value, aval, qdd):
        self.value, self.aval, self.qdd = value, aval, qdd
        self.final_qdd = qdd
        self.lo_types = aval.lo_ty_qdd(qdd)
        self.outer = _physical(self.lo_types, aval.read_loval(qdd, value))
        self.slots = [HiSlot(self, i) for i in range(len(self.outer))]
        self.pending: dict[int, Any] = {}

    def read(self, index):
        qdd = cur_qdd(self.value)
        return _physical(self.aval.lo_ty_qdd(qdd),
                         self.aval.read_loval(qdd, self.value))[index]

    def write(self, index, lo_val):
        """Stores the value's low-level values once every slot has been written (the
        code that runs a traced function writes them in a row)."""
        self.pending[index] = lo_val
        if len(self.pending) == len(self.slots):
            arrays = [self.pending.pop(i) for i in range(len(self.slots))]
            self.aval.update_from_loval(
                self.final_qdd, self.value,
                *_typed(self.aval.lo_ty_qdd(self.final_qdd), arrays))

    def enter(self, tracers):
        """The value holds the trace's inputs `tracers` (one per slot)."""
        self.aval.update_from_loval(self.qdd, self.value, *_typed(self.lo_types, tracers))

    def finish(self, ref_captures):
        """At the end of the trace: what the value holds leaves as outputs, and it holds
        its enclosing scope's values again."""
        self.final_qdd = cur_qdd(self.value)
        types = self.aval.lo_ty_qdd(self.final_qdd)
        final = _physical(types, self.aval.read_loval(self.final_qdd, self.value))
        if len(final) != len(self.slots):
            raise TypeError(
                f"a mutable hijax value of type {self.aval.str_short()} closed over by a "
                f"traced function changed its type from {self.qdd} to {self.final_qdd}, "
                "which changes how many arrays it holds")
        for slot, lo_val in zip(self.slots, final):
            capture = ref_captures[slot]
            capture.value, capture.written = lo_val, True
        self.enter(self.outer)


class HiSlot:
    """One low-level value of a captured mutable hijax value, read and written as a
    jax.Ref's value is by the code that runs the traced function (`slot[...]`,
    `slot._value = v`)."""

    __slots__ = ("capture", "index")

    def __init__(self, capture, index):
        self.capture, self.index = capture, index

    def __getitem__(self, index):
        return self.capture.read(self.index)

    @property
    def _value(self):
        return self.capture.read(self.index)

    @_value.setter
    def _value(self, lo_val):
        self.capture.write(self.index, lo_val)


def _capture(x, aval):
    """Every staging trace between the one that owns the mutable hijax value `x` (made or
    raised it; the root for values made outside any) and the current one captures it,
    outermost first, so each passes it to the next."""
    chain = []
    trace: Any = _context.trace
    while trace is not Trace.root:
        if trace.hi_owned is not None and id(x) in trace.hi_owned:
            break
        chain.append(trace)
        trace = trace.parent
    saved = _context.trace
    try:
        for trace in reversed(chain):
            if trace.hi_owned is None:
                continue
            _context.trace = trace
            trace.hi_owned[id(x)] = x
            capture = HiCapture(x, aval, cur_qdd(x))
            capture.enter([trace.capture_ref(slot, v).tracer
                           for slot, v in zip(capture.slots, capture.outer)])
            trace.hi_captures.append(capture)
    finally:
        _context.trace = saved


def finish_captures(trace):
    """At the end of a staging trace: the outputs of the mutable hijax values it
    captured (HiCapture.finish)."""
    for capture in trace.hi_captures:
        capture.finish(trace.ref_captures)


def key_avals(leaves, in_avals):
    """jit's cache-key avals of argument leaves some of which are mutable hijax values:
    their types with their current quasi-dynamic data. (A value passed twice is two
    arguments, each stored back in turn, as in JAX.)"""
    return tuple(AvalQDD(a, cur_qdd(x)) if a.has_qdd else a
                 for x, a in zip(leaves, in_avals))
