"""jit: trace once per (function, static arguments, argument types), cache the jaxpr,
run it through the executor. Side effects in the Python function happen only while
tracing; a new static value or argument type traces again (and can say why)."""
from __future__ import annotations

import functools
import inspect
import operator
import warnings
import weakref

import numpy as np

from pyjax._src import config, tree_util
from pyjax._src import sharding as sharding_mod
from pyjax._src.array import Array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.backends import dispatch
from pyjax._src.backends.dispatch import NO_FIT, CommittedKind, HostArrayKind
from pyjax._src.core.avals import ShapedArray, get_aval, is_valid_jax_type
from pyjax._src.core.trace import Trace, current_trace
from pyjax._src.core.trace import _context as _trace_context
from pyjax._src.core.jaxpr import ClosedJaxpr
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax.call import jit_p
from pyjax._src.util import fun_name


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


def _infer_argnums_and_argnames(params, argnums, argnames):
    """Like JAX: given only numbers, also mark the matching names (and vice versa)."""
    if params is None:
        return argnums, argnames
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if argnums and not argnames:
        argnames = tuple(positional[i] for i in argnums if -len(positional) <= i
                         < len(positional))
    elif argnames and not argnums:
        argnums = tuple(positional.index(n) for n in argnames if n in positional)
    return argnums, argnames


def _check_arguments_exist(params, argnums, argnames, what):
    """`what`_argnums must be positions and `what`_argnames names that fun takes."""
    if params is None:
        return
    if not any(p.kind == p.VAR_POSITIONAL for p in params):
        n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        if any(not -n <= i < n for i in argnums):
            raise ValueError(f"jitted function has {what}_argnums={tuple(argnums)}, but "
                             f"only accepts {n} positional arguments.")
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
    __slots__ = ("closed_jaxpr", "in_tree", "out_tree", "hoisted", "in_avals")

    def __init__(self, closed_jaxpr, in_tree, out_tree, hoisted, in_avals):
        self.closed_jaxpr, self.in_tree, self.out_tree = closed_jaxpr, in_tree, out_tree
        self.hoisted, self.in_avals = hoisted, in_avals


def _fast_path(wrapped, closed, donated, out_tree, args, kwargs):
    """The fast path for calls like this one (the same positional count, keyword names,
    static values, and pytrees of the same structure whose leaves are Arrays (committed
    to the same device, or not), NumPy arrays and Python/NumPy scalars of the same kinds):
    a method (self, *args, **kwargs) straight to the executable's result, which hands a
    call it does not fit to JitWrapped._general."""
    dyn_args, dyn_kwargs, statics, static_nums = wrapped._split(args, kwargs)
    leaves, in_tree = tree_util.flatten((dyn_args, dyn_kwargs))
    kinds = [_kind(x) for x in leaves]
    committed = next((k.device for k in kinds if type(k) is CommittedKind), None)
    run, donated, _ = dispatch.route(closed, donated, committed)
    fast_call = getattr(run, "fast_call", None)   # XLA's lean entry, when it has one
    entry = fast_call and fast_call(
        _call_prologue(args, kwargs, static_nums, wrapped.static_argnames), kinds,
        closed.in_avals, donated, out_tree, JitWrapped._general)
    return entry or _plain_fast_path(run, wrapped._split, statics, in_tree, kinds,
                                     closed.in_avals, donated, out_tree, committed is not None)


def _call_prologue(args, kwargs, static_nums, static_names):
    """Source lines (and the names they use) that check a call (args, kwargs) against
    this one - the same positional count and keyword names, equal static values - and
    bind the leaves of its dynamic arguments to x0, x1, ... in jit's flattening order."""
    if not kwargs and not static_nums:
        lines, names = tree_util.unpack_source(args, _LEAF_TYPES, "args", NO_FIT)
        return ["if kwargs:", f"    {NO_FIT}"] + lines, names
    names = {"keywords": frozenset(kwargs), "static_values_equal": static_values_equal}
    lines = [f"if len(args) != {len(args)} or kwargs.keys() != keywords:",
             f"    {NO_FIT}"]
    static_nums = sorted(i for i in static_nums if i < len(args))
    statics = [(f"args[{i}]", args[i]) for i in static_nums] + \
        [(f"kwargs[{k!r}]", v) for k, v in kwargs.items() if k in static_names]
    for j, (where, value) in enumerate(statics):   # equal as jit's cache compares them
        names[f"static{j}"], names[f"static{j}_type"] = value, type(value)
        lines += [f"v = {where}",
                  f"if not (type(v) is static{j}_type and (v is static{j} or "
                  f"static_values_equal(v, static{j}))):",
                  f"    {NO_FIT}"]
    dyn_args = [f"args[{i}], " for i in range(len(args)) if i not in static_nums]
    dyn_kwargs = [k for k in kwargs if k not in static_names]
    lines.append(f"dynamic = (({''.join(dyn_args)}), "
                 f"{{{', '.join(f'{k!r}: kwargs[{k!r}]' for k in dyn_kwargs)}}})")
    example = (tuple(x for i, x in enumerate(args) if i not in static_nums),
               {k: kwargs[k] for k in dyn_kwargs})
    unpack_lines, unpack_names = tree_util.unpack_source(example, _LEAF_TYPES, "dynamic",
                                                         NO_FIT)
    names.update(unpack_names)
    return lines + unpack_lines, names


def _plain_fast_path(run, split, statics, in_tree, kinds, in_avals, donated, out_tree,
                     committed):
    """The fast path for executables without a lean entry (NumPy, host callbacks)."""
    state = dispatch.default_route_state()

    def fast(self, *args, **kwargs):
        if (_trace_context.trace is not Trace.root
                or dispatch.default_route_state() != state):
            return self._general(args, kwargs)
        dyn_args, dyn_kwargs, call_statics, _ = split(args, kwargs)
        leaves, tree = tree_util.flatten((dyn_args, dyn_kwargs))
        if tree != in_tree or call_statics != statics:
            return self._general(args, kwargs)
        arrays = []
        for x, kind, aval in zip(leaves, kinds, in_avals):
            if not _fits(x, kind):
                return self._general(args, kwargs)
            arrays.append(x if type(x) is Array else _to_array(x, aval))
        outs = run(arrays, committed)
        for i in donated:
            if type(leaves[i]) is Array:
                leaves[i].delete("donated")
        return tree_util.tree_unflatten(out_tree, outs)
    return fast


def _kind(x):
    """What a fast path expects of an argument leaf: an uncommitted Array's aval, a
    committed one's CommittedKind, a NumPy array's HostArrayKind, a scalar's type."""
    if type(x) is Array:
        return CommittedKind(x.aval, x._device) if x.committed else x.aval
    if type(x) is np.ndarray:
        return HostArrayKind(x.dtype, x.shape)
    return type(x)


def _fits(x, kind):
    """Whether an argument leaf is of the kind a fast path expects."""
    if type(kind) is ShapedArray:
        return type(x) is Array and not x.committed and x.aval == kind
    if type(kind) in (CommittedKind, HostArrayKind):
        return kind.fits(x)
    return type(x) is kind


_SCALAR_TYPES = (bool, int, float, complex, np.bool_, np.number)
_LEAF_TYPES = (Array, np.ndarray) + _SCALAR_TYPES


def _is_host_leaf(x):
    """A Python/NumPy scalar or exactly a NumPy array (fast paths take no subclasses)."""
    return type(x) is np.ndarray or isinstance(x, _SCALAR_TYPES)


def _host_values_move_freely():
    """Whether scalar and NumPy arguments may skip the transfer guard (fast paths move
    them without asking): only when it allows implicit host-to-device transfers."""
    return devices_mod.transfer_guard_level("host_to_device") == "allow"


live_wrappers = weakref.WeakSet()   # every JitWrapped alive


class JitWrapped:
    """The callable returned by jit(f)."""

    def __new__(cls, *args, **kwargs):
        # Each jitted function gets a class of its own, whose __call__ becomes the fast
        # entry generated for the latest call signature: one Python frame per call.
        return object.__new__(type(cls.__name__, (cls,), {"__module__": cls.__module__}))

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(),
                 donate_argnames=(), inline=False, keep_unused=False, device=None):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {fun!r} of type {type(fun)}")
        functools.update_wrapper(self, fun, updated=())
        self.fun = fun
        static_argnums = normalize_argnums(static_argnums)
        static_argnames = _normalize_argnames(static_argnames)
        donate_argnums = normalize_argnums(donate_argnums, "jit donate_argnums")
        donate_argnames = _normalize_argnames(donate_argnames)
        params = _parameters(fun)
        _check_arguments_exist(params, static_argnums, static_argnames, "static")
        _check_arguments_exist(params, donate_argnums, donate_argnames, "donate")
        static_argnums, static_argnames = _infer_argnums_and_argnames(
            params, static_argnums, static_argnames)
        donate_argnums, donate_argnames = _infer_argnums_and_argnames(
            params, donate_argnums, donate_argnames)
        both = set(static_argnames) & set(donate_argnames)
        if both or set(static_argnums) & set(donate_argnums):
            raise ValueError(f"jit: an argument cannot be both static and donated; "
                             f"static_argnums={tuple(static_argnums)} and donate_argnums="
                             f"{tuple(donate_argnums)} (argnames {sorted(both)}) intersect. "
                             "Static arguments are not buffers, so there is nothing to "
                             "donate: drop it from donate_argnums.")
        self.static_argnums = frozenset(static_argnums)
        self.static_argnames = frozenset(static_argnames)
        self.donate_argnums = frozenset(donate_argnums)
        self.donate_argnames = frozenset(donate_argnames)
        self.inline, self.keep_unused, self.device = inline, keep_unused, device
        self.in_shardings = self.out_shardings = None   # pytree prefixes (jit sets them)
        self._cache = {}
        self._fast_paths = {}   # self._signature(args, kwargs) -> _fast_path(...)
        live_wrappers.add(self)   # for jax.clear_caches
        self._arg_names = _arg_names(fun)
        self._debug_name = fun_name(fun)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<PjitFunction of {self.fun!r}>"

    # -- splitting arguments ---------------------------------------------------------
    def _split(self, args, kwargs):
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

    def _signature(self, args, kwargs):
        """A call's key among the fast paths: each argument leaf's kind, after the tree
        structure and static values when there are containers, keywords or statics."""
        if (not kwargs and not self.static_argnums
                and all(type(x) is Array or _is_host_leaf(x) for x in args)):
            return tuple([_kind(x) for x in args])
        dyn_args, dyn_kwargs, statics, _ = self._split(args, kwargs)
        leaves, tree = tree_util.flatten((dyn_args, dyn_kwargs))
        return (tree, statics, *[_kind(x) for x in leaves])

    def _donated_leaves(self, args, dyn_kwargs, static_nums):
        if not (self.donate_argnums or self.donate_argnames):
            return ()
        flags = []
        nargs = len(args)
        donate = {i if i >= 0 else i + nargs for i in self.donate_argnums}
        for i, x in enumerate(args):
            if i not in static_nums:
                flags += [i in donate] * len(tree_util.tree_leaves(x))
        for k, v in dyn_kwargs.items():
            flags += [k in self.donate_argnames] * len(tree_util.tree_leaves(v))
        return tuple(flags)

    # -- tracing ---------------------------------------------------------------------
    def _trace(self, dyn_args, dyn_kwargs, statics, static_nums, in_avals, in_tree, args,
               kwargs):
        def flat_fun(*leaf_tracers):
            call_args, call_kwargs = tree_util.tree_unflatten(in_tree, leaf_tracers)
            full_args = _merge_static(args, call_args, static_nums)
            full_kwargs = dict(kwargs)
            full_kwargs.update(call_kwargs)
            out = self.fun(*full_args, **full_kwargs)
            out_leaves, out_tree = tree_util.flatten(out)
            for leaf in out_leaves:
                if not is_valid_jax_type(leaf):
                    raise TypeError(
                        f"{self._debug_name} returned a value of type {type(leaf)}, which "
                        "is not a valid JAX type; jitted functions must return arrays "
                        "(in pytrees).")
            flat_fun.out_tree = out_tree
            return out_leaves

        debug = pe.DebugInfo(self._debug_name, _location(self.fun),
                             _flat_arg_names(self._arg_names, args, static_nums, dyn_kwargs))
        closed, hoisted = pe.trace_to_closed_jaxpr(flat_fun, in_avals, debug)
        # Drop work no output needs (e.g. a forward scan's unused ys under grad) before
        # any executor sees it; effectful equations stay.
        jaxpr, consts, _ = pe.dce_closed_jaxpr(closed.jaxpr, closed.consts, None)
        if len(jaxpr.eqns) != len(closed.jaxpr.eqns):
            closed = ClosedJaxpr(jaxpr, consts)
        return CacheEntry(closed, in_tree, flat_fun.out_tree, hoisted, in_avals)

    def _get_entry(self, args, kwargs):
        dyn_args, dyn_kwargs, statics, static_nums = self._split(args, kwargs)
        leaves, in_tree = tree_util.flatten((dyn_args, dyn_kwargs))
        try:
            in_avals = tuple(x.aval if type(x) is Array else get_aval(x) for x in leaves)
        except TypeError:
            raise _invalid_argument_error(self._debug_name, leaves, in_tree) from None
        key = (in_tree, statics, in_avals, config.config.trace_state())
        entry = self._cache.get(key)
        if entry is None or entry.hoisted:
            if config.no_tracing.value:
                raise RuntimeError(f"re-tracing function {self._debug_name} for `jit`, but "
                                   "'no_tracing' is set (jax.no_tracing): a call with new "
                                   "argument types or static values needs tracing.")
            if config.explain_cache_misses.value or config.log_compiles.value:
                _explain_miss(self, key)
            entry = self._trace(dyn_args, dyn_kwargs, statics, static_nums, in_avals,
                                in_tree, args, kwargs)
            if not entry.hoisted:   # jaxprs closing over outer tracers are not reusable
                self._cache[key] = entry
        return entry, leaves, self._donated_leaves(args, dyn_kwargs, static_nums)

    def __call__(self, *args, **kwargs):
        # Until a fast entry is installed (see _general) in this function's own class.
        return self._general(args, kwargs)

    def _use_fast_path(self, fast):
        type(self).__call__ = fast   # the latest signature's entry is tried first

    def _general(self, args, kwargs):
        """A call the installed fast entry did not fit."""
        if len(self._fast_paths) > 1:   # another signature seen before?
            fast = self._fast_paths.get(self._signature(args, kwargs))
            if fast is not None and type(self).__call__ is not fast:
                # Installed, it runs the call; if that does not fit either, it comes back
                # here and goes on below (it is now the installed one).
                self._use_fast_path(fast)
                return fast(self, *args, **kwargs)
        if config.disable_jit_flag.value:
            return self.fun(*args, **kwargs)
        entry, leaves, donated = self._get_entry(args, kwargs)
        closed = entry.closed_jaxpr
        if current_trace() is Trace.root and not entry.hoisted:
            arrays = [x if type(x) is Array else _to_array(x, a)
                      for x, a in zip(leaves, entry.in_avals)]
            if self._partitioned(closed, arrays):   # one SPMD program; no fast path
                return tree_util.tree_unflatten(entry.out_tree, dispatch.run_sharded(
                    closed, arrays, donated, *self._leaf_shardings(args, kwargs, entry),
                    where=f"jitted computation {self._debug_name}"))
            outs = dispatch.run_closed_jaxpr(closed, arrays, donated, self.device)
            if self.device is None and all(
                    type(x) is Array or _is_host_leaf(x) and _host_values_move_freely()
                    for x in leaves):
                fast = self._fast_paths[self._signature(args, kwargs)] = _fast_path(
                    self, closed, donated or (False,) * len(leaves), entry.out_tree, args,
                    kwargs)
                self._use_fast_path(fast)
        else:
            donated_invars = (False,) * len(entry.hoisted) + (donated or
                                                             (False,) * len(leaves))
            outs = jit_p.bind(*entry.hoisted, *leaves, jaxpr=closed, name=self._debug_name,
                              donated_invars=donated_invars, inline=self.inline,
                              keep_unused=self.keep_unused)
        return tree_util.tree_unflatten(entry.out_tree, outs)

    # -- shardings -------------------------------------------------------------------
    def _partitioned(self, closed, arrays):
        """Whether this call runs as a program partitioned over a mesh."""
        return (self.in_shardings is not None or self.out_shardings is not None
                or any(x._sharding is not None for x in arrays)
                or dispatch.is_partitioned(closed))

    def _leaf_shardings(self, args, kwargs, entry):
        """(per argument leaf, per result leaf) the Sharding asked for, or None."""
        dyn_args, dyn_kwargs, _, _ = self._split(args, kwargs)
        given = self.in_shardings
        if given is None or isinstance(given, (sharding_mod.Sharding,
                                               sharding_mod.PartitionSpec)):
            given = (given,) * len(dyn_args)
        elif isinstance(given, list):
            given = tuple(given)
        if not isinstance(given, tuple) or len(given) != len(dyn_args):
            raise ValueError(
                f"jit({self._debug_name}): in_shardings must be a Sharding or a tuple with "
                f"one entry (a pytree prefix) per positional argument; got {given!r} for "
                f"{len(dyn_args)} positional arguments.")
        in_leaves = tree_util.prefix_broadcast((given, {k: None for k in dyn_kwargs}),
                                               entry.in_tree, "jit in_shardings")
        out_leaves = tree_util.prefix_broadcast(self.out_shardings, entry.out_tree,
                                                "jit out_shardings")
        canon = lambda s, what: None if s is None else sharding_mod.canonical_sharding(s, what)
        return ([canon(s, "jit in_shardings") for s in in_leaves],
                [canon(s, "jit out_shardings") for s in out_leaves])

    # -- introspection ---------------------------------------------------------------
    def _cache_size(self):
        return len(self._cache)

    def clear_cache(self):
        self._cache.clear()
        self._fast_paths.clear()
        self._use_fast_path(JitWrapped.__call__)

    def trace(self, *args, **kwargs):
        """Traces for these arguments and returns a Traced (jaxpr, out_info, lower())."""
        entry, _, donated = self._get_entry(args, kwargs)
        return Traced(self, entry, args, kwargs, donated)

    def lower(self, *args, **kwargs):
        """Traces and lowers for these arguments: a Lowered, with as_text() (StableHLO)
        and compile()."""
        from pyjax._src.api import aot
        entry, leaves, donated = self._get_entry(args, kwargs)
        if entry.hoisted:
            raise ValueError(f"jit({self._debug_name}).lower() was called inside a "
                             "transformation; lower at top level.")
        shardings = None
        arrays = [x for x in leaves if type(x) is Array]
        if self._partitioned(entry.closed_jaxpr, arrays):
            shardings = self._leaf_shardings(args, kwargs, entry)
        return aot.lower(entry.closed_jaxpr, entry.in_tree, entry.out_tree,
                         donated or (False,) * len(leaves), self._debug_name, leaves,
                         self.device, shardings)

    def eval_shape(self, *args, **kwargs):
        return self.trace(*args, **kwargs).out_info


class Traced:
    """The result of jit(f).trace(...): the jaxpr and its output structure."""

    def __init__(self, wrapped, entry, args, kwargs, donated):
        self._wrapped, self._entry = wrapped, entry
        self._args, self._kwargs, self._donated = args, kwargs, donated

    @property
    def jaxpr(self):
        return self._entry.closed_jaxpr

    @property
    def args_info(self):
        from pyjax._src.api import aot
        entry = self._entry
        return aot.args_info(entry.in_tree, entry.in_avals,
                             self._donated or (False,) * len(entry.in_avals))

    def lower(self):
        return self._wrapped.lower(*self._args, **self._kwargs)

    @property
    def out_info(self):
        from pyjax._src.api.shapes import ShapeDtypeStruct
        return tree_util.tree_unflatten(self._entry.out_tree, [
            ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
            for a in self._entry.closed_jaxpr.out_avals])


def _to_array(x, aval):
    from pyjax._src.backends.numpy_backend import _wrap, host_value
    devices_mod.check_transfer("host_to_device", False, aval)   # an implicit transfer
    return _wrap(host_value(x, aval), aval)


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
    for k, v in dyn_kwargs.items():
        for path, _ in tree_util.tree_flatten_with_path(v)[0]:
            out.append(k + tree_util.keystr(path))
    return out


def _argument_path(path):
    """'args[0]['a']' or 'y[1]' for a key path into jit's (args, kwargs) pair."""
    where, first, rest = path[0], path[1], path[2:]
    head = f"args[{first.idx}]" if where.idx == 0 else str(first.key)
    return head + tree_util.keystr(rest)


def _invalid_argument_error(name, leaves, in_tree):
    """The TypeError for the first argument leaf that is not an array (a str, an object,
    or a NumPy array of a dtype JAX lacks: object, str, datetime...), named by its path."""
    for path, leaf in tree_util.tree_flatten_with_path(in_tree.unflatten(leaves))[0]:
        try:
            get_aval(leaf)
        except TypeError as problem:
            what = (f"a NumPy array of dtype {leaf.dtype}, which JAX does not support"
                    if isinstance(leaf, np.ndarray) else f"{leaf!r:.100}")
            return TypeError(
                f"Error interpreting argument to {name} as an abstract array. The "
                f"problematic value is of type {type(leaf)} and was passed to the function "
                f"at path {_argument_path(path)}: {what} ({problem}). A jit-wrapped "
                "function takes arrays, scalars and pytrees of them: convert the value to "
                "a number array, or mark the argument static with the static_argnums or "
                "static_argnames parameters of jax.jit.")
    raise AssertionError("_invalid_argument_error: every argument is a valid array")


def _explain_miss(wrapped, key):
    """Logs why jit traces again: which part of the key differs from the closest entry."""
    import logging  # only when explaining: importing it costs ~6 ms at startup
    logger = logging.getLogger("pyjax")
    name = wrapped._debug_name
    if not wrapped._cache:
        logger.warning("TRACING CACHE MISS for %s at %s: first call (tracing for the "
                       "first time)", name, _location(wrapped.fun))
        return
    in_tree, statics, avals, state = key
    reasons = []
    for old_tree, old_statics, old_avals, old_state in wrapped._cache:
        if old_tree != in_tree:
            reasons.append(f"different input pytree structure: {old_tree} vs {in_tree}")
        elif old_statics != statics:
            reasons.append(f"different static arguments: {old_statics} vs {statics}")
        elif old_avals != avals:
            diffs = [f"{a.str_short()}{'(weak)' if a.weak_type else ''} vs "
                     f"{b.str_short()}{'(weak)' if b.weak_type else ''}"
                     for a, b in zip(old_avals, avals) if a != b]
            reasons.append("different argument types: " + ", ".join(diffs))
        elif old_state != state:
            reasons.append("a configuration option that affects tracing changed "
                           "(e.g. jax_enable_x64)")
    logger.warning("TRACING CACHE MISS for %s: %s", name,
                   min(reasons, key=len) if reasons else "unknown reason")


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, inline=False, keep_unused=False, device=None, backend=None,
        in_shardings=None, out_shardings=None, abstracted_axes=None):
    """Compiles `fun` with tracing: it runs once per new combination of argument types
    and static values, and later calls reuse the compiled computation."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames, inline=inline,
                                 keep_unused=keep_unused, device=device, backend=backend,
                                 in_shardings=in_shardings, out_shardings=out_shardings)
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
    wrapped = JitWrapped(fun, static_argnums, static_argnames, donate_argnums,
                         donate_argnames, inline, keep_unused, device)
    wrapped.in_shardings, wrapped.out_shardings = in_shardings, out_shardings
    return wrapped
