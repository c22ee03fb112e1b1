"""Packed results: a jitted training step's parameters and optimizer state kept in one
buffer from call to call.

A step `params, state, loss = step(params, state)` over a pytree of many small leaves
spends much of its time in XLA's runtime on per-buffer work (allocating, tracking and
freeing one buffer per leaf and call), not on arithmetic. So a cached call whose
program returns arrays of the types of its arguments at the same positions (the
training loop's shape) is watched: once its calls have gone on for a while, a second
program is compiled, in the background, that takes those arguments as one buffer and
returns those results as one buffer, and the call's results become views into it
(`array.Pack`). When a later call passes exactly those views back, in order, the packed
program runs on the buffer as it is. Views used any other way read their values from
the pack's buffer (fetched once), and a step whose packs are mostly read that way goes
back to its first program. docs/architecture.md, "Packed results", has the measurements.
"""
from __future__ import annotations

import logging
import operator
import threading
import time
import weakref
from collections import Counter
from itertools import repeat

import numpy as np

from pyjax._src import tree_util
from pyjax._src.array import Array, Pack, PackLayout, pack_views
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch
from pyjax._src.backends.argument_kinds import NO_FIT, CommittedKind
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import Var, eval_jaxpr, sub_jaxprs
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import slicing, structural

WARM_CALLS = 10             # calls of one signature, at least, before packing
PACK_AFTER_SECONDS = 2.0    # and this long since the first of them
MIN_LEAVES = 8              # fewer packable leaves are not worth a second program
_logger = logging.getLogger("jax._src.dispatch")
_pack_of = operator.attrgetter("_pack")
_index_of = operator.attrgetter("_pack_index")


def packable(closed, kinds, donated) -> tuple[int, ...]:
    """The argument positions whose leaves a packed program of `closed` would keep in
    one buffer: positions where the result has the argument's type (a NumPy dtype, not
    weakly typed, not empty, all of one dtype: the most common), passed as Arrays of one
    commitment, and not read whole (see _read_whole); () when fewer than MIN_LEAVES, or
    when the program has effects or donates arguments."""
    if any(donated) or closed.jaxpr.effects:
        return ()
    candidates = []
    for i, (a, b, kind) in enumerate(zip(closed.in_avals, closed.out_avals, kinds)):
        if (type(a) is not ShapedArray or a != b or a.weak_type or a.size == 0
                or not isinstance(a.dtype, np.dtype) or a.dtype.kind not in "biufc"
                or a._sharding is not None or a._mat
                or not (type(kind) is ShapedArray or type(kind) is CommittedKind)):
            continue
        candidates.append(i)
    read_whole = _read_whole(closed.jaxpr)
    candidates = [i for i in candidates if i not in read_whole]
    if len(candidates) < MIN_LEAVES:
        return ()
    dtype, _ = Counter(closed.in_avals[i].dtype for i in candidates).most_common(1)[0]
    positions = tuple(i for i in candidates if closed.in_avals[i].dtype == dtype)
    if len({type(kinds[i]) for i in positions}) != 1 or len(positions) < MIN_LEAVES:
        return ()
    return positions


# Ops XLA's CPU runtime runs on whole operand buffers (library calls: dots, convolutions;
# loops and branches): a slice of the pack feeding one is first copied out, one more step
# per call, where an elementwise consumer reads the slice in place.
_WHOLE_BUFFER_OPS = frozenset({"dot_general", "conv_general_dilated", "while", "scan",
                               "cond"})
# Ops that only relabel an operand's layout: their result is read as the operand is.
_RELABELLING_OPS = frozenset({"reshape", "squeeze", "expand_dims", "transpose"})


def _read_whole(jaxpr) -> set[int]:
    """The input positions of `jaxpr` whose values reach an op of _WHOLE_BUFFER_OPS, or an
    op with an inner program not called on its operands one to one (as nested jits,
    custom derivatives and remat are), through relabelling ops."""
    index = {v: i for i, v in enumerate(jaxpr.invars)}
    found: set[int] = set()
    for eqn in jaxpr.eqns:
        reached = [(k, index[v]) for k, v in enumerate(eqn.invars)
                   if type(v) is Var and v in index]
        if not reached:
            continue
        name = eqn.primitive.name
        if name in _RELABELLING_OPS:
            index[eqn.outvars[0]] = reached[0][1]
            continue
        inner = list(sub_jaxprs(eqn))
        if name in _WHOLE_BUFFER_OPS or (inner and (
                len(inner) != 1 or len(inner[0].invars) != len(eqn.invars))):
            found.update(i for _, i in reached)
        elif inner:
            inside = _read_whole(inner[0])
            found.update(i for k, i in reached if k in inside)
    return found


class PackingRunner:
    """A cached call's runner (`plain`) watched for packing. Its calls run `plain` until
    the packed program is compiled: in a thread of its own, started once the calls have
    gone on for PACK_AFTER_SECONDS (a loop that long amortizes the compile, which XLA
    takes a few times longer over than the first program's; a process that ends meanwhile
    waits for it, as for any thread it started). The first call after that
    enters the packed program; later ones run it as long as they pass the views back."""

    __slots__ = ("plain", "make_program", "program", "started", "calls", "compiling",
                 "__weakref__")

    def __init__(self, plain, make_program):
        self.plain, self.make_program = plain, make_program
        self.program = None
        self.started = None     # when the first call came (perf_counter)
        self.calls = 0
        self.compiling: threading.Thread | None = None

    def __call__(self, leaves):
        program = self.program
        if program is not None:
            out = program.run(leaves)
            if out is NO_FIT and not program.entered:
                program.entered = True
                out = program.enter(leaves)
            return self.plain(leaves) if out is NO_FIT else out
        if self.compiling is None:
            self.calls += 1
            now = time.perf_counter()
            if self.started is None:
                self.started = now
            elif self.calls > WARM_CALLS and now - self.started > PACK_AFTER_SECONDS:
                with _start_lock:   # threads past the threshold at once start it once
                    if self.compiling is None:
                        self.compiling = threading.Thread(
                            target=_compile, args=(weakref.ref(self),),
                            name="pyjax packed program", daemon=False)
                        self.compiling.start()
        return self.plain(leaves)


_start_lock = threading.Lock()


def _compile(runner_ref):
    """Makes the packed program of a runner (held weakly: a runner its jit cache dropped
    is not kept alive by its compile). A failure leaves the runner unpacked."""
    runner = runner_ref()
    make_program = runner.make_program if runner is not None else None
    del runner
    if make_program is None:
        return
    try:
        program = make_program()
    except Exception:   # e.g. the compiler out of memory: the plain program goes on
        _logger.debug("packed program not made", exc_info=True)
        return
    runner = runner_ref()
    if runner is not None:
        runner.program = program


class PackedProgram:
    """The packed program of one cached call: takes the arguments at `positions` as one
    buffer and returns the results at those positions as one buffer, with the other
    arguments and results as they are."""

    def __init__(self, closed, kinds, positions, out_tree, device, compiler_options):
        self.positions = positions
        self.others = tuple(i for i in range(len(closed.in_avals)) if i not in positions)
        other_outs = tuple(i for i in range(len(closed.out_avals)) if i not in positions)
        avals = tuple(closed.in_avals[i] for i in positions)
        offsets = tuple(np.cumsum([0] + [a.size for a in avals[:-1]]).tolist())
        self.layout = PackLayout(avals, offsets)
        self.indices = list(range(len(positions)))
        self.select = operator.itemgetter(*positions)
        # the results in their order, from [views..., other results...]
        order = {p: k for k, p in enumerate(positions)}
        order.update({p: len(positions) + k for k, p in enumerate(other_outs)})
        self.arrange = operator.itemgetter(*(order[i] for i in range(len(closed.out_avals))))
        self.build = tree_util.tree_builder(out_tree)
        self.uses, self.reads = 0, 0   # packed calls, and those whose pack was read
        self.stopped = False   # packs mostly read as views: only the first program runs
        self.entered = False   # the first call after the compile packs its arguments
        pack_aval = ShapedArray((sum(a.size for a in avals),), avals[0].dtype)
        in_avals = (pack_aval,) + tuple(closed.in_avals[i] for i in self.others)
        packed = _packed_jaxpr(closed, positions, self.others, other_outs, self.layout,
                               in_avals)
        executable = dispatch.executable_for(packed, (), device, compiler_options)
        kind = kinds[positions[0]]
        pack_kind = CommittedKind(pack_aval, kind.device) if type(kind) is CommittedKind \
            else pack_aval
        kinds = (pack_kind,) + tuple(kinds[i] for i in self.others)
        self.runner = dispatch.runner_for(executable, kinds, in_avals, tree_util.flatten(
            tuple(range(1 + len(other_outs))))[1])
        self.committed = type(kind) is CommittedKind

    def run(self, leaves):
        """The results when the leaves at `positions` are, in order, the views of one
        pack of this program; else NO_FIT."""
        if self.stopped:
            return NO_FIT
        selected = self.select(leaves)
        first = selected[0]
        pack = first._pack if type(first) is Array else None
        if pack is None or pack.layout is not self.layout:
            return NO_FIT
        try:
            if (any(map(operator.is_not, map(_pack_of, selected), repeat(pack)))
                    or list(map(_index_of, selected)) != self.indices):
                return NO_FIT
        except AttributeError:   # not all Arrays
            return NO_FIT
        self.uses += 1
        if pack.host is not None:
            self.reads += 1
            # views used elsewhere (each read costs a transfer): back to the first program
            self.stopped = self.reads >= 4 and 4 * self.reads > self.uses
        return self._run_on(pack.array, leaves)

    def enter(self, leaves):
        """The results of the first packed call, on leaves that are not yet a pack: their
        values are packed on the host."""
        selected = self.select(leaves)
        if self.stopped or not all(type(x) is Array and x.committed is self.committed
                                   for x in selected):
            return NO_FIT
        flat = np.concatenate([np.ravel(x._value) for x in selected])
        device = selected[0]._device
        pack = Array(flat, device=device, committed=self.committed)
        return self._run_on(pack, leaves)

    def _run_on(self, pack_array, leaves):
        """The packed program run on `pack_array` and the other leaves: its results, the
        packed ones as views of the new pack."""
        outs = self.runner([pack_array] + [leaves[i] for i in self.others])
        if outs is NO_FIT:
            return NO_FIT
        results = pack_views(Pack(outs[0], self.layout))
        results.extend(outs[1:])
        return self.build(list(self.arrange(results)))


def _packed_jaxpr(closed, positions, others, other_outs, layout, in_avals):
    """`closed` with its arguments at `positions` taken from one buffer (slices of it)
    and its results at `positions` returned as one (their concatenation)."""
    def packed(pack, *rest):
        args = [None] * len(closed.in_avals)
        for i, aval, start in zip(positions, layout.avals, layout.offsets):
            piece = slicing.slice(pack, (start,), (start + aval.size,))
            args[i] = structural.reshape(piece, aval.shape)
        for i, x in zip(others, rest):
            args[i] = x
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        flat = structural.concatenate(
            [structural.reshape(outs[i], (layout.avals[k].size,))
             for k, i in enumerate(positions)], 0)
        return [flat] + [outs[i] for i in other_outs]

    jaxpr, _ = pe.trace_to_closed_jaxpr(packed, in_avals)
    return jaxpr


def packing_runner(plain, closed, kinds, donated, out_tree, device, compiler_options):
    """`plain` (a cached call's runner), watched for packing when its program can pack
    (see packable); else `plain` itself."""
    # Entering a pack and reading a view move values between host and device where the
    # unpacked step would not: only where the transfer guards let values move freely.
    if any(devices_mod.transfer_guard_level(d) != "allow"
           for d in ("host_to_device", "device_to_host")):
        return plain
    # XLA's GPU compiler fuses the packed program's reductions differently from the
    # step's, so its results can differ in the last bits (seen on an H100); on the CPU
    # they are the same, and the CPU runtime's per-buffer work is what packing saves.
    if (device or devices_mod.default_device()).platform != "cpu":
        return plain
    positions = packable(closed, kinds, donated)
    if not positions:
        return plain
    return PackingRunner(plain, lambda: PackedProgram(closed, kinds, positions, out_tree,
                                                      device, compiler_options))
