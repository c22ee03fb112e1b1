"""jnp.array/asarray/load: the dtype of lists, weak types under a requested dtype, masked
and structured inputs, bfloat16 files, default_device by platform name (values observed
on JAX 0.10.2)."""
import io

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


@pytest.mark.parametrize("obj,dtype", [
    ([0, np.int16(1)], "int16"), ([0.0, np.float16(1)], "float16"), ([1], "int32"),
    ([True, 1], "int32"), ([np.array(1, np.int8), 1], "int8"),
    ([[np.float16(1)], [2]], "float16"), ([[1, 2], [3, 4.5]], "float32")])
def test_list_dtype_is_jax_promotion_of_leaves(obj, dtype):
    assert jnp.array(obj).dtype == dtype
    assert jax.jit(jnp.array)(obj).dtype == dtype
    assert not jnp.array(obj).weak_type


def test_list_int_out_of_range_overflows():
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        jnp.array([np.uint8(3), -1])


def test_requested_dtype_makes_weak_input_strong():
    jaxpr = jax.make_jaxpr(jnp.int32)(0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["convert_element_type"]
    assert not jnp.asarray(jnp.array(1.0), jnp.float32).weak_type


def test_masked_arrays():
    masked = np.ma.array([1, 2], mask=[True, False])
    assert jnp.array(masked).tolist() == [1, 2]   # a copy strips the mask, as NumPy's
    assert jnp.asarray(masked, copy=True).tolist() == [1, 2]
    # every function that would convert it (and drop the mask) refuses it, as JAX does
    for refuse in [lambda: jnp.asarray(masked), lambda: jax.jit(jnp.asarray)(masked),
                   lambda: jax.device_put(masked), lambda: jnp.sin(masked),
                   lambda: jnp.add(masked, 1), lambda: jnp.ones(2) + masked,
                   lambda: jnp.sum(masked), lambda: jnp.where(masked > 0, masked, 0),
                   lambda: jnp.zeros(2).at[:].set(masked),
                   lambda: jnp.zeros(4)[masked.astype(int)], lambda: jnp.astype(masked, int),
                   lambda: jax.tree.map(jnp.sin, [masked])]:
        with pytest.raises(ValueError, match="numpy masked arrays are not supported"):
            refuse()



def test_like_functions_take_masked_arrays():
    # Only the shape and dtype of the prototype count, so JAX takes a masked one.
    masked = np.ma.masked_array(np.arange(3), mask=[0, 1, 0])
    assert jnp.zeros_like(masked).tolist() == [0, 0, 0]
    assert jnp.zeros_like(masked).dtype == jnp.int32
    assert jnp.ones_like(np.ma.masked_array(5.0)).tolist() == 1.0
    assert jnp.full_like(np.ma.masked_array([1.0, 2.0]), 3, shape=(3,)).tolist() == [3.0] * 3
    assert jnp.empty_like(masked, dtype=jnp.int8).dtype == jnp.int8


def test_structured_dtype_refused():
    with pytest.raises(TypeError, match="JAX only supports number, bool, and string dtypes"):
        jnp.array(3, [("a", "<i4"), ("b", "<i4")])


def test_load_bfloat16():
    f = io.BytesIO()
    jnp.save(f, jnp.arange(3, dtype=jnp.bfloat16))
    f.seek(0)
    out = jnp.load(f)
    assert out.dtype == jnp.bfloat16 and out.tolist() == [0, 1, 2]


def test_default_device_by_platform_name():
    with jax.default_device("cpu"):
        out = jnp.asarray(np.arange(4), copy=False)
        assert not out.committed and out.tolist() == [0, 1, 2, 3]
    with pytest.raises(RuntimeError, match="Unknown backend"):
        with jax.default_device("nonexistent"):
            pass


def test_scalar_zeros_and_ones_under_jit_are_arrays():
    # jnp functions return Arrays or tracers, never raw NumPy values: a scalar jnp.zeros
    # inside jit was an ndarray, so `jnp.zeros(()) + 1` was a NumPy scalar there.
    seen = []

    def f(a):
        for x in (jnp.zeros(()), jnp.ones([]), jnp.zeros(()) + 1):
            seen.append(isinstance(x, jax.Array))
        return a

    jax.jit(f)(1.0)
    assert seen == [True, True, True]                  # JAX 0.10.2: tracers, jax.Arrays


def test_big_python_ints_with_an_explicit_float_dtype():
    # JAX 0.10.2 refuses jnp.add(2 ** 31, 1.) (the int must fit int32 first), but an
    # explicit dtype converts the Python int directly.
    assert jnp.full((2,), 2 ** 40, jnp.float32)[0] == np.float32(1.0995116e+12)
    assert jnp.asarray(2 ** 40, jnp.float32) == np.float32(1.0995116e+12)
    assert jnp.add(-2 ** 31, 1.) == np.float32(-2.1474836e+09)


def test_like_functions_take_a_hijax_value_with_shape_and_dtype():
    """A value of a registered hijax type that has shape and dtype (as flax's hijax
    Variables do) is duck-typed by its attributes, not by its hijax type (as in JAX)."""
    from pyjax.experimental import hijax as hjx

    class Duck:
        shape = (2, 3)
        dtype = np.dtype("int16")

    class DuckTy(hjx.HiType):
        def __hash__(self):
            return 0

        def __eq__(self, other):
            return isinstance(other, DuckTy)

    hjx.register_hitype(Duck, lambda d: DuckTy())
    z = jnp.zeros_like(Duck())
    assert z.shape == (2, 3) and z.dtype == np.int16 and not z.weak_type
    np.testing.assert_array_equal(jnp.full_like(Duck(), 7), np.full((2, 3), 7, np.int16))
