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
    args_tree = tree_util.tree_structure((initial_guess,))
    f_closed, f_consts, f_tree = common.trace_fun(f, args_tree, avals, api)
    check_tree(api, "f", f_tree, tree, f_closed.out_avals, avals, "initial_guess")
    n_guess = len(guess_leaves)

    def f_with(consts):
        """The user's f, with the values it captured passed explicitly."""
        def fun(x):
            outs = jx.eval_jaxpr(f_closed.jaxpr, f_closed.consts, *consts,
                                 *tree_util.tree_leaves(x))
            return tree_util.tree_unflatten(tree, outs)
        return fun

    aux_tree = {}

    @custom_jvp
    def root(consts, guess):
        out = solve(f_with(consts), tree_util.tree_unflatten(tree, guess))
        x, aux = out if has_aux else (out, None)
        x_leaves, x_tree = tree_util.tree_flatten(x)
        check_tree(api, "solve", x_tree, tree, [get_aval(v) for v in x_leaves], avals,
                   "initial_guess")
        aux_leaves, aux_tree["tree"] = tree_util.tree_flatten(aux)
        return list(x_leaves) + list(aux_leaves)

    @root.defjvp
    def root_jvp(primals, tangents):
        consts, guess = primals
        const_dots, _ = tangents
        outs = root(consts, guess)
        x = tree_util.tree_unflatten(tree, outs[:n_guess])
        # f(c, x(c)) = 0  =>  d_x f . x' = -d_c f . c'
        _, rhs = autodiff.jvp(lambda c: f_with(c)(x), (list(consts),), (list(const_dots),))
        _, g = autodiff.linearize(f_with(consts), x)
        x_dots = [ew.neg(t) for t in tree_util.tree_leaves(tangent_solve(g, rhs))]
        return outs, x_dots + [_zero_tangent(a) for a in outs[n_guess:]]

    outs = root(list(f_consts), list(guess_leaves))
    x = tree_util.tree_unflatten(tree, outs[:n_guess])
    if has_aux:
        return x, tree_util.tree_unflatten(aux_tree["tree"], outs[n_guess:])
    return x


__all__ = ["custom_root"]
