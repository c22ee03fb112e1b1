"""jax.custom_batching: functions whose vmap is a rule of the user's (custom_vmap), and
sequential_vmap, whose vmap is a loop. The function is staged to a jaxpr bound by the
custom_vmap_call primitive; only its batching rule consults the user's rule. Eval and jit
run the body; its JVP is a custom_vmap_call again, of the body's JVP, batched by the JVP of
the user's rule (so vmap of jvp and jvp of vmap agree)."""
from __future__ import annotations

import functools

from pyjax._src import tree_util
from pyjax._src.api.custom_derivatives import _trace_call, forward_def_methods, resolve_args
from pyjax._src.backends import numpy_backend
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import builders as b
from pyjax._src.lax import control_flow
from pyjax._src.lax import elementwise as ew
from pyjax._src.util import WeakCache, fun_name


class custom_vmap:
    """Wraps fun(*args) so that vmap calls `rule(axis_size, in_batched, *args)` (set with
    def_vmap) instead of batching fun's body: args arrive with the batch axis first where
    in_batched (a pytree of bools per argument) says so; the rule returns (out,
    out_batched), out_batched a pytree of bools shaped like out."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun, self.vmap_rule = fun, None

    __getattr__ = forward_def_methods

    def def_vmap(self, rule):
        """Sets the batching rule; returns it, so this can be used as a decorator."""
        self.vmap_rule = rule
        return rule

    def __call__(self, *args, **kwargs):
        args = resolve_args("custom_vmap", self.fun, args, kwargs)
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function "
                                 f"{fun_name(self.fun)} using def_vmap.")
        leaves, in_tree = tree_util.tree_flatten(args)
        closed, hoisted, out_tree = _trace_call(self.fun, set(), [], leaves, in_tree)
        rule = _VmapRule(self, in_tree, out_tree)
        outs = custom_vmap_call_p.bind(*hoisted, *leaves, call_jaxpr=closed, rule=rule,
                                       num_consts=len(hoisted))
        return tree_util.tree_unflatten(out_tree, outs)


def sequential_vmap(fun):
    """fun as a custom_vmap whose vmap runs fun on one batch element after another
    (lax.map), for functions that cannot or should not be batched."""
    wrapped = custom_vmap(fun)

    @wrapped.def_vmap
    def loop(axis_size, in_batched, *args):
        leaves, tree = tree_util.tree_flatten(args)
        flags = tree_util.tree_leaves(in_batched)   # one per leaf, in the same order

        def one(batched_leaves):   # the custom_vmap function: a nested vmap loops too
            it = iter(batched_leaves)
            return wrapped(*tree_util.tree_unflatten(
                tree, [next(it) if bat else x for x, bat in zip(leaves, flags)]))

        out = control_flow.map(one, [x for x, bat in zip(leaves, flags) if bat])
        return out, tree_util.tree_map(lambda _: True, out)
    return wrapped


class _VmapRule:
    """The user's rule, on flat values: checks the structure of what it returns against
    fun's outputs (not the shapes: as in JAX, an unbatched output is broadcast)."""

    def __init__(self, wrapped, in_tree, out_tree):
        self.wrapped, self.in_tree, self.out_tree = wrapped, in_tree, out_tree

    def __repr__(self):
        return fun_name(self.wrapped.vmap_rule)

    def __call__(self, axis_size, in_batched, values):
        rule = self.wrapped.vmap_rule
        args = tree_util.tree_unflatten(self.in_tree, values)
        flags = list(tree_util.tree_unflatten(self.in_tree, in_batched))
        out, out_batched = rule(axis_size, flags, *args)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        flag_leaves, flag_tree = tree_util.tree_flatten(out_batched)
        if flag_tree != out_tree:
            raise ValueError(f"structure of output value and output batching specification "
                             f"returned by custom vmap rule ({fun_name(rule)}) do not match."
                             f"\nOutput values: {out_tree}\nBatching spec: {flag_tree}")
        if out_tree != self.out_tree:
            raise ValueError(f"structure of output returned by custom vmap rule "
                             f"({fun_name(rule)}) does not match that of original "
                             f"custom-vmapped function.\nOriginal output: {self.out_tree}\n"
                             f"Rule output: {out_tree}")
        return out_leaves, [bool(f) for f in flag_leaves]


def _custom_vmap_call_impl(*args, call_jaxpr, rule, num_consts):
    return numpy_backend.execute_closed_jaxpr(call_jaxpr, list(args))


class _JVPOfRule:
    """The batching rule of a custom_vmap function's JVP, on (primals, tangents), as JAX
    derives it: the user's rule runs on the arguments whose primal and tangent are both
    batched, and its JVP is vmapped over those of which only one is."""

    def __init__(self, rule):
        self.rule = rule

    def __repr__(self):
        return f"jvp_of_rule({self.rule!r})"

    def __call__(self, axis_size, in_batched, values):
        n = len(values) // 2
        both = [p and t for p, t in zip(in_batched[:n], in_batched[n:])]
        only = ([p and not t for p, t in zip(in_batched[:n], in_batched[n:])]
                + [t and not p for p, t in zip(in_batched[:n], in_batched[n:])])
        rule_batched = []

        def primal_fun(*primals):
            outs, out_batched = self.rule(axis_size, both, list(primals))
            rule_batched[:] = out_batched
            return outs

        with batching.subtrace(batching.AxisData(None, axis_size)) as trace:
            ins = [trace.wrap(v, 0 if o else None) for v, o in zip(values, only)]
            outs, tangents = ad.jvp_flat(primal_fun, ins[:n], ins[n:])
            tangents = [ad.instantiate_zeros(t) for t in tangents]
        results, flags = [], []
        for i, x in enumerate(outs + tangents):
            val, dim = trace.to_batch_info(x)
            results.append(val if dim is None else batching.moveaxis(val, dim, 0))
            flags.append(dim is not None or rule_batched[i % len(outs)])
        return results, flags


_jvp_calls = WeakCache()


def _jvp_call(call_jaxpr, num_consts):
    """The JVP of the custom_vmap body, on (consts, their tangents, args, their tangents)
    and giving (outs, their tangents), every tangent present (zeros where symbolic)."""
    def build():
        avals = call_jaxpr.in_avals
        n = len(avals)

        def fun(*xs):
            consts, const_ts = xs[:num_consts], xs[num_consts:2 * num_consts]
            args, arg_ts = xs[2 * num_consts:n + num_consts], xs[n + num_consts:]
            outs, tangents = ad.jvp_flat(
                lambda *v: jx.eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *v),
                [*consts, *args], [*const_ts, *arg_ts])
            return [*outs, *(ad.instantiate_zeros(t) for t in tangents)]

        t_avals = [ad.tangent_aval(a) for a in avals]
        closed, hoisted = pe.trace_to_closed_jaxpr(
            fun, [*avals[:num_consts], *t_avals[:num_consts], *avals[num_consts:],
                  *t_avals[num_consts:]])
        assert not hoisted, "a closed jaxpr cannot close over tracers"
        return closed
    return _jvp_calls.get(call_jaxpr, num_consts, build)


def _custom_vmap_call_jvp(primals, tangents, *, call_jaxpr, rule, num_consts):
    # The JVP is a custom_vmap function too: its body is the JVP of the body, its rule
    # the JVP of the rule.
    tangents = [ad.instantiate_zeros(t) for t in tangents]
    outs = custom_vmap_call_p.bind(
        *primals[:num_consts], *tangents[:num_consts], *primals[num_consts:],
        *tangents[num_consts:], call_jaxpr=_jvp_call(call_jaxpr, num_consts),
        rule=_JVPOfRule(rule), num_consts=2 * num_consts)
    n = len(outs) // 2
    return outs[:n], outs[n:]


def _custom_vmap_call_batch(axis, args, dims, *, call_jaxpr, rule, num_consts):
    if any(d is not None for d in dims[:num_consts]):
        raise ValueError(f"custom_vmap function {fun_name(rule.wrapped.fun)} closes over a "
                         "value that vmap batches: pass it in as an argument, so its rule "
                         "sees it.")
    in_batched = [d is not None for d in dims[num_consts:]]
    values = [x if d is None else batching.moveaxis(x, d, 0)
              for x, d in zip(args[num_consts:], dims[num_consts:])]
    outs, out_batched = rule(axis.size, in_batched, values)
    return outs, [0 if bat else None for bat in out_batched]


def _custom_vmap_call_lower(ctx, *args, call_jaxpr, **params):
    return ctx.lower_jaxpr(call_jaxpr, list(args))


def _samples():
    x = b.random_values((3,), "float32")
    sine = custom_vmap(ew.sin)
    sine.def_vmap(lambda size, batched, v: (ew.sin(v), batched[0]))
    closed, _ = pe.trace_to_closed_jaxpr(lambda v: [ew.sin(v)], [get_aval(x)])
    in_tree = tree_util.tree_structure((x,))
    rule = _VmapRule(sine, in_tree, tree_util.tree_structure(x))
    return [b.Sample([x], {"call_jaxpr": closed, "rule": rule, "num_consts": 0})]


custom_vmap_call_p = define_primitive(
    "custom_vmap_call", multiple_results=True, impl=_custom_vmap_call_impl,
    abstract_eval=lambda *avals, call_jaxpr, **_: call_jaxpr.out_avals,
    jvp=_custom_vmap_call_jvp, batch=_custom_vmap_call_batch, lower=_custom_vmap_call_lower,
    samples=_samples, is_higher_order=True, batch_needs_axis=True)
