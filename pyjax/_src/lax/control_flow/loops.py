"""while_p: iterate a body jaxpr while a cond jaxpr holds, and the public `while_loop` and
`fori_loop` (a scan when its trip count is concrete, so reverse mode works; a while loop
otherwise). Imports core, interpreters, backends and the lax families."""
from __future__ import annotations

import numpy as np

from pyjax._src import config, dtypes, errors, tree_util
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.control_flow import common
from pyjax._src.lax.control_flow.scan import scan
from pyjax._src.util import split_list

_BOOL_SCALAR = ShapedArray((), np.bool_)


# --- the primitive ----------------------------------------------------------------------

def _while_abstract_eval(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, init = split_list(args, [cond_nconsts, body_nconsts])
    common.check_operands("while_loop cond_fun", cond_jaxpr, cond_consts + init)
    common.check_operands("while_loop body_fun", body_jaxpr, body_consts + init)
    if [a.strip_weak_type() for a in cond_jaxpr.out_avals] != [_BOOL_SCALAR]:
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"{cond_jaxpr.out_avals}.")
    outs = body_jaxpr.out_avals
    if len(outs) != len(init) or any(not a.same_type(b) for a, b in zip(init, outs)):
        raise TypeError(f"while_loop body_fun output types {[a.str_short() for a in outs]} "
                        f"differ from the carry types {[a.str_short() for a in init]}")
    return [b.update(weak_type=a.weak_type and b.weak_type) for a, b in zip(init, outs)]


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, carry = split_list(args, [cond_nconsts, body_nconsts])
    while common.run_closed(cond_jaxpr, cond_consts + carry)[0]:
        carry = common.run_closed(body_jaxpr, body_consts + carry)
    return carry


def _while_effects(cond_jaxpr, body_jaxpr, **_):
    return cond_jaxpr.effects | body_jaxpr.effects


while_p = define_primitive(
    "while", multiple_results=True, impl=_while_impl, abstract_eval=_while_abstract_eval,
    effects=_while_effects)
while_p.is_higher_order = True

REVERSE_MODE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
    "start/stop.")


# --- while_loop -------------------------------------------------------------------------

def _trace_while(cond_fun, body_fun, init_val):
    init_vals, in_tree = tree_util.flatten((init_val,))
    init_avals = common.avals_of(init_vals)
    cond_jaxpr, cond_consts, cond_tree = common.trace_fun(cond_fun, in_tree, init_avals,
                                                          "lax.while_loop")
    body_jaxpr, body_consts, body_tree = common.trace_fun(body_fun, in_tree, init_avals,
                                                          "lax.while_loop")
    if not tree_util.treedef_is_leaf(cond_tree) or len(cond_jaxpr.out_avals) != 1:
        raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
    if cond_jaxpr.out_avals[0].strip_weak_type() != _BOOL_SCALAR:
        raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                        f"{cond_jaxpr.out_avals}.")
    return (init_vals, init_avals, in_tree.children()[0], cond_jaxpr, cond_consts,
            body_jaxpr, body_consts, body_tree)


def while_loop(cond_fun, body_fun, init_val):
    """Runs `val = body_fun(val)` while `cond_fun(val)` is True and returns the final val.
    Both functions are traced once; the carry keeps one structure and type throughout.
    Forward-mode differentiable; reverse mode needs scan or a fori_loop with static
    bounds."""
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    if config.disable_jit_flag.value:
        try:
            val = init_val
            while cond_fun(val):
                val = body_fun(val)
            return val
        except errors.ConcretizationTypeError:
            pass   # a traced predicate (e.g. under vmap): stage the loop instead
    traced = _trace_while(cond_fun, body_fun, init_val)
    init_vals, init_avals, init_tree, _, _, body_jaxpr, _, body_tree = traced
    new_vals, changed = common.promote_weak_carry(init_vals, init_avals,
                                                  body_jaxpr.out_avals)
    if changed:
        init_val = tree_util.tree_unflatten(init_tree, new_vals)
        traced = _trace_while(cond_fun, body_fun, init_val)
    (init_vals, init_avals, init_tree, cond_jaxpr, cond_consts, body_jaxpr, body_consts,
     body_tree) = traced
    common.check_carry_type("while_loop body", body_fun, init_tree, init_avals, body_tree,
                            body_jaxpr.out_avals)
    outs = while_p.bind(*cond_consts, *body_consts, *init_vals, cond_jaxpr=cond_jaxpr,
                        body_jaxpr=body_jaxpr, cond_nconsts=len(cond_consts),
                        body_nconsts=len(body_consts))
    return tree_util.tree_unflatten(body_tree, outs)


# --- fori_loop --------------------------------------------------------------------------

def _plus_one(i):
    aval = get_aval(i)
    return ew.add(i, 1 if aval.weak_type else np.array(1, aval.dtype))


def _concrete_int(x):
    try:
        return int(x)
    except errors.ConcretizationTypeError:
        return None


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """Returns the carry after `val = body_fun(i, val)` for i in range(lower, upper).
    With concrete bounds this is a scan of upper - lower steps (reverse-mode
    differentiable); with traced bounds it is a while loop (forward mode only)."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lower_dtype = dtypes.canonicalize_dtype(get_aval(lower).dtype)
    upper_dtype = dtypes.canonicalize_dtype(get_aval(upper).dtype)
    for name, d in (("lower", lower_dtype), ("upper", upper_dtype)):
        if d.kind not in "iu":
            raise TypeError(f"fori_loop {name} bound must be an integer, got dtype "
                            f"{d.name}.")
    if lower_dtype != upper_dtype:
        dtype = dtypes.result_type(lower, upper)
        lower = ew.convert_element_type(lower, dtype)
        upper = ew.convert_element_type(upper, dtype)
    lower_, upper_ = _concrete_int(lower), _concrete_int(upper)
    if lower_ is not None and upper_ is not None:
        length = max(upper_ - lower_, 0)
        if config.disable_jit_flag.value and length == 0:
            return init_val

        def step(carry, _):
            i, x = carry
            return (_plus_one(i), body_fun(i, x)), None

        (_, result), _ = scan(step, (lower, init_val), None, length=length,
                              unroll=1 if unroll is None else unroll)
        return result
    if unroll not in (None, 1, False):
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")

    def loop_cond(carry):
        i, stop, _ = carry
        return ew.lt(i, stop)

    def loop_body(carry):
        i, stop, x = carry
        return _plus_one(i), stop, body_fun(i, x)

    _, _, result = while_loop(loop_cond, loop_body, (lower, upper, init_val))
    return result
