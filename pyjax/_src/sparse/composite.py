"""Sparse primitives whose computation is a composition of jax.numpy operations (as
JAX's sparse primitives on CPU: `dispatch.simple_impl` with `mlir.lower_fun` of the
same function). `composite_primitive` defines such a primitive: its impl runs the
composition's jaxpr on NumPy values, its lowering inlines that jaxpr, and (unless a rule
is given) it batches by vmapping the composition. The jaxpr is traced once per operand
types and params."""
from __future__ import annotations

import functools

from pyjax._src.api.vmap import vmap
from pyjax._src.backends import numpy_backend
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.numpy import lax_numpy as lnp


@functools.lru_cache(maxsize=512)
def _traced(fun, multiple_results, avals, params):
    def flat(*args):
        out = fun(*args, **dict(params))
        return list(out) if multiple_results else [out]
    closed, _ = pe.trace_to_closed_jaxpr(flat, list(avals))
    return closed


def _jaxpr(fun, multiple_results, avals, params):
    return _traced(fun, multiple_results, tuple(a.strip_weak_type() for a in avals),
                   tuple(sorted(params.items())))


def _impl(fun, multiple_results):
    def impl(*values, **params):
        closed = _jaxpr(fun, multiple_results, [get_aval(v) for v in values], params)
        outs = numpy_backend.execute_closed_jaxpr(closed, list(values))
        return list(outs) if multiple_results else outs[0]
    return impl


def _lower(fun, multiple_results):
    def lower(ctx, *operands, **params):
        closed = _jaxpr(fun, multiple_results, list(ctx.avals_in), params)
        outs = ctx.lower_jaxpr(closed, list(operands))
        return outs if multiple_results else outs[0]
    return lower


def _vmapped(fun, multiple_results):
    def batch(args, dims, **params):
        # unbatched operands arrive as NumPy values: make them arrays, so that indexing
        # them with a batched index traces
        args = [lnp.asarray(a) for a in args]
        out = vmap(functools.partial(fun, **params), in_axes=tuple(dims))(*args)
        return (list(out), [0] * len(out)) if multiple_results else (out, 0)
    return batch


def composite_primitive(name, fun, *, multiple_results=False, batch=None, **rules):
    """A primitive computing `fun(*operands, **params)` (written with jax.numpy and lax),
    with the given abstract_eval, jvp, transpose and samples rules."""
    return define_primitive(
        name, multiple_results=multiple_results, impl=_impl(fun, multiple_results),
        lower=_lower(fun, multiple_results),
        batch=batch if batch is not None else _vmapped(fun, multiple_results), **rules)
