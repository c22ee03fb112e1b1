"""The uniform rule harness, batching part: for every registered primitive and sample,
vmap of the primitive equals a Python loop that stacks per-example results, for every
subset of mapped operands, batch axes in front / last / negative, and batch sizes 0, 1
and 3; the batched jaxpr type-checks. Collectives are checked against NumPy over the
batch; every primitive has a batch rule or a declared absence."""
import itertools

import numpy as np
import pytest

import pyjax
from harness import assert_close, bind_as_list, rule_gaps, sample_cases
from pyjax._src.core.avals import get_aval
from pyjax._src.core.jaxpr import check_jaxpr
from pyjax._src.lax import collective_exchange, parallel

CASES = sample_cases()
# Primitives whose vmap rule JAX defines other than as a loop (the value is the reason);
# their behaviour tests check that rule.
NOT_A_LOOP = {"rng_bit_generator": "JAX draws every example's bits from the first key, in "
                                   "one draw, and advances only that key"}
# (batch size, where each mapped operand carries the batch)
LAYOUTS = [(3, "front"), (3, "last"), (3, "negative"), (1, "negative"), (0, "front")]


def _example(x, b):
    """The b-th example of an operand: its values rolled by b (so domains and index
    ranges stay valid); scalars are nudged by -1, 0 or +1 (flipped for bools)."""
    x = np.asarray(x, get_aval(x).dtype)
    if x.ndim:
        return np.roll(x.reshape(-1), b).reshape(x.shape)
    if x.dtype == np.bool_:
        return np.asarray(x ^ bool(b % 2))
    if x.dtype.kind == "u":
        return np.asarray(int(x) + b % 2, x.dtype)
    return np.asarray(x + (b % 3) - 1, x.dtype)


def _in_axis(x, layout, position):
    ndim = np.ndim(x)   # of one example; the stacked operand has ndim + 1 dims
    if layout == "front":
        return 0
    if layout == "last":
        return ndim
    return -1 if position % 2 == 0 else -(ndim + 1)


def _expected(prim, sample, mapped, size):
    """The loop: one eager call per example, results stacked on a new leading axis."""
    f = bind_as_list(prim, sample.params)
    per_example = [f(*[_example(x, b) if i in mapped else x
                       for i, x in enumerate(sample.args)]) for b in range(size)]
    avals = prim.abstract_eval(*[get_aval(x) for x in sample.args], **sample.params)
    avals = avals if prim.multiple_results else [avals]
    return [np.stack([np.asarray(outs[k]) for outs in per_example]) if size else
            np.zeros((0,) + a.shape, a.dtype) for k, a in enumerate(avals)]


def _batched_args(sample, mapped, size, layout):
    args, in_axes = [], []
    for i, x in enumerate(sample.args):
        if i not in mapped:
            args.append(x)
            in_axes.append(None)
            continue
        axis = _in_axis(x, layout, i)
        examples = [_example(x, b) for b in range(size)]
        stacked = np.stack(examples) if size else \
            np.zeros((0,) + np.shape(x), get_aval(x).dtype)
        args.append(np.moveaxis(stacked, 0, axis))
        in_axes.append(axis)
    return args, tuple(in_axes)


@pytest.mark.parametrize("prim,sample", CASES)
def test_vmap_equals_loop(prim, sample):
    if not callable(prim.batch):
        pytest.skip(f"{prim.name} declares {prim.batch!r}")
    if prim.name in NOT_A_LOOP:
        pytest.skip(NOT_A_LOOP[prim.name])
    n = len(sample.args)
    f = bind_as_list(prim, sample.params)
    subsets = [set(s) for k in range(1, n + 1) for s in itertools.combinations(range(n), k)]
    for mapped, (size, layout) in itertools.product(subsets, LAYOUTS):
        args, in_axes = _batched_args(sample, mapped, size, layout)
        actual = pyjax.vmap(f, in_axes=in_axes)(*args)
        expected = _expected(prim, sample, mapped, size)
        for a, e in zip(actual, expected):
            assert a.dtype == e.dtype, (mapped, layout, size, a.dtype, e.dtype)
            assert_close(a, e)
    # Nothing mapped: the size comes from axis_size and every result is broadcast.
    actual = pyjax.vmap(f, in_axes=(None,) * n, axis_size=2)(*sample.args)
    for a, e in zip(actual, _expected(prim, sample, set(), 2)):
        assert_close(a, e)


@pytest.mark.parametrize("prim,sample", CASES)
def test_batched_jaxpr_type_checks(prim, sample):
    if not callable(prim.batch):
        pytest.skip(f"{prim.name} declares {prim.batch!r}")
    n = len(sample.args)
    args, in_axes = _batched_args(sample, set(range(n)), 3, "negative")
    batched = pyjax.vmap(bind_as_list(prim, sample.params), in_axes=in_axes, axis_size=3)
    closed = pyjax.make_jaxpr(batched)(*args)
    check_jaxpr(closed.jaxpr)


# --- collectives: one member per batch element ------------------------------------------

def _collective_reference(name, stacked):
    """What every member gets, from the stacked members' values (batch at 0)."""
    size = stacked.shape[0]
    if name == "axis_index":
        return np.arange(size, dtype=np.int32)
    if name == "all_gather":
        return np.broadcast_to(stacked, (size,) + stacked.shape)
    if size == 0:
        return stacked
    total = {"psum": np.sum, "pmax": np.max, "pmin": np.min}[name](stacked, axis=0)
    return np.broadcast_to(total, stacked.shape)


_COLLECTIVES = {"psum": pyjax.lax.psum, "pmax": pyjax.lax.pmax, "pmin": pyjax.lax.pmin,
                "all_gather": pyjax.lax.all_gather,
                "axis_index": lambda x, name: pyjax.lax.axis_index(name)}


@pytest.mark.parametrize("name", sorted(_COLLECTIVES))
@pytest.mark.parametrize("size,layout", LAYOUTS)
def test_collective_over_vmap_axis(name, size, layout):
    x = np.arange(size * 6, dtype=np.float32).reshape(size, 2, 3) % 5
    axis = _in_axis(x[0] if size else np.zeros((2, 3)), layout, 0)
    f = pyjax.vmap(lambda v: _COLLECTIVES[name](v, "i"), in_axes=axis, axis_name="i")
    assert_close(f(np.moveaxis(x, 0, axis)), _collective_reference(name, x))


@pytest.mark.parametrize("name", ["psum", "pmax", "pmin", "all_gather"])
def test_collective_of_unmapped_value(name):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = pyjax.vmap(lambda v: _COLLECTIVES[name](x, "i"), axis_name="i")
    assert_close(f(np.zeros(4, np.float32)),
                 _collective_reference(name, np.broadcast_to(x, (4, 2, 3))))


def test_every_primitive_has_a_batch_rule_or_a_declared_absence():
    gaps = rule_gaps("batch")
    assert not gaps, "\n".join(gaps)
    # Collectives cannot run eagerly (no samples): the tests above cover each of them.
    covered = (*parallel.collective_primitives, collective_exchange.all_gather_p)
    assert {p.name for p in covered} == set(_COLLECTIVES)
