"""Tools around tracing: ensure_compile_time_eval (evaluate eagerly while staging),
named_scope and named_call (names in the name stack of staged equations), typeof (a
value's abstract type) and custom_gradient (a function returning its own VJP). Imports
api siblings and below."""
from __future__ import annotations

import contextlib
import functools

from pyjax._src import tree_util
from pyjax._src.api import shapes  # noqa: F401  (registers ShapeDtypeStruct with typeof)
from pyjax._src.api.custom_derivatives import custom_vjp
from pyjax._src.core import jaxpr as jx
from pyjax._src.core import avals as avals_mod
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Trace, Tracer, extend_name_stack, set_current_trace
from pyjax._src.interpreters import ad
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.util import fun_name


# --- ensure_compile_time_eval ---------------------------------------------------------------

class _CompileTimeEvalTrace(Trace):
    """Runs every primitive whose operands are all concrete eagerly, as JAX does under
    ensure_compile_time_eval; an operation on a tracer (a jit argument, a value being
    differentiated) is left to that tracer's own transformation, so its result is a
    tracer too (staged, differentiated ...), not an error."""

    def __init__(self):
        super().__init__(Trace.root)

    def process_primitive(self, prim, args, params):
        tracers = [x for x in args if isinstance(x, Tracer)]
        trace = max((t._trace for t in tracers), key=lambda t: t.depth) if tracers \
            else self.parent
        with set_current_trace(trace):
            return prim.bind(*args, **params)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Inside this block, jax operations on concrete values run eagerly even while jit
    (or scan, ...) is tracing, so their results are concrete (usable in Python control
    flow, or folded into the staged computation as constants). Operations on traced values
    are staged as usual and give tracers; using one where a concrete value is needed
    raises the usual ConcretizationTypeError."""
    trace = _CompileTimeEvalTrace()
    try:
        with set_current_trace(trace):
            yield
    finally:
        trace.end()


# --- named scopes -------------------------------------------------------------------------------

@contextlib.contextmanager
def named_scope(name):
    """Equations staged inside the block carry `name` in their name stack (scopes nest
    as 'outer/inner'; the stack is the fourth entry of an equation's source_info)."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope name argument must be a string, got {name!r}.")
    with extend_name_stack(name):
        yield


def named_call(fun, *, name=None):
    """`fun`, whose staged equations carry `name` (default: fun's name) in their name
    stack; the results are unchanged."""
    if not callable(fun):
        raise TypeError(f"named_call expects a callable, got {fun!r}.")
    scope = fun_name(fun) if name is None else name

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(scope):
            return fun(*args, **kwargs)
    return named


# --- typeof ---------------------------------------------------------------------------------------

def typeof(x):
    """The abstract type (a ShapedArray: shape, dtype, weak type) of an array, a tracer,
    a ShapeDtypeStruct or a Python or NumPy scalar (not another object with a shape and
    a dtype, which JAX's typeof refuses)."""
    return avals_mod.typeof(x)


# --- custom_gradient ------------------------------------------------------------------------------

class _RuleResiduals:
    """What the backward pass needs from a custom_gradient rule: the values it captured
    (pytree leaves, so they travel as residuals) and its traced jaxpr (static)."""

    def __init__(self, consts, jaxpr, ct_tree, out_tree):
        self.consts, self.jaxpr, self.ct_tree, self.out_tree = consts, jaxpr, ct_tree, out_tree


tree_util.register_pytree_node(
    _RuleResiduals, lambda r: (r.consts, (r.jaxpr, r.ct_tree, r.out_tree)),
    lambda aux, consts: _RuleResiduals(list(consts), *aux))


def custom_gradient(fun):
    """Defines a function's gradient in the function itself: `fun(*args)` returns
    `(out, vjp)` where `vjp(ct)` maps the output cotangent to a tuple of cotangents, one
    per argument (a bare value for a one-argument function is accepted)."""
    if not callable(fun):
        raise TypeError(f"custom_gradient expects a callable, got {fun!r}.")
    name = fun_name(fun)

    def split(result):
        if not (isinstance(result, (tuple, list)) and len(result) == 2 and
                callable(result[1])):
            raise TypeError(f"custom_gradient: {name} must return a pair (output, vjp "
                            f"function), got {result!r:.200}.")
        return result

    @custom_vjp
    def wrapped(*args):
        return split(fun(*args))[0]

    def fwd(*args):
        out, rule = split(fun(*args))
        out_leaves, ct_tree = tree_util.tree_flatten(out)
        ct_avals = [ad.tangent_aval(get_aval(x)) for x in out_leaves]

        def flat_rule(*cts):
            result = rule(tree_util.tree_unflatten(ct_tree, cts))
            leaves, flat_rule.out_tree = tree_util.tree_flatten(result)
            return leaves
        jaxpr, consts = pe.trace_to_jaxpr(flat_rule, ct_avals, pe.debug_info_of(rule))
        return out, _RuleResiduals(list(consts), jaxpr, ct_tree, flat_rule.out_tree)

    def bwd(res, ct):
        cts, tree = tree_util.tree_flatten(ct)
        if tree != res.ct_tree:
            raise TypeError(f"custom_gradient: the cotangent of {name} has structure "
                            f"{tree}, expected {res.ct_tree}.")
        outs = jx.eval_jaxpr(res.jaxpr, res.consts, *cts)
        result = tree_util.tree_unflatten(res.out_tree, outs)
        return (result,) if tree_util.treedef_is_leaf(res.out_tree) else tuple(result)

    wrapped.defvjp(fwd, bwd)
    return wrapped


__all__ = ["ensure_compile_time_eval", "named_scope", "named_call", "typeof",
           "custom_gradient"]
