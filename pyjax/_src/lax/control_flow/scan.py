"""scan_p: loop a body jaxpr over the leading axis of `xs` while threading a carry, and the
public `scan` and `map`. Imports core, interpreters, backends and the lax families."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src import config, errors, tree_util
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.lax import slicing
from pyjax._src.lax import structural as st
from pyjax._src.lax.control_flow import common
from pyjax._src.util import split_list


# --- the primitive ----------------------------------------------------------------------

def _scan_abstract_eval(*args, jaxpr, length, reverse, num_consts, num_carry, linear,
                        unroll):
    consts, init, xs = split_list(args, [num_consts, num_carry])
    if len(linear) != len(args):
        raise TypeError(f"scan linear flags {linear} need one entry per operand "
                        f"({len(args)})")
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise TypeError(f"scan operand {x.str_short()} must have a leading axis of the "
                            f"scan length {length}")
    x_avals = [x.update(shape=x.shape[1:]) for x in xs]
    common.check_operands("scan body", jaxpr, consts + init + x_avals)
    carry_out, ys = split_list(jaxpr.out_avals, [num_carry])
    if any(not a.same_type(b) for a, b in zip(init, carry_out)):
        raise TypeError(f"scan body carry output types {[a.str_short() for a in carry_out]} "
                        f"differ from the carry types {[a.str_short() for a in init]}")
    return ([b.update(weak_type=a.weak_type and b.weak_type) for a, b in zip(init, carry_out)]
            + [y.update(shape=(length,) + y.shape) for y in ys])


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


def _scan_effects(jaxpr, **_):
    return jaxpr.effects


scan_p = define_primitive(
    "scan", multiple_results=True, impl=_scan_impl, abstract_eval=_scan_abstract_eval,
    effects=_scan_effects)
scan_p.is_higher_order = True


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
        try:
            length = operator.index(length)
        except errors.ConcretizationTypeError as err:
            raise errors.ConcretizationTypeError(
                err.tracer, "The `length` argument to `scan` expects a concrete `int` "
                "value.\n") from None
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
    jaxpr, consts, out_tree = common.trace_fun(f, in_tree, carry_avals + x_avals, "lax.scan")
    children = out_tree.children()
    if tree_util.treedef_is_leaf(out_tree) or len(children) != 2:
        raise TypeError("scan body output must be a pair, got "
                        f"{tree_util.tree_unflatten(out_tree, jaxpr.out_avals)}.")
    return init_flat, init_tree, carry_avals, jaxpr, consts, children


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """Loops `carry, y = f(carry, x)` over the leading axis of xs, returning the final
    carry and the stacked ys. f is traced once; the carry keeps its structure and types.
    xs may be None when `length` is given; reverse runs from the end; unroll runs that
    many iterations per loop trip in compiled code."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    xs_flat, xs_tree = tree_util.flatten(xs)
    length = _scan_length(xs_flat, length)
    if config.disable_jit_flag.value:
        return _python_scan(f, init, xs_flat, xs_tree, length, reverse)
    x_avals = [get_aval(x).update(shape=get_aval(x).shape[1:]) for x in xs_flat]
    traced = _trace_scan(f, init, xs, xs_flat, x_avals)
    init_flat, init_tree, carry_avals, jaxpr, _, children = traced
    carry_out = jaxpr.out_avals[:children[0].num_leaves]
    new_init, changed = common.promote_weak_carry(init_flat, carry_avals, carry_out)
    if changed:
        init = tree_util.tree_unflatten(init_tree, new_init)
        traced = _trace_scan(f, init, xs, xs_flat, x_avals)
    init_flat, init_tree, carry_avals, jaxpr, consts, children = traced
    common.check_carry_type("scan body", f, init_tree, carry_avals, children[0],
                            jaxpr.out_avals[:children[0].num_leaves])
    unroll = _unroll_count(unroll, length)
    operands = [*consts, *init_flat, *xs_flat]
    outs = scan_p.bind(*operands, jaxpr=jaxpr, length=length, reverse=bool(reverse),
                       num_consts=len(consts), num_carry=len(init_flat),
                       linear=(False,) * len(operands), unroll=unroll)
    carry, ys = split_list(outs, [len(init_flat)])
    return (tree_util.tree_unflatten(children[0], carry),
            tree_util.tree_unflatten(children[1], ys))


def _unroll_count(unroll, length):
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    try:
        unroll = operator.index(unroll)
    except TypeError:
        raise TypeError("The `unroll` argument to `scan` expects a concrete `int` or `bool` "
                        f"value, got {unroll!r}.") from None
    if unroll < 1:
        raise ValueError("`unroll` must be a `bool` or a positive `int`.")
    return unroll


# --- map --------------------------------------------------------------------------------

def map(f, xs, *, batch_size=None):
    """Applies f to each slice of xs along its leading axis, like a Python map stacked
    back together, as a scan (one trace of f). With batch_size, f is vmapped over chunks
    of that many slices (and once more over the remainder)."""
    if not callable(f):
        raise TypeError("lax.map: f argument should be a callable.")
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    return _batched_map(f, xs, operator.index(batch_size))


def _batched_map(f, xs, batch_size):
    from pyjax._src.lax.control_flow.batched import vmap_leading
    if batch_size < 1:
        raise ValueError(f"lax.map batch_size must be a positive integer, got {batch_size}.")
    leaves, tree = tree_util.flatten(xs)
    n = _scan_length(leaves, None)
    batches, rest = divmod(n, batch_size)
    if n == 0:
        return map(f, xs)
    head = [slicing.slice_in_dim(x, 0, batches * batch_size) for x in leaves]
    tail = [slicing.slice_in_dim(x, batches * batch_size, n) for x in leaves]
    chunks = [st.reshape(x, (batches, batch_size) + get_aval(x).shape[1:]) for x in head]
    ys = None
    if batches:
        _, ys = scan(lambda _, x: ((), vmap_leading(f, x)), (),
                     tree_util.tree_unflatten(tree, chunks))
        ys = tree_util.tree_map(
            lambda y: st.reshape(y, (batches * batch_size,) + get_aval(y).shape[2:]), ys)
    if rest:
        rest_ys = vmap_leading(f, tree_util.tree_unflatten(tree, tail))
        ys = rest_ys if ys is None else tree_util.tree_map(
            lambda a, b: st.concatenate([a, b], 0), ys, rest_ys)
    return ys

