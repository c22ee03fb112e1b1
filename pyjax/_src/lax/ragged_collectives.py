"""ragged_all_to_all (ragged_all_to_all_p): the all_to_all of ragged data, each member
sending slices of its operand (offsets and sizes along the leading axis) to be written
into other members' outputs, with all its rules. Under vmap the batch rule moves the
slices between the batch's members with gathers and selects; XLA:CPU has no
ragged-all-to-all instruction (JAX cannot run it on CPU either), so it does not compile
under pmap/shard_map. Imports core, interpreters and the lax families."""
from __future__ import annotations

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import define_primitive, no_lowering, no_samples
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters.ad import Zero
from pyjax._src.lax import collective_exchange
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions
from pyjax._src.lax import slicing
from pyjax._src.lax import structural as st
from pyjax._src.lax.reshaping import index_take

_OFFSETS = ("input_offsets", "send_sizes", "output_offsets", "recv_sizes")


def _abstract_eval(operand, output, *offsets, axis_name, axis_index_groups):
    for what, aval in zip(_OFFSETS, offsets):
        if not dtypes.is_int(aval.dtype):
            raise ValueError(f"ragged_all_to_all {what} must be integer type.")
        if aval.ndim != 1 or aval.shape[0] < 1:
            raise ValueError(f"ragged_all_to_all {what} must be rank 1 with positive "
                             f"dimension size, but got shape {aval.shape}")
    if operand.shape[1:] != output.shape[1:] or operand.dtype != output.dtype:
        raise ValueError(f"ragged_all_to_all: operand {operand.str_short(True)} and output "
                         f"{output.str_short(True)} must agree in dtype and in every dimension "
                         "but the leading one.")
    return output.update(weak_type=False)


def _unbound_impl(*args, axis_name, **params):
    raise batching.unbound_axis_error(axis_name[0])


def _exchange(operand, output, input_offsets, output_offsets, recv_sizes, members):
    """The members' results, every argument with the members along dimension 0: member r
    receives, from each member s, its k-th slice for r (index r*per + k of s's offsets),
    written at s's output offset with r's recv size (later slices win, as in JAX's
    pseudocode)."""
    n = get_aval(input_offsets).shape[1]
    per, leftover = divmod(n, members)
    if leftover:
        raise ValueError(f"ragged_all_to_all: the {n} slices must divide evenly among the "
                         f"{members} members of the axis.")
    length, rest = get_aval(output).shape[1], get_aval(output).shape[2:]
    rows = get_aval(operand).shape[1]
    index_dtype = get_aval(input_offsets).dtype
    pos = st.broadcasted_iota(index_dtype, (members, length), 1)
    result = output
    def sent(offsets, s, k):   # s's offsets of its k-th slices: one per receiver
        picked = slicing.slice(offsets, (s, k), (s + 1, n), (1, per))
        return st.broadcast_in_dim(st.reshape(picked, (members,)), (members, length), (0,))
    for s in range(members):
        for k in range(per):
            start_src, start_dst = sent(input_offsets, s, k), sent(output_offsets, s, k)
            size = st.broadcast_in_dim(
                st.reshape(slicing.slice(recv_sizes, (0, s * per + k),
                                         (members, s * per + k + 1)), (members,)),
                (members, length), (0,))
            inside = ew.bitwise_and(ew.ge(pos, start_dst),
                                    ew.lt(pos, ew.add(start_dst, size)))
            if rows == 0:
                continue
            source = ew.clamp(np.zeros((), index_dtype),
                              ew.add(start_src, ew.sub(pos, start_dst)),
                              np.array(rows - 1, index_dtype))
            block = slicing.index_in_dim(operand, s, 0, keepdims=False)
            values = st.reshape(index_take(block, [st.reshape(source, (members * length,))],
                                           (0,)), (members, length) + rest)
            mask = st.broadcast_in_dim(inside, (members, length) + rest, (0, 1))
            result = ew.select(mask, values, result)
    return result


def _batch(axis, args, dims, *, axis_name, axis_index_groups):
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups)
    if axis.name not in axis_name:   # another vmap: one exchange per example
        size = axis.size
        outs = [st.expand_dims(ragged_all_to_all_p.bind(*[
            x if d is None else slicing.index_in_dim(x, i, d, keepdims=False)
            for x, d in zip(args, dims)], **params), (0,)) for i in range(size)]
        return st.concatenate(outs, 0), 0
    if axis_index_groups is not None or len(axis_name) != 1:
        raise NotImplementedError("ragged_all_to_all under vmap supports one axis name and "
                                  "no axis_index_groups.")
    operand, output, input_offsets, _, output_offsets, recv_sizes = (
        batching.bdim_at_front(x, d, axis.size) for x, d in zip(args, dims))
    return _exchange(operand, output, input_offsets, output_offsets, recv_sizes,
                     axis.size), 0


def _jvp(primals, tangents, **params):
    operand, output, *offsets = primals
    out = ragged_all_to_all_p.bind(*primals, **params)
    t_operand, t_output = tangents[:2]
    if type(t_operand) is Zero and type(t_output) is Zero:
        return out, Zero(ad.tangent_aval(get_aval(out)))
    return out, ragged_all_to_all_p.bind(ad.instantiate_zeros(t_operand),
                                         ad.instantiate_zeros(t_output), *offsets, **params)


def _transpose(ct, operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
               *, axis_name, axis_index_groups):
    """The exchange run backwards: each member sends back, from its cotangent, the regions
    it received (offsets swapped with its senders' by an all_to_all), into zeros shaped as
    the operand; the output's cotangent is the cotangent outside those regions."""
    ct_operand = ct_output = None
    if type(ct) is Zero:
        return [None] * 6
    received_at = collective_exchange.all_to_all(output_offsets, axis_name, 0, 0, tiled=True)
    if ad.is_undefined_primal(operand):
        aval = operand.aval
        sent_from = collective_exchange.all_to_all(input_offsets, axis_name, 0, 0, tiled=True)
        ct_operand = ragged_all_to_all_p.bind(
            ct, st.full(aval.shape, np.zeros((), aval.dtype)), received_at, recv_sizes,
            sent_from, send_sizes, axis_name=axis_name, axis_index_groups=axis_index_groups)
    if ad.is_undefined_primal(output):
        ct_aval = get_aval(ct)
        index_dtype = get_aval(received_at).dtype
        n = get_aval(received_at).shape[0]
        pos = st.broadcasted_iota(index_dtype, (ct_aval.shape[0], n), 0)
        start = st.broadcast_in_dim(received_at, (ct_aval.shape[0], n), (1,))
        end = st.broadcast_in_dim(ew.add(received_at, recv_sizes), (ct_aval.shape[0], n), (1,))
        overwritten = reductions.reduce_or(
            ew.bitwise_and(ew.ge(pos, start), ew.lt(pos, end)), (1,))
        mask = st.broadcast_in_dim(overwritten, ct_aval.shape, (0,))
        ct_output = ew.select(mask, st.full(ct_aval.shape, np.zeros((), ct_aval.dtype)), ct)
    return [ct_operand, ct_output, None, None, None, None]


ragged_all_to_all_p = define_primitive(
    "ragged_all_to_all", impl=_unbound_impl, abstract_eval=_abstract_eval, jvp=_jvp,
    transpose=_transpose, batch=_batch,
    lower=no_lowering("XLA:CPU has no ragged-all-to-all instruction (JAX fails there too); "
                      "it runs under vmap"),
    samples=no_samples("a collective runs only under a transformation binding its axis; "
                       "tests/lax/test_ragged_all_to_all.py checks it"),
    is_collective=True, batch_needs_axis=True)


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets,
                      recv_sizes, *, axis_name, axis_index_groups=None):
    """Each member of axis `axis_name` sends operand[input_offsets[i]:+send_sizes[i]]
    (along the leading axis) to member i // (len(input_offsets) // axis size), which
    writes it into its copy of `output` at output_offsets[i] (offsets in the receiver's
    output, as the sender gives them); recv_sizes are the sizes each member receives.
    Returns the updated output."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for name in names:
        batching.axis_env_size(name)   # NameError when nothing binds it
    groups = None if axis_index_groups is None else tuple(map(tuple, axis_index_groups))
    args = (operand, output, input_offsets, send_sizes, output_offsets, recv_sizes)
    _abstract_eval(*map(get_aval, args), axis_name=names, axis_index_groups=groups)
    return ragged_all_to_all_p.bind(operand, output, input_offsets, send_sizes,
                                    output_offsets, recv_sizes, axis_name=names,
                                    axis_index_groups=groups)


__all__ = ["ragged_all_to_all_p", "ragged_all_to_all"]
