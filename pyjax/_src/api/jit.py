"""jit: trace once per (function, static arguments, argument types), cache the jaxpr,
run it through the executor. Side effects in the Python function happen only while
tracing; a new static value or argument type traces again (and can say why)."""
from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import operator
import os
import site
import sysconfig
import threading
import time
import types
import warnings
import weakref
from typing import Any, Protocol, runtime_checkable

import numpy as np

from pyjax._src import config, monitoring, tree_util
from pyjax._src import layout as layout_mod
from pyjax._src import sharding as sharding_mod
from pyjax._src.sharding import tracing_context
from pyjax._src.array import Array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch
from pyjax._src.api import devices as devices_api
from pyjax._src.api import packed_results, shapes
from pyjax._src.backends.dispatch import NO_FIT, CommittedKind
from pyjax._src.core import hijax
from pyjax._src.core.avals import (AbstractRef, get_aval, is_valid_jax_type, refuse_strings,
                                   registered_type_of)
from pyjax._src.core.trace import Trace, Tracer, current_trace, escaped_tracer_error
from pyjax._src.core.trace import EMPTY_EQN_CONTEXT, _context as _trace_context
from pyjax._src.core.jaxpr import ClosedJaxpr
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax.call import jit_p
from pyjax._src.util import check_callable, fun_name, renamed
from pyjax._src.traceback_util import api_boundary, filter_exception, register_boundary


def normalize_argnums(argnums, what="jit static_argnums"):
    """An argnums option (None, an int or a sequence of ints) as a tuple of ints."""
    if argnums is None:
        return ()
    if isinstance(argnums, int):
        return (argnums,)
    try:
        return tuple(operator.index(a) for a in argnums)
    except TypeError:
        raise TypeError(f"{what} must be an int or a sequence of ints, got "
                        f"{argnums!r}.") from None


def _normalize_argnames(argnames):
    if argnames is None:
        return ()
    if isinstance(argnames, str):
        return (argnames,)
    return tuple(argnames)


def _parameters(fun):
    """fun's parameters, or None when Python cannot tell (builtins, some callables)."""
    try:
        return list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None


def _infer_argnums_and_argnames(params, argnums, argnames, what="jit static_argnums"):
    """As JAX's: the numbers and names (each None, one or a sequence) as tuples; given
    only one of them, the other is inferred from the parameters that can be passed
    either way (positional-or-keyword). Given both, or with no signature (`params`
    None), they are as given: jit(f, static_argnums=1, static_argnames=()) leaves the
    second parameter traced when passed by name."""
    nums, names = normalize_argnums(argnums, what), _normalize_argnames(argnames)
    if params is None or (argnums is None) == (argnames is None):
        return nums, names
    either = [(i, p.name) for i, p in enumerate(params) if p.kind == p.POSITIONAL_OR_KEYWORD]
    if argnums is None:
        return tuple(i for i, name in either if name in names), names
    return nums, tuple(name for i, name in either if i in nums)


def _check_arguments_exist(params, argnums, argnames, what):
    """`what`_argnums must be positions and `what`_argnames names that fun takes."""
    if params is None:
        return
    if not any(p.kind == p.VAR_POSITIONAL for p in params):
        n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        if any(not -n <= i < n for i in argnums):
            raise ValueError(f"jitted function has {what}_argnums={tuple(argnums)}, but "
                             f"only accepts {n} positional arguments.")
    positional = sorted({p.name for p in params
                         if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)} & set(argnames))
    if positional:   # never passed by name, even to a function taking **kwargs
        raise ValueError(f"jitted function has invalid argnames {positional} in "
                         f"{what}_argnames: these are positional-only (or *args); "
                         f"name them in {what}_argnums instead.")
    if not any(p.kind == p.VAR_KEYWORD for p in params):
        named = {p.name for p in params if p.kind != p.VAR_POSITIONAL}
        unknown = set(argnames) - named
        if unknown:
            raise ValueError(f"jitted function has invalid argnames {sorted(unknown)} in "
                             f"{what}_argnames: the function takes no parameters with these "
                             f"names (it takes {sorted(named)}).")


def static_values_equal(a, b) -> bool:
    """a == b for two static arguments of one type, as jit's caches compare them; an
    __eq__ that raises (or returns an array) becomes a ValueError that says so."""
    try:
        return bool(a == b)
    except Exception as err:
        raise ValueError(
            "static arguments should be comparable using __eq__. The following error was "
            f"raised when comparing two objects of type {type(a)}: {type(err).__name__}: "
            f"{err}. Make __eq__ return a bool for any two instances, or pass the value "
            "as a non-static argument.") from err


class _HashableStatic:
    """A static argument in a cache key: compared by hash and __eq__, as JAX does."""

    __slots__ = ("value", "_hash")

    def __init__(self, value, where):
        try:
            self._hash = hash(value)
        except TypeError as err:
            raise ValueError(
                f"Non-hashable static arguments are not supported. An error occurred while "
                f"trying to hash an object of type {type(value)}, {value!r:.100}, passed "
                f"as {where}. The error was:\nTypeError: {err}\nPass a hashable value (e.g. a "
                f"tuple instead of a list or array), or make the argument non-static.") \
                from None
        self.value = value

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return type(self.value) is type(other.value) and static_values_equal(self.value,
                                                                             other.value)

    def __repr__(self):
        return repr(self.value)


class CacheEntry:
    """One trace: the jaxpr for one cache key, with its input and output structure."""

    __slots__ = ("closed_jaxpr", "in_tree", "out_tree", "hoisted", "in_avals",
                 "leaf_shardings", "ref_leaves", "closed_refs", "closed_written", "hi")

    def __init__(self, closed_jaxpr, in_tree, out_tree, hoisted, in_avals, ref_leaves=(),
                 closed_refs=(), closed_written=(), hi=None):
        self.closed_jaxpr, self.in_tree, self.out_tree = closed_jaxpr, in_tree, out_tree
        self.hoisted, self.in_avals = hoisted, in_avals
        self.leaf_shardings = {}   # mesh context -> JitCache.leaf_shardings' answer
        # positions of the jax.Ref argument leaves: the jaxpr takes their values and
        # returns their final values after out_tree's outputs
        self.ref_leaves = ref_leaves
        # the jax.Refs the function closes over: their values are the jaxpr's last
        # inputs, and the final values of those it writes (closed_written) its last
        # outputs, after the Ref arguments'
        self.closed_refs, self.closed_written = closed_refs, closed_written
        # with hijax argument leaves: their hijax.LoweredArgs (the jaxpr takes their
        # low-level values, and returns what the mutable ones hold at the end after
        # out_tree's outputs, before the Ref arguments')
        self.hi = hi


# read on every cached call
_config = config.config
_default_device = devices_mod.default_device_state

_SCALAR_TYPES = (bool, int, float, complex, np.bool_, np.number)
_LEAF_TYPES = (Array, np.ndarray) + _SCALAR_TYPES


def _is_host_leaf(x):
    """A Python/NumPy scalar or exactly a NumPy array (fast calls take no subclasses)."""
    return type(x) is np.ndarray or isinstance(x, _SCALAR_TYPES)


def _host_values_move_freely():
    """Whether scalar and NumPy arguments may skip the transfer guard (fast calls move
    them without asking): only when it allows implicit host-to-device transfers."""
    return devices_mod.transfer_guard_level("host_to_device") == "allow"


class _FastCall:
    """A cached call: the route of one argument signature (positional count, keyword
    names, static values, pytree structure, leaf kinds) straight to its executable's
    runner. Called with (args, kwargs), it returns the result, or NO_FIT when the call
    is not of this signature, the thread is not at the root trace, or an option that
    routing depends on (config, default device) changed since it was made."""

    __slots__ = ("root", "version", "override", "nargs", "keywords", "statics",
                 "static_positions", "dynamic_keywords", "leaf_args", "take_apart",
                 "runner")

    def __init__(self, args, kwargs, static_nums, static_names, runner):
        self.root = Trace.root
        self.version, self.override = dispatch.default_route_state()
        # a bound method: Python calls it without re-entering the C stack (an object's
        # __call__ costs ~0.3 us more per call)
        self.nargs, self.runner = len(args), runner.__call__
        self.keywords = frozenset(kwargs)
        self.static_positions = tuple(i for i in sorted(static_nums) if 0 <= i < len(args))
        self.statics = tuple([(i, args[i]) for i in self.static_positions]
                             + [(k, v) for k, v in kwargs.items() if k in static_names])
        self.dynamic_keywords = tuple(k for k in kwargs if k not in static_names)
        # Positional leaves only (the common case): the arguments are the leaves, and the
        # runner's check of each leaf's kind also rules out containers.
        self.leaf_args = not kwargs and not self.statics and all(
            type(x) is Array or _is_host_leaf(x) for x in args)
        # Without dynamic keywords the leaves of (args, {}) are those of args: walked alone.
        dynamic = tuple(x for i, x in enumerate(args) if i not in self.static_positions)
        if self.dynamic_keywords:
            dynamic = (dynamic, {k: kwargs[k] for k in self.dynamic_keywords})
        self.take_apart = tree_util.StructureCheck(dynamic, _LEAF_TYPES)

    def __call__(self, args, kwargs):
        context = _trace_context
        if (context.trace is not self.root or context.eqn_ctx is not EMPTY_EQN_CONTEXT
                or _default_device.override is not self.override
                or _config.version != self.version):
            return NO_FIT
        if self.leaf_args:
            if kwargs or len(args) != self.nargs:
                return NO_FIT
            return self.runner(args)
        if len(args) != self.nargs or kwargs.keys() != self.keywords:
            return NO_FIT
        for where, value in self.statics:   # equal as jit's cache compares them
            v = kwargs[where] if type(where) is str else args[where]
            if not (type(v) is type(value) and (v is value or static_values_equal(v, value))):
                return NO_FIT
        if self.static_positions:
            args = tuple([x for i, x in enumerate(args) if i not in self.static_positions])
        if self.dynamic_keywords:
            dynamic_kwargs = {}
            for k in self.dynamic_keywords:
                dynamic_kwargs[k] = kwargs[k]
            args = (args, dynamic_kwargs)
        leaves = self.take_apart(args)
        if leaves is None:
            return NO_FIT
        return self.runner(leaves)


def _no_fast_call(args, kwargs):
    return NO_FIT


class JitCache:
    """What every jit(f, **options) of one function with equal options shares, as in JAX
    (jit(f)(x) written inline reuses the first trace): the checked options, the traces
    per key and the fast calls per argument signature. It holds no reference to the
    function, so the global table (`_cache_for`) keeps nothing alive."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums,
                 donate_argnames, inline, keep_unused, device, in_shardings=None,
                 out_shardings=None, compiler_options=None):
        params = _parameters(fun)
        if params is None and _normalize_argnames(donate_argnames):
            raise ValueError(f"Getting the signature of function {fun} failed. Pass "
                             "donate_argnums instead of donate_argnames.")
        static_argnums, static_argnames = _infer_argnums_and_argnames(
            params, static_argnums, static_argnames)
        donate_argnums, donate_argnames = _infer_argnums_and_argnames(
            params, donate_argnums, donate_argnames, "jit donate_argnums")
        _check_arguments_exist(params, static_argnums, static_argnames, "static")
        _check_arguments_exist(params, donate_argnums, donate_argnames, "donate")
        # JAX's words; static arguments are not buffers: there is nothing to donate
        both = set(static_argnames) & set(donate_argnames)
        if both:
            raise ValueError("static_argnames and donate_argnames cannot intersect. Argument "
                             f"names {both} appear in both static_argnames and "
                             "donate_argnames")
        if set(static_argnums) & set(donate_argnums):
            raise ValueError(f"`static_argnums` {sorted(set(static_argnums))} and "
                             f"`donate_argnums` {sorted(set(donate_argnums))} cannot "
                             "intersect.")
        self.static_argnums = frozenset(static_argnums)
        self.static_argnames = frozenset(static_argnames)
        self.donate_argnums = frozenset(donate_argnums)
        self.donate_argnames = frozenset(donate_argnames)
        self.inline, self.keep_unused, self.device = inline, keep_unused, device
        self.compiler_options = compiler_options   # XLA's, as (name, value) pairs
        self.arg_names = None if params is None else [p.name for p in params]
        self.debug_name = fun_name(fun)
        self.location = _location(fun)
        for shardings, what in ((in_shardings, "in_shardings"),
                                (out_shardings, "out_shardings")):
            sharding_mod.check_constrained(shardings, f"jit's {what}")
            _check_no_bare_layout(shardings)
        self.in_shardings, self.out_shardings = in_shardings, out_shardings   # prefixes
        # Prefixes of only Nones (flax's nnx.jit passes such) leave every placement to
        # XLA, as no prefix does: such calls take the fast path, not a partitioned one.
        self.places = _asks_placement(in_shardings) or _asks_placement(out_shardings)
        self.entries = {}      # (in_tree, statics, in_avals, trace state) -> CacheEntry
        self.fast_calls = {}   # self.signature(args, kwargs) -> _FastCall
        # the fast call tried first (the latest signature's), as its bound __call__
        self.latest = _no_fast_call
        self.trace_count, self.last_key, self.warned = 0, None, False   # retrace diagnosis
        live_caches.add(self)   # for jax.clear_caches

    def clear(self):
        self.entries.clear()
        self.fast_calls.clear()
        self.latest = _no_fast_call

    # -- splitting arguments ---------------------------------------------------------
    def split(self, args, kwargs):
        nargs = len(args)
        # A static argnum past the positional arguments was passed by keyword (and is
        # covered by its inferred static argname).
        static_nums = {i if i >= 0 else i + nargs for i in self.static_argnums}
        dyn_args, statics = [], []
        for i, x in enumerate(args):
            if i in static_nums:
                statics.append(_HashableStatic(x, f"static argument {i}"))
            else:
                dyn_args.append(x)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self.static_argnames:
                statics.append((k, _HashableStatic(v, f"static argument {k!r}")))
            else:
                dyn_kwargs[k] = v
        return tuple(dyn_args), dyn_kwargs, tuple(statics), static_nums

    def signature(self, args, kwargs):
        """A call's key among the fast calls: each argument leaf's kind, after the tree
        structure and static values when there are containers, keywords or statics."""
        if (not kwargs and not self.static_argnums
                and all(type(x) is Array or _is_host_leaf(x) for x in args)):
            return tuple([dispatch.kind_of(x) for x in args])
        dyn_args, dyn_kwargs, statics, _ = self.split(args, kwargs)
        leaves, tree = tree_util.flatten((dyn_args, dyn_kwargs))
        return (tree, statics, *[dispatch.kind_of(x) for x in leaves])

    def donated_leaves(self, args, dyn_kwargs, static_nums):
        """One flag per argument leaf, or () when nothing is donated."""
        if not (self.donate_argnums or self.donate_argnames):
            return ()
        flags = []
        nargs = len(args)
        donate = {i if i >= 0 else i + nargs for i in self.donate_argnums}
        for i, x in enumerate(args):
            if i not in static_nums:
                flags += [i in donate] * len(tree_util.tree_leaves(x))
        for k in sorted(dyn_kwargs):   # the order in which the kwargs dict flattens
            flags += [k in self.donate_argnames] * len(tree_util.tree_leaves(dyn_kwargs[k]))
        return tuple(flags) if any(flags) else ()

    # -- 1. trace ----------------------------------------------------------------------
    def trace(self, fun, dyn_args, dyn_kwargs, statics, static_nums, in_avals, in_tree,
              args, kwargs):
        traced = {}   # the output treedef (kept off flat_fun: a closure that refers to
        # itself is a reference cycle)
        ref_leaves = tuple(i for i, a in enumerate(in_avals) if type(a) is AbstractRef)

        def flat_fun(*leaf_tracers):
            # A Ref argument is discharged: the function sees a Ref holding its traced
            # value, and the value it holds at the end is an extra output.
            refs = [AbstractRef.ref_type(leaf_tracers[i], kind=in_avals[i].kind)
                    for i in ref_leaves]
            if refs:
                leaf_tracers = list(leaf_tracers)
                for i, ref in zip(ref_leaves, refs):
                    leaf_tracers[i] = ref
            call_args, call_kwargs = tree_util.tree_unflatten(in_tree, leaf_tracers)
            full_args = _merge_static(args, call_args, static_nums)
            full_kwargs = dict(kwargs)
            full_kwargs.update(call_kwargs)
            out = fun(*full_args, **full_kwargs)
            out_leaves, out_tree = tree_util.flatten(out)
            out_types = [registered_type_of(leaf) for leaf in out_leaves]
            if any(out_types):   # hijax results leave as their arrays
                out_leaves = hijax.lower_results(out_leaves, out_types)
                traced["out_types"] = out_types
            for leaf in out_leaves:
                if type(getattr(leaf, "aval", None)) is AbstractRef:
                    arg = next((k for k, ref in enumerate(refs) if ref is leaf), None)
                    names = debug.arg_names
                    raise pe.returned_ref_error(
                        debug, "jit", leaf, None if arg is None else
                        names[ref_leaves[arg]] if names else f"args[{ref_leaves[arg]}]")
                if isinstance(leaf, shapes.ShapeDtypeStruct):
                    raise TypeError("A ShapeDtypeStruct does not have a value and cannot be "
                                    f"used as a constant in a JAX function: {self.debug_name}"
                                    f" returned {leaf}. Return an array instead.")
                if not is_valid_jax_type(leaf):
                    raise shapes.invalid_output_error(
                        pe.DebugInfo(self.debug_name, self.location, None), out)
            traced["out_tree"] = out_tree
            return out_leaves + [ref[...] for ref in refs]

        debug = pe.DebugInfo(self.debug_name, self.location,
                             _flat_arg_names(self.arg_names, args, static_nums, dyn_kwargs))
        traced_avals = tuple(a.inner_aval if type(a) is AbstractRef else a for a in in_avals)
        hi = None
        if any(a.is_high for a in in_avals):
            # the function sees hijax values raised from its traced low-level inputs
            hi = hijax.LoweredArgs(traced_avals)
            traced_avals = tuple(hi.lo_avals)
            flat_fun = _lowered_fun(flat_fun, hi, len(ref_leaves))
        start = time.perf_counter()
        # JAX's event, for a trace not nested in another
        event = (monitoring.timed_event(monitoring.JAXPR_TRACE_EVENT, self.debug_name)
                 if current_trace() is Trace.root else contextlib.nullcontext())
        with event:
            closed, hoisted, captures = pe.trace_to_closed_jaxpr(
                flat_fun, traced_avals, debug, capture_refs=True)
        _logger.log(config.compile_log_level(), "Finished tracing %s for jit in %.9f sec",
                    self.debug_name, time.perf_counter() - start)
        # Drop work no output needs (e.g. a forward scan's unused ys under grad) before
        # any executor sees it; effectful equations stay.
        if "out_types" in traced:   # the call raises hijax results from their arrays
            hi = hi or hijax.LoweredArgs(in_avals)
            hi.out_types = traced["out_types"]
        jaxpr, consts, _ = pe.dce_closed_jaxpr(closed.jaxpr, closed.consts, None)
        if len(jaxpr.eqns) != len(closed.jaxpr.eqns):
            closed = ClosedJaxpr(jaxpr, consts)
        return CacheEntry(closed, in_tree, traced["out_tree"], hoisted, in_avals, ref_leaves,
                          tuple(c.ref for c in captures),
                          tuple(c.ref for c in captures if c.written), hi)

    def entry_for(self, fun, args, kwargs, abstract=False):
        """(the trace for this call, its argument leaves, their donation flags): from the
        cache, or traced now. With `abstract` (trace and lower), ShapeDtypeStructs may
        stand in for arrays."""
        dyn_args, dyn_kwargs, statics, static_nums = self.split(args, kwargs)
        leaves, in_tree = tree_util.flatten((dyn_args, dyn_kwargs))
        # as JAX's: under a trace, a ShapeDtypeStruct stands for an array of its type
        abstract = abstract or (current_trace() is not Trace.root and any(
            isinstance(x, shapes.ShapeDtypeStruct) for x in leaves))
        try:
            if abstract:
                in_avals = tuple(shapes.abstractify(x) for x in leaves)
            else:
                in_avals = tuple(x.aval if type(x) is Array else get_aval(x) for x in leaves)
                if any(a.has_qdd for a in in_avals):
                    in_avals = hijax.key_avals(leaves, in_avals)
        except TypeError:
            names = _flat_arg_names(self.arg_names, args, static_nums, dyn_kwargs)
            raise _invalid_argument_error(self.debug_name, leaves, in_tree, names) from None
        key = (in_tree, statics, in_avals, tracing_context())
        entry = self.entries.get(key)
        if entry is None or entry.hoisted:
            for x, aval in zip(leaves, in_avals):
                refuse_strings(x, aval)
            if config.no_tracing.value:
                raise RuntimeError(f"re-tracing function {self.debug_name} for `jit`, but "
                                   "'no_tracing' is set (jax.no_tracing): a call with new "
                                   "argument types or static values needs tracing.")
            # as JAX's, whose trace cache is keyed weakly on the function: one that
            # cannot be weakly referenced or hashed raises Python's TypeError here
            weakref.ref(fun)
            hash(fun)
            if config.explain_cache_misses.value or config.log_compiles.value:
                _explain_miss(self, key, _flat_arg_names(self.arg_names, args, static_nums,
                                                         dyn_kwargs))
            entry = self.trace(fun, dyn_args, dyn_kwargs, statics, static_nums, in_avals,
                               in_tree, args, kwargs)
            if not entry.hoisted:   # jaxprs closing over outer tracers are not reusable
                # threads that traced this key at once all use the first trace stored
                entry = self.entries.setdefault(key, entry)
                self.diagnose_retrace(fun, key)
        return entry, leaves, self.donated_leaves(args, dyn_kwargs, static_nums)

    def diagnose_retrace(self, fun, key):
        """Counts this cache's traces and warns once when they pass the threshold
        (config pyjax_retrace_warning_threshold), with what differed between the last
        two keys. The count is per function object (every jit(f) of one f shares this
        cache), never per code: distinct functions of one code, such as a closure per
        parametrized test, each trace once by necessity, as they would in JAX."""
        threshold = config.retrace_warning_threshold.value
        previous, self.last_key = self.last_key, key
        self.trace_count += 1
        if threshold <= 0 or self.warned or self.trace_count != threshold + 1:
            return
        code = _code_of(fun)
        if code is None or code.co_filename.startswith(_LIBRARY_SOURCES):
            return   # jitted functions of pyjax or of installed libraries retrace by design
        self.warned = True
        _warn_retrace(self, self.trace_count, *_key_difference(previous, key)[2:])

    # -- the call ------------------------------------------------------------------------
    def call(self, fun, args, kwargs):
        """A call the latest fast call did not take: another signature's fast call, or
        trace (if new) -> lower and compile (if new) -> execute."""
        if len(self.fast_calls) > 1:   # another signature seen before?
            fast = self.fast_calls.get(self.signature(args, kwargs))
            if fast is not None and fast.__call__ != self.latest:
                self.latest = fast.__call__
                out = fast(args, kwargs)
                if out is not NO_FIT:
                    return out
        if config.disable_jit_flag.value:
            return fun(*args, **kwargs)
        entry, leaves, donated = self.entry_for(fun, args, kwargs)
        if entry.ref_leaves or entry.closed_refs or entry.hi is not None:
            return self.call_with_refs(entry, leaves, args, kwargs)
        if current_trace() is not Trace.root or entry.hoisted:
            return tree_util.tree_unflatten(entry.out_tree,
                                            self.bind_nested(entry, leaves, donated))
        dispatch.check_execution_allowed(self.debug_name)
        for x in leaves:
            if isinstance(x, Tracer):   # at the root trace: its transformation has ended
                raise escaped_tracer_error(x, Trace.root)
        if self.device is not None:
            leaves = self._on_jit_device(entry.closed_jaxpr, leaves)
        if not self.places and (self.in_shardings is not None
                                or self.out_shardings is not None):
            self.leaf_shardings(args, kwargs, entry)   # its prefixes must fit, as JAX checks
        if self.partitioned(entry.closed_jaxpr, leaves):   # one SPMD program
            arrays = self.as_arrays(entry, leaves, args, kwargs)
            outs, runner = dispatch.sharded_call(
                entry.closed_jaxpr, arrays, donated, *self.leaf_shardings(args, kwargs, entry),
                f"jitted computation {self.debug_name}", self.compiler_options,
                entry.out_tree)
            if runner is not None:   # arguments already laid out: later calls go straight
                self.install_fast_call(args, kwargs, runner)
            return tree_util.tree_unflatten(entry.out_tree, outs)
        if self.device is None and all(
                type(x) is Array or _is_host_leaf(x) and _host_values_move_freely()
                for x in leaves):
            fast = self.fast_call_for(entry, leaves, donated, args, kwargs)
            out = fast(args, kwargs)
            if out is not NO_FIT:
                return out
        # arguments no runner takes (e.g. ndarray subclasses, committed to two devices):
        # the same executable through dispatch's general entry, which explains errors
        arrays = self.as_arrays(entry, leaves, args, kwargs)
        outs = dispatch.run_closed_jaxpr(entry.closed_jaxpr, arrays, donated, self.device,
                                         compiler_options=self.compiler_options)
        return tree_util.tree_unflatten(entry.out_tree, outs)

    def as_arrays(self, entry, leaves, args, kwargs):
        """The argument leaves as Arrays (host values move to the device). A Python int
        out of its type's range raises JAX's OverflowError, naming the argument."""
        try:
            return _as_arrays(leaves, entry.in_avals)
        except OverflowError:
            _, dyn_kwargs, _, static_nums = self.split(args, kwargs)
            names = _flat_arg_names(self.arg_names, args, static_nums, dyn_kwargs)
            for i, (x, aval) in enumerate(zip(leaves, entry.in_avals)):
                if type(x) is int and aval.dtype.kind in "iu" and \
                        not np.iinfo(aval.dtype).min <= x <= np.iinfo(aval.dtype).max:
                    raise OverflowError(
                        "An overflow was encountered while parsing an argument to a jitted "
                        f"computation, whose argument path is "
                        f"{names[i] if names else 'unknown'}. Got {type(x)} with value {x}"
                    ) from None
            raise

    def call_with_refs(self, entry, leaves, args, kwargs):
        """A call given jax.Refs or closing over them, or given hijax values: their
        (low-level) values go in, and the values the function left in them (in the
        mutable ones) come back (after its results) and are stored in them."""
        refs = [leaves[i] for i in entry.ref_leaves]
        if len({id(ref) for ref in refs}) < len(refs) or \
                any(ref in entry.closed_refs for ref in refs):
            raise self._aliased_refs_error(entry, refs, args, kwargs)
        values = list(leaves)
        for i, ref in zip(entry.ref_leaves, refs):
            values[i] = ref[...]
        closed = [ref[...] for ref in entry.closed_refs]
        in_avals = entry.in_avals
        if entry.hi is not None:
            values, in_avals = entry.hi.lower_args(values), entry.hi.lo_avals
        if current_trace() is not Trace.root or entry.hoisted:
            outs = self.bind_nested(entry, values + closed, None)
        else:
            dispatch.check_execution_allowed(self.debug_name)
            arrays = _as_arrays(values, in_avals) + closed
            outs = dispatch.run_closed_jaxpr(entry.closed_jaxpr, arrays, (), self.device,
                                             compiler_options=self.compiler_options)
        written = refs + list(entry.closed_written)
        n_results = len(outs) - len(written)
        for ref, value in zip(written, outs[n_results:]):
            ref._value = value
        results = list(outs[:n_results])
        if entry.hi is not None:
            n_results -= entry.hi.num_final()
            entry.hi.store(leaves, results[n_results:])
            results = entry.hi.raise_results(results[:n_results])
        return tree_util.tree_unflatten(entry.out_tree, results[:n_results])

    def _aliased_refs_error(self, entry, refs, args, kwargs):
        """JAX's error for a Ref passed twice, or passed and closed over."""
        _, dyn_kwargs, _, static_nums = self.split(args, kwargs)
        names = _flat_arg_names(self.arg_names, args, static_nums, dyn_kwargs) or \
            [f"args[{i}]" for i in range(len(entry.in_avals))]
        where = pe.DebugInfo(self.debug_name, self.location, None).describe()
        for k, ref in enumerate(refs):
            name = names[entry.ref_leaves[k]]
            ty = ref.aval.str_short(True)
            if ref in entry.closed_refs:
                return ValueError(
                    f"when tracing {where} for jit, a mutable array reference of type {ty} "
                    f"was both closed over and passed as the argument {name}")
            first = next(j for j, r in enumerate(refs) if r is ref)
            if first != k:
                return ValueError(
                    "only one reference to a mutable array may be passed as an argument "
                    f"to a function, but when tracing {where} for jit the mutable array "
                    f"reference of type {ty} appeared at both "
                    f"{names[entry.ref_leaves[first]]} and {name}.")
        raise AssertionError("no aliased jax.Ref")

    def bind_nested(self, entry, leaves, donated):
        """Under a transformation (or with hoisted constants): jit is a primitive of the
        enclosing trace; its output leaves."""
        if self.compiler_options:
            raise ValueError(
                "`compiler_options` can only be passed to top-level `jax.jit`. Got "
                f"compiler_options={dict(self.compiler_options)} specified on a nested "
                f"jit with name: {self.debug_name} and source info: {self.location}")
        return jit_p.bind(*entry.hoisted, *leaves, jaxpr=entry.closed_jaxpr,
                          name=self.debug_name,
                          donated_invars=(False,) * len(entry.hoisted)
                          + (donated or (False,) * len(leaves)),
                          inline=self.inline, keep_unused=self.keep_unused)

    def _on_jit_device(self, closed, leaves):
        """jit(device=d) runs on d, as JAX's in/out_shardings of SingleDeviceSharding(d):
        sharded arguments move there; a sharding constraint inside over other devices is
        JAX's error."""
        for mesh in dispatch.meshes_named_in(closed):
            if mesh._flat_devices != (self.device,):
                raise ValueError(
                    "Received incompatible devices for jitted computation. Got explicit "
                    f"output sharding with device ids [{self.device.id}] on platform "
                    f"{self.device.platform.upper()} and sharding_constraint inside jit with "
                    f"device ids {[d.id for d in mesh._flat_devices]} on platform "
                    f"{mesh._flat_devices[0].platform.upper()} ({self.debug_name}). Drop "
                    "jit's `device` or constrain to shardings over that device.")
        return [devices_api.device_put(x, self.device)
                if type(x) is Array and x._sharding is not None else x for x in leaves]

    # -- shardings -------------------------------------------------------------------
    def partitioned(self, closed, leaves):
        """Whether this call runs as a program partitioned over a mesh (the context
        mesh's, under jax.set_mesh)."""
        return (self.places or sharding_mod.context_mesh() is not None
                or any(type(x) is Array and x._sharding is not None for x in leaves)
                or dispatch.is_partitioned(closed))

    def leaf_shardings(self, args, kwargs, entry):
        """(per argument leaf, per result leaf) the Sharding asked for, or None. They
        depend only on the trace (its argument structure) and the mesh context (the
        mesh bare PartitionSpecs name), so each entry keeps them per context."""
        key = (sharding_mod.context_mesh(), sharding_mod.get_abstract_mesh())
        found = entry.leaf_shardings.get(key)
        if found is None:
            found = entry.leaf_shardings[key] = self._leaf_shardings(args, kwargs, entry)
        return found

    def _leaf_shardings(self, args, kwargs, entry):
        dyn_args, dyn_kwargs, _, _ = self.split(args, kwargs)
        given = self.in_shardings
        if given is None or isinstance(given, (sharding_mod.Sharding,
                                               sharding_mod.PartitionSpec,
                                               layout_mod.Format)):
            given = (given,) * len(dyn_args)
        elif isinstance(given, list):
            given = tuple(given)
        if not isinstance(given, tuple) or len(given) != len(dyn_args):
            raise ValueError(
                f"jit({self.debug_name}): in_shardings must be a Sharding or a tuple with "
                f"one entry (a pytree prefix) per positional argument; got {given!r} for "
                f"{len(dyn_args)} positional arguments.")
        in_leaves = tree_util.prefix_broadcast((given, {k: None for k in dyn_kwargs}),
                                               entry.in_tree, "jit in_shardings")
        out_leaves = tree_util.prefix_broadcast(self.out_shardings, entry.out_tree,
                                                "jit out_shardings")
        def canon(s, what):
            if isinstance(s, layout_mod.Format):   # a layout, with its sharding
                return layout_mod.Format(s.layout, canon(s.sharding, what))
            return None if s is None else sharding_mod.jit_spec_sharding(s, what) \
                if isinstance(s, sharding_mod.PartitionSpec) else \
                sharding_mod.canonical_sharding(s, f"jit {what}")
        return (tuple(canon(s, "in_shardings") for s in in_leaves),
                tuple(canon(s, "out_shardings") for s in out_leaves))

    def fast_call_for(self, entry, leaves, donated, args, kwargs):
        """Makes and installs the fast call for this call's signature: 2. lower and
        3. compile (dispatch.executable_for, once per jaxpr, donation and device), and
        the executable's runner for these leaf kinds."""
        kinds = [dispatch.kind_of(x) for x in leaves]
        device = next((k.device for k in kinds if type(k) is CommittedKind), None)
        executable = dispatch.executable_for(entry.closed_jaxpr, donated, device,
                                             self.compiler_options)
        runner = dispatch.runner_for(executable, kinds, entry.in_avals, entry.out_tree)
        if config.packed_results.value and type(runner) is not dispatch.PlainRunner:
            runner = packed_results.packing_runner(runner, entry.closed_jaxpr, kinds, donated,
                                                   entry.out_tree, device,
                                                   self.compiler_options)
        return self.install_fast_call(args, kwargs, runner)

    def install_fast_call(self, args, kwargs, runner):
        """Makes `runner` the fast call of this call's signature, tried first from now."""
        nargs = len(args)
        fast = _FastCall(args, kwargs, {i if i >= 0 else i + nargs for i in self.static_argnums},
                         self.static_argnames, runner)
        self.fast_calls[self.signature(args, kwargs)] = fast
        self.latest = fast.__call__   # bound: see _FastCall.__init__
        return fast


# Every jit's cache per function and options: fun -> {options: JitCache}, weakly keyed on
# the function, as JAX keys its own.
_caches = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()
# JAX's loggers: tracing times under jax._src.dispatch, cache misses under partial_eval's
_logger = logging.getLogger("jax._src.dispatch")
_miss_logger = logging.getLogger("jax._src.interpreters.partial_eval")
live_caches = weakref.WeakSet()   # every JitCache alive, for jax.clear_caches


def _cache_for(fun, options):
    """The JitCache of `fun` with `options` (a tuple of the jit arguments)."""
    try:
        hash(options)
        with _caches_lock:
            per_fun = _caches.get(fun)
            cache = per_fun and per_fun.get(options)
    except TypeError:   # not weakly referenceable, unhashable function or options
        return JitCache(fun, *options)
    if cache is None:
        cache = JitCache(fun, *options)   # outside the lock: it may raise or take time
        with _caches_lock:
            cache = _caches.setdefault(fun, {}).setdefault(options, cache)
    return cache


class PjitFunction:
    """The callable returned by jit(f): a cached call runs the latest signature's fast
    call; any other goes to JitCache.call."""

    def __init__(self, fun, cache):
        # as JAX's: the function's attributes (its __dict__) are copied onto the wrapper
        functools.update_wrapper(self, fun)
        self.fun, self._jit = fun, cache

    def __call__(self, *args, **kwargs):
        try:
            out = self._jit.latest(args, kwargs)
            if out is NO_FIT:
                return self._jit.call(self.fun, args, kwargs)
            return out
        except Exception as e:   # an API boundary (inline: no frame on the hot path)
            filter_exception(e)
            raise

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        try:
            return f"<PjitFunction of {self.__wrapped__!r}>"
        except Exception:   # as JAX's: a function whose repr fails, or no function left
            return "<PjitFunction>"

    # -- options and introspection -----------------------------------------------------
    static_argnums = property(lambda self: self._jit.static_argnums)
    static_argnames = property(lambda self: self._jit.static_argnames)
    donate_argnums = property(lambda self: self._jit.donate_argnums)
    donate_argnames = property(lambda self: self._jit.donate_argnames)

    @property
    def __signature__(self):
        # The wrapped function's, as JAX's PjitFunction reports it: __get__ makes this
        # object look like a builtin to inspect, which then finds no signature.
        return inspect.signature(self.fun)

    def _cache_size(self):
        return len(self._jit.entries)

    def clear_cache(self):
        self._jit.clear()

    @api_boundary
    def trace(self, *args, **kwargs):
        """Traces for these arguments and returns a Traced (jaxpr, out_info, lower())."""
        entry, _, donated = self._jit.entry_for(self.fun, args, kwargs, abstract=True)
        return Traced(self, entry, args, kwargs, donated)

    @api_boundary
    def lower(self, *args, **kwargs):
        """Traces and lowers for these arguments: a Lowered, with as_text() (StableHLO)
        and compile()."""
        return self._lower(args, kwargs, None, sharding_mod.abstract_context_mesh())

    def _lower(self, args, kwargs, lowering_platforms, traced_mesh):
        """`traced_mesh`: the abstract_context_mesh() the trace was made under: the
        program is partitioned over it."""
        from pyjax._src.api import aot
        entry, leaves, donated = self._jit.entry_for(self.fun, args, kwargs, abstract=True)
        if entry.hoisted:
            raise ValueError(f"jit({self._jit.debug_name}).lower() was called inside a "
                             "transformation; lower at top level.")
        # A ShapeDtypeStruct's sharding stands for that of the array it describes.
        described = [_described_sharding(x) for x in leaves]
        shardings = None
        if self._jit.partitioned(entry.closed_jaxpr, leaves) or any(described) \
                or traced_mesh is not None:
            given, outs = self._jit.leaf_shardings(args, kwargs, entry)
            shardings = (tuple(map(_with_described, given, described)),
                         outs)
        refs = None
        if entry.ref_leaves or entry.closed_refs:
            if shardings is not None:
                raise NotImplementedError(
                    f"jit({self._jit.debug_name}).lower(): pyjax does not lower a "
                    "computation partitioned over a mesh that reads or writes jax.Refs; "
                    "call the jitted function instead.")
            refs = (entry.ref_leaves, entry.closed_refs, entry.closed_written)
            donated = (donated or (False,) * len(leaves)) + (False,) * len(entry.closed_refs)
            leaves = [x[...] if i in entry.ref_leaves else x for i, x in enumerate(leaves)]
            leaves += [ref[...] for ref in entry.closed_refs]
        if entry.hi is not None:   # hijax arguments: the program takes their arrays
            if shardings is not None:
                raise NotImplementedError(
                    f"jit({self._jit.debug_name}).lower(): pyjax does not lower a "
                    "computation partitioned over a mesh that takes or returns hijax "
                    "values; call the jitted function instead.")
            n_in = len(entry.in_avals)
            leaves = entry.hi.lower_args(leaves[:n_in]) + leaves[n_in:]
            donated = ()
        return aot.lower(entry.closed_jaxpr, entry.in_tree, entry.out_tree,
                         donated or (False,) * len(leaves), self._jit.debug_name, leaves,
                         self._jit.device, shardings, self._jit.compiler_options,
                         lowering_platforms, traced_mesh, refs, entry.hi)

    @api_boundary
    def eval_shape(self, *args, **kwargs):
        return self.trace(*args, **kwargs).out_info


register_boundary(PjitFunction.__call__.__code__)


class Traced:
    """The result of jit(f).trace(...): the jaxpr and its output structure."""

    def __init__(self, wrapped, entry, args, kwargs, donated):
        self._wrapped, self._entry = wrapped, entry
        self._args, self._kwargs, self._donated = args, kwargs, donated
        self._traced_mesh = sharding_mod.abstract_context_mesh()

    @property
    def jaxpr(self):
        return self._entry.closed_jaxpr

    @property
    def args_info(self):
        from pyjax._src.api import aot
        entry = self._entry
        return aot.args_info(entry.in_tree, entry.in_avals,
                             self._donated or (False,) * len(entry.in_avals))

    def lower(self, *, lowering_platforms=None):
        """Lowers the trace: a Lowered. `lowering_platforms` (e.g. ("cpu",)) lowers for
        those platforms without devices: shardings over an AbstractMesh alone then need
        devices only at compile(device_assignment=...)."""
        if lowering_platforms is not None:
            lowering_platforms = _checked_platforms(lowering_platforms)
        return self._wrapped._lower(self._args, self._kwargs, lowering_platforms,
                                    self._traced_mesh)

    @property
    def in_avals(self):
        """The dynamic arguments' avals, as the ((args...), {kwargs}) pytree."""
        return tree_util.tree_unflatten(self._entry.in_tree, self._entry.in_avals)

    @property
    def out_info(self):
        """The results' ShapeDtypeStructs; those jit's out_shardings place carry that
        sharding, as JAX's do."""
        infos = [shapes.ShapeDtypeStruct.of_result(a)
                 for a in self._entry.closed_jaxpr.out_avals]
        cache = self._wrapped._jit
        if cache.out_shardings is not None:
            _, placed = cache.leaf_shardings(self._args, self._kwargs, self._entry)
            infos = [i if s is None else i.update(sharding=s) for i, s in zip(infos, placed)]
        return tree_util.tree_unflatten(self._entry.out_tree, infos)


_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


def _checked_platforms(platforms) -> tuple:
    """lowering_platforms as a tuple of JAX's platform names."""
    if isinstance(platforms, str) or not all(isinstance(p, str) for p in platforms):
        raise TypeError(f"lowering_platforms must be a tuple of platform names (e.g. "
                        f"('cpu',)), got {platforms!r}.")
    unknown = [p for p in platforms if p not in _PLATFORMS]
    if unknown or not platforms:
        raise ValueError(f"lowering_platforms {tuple(platforms)!r}: each must be one of "
                         f"{_PLATFORMS}, and at least one must be given.")
    return tuple(platforms)


def _asks_placement(shardings) -> bool:
    """Whether a jit in_shardings/out_shardings prefix names any Sharding, PartitionSpec
    or Format (None entries leave the placement to XLA)."""
    is_leaf = lambda x: isinstance(x, (sharding_mod.Sharding, sharding_mod.PartitionSpec,
                                       layout_mod.Format))
    return bool(tree_util.tree_leaves(shardings, is_leaf=is_leaf))


def _check_no_bare_layout(shardings):
    """JAX's error for a Layout given to jit where a Format (layout and sharding) goes."""
    is_leaf = lambda x: isinstance(x, (layout_mod.Layout, layout_mod.AutoLayout))
    for leaf in tree_util.tree_leaves(shardings, is_leaf=is_leaf):
        if is_leaf(leaf):
            raise ValueError(
                "`jax.jit` does not accept device-local layouts directly. Create a `Format` "
                "instance wrapping this device-local layout and pass that to `jit` "
                f"instead. Got {leaf}")


def _with_described(given, described):
    """jit's in_sharding for an argument (a Sharding, Format or None), completed by what
    a ShapeDtypeStruct argument describes where jit leaves the sharding open."""
    if given is None:
        return described
    if isinstance(given, layout_mod.Format) and given.sharding is None and \
            described is not None:
        return layout_mod.Format(given.layout, described.sharding if isinstance(
            described, layout_mod.Format) else described)
    return given


def _described_sharding(leaf):
    """The NamedSharding a ShapeDtypeStruct argument of lower() gives (as a Format with
    the layout it gives, if any), or None."""
    if not isinstance(leaf, shapes.ShapeDtypeStruct):
        return None
    found = leaf.sharding
    if not isinstance(found, sharding_mod.NamedSharding):
        return None
    return found if leaf.format.layout is None else leaf.format


def _lowered_fun(flat_fun, hi, num_ref_leaves):
    """flat_fun of argument leaves some of which are hijax values, as a function of their
    low-level values (`hi`, a hijax.LoweredArgs): it also returns what the mutable ones
    hold at the end, after the function's results and before the Ref arguments'."""
    def lowered(*lo_vals):
        leaves = hi.raise_args(lo_vals)
        outs = list(flat_fun(*leaves))
        split = len(outs) - num_ref_leaves
        return outs[:split] + hi.final_lovals(leaves) + outs[split:]
    return lowered


def _as_arrays(leaves, avals):
    """Argument leaves as Arrays: host values (scalars, NumPy) move to the device."""
    return [x if type(x) is Array else dispatch.host_to_array(x, a)
            for x, a in zip(leaves, avals)]


def _merge_static(args, dyn_args, static_nums):
    dyn = iter(dyn_args)
    return [args[i] if i in static_nums else next(dyn) for i in range(len(args))]


def _arg_names(fun):
    params = _parameters(fun)
    return None if params is None else [p.name for p in params]


def _location(fun):
    code = getattr(getattr(fun, "__wrapped__", fun), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else None


def _flat_arg_names(names, args, static_nums, dyn_kwargs):
    """One name per flattened leaf (e.g. 'params['w']'), for error messages."""
    if names is None:
        return None
    out = []
    for i, x in enumerate(args):
        if i in static_nums:
            continue
        base = names[i] if i < len(names) else f"args[{i}]"
        for path, _ in tree_util.tree_flatten_with_path(x)[0]:
            out.append(base + tree_util.keystr(path))
    for k in sorted(dyn_kwargs):   # the order in which the kwargs dict flattens
        for path, _ in tree_util.tree_flatten_with_path(dyn_kwargs[k])[0]:
            out.append(k + tree_util.keystr(path))
    return out


def _argument_path(path):
    """'args[0]['a']' or 'y[1]' for a key path into jit's (args, kwargs) pair."""
    where, first, rest = path[0], path[1], path[2:]
    head = f"args[{first.idx}]" if where.idx == 0 else str(first.key)
    return head + tree_util.keystr(rest)


def _invalid_argument_error(name, leaves, in_tree, arg_names=None):
    """The TypeError for the first argument leaf that is not an array (a str, an object,
    a ShapeDtypeStruct, or a NumPy array of a dtype JAX lacks: object, str, datetime...),
    named by its path (`arg_names`: per leaf, as the parameters name it)."""
    paths = tree_util.tree_flatten_with_path(in_tree.unflatten(leaves))[0]
    for i, (path, leaf) in enumerate(paths):
        try:
            get_aval(leaf)
        except TypeError as problem:
            where = arg_names[i] if arg_names else _argument_path(path)
            if isinstance(leaf, shapes.ShapeDtypeStruct):
                return TypeError(
                    f"Argument '{where}' of shape {leaf.dtype.name}"
                    f"[{','.join(map(str, leaf.shape))}] of type {type(leaf)} is not a "
                    "valid JAX type. A ShapeDtypeStruct describes an array without its "
                    "value: call the jitted function with an array, or pass "
                    "ShapeDtypeStructs to its .trace(), .lower() or jax.eval_shape.")
            what = (f"a NumPy array of dtype {leaf.dtype}, which JAX does not support"
                    if isinstance(leaf, np.ndarray) else f"{leaf!r:.100}")
            return TypeError(
                f"Error interpreting argument to {name} as an abstract array. The "
                f"problematic value is of type {type(leaf)} and was passed to the function "
                f"at path {where}: {what} ({problem}). A jit-wrapped "
                "function takes arrays, scalars and pytrees of them: convert the value to "
                "a number array, or mark the argument static with the static_argnums or "
                "static_argnames parameters of jax.jit.")
    raise AssertionError("_invalid_argument_error: every argument is a valid array")


def _explain_miss(cache, key, arg_names):
    """Logs why jit traces again, in JAX's words: what differs from the closest key seen
    before (`arg_names`: the argument leaves' names, or None)."""
    logger = _miss_logger
    name = cache.debug_name
    if not cache.entries:
        logger.warning("TRACING CACHE MISS for %s at %s: first call (tracing for the "
                       "first time)", name, cache.location)
        return
    caller = pe.user_frame()
    at = f" at {caller[0]}:{caller[1]} ({caller[2]})" if caller else ""
    defined = f" defined at {cache.location}" if cache.location else ""
    closest = min(_key_difference(old, key, arg_names) for old in list(cache.entries))
    logger.warning("TRACING CACHE MISS%s:\n  for %s%s\n  all previously seen cache keys "
                   "differ. For the closest previous key:\n  %s", at, name, defined,
                   closest[2])


def _key_difference(old, new, arg_names=None):
    """(severity, number of differences, what differs between two jit cache keys in
    jax_explain_cache_misses' words, how to avoid such retraces). As in JAX, the tracing
    context is compared first, then the pytree, the static arguments and the types;
    the lowest (severity, number) is the closest key."""
    old_tree, old_statics, old_avals, old_state = old
    in_tree, statics, avals, state = new
    if old_state != state:
        names = [f.name for f in config.config._tracing_flags]
        diffs = [(n, a, b) for n, a, b in zip(names, state[0], old_state[0]) if a != b]
        diffs += [(what, a, b) for what, a, b in zip(
            ("XLA metadata (set_xla_metadata)", "context mesh (jax.set_mesh)",
             "named axes bound (vmap/pmap axis_name, size)"), state[1:], old_state[1:])
            if a != b]
        return (0, len(diffs), "Tracing context doesn't match, e.g. due to config or "
                "context manager.\n" + "\n".join(
                    f"  * {what} differs: now {a} and before {b}" for what, a, b in diffs),
                "set such options, and enter such contexts, once, before the calls.")
    if old_tree != in_tree:
        return (1, 1, f"different input pytree:\n  * now {in_tree} and before {old_tree}",
                "pass arguments of one pytree structure each call (e.g. pad lists to a "
                "fixed length), or make the varying part a static argument.")
    if old_statics != statics:
        return (2, 1, f"different static arguments:\n  * now {statics} and before "
                f"{old_statics}",
                "a static argument that changes each call retraces each time: pass it as "
                "a traced argument (drop it from static_argnums / static_argnames), or "
                "let it take only a few values.")
    diffs, weak_hint = [], False
    for i, (b, a) in enumerate(zip(old_avals, avals)):
        if a == b:
            continue
        now, before = a.str_short(True), b.str_short(True)
        if getattr(a, "weak_type", False) != getattr(b, "weak_type", False):
            weak_hint = True
            now += f"{{weak_type={a.weak_type}}}"
            before += f"{{weak_type={b.weak_type}}}"
        where = arg_names[i] if arg_names and i < len(arg_names) else f"args[{i}]"
        diffs.append(f"  * at {where}, now {now} and before {before}")
    if len(old_avals) == len(avals) and all(a.shape == b.shape for a, b in
                                            zip(old_avals, avals)):
        fix = ("pass values of one dtype each call (a Python scalar is weakly typed: "
               "convert it with jnp.asarray(x, dtype)).")
    else:
        fix = "pad the inputs to a few fixed shapes (bucketing), so that calls share traces."
    text = "different input types:\n" + "\n".join(diffs)
    if weak_hint:   # (JAX appends the link without a line break)
        text += "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
    return 3, len(diffs), text, fix


class RetraceWarning(UserWarning):
    """One jitted function traced more often than pyjax_retrace_warning_threshold."""


# Code the user cannot change: pyjax/_src (jax.random.normal, ...) and installed packages
# (a library's internal jit wrapper, e.g. one per decorated function, is not user code).
_LIBRARY_SOURCES = tuple({os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          *(sysconfig.get_paths()[k] for k in ("purelib", "platlib")),
                          *site.getsitepackages()})


def _code_of(fun):
    fun = fun.func if isinstance(fun, functools.partial) else fun
    return getattr(fun, "__code__", None)


def _warn_retrace(cache, count, reason, fix):
    warnings.warn(
        f"jit({cache.debug_name}) at {cache.location} has traced {count} times; the "
        f"last TRACING CACHE MISS: {reason}\nTo avoid retracing: {fix} (Set "
        "pyjax_retrace_warning_threshold to 0 to silence this warning.)",
        RetraceWarning, stacklevel=5)


@runtime_checkable
class Wrapped(Protocol):
    """JAX's stages.Wrapped: a function ready to be traced, lowered and compiled, as
    jit's results are (and the library functions JAX defines as jitted: jnp.sin)."""

    def __call__(self, *args, **kwargs): ...

    def trace(self, *args, **kwargs) -> Traced: ...

    def lower(self, *args, **kwargs) -> Any: ...


class AotFunction(functools.partial):
    """A library function JAX defines as jitted (jnp.sin is jit(sin, inline=True)): a
    stages.Wrapped whose ahead-of-time methods (trace, lower, eval_shape) are those of
    jit(fun, **jit_options), so that jax.export and `.lower` take it as JAX's; calling
    it is the plain call of `fun` (a partial's call, made in C: eager ops are a hot
    path, and a Python __call__ would add a frame to each)."""

    def __new__(cls, fun, **jit_options):
        self = super().__new__(cls, fun)
        functools.update_wrapper(self, fun)
        self._options = jit_options
        return self

    @functools.cached_property
    def _jitted(self):   # made on first use, not at import (a race makes the same one)
        return jit(self.func, **self._options)

    def renamed(self, name):
        """The function of its own named `name` (util.renamed: JAX's aliases)."""
        return AotFunction(renamed(self.func, name), **self._options)

    def __get__(self, obj, objtype=None):   # a method where a class holds it, as a function
        return self if obj is None else types.MethodType(self, obj)

    def __reduce__(self):   # pickled by name, as a function is
        return self.__qualname__

    def __repr__(self):   # as JAX's (a jit of the function)
        return f"<PjitFunction of {self.func!r}>"

    def trace(self, *args, **kwargs):
        return self._jitted.trace(*args, **kwargs)

    def lower(self, *args, **kwargs):
        return self._jitted.lower(*args, **kwargs)

    def eval_shape(self, *args, **kwargs):
        return self._jitted.eval_shape(*args, **kwargs)


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, inline=False, keep_unused=False, device=None, backend=None,
        in_shardings=None, out_shardings=None, abstracted_axes=None, compiler_options=None):
    """Compiles `fun` with tracing: it runs once per new combination of argument types
    and static values, and later calls reuse the compiled computation.
    `compiler_options` (XLA's, name -> value) apply to a top-level jit's compilations."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames, inline=inline,
                                 keep_unused=keep_unused, device=device, backend=backend,
                                 in_shardings=in_shardings, out_shardings=out_shardings,
                                 compiler_options=compiler_options)
    if device is not None or backend is not None:
        # The FAQ calls these experimental and not recommended; JAX now deprecates them.
        warnings.warn("jit's `device` and `backend` arguments are deprecated: put the inputs "
                      "on the device you want with `jax.device_put(x, device)` instead "
                      "(computation follows committed data).", DeprecationWarning,
                      stacklevel=2)
        if device is not None and not hasattr(device, "platform"):
            raise TypeError(f"jit device must be a Device (one of jax.devices()), got "
                            f"{device!r}")
        if backend is not None:
            devices_mod.devices(backend)     # an unknown backend raises here, not later
    check_callable(fun, "jit")
    from pyjax._src.api import aot

    def given(normalize, value, *what):   # None (not given) stays: JitCache infers it
        return None if value is None else normalize(value, *what)

    options = (given(normalize_argnums, static_argnums),
               given(_normalize_argnames, static_argnames),
               given(normalize_argnums, donate_argnums, "jit donate_argnums"),
               given(_normalize_argnames, donate_argnames), inline, keep_unused, device,
               in_shardings, out_shardings, aot.options_key(compiler_options or {}))
    return PjitFunction(fun, _cache_for(fun, options))
