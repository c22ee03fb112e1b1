"""Sorting and selection: lax.sort (several operands, num_keys, NaN and signed-zero order),
sort_key_val, top_k, approx_max_k; jnp.sort/argsort/lexsort, partition, searchsorted (every
method), digitize, unique (with size= under jit), quantile/percentile/median and their NaN
forms: values against NumPy, gradients, vmap against a loop, jit on both executors,
JAX's errors."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import errors
from pyjax._src.test_util import check_grads

from harness import EXECUTORS, jit_on



RUNNERS = ["eager"] + EXECUTORS


def runner(kind, f):
    return f if kind == "eager" else jit_on(kind, f)


def assert_same(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected)


SPECIALS = np.array([1.0, np.nan, -0.0, 0.0, -np.inf, 2.0, np.nan, 1.0, np.inf, -1.0],
                    np.float32)


# --- lax.sort / top_k -------------------------------------------------------------------------

@pytest.mark.parametrize("kind", RUNNERS)
def test_lax_sort_order_nans_last_and_stable(kind):
    order = np.arange(SPECIALS.size, dtype=np.int32)
    keys, perm = runner(kind, lambda k, v: lax.sort_key_val(k, v))(SPECIALS, order)
    expected = np.argsort(np.where(SPECIALS == 0, 0, SPECIALS), kind="stable")
    assert_same(perm, expected)       # -0.0 and 0.0 tie and keep their order
    assert_same(keys, SPECIALS[expected])
    c = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 2j], np.complex64)
    assert_same(runner(kind, lax.sort)(c), np.sort(c))


@pytest.mark.parametrize("kind", RUNNERS)
def test_lax_sort_several_operands_and_keys(kind):
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, (4, 9)), rng.integers(0, 3, (4, 9))
    c = rng.standard_normal((4, 9)).astype(np.float32)
    f = runner(kind, lambda a, b, c: lax.sort((a, b, c), dimension=1, num_keys=2))
    sa, sb, sc = f(a.astype(np.int32), b.astype(np.int32), c)
    perm = np.stack([np.lexsort((b[i], a[i])) for i in range(4)])
    assert_same(sa, np.take_along_axis(a, perm, 1))
    assert_same(sb, np.take_along_axis(b, perm, 1))
    assert_same(sc, np.take_along_axis(c, perm, 1))
    assert_same(runner(kind, lambda x: lax.sort(x, dimension=0))(c), np.sort(c, axis=0))


@pytest.mark.parametrize("kind", RUNNERS)
def test_top_k_values_indices_ties_and_total_order(kind):
    x = np.array([3, 1, 3, 2, 1], np.int32)
    values, indices = runner(kind, lambda x: lax.top_k(x, 4))(x)
    assert_same(values, [3, 3, 2, 1])
    assert_same(indices, [0, 2, 3, 1])      # equal values: the lower index first
    values, indices = runner(kind, lambda x: lax.top_k(x, 10))(SPECIALS)
    assert_same(indices, [1, 6, 8, 5, 0, 7, 3, 2, 9, 4])   # NaN first, 0.0 before -0.0
    y = np.random.default_rng(1).standard_normal((2, 3, 7)).astype(np.float32)
    values, indices = runner(kind, lambda x: lax.top_k(x, 3))(y)
    assert_same(values, -np.sort(-y, -1)[..., :3])
    assert_same(np.take_along_axis(y, np.asarray(indices), -1), values)


def test_approx_max_k_and_min_k_are_exact():
    y = np.random.default_rng(2).standard_normal((5, 4)).astype(np.float32)
    values, indices = lax.approx_max_k(y, 2, reduction_dimension=0)
    assert_same(values, -np.sort(-y, 0)[:2])
    assert_same(indices, np.argsort(-y, 0, kind="stable")[:2])
    values, _ = lax.approx_min_k(y, 3)
    assert_same(values, np.sort(y, -1)[:, :3])


def test_sort_and_top_k_gradients():
    with jax.enable_x64(True):
        x = np.random.default_rng(3).permutation(12).reshape(3, 4) / 3.0 - 1.0
        check_grads(lambda x: lax.sort(x, dimension=1), (x,), 2)
        check_grads(lambda x, y: lax.sort((x, y), dimension=0, num_keys=1), (x, x ** 2), 2)
        check_grads(lambda x: lax.top_k(x, 2)[0], (x,), 2)
        check_grads(lambda x: jnp.sort(x, axis=None, descending=True), (x,), 1)


def test_sort_gradient_is_the_inverse_permutation():
    x = np.array([3.0, 1.0, 2.0], np.float32)
    g = jax.grad(lambda x: jnp.sum(jnp.sort(x) * jnp.array([1.0, 10.0, 100.0])))(x)
    assert_same(g, [100.0, 1.0, 10.0])
    g = jax.jit(jax.grad(lambda x: jnp.sum(lax.top_k(x, 2)[0] * jnp.array([1.0, 10.0]))))(x)
    assert_same(g, [1.0, 0.0, 10.0])


def test_sort_and_top_k_vmap():
    xs = np.random.default_rng(4).standard_normal((3, 4, 5)).astype(np.float32)
    for axis in (0, 1, 2):
        moved = np.moveaxis(xs, 0, axis)
        assert_same(jax.vmap(lambda x: lax.sort(x, 0), in_axes=axis)(moved),
                    np.sort(xs, axis=1))
        values, indices = jax.vmap(lambda x: lax.top_k(x, 2), in_axes=axis)(moved)
        assert_same(values, -np.sort(-xs, -1)[..., :2])


def test_lax_sort_errors():
    with pytest.raises(TypeError, match="same shape"):
        lax.sort((jnp.ones(3), jnp.ones(4)))
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((jnp.ones(3), jnp.ones(3)), num_keys=3)
    with pytest.raises(ValueError, match="must be no larger than size along axis"):
        lax.top_k(jnp.ones(3), 4)
    with pytest.raises(ValueError, match="nonnegative"):
        lax.top_k(jnp.ones(3), -1)


# --- jnp.sort / argsort / lexsort / partition ---------------------------------------------------

X = np.random.default_rng(5).integers(0, 4, (4, 7)).astype(np.float32)
X[0, 2], X[2, 5], X[1, 1] = np.nan, np.nan, -0.0


@pytest.mark.parametrize("kind", RUNNERS)
def test_jnp_sort_and_argsort(kind):
    for axis in (-1, 0, None):
        assert_same(runner(kind, lambda x, axis=axis: jnp.sort(x, axis=axis))(X),
                    np.sort(X, axis=axis))
        assert_same(runner(kind, lambda x, axis=axis: jnp.argsort(x, axis=axis))(X),
                    np.argsort(X, axis=axis, kind="stable"))
    assert_same(runner(kind, lambda x: jnp.sort(x, descending=True))(X),
                np.flip(np.sort(X), -1))
    # stable and descending: equal elements keep their original order
    n = X.shape[-1]
    expected = n - 1 - np.flip(np.argsort(np.flip(X, -1), kind="stable"), -1)
    assert_same(runner(kind, lambda x: jnp.argsort(x, descending=True))(X), expected)
    assert runner(kind, jnp.argsort)(X).dtype == np.int32


def test_lexsort_sort_complex_and_partition():
    rng = np.random.default_rng(6)
    k1, k2 = rng.integers(0, 3, 10), rng.integers(0, 3, 10)
    assert_same(jnp.lexsort((k1, k2)), np.lexsort((k1, k2)))
    assert_same(jax.jit(jnp.lexsort)(np.stack([k1, k2])), np.lexsort(np.stack([k1, k2])))
    c = np.array([3 + 1j, 1 - 2j, 1 + 0j], np.complex64)
    assert_same(jnp.sort_complex(c), np.sort_complex(c))
    assert jnp.sort_complex(np.array([3, 1])).dtype == np.complex64
    x = np.array([5.0, 1.0, 4.0, 2.0, 3.0, 0.0], np.float32)
    # JAX's layout: the kth + 1 smallest ascending, then the rest descending
    assert_same(jnp.partition(x, 2), [0.0, 1.0, 2.0, 5.0, 4.0, 3.0])
    assert_same(jnp.argpartition(x, 2), [5, 1, 3, 0, 2, 4])
    y = rng.standard_normal((3, 6)).astype(np.float32)
    part = np.asarray(jnp.partition(y, 1, axis=0))
    assert_same(np.sort(part, 0), np.sort(y, 0))
    assert (part[:1] <= part[1]).all() and (part[2:] >= part[1]).all()
    with pytest.raises(ValueError, match="out of bounds for axis 0 of size 3"):
        jnp.partition(y, 3, axis=0)
    idx = np.asarray(jax.jit(lambda y: jnp.argpartition(y, 1))(y))
    assert_same(np.sort(idx, -1), np.broadcast_to(np.arange(6), (3, 6)))
    picked = np.take_along_axis(y, idx, -1)
    assert (picked[:, :1] <= picked[:, 1:2]).all() and (picked[:, 2:] >= picked[:, 1:2]).all()


# --- searchsorted / digitize --------------------------------------------------------------------

A = np.array([0.0, 1.0, 1.0, 2.0, 5.0, 5.0, 5.0, 8.0, np.nan], np.float32)
V = np.array([[-1.0, 0.0, 1.0, 1.5], [5.0, 9.0, np.nan, 8.0]], np.float32)


@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "sort", "compare_all"])
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("kind", RUNNERS)
def test_searchsorted_every_method(method, side, kind):
    f = runner(kind, lambda a, v: jnp.searchsorted(a, v, side=side, method=method))
    assert_same(f(A, V), np.searchsorted(A, V, side=side))
    ints = np.array([1, 3, 3, 7], np.int32)
    assert_same(f(ints, np.arange(9, dtype=np.int32)),
                np.searchsorted(ints, np.arange(9), side=side))


def test_searchsorted_sorter_empty_and_scalar():
    a = np.array([3.0, 1.0, 2.0], np.float32)
    sorter = np.argsort(a)
    assert_same(jnp.searchsorted(a, 2.5, sorter=sorter), np.searchsorted(a, 2.5, sorter=sorter))
    assert_same(jnp.searchsorted(jnp.zeros(0), jnp.ones(3)), np.zeros(3, np.int32))
    assert jnp.searchsorted(a[sorter], 2.0).shape == ()


def test_digitize_matches_numpy():
    bins = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
    x = np.array([-1.0, 0.0, 0.5, 2.5, 3.0, 4.0, 7.0], np.float32)
    for b in (bins, bins[::-1]):
        for right in (False, True):
            assert_same(jnp.digitize(x, b, right=right), np.digitize(x, b, right=right))
            f = jax.jit(lambda x, b, right=right: jnp.digitize(x, b, right=right))
            assert_same(f(x, b),
                        np.digitize(x, b, right=right))


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="invalid value for keyword 'side'"):
        jnp.searchsorted(A, V, side="middle")
    with pytest.raises(ValueError, match="'method'"):
        jnp.searchsorted(A, V, method="bisect")
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.searchsorted(jnp.ones((2, 2)), V)
    with pytest.raises(TypeError, match="len > 0"):
        jnp.lexsort(())
    with pytest.raises(ValueError, match="same shape"):
        jnp.lexsort((jnp.ones(2), jnp.ones(3)))


# --- unique -----------------------------------------------------------------------------------

U = np.array([[2.0, np.nan, 1.0, 2.0, 0.0], [1.0, 3.0, np.nan, 2.0, 1.0]], np.float32)


def _all(x, **kw):
    return dict(return_index=True, return_inverse=True, return_counts=True, **kw)


def test_unique_matches_numpy():
    for equal_nan in (True, False):
        got = jnp.unique(U, equal_nan=equal_nan, **_all(U))
        exp = np.unique(U, equal_nan=equal_nan, **_all(U))
        for g, e in zip(got, exp):
            np.testing.assert_array_equal(g, e)
    rows = np.array([[1, 2], [0, 1], [1, 2], [0, 0], [0, 1]], np.int32)
    for axis in (0, 1):
        for g, e in zip(jnp.unique(rows, axis=axis, **_all(rows)),
                        np.unique(rows, axis=axis, **_all(rows))):
            np.testing.assert_array_equal(g, e)
    assert_same(jnp.unique(np.array([3, 1, 3])), [1, 3])
    values, counts = jnp.unique_counts(np.array([3, 1, 3]))
    assert_same(values, [1, 3])
    assert_same(counts, [1, 2])
    result = jnp.unique_all(np.array([3, 1, 3]))
    assert_same(result.indices, [1, 0])
    assert_same(result.inverse_indices, [1, 0, 1])
    assert_same(jnp.unique_inverse(np.array([3, 1])).inverse_indices, [1, 0])
    assert_same(jnp.unique_values(np.array([2, 2])), [2])


@pytest.mark.parametrize("kind", RUNNERS)
def test_unique_with_size_under_jit(kind):
    x = np.array([3, 1, 3, 2, 1, 3], np.int32)
    f = runner(kind, lambda x: jnp.unique(x, size=5, **_all(x)))
    values, index, inverse, counts = f(x)
    assert_same(values, [1, 2, 3, 1, 1])     # padded with the smallest value
    assert_same(index, [1, 3, 0, 1, 1])      # padded with the first index
    assert_same(inverse, [2, 0, 2, 1, 0, 2])
    assert_same(counts, [2, 1, 3, 0, 0])
    f = runner(kind, lambda x: jnp.unique(x, size=2, fill_value=-7, return_counts=True))
    values, counts = f(x)
    assert_same(values, [1, 2])
    assert_same(counts, [2, 1])
    values = runner(kind, lambda x: jnp.unique(x, size=4, fill_value=-7))(x)
    assert_same(values, [1, 2, 3, -7])


def test_unique_without_size_under_jit_is_a_concretization_error():
    with pytest.raises(errors.ConcretizationTypeError, match="size="):
        jax.jit(jnp.unique)(np.array([1, 2, 2]))


# --- quantiles --------------------------------------------------------------------------------

Y = np.random.default_rng(7).standard_normal((3, 8)).astype(np.float32)
Q = np.array([0.0, 0.3, 0.5, 0.75, 1.0], np.float32)


def _numpy_quantile(y, q, axis, method, keepdims=False):
    """np.quantile, but 'nearest' rounds a position halfway between two values down, as
    JAX 0.10.2 does (NumPy rounds it to the even one)."""
    if method != "nearest":
        return np.quantile(y, q, axis=axis, method=method, keepdims=keepdims)
    n = y.size if axis is None else np.prod([y.shape[a] for a in np.atleast_1d(axis)])
    position = np.asarray(q) * (n - 1)
    down = (position - np.floor(position) <= 0.5).reshape(
        np.shape(q) + (1,) * (y.ndim if keepdims else y.ndim - len(np.atleast_1d(axis))
                              if axis is not None else 0))
    return np.where(down, np.quantile(y, q, axis=axis, method="lower", keepdims=keepdims),
                    np.quantile(y, q, axis=axis, method="higher", keepdims=keepdims))


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_methods_match_numpy(method):
    for axis in (None, 0, 1, (0, 1)):
        got = jnp.quantile(Y, Q, axis=axis, method=method)
        np.testing.assert_allclose(got, _numpy_quantile(Y, Q, axis, method),
                                   rtol=1e-5, atol=1e-6)
    got = jax.jit(lambda y, q: jnp.percentile(y, q, axis=1, method=method,
                                              keepdims=True))(Y, Q * 100)
    np.testing.assert_allclose(got, _numpy_quantile(Y, Q, 1, method, keepdims=True),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", RUNNERS)
def test_median_and_nan_forms(kind):
    y = Y.copy()
    y[0, 3], y[2, :] = np.nan, np.nan
    run = lambda f: runner(kind, f)  # noqa: E731
    np.testing.assert_allclose(run(lambda y: jnp.median(y, axis=1))(Y), np.median(Y, axis=1),
                               rtol=1e-6)
    np.testing.assert_allclose(run(lambda y: jnp.median(y, axis=1))(y), np.median(y, axis=1),
                               rtol=1e-6)
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        expected = np.nanmedian(y, axis=1)
    np.testing.assert_allclose(run(lambda y: jnp.nanmedian(y, axis=1))(y), expected,
                               rtol=1e-6)
    with pytest.warns(RuntimeWarning):
        expected = np.nanquantile(y, Q, axis=1)
    np.testing.assert_allclose(run(lambda y: jnp.nanquantile(y, Q, axis=1))(y), expected,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run(lambda y: jnp.nanpercentile(y[:2], 40.0))(y),
                               np.nanpercentile(y[:2], 40.0), rtol=1e-5)
    assert jnp.median(np.arange(4)).dtype == np.float32


def test_quantile_gradients_and_vmap():
    with jax.enable_x64(True):
        y = np.random.default_rng(8).permutation(24).reshape(3, 8) / 5.0
        check_grads(lambda y: jnp.quantile(y, np.array([0.3, 0.5]), axis=1), (y,), 1)
        check_grads(lambda y: jnp.median(y), (y,), 1)
    out = jax.vmap(lambda y: jnp.median(y))(Y)
    np.testing.assert_allclose(out, np.median(Y, axis=1), rtol=1e-6)


def test_quantile_errors():
    with pytest.raises(ValueError, match="method"):
        jnp.quantile(Y, 0.5, method="inverted_cdf_typo")
    with pytest.raises(ValueError, match=r"range \[0, 1\]"):
        jnp.quantile(Y, 1.5)
    with pytest.raises(ValueError, match=r"range \[0, 100\]"):
        jnp.percentile(Y, -1.0)
    with pytest.raises(ValueError, match="complex"):   # as JAX
        jnp.median(np.ones(3, np.complex64))
    with pytest.raises(ValueError, match="out != None"):   # JAX 0.10.2's error
        jnp.median(Y, out=np.zeros(()))


def test_top_k_along_an_axis_matches_jax():
    x = np.array([[3.0, 1, 2], [0, 5, 4]], np.float32)
    for f in (lax.top_k, jax.jit(lax.top_k, static_argnames=("k", "axis"))):
        values, indices = f(x, k=1, axis=0)
        assert values.tolist() == [[3.0, 5.0, 4.0]] and indices.tolist() == [[0, 1, 1]]
    grad = jax.grad(lambda x: lax.top_k(x, 1, axis=0)[0].sum())(x)
    assert grad.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]
    batched = jax.vmap(lambda r: lax.top_k(r, 2, axis=0)[0], in_axes=1)(x)
    assert batched.tolist() == [[3.0, 0.0], [5.0, 1.0], [4.0, 2.0]]
