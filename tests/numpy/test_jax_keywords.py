"""Keyword arguments and behaviours of jax.numpy and jax.scipy functions that JAX 0.10.2
has (weighted quantiles, var(mean=), take_along_axis(mode="one_hot",
wrap_negative_indices=), .at[](wrap_negative_indices=), argsort(dtype=), ...) and traced
arguments JAX takes (roll's shifts, delete's unique indices, insert's index, place's
mask, unravel_index's shape), checked against JAX's own results, recorded here as
literals (dtype, values)."""
import math

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
import pyjax.scipy.special  # noqa: F401  (the cases name jax.scipy.special)
import pyjax.scipy.stats  # noqa: F401

nan, inf = math.nan, math.inf

X = np.array([[0.3, -1.2, 2.5, 0.7, -0.1], [1.1, np.nan, 0.4, -2.0, 0.9],
              [0.0, 0.5, -0.5, 1.5, 3.0]], np.float32)
W = np.array([[0.2, 1.0, 0.5, 2.0, 0.1], [1.0, 1.0, 0.3, 0.7, 0.2],
              [0.4, 0.4, 1.5, 0.1, 0.9]], np.float32)
Q = np.array([0.0, 0.25, 0.5, 0.9, 1.0], np.float32)

# name: (expression, JAX's (dtype, values)); a tuple result gives a tuple of them
CASES = {
    'quantile_weighted':
        ("jnp.quantile(X, Q, axis=1, method='inverted_cdf', weights=W)",
         ('float32',
          [[-1.2, nan, -0.5],
           [-1.2, nan, -0.5],
           [0.7, nan, 0.0],
           [2.5, nan, 3.0],
           [2.5, nan, 3.0]])),
    'nanquantile_weighted':
        ("jnp.nanquantile(X, Q, axis=1, method='inverted_cdf', weights=W)",
         ('float32',
          [[-1.2, -2.0, -0.5],
           [-1.2, -2.0, -0.5],
           [0.7, 0.9, 0.0],
           [2.5, 1.1, 3.0],
           [2.5, 1.1, 3.0]])),
    'percentile_weighted_axis_weights':
        ("jnp.percentile(X[[0, 2]], 40, axis=1, method='inverted_cdf', weights=W[0], "
         'keepdims=True)',
         ('float32', [[0.7], [0.5]])),
    'quantile_inverted_cdf_unweighted':
        ("jnp.quantile(X[[0, 2]], Q, axis=0, method='inverted_cdf')",
         ('float32',
          [[0.0, -1.2, -0.5, 0.7, -0.1],
           [0.0, -1.2, -0.5, 0.7, -0.1],
           [0.0, -1.2, -0.5, 0.7, -0.1],
           [0.3, 0.5, 2.5, 1.5, 3.0],
           [0.3, 0.5, 2.5, 1.5, 3.0]])),
    'quantile_nearest_halfway':
        ("jnp.quantile(jnp.arange(4.0), jnp.array([0.5, 1 / 6]), method='nearest')",
         ('float32', [1.0, 0.0])),
    'var_mean':
        ('jnp.var(X[[0, 2]], axis=1, mean=X[[0, 2]].mean(1, keepdims=True) + 1)',
         ('float32', [2.4624002, 2.54])),
    'std_mean':
        ('jnp.std(X[[0, 2]], axis=0, mean=0.5)',
         ('float32', [0.38078865, 1.2020816, 1.5811388, 0.7211102, 1.8179659])),
    'nanvar_mean':
        ('jnp.nanvar(X, axis=1, mean=jnp.zeros((3, 1)))', ('float32', [1.6560001, 1.545, 2.35])),
    'take_along_axis_one_hot':
        ('jnp.take_along_axis(jnp.arange(12.).reshape(3, 4), jnp.array([[0, -1], [5, 2], [1, '
         "-5]]), axis=1, mode='one_hot')",
         ('float32', [[0.0, 3.0], [0.0, 6.0], [9.0, 0.0]])),
    'take_along_axis_no_wrap':
        ("jnp.take_along_axis(jnp.arange(5.), jnp.array([-1, 2, 6]), mode='fill', "
         'wrap_negative_indices=False)',
         ('float32', [nan, 2.0, nan])),
    'take_along_axis_int8_wrap':
        ('jnp.take_along_axis(jnp.arange(200.), jnp.array([-1, -100, 3], jnp.int8), axis=0)',
         ('float32', [199.0, 100.0, 3.0])),
    'at_get_no_wrap':
        ("jnp.arange(5.).at[jnp.array([-1, 2])].get(mode='fill', wrap_negative_indices=False)",
         ('float32', [nan, 2.0])),
    'at_set_no_wrap':
        ('jnp.arange(5.).at[jnp.array([-1, 2])].set(9., wrap_negative_indices=False)',
         ('float32', [0.0, 1.0, 9.0, 3.0, 4.0])),
    'argsort_dtype':
        ('jnp.argsort(jnp.array([3., 1., 2.]), dtype=jnp.int16)', ('int16', [1.0, 2.0, 0.0])),
    'ravel_multi_index_dtype':
        ('jnp.ravel_multi_index((jnp.array([0, 1], jnp.int8), jnp.array([2, 1], jnp.int8)), '
         "(2, 3), mode='ignore')",
         ('int8', [2.0, 4.0])),
    'trim_zeros_axis':
        ('jnp.trim_zeros(jnp.array([[0, 0, 0], [0, 1, 0], [0, 2, 3], [0, 0, 0]]), axis=0)',
         ('int32', [[0.0, 1.0, 0.0], [0.0, 2.0, 3.0]])),
    'trim_zeros_all_axes_front':
        ("jnp.trim_zeros(jnp.array([[0, 0, 0], [0, 1, 0], [0, 2, 3], [0, 0, 0]]), 'f')",
         ('int32', [[1.0, 0.0], [2.0, 3.0], [0.0, 0.0]])),
    'cov_dtype':
        ('jnp.cov(X[[0, 2]], dtype=jnp.bfloat16)',
         ('bfloat16', [[1.828125, -0.76953125], [-0.76953125, 1.9140625]])),
    'corrcoef_one_row':
        ('jnp.corrcoef(X[:1, :3], rowvar=False)',
         ('float32', [[nan, nan, nan], [nan, nan, nan], [nan, nan, nan]])),
    'corrcoef_complex':
        ('jnp.corrcoef(X[[0, 2]] + 1j * X[[2, 0]])',
         ('complex64',
          [[(0.99999994+0j), (-0.41033837+0.02584599j)],
           [(-0.41033837-0.02584599j), (0.99999994+0j)]])),
    'special_softmax_all_axes':
        ('jax.scipy.special.softmax(jnp.arange(6.).reshape(2, 3))',
         ('float32',
          [[0.0042697783, 0.011606461, 0.031549633], [0.085760795, 0.233122, 0.6336913]])),
    'special_log_softmax_axis':
        ('jax.scipy.special.log_softmax(jnp.arange(6.).reshape(2, 3), axis=0)',
         ('float32',
          [[-3.0485873, -3.0485873, -3.0485873], [-0.04858733, -0.04858733, -0.04858733]])),
    'comb_repetition':
        ('jax.scipy.special.comb(jnp.array([5., 0., 3.]), jnp.array([2., 0., 4.]), '
         'repetition=True)',
         ('float32', [15.000008, 1.0, 15.000005])),
    'comb_out_of_range':
        ('jax.scipy.special.comb(jnp.array([5., -1., 3.]), jnp.array([2., 0., 4.]))',
         ('float32', [9.999995, 0.0, 0.0])),
    'bernoulli_cdf_invalid':
        ('jax.scipy.stats.bernoulli.cdf(jnp.array([-1., 0.5, 2., np.nan]), jnp.array([0.3, '
         '0.3, 1.5, 0.3]))',
         ('float32', [0.0, 0.7, nan, nan])),
    'byteswap_int16':
        ('jnp.arange(3, dtype=jnp.int16).byteswap()', ('int16', [0.0, 256.0, 512.0])),
    'byteswap_complex64':
        ('jnp.array([1 + 2j], jnp.complex64).byteswap()', ('complex64', [(4.6006e-41+9e-44j)])),
    'arange_float_step':
        ('jnp.arange(0., 1., 0.1)',
         ('float32', [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.90000004])),
    'arange_bfloat16':
        ('jnp.arange(1, 7, 2, dtype=jnp.bfloat16)', ('bfloat16', [1.0, 3.0, 5.0])),
    'ldexp_extreme':
        ('jnp.ldexp(jnp.array([jnp.finfo(jnp.float32).tiny, jnp.finfo(jnp.float32).max]), '
         'jnp.array([252, -252]))',
         ('float32', [8.507059e+37, 4.701977e-38])),
    'ldexp_overflow_by_one':
        ('jnp.ldexp(jnp.float32(0.5), 128)', ('float32', 1.7014118e+38)),
    'frexp':
        ('jnp.frexp(jnp.array([0., 1.5, -3.25, jnp.inf, 1e-3], jnp.float32))',
         (('float32', [0.0, 0.75, -0.8125, inf, 0.512]), ('int32', [0.0, 1.0, 2.0, 0.0, -9.0]))),
    'geomspace_negative_axis1':
        ('jnp.geomspace(jnp.array([-2., 1.]), jnp.array([-8., 100.]), 3, axis=1)',
         ('float32', [[-2.0, -4.0000005, -8.0], [1.0, 10.0, 100.0]])),
    'polyint_m0_empty_k':
        ('jnp.polyint(jnp.array([3, 2, 1]), 0, np.arange(0))', ('float32', [3.0, 2.0, 1.0])),
    'polyint_m2_k':
        ('jnp.polyint(jnp.array([3., 2., 1.]), 2, 5.)',
         ('float32', [0.25, 0.33333334, 0.5, 5.0, 5.0])),
    'polymul_int':
        ('jnp.polymul(jnp.array([1, 2]), jnp.array([3, 4]))', ('float32', [3.0, 10.0, 8.0])),
    'sinc_second_derivative_at_0':
        ('jax.grad(jax.grad(jnp.sinc))(0.)', ('float32', -3.2898684)),
    'sinc_fourth_derivative_at_0':
        ('jax.grad(jax.grad(jax.grad(jax.grad(jnp.sinc))))(0.)', ('float32', 19.481821)),
    'size_axes':
        ('jnp.size(jnp.zeros((2, 3, 4)), (0, 2))', ('int64', 8.0)),
    'roll_traced_shifts':
        ('jax.jit(lambda s: jnp.roll(jnp.arange(24).reshape(2, 3, 4), s, (0, '
         '-1)))(jnp.array([1, 2]))',
         ('int32',
          [[[14.0, 15.0, 12.0, 13.0], [18.0, 19.0, 16.0, 17.0], [22.0, 23.0, 20.0, 21.0]],
           [[2.0, 3.0, 0.0, 1.0], [6.0, 7.0, 4.0, 5.0], [10.0, 11.0, 8.0, 9.0]]])),
    'delete_traced_unique':
        ('jax.jit(lambda i: jnp.delete(jnp.arange(12).reshape(3, 4), i, axis=1, '
         'assume_unique_indices=True))(jnp.array([3, -4]))',
         ('int32', [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0]])),
    'insert_scalar_axis1':
        ('jnp.insert(np.array([[1, 1], [2, 2], [3, 3]]), np.array(1), np.array(5), 1)',
         ('int32', [[1.0, 5.0, 1.0], [2.0, 5.0, 2.0], [3.0, 5.0, 3.0]])),
    'insert_traced_index':
        ('jax.jit(lambda i, v: jnp.insert(jnp.arange(6.).reshape(3, 2), i, v, '
         'axis=0))(jnp.int32(-1), 7.)',
         ('float32', [[0.0, 1.0], [2.0, 3.0], [7.0, 7.0], [4.0, 5.0]])),
    'place_traced_mask':
        ('jax.jit(lambda m: jnp.place(jnp.arange(6), m, jnp.array([10, 20]), '
         'inplace=False))(jnp.array([True, False, True, True, False, False]))',
         ('int32', [10.0, 1.0, 20.0, 10.0, 4.0, 5.0])),
    'unravel_index_traced_shape':
        ('jax.jit(jnp.unravel_index)(jnp.array([-20, -3, 0, 5, 11, 30]), (3, 4))',
         (('int32', [0.0, 2.0, 0.0, 1.0, 2.0, 2.0]), ('int32', [0.0, 1.0, 0.0, 1.0, 3.0, 3.0]))),
}


def _check(result, expected):
    if isinstance(expected, tuple) and isinstance(expected[0], tuple):
        assert isinstance(result, tuple) and len(result) == len(expected)
        for r, e in zip(result, expected):
            _check(r, e)
        return
    dtype, values = expected
    result = np.asarray(result)
    assert str(result.dtype) == dtype
    tol = 1e-2 if dtype == "bfloat16" else 1e-5
    np.testing.assert_allclose(result.astype(np.complex128 if result.dtype.kind == "c"
                                             else np.float64), values, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    expression, expected = CASES[name]
    _check(eval(expression), expected)


def test_weights_need_inverted_cdf():
    with pytest.raises(NotImplementedError, match="inverted_cdf"):
        jnp.quantile(X, 0.5, axis=1, weights=W)
    with pytest.raises(ValueError, match="axis is None"):
        jnp.quantile(X, 0.5, method="inverted_cdf", weights=W[0])


def test_removed_keywords_are_refused():
    for call in (lambda: jnp.clip(jnp.ones(3), a_min=0),
                 lambda: jnp.reshape(jnp.ones(4), newshape=(2, 2)),
                 lambda: jnp.percentile(jnp.ones(3), 50, interpolation="linear")):
        with pytest.raises(TypeError):
            call()
    assert not hasattr(jnp, "fix") and not hasattr(jnp, "row_stack")


def test_errors_as_in_jax():
    with pytest.raises(ValueError, match="ddof and correction"):
        jnp.var(jnp.ones(3), ddof=1, correction=1)
    with pytest.raises(ValueError, match="does not support overwrite_input"):
        jnp.median(jnp.ones(3), overwrite_input=True)
    with pytest.raises(ValueError, match="Complex values have no ordering"):
        jnp.clip(jnp.ones(3, jnp.complex64), 0, 1)
    with pytest.raises(ValueError, match="no longer supported"):
        jnp.arange(3j)
    with pytest.raises(TypeError, match=r"meant `jax\.numpy\.ones\(\(2, 3\)\)`"):
        jnp.ones(2, 3)
    with pytest.raises(TypeError, match="take_along_axis indices must be of integer type"):
        jnp.take_along_axis(jnp.ones(3), jnp.array([1.0]), axis=0)
    with pytest.raises(ValueError, match="^repeated axis: \\(1, 1\\)$"):
        jnp.size(jnp.ones((2, 3)), (1, -1))
    with pytest.raises(ValueError, match="corrcoef: dtype must be a subclass of float"):
        jnp.corrcoef(jnp.ones(3), dtype=int)


def test_array_positional_arguments_are_deprecated():
    x = jnp.array([1, 2, 3])
    with pytest.warns(DeprecationWarning, match="positionally"):
        assert jnp.array(x, None, False) is x
    with pytest.raises(TypeError, match="multiple values for argument 'copy'"):
        jnp.array(x, None, False, copy=False)


def test_like_functions_follow_a_committed_input():
    device = jax.devices()[-1]
    for like in (jnp.zeros_like, jnp.ones_like, jnp.empty_like,
                 lambda a, **kw: jnp.full_like(a, 2, **kw)):
        placed = like(jnp.arange(3.0), device=device)
        assert placed.devices() == {device} and like(placed).sharding == placed.sharding
