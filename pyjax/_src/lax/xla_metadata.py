"""XLA metadata (jax.experimental.xla_metadata.set_xla_metadata): names and values that
the lowered ops carry as `mhlo.frontend_attributes`, for XLA passes and profilers to read.
As a context manager (or decorator) it sets the metadata of every equation staged inside,
merged with the enclosing context's (a value of None removes a name); given a value, it
tags the op that computes that value (xla_metadata_value_p, an identity).
xla_metadata_call(f, **metadata) instead stages f as one call (xla_metadata_call_p) that
lowers to a private function whose `call` op carries the metadata, under every
transformation (XLA reads e.g. inlineable="false" or a scheduling group there). Imports
core, interpreters, backends and tree_util."""
from __future__ import annotations

import functools
import threading

import numpy as np

from pyjax._src import config, tree_util
from pyjax._src.backends import numpy_backend
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import define_primitive, trace_context
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.interpreters.ad import linear_jvp
from pyjax._src.lax import builders as b
from pyjax._src.util import WeakCache


def _tag_lower(ctx, x, *, xla_metadata_kvs):
    ctx.tag_defining_op(x, dict(xla_metadata_kvs))
    return x


xla_metadata_value_p = define_primitive(
    "xla_metadata_value", impl=lambda x, **_: x, abstract_eval=lambda aval, **_: aval,
    jvp=linear_jvp, transpose=lambda ct, x, **_: [ct],
    batch=batching.elementwise_rule, lower=_tag_lower,
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32)],
                              {"xla_metadata_kvs": (("tag", "value"),)})])


class XlaMetadataContext:
    """What set_xla_metadata(**metadata) returns: a context manager, and a decorator
    whose function (and that function's methods, e.g. a jitted function's .lower) runs
    inside it."""

    def __init__(self, updates):
        self._updates = updates
        # the contexts to restore, per thread: one instance may be entered by several
        # threads at once (a decorated function), or nested in one
        self._saved = threading.local()

    def __enter__(self):
        context = trace_context()
        stack = self._saved.__dict__.setdefault("stack", [])
        stack.append(context.eqn_ctx)
        context.eqn_ctx = context.eqn_ctx.updated(self._updates)

    def __exit__(self, *exc):
        trace_context().eqn_ctx = self._saved.stack.pop()

    def __call__(self, fun):
        return _WithXlaMetadata(fun, self)


class _WithXlaMetadata:
    def __init__(self, fun, context):
        self._fun, self._context = fun, context
        functools.update_wrapper(self, fun)

    def __call__(self, *args, **kwargs):
        with self._context:
            return self._fun(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._fun, name)
        if not callable(attr):
            return attr

        @functools.wraps(attr)
        def inside_context(*args, **kwargs):
            with self._context:
                return attr(*args, **kwargs)
        return inside_context


def set_xla_metadata(x=None, **metadata):
    """With no value: a context manager (or decorator) that attaches `metadata` to the
    ops staged inside. With a value (a pytree): the value, whose defining ops are tagged
    with `metadata`. Values print as strings (bools as true/false)."""
    if x is None:
        return XlaMetadataContext(metadata)
    kvs = tuple(sorted(metadata.items()))
    return tree_util.tree_map(lambda v: xla_metadata_value_p.bind(v, xla_metadata_kvs=kvs), x)


def xla_metadata_call(f=None, **metadata):
    """f staged as one call whose op carries `metadata` (string values) as its XLA
    frontend attributes; without f, a decorator doing so."""
    if f is None:
        return lambda g: _metadata_call(g, metadata)
    return _metadata_call(f, metadata)


def scheduling_group(name):
    """A decorator putting a function's ops in the XLA scheduling group `name`."""
    return xla_metadata_call(scheduling_group=name)


# fun -> (argument structure, avals, tracing context) -> its trace: calls of one function
# with one signature share a jaxpr, so lowering emits one private function for them all
# (and the JVP and transpose caches, keyed by jaxpr, share theirs), as in JAX.
_traces = WeakCache()


def _metadata_call(fun, metadata):
    def wrapped(*args, **kwargs):
        leaves, in_tree = tree_util.flatten((args, kwargs))
        avals = tuple(get_aval(x) for x in leaves)
        key = (in_tree, avals, config.config.trace_state(), trace_context().eqn_ctx)
        try:
            closed, hoisted, out_tree = _traces.get(
                fun, key, lambda: _trace(fun, in_tree, avals),
                keep=lambda traced: not traced[1])   # (not one closing over tracers)
        except TypeError:   # a function that cannot be weakly referenced
            closed, hoisted, out_tree = _trace(fun, in_tree, avals)
        outs = xla_metadata_call_p.bind(*hoisted, *leaves, jaxpr=closed, **metadata)
        return tree_util.tree_unflatten(out_tree, outs)
    return wrapped


def _trace(fun, in_tree, avals):
    """(closed jaxpr, hoisted tracers, output structure) of fun on arguments of `avals`:
    values fun closes over that are tracers of an enclosing trace become arguments."""
    found = {}

    def flat_fun(*xs):
        call_args, call_kwargs = tree_util.tree_unflatten(in_tree, xs)
        out_leaves, found["out_tree"] = tree_util.flatten(fun(*call_args, **call_kwargs))
        return out_leaves

    closed, hoisted = pe.trace_to_closed_jaxpr(flat_fun, list(avals), pe.debug_info_of(fun))
    return closed, hoisted, found["out_tree"]


def _call_impl(*args, jaxpr, **metadata):
    return numpy_backend.execute_closed_jaxpr(jaxpr, list(args))


def _call_jvp(primals, tangents, **params):
    """One call computing the primals and the nonzero tangents together."""
    return ad.call_jvp(xla_metadata_call_p, primals, tangents, params)


def _call_partial_eval(trace, args, unknowns, params):
    """Both the known call and the staged one carry the metadata."""
    return pe.call_partial_eval(xla_metadata_call_p, trace, args, unknowns, params)


def _call_transpose(cts, *args, **params):
    return ad.call_transpose(xla_metadata_call_p, cts, args, params)


def _call_dce(used_outputs, eqn):
    closed, used_inputs = jx.prune_closed_jaxpr(eqn.params["jaxpr"], used_outputs)
    return eqn.replace(invars=[v for v, u in zip(eqn.invars, used_inputs) if u],
                       outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
                       params=dict(eqn.params, jaxpr=closed))


def _call_lower(ctx, *args, jaxpr, **metadata):
    not_text = {k: type(v).__name__ for k, v in metadata.items() if not isinstance(v, str)}
    if not_text:
        raise NotImplementedError(
            f"xla_metadata_call: XLA frontend attributes are strings, but {not_text} "
            "are not; pass each metadata value as a str (e.g. inlineable='false').")
    return ctx.call(jaxpr, list(args), "xla_metadata_call", metadata)


def _call_samples():
    from pyjax._src.lax import elementwise as ew
    x = b.random_values((2, 3), np.float32)
    closed, _ = pe.trace_to_closed_jaxpr(lambda a, c: [ew.mul(ew.sin(a), c), ew.cos(c)],
                                         [get_aval(x), get_aval(x)])
    return [b.Sample([x, b.random_values((2, 3), np.float32, seed=1)],
                     {"jaxpr": closed, "inlineable": "false"})]


xla_metadata_call_p = define_primitive(
    "xla_metadata_call", multiple_results=True, impl=_call_impl,
    abstract_eval=lambda *avals, jaxpr, **metadata: jaxpr.out_avals, jvp=_call_jvp,
    partial_eval=_call_partial_eval, transpose=_call_transpose, batch=batching.call_rule,
    lower=_call_lower, dce=_call_dce, effects=lambda jaxpr, **_: jaxpr.effects,
    shown_params=lambda params: dict(sorted(params.items())),  # JAX prints them sorted
    samples=_call_samples, is_higher_order=True)


__all__ = ["set_xla_metadata", "xla_metadata_value_p", "XlaMetadataContext",
           "xla_metadata_call", "scheduling_group", "xla_metadata_call_p"]
