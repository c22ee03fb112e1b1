"""Programs with very many inputs and outputs (a pytree of 100k leaves through jit) run
as a sequence of smaller XLA programs.

XLA's compile time grows quadratically with the parameters, results and tiny kernels of
one module (layout assignment, copy insertion and LLVM codegen: 1k leaves ~1 s, 4k ~14 s,
so 100k would take hours; JAX 0.10.2 never finishes either). Cutting the jaxpr's
equations, in order, into pieces of at most SEGMENT_SIZE inputs + equations keeps every
module small, so compiling is linear in the number of leaves. Values that cross a cut
stay on the device between the pieces; only fusion across a cut is lost, which is why
ordinary programs (under MIN_LEAVES inputs + outputs) are left whole."""
from __future__ import annotations

from collections.abc import Callable

from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var

MIN_LEAVES = 4096     # inputs + outputs from which a program is cut into segments
SEGMENT_SIZE = 512    # inputs + equations (or outputs passed through) per segment


def should_segment(closed: ClosedJaxpr) -> bool:
    """Whether `closed` has so many inputs and outputs that one XLA module of it would
    compile in quadratic time; programs with effects stay whole (their order and tokens
    belong to one module)."""
    jaxpr = closed.jaxpr
    return (len(jaxpr.invars) + len(jaxpr.outvars) >= MIN_LEAVES and not jaxpr.effects)


class _Segment:
    """One piece: its program, the vars it reads and defines, and those no later piece
    reads (dropped after it runs, so intermediates do not pile up)."""

    __slots__ = ("eqns", "inputs", "outputs", "dead_after", "run")

    def __init__(self, eqns, inputs, outputs):
        self.eqns, self.inputs, self.outputs = eqns, inputs, outputs
        self.dead_after, self.run = [], None


def _cut(jaxpr: Jaxpr, size: int) -> list[_Segment]:
    """jaxpr's equations cut in order into segments of at most `size` equations + outside
    inputs (one equation with more inputs is a segment of its own), then its outputs that
    no equation defines (inputs, constants, literals) in segments of `size`."""
    groups: list[list[JaxprEqn]] = []
    current: list[JaxprEqn] = []
    defined: set[Var] = set()
    outside: set[Var] = set()
    for eqn in jaxpr.eqns:
        reads = {v for v in eqn.invars if type(v) is not Literal and v not in defined}
        if current and len(current) + len(outside) + len(reads - outside) + 1 > size:
            groups.append(current)
            current, defined, outside = [], set(), set()
            reads = {v for v in eqn.invars if type(v) is not Literal}
        current.append(eqn)
        outside |= reads
        defined.update(eqn.outvars)
    if current:
        groups.append(current)
    defined_in = {}
    for i, eqns in enumerate(groups):
        for eqn in eqns:
            for v in eqn.outvars:
                defined_in[v] = i
    last_read = {}   # var -> index of the last segment that reads it
    final = set(v for v in jaxpr.outvars if type(v) is not Literal)
    segments = []
    for i, eqns in enumerate(groups):
        inputs, local = [], set()
        for eqn in eqns:
            for v in eqn.invars:
                if type(v) is not Literal and v not in local and defined_in.get(v) != i:
                    local.add(v)
                    inputs.append(v)
                    last_read[v] = i
        segments.append(_Segment(eqns, inputs, None))
    for i, segment in enumerate(segments):
        segment.outputs = [v for eqn in segment.eqns for v in eqn.outvars
                           if v in final or last_read.get(v, -1) > i]
    passed = [v for v in jaxpr.outvars if type(v) is Literal or v not in defined_in]
    for start in range(0, len(passed), size):
        chunk = passed[start:start + size]
        inputs = list(dict.fromkeys(v for v in chunk if type(v) is not Literal))
        for v in inputs:
            last_read[v] = len(segments)
        segments.append(_Segment([], inputs, chunk))
    for v, i in last_read.items():
        if v not in final:
            segments[i].dead_after.append(v)
    return segments


class SegmentedExecutable:
    """A jaxpr compiled as consecutive XLA programs (see the module docstring), with the
    calling convention of xla.Executable: Arrays in, Arrays out. `compile_part(closed,
    index)` compiles one part (dispatch lowers it and builds an xla.Executable)."""

    def __init__(self, closed: ClosedJaxpr, compile_part: Callable):
        jaxpr = closed.jaxpr
        self.invars, self.outvars = jaxpr.invars, jaxpr.outvars
        self.out_avals = closed.out_avals
        const_values = dict(zip(jaxpr.constvars, closed.consts))
        self.segments = _cut(jaxpr, SEGMENT_SIZE)
        for i, segment in enumerate(self.segments):
            # the constants a part reads are its own (its executable puts them once)
            consts = [v for v in segment.inputs if v in const_values]
            inputs = [v for v in segment.inputs if v not in const_values]
            segment.inputs = inputs
            piece = Jaxpr(consts, inputs, segment.outputs, segment.eqns)
            segment.run = compile_part(ClosedJaxpr(piece, [const_values[v] for v in consts]),
                                       i)

    def __call__(self, args, committed=False):
        env = dict(zip(self.invars, args))
        for segment in self.segments:
            outs = segment.run([env[v] for v in segment.inputs], committed)
            env.update(zip(segment.outputs, outs))
            for v in segment.dead_after:
                env.pop(v, None)   # constants are never in env
        return [env[v] for v in self.outvars]
