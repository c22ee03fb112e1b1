"""Reliability, the limits a user can hit: arrays too big for XLA, deep and wide pytrees.
JAX 0.10.2's behaviour is in each docstring (recorded by running the same program)."""
import time

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


def test_result_too_big_for_xla_is_a_value_error_before_compiling():
    """JAX 0.10.2 aborts the process (overflow in static extent product); pyjax raises."""
    with pytest.raises(ValueError, match=r"shape \(2147483648, 2147483648\) and dtype "
                                         r"float32: 18446744073709551616 bytes"):
        jax.jit(lambda: jnp.zeros((2**31, 2**31)))()
    with pytest.raises(ValueError, match="more than XLA can address"):
        jax.jit(lambda a: jnp.broadcast_to(a, (2**31, 2**31)).sum())(1.0)


def test_eager_result_too_big_is_a_value_error():
    """JAX 0.10.2 aborts the process eagerly too; pyjax raises NumPy's ValueError."""
    with pytest.raises(ValueError, match="too big"):
        jnp.zeros((2**31, 2**31))


def test_list_nested_900_deep_runs_under_jit():
    """JAX 0.10.2 runs 500 and 900 deep; at 1500 it raises SystemError, pyjax a
    RecursionError that says where."""
    for depth in (500, 900):
        tree = 1.0
        for _ in range(depth):
            tree = [tree]
        f = jax.jit(lambda t: t)
        f(tree)
        assert jax.tree_util.tree_leaves(f(tree)) == [1.0]   # the fast path's call too
    tree = 1.0
    for _ in range(1500):
        tree = [tree]
    with pytest.raises(RecursionError, match="flattening the tree"):
        jax.jit(lambda t: t)(tree)


def _cpu_seconds(fn, repeat=2):
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _trace_and_lower(n):
    tree = {f"w{i}": np.float32(i) for i in range(n)}
    f = jax.jit(lambda t: jax.tree_util.tree_map(lambda a: a * 2, t))
    return lambda: f.lower(tree).as_text()


def _tree_round_trip(n):
    tree = [{"a": np.float32(i), "b": (i, [i])} for i in range(n // 3)]

    def run():
        leaves, treedef = jax.tree_util.tree_flatten(tree)
        jax.tree_util.tree_unflatten(treedef, leaves)
        jax.tree_util.tree_map(lambda a: a, tree)
        jax.tree_util.tree_flatten_with_path(tree)
    return run


@pytest.mark.parametrize("workload", [_trace_and_lower, _tree_round_trip])
def test_big_pytrees_scale_linearly(workload):
    """10x the leaves must cost well under 100x (quadratic) the time: pyjax's own work
    (flatten, trace, lower) is linear. XLA's compile of N parameters is itself about
    quadratic (1.6 s, 5.1 s, 20.8 s for 2k, 4k, 8k leaves here; JAX 0.10.2 the same),
    which is why 100k leaves never finish compiling in either."""
    small, big = workload(2_000), workload(20_000)
    small()   # warm caches and imports
    ratio = _cpu_seconds(big) / max(_cpu_seconds(small), 1e-3)
    assert ratio < 35, ratio
