"""lax.custom_root: a root finder differentiated implicitly. The solver runs as written;
its derivative comes from the implicit function theorem through the user's tangent_solve,
as a custom_jvp rule (so reverse mode transposes tangent_solve, which must be linear).
Imports api siblings, lax and below."""
from __future__ import annotations

import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src.api import autodiff
from pyjax._src.api.custom_derivatives import custom_jvp
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import structural as st
from pyjax._src.lax.control_flow import common
from pyjax._src.lax.control_flow.solves import check_tree
from pyjax._src.traceback_util import api_boundary


def _zero_tangent(x):
    aval = get_aval(x)
    if dtypes.is_inexact(aval.dtype):
        return st.full(aval.shape, 0, aval.dtype)
    return np.zeros(aval.shape, dtypes.float0)


@api_boundary
def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """Finds x with f(x) = 0 by `solve(f, initial_guess)`, and differentiates the root
    implicitly: for values f captures, x' = -tangent_solve(g, f'(x)) with g the
    linearization of f in x at the root, so the solver itself is never differentiated.
    `tangent_solve(g, y)` solves g(t) = y (for scalars: `lambda g, y: y / g(1.0)`).
    With has_aux, solve returns (x, aux) and (x, aux) is returned."""
    api = "custom_root"
    for name, fun in (("f", f), ("solve", solve), ("tangent_solve", tangent_solve)):
        if not callable(fun):
            raise TypeError(f"{api}: {name} must be callable, got {fun!r}.")
    guess_leaves, tree = tree_util.tree_flatten(initial_guess)
    avals = [get_aval(x) for x in guess_leaves]
    n_guess = len(guess_leaves)
    args_tree = tree_util.tree_structure((initial_guess,))
    # f, solve and the linearize-then-tangent_solve step are traced once, here, and the
    # values each captures become explicit operands of `root`: a closure over a tracer of
    # an outer transformation then reaches the rule as an operand, as in JAX.
    f_closed, f_consts, f_tree = common.trace_fun(f, args_tree, avals, api)
    check_tree(api, "f", f_tree, tree, f_closed.out_avals, avals, "initial_guess")

    trees = {}   # solve's solution and aux structures, found while tracing

    def flat_solve(x):
        out = solve(f, x)
        solution, aux = out if has_aux else (out, None)
        solution_leaves, trees["solution"] = tree_util.tree_flatten(solution)
        aux_leaves, trees["aux"] = tree_util.tree_flatten(aux)
        return list(solution_leaves) + list(aux_leaves)
    solve_closed, solve_consts, _ = common.trace_fun(flat_solve, args_tree, avals, api)
    check_tree(api, "solve", trees["solution"], tree, solve_closed.out_avals[:n_guess], avals,
               "initial_guess")

    def linearize_and_solve(x, b):
        _, g = autodiff.linearize(f, x)
        return tangent_solve(g, b)
    solve_args_tree = tree_util.tree_structure((initial_guess, initial_guess))
    tangent_closed, tangent_consts, tangent_tree = common.trace_fun(
        linearize_and_solve, solve_args_tree, avals + avals, api)
    check_tree(api, "tangent_solve", tangent_tree, tree, tangent_closed.out_avals, avals, "x")

    def run(closed, *args):
        return jx.eval_jaxpr(closed.jaxpr, closed.consts, *args)

    @custom_jvp
    def root(f_consts, solve_consts, tangent_consts, guess):
        return run(solve_closed, *solve_consts, *guess)

    @root.defjvp
    def root_jvp(primals, tangents):
        f_consts, _, tangent_consts, _ = primals
        outs = root(*primals)
        x = outs[:n_guess]
        # f(c, x(c)) = 0  =>  d_x f . x' = -d_c f . c'; only f's captured values count
        _, rhs = autodiff.jvp(lambda c: run(f_closed, *c, *x), (list(f_consts),),
                              (list(tangents[0]),))
        x_dots = [ew.neg(t) for t in run(tangent_closed, *tangent_consts, *x, *rhs)]
        return outs, x_dots + [_zero_tangent(a) for a in outs[n_guess:]]

    outs = root(list(f_consts), list(solve_consts), list(tangent_consts), list(guess_leaves))
    x = tree_util.tree_unflatten(tree, outs[:n_guess])
    if has_aux:
        return x, tree_util.tree_unflatten(trees["aux"], outs[n_guess:])
    return x


__all__ = ["custom_root"]
