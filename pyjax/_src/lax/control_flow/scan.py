"""scan_p: loop a body jaxpr over the leading axis of `xs` while threading a carry, and the
public `scan` and `map`. Imports core, interpreters, backends and the lax families."""
from __future__ import annotations

import functools
import operator

import numpy as np

from pyjax._src import config, errors, tree_util
from pyjax._src.array import as_array
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import AbstractRef, get_aval
from pyjax._src.core.trace import Tracer, define_primitive, set_current_trace
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import slicing
from pyjax._src.lax import structural as st
from pyjax._src.lax.sharding_constraint import sharding_constraint_p
from pyjax._src.lax.control_flow import common
from pyjax._src.lax.control_flow.loops import while_loop
from pyjax._src.shape_poly import is_symbolic_dim
from pyjax._src.util import merge_lists, split_list
from pyjax._src.traceback_util import api_boundary


# --- the primitive ----------------------------------------------------------------------

def _scan_abstract_eval(*args, jaxpr, length, reverse, num_consts, num_carry, linear,
                        unroll):
    for name, value, required, ok in (
            ("reverse", reverse, "bool", type(reverse) is bool),
            ("num_consts", num_consts, "non-negative int",
             type(num_consts) is int and num_consts >= 0),
            ("num_carry", num_carry, "non-negative int", type(num_carry) is int and num_carry >= 0),
            ("jaxpr", jaxpr, "ClosedJaxpr", type(jaxpr) is jx.ClosedJaxpr),
            ("unroll", unroll, "non-negative int", type(unroll) is int and unroll >= 0),
            ("length", length, "non-negative int",
             (type(length) is int and length >= 0) or is_symbolic_dim(length))):
        common.check_param("scan", value, name, required, ok)
    consts, init, xs = split_list(args, [num_consts, num_carry])
    if len(linear) != len(args):
        raise TypeError(f"scan linear flags {linear} need one entry per operand "
                        f"({len(args)})")
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan operand {x.str_short(True)} must have a leading axis of the "
                            f"scan length {length}")
    x_avals = [batching.mapped_aval(x, 0) for x in xs]
    common.check_operands("scan body", jaxpr, consts + init + x_avals)
    carry_out, ys = split_list(jaxpr.out_avals, [num_carry])
    if any(not a.same_type(b) for a, b in zip(init, carry_out)):
        raise TypeError(f"scan body carry output types {[a.str_short(True) for a in carry_out]} "
                        f"differ from the carry types {[a.str_short(True) for a in init]}")
    return ([b.update(weak_type=a.weak_type and b.weak_type) for a, b in zip(init, carry_out)]
            + [batching.unmapped_aval(y, 0, batching.AxisData(None, length)) for y in ys])


def _scan_impl(*args, jaxpr, length, reverse, num_consts, num_carry, linear, unroll):
    consts, carry, xs = split_list(args, [num_consts, num_carry])
    ys = [np.empty((length,) + a.shape, a.dtype) for a in jaxpr.out_avals[num_carry:]]
    for step in range(length):
        i = length - 1 - step if reverse else step
        outs = common.run_closed(jaxpr, consts + carry + [x[i, ...] for x in xs])
        carry = outs[:num_carry]
        for y, out in zip(ys, outs[num_carry:]):
            y[i] = out
    return carry + ys


def _scan_eager(*args, jaxpr, length, **params):
    """A long eager scan (length x equations past common.LONG_LOOP_EQUATIONS) runs
    compiled, as in JAX; a short one is left to the NumPy impl."""
    if (length * len(jaxpr.jaxpr.eqns) < common.LONG_LOOP_EQUATIONS
            or not common.may_compile_eager_loop(args, jaxpr)):
        return NotImplemented
    return common.run_compiled(scan_p, args, dict(params, jaxpr=jaxpr, length=length))


def _scan_effects(jaxpr, **_):
    return jaxpr.effects


def _bind_scan(consts, init, xs, jaxpr, length, reverse, linear, unroll):
    operands = [*consts, *init, *xs]
    return scan_p.bind(*operands, jaxpr=jaxpr, length=length,
                       linear=tuple(linear) if linear else (False,) * len(operands),
                       num_carry=len(init), num_consts=len(consts), reverse=reverse,
                       unroll=unroll)


def _slice_aval(x):
    """The aval of one iteration's slice of a scanned array."""
    return batching.mapped_aval(get_aval(x), 0)


def _ranges(*sizes):
    """Consecutive index ranges of the given sizes."""
    out, start = [], 0
    for n in sizes:
        out.append(list(range(start, start + n)))
        start += n
    return out


def _scan_jvp(primals, tangents, jaxpr, length, reverse, num_consts, num_carry, linear,
              unroll):
    nc, nk = num_consts, num_carry
    nx, ny = len(primals) - nc - nk, len(jaxpr.out_avals) - nk
    const_nz, init_nz, xs_nz = split_list([common.nonzero(t) for t in tangents], [nc, nk])
    carry_nz = common.carry_fixpoint(
        lambda c: ad.jvp_jaxpr(jaxpr, const_nz + c + xs_nz, c + [False] * ny)[1], init_nz)
    jvp, out_nz = ad.jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * ny)
    n_cd, n_kd, n_xd, n_yd = sum(const_nz), sum(carry_nz), sum(xs_nz), sum(out_nz[nk:])
    # jvp takes [consts, carry, xs, dots of each] and returns [carry, ys, dots of each];
    # scan wants each group followed by its dots.
    c, k, x, cd, kd, xd = _ranges(nc, nk, nx, n_cd, n_kd, n_xd)
    ko, yo, kdo, ydo = _ranges(nk, ny, n_kd, n_yd)
    jvp = common.permute_binders(jvp, c + cd + k + kd + x + xd, ko + kdo + yo + ydo)
    consts, init, xs = split_list(primals, [nc, nk])
    const_dots, init_dots, xs_dots = split_list(tangents, [nc, nk])
    const_dots = [t for t, nz in zip(const_dots, const_nz) if nz]
    init_dots = [ad.instantiate_zeros(t) for t, nz in zip(init_dots, carry_nz) if nz]
    xs_dots = [t for t, nz in zip(xs_dots, xs_nz) if nz]
    c_lin, k_lin, x_lin = split_list(list(linear), [nc, nk])
    lin = c_lin + [True] * n_cd + k_lin + [True] * n_kd + x_lin + [True] * n_xd
    outs = _bind_scan(consts + const_dots, init + init_dots, xs + xs_dots, jvp, length,
                      reverse, lin, unroll)
    carry, carry_dots, ys, ys_dots = split_list(outs, [nk, n_kd, ny])
    primals_out = carry + ys
    return primals_out, common.merge_tangents(primals_out, out_nz, carry_dots + ys_dots)


def _scan_partial_eval(trace, args, unknowns, params):
    """A known scan computes the known carries and ys plus the residuals the unknown part
    needs (stacked per iteration, except known consts and xs, which are passed as they
    are); the unknown scan over those residuals is staged."""
    jaxpr, nc, nk = params["jaxpr"], params["num_consts"], params["num_carry"]
    ny = len(jaxpr.out_avals) - nk
    const_uk, init_uk, xs_uk = split_list(unknowns, [nc, nk])
    carry_uk = common.carry_fixpoint(
        lambda c: pe.partial_eval_jaxpr_nounits(jaxpr, const_uk + c + xs_uk,
                                                c + [False] * ny)[2], init_uk)
    if all(const_uk + carry_uk + xs_uk):
        return trace.stage(scan_p, args, params)
    known, unknown, out_uk, num_res = pe.partial_eval_jaxpr_nounits(
        jaxpr, const_uk + carry_uk + xs_uk, carry_uk + [False] * ny)
    consts, init, xs = split_list(args, [nc, nk])
    known_consts = common.pick(consts, [not uk for uk in const_uk])
    known_init = common.pick(init, [not uk for uk in carry_uk])
    known_xs = common.pick(xs, [not uk for uk in xs_uk])
    n_known_out = len(out_uk) - sum(out_uk)
    kj = known.jaxpr
    const_vars = kj.invars[:len(known_consts)]
    xs_vars = kj.invars[len(kj.invars) - len(known_xs):]
    # Each residual is a known const (loop invariant), a known xs slice (already
    # stacked), or computed in the loop (an extra stacked output of the known scan).
    sources = []
    for v in kj.outvars[n_known_out:]:
        if type(v) is jx.Var and v in const_vars:
            sources.append(("const", const_vars.index(v)))
        elif type(v) is jx.Var and v in xs_vars:
            sources.append(("xs", xs_vars.index(v)))
        else:
            sources.append(("loop", v))
    loop_res = [v for kind, v in sources if kind == "loop"]
    known = common.with_binders(known, outvars=kj.outvars[:n_known_out] + loop_res)
    with set_current_trace(trace.parent):
        outs = _bind_scan(known_consts, known_init, known_xs, known, params["length"],
                          params["reverse"], None, params["unroll"])
    known_outs, loop_vals = split_list(outs, [n_known_out])
    loop_vals = iter(loop_vals)
    values = [known_consts[i] if kind == "const" else known_xs[i] if kind == "xs"
              else next(loop_vals) for kind, i in sources]
    intensive = [kind == "const" for kind, _ in sources]
    n_uc, n_uk = sum(const_uk), sum(carry_uk)
    r, uc, uk, ux = _ranges(num_res, n_uc, n_uk, sum(xs_uk))
    res_in = [i for i in r if intensive[i]]
    res_ex = [i for i in r if not intensive[i]]
    unknown = common.permute_binders(unknown, res_in + uc + uk + res_ex + ux)
    unknown_outs = []
    if any(out_uk):
        c_lin, k_lin, x_lin = split_list(list(params["linear"]), [nc, nk])
        operands = ([values[i] for i in res_in] + common.pick(consts, const_uk)
                    + common.pick(init, carry_uk) + [values[i] for i in res_ex]
                    + common.pick(xs, xs_uk))
        lin = ([False] * len(res_in) + common.pick(c_lin, const_uk) + common.pick(k_lin, carry_uk)
               + [False] * len(res_ex) + common.pick(x_lin, xs_uk))
        unknown_outs = trace.stage(scan_p, operands, dict(
            params, jaxpr=unknown, linear=tuple(lin), num_consts=len(res_in) + n_uc,
            num_carry=n_uk))
    return merge_lists(out_uk, known_outs, unknown_outs)


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, linear,
                    unroll):
    """The transpose runs backwards: cotangents of the carry flow through the transposed
    body, linear consts accumulate theirs in the carry, linear xs get theirs as ys.
    Carries are linear in the body even where their initial value is a known constant
    (an instantiated zero tangent)."""
    nc, nk = num_consts, num_carry
    consts, init, xs = split_list(args, [nc, nk])
    c_lin = [ad.is_undefined_primal(x) for x in consts]
    x_lin = [ad.is_undefined_primal(x) for x in xs]
    ires = [x for x in consts if not ad.is_undefined_primal(x)]
    eres = [x for x in xs if not ad.is_undefined_primal(x)]
    out_avals = _scan_abstract_eval(*[x.aval if ad.is_undefined_primal(x) else get_aval(x)
                                      for x in args], jaxpr=jaxpr, length=length,
                                    reverse=reverse, num_consts=nc, num_carry=nk,
                                    linear=linear, unroll=unroll)
    ct_carry, ct_ys = split_list(common.instantiate_cts(cts, out_avals), [nk])
    body_t = ad.transpose_jaxpr(jaxpr, c_lin + [True] * nk + x_lin)
    acc_avals = [ad.tangent_aval(x.aval) for x in consts if ad.is_undefined_primal(x)]
    n_ires, n_acc = len(ires), len(acc_avals)

    def body(*args):
        ires_, acc, ct_k, ct_y, eres_ = split_list(args, [n_ires, n_acc, nk, len(ct_ys)])
        outs = jx.eval_jaxpr(body_t.jaxpr, body_t.consts, *ires_, *eres_, *ct_k, *ct_y)
        ct_c, ct_k, ct_x = split_list(outs, [n_acc, nk])
        return [ad.add_tangents(a, c) for a, c in zip(acc, ct_c)] + ct_k + ct_x

    body_jaxpr = common.trace_closed(
        body, [get_aval(x) for x in ires] + acc_avals + [get_aval(c) for c in ct_carry]
        + [_slice_aval(c) for c in ct_ys] + [_slice_aval(x) for x in eres])
    acc0 = [st.zeros_like_aval(a) for a in acc_avals]
    outs = _bind_scan(ires, acc0 + ct_carry, ct_ys + eres, body_jaxpr, length, not reverse,
                      None, unroll)
    ct_consts, ct_init, ct_xs = split_list(outs, [n_acc, nk])
    ct_consts, ct_xs = iter(ct_consts), iter(ct_xs)
    return ([next(ct_consts) if lin else None for lin in c_lin]
            + [ct if ad.is_undefined_primal(x) else None for ct, x in zip(ct_init, init)]
            + [next(ct_xs) if lin else None for lin in x_lin])


def _scan_batch(axis, args, dims, jaxpr, length, reverse, num_consts, num_carry, linear,
                unroll):
    params = dict(jaxpr=jaxpr, length=length, reverse=reverse, num_consts=num_consts,
                  num_carry=num_carry, linear=linear, unroll=unroll)
    nc, nk = num_consts, num_carry
    ny = len(jaxpr.out_avals) - nk
    if all(d is batching.not_mapped for d in dims) and not batching.jaxpr_uses_axis(
            jaxpr, axis.name):
        return scan_p.bind(*args, **params), [batching.not_mapped] * (nk + ny)
    size = axis.size
    const_b, init_b, xs_b = split_list([d is not batching.not_mapped for d in dims], [nc, nk])
    carry_b = common.carry_fixpoint(
        lambda c: batching.batch_jaxpr(jaxpr, axis, const_b + c + xs_b, c + [False] * ny)[1],
        init_b)
    batched, out_b = batching.batch_jaxpr(jaxpr, axis, const_b + carry_b + xs_b,
                                          carry_b + [False] * ny)
    consts, init, xs = split_list(args, [nc, nk])
    const_d, init_d, xs_d = split_list(dims, [nc, nk])
    consts = [batching.moveaxis(x, d, 0) if b else x
              for x, d, b in zip(consts, const_d, const_b)]
    init = [batching.bdim_at_front(x, d, size) if b else x
            for x, d, b in zip(init, init_d, carry_b)]
    # The scanned axis stays in front: xs carry their batch at 1, and so do the ys.
    xs = [batching.moveaxis(x, d, 1) if b else x for x, d, b in zip(xs, xs_d, xs_b)]
    outs = _bind_scan(consts, init, xs, batched, length, reverse, linear, unroll)
    return outs, ([0 if b else batching.not_mapped for b in out_b[:nk]]
                  + [1 if b else batching.not_mapped for b in out_b[nk:]])


def _scan_dce(used_outputs, eqn):
    """Keeps the ys that are used and the carries that are used or that the kept work
    reads (a fixed point over the body); consts and xs nobody reads go."""
    params = eqn.params
    jaxpr, nc, nk = params["jaxpr"], params["num_consts"], params["num_carry"]
    used_carry, used_ys = split_list(list(used_outputs), [nk])
    live = common.carry_fixpoint(
        lambda c: jx.prune_closed_jaxpr(jaxpr, c + used_ys)[1][nc:nc + nk], used_carry)
    const_used, _, xs_used = split_list(jx.prune_closed_jaxpr(jaxpr, live + used_ys)[1],
                                        [nc, nk])
    keep = const_used + live + xs_used
    body, _ = jx.prune_closed_jaxpr(jaxpr, live + used_ys, keep)
    carry_out, ys_out = split_list(eqn.outvars, [nk])
    outvars = ([v if u else jx.DropVar(v.aval) for v, u, k in zip(carry_out, used_carry, live)
                if k] + common.pick(ys_out, used_ys))
    return eqn.replace(invars=common.pick(eqn.invars, keep), outvars=outvars, params=dict(
        params, jaxpr=body, num_consts=sum(const_used), num_carry=sum(live),
        linear=tuple(common.pick(params["linear"], keep))))


def _scan_lower(ctx, *args, **params):
    """A scan compiles as a while loop over slices (as JAX lowers it): `unroll` body
    copies per trip, the leftover iterations after the loop; the program's size does not
    depend on the trip count."""
    loop = common.trace_closed(lambda *xs: _scan_as_while(xs, **params),
                               ctx.avals_in)   # (typed, as values may not be)
    return ctx.lower_jaxpr(loop, list(args))


def _scan_as_while(args, jaxpr, length, reverse, num_consts, num_carry, linear, unroll):
    consts, carry, xs = split_list(args, [num_consts, num_carry])
    ys_avals = [batching.unmapped_aval(a, 0, batching.AxisData(None, length))
                for a in jaxpr.out_avals[num_carry:]]
    ys = [_typed_like(pe.vary_like(st.zeros_like_aval(y), a), y)   # (typed as scan's result)
          for a, y in zip(jaxpr.out_avals[num_carry:], ys_avals)]
    if is_symbolic_dim(length):   # (jax.export) known when the module runs: no copies
        unroll = 1
    trips = length // unroll
    if trips == 1:      # fully unrolled: no loop at all
        trips = 0

    def step(t, carry, ys):
        at = ew.sub(st.dim_as_value(length - 1, np.int32), t) if reverse else t
        x = [slicing.dynamic_index_in_dim(x, at, keepdims=False, allow_negative_indices=False)
             for x in xs]
        outs = jx.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *consts, *carry, *x)
        carry, y = split_list(outs, [num_carry])
        return carry, [slicing.dynamic_update_index_in_dim(acc, v, at, 0,
                                                           allow_negative_indices=False)
                       for acc, v in zip(ys, y)]

    def trip(state):
        i, carry, ys = state
        first = i if unroll == 1 else ew.mul(i, np.int32(unroll))
        for j in range(unroll):
            carry, ys = step(ew.add(first, np.int32(j)) if j else first, carry, ys)
        return ew.add(i, np.int32(1)), carry, ys

    if is_symbolic_dim(trips) or trips:
        stop = st.dim_as_value(trips, np.int32)
        _, carry, ys = while_loop(lambda state: ew.lt(state[0], stop), trip,
                                  (np.int32(0), list(carry), ys))
    if is_symbolic_dim(length):
        return list(carry) + list(ys)
    for t in range(trips * unroll, length):
        carry, ys = step(np.int32(t), carry, ys)
    return list(carry) + list(ys)


def _typed_like(x, aval):
    """x (a new loop output buffer) of the sharding in `aval`'s type, where it names one
    (a partial sum's buffer stays one, so each iteration's update keeps its type)."""
    wanted = aval._sharding
    if wanted is None or get_aval(x)._sharding == wanted or not (
            wanted.mesh.explicit_axes and not wanted.mesh.manual_axes):
        return x
    return sharding_constraint_p.bind(x, sharding=wanted)


def _scan_samples():
    from pyjax._src.core.avals import ShapedArray
    from pyjax._src.lax.builders import Sample, random_values
    f32 = ShapedArray((3,), np.float32)
    body = common.trace_closed(
        lambda c, h, x: [ew.tanh(ew.add(ew.mul(h, c), x)), ew.mul(h, x)], [f32] * 3)
    args = [random_values((3,), np.float32, seed=1), random_values((3,), np.float32, seed=2),
            random_values((4, 3), np.float32, seed=3)]
    params = dict(jaxpr=body, length=4, linear=(False,) * 3, num_carry=1, num_consts=1,
                  reverse=False, unroll=1)
    return [Sample(args, params), Sample(args, dict(params, reverse=True, unroll=3))]


def _scan_shown(params):
    """As JAX prints a scan: `linear` (pyjax's mark of the operands its transpose may
    treat as linear) is not one of JAX 0.10.2's scan params."""
    return {k: v for k, v in sorted(params.items()) if k != "linear"}


scan_p = define_primitive(
    "scan", multiple_results=True, impl=_scan_impl, eager=_scan_eager,
    shown_params=_scan_shown,
    abstract_eval=_scan_abstract_eval,
    samples=lambda: _scan_samples(),
    jvp=_scan_jvp, transpose=_scan_transpose, batch=_scan_batch, lower=_scan_lower,
    effects=_scan_effects, partial_eval=_scan_partial_eval, dce=_scan_dce,
    is_higher_order=True, batch_needs_axis=True)


# --- scan -------------------------------------------------------------------------------

def _stack(ys):
    return st.concatenate([st.expand_dims(y, (0,)) for y in ys], 0)


def _python_scan(f, init, xs_flat, xs_tree, length, reverse):
    """scan as a Python loop (disable_jit)."""
    if length == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    carry, ys = init, []
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        x = [slicing.index_in_dim(x, i, keepdims=False) for x in xs_flat]
        carry, y = f(carry, tree_util.tree_unflatten(xs_tree, x))
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, tree_util.tree_map(lambda *leaves: _stack(leaves), *ys)


def _scan_length(xs_flat, length):
    lengths = []
    for x in xs_flat:
        shape = get_aval(x).shape
        if not shape:
            raise ValueError(f"scan got value with no leading axis to scan over: {x}.")
        lengths.append(shape[0])
    if length is not None:
        try:   # a symbolic dimension (jax.export) stands as it is
            length = length if is_symbolic_dim(length) else operator.index(length)
        except (errors.ConcretizationTypeError, errors.TracerIntegerConversionError) as err:
            raise errors.ConcretizationTypeError(
                err.tracer, "The `length` argument to `scan` expects a concrete `int` "
                "value.\n") from None
        except TypeError:
            raise TypeError(f"The `length` argument to `scan` expects a concrete `int` value, "
                            f"got {length!r}.") from None
        if length < 0:
            raise ValueError(f"scan `length` must be non-negative, got {length}.")
        if any(n != length for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {lengths}.")
        return length
    if len(set(lengths)) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(str(n) for n in lengths)}.")
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return lengths[0]


def _trace_scan(f, init, xs, xs_flat, x_avals):
    init_flat, init_tree = tree_util.flatten(init)
    _, in_tree = tree_util.flatten((init, xs))
    carry_avals = common.avals_of(init_flat)
    is_ref = [type(a) is AbstractRef for a in carry_avals]
    body, traced_avals = f, carry_avals
    if any(is_ref):
        body = _with_own_refs(f, in_tree, is_ref, init_flat)
        traced_avals = [a.inner_aval if r else a for a, r in zip(carry_avals, is_ref)]
    jaxpr, consts, out_tree, captures = common.trace_fun(
        body, in_tree, traced_avals + x_avals, "lax.scan", capture_refs=True)
    if any(is_ref):
        _refuse_ref_carries(f, in_tree, init_flat, is_ref, captures)
    children = out_tree.children()
    if tree_util.treedef_is_leaf(out_tree) or len(children) != 2:
        raise TypeError("scan body output must be a pair, got "
                        f"{tree_util.tree_unflatten(out_tree, jaxpr.out_avals)}.")
    return init_flat, init_tree, carry_avals, jaxpr, consts, children, captures


def _with_own_refs(f, in_tree, is_ref, init_flat):
    """f whose jax.Ref carries are Refs of its own holding the traced carry values, as
    JAX traces a Ref argument. (A carry must come back out, and a Ref cannot: JAX refuses
    every such scan; this names the ref passed twice, or also closed over, as JAX does.)
    """
    leaves = list(init_flat) + [None] * (in_tree.num_leaves - len(init_flat))
    refs = [x for x, r in zip(init_flat, is_ref) if r]
    if len({id(r) for r in refs}) < len(refs):
        raise common.aliased_operands_error(f, leaves, in_tree, "scan")

    @functools.wraps(f)
    def with_own_refs(carry, xs):
        flat, tree = tree_util.flatten(carry)
        return f(tree_util.tree_unflatten(tree, [
            AbstractRef.ref_type(x) if r else x for x, r in zip(flat, is_ref)]), xs)
    return with_own_refs


def _refuse_ref_carries(f, in_tree, init_flat, is_ref, captures):
    """JAX's errors for a traced body given jax.Ref carries: one it also closes over,
    else (the body returned no Ref, or tracing would have said so) the carry's type."""
    closed = {id(c.ref) for c in captures}
    names = common.operand_names(f, in_tree)
    refs = [(i, x) for i, (x, r) in enumerate(zip(init_flat, is_ref)) if r]
    for i, x in refs:
        if id(x) in closed:
            raise ValueError(
                f"when tracing {pe.debug_info_of(f).describe()} for scan, a mutable array "
                f"reference of type {get_aval(x).str_short(True)} was both closed over "
                f"and passed as the argument {names[i]}")
    raise ValueError(f"Attempting to pass a Ref {get_aval(refs[0][1]).str_short(True)} to a "
                     "primitive: convert_element_type -- did you forget to unpack ([...]) "
                     "the ref?")


def _scan_over_refs(f, xs_flat, xs_tree, length):
    """jax.Refs among xs, as JAX scans them: each iteration's body sees the view
    `ref.at[i]` of its row (read and written through the ref, which the body then
    captures as closed over). The body is given the iteration index instead."""
    is_ref = [type(get_aval(x)) is AbstractRef for x in xs_flat]
    refs = [x for x, r in zip(xs_flat, is_ref) if r]
    rest = [x for x, r in zip(xs_flat, is_ref) if not r]

    def over_rows(carry, xs):
        *values, i = xs
        rows = [ref.at[i] for ref in refs]
        return f(carry, tree_util.tree_unflatten(xs_tree, merge_lists(is_ref, values, rows)))
    index = st.iota(np.int32, length)
    return over_rows, rest + [index], tree_util.flatten(tuple(rest + [index]))[1]


@api_boundary
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loops `carry, y = f(carry, x)` over the leading axis of xs, returning the final
    carry and the stacked ys. f is traced once; the carry keeps its structure and types.
    xs may be None when `length` is given; reverse runs from the end; unroll runs that
    many iterations per loop trip in compiled code."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    xs_flat, xs_tree = tree_util.flatten(xs)
    length = _scan_length(xs_flat, length)
    if any(type(get_aval(x)) is AbstractRef for x in xs_flat):
        f, xs_flat, xs_tree = _scan_over_refs(f, xs_flat, xs_tree, length)
        xs = tree_util.tree_unflatten(xs_tree, xs_flat)
    specs = [get_aval(x).sharding.spec for x in xs_flat]
    if any(spec.partitions[:1] not in ((), (None,)) for spec in specs):
        raise ValueError("0th dimension of all xs should be replicated. Got "
                         + ", ".join(str(spec) for spec in specs))
    if config.disable_jit_flag.value:
        return _python_scan(f, init, xs_flat, xs_tree, length, reverse)
    x_avals = [_slice_aval(x) for x in xs_flat]
    traced = _trace_scan(f, init, xs, xs_flat, x_avals)
    init_flat, init_tree, carry_avals, jaxpr, _, children, _ = traced
    carry_out = jaxpr.out_avals[:children[0].num_leaves]
    new_init, changed = common.promote_weak_carry(init_flat, carry_avals, carry_out)
    if changed:
        init = tree_util.tree_unflatten(init_tree, new_init)
        traced = _trace_scan(f, init, xs, xs_flat, x_avals)
    init_flat, init_tree, carry_avals, jaxpr, consts, children, captures = traced
    common.check_carry_type("scan body", f, init_tree, carry_avals, children[0],
                            jaxpr.out_avals[:children[0].num_leaves])
    # jax.Refs the body closes over are carried through the loop and stored back
    refs = [c.ref for c in captures]
    if refs:
        jaxpr = common.refs_as_carries(jaxpr, len(consts) + len(init_flat), len(init_flat),
                                       captures)
        init_flat = init_flat + [ref[...] for ref in refs]
    unroll = _unroll_count(unroll, length)
    jaxpr, consts, init_kept, moved, ys_from_xs = _forward_read_only(jaxpr, consts, init_flat,
                                                                     len(xs_flat))
    outs = _bind_scan(consts, init_kept, xs_flat, jaxpr, length, bool(reverse), None, unroll)
    carry, ys = split_list(outs, [len(init_kept)])
    carry = merge_lists(moved, carry, [x for x, m in zip(init_flat, moved) if m])
    if refs:
        carry, ref_values = split_list(carry, [len(carry) - len(refs)])
        for ref, value in zip(refs, ref_values):
            ref._value = value
    ys_left = iter(ys)
    ys = [next(ys_left) if i is None else as_array(xs_flat[i]) for i in ys_from_xs]
    return (tree_util.tree_unflatten(children[0], carry),
            tree_util.tree_unflatten(children[1], ys))


def _forward_read_only(jaxpr, consts, init, num_xs):
    """As JAX's scan: a carry the body returns unchanged is read-only, so it becomes a
    const and the scan's output is the initial value itself (under a batched cond it then
    stays unbatched); a y that is the body's x is the xs themselves, never copied.
    Returns the new body, consts, carry, which carries moved and, per y, the index of the
    xs it is (or None)."""
    nc, nk = len(consts), len(init)
    fwd = jx.forwarded_inputs(jaxpr.jaxpr)
    moved = [f == nc + i for i, f in enumerate(fwd[:nk])]
    ys_from_xs = [f - nc - nk if f is not None and f >= nc + nk else None for f in fwd[nk:]]
    if not any(moved) and all(i is None for i in ys_from_xs):
        return jaxpr, consts, init, moved, ys_from_xs
    invars, outvars = jaxpr.jaxpr.invars, jaxpr.jaxpr.outvars
    carry_in = invars[nc:nc + nk]
    new_invars = ([v for v, m in zip(carry_in, moved) if m] + invars[:nc]
                  + [v for v, m in zip(carry_in, moved) if not m] + invars[nc + nk:])
    new_outvars = ([v for v, m in zip(outvars[:nk], moved) if not m]
                   + [v for v, i in zip(outvars[nk:], ys_from_xs) if i is None])
    jaxpr = common.with_binders(jaxpr, new_invars, new_outvars)
    consts = [x for x, m in zip(init, moved) if m] + list(consts)
    init = [x for x, m in zip(init, moved) if not m]
    return jaxpr, consts, init, moved, ys_from_xs


def _unroll_count(unroll, length):
    if isinstance(unroll, Tracer):
        concrete = unroll.to_concrete_value()
        if concrete is None:
            raise errors.ConcretizationTypeError(
                unroll, "The `unroll` argument to `scan` expects a concrete `int` or `bool` "
                        "value.\n")
        unroll = concrete.item()
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    try:
        unroll = operator.index(unroll)
    except TypeError:
        raise TypeError("The `unroll` argument to `scan` expects a concrete `int` or `bool` "
                        f"value, got {unroll!r}.") from None
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    return max(unroll, 1)   # 0 means no unrolling, as 1 does (JAX accepts both)


# --- map --------------------------------------------------------------------------------

@api_boundary
def map(f, xs, *, batch_size=None):
    """Applies f to each slice of xs along its leading axis, like a Python map stacked
    back together, as a scan (one trace of f). With batch_size, f is vmapped over chunks
    of that many slices (and once more over the remainder); batch_size=0 vmaps f over all
    of them at once."""
    if not callable(f):
        raise TypeError("lax.map: f argument should be a callable.")
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    return _batched_map(f, xs, operator.index(batch_size))


def _batched_map(f, xs, batch_size):
    from pyjax._src.lax.control_flow.batched import vmap_leading
    if batch_size < 0:   # (a TypeError in JAX, from the reshape it attempts)
        raise TypeError(f"lax.map batch_size must be a non-negative integer, got "
                        f"{batch_size}.")
    leaves, tree = tree_util.flatten(xs)
    n = _scan_length(leaves, None)
    if n == 0:
        return map(f, xs)
    if batch_size == 0:   # one full batch: a vmap, as JAX documents
        return vmap_leading(f, xs)
    batches, rest = divmod(n, batch_size)
    tail = [slicing.slice_in_dim(x, batches * batch_size, n) for x in leaves]
    ys = None
    if batches:
        head = [slicing.slice_in_dim(x, 0, batches * batch_size) for x in leaves]
        chunks = [st.reshape(x, (batches, batch_size) + get_aval(x).shape[1:]) for x in head]
        _, ys = scan(lambda _, x: ((), vmap_leading(f, x)), (),
                     tree_util.tree_unflatten(tree, chunks))
        ys = tree_util.tree_map(
            lambda y: st.reshape(y, (batches * batch_size,) + get_aval(y).shape[2:]), ys)
    if rest:
        rest_ys = vmap_leading(f, tree_util.tree_unflatten(tree, tail))
        ys = rest_ys if ys is None else tree_util.tree_map(
            lambda a, b: st.concatenate([a, b], 0), ys, rest_ys)
    return ys

