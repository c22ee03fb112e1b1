"""The uniform rule harness, Taylor-mode part: for every primitive with a jet rule and
each sample with floating-point operands, the series jax.experimental.jet gives (third
order, in float64) against the Taylor coefficients computed the slow way, by nested
forward-mode derivatives of the primitive along the input series (as JAX's jet_test)."""
import math

import numpy as np
import pytest

import pyjax
from harness import sample_cases
from pyjax._src import dtypes
from pyjax._src.core.avals import get_aval
from pyjax.experimental.jet import jet

CASES = [case for case in sample_cases() if case.values[0].jet is not None]
ORDER = 3

# Primitives whose slow-way reference cannot be computed (the value is the reason).
NO_REFERENCE = {"custom_vjp_call": "forward mode of a custom_vjp function is an error, "
                                   "as in JAX (jet takes the function's body)",
                "reduce_precision": "rounding is not linear: its series rounds each "
                                    "coefficient (the linear rule its JVP declares)"}
# Rules that compare their operands, so take real ones only, as JAX's jet rules.
REAL_ONLY = {"abs", "max", "min"}
# Order-based primitives: at tied values the series is one-sided (as the JVP).
ORDER_BASED = {"max", "min", "reduce_max", "reduce_min", "cummax", "cummin", "clamp"}
# Operands whose series are not taken (integer-valued in effect).
NONDIFF_OPERANDS = {"rem": {1}}


def _widen(x):
    x = np.asarray(x)
    return x.astype({np.dtype(np.float32): np.float64,
                     np.dtype(np.complex64): np.complex128}.get(x.dtype, x.dtype))


def _taylor_reference(f, args, series):
    """f's output series along the inputs' (factorial-scaled terms): the derivatives at
    0 of eps -> f(x + sum_k eps^k t_k / k!)."""
    def along(eps):
        return f(*[x + sum(eps ** (k + 1) * t / math.factorial(k + 1)
                           for k, t in enumerate(terms))
                   for x, terms in zip(args, series)])

    derivative, out = along, []
    for _ in range(ORDER):
        derivative = pyjax.jacfwd(derivative)
        out.append(derivative(0.))
    return out


@pytest.mark.parametrize("prim,sample", CASES)
def test_jet_matches_nested_derivatives(prim, sample):
    if prim.name in NO_REFERENCE:
        pytest.skip(NO_REFERENCE[prim.name])
    with pyjax.enable_x64(True):
        args = [np.asarray(a) if prim.is_higher_order else _widen(a) for a in sample.args]
        skip = NONDIFF_OPERANDS.get(prim.name, set())
        positions = [i for i, a in enumerate(args)
                     if dtypes.is_inexact(a.dtype) and i not in skip]
        if not positions:
            pytest.skip("no floating-point operand")
        if prim.name in REAL_ONLY and any(dtypes.is_complex(args[i].dtype) for i in positions):
            pytest.skip("complex operands: JAX's jet rule compares its operands")
        if prim.name in ORDER_BASED:
            values = np.concatenate([np.ravel(args[i]) for i in positions])
            if len(np.unique(values)) < len(values):
                pytest.skip("tied values: the series is one-sided there")

        def f(*diff_args):
            full = list(args)
            for i, x in zip(positions, diff_args):
                full[i] = x
            out = prim.bind(*full, **sample.params)
            return list(out) if prim.multiple_results else out

        rng = np.random.RandomState(0)
        primals = [args[i] for i in positions]
        series = [[rng.uniform(-1, 1, np.shape(x)).astype(x.dtype) for _ in range(ORDER)]
                  for x in primals]
        out, terms = jet(f, primals, series)
        expected = _taylor_reference(f, primals, series)
        outs = out if prim.multiple_results else [out]
        terms = terms if prim.multiple_results else [terms]
        for k in range(ORDER):
            wanted = expected[k] if prim.multiple_results else [expected[k]]
            for o, got, want in zip(outs, terms, wanted):
                if not dtypes.is_inexact(get_aval(o).dtype):
                    continue   # integer/bool outputs: their series are zeros, as JAX's
                tol = 1e-7 if np.asarray(want).dtype in (np.float64, np.complex128) else 2e-3
                np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want),
                                           rtol=tol, atol=tol, equal_nan=True)


def test_linear_and_piecewise_constant_primitives_have_jet_rules():
    """ad.linear_jvp and ad.zero_jvp declare the jet rule of what they define."""
    from pyjax._src.core.trace import registered_primitives
    prims = registered_primitives()
    assert prims["reshape"].jet is not None and prims["floor"].jet is not None
    assert prims["while"].jet is None
