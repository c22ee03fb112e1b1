"""custom_linear_solve: the linear_solve primitive (named custom_linear_solve in jaxprs)
runs the user's solver, and its derivatives solve again instead of differentiating the
solver: x' = solve(b' - A' x), and its transpose runs transpose_solve. (custom_root, which
needs custom_jvp, is in api/custom_root.py.) Imports core, interpreters and lax."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pyjax._src import tree_util
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.control_flow import common
from pyjax._src.util import split_list
from pyjax._src.traceback_util import api_boundary


class SolveJaxprs(NamedTuple):
    """The traced pieces of a linear solve. Each takes its own captured values first, then
    a vector (b's leaves): matvec x -> A x; vecmat y -> A^T y (None without a transpose
    solve); solve b -> x (plus aux outputs); transpose_solve (None when not given)."""
    matvec: jx.ClosedJaxpr
    vecmat: jx.ClosedJaxpr | None
    solve: jx.ClosedJaxpr
    transpose_solve: jx.ClosedJaxpr | None


def _split(args, const_lengths):
    return split_list(list(args), list(const_lengths))


def _call(closed, *args):
    return jx.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _linear_solve_abstract_eval(*avals, const_lengths, jaxprs, num_aux):
    *_, b = _split(avals, const_lengths)
    out = jaxprs.solve.out_avals
    if [a.strip_weak_type() for a in out[:len(b)]] != [a.strip_weak_type() for a in b]:
        raise TypeError(f"custom_linear_solve: solve returned "
                        f"{[a.str_short(True) for a in out[:len(b)]]}, but b has types "
                        f"{[a.str_short(True) for a in b]}.")
    return list(out)


def _linear_solve_impl(*args, const_lengths, jaxprs, num_aux):
    _, s_consts, _, b = _split(args, const_lengths)
    return common.run_closed(jaxprs.solve, s_consts + b)


def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs, num_aux):
    params = dict(const_lengths=const_lengths, jaxprs=jaxprs, num_aux=num_aux)
    mv_consts, s_consts, ts_consts, b = _split(primals, const_lengths)
    mv_dots, _, _, b_dots = _split(tangents, const_lengths)
    outs = linear_solve_p.bind(*primals, **params)
    x = outs[:len(b)]
    aux_dots = [ad.Zero(ad.tangent_aval(get_aval(a))) for a in outs[len(b):]]
    mv_nz = [common.nonzero(t) for t in mv_dots]
    if not any(mv_nz) and not any(common.nonzero(t) for t in b_dots):
        return outs, [ad.Zero(ad.tangent_aval(get_aval(o))) for o in outs]
    rhs = [ad.instantiate_zeros(t) for t in b_dots]
    if any(mv_nz):   # b' - A' x, with A' the matvec's derivative in its captured values
        jvp, _ = ad.jvp_jaxpr(jaxprs.matvec, mv_nz + [False] * len(x), True)
        dots = [t for t, nz in zip(mv_dots, mv_nz) if nz]
        a_dot_x = _call(jvp, *mv_consts, *x, *dots)[len(x):]
        rhs = [ew.sub(r, ad_x) for r, ad_x in zip(rhs, a_dot_x)]
    x_dots = linear_solve_p.bind(*mv_consts, *s_consts, *ts_consts, *rhs, **params)[:len(b)]
    return outs, list(x_dots) + aux_dots


def _linear_solve_transpose(cts, *args, const_lengths, jaxprs, num_aux):
    mv_consts, s_consts, ts_consts, b = _split(args, const_lengths)
    if any(ad.is_undefined_primal(c) for c in mv_consts + s_consts + ts_consts):
        raise ValueError("custom_linear_solve is linear only in b; it cannot be transposed "
                         "with respect to values the matvec or the solvers capture.")
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve.")
    b_avals = [a.aval for a in b]
    ct_x = common.instantiate_cts(cts[:len(b)], b_avals)
    swapped = SolveJaxprs(jaxprs.vecmat, jaxprs.matvec, jaxprs.transpose_solve, jaxprs.solve)
    n_mv, n_s, n_ts = const_lengths
    ct_b = linear_solve_p.bind(*mv_consts, *ts_consts, *s_consts, *ct_x,
                               const_lengths=(n_mv, n_ts, n_s), jaxprs=swapped,
                               num_aux=num_aux)[:len(b)]
    return [None] * (n_mv + n_s + n_ts) + list(ct_b)


def _linear_solve_batch(axis, args, dims, *, const_lengths, jaxprs, num_aux):
    """The vectors are always batched (b broadcast if it is not); each piece is batched
    for the captured values that are."""
    size = axis.size
    flags = [d is not None for d in dims]
    if not any(flags):
        return linear_solve_p.bind(*args, const_lengths=const_lengths, jaxprs=jaxprs,
                                   num_aux=num_aux), [None] * len(jaxprs.solve.out_avals)
    moved = [batching.moveaxis(x, d, 0) if d is not None else x for x, d in zip(args, dims)]
    mv_c, s_c, ts_c, b = _split(moved, const_lengths)
    mv_f, s_f, ts_f, b_f = _split(flags, const_lengths)
    b = [x if f else batching.bdim_at_front(x, None, size) for x, f in zip(b, b_f)]
    vec = [True] * len(b)

    def batched(closed, const_flags):
        if closed is None:
            return None
        return batching.batch_jaxpr(closed, axis, const_flags + vec, True)[0]
    new = SolveJaxprs(batched(jaxprs.matvec, mv_f), batched(jaxprs.vecmat, mv_f),
                      batched(jaxprs.solve, s_f), batched(jaxprs.transpose_solve, ts_f))
    outs = linear_solve_p.bind(*mv_c, *s_c, *ts_c, *b, const_lengths=const_lengths,
                               jaxprs=new, num_aux=num_aux)
    return outs, [0] * len(outs)


def _linear_solve_lower(ctx, *args, const_lengths, jaxprs, num_aux):
    _, s_consts, _, b = _split(args, const_lengths)
    return ctx.lower_jaxpr(jaxprs.solve, s_consts + b)


def _linear_solve_effects(const_lengths, jaxprs, num_aux):
    return jaxprs.solve.effects


def _linear_solve_samples():
    """The matrix is part of each piece (the harness perturbs operands one at a time, and
    the solution's derivative in a solver's own captured values is zero by design);
    tests/lax/test_lax_ops.py differentiates through captured values."""
    from pyjax._src.lax import dot
    from pyjax._src.lax.builders import Sample
    a = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
    inv = np.linalg.inv(a).astype(np.float32)
    vec = [ShapedArray((2,), np.float32)]
    pieces = SolveJaxprs(*(common.trace_closed(f, vec) for f in (
        lambda x: [dot.dot(a, x)], lambda y: [dot.dot(y, a)],
        lambda v: [dot.dot(inv, v)], lambda v: [dot.dot(v, inv)])))
    return [Sample([np.array([1.0, -2.0], np.float32)],
                   {"const_lengths": (0, 0, 0), "jaxprs": pieces, "num_aux": 0})]


linear_solve_p = define_primitive(
    "custom_linear_solve", multiple_results=True, impl=_linear_solve_impl,
    abstract_eval=_linear_solve_abstract_eval, jvp=_linear_solve_jvp,
    transpose=_linear_solve_transpose, batch=_linear_solve_batch, lower=_linear_solve_lower,
    effects=_linear_solve_effects, samples=_linear_solve_samples,
    is_higher_order=True, batch_needs_axis=True)


def check_tree(api, what, tree, expected_tree, avals, expected_avals, expected_name="b"):
    """`what`'s outputs (tree, avals) against `expected_name`'s, with JAX's errors for
    another structure or other shapes."""
    if tree != expected_tree:
        raise TypeError(f"{what}() output pytree structure must match {expected_name}, got "
                        f"{tree} and {expected_tree}.")
    if [a.shape for a in avals] != [a.shape for a in expected_avals]:
        raise ValueError(f"{what}() output shapes must match {expected_name}, got "
                         f"{[a.shape for a in avals]} and "
                         f"{[a.shape for a in expected_avals]}")
    got = [a.strip_weak_type() for a in avals]
    want = [a.strip_weak_type() for a in expected_avals]
    if got != want:
        raise TypeError(f"{api}: {what} must return values of b's shapes and dtypes "
                        f"{[a.str_short(True) for a in want]}, got "
                        f"{[a.str_short(True) for a in got]}.")


@api_boundary
def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """Solves A x = b with the user's `solve(matvec, b)`, where `matvec(x)` computes A x
    (a linear function). Derivatives do not differentiate through `solve`: the JVP solves
    again for b' - A' x, and reverse mode runs `transpose_solve(vecmat, b)` (which solves
    A^T x = b; `symmetric=True` reuses solve). With has_aux, the solvers return (x, aux)
    and the aux (no derivative) is returned too."""
    api = "custom_linear_solve"
    for name, f in (("matvec", matvec), ("solve", solve)):
        if not callable(f):
            raise TypeError(f"{api}: {name} must be callable, got {f!r}.")
    if transpose_solve is not None and not callable(transpose_solve):
        raise TypeError(f"{api}: transpose_solve must be callable or None, got "
                        f"{transpose_solve!r}.")
    b_leaves, tree = tree_util.tree_flatten(b)
    b_avals = [get_aval(x) for x in b_leaves]
    args_tree = tree_util.tree_structure((b,))
    mv, mv_consts, mv_tree = common.trace_fun(matvec, args_tree, b_avals, api)
    check_tree(api, "matvec", mv_tree, tree, mv.out_avals, b_avals)

    def user_matvec(x):
        return tree_util.tree_unflatten(tree, _call(mv, *mv_consts, *tree_util.tree_leaves(x)))

    def solver(run, op, what):
        def fun(*vec):
            out = run(op, tree_util.tree_unflatten(tree, vec))
            x, aux = out if has_aux else (out, None)
            x_leaves, x_tree = tree_util.tree_flatten(x)
            check_tree(api, what, x_tree, tree, [get_aval(v) for v in x_leaves], b_avals)
            return x_leaves + tree_util.tree_leaves(aux), tree_util.tree_structure(aux)
        return fun

    s_fun = solver(solve, user_matvec, "solve")
    s_closed, s_consts, aux_tree = _trace_solver(s_fun, b_avals)
    vm, ts_closed, ts_consts = None, None, []
    if symmetric:
        vm, ts_closed, ts_consts = mv, s_closed, s_consts
    elif transpose_solve is not None:
        n = len(mv_consts)
        vm = ad.transpose_jaxpr(mv, [False] * n + [True] * len(b_leaves))

        def user_vecmat(y):
            return tree_util.tree_unflatten(tree, _call(vm, *mv_consts,
                                                        *tree_util.tree_leaves(y)))
        ts_closed, ts_consts, _ = _trace_solver(solver(transpose_solve, user_vecmat,
                                                                "transpose_solve"), b_avals)
    jaxprs = SolveJaxprs(mv, vm, s_closed, ts_closed)
    num_aux = len(s_closed.out_avals) - len(b_leaves)
    outs = linear_solve_p.bind(*mv_consts, *s_consts, *ts_consts, *b_leaves,
                               const_lengths=(len(mv_consts), len(s_consts), len(ts_consts)),
                               jaxprs=jaxprs, num_aux=num_aux)
    x = tree_util.tree_unflatten(tree, outs[:len(b_leaves)])
    if has_aux:
        return x, tree_util.tree_unflatten(aux_tree, outs[len(b_leaves):])
    return x


def _trace_solver(fun, b_avals):
    """(closed jaxpr taking captured values then b, the captured values, aux treedef)."""
    found = {}

    def flat(*vec):
        leaves, found["aux"] = fun(*vec)
        return leaves
    closed, consts, _ = common.trace_fun(lambda *v: flat(*v), _leaf_tree(len(b_avals)),
                                         b_avals, "custom_linear_solve")
    return closed, consts, found["aux"]


def _leaf_tree(n):
    return tree_util.tree_structure(tuple(range(n)))


__all__ = ["custom_linear_solve", "linear_solve_p", "SolveJaxprs"]
