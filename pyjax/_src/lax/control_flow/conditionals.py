"""cond_p: apply one of several closed jaxprs (`branches`) chosen by an int32 index, and the
public `cond` (also the legacy per-branch-operand form) and `switch`. Imports core,
interpreters, backends and the lax families."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pyjax._src import config, dtypes, tree_util
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.control_flow import common

_NO_OPERAND = object()


# --- the primitive ----------------------------------------------------------------------

def _cond_abstract_eval(index, *ops, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond branch index must be an int32 scalar, got {index}")
    for i, branch in enumerate(branches):
        common.check_operands(f"cond branch {i}", branch, ops)
    first = branches[0].out_avals
    for i, branch in enumerate(branches[1:], 1):
        outs = branch.out_avals
        if len(outs) != len(first) or any(not a.same_type(b) for a, b in zip(first, outs)):
            raise TypeError(f"cond branches 0 and {i} have different output types: "
                            f"{[a.str_short() for a in first]} and "
                            f"{[a.str_short() for a in outs]}")
    return [ShapedArray(a.shape, a.dtype, all(b.out_avals[k].weak_type for b in branches))
            for k, a in enumerate(first)]


def _cond_impl(index, *ops, branches):
    which = int(np.clip(index, 0, len(branches) - 1))
    return common.run_closed(branches[which], ops)


def _cond_effects(branches):
    return frozenset().union(*(b.effects for b in branches))


cond_p = define_primitive(
    "cond", multiple_results=True, impl=_cond_impl, abstract_eval=_cond_abstract_eval,
    effects=_cond_effects)
cond_p.is_higher_order = True


# --- public wrappers --------------------------------------------------------------------

def _operands(operands, operand):
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                        f"passed, got operand={operand!r} and positional operands "
                        f"{operands!r}")
    return (operand,)


def _bind_branches(api_name, index, funs, names, operands):
    ops, ops_tree = tree_util.flatten(operands)
    for x in ops:
        if not common.is_valid(x):
            raise TypeError(f"{api_name}: operand {x!r:.100} of type {type(x)} is not a "
                            "valid JAX type; operands must be arrays or scalars (in pytrees).")
    jaxprs, consts, out_trees = common.trace_branches(funs, ops_tree, common.avals_of(ops),
                                                      api_name)
    common.check_branch_outputs(api_name, names, funs, out_trees,
                                [j.out_avals for j in jaxprs])
    outs = cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs))
    return tree_util.tree_unflatten(out_trees[0], outs)


def _cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _operands(operands, operand)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of " + (
            f"type {type(pred)}" if isinstance(pred, Sequence)
            else f"shape {np.shape(pred)}."))
    try:
        pred_dtype = dtypes.result_type(pred)
    except TypeError as err:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
    if pred_dtype.kind != "b":
        if pred_dtype.kind not in "iuf":
            raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
        pred = ew.ne(pred, np.zeros((), get_aval(pred).dtype))
    if config.disable_jit_flag.value and common.is_concrete(pred):
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    index = ew.convert_element_type(pred, np.int32)
    return _bind_branches("cond", index, (false_fun, true_fun), ("false_fun", "true_fun"),
                          operands)


def _cond_with_per_branch_args(pred, true_operand, true_fun, false_operand, false_fun):
    """The legacy form cond(pred, true_operand, true_fun, false_operand, false_fun)."""
    return _cond(pred, lambda ops: true_fun(ops[0]), lambda ops: false_fun(ops[1]),
                 (true_operand, false_operand))


def cond(*args, **kwargs):
    """Applies true_fun(*operands) if pred else false_fun(*operands). Both branches are
    traced (once each); only the chosen one runs. pred is a scalar bool or number.

    The legacy form cond(pred, true_operand, true_fun, false_operand, false_fun) is also
    accepted."""
    if len(args) == 5 and not kwargs and callable(args[2]) and callable(args[4]):
        return _cond_with_per_branch_args(*args)
    return _cond(*args, **kwargs)


def switch(index, branches, *operands, operand=_NO_OPERAND):
    """Applies branches[index](*operands), with index clamped to [0, len(branches) - 1].
    Every branch is traced once; only the chosen one runs."""
    try:
        branches = tuple(branches)
    except TypeError:
        branches = None
    if branches is None or not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    operands = _operands(operands, operand)
    if np.ndim(index) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape "
                        f"{np.shape(index)}.")
    try:
        index_dtype = dtypes.result_type(index)
    except TypeError as err:
        raise TypeError(f"Index type must be an integer, got {index}.") from err
    if index_dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = ew.convert_element_type(index, np.int32)
    index = ew.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    if config.disable_jit_flag.value and common.is_concrete(index):
        return branches[int(index)](*operands)
    names = tuple(f"branches[{i}]" for i in range(len(branches)))
    return _bind_branches("switch", index, branches, names, operands)
