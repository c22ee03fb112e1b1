"""checkpoint (remat): differentiate a function without saving its intermediates; the
backward pass recomputes them from the inputs. The `checkpoint` primitive's partial-eval
rule does it. Imports api siblings and below."""
from __future__ import annotations

import functools
import weakref

from pyjax._src import tree_util
from pyjax._src.backends import numpy_backend
from pyjax._src.core.avals import get_aval
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr
from pyjax._src.core.trace import Trace, current_trace, define_primitive, set_current_trace
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import builders as b


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """fun, made to recompute its intermediate values in the backward pass instead of
    storing them (trading compute for memory). Arguments at static_argnums are Python
    values baked into the trace. `policy` is accepted for JAX compatibility; every policy
    currently behaves as `nothing_saveable` (only the inputs are kept)."""
    static = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)

    @functools.wraps(fun)
    def fun_remat(*args, **kwargs):
        if current_trace() is Trace.root:
            return fun(*args, **kwargs)
        nums = {i % len(args) for i in static if -len(args) <= i < len(args)}
        dyn = [a for i, a in enumerate(args) if i not in nums]
        leaves, in_tree = tree_util.flatten((dyn, kwargs))
        found = {}

        def flat_fun(*xs):
            call_args, call_kwargs = tree_util.tree_unflatten(in_tree, xs)
            it = iter(call_args)
            full = [args[i] if i in nums else next(it) for i in range(len(args))]
            out_leaves, found["out_tree"] = tree_util.flatten(fun(*full, **call_kwargs))
            return out_leaves

        closed, hoisted = pe.trace_to_closed_jaxpr(flat_fun, [get_aval(x) for x in leaves],
                                                   pe.debug_info_of(fun))
        outs = checkpoint_p.bind(*hoisted, *leaves, jaxpr=closed, prevent_cse=prevent_cse,
                                 differentiated=False, policy=policy)
        return tree_util.tree_unflatten(found["out_tree"], outs)
    return fun_remat


remat = checkpoint


def _checkpoint_impl(*args, jaxpr, **params):
    return numpy_backend.execute_closed_jaxpr(jaxpr, list(args))


def _checkpoint_abstract_eval(*avals, jaxpr, **params):
    return jaxpr.out_avals


def _checkpoint_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    jvp_closed, out_nonzeros = ad.jvp_jaxpr(jaxpr, nonzeros, instantiate=False)
    nz_tangents = [t for t in tangents if type(t) is not ad.Zero]
    outs = checkpoint_p.bind(*primals, *nz_tangents, jaxpr=jvp_closed,
                             prevent_cse=prevent_cse, differentiated=True, policy=policy)
    n = len(jaxpr.out_avals)
    nz_out = iter(outs[n:])
    return outs[:n], [next(nz_out) if nz else ad.Zero(ad.tangent_aval(a))
                      for a, nz in zip(jaxpr.out_avals, out_nonzeros)]


_dce_cache = weakref.WeakKeyDictionary()


def _dce(closed, used_outputs, kept_inputs):
    """closed restricted to the used outputs and the kept inputs (the others must be
    unused). Cached, so repeated calls share jaxprs."""
    per_jaxpr = _dce_cache.setdefault(closed, {})
    key = (tuple(used_outputs), tuple(kept_inputs))
    if key not in per_jaxpr:
        jaxpr, consts, used = pe.dce_closed_jaxpr(closed.jaxpr, closed.consts, used_outputs)
        assert not any(u and not k for u, k in zip(used, kept_inputs))
        invars = [v for v, k in zip(jaxpr.invars, kept_inputs) if k]
        jaxpr = Jaxpr(jaxpr.constvars, invars, jaxpr.outvars, jaxpr.eqns, None,
                      jaxpr.debug_info)
        per_jaxpr[key] = ClosedJaxpr(jaxpr, consts)
    return per_jaxpr[key]


def _checkpoint_partial_eval(trace, args, unknowns, params):
    """Known outputs are computed now; the unknown ones are staged as a checkpoint of the
    whole computation from the inputs (known inputs are the only residuals), so the
    transpose recomputes every intermediate instead of reading saved ones."""
    closed = params["jaxpr"]
    _, _, out_unknowns, _ = pe.partial_eval_jaxpr_nounits(closed, unknowns, instantiate=False)
    known_outs = []
    if not all(out_unknowns):
        known_part = _dce(closed, [not uk for uk in out_unknowns],
                          [not uk for uk in unknowns])
        with set_current_trace(trace.parent):
            known_outs = checkpoint_p.bind(*[a for a, uk in zip(args, unknowns) if not uk],
                                           **dict(params, jaxpr=known_part))
    unknown_part = _dce(closed, out_unknowns, [True] * len(args))
    unknown_outs = iter(trace.stage(checkpoint_p, args, dict(params, jaxpr=unknown_part)))
    known_vals = iter(known_outs)
    return [next(unknown_outs) if uk else next(known_vals) for uk in out_unknowns]


def _checkpoint_transpose(cts, *args, jaxpr, prevent_cse, differentiated, policy):
    """Recomputes the non-linear part from the residual inputs, then transposes."""
    cts_in = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, list(args), cts)
    return [ct if ad.is_undefined_primal(a) else None for ct, a in zip(cts_in, args)]


def _checkpoint_lower(ctx, *args, jaxpr, **params):
    return ctx.lower_jaxpr(jaxpr, list(args))


def _checkpoint_samples():
    from pyjax._src.lax import elementwise as ew
    x = b.random_values((2, 3), "float32")
    closed, _ = pe.trace_to_closed_jaxpr(lambda a: [ew.sin(ew.sin(a))], [get_aval(x)])
    return [b.Sample([x], {"jaxpr": closed, "prevent_cse": True, "differentiated": False,
                           "policy": None})]


checkpoint_p = define_primitive(
    "checkpoint", multiple_results=True, impl=_checkpoint_impl,
    abstract_eval=_checkpoint_abstract_eval, jvp=_checkpoint_jvp,
    partial_eval=_checkpoint_partial_eval, transpose=_checkpoint_transpose,
    lower=_checkpoint_lower, batch=batching.call_rule, samples=_checkpoint_samples)
checkpoint_p.is_higher_order = True
