"""XLA metadata (jax.experimental.xla_metadata.set_xla_metadata): names and values that
the lowered ops carry as `mhlo.frontend_attributes`, for XLA passes and profilers to read.
As a context manager (or decorator) it sets the metadata of every equation staged inside,
merged with the enclosing context's (a value of None removes a name); given a value, it
tags the op that computes that value (xla_metadata_value_p, an identity). Imports core,
interpreters and tree_util."""
from __future__ import annotations

import functools
import threading

import numpy as np

from pyjax._src import tree_util
from pyjax._src.core.trace import define_primitive, trace_context
from pyjax._src.interpreters import batching
from pyjax._src.interpreters.ad import linear_jvp
from pyjax._src.lax import builders as b


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


__all__ = ["set_xla_metadata", "xla_metadata_value_p", "XlaMetadataContext"]
