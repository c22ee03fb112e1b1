"""jax.numpy's elementwise functions against JAX 0.10.2: result dtype, weak type and values
of the cases where an earlier sweep (every ufunc over Python, NumPy and array inputs of
each dtype) found pyjax differing. The expected values are JAX's, observed and written
here as literals."""
import math

import numpy as np
import pytest

import pyjax.numpy as jnp  # noqa: F401 (the cases are expressions over jnp)

NAN, INF = math.nan, math.inf
NANJ = complex(NAN, NAN)

# (expression, JAX's dtype, JAX's weak_type, JAX's value)
CASES = [
    ('jnp.deg2rad(3)', 'float32', True, 0.052359879),
    ('jnp.rad2deg(3)', 'float32', True, 171.88734),
    ('jnp.reciprocal(4)', 'float32', True, 0.25),
    ('jnp.sinc(0.5)', 'float32', True, 0.63661975),
    ('jnp.i0(3)', 'float32', True, 4.8807926),
    ('jnp.logical_not(1)', 'bool', True, False),
    ('jnp.isreal(1)', 'bool', True, True),
    ('jnp.iscomplex(1.0)', 'bool', True, False),
    ('jnp.isfinite(1)', 'bool', False, True),
    ('jnp.isinf(1)', 'bool', False, False),
    ('jnp.isposinf(0.5)', 'bool', False, False),
    ('jnp.angle(1 + 2j)', 'float32', True, 1.1071488),
    ('jnp.angle(jnp.float16(-1))', 'float32', False, 3.1415927),
    ('jnp.logical_and(True, 3)', 'bool', True, True),
    ('jnp.floor_divide(True, 3)', 'int32', True, 0),
    ('jnp.floor_divide(-7, jnp.array([True, True]))', 'int32', True, [-7, -7]),
    ('jnp.remainder(True, -2)', 'int32', True, -1),
    ('jnp.fmod(-7, 2)', 'int32', True, -1),
    ('jnp.hypot(3, 4)', 'float32', True, 5.0),
    ('jnp.heaviside(3, jnp.array([True, False]))', 'float32', True, [1.0, 1.0]),
    ('jnp.logaddexp2(1, 3)', 'float32', True, 3.321928),
    ('jnp.gcd(3, jnp.array([True, False]))', 'int32', False, [1, 3]),
    ('jnp.spacing(jnp.float16(-1.5))', 'float16', False, 0.0009765625),
    # special values
    ('jnp.frexp(jnp.array([6e4, -1.5, 0.0], jnp.float16))[0]', 'float16', False,
     [0.91552734, -0.75, 0.0]),
    ('jnp.frexp(jnp.array([6e4, -1.5, 0.0], jnp.float16))[1]', 'int32', False, [16, 1, 0]),
    ('jnp.frexp(jnp.float32(3e38))[1]', 'int32', False, 128),
    ('jnp.floor_divide(-7, jnp.array([np.inf, -np.inf, -2.5, 0.0], jnp.float32))',
     'float32', False, [-1.0, -0.0, 2.0, -INF]),
    ('jnp.divmod(-7.0, jnp.float32(np.inf))[0]', 'float32', False, -1.0),
    ('jnp.heaviside(jnp.array([np.nan, -1.0, 0.0, 2.0], jnp.float32), 0.5)',
     'float32', False, [NAN, 0.0, 0.5, 1.0]),
    ('jnp.heaviside(-7, np.nan)', 'float32', True, 0.0),
    ('jnp.hypot(np.nan, -np.inf)', 'float32', True, INF),
    ('jnp.hypot(jnp.array([np.nan, 1.0], jnp.float16), np.inf)', 'float16', False, [INF, INF]),
    ('jnp.ldexp(jnp.array([0.0, -np.inf, 1.0], jnp.float32), jnp.array([2**31 - 1, -2**31, 3]))',
     'float32', False, [0.0, -INF, 8.0]),
    ('jnp.power(True, True)', 'int32', False, 1),
    ('jnp.power(jnp.array([True, False]), jnp.array([True, True]))', 'int32', False, [1, 0]),
    ('jnp.floor_divide(jnp.array([True, False]), jnp.array([True, True]))', 'int32', False, [1, 0]),
    ('jnp.remainder(jnp.array([True, False]), jnp.array([True, True]))', 'int32', False, [0, 0]),
    ('jnp.fmod(True, jnp.array([True, False]))', 'int32', False, [0, 1]),
    ('jnp.fmod(3, jnp.array([True, False]))', 'int32', True, [0, 0]),
    ('jnp.left_shift(jnp.array([True, False]), jnp.array([True, True]))', 'int32', False, [2, 0]),
    ('jnp.right_shift(True, True)', 'int32', False, 0),
    ('jnp.divmod(True, True)[0]', 'int32', False, 1),
    ('jnp.power(3, jnp.array([-3, 0, 2, 5], jnp.int32))', 'int32', False, [-1197088493, 1, 9, 243]),
    ('jnp.power(jnp.int8(2), jnp.int32(3))', 'int8', False, 8),
    ('jnp.power(jnp.uint8(2), jnp.int8(2))', 'uint8', False, 4),
    ('jnp.power(3, jnp.int8(2))', 'int32', True, 9),
    ('jnp.power(0.5, jnp.array([-3, 0, 2, 5], jnp.int8))',
     'float32', False, [8.0, 1.0, 0.25, 0.03125]),
    ('jnp.power(jnp.array([True, False]), 1 + 2j)', 'complex64', True, [(1+0j), NANJ]),
    ('jnp.float_power(jnp.array([1, 0], jnp.int8), jnp.array([2 - 1j, 2 - 1j], jnp.complex64))',
     'complex64', False, [(1+0j), NANJ]),
    ('jnp.arctan2(1.0 + 0j, 2.0)', 'complex64', True, (0.4636476+0j)),
    ('jnp.arctan2(-1 + 1j, -2 - 1j)', 'complex64', True, (-2.8475914-0.64123732j)),
    ('jnp.arctan2(0j, -1 + 0j)', 'complex64', True, (3.1415927+0j)),
    ('jnp.logaddexp(1 + 1j, 2 - 3j)', 'complex64', True, (1.7879903+2.9318392j)),
    ('jnp.logaddexp(-1 + 4j, 0j)', 'complex64', True, (-0.21200971-0.35134602j)),
    ('jnp.logaddexp2(1 + 1j, jnp.complex64(2 - 3j))', 'complex64', False, (1.171989-2.5298405j)),
    ('jnp.log10(jnp.array([0, 10j], jnp.complex64))',
     'complex64', False, [complex(-INF, 0), (1+0.68218821j)]),
    ('jnp.atan2(-2, jnp.uint8(2))', 'float32', False, 1.5629225),
    ('jnp.clip(jnp.array([0, 1, 5, 200], jnp.uint8), -1, 2)', 'uint8', False, [2, 2, 2, 2]),
    ('jnp.clip(jnp.array([0, 1, 5, 200], jnp.uint8), -1, 300)', 'uint8', False, [44, 44, 44, 44]),
    ('jnp.add(jnp.uint8(1), -2)', 'uint8', False, 255),
    ('jnp.add(jnp.array([1, 2], jnp.uint8), 300)', 'uint8', False, [45, 46]),
    ('jnp.floor_divide(-2, jnp.uint8(2))', 'uint8', False, 127),
]

# Where JAX departs from "weak in, weak out" or from the plain promotion: these passed
# before, and guard against fixes of the cases above that reach too far.
CASES += [
    ('jnp.log2(8)', 'float32', False, 3.0),
    ('jnp.log10(100.0)', 'float32', False, 2.0),
    ('jnp.isfinite(1.0)', 'bool', True, True),
    ('jnp.isnan(1)', 'bool', True, False),
    ('jnp.isinf(1.0)', 'bool', False, False),
    ('jnp.signbit(-1.0)', 'bool', False, True),
    ('jnp.angle(1.0)', 'float32', False, 0.0),
    ('jnp.logical_or(1, jnp.int8(0))', 'bool', False, True),
    ('jnp.heaviside(jnp.array([True, False]), 3)', 'float32', False, [1.0, 3.0]),
    ('jnp.logaddexp2(3, jnp.array([True, False]))', 'float32', False, [3.321928, 3.169925]),
    ('jnp.power(jnp.array([-3, 0, 2, 5], jnp.int8), jnp.array([0, 1, 2, 7], jnp.uint8))',
     'int16', False, [1, 0, 4, 12589]),
    ('jnp.arctan2(-2, jnp.uint8(2))', 'float32', False, -0.78539819),
    ('jnp.gcd(3, 4)', 'int32', True, 1),
    # |x1| * (|x2| // gcd): past int8's range it wraps, the sign included
    ('jnp.lcm(jnp.array([90, 127, -3, -7], jnp.int8), jnp.array([-4, 2, -127, 6], jnp.int8))',
     'int8', False, [-76, -2, 125, 42]),
    ('jnp.spacing(jnp.float32(-1.5))', 'float32', False, -1.1920929e-07),
]

# (expression, JAX's exception type, a word of pyjax's message)
ERRORS = [
    ('jnp.hypot(1j, 2.0)', ValueError, 'hypot'),
    ('jnp.floor_divide(1j, 2.0)', TypeError, 'floor_divide'),
    ('jnp.heaviside(1j, 0.5)', TypeError, 'heaviside'),
    ('jnp.copysign(1j, 1.0)', TypeError, 'copysign'),
    ('jnp.signbit(1j)', ValueError, 'signbit'),
    ('jnp.spacing(1j)', ValueError, 'spacing'),
    ('jnp.round(True)', ValueError, 'boolean'),
    ('jnp.round(jnp.array([True]))', ValueError, 'boolean'),
    ('jnp.ldexp(1.0, 2.5)', ValueError, 'ldexp'),
    ('jnp.ldexp(1j, 2)', ValueError, 'ldexp'),
    ('jnp.power(2, -1)', TypeError, 'negative powers'),
    ('jnp.power(jnp.array([2, 3]), -2)', TypeError, 'negative powers'),
]

# Python ints must fit the default integer type (they then wrap into narrower ones).
ERRORS += [
    ('jnp.add(jnp.int8(1), 2**31)', OverflowError, 'out of bounds'),
    ('jnp.add(jnp.int32(1), 2**40)', OverflowError, 'out of bounds'),
]


@pytest.mark.parametrize("expr,dtype,weak,value", CASES, ids=[c[0] for c in CASES])
def test_matches_jax(expr, dtype, weak, value):
    out = eval(expr)
    assert (str(out.dtype), out.aval.weak_type) == (dtype, weak)
    np.testing.assert_allclose(np.asarray(out).astype(np.complex128), value, rtol=1e-5,
                               atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("expr,exc,words", ERRORS, ids=[c[0] for c in ERRORS])
def test_raises_as_jax(expr, exc, words):
    with pytest.raises(exc, match=words):
        eval(expr)
