"""The call primitive of jit (`jit`, printed as `jit[name=f jaxpr={...}]`): a closed
jaxpr applied to arguments. Under the eval trace it runs the jaxpr through the executor;
under every other trace its rules recurse into the jaxpr."""
from __future__ import annotations

from pyjax._src.backends import dispatch, numpy_backend
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.trace import define_primitive, set_current_trace
from pyjax._src.interpreters import ad, batching, jet
from pyjax._src.interpreters import partial_eval as pe


def _jit_abstract_eval(*in_avals, jaxpr, name, donated_invars, inline, keep_unused):
    expected = jaxpr.in_avals
    if len(in_avals) != len(expected):
        raise jx.JaxprTypeError(f"Call primitive jit with {len(in_avals)} operands cannot "
                                f"call jaxpr with {len(expected)} inputs")
    if any(not a.same_type(e) for a, e in zip(in_avals, expected)):
        raise TypeError(f"jit call of {name}: argument types {list(in_avals)} do not match "
                        f"the traced jaxpr's {expected}")
    return jaxpr.out_avals


def _jit_impl(*values, jaxpr, name, donated_invars, inline, keep_unused):
    return numpy_backend.execute_closed_jaxpr(jaxpr, list(values))


def _jit_eager(*args, jaxpr, name, donated_invars, inline, keep_unused):
    arrays = [numpy_backend.wrap(numpy_backend.host_value(x, v.aval), v.aval)
              if not dispatch.is_array(x) else x
              for x, v in zip(args, jaxpr.jaxpr.invars)]
    return dispatch.run_closed_jaxpr(jaxpr, arrays, donated_invars)


def _jit_stage(trace, args, params):
    """A staged jit(inline=True) call is its body's equations, as JAX stages it."""
    if not params["inline"]:
        return NotImplemented
    closed = params["jaxpr"]
    with set_current_trace(trace):   # (partial evaluation stages through its own trace)
        return jx.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _jit_params(params, jaxpr, num_args):
    """A jit call made by a rule (JVP, partial eval): nothing of it is donated."""
    return dict(params, jaxpr=jaxpr, donated_invars=(False,) * num_args)


def _jit_jvp(primals, tangents, **params):
    """One jit computing primals and the nonzero tangents together."""
    return ad.call_jvp(jit_p, primals, tangents, params, _jit_params)


def _jit_jet(primals, series, **params):
    """One jit computing the primals and their series together."""
    return jet.call_rule(jit_p, primals, series, params, _jit_params)


def _jit_partial_eval(trace, args, unknowns, params):
    """Known inputs run a known jit now (returning residuals); the rest is staged as an
    unknown jit of residuals and unknown inputs."""
    return pe.call_partial_eval(jit_p, trace, args, unknowns, params, _jit_params)


def _jit_transpose(cts, *args, **params):
    return ad.call_transpose(jit_p, cts, args, params, _jit_params)


def _jit_dce(used_outputs, eqn):
    """Only the used outputs, computed by the pruned jaxpr from the inputs it reads
    (all inputs stay with keep_unused)."""
    params = eqn.params
    keep = [True] * len(eqn.invars) if params["keep_unused"] else None
    closed, used_inputs = jx.prune_closed_jaxpr(params["jaxpr"], used_outputs, keep)
    donated = tuple(d for d, u in zip(params["donated_invars"], used_inputs) if u)
    return eqn.replace(invars=[v for v, u in zip(eqn.invars, used_inputs) if u],
                       outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
                       params=dict(params, jaxpr=closed, donated_invars=donated))


def _jit_lower(ctx, *args, jaxpr, name, donated_invars, inline, keep_unused):
    """A private function per traced jaxpr (inline=True lowers the body in place)."""
    if inline:
        return ctx.lower_jaxpr(jaxpr, list(args))
    return ctx.call(jaxpr, list(args), name, op_name=f"jit({name})")


def _jit_samples():
    """A small traced function, as jit would build it (traced lazily, for the harness)."""
    import numpy as np

    from pyjax._src.interpreters import partial_eval as pe
    from pyjax._src.lax import elementwise as ew
    from pyjax._src.lax.builders import Sample, random_values

    x = random_values((2, 3), np.float32)
    closed, _ = pe.trace_to_closed_jaxpr(lambda a, b: [ew.mul(ew.sin(a), b), ew.cos(b)],
                                         [pe.get_aval(x), pe.get_aval(x)])
    return [Sample([x, random_values((2, 3), np.float32, seed=1)],
                   {"jaxpr": closed, "name": "f", "donated_invars": (False, False),
                    "inline": False, "keep_unused": False})]


def _jit_shown_params(params):
    """As JAX 0.10.2 prints a jit equation: the name first, then sorted the flags that
    are set (inline never) and the body, whose binders print as the equation's operands
    and results."""
    shown = {"jaxpr": jx.SharedNames(params["jaxpr"])}
    if any(params["donated_invars"]):
        shown["donated_invars"] = params["donated_invars"]
    if params["keep_unused"]:
        shown["keep_unused"] = True
    return {"name": params["name"], **dict(sorted(shown.items()))}


jit_p = define_primitive("jit", multiple_results=True, impl=_jit_impl,
                         abstract_eval=_jit_abstract_eval, eager=_jit_eager,
                         jvp=_jit_jvp, jet=_jit_jet, partial_eval=_jit_partial_eval,
                         transpose=_jit_transpose, batch=batching.call_rule, lower=_jit_lower,
                         dce=_jit_dce, stage=_jit_stage,
                         effects=lambda jaxpr, **_: jaxpr.effects,  # kept by DCE if effectful
                         shown_params=_jit_shown_params, samples=_jit_samples, is_higher_order=True)

