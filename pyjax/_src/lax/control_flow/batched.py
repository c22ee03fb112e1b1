"""vmap over a leading axis for lax.map's batch_size, built on the batching interpreter
(lax cannot import the vmap API above it)."""
from __future__ import annotations

from pyjax._src import tree_util
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import get_aval
from pyjax._src.interpreters import batching
from pyjax._src.lax.control_flow import common


def vmap_leading(f, xs):
    """f applied to every slice of xs along axis 0, as one batched computation."""
    leaves, in_tree = tree_util.flatten((xs,))
    size = get_aval(leaves[0]).shape[0]
    slice_avals = [batching.mapped_aval(get_aval(x), 0) for x in leaves]
    closed, consts, out_tree = common.trace_fun(f, in_tree, slice_avals, "lax.map")
    batched, _ = batching.batch_jaxpr(closed, size, [False] * len(consts) + [True] * len(leaves),
                                      True)
    outs = jx.eval_jaxpr(batched.jaxpr, batched.consts, *consts, *leaves)
    return tree_util.tree_unflatten(out_tree, outs)
