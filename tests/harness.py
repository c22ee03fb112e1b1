"""The uniform rule harness's shared pieces: every registered primitive with its samples,
and tolerances per dtype. Each rule family (core, autodiff, batching, XLA) has a test file
that iterates these."""
from __future__ import annotations

import numpy as np

import pyjax  # noqa: F401  (registers every primitive family)
from pyjax._src.core.trace import _Declared, registered_primitives


def primitives_with_samples():
    """(primitive, samples) for every registered primitive, sorted by name. A primitive
    whose samples need tracing (higher-order ones) gives a callable that builds them."""
    return [(p, [] if isinstance(p.samples, _Declared) else
             list(p.samples() if callable(p.samples) else p.samples))
            for _, p in sorted(registered_primitives().items())]


def sample_cases():
    """pytest params: one (primitive, sample) per sample, with a readable id."""
    import pytest
    cases = []
    for prim, samples in primitives_with_samples():
        for i, sample in enumerate(samples):
            cases.append(pytest.param(prim, sample, id=f"{prim.name}-{i}"))
    return cases


def tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "biu" or dtype.kind == "V":
        return 0, 0
    if dtype.itemsize <= 2:
        return 1e-2, 1e-2
    if dtype in (np.float32, np.complex64):
        return 1e-5, 1e-5
    return 1e-12, 1e-12


def assert_close(actual, expected, dtype=None, factor=1.0):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    rtol, atol = tolerance(dtype or expected.dtype)
    np.testing.assert_allclose(actual.astype(np.float64) if actual.dtype.kind != "c"
                               else actual, expected.astype(np.float64)
                               if expected.dtype.kind != "c" else expected,
                               rtol=rtol * factor, atol=atol * factor, equal_nan=True)
