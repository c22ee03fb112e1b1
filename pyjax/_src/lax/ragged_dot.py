"""lax.ragged_dot and lax.ragged_dot_general: matrix products where one lhs dimension is cut
into consecutive groups of `group_sizes` rows. As in JAX's reference lowering, each group
is masked out of the ragged operand into a dense leading axis of size g, and one
dot_general contracts it (so jit, grad and vmap come from dot_general's rules). Imports
core and the lax families."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions
from pyjax._src.lax import structural as st
from pyjax._src.lax.dot import dot_general


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """dot_dimension_numbers ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)),
    the lhs ragged dimension (exactly one) and the rhs group dimensions (one when the
    ragged dimension is a non-contracting one, else none)."""
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))


_BASIC = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
_NONCONTRACTING, _CONTRACTING, _BATCH = "noncontracting", "contracting", "batch"


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """lhs (m, k) times rhs (g, k, n), where rows of lhs in the i-th group (group_sizes[i]
    consecutive rows) multiply rhs[i]: an (m, n) result. Rows past sum(group_sizes) are 0."""
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC, precision,
                              preferred_element_type, group_offset, out_sharding)


def _remaining(rank, *used):
    used = {d for dims in used for d in dims}
    return [d for d in range(rank) if d not in used]


def _mode(lhs_rank, dnums):
    ragged = dnums.lhs_ragged_dimensions[0]
    (contract, _), (batch, _) = dnums.dot_dimension_numbers
    if ragged in contract:
        return _CONTRACTING
    if ragged in batch:
        return _BATCH
    return _NONCONTRACTING


def _prefix_dims(mode, rank, ragged, batch, contract):
    """The lhs (or rhs) dimensions group_sizes carries before its group axis."""
    batch, contract = list(batch), list(contract)
    if mode == _NONCONTRACTING:
        free = _remaining(rank, contract, batch)
        return batch + free[:free.index(ragged)]
    if mode == _CONTRACTING:
        return batch + contract[:contract.index(ragged)]
    return batch[:batch.index(ragged)]


def _check(lhs, rhs, group_sizes, dnums):
    """JAX's shape rule: TypeErrors that name what is wrong."""
    def in_range(dim, rank, what, arg):
        if not 0 <= dim < rank:
            raise TypeError(f"ragged_dot_general requires {what} numbers to be nonnegative "
                            f"and less than the number of axes of the {arg} value, got "
                            f"{dim} for {arg} of rank {rank}.")

    if len(dnums.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    ragged = dnums.lhs_ragged_dimensions[0]
    in_range(ragged, lhs.ndim, "lhs ragged dimension", "lhs")
    mode = _mode(lhs.ndim, dnums)
    (l_contract, r_contract), (l_batch, r_batch) = dnums.dot_dimension_numbers
    if group_sizes.ndim == 0:
        raise TypeError("expected rank of group_sizes to be >=1.")
    if group_sizes.ndim != 1:
        prefix = _prefix_dims(mode, lhs.ndim, ragged, l_batch, l_contract)
        expected = tuple(lhs.shape[i] for i in prefix) + (group_sizes.shape[-1],)
        if group_sizes.shape != expected:
            raise TypeError(f"expected group_sizes to have shape {expected}, got "
                            f"{group_sizes.shape}.")
    if not dtypes.issubdtype(group_sizes.dtype, np.integer):
        raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of "
                        "np.integer.")
    groups = dnums.rhs_group_dimensions
    if mode != _NONCONTRACTING:
        if groups:
            raise TypeError("ragged_dot_general requires zero group dimensions in the rhs "
                            "when lhs ragged dimension is contracting or batch.")
        return mode
    if len(groups) != 1:
        raise TypeError("ragged_dot_general requires exactly one rhs group dimension when "
                        "lhs ragged dimension is noncontracting.")
    in_range(groups[0], rhs.ndim, "rhs group dimension", "rhs")
    if groups[0] in r_batch or groups[0] in r_contract:
        raise TypeError("ragged_dot_general requires rhs group dimension numbers to be "
                        "distinct from contracting and batch dimensions.")
    if rhs.shape[groups[0]] != group_sizes.shape[-1]:
        raise TypeError(f"expected rhs group dimension size to be {group_sizes.shape[-1]}, "
                        f"got {rhs.shape[groups[0]]}.")
    return mode


def _expand(x, dim, group_sizes, axes):
    """x with a new leading axis of size g: slice i keeps only x's entries whose index
    along `dim` falls in group i (others 0). group_sizes has shape (*x.shape[axes], g)."""
    shape = get_aval(x).shape
    g = get_aval(group_sizes).shape[-1]
    out_shape = (g, *shape)
    ends = reductions.cumsum(group_sizes, len(axes))
    starts = ew.sub(ends, group_sizes)
    # the group axis goes first, each other axis of group_sizes where x has it
    where = (0, *(a + 1 for a in axes))
    perm = tuple(int(i) for i in np.argsort(where))
    source = (len(axes), *range(len(axes)))   # group_sizes' axis for each entry of where
    perm = tuple(source[i] for i in perm)
    ends, starts = (st.broadcast_in_dim(st.transpose(v, perm), out_shape, tuple(sorted(where)))
                    for v in (ends, starts))
    index = st.broadcasted_iota(get_aval(group_sizes).dtype, out_shape, dim + 1)
    mask = ew.bitwise_and(ew.le(starts, index), ew.lt(index, ends))
    dense = st.broadcast_in_dim(x, out_shape, tuple(range(1, len(out_shape))))
    return ew.select(mask, dense, st.full(out_shape, 0, get_aval(x).dtype))


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """dot_general where the lhs dimension ragged_dot_dimension_numbers.lhs_ragged_dimensions
    is cut into groups of group_sizes. A non-contracting ragged dimension picks rhs's slice
    along its group dimension per group; a contracting one gives one product per group
    (a leading output axis of size g); a batch one is an ordinary batched product."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported (as "
                                  "in JAX's CPU implementation).")
    dnums = ragged_dot_dimension_numbers
    if not isinstance(dnums, RaggedDotDimensionNumbers):
        raise TypeError("ragged_dot_general takes a lax.RaggedDotDimensionNumbers, got "
                        f"{type(dnums).__name__}.")
    lhs_aval, rhs_aval, gs_aval = get_aval(lhs), get_aval(rhs), get_aval(group_sizes)
    mode = _check(lhs_aval, rhs_aval, gs_aval, dnums)
    ragged = dnums.lhs_ragged_dimensions[0]
    (l_contract, r_contract), (l_batch, r_batch) = dnums.dot_dimension_numbers
    l_prefix = _prefix_dims(mode, lhs_aval.ndim, ragged, l_batch, l_contract)
    if gs_aval.ndim == 1:
        group_sizes = st.broadcast(group_sizes, [lhs_aval.shape[i] for i in l_prefix])

    def incr(dims):
        return [d + 1 for d in dims]

    def product(x, y, dimension_numbers):
        # Every mode's product has the ragged product's output dimensions, so
        # out_sharding types it as is.
        return dot_general(x, y, dimension_numbers, precision, preferred_element_type,
                           out_sharding)

    if mode == _NONCONTRACTING:
        rhs_group = dnums.rhs_group_dimensions[0]
        return product(_expand(lhs, ragged, group_sizes, l_prefix), rhs,
                       ((incr(l_contract) + [0], list(r_contract) + [rhs_group]),
                        (incr(l_batch), list(r_batch))))
    if mode == _CONTRACTING:
        rhs_ragged = r_contract[list(l_contract).index(ragged)]
        r_prefix = _prefix_dims(mode, rhs_aval.ndim, rhs_ragged, r_batch, r_contract)
        return product(_expand(lhs, ragged, group_sizes, l_prefix),
                       _expand(rhs, rhs_ragged, group_sizes, r_prefix),
                       ((incr(l_contract), incr(r_contract)),
                        ([0] + incr(l_batch), [0] + incr(r_batch))))
    return product(lhs, rhs, dnums.dot_dimension_numbers)
