"""associative_scan: all prefix combinations of an associative binary function along an
axis, in O(log n) rounds of vectorised calls (no primitive of its own: it is built from
slices, concatenations and reshapes). Imports the lax families only."""
from __future__ import annotations

from pyjax._src import tree_util
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import slicing
from pyjax._src.lax import structural as st
from pyjax._src.util import canonicalize_axis
from pyjax._src.traceback_util import api_boundary


def _interleave(evens, odds, axis):
    """[e0, o0, e1, o1, ...] along axis; evens may hold one more element than odds."""
    n_even, n_odd = get_aval(evens).shape[axis], get_aval(odds).shape[axis]
    head = slicing.slice_in_dim(evens, 0, n_odd, axis=axis)
    pairs = st.concatenate([st.expand_dims(head, (axis + 1,)),
                            st.expand_dims(odds, (axis + 1,))], axis + 1)
    shape = list(get_aval(evens).shape)
    shape[axis] = 2 * n_odd
    out = st.reshape(pairs, tuple(shape))
    if n_even > n_odd:
        out = st.concatenate([out, slicing.slice_in_dim(evens, n_odd, n_even, axis=axis)],
                             axis)
    return out


@api_boundary
def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive scan with an associative `fn(a, b)` over `axis` of every leaf of elems:
    out[i] = elems[0] fn ... fn elems[i] (from the end when reverse). fn must work on
    stacked slices (it is called vectorised) and return elems' structure."""
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    leaves, tree = tree_util.flatten(elems)
    if not leaves:
        return elems
    ndim = get_aval(leaves[0]).ndim
    axis = canonicalize_axis(axis, ndim)
    sizes = [get_aval(x).shape[axis] if get_aval(x).ndim > axis else None for x in leaves]
    if len(set(sizes)) != 1 or sizes[0] is None:
        raise ValueError("Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[get_aval(x).shape for x in leaves]})")
    if reverse:
        leaves = [st.rev(x, (axis,)) for x in leaves]

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        out_leaves, out_tree = tree_util.flatten(out)
        if out_tree != tree:
            raise ValueError(f"associative_scan: fn must return the structure of elems "
                             f"({tree}), got {out_tree}.")
        return out_leaves

    def take(xs, start, stop=None, stride=1):
        return [slicing.slice_in_dim(x, start, stop, stride, axis) for x in xs]

    def prefix(xs):
        n = get_aval(xs[0]).shape[axis]
        if n < 2:
            return xs
        # Combine neighbouring pairs, scan those (the odd positions), then fill in the
        # even positions from the odd results before them.
        odds = prefix(combine(take(xs, 0, n - 1, 2), take(xs, 1, None, 2)))
        lead = odds if n % 2 else take(odds, 0, -1)
        evens = combine(lead, take(xs, 2, None, 2))
        evens = [st.concatenate([first, rest], axis)
                 for first, rest in zip(take(xs, 0, 1), evens)]
        return [_interleave(e, o, axis) for e, o in zip(evens, odds)]

    out = prefix(leaves)
    if reverse:
        out = [st.rev(x, (axis,)) for x in out]
    return tree_util.tree_unflatten(tree, out)
