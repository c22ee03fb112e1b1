"""The uniform harness on XLA: every primitive sample runs eagerly (NumPy impl) and under
jit compiled by XLA, and the two agree to the dtype's tolerance. Every registered
primitive has a lowering or declares that it has none."""
from __future__ import annotations

import numpy as np
import pytest

from harness import assert_close, primitives_with_samples, rule_gaps

import pyjax as jax
from pyjax._src import config

pytest.importorskip("jaxlib")

_CASES = [(p, s) for p, s in primitives_with_samples() if s and p.lower]


def test_every_primitive_has_a_lowering_or_declares_none():
    gaps = rule_gaps("lower")
    assert not gaps, "\n".join(gaps) + "\n(or declare lower=NO_LOWERING)"


@pytest.mark.parametrize("prim,samples", _CASES, ids=[p.name for p, _ in _CASES])
def test_eager_numpy_matches_jit_on_xla(prim, samples):
    """All samples of a primitive in one jitted function (one XLA compile)."""
    def run_all(*flat):
        it = iter(flat)
        return [prim.bind(*[next(it) for _ in s.args], **s.params) for s in samples]

    flat = [a for s in samples for a in s.args]
    with config.executor("xla"):
        compiled = jax.jit(run_all)(*flat)
    for i, (sample, got) in enumerate(zip(samples, compiled)):
        expected = prim.bind(*sample.args, **sample.params)
        got = got if prim.multiple_results else [got]
        expected = expected if prim.multiple_results else [expected]
        assert len(got) == len(expected), f"sample {i} {sample}"
        for g, e in zip(got, expected):
            g, e = np.asarray(g), np.asarray(e)
            assert g.dtype == e.dtype, f"sample {i} {sample}: {g.dtype} vs {e.dtype}"
            try:
                assert_close(g, e)
            except AssertionError as err:
                raise AssertionError(f"{prim.name} sample {i} {sample}: {err}") from None
