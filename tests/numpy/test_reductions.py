"""jnp's reductions against JAX 0.10.2: average's weights, where masks, cumulative sums
and products into bool, the dtypes of var and std, small-float accumulation and duplicate
axes. Expected values are JAX's, written here as literals."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("axis, expected", [
    ((1, 2), [7.3333335, 19.333334]),
    ((2, 0), [8.722222, 12.722222, 16.722223]),
    ((2, 0, 1), 13.033334),
])
def test_average_takes_weights_over_several_axes(axis, expected):
    # weights have the shape of a along `axis`, in `axis`'s order
    shape = tuple(X.shape[a] for a in axis)
    w = np.arange(1, np.prod(shape) + 1, dtype=np.float32).reshape(shape)
    for f in (jnp.average, pyjax.jit(jnp.average, static_argnums=1)):
        np.testing.assert_allclose(np.asarray(f(X, axis, w)), expected, rtol=1e-6)


def test_average_refuses_weights_of_another_shape():
    with pytest.raises(ValueError, match="^Axis must be specified when shapes of a and "
                       "weights differ.$"):
        jnp.average(X, None, np.ones(4))
    with pytest.raises(ValueError, match="^Shape of weights must be consistent with shape "
                       "of a along specified axis.$"):
        jnp.average(X, (1, 2), np.ones((4, 3)))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any", "mean", "var",
                                  "std", "nansum", "nanprod", "nanmax", "nanmin", "nanmean",
                                  "nanvar", "nanstd"])
def test_where_must_be_boolean(name):
    x = jnp.arange(4.0)
    extra = {"initial": 0.0} if name in ("max", "min", "nanmax", "nanmin") else {}
    with pytest.raises(ValueError) as info:
        getattr(jnp, name)(x, where=jnp.ones(4, int), **extra)
    assert str(info.value) == (f"jnp.{name}: where must be None or a boolean array; got "
                               "where.dtype=dtype('int32').")
    with pytest.raises(TypeError, match=f"^{name} requires ndarray or scalar arguments"):
        getattr(jnp, name)(x, where=[True, False, True, True], **extra)


@pytest.mark.parametrize("name, expected", [
    ("cumsum", [True, True, True, True]), ("cumprod", [True, False, False, False]),
    ("cumulative_sum", [True, True, True, True]),
    ("cumulative_prod", [True, False, False, False]),
    ("nancumsum", [True, True, True, True]), ("nancumprod", [True, False, False, False]),
])
def test_cumulative_into_bool_counts_nonzeros(name, expected):
    for x in (jnp.array([-1, 0, 1, 2], jnp.int8), jnp.array([0.1, 0.0, -0.1, 0.5])):
        out = getattr(jnp, name)(x, dtype=bool)
        assert out.dtype == np.bool_
        # a != 0 is accumulated: -1 and 1 do not cancel
        np.testing.assert_array_equal(np.asarray(out), [expected[0] or x[0] != 0] +
                                      expected[1:])
    out = jnp.cumulative_sum(jnp.array([0.1, 0.0, -0.1, 0.5]), dtype=bool,
                             include_initial=True)
    np.testing.assert_array_equal(np.asarray(out), [False, True, True, True, True])


def test_cumulative_sum_errors():
    with pytest.raises(ValueError, match="^The input must be non-scalar to take a "
                       "cumulative sum, however a scalar value or scalar array was given.$"):
        jnp.cumulative_sum(jnp.float32(1))
    with pytest.raises(ValueError, match="^The input must be non-scalar to take a "
                       "cumulative product"):
        jnp.cumulative_prod(jnp.float32(1))
    with pytest.raises(ValueError, match="^The input array has rank 2, however axis was "
                       "not set to an explicit value. The axis argument is only optional "
                       "for one-dimensional arrays.$"):
        jnp.cumulative_sum(jnp.ones((2, 2)))


def test_var_and_std_keep_an_explicit_complex_dtype():
    x = jnp.array([1.0, 2.0, 4.0])
    out = jnp.var(x, dtype=jnp.complex64)
    assert out.dtype == jnp.complex64
    np.testing.assert_allclose(np.asarray(out), 1.5555555 + 0j, rtol=1e-6)
    assert jnp.std(x, dtype=jnp.complex64).dtype == jnp.complex64
    c = jnp.array([1 + 1j, 2, 4j], jnp.complex64)
    np.testing.assert_allclose(np.asarray(jnp.var(c, dtype=jnp.complex64)), 3.5555553 + 0j,
                               rtol=1e-6)
    for f, dtype in [(jnp.var, jnp.float32), (jnp.var, jnp.int32), (jnp.std, jnp.float32),
                     (jnp.nanvar, jnp.float32), (jnp.nanstd, jnp.int32)]:
        with pytest.raises(ValueError, match="^jax.numpy.var does not yet support real dtype "
                           "parameters when computing the variance of an array of complex "
                           "values"):
            f(c, dtype=dtype)
    with pytest.raises(TypeError, match="sqrt does not accept dtype int32"):
        jnp.nanstd(x, dtype=jnp.int32)


@pytest.mark.parametrize("f, dtype, primitives", [
    (jnp.sum, None, ["convert_element_type", "reduce_sum", "convert_element_type"]),
    (jnp.sum, jnp.float16, ["reduce_sum"]),
    (jnp.prod, jnp.bfloat16, ["reduce_prod"]),
    (jnp.mean, None, ["convert_element_type", "reduce_sum", "div", "convert_element_type"]),
    (jnp.mean, jnp.float16, ["reduce_sum", "div"]),
])
def test_small_floats_accumulate_in_an_explicit_dtype(f, dtype, primitives):
    x = jnp.ones(10, jnp.float16 if dtype is None else dtype)
    jaxpr = pyjax.make_jaxpr(lambda a: f(a, dtype=dtype))(x)
    assert [e.primitive.name for e in jaxpr.eqns] == primitives


@pytest.mark.parametrize("f", [jnp.sum, jnp.mean, jnp.max, jnp.all, jnp.nansum,
                               jnp.count_nonzero, jnp.ptp])
def test_duplicate_axes_are_refused(f):
    with pytest.raises(ValueError, match=r"^duplicate value in 'axis': \(0, -2\)$"):
        f(jnp.ones((2, 3)), axis=(0, -2))
