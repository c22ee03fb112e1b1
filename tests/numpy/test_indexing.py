"""NumPy indexing (`x[idx]`, `x.at[idx]`), the index functions of jnp and the gather /
scatter primitives: results against NumPy, out-of-bounds modes, jaxpr sizes, errors,
gradients against finite differences, and vmap against a loop."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import errors
from pyjax._src.config import check_static_indices
from pyjax._src.lax import indexing as li
from pyjax._src.numpy import indexing as ix

X = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
I2 = np.array([0, 2])
J2 = np.array([[1], [3]])

# A seeded table of index expressions, each checked against NumPy.
GETITEM_CASES = [
    (0,), (-1,), (2, -3), (slice(None),), (slice(1, 3),), (slice(None, None, -1),),
    (slice(3, 0, -2),), (slice(-100, 100, 3),), (slice(10, 20),), (None,), (Ellipsis, None),
    (Ellipsis, 1), (1, Ellipsis, 2), (None, 1, None, slice(1, 4, 2)), (I2,), (I2, I2),
    (I2, J2), (slice(None), I2), (slice(None), I2, J2), (I2, slice(None), J2),
    (0, slice(None), I2), (slice(None), 0, I2), (1, J2, slice(None, None, -2)),
    (slice(None), I2, None, J2), (Ellipsis, I2), (I2, Ellipsis, I2),
    (slice(None, None, 2), I2, slice(4, 1, -1)), (np.array([True, False, True]),),
    (slice(None), np.array([True, False, True, True])), (np.ones((3, 4), bool),),
    (np.array([[True, False, False, True]] * 3), 1), (True,), (False,), (None, True, 0),
    (np.array(1),), (np.array([-1, -3]),), ((),), ([0, 1], [1, 2]), (np.int64(2), 1),
    (np.array([[0, 1], [2, 2]], np.uint8), slice(1, None)), (I2, 1, I2),
    (1, slice(None), True), (slice(None), True, I2), (True, 0), (True, True),
    (True, Ellipsis, 0), (None, False, 1), (I2, True), (True, slice(None), J2),
]


@pytest.mark.parametrize("idx", GETITEM_CASES, ids=[str(i) for i in range(len(GETITEM_CASES))])
def test_getitem_matches_numpy(idx):
    expected = X[idx]
    out = jnp.asarray(X)[idx]
    assert isinstance(out, pyjax.Array)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)
    if not any(isinstance(i, np.ndarray) and i.dtype == np.bool_ for i in idx):
        jitted = pyjax.jit(lambda x: x[idx])(jnp.asarray(X))
        np.testing.assert_array_equal(np.asarray(jitted), expected)


def test_random_index_table():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    xj = jnp.asarray(x)
    for _ in range(60):
        idx = []
        for d in x.shape:
            kind = rng.integers(0, 5)
            if kind == 0:
                idx.append(int(rng.integers(-d, d)))
            elif kind == 1:
                lo, hi = sorted(rng.integers(-d - 1, d + 2, size=2))
                idx.append(slice(int(lo), int(hi), int(rng.choice([-2, -1, 1, 2, 3]))))
            elif kind == 2:
                idx.append(rng.integers(-d, d, size=(2, 1) if rng.random() < .5 else (3,)))
            elif kind == 3:
                idx.append(None)
            else:
                idx.append(Ellipsis if not any(i is Ellipsis for i in idx) else slice(None))
        idx = tuple(idx)
        try:
            expected = x[idx]
        except (IndexError, ValueError):
            continue
        np.testing.assert_array_equal(np.asarray(xj[idx]), expected, err_msg=str(idx))


def test_traced_index_arrays_and_scalars():
    x = jnp.asarray(X)
    f = pyjax.jit(lambda x, i, j: x[i, :, j])
    np.testing.assert_array_equal(np.asarray(f(x, I2, J2)), X[I2, :, J2])
    g = pyjax.jit(lambda x, i: x[i, 1:3, -1])
    for i in (0, 2, -1, -3):
        np.testing.assert_array_equal(np.asarray(g(x, i)), X[i, 1:3, -1])


# --- jaxpr sizes ------------------------------------------------------------------------

def _prims(f, *args):
    return [e.primitive.name for e in pyjax.make_jaxpr(f)(*args).jaxpr.eqns]


def test_static_indices_stay_slices():
    x = jnp.asarray(X)
    assert _prims(lambda x: x[0], x) == ["slice", "squeeze"]
    assert _prims(lambda x: x[1:3, ::2], x) == ["slice"]
    assert _prims(lambda x: x[::-1], x) == ["rev"]
    assert _prims(lambda x: x[2:0:-1], x) == ["slice", "rev"]
    assert _prims(lambda x: x[None, ..., 2], x) == ["slice", "squeeze", "broadcast_in_dim"]
    assert _prims(lambda x: x[...], x) == []


def test_traced_scalar_index_is_a_dynamic_slice():
    prims = _prims(lambda x, i: x[i], jnp.asarray(X), 1)
    assert "gather" not in prims and "dynamic_slice" in prims
    assert "gather" in _prims(lambda x, i: x[i], jnp.asarray(X), I2)


def test_jaxpr_text_of_an_integer_array_index():
    text = str(pyjax.make_jaxpr(lambda x, i: x[i])(jnp.ones(3), np.array([0, 1])))
    assert "gather[\n      dimension_numbers=GatherDimensionNumbers(offset_dims=(), " \
        "collapsed_slice_dims=(0,), start_index_map=(0,)" in text
    assert "mode=GatherScatterMode.PROMISE_IN_BOUNDS" in text
    text = str(pyjax.make_jaxpr(lambda x: x.at[1].add(2.0))(jnp.ones(3)))
    assert "scatter-add[" in text and "mode=GatherScatterMode.FILL_OR_DROP" in text


# --- .at[] ------------------------------------------------------------------------------

AT_CASES = [(0,), (slice(1, 3),), (slice(None, None, -2), 1), (np.array([0, 2, 0]),),
            (slice(None), J2, np.array([0, 4])), (Ellipsis, np.array([1, 1, 1])), (None, 1),
            (np.array([True, False, True]),), (1, slice(None), np.array([3, -1])),
            (slice(None), True, I2), (True, 1, Ellipsis)]


@pytest.mark.parametrize("idx", AT_CASES, ids=[str(i) for i in range(len(AT_CASES))])
def test_at_methods_match_numpy_ufunc_at(idx):
    rng = np.random.default_rng(1)
    y = rng.uniform(0.5, 2.0, X[idx].shape).astype(np.float32)
    xj = jnp.asarray(X)
    for method, ufunc in [("add", np.add), ("subtract", np.subtract),
                          ("multiply", np.multiply), ("divide", np.divide),
                          ("min", np.minimum), ("max", np.maximum), ("power", np.power)]:
        expected = X.copy()
        ufunc.at(expected, idx, y)
        out = getattr(xj.at[idx], method)(y)
        np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-6, err_msg=method)
    expected = X.copy()
    expected[idx] = 7
    np.testing.assert_array_equal(np.asarray(xj.at[idx].set(7.0)), expected)
    expected = X.copy()
    np.negative.at(expected, idx)
    np.testing.assert_array_equal(np.asarray(xj.at[idx].apply(jnp.negative)), expected)
    np.testing.assert_array_equal(np.asarray(xj.at[idx].get()), X[idx])
    if not any(isinstance(i, np.ndarray) and i.dtype == np.bool_ for i in idx):
        jitted = pyjax.jit(lambda x, y: x.at[idx].add(y))(xj, y)
        expected = X.copy()
        np.add.at(expected, idx, y)
        np.testing.assert_allclose(np.asarray(jitted), expected, rtol=1e-6)


def test_at_repeated_indices_accumulate_and_original_is_unchanged():
    x = jnp.zeros(4)
    out = x.at[jnp.array([1, 1, 3, 1])].add(1.0)
    np.testing.assert_array_equal(np.asarray(out), [0, 3, 0, 1])
    np.testing.assert_array_equal(np.asarray(x), np.zeros(4))
    out = jnp.ones(3).at[jnp.array([0, 0])].multiply(jnp.array([2.0, 5.0]))
    np.testing.assert_array_equal(np.asarray(out), [10, 1, 1])
    out = jnp.arange(5).at[jnp.array([2, 2])].apply(lambda v: v * 3)   # applied twice
    np.testing.assert_array_equal(np.asarray(out), [0, 1, 18, 3, 4])


def test_at_helper_objects_and_dtypes():
    x = jnp.arange(4)
    assert type(x.at).__name__ == "_IndexUpdateHelper"
    assert type(x.at[1]).__name__ == "_IndexUpdateRef"
    assert x.at[1].set(5).dtype == x.dtype
    assert jnp.arange(4).at[1].divide(2).dtype == jnp.float32
    with pytest.warns(FutureWarning, match="scatter inputs have incompatible types"):
        out = x.at[1].set(2.7)
    np.testing.assert_array_equal(np.asarray(out), [0, 2, 2, 3])
    out = jnp.zeros((2, 3)).at[:, 1].set(jnp.array([4.0, 5.0]))
    np.testing.assert_array_equal(np.asarray(out), [[0, 4, 0], [0, 5, 0]])


def test_tracer_at_and_getitem():
    f = pyjax.jit(lambda x, i, v: (x.at[i].set(v), x[i]))
    out, got = f(jnp.arange(5.0), jnp.array([4, 0]), jnp.array([10.0, 11.0]))
    np.testing.assert_array_equal(np.asarray(out), [11, 1, 2, 3, 10])
    np.testing.assert_array_equal(np.asarray(got), [4, 0])


# --- out of bounds ----------------------------------------------------------------------

def test_out_of_bounds_gathers_clamp_by_default():
    x = jnp.arange(10)
    assert int(x[11]) == 9 and int(x[-12]) == 0
    np.testing.assert_array_equal(np.asarray(x[jnp.array([11, -1, -20])]), [9, 9, 0])
    np.testing.assert_array_equal(
        np.asarray(pyjax.jit(lambda x, i: x[i])(x, jnp.array([11, -1, -20]))), [9, 9, 0])
    assert int(pyjax.jit(lambda x, i: x[i])(x, 14)) == 9
    np.testing.assert_array_equal(np.asarray(x.at[jnp.array([12, 1])].get(mode="clip")),
                                  [9, 1])


def test_fill_mode_gets():
    x = jnp.arange(5.0)
    out = x.at[jnp.array([7, 1, -1, -6])].get(mode="fill")
    np.testing.assert_array_equal(np.asarray(out), [np.nan, 1, 4, np.nan])
    out = jnp.arange(5).at[jnp.array([7, 1])].get(mode="fill", fill_value=-1)
    np.testing.assert_array_equal(np.asarray(out), [-1, 1])
    assert int(jnp.arange(5).at[9].get(mode="fill", fill_value=-3)) == -3
    out = pyjax.jit(lambda x: x.at[jnp.array([9, 2])].get(mode="fill", fill_value=0.5))(x)
    np.testing.assert_array_equal(np.asarray(out), [0.5, 2])


def test_out_of_bounds_updates_are_dropped_by_default():
    x = jnp.arange(5)
    for f in (lambda x: x.at[jnp.array([7, 1])].set(9), pyjax.jit(
            lambda x: x.at[jnp.array([7, 1])].set(9))):
        np.testing.assert_array_equal(np.asarray(f(x)), [0, 9, 2, 3, 4])
    np.testing.assert_array_equal(np.asarray(x.at[7].add(1)), [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(np.asarray(x.at[jnp.array([7, 1])].set(9, mode="clip")),
                                  [0, 9, 2, 3, 9])
    np.testing.assert_array_equal(
        np.asarray(x.at[jnp.array([7, 1])].add(1, mode="promise_in_bounds")), [0, 2, 2, 3, 4])
    np.testing.assert_array_equal(np.asarray(x.at[-1].set(7)), [0, 1, 2, 3, 7])


# --- boolean masks ----------------------------------------------------------------------

def test_boolean_masks_eager_and_under_jit():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(x[x > 30]), X[X > 30])
    np.testing.assert_array_equal(np.asarray(x.at[x > 30].set(0.0)),
                                  np.where(X > 30, 0, X))
    with pytest.raises(errors.NonConcreteBooleanIndexError, match="jnp.where"):
        pyjax.jit(lambda x: x[x > 3])(x)
    with pytest.raises(errors.NonConcreteBooleanIndexError):
        pyjax.jit(lambda x: x.at[x > 3].set(0.0))(x)
    assert pyjax.jit(lambda x: x[True])(x).shape == (1, 3, 4, 5)
    assert pyjax.jit(lambda x: x[False])(x).shape == (0, 3, 4, 5)
    out = pyjax.grad(lambda x: x[x > 30].sum())(x)    # concrete under grad
    np.testing.assert_array_equal(np.asarray(out), (X > 30).astype(np.float32))


# --- errors -----------------------------------------------------------------------------

# JAX 0.10.2's messages for a static integer index out of bounds, under
# jax_check_static_indices, with x of shape (2, 3, 5).
@pytest.mark.parametrize("idx, message", [
    (4, "index 4 out of bounds for axis 0 with size 2 (normalize_indices=True)"),
    (-3, "index -3 out of bounds for axis 0 with size 2 (normalize_indices=True)"),
    ((slice(None), 4), "index 4 out of bounds for axis 1 with size 3 (normalize_indices=True)"),
    ((Ellipsis, -6), "index -6 out of bounds for axis 2 with size 5 (normalize_indices=True)"),
    ((slice(None), [1, 2], 6),
     "index 6 out of bounds for axis 2 with size 5 (normalize_indices=True)"),
    ((np.arange(2), 6, None),
     "index 6 out of bounds for axis 1 with size 3 (normalize_indices=True)"),
    ((True, 5), "index 5 out of bounds for axis 0 with size 2 (normalize_indices=True)"),
    (np.int32(7), "index 7 out of bounds for axis 0 with size 2 (normalize_indices=True)"),
])
def test_check_static_indices_raises(idx, message):
    x = jnp.zeros((2, 3, 5))
    with check_static_indices(True):
        for f in (lambda: x[idx], lambda: pyjax.jit(lambda a: a[idx])(x),
                  lambda: x.at[idx].get(), lambda: x.at[idx].get(mode="promise_in_bounds")):
            with pytest.raises(IndexError) as info:
                f()
            assert str(info.value) == message


def test_check_static_indices_leaves_other_indexing_alone():
    x = jnp.zeros((2, 3))
    with check_static_indices(True):
        assert x[-2].shape == (3,)
        assert x[np.array(4)].shape == (3,)       # 0-d arrays are not static indices
        assert x[jnp.array(4)].shape == (3,)
        assert x.at[4].get(mode="clip").shape == (3,)
        assert np.isnan(np.asarray(x.at[4].get(mode="fill"))).all()
        assert x.at[4].set(1.0).shape == (2, 3)   # scatters are not checked
        with pytest.raises(IndexError, match=r"index -1 out of bounds .* \(normalize_indices="
                           "False\\)"):
            x.at[-1].get(wrap_negative_indices=False)
    assert x[4].shape == (3,)                     # off by default: clamped


@pytest.mark.parametrize("idx, fix", [
    ([0], "array"), ([0, 0], "array"), ([[0, 0]], "tuple"), ([0, [0, 1]], "tuple"),
    ([0, np.arange(2)], "tuple"), ([0, None], "tuple"), ([0, slice(None)], "tuple"),
    ([0, Ellipsis], "tuple"), (range(2), "array"),
])
def test_non_tuple_sequence_index_names_the_fix(idx, fix):
    x = jnp.arange(6).reshape(3, 2)
    message = ("Using a non-tuple sequence for multidimensional indexing is not allowed; "
               f"use `arr[{fix}(seq)]` instead of `arr[seq]`. See "
               "https://github.com/jax-ml/jax/issues/4564 for more information.")
    for f in (lambda: x[idx], lambda: x.at[idx].set(0)):
        with pytest.raises(TypeError) as info:
            f()
        assert str(info.value) == message


@pytest.mark.parametrize("x_shape, m_shape, out_shape", [
    ((3,), (0,), (0,)), ((3, 4), (0,), (0, 4)), ((3, 4), (0, 4), (0,)),
    ((3, 4), (3, 0), (0,)), ((3, 4, 5), (3, 0), (0, 5)),
])
def test_empty_boolean_masks_select_nothing(x_shape, m_shape, out_shape):
    # JAX 0.10.2 (and NumPy): a mask dimension of size 0 matches any size
    x = jnp.zeros(x_shape, jnp.int32)
    m = np.zeros(m_shape, bool)
    assert x[m].shape == out_shape
    assert pyjax.jit(lambda a: a[m])(x).shape == out_shape
    assert x.at[m].set(1).shape == x_shape
    with pytest.raises(IndexError, match=r"^boolean index did not match shape of indexed "
                       r"array in index 0: got \(2,\), expected \[3\]$"):
        jnp.zeros(3)[np.zeros(2, bool)]


def test_scatter_into_an_empty_dimension_is_a_no_op():
    # JAX 0.10.2: an index array into a size-0 axis scatters nothing (eagerly and under
    # jit); an integer index is out of bounds
    assert jnp.zeros(0).at[jnp.array([0, 0])].add(1).shape == (0,)
    assert pyjax.jit(lambda i: jnp.zeros(0).at[i].add(1))(jnp.array([0, 0])).shape == (0,)
    with pytest.raises(IndexError, match="^index is out of bounds for axis 0 with size 0$"):
        jnp.zeros(0).at[0].add(1)


def test_index_errors():
    x = jnp.asarray(X)
    with pytest.raises(IndexError, match="^Too many indices: array is 3-dimensional, but 4 "
                       "were indexed$"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="^index is out of bounds for axis 0 with size 0$"):
        jnp.zeros((0,))[0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(TypeError, match="non-tuple sequence"):
        x[[0, 1]]
    with pytest.raises(TypeError, match="integer or boolean type.*float32"):
        x[np.array([0.5])]
    with pytest.raises(TypeError, match="string indexing"):
        x["a"]
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.array([True, False])]
    with pytest.raises(IndexError, match="could not be broadcast"):
        x[np.array([0, 1]), np.array([0, 1, 2])]
    with pytest.raises(IndexError, match="static start/stop/step"):
        pyjax.jit(lambda x, i: x[i:i + 2])(x, 1)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        x.at[0].set(jnp.ones(7))
    with pytest.raises(TypeError, match=r"^JAX arrays are immutable and do not support "
                       r"in-place item assignment. Instead of x\[idx\] = y, use"):
        x[0] = 1.0
    with pytest.raises(TypeError, match="do not support in-place item assignment"):
        pyjax.jit(lambda x: x.__setitem__(0, 1.0))(x)


def test_lax_gather_scatter_shape_errors_are_clear():
    x = jnp.ones((5, 4))
    dnums = li.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                      start_index_map=(0,))
    out = li.gather(x, jnp.array([[1], [3]]), dnums, (1, 4))
    assert out.shape == (2, 4)
    with pytest.raises(TypeError, match="Slice size at index 1 in gather op is out of range"):
        li.gather(x, jnp.array([[1]]), dnums, (1, 5))
    with pytest.raises(TypeError, match="collapse slice dims with bound 1"):
        li.gather(x, jnp.array([[1]]), dnums, (2, 4))
    with pytest.raises(TypeError, match="start_index_map"):
        li.gather(x, jnp.array([[1, 2]]), dnums, (1, 4))
    with pytest.raises(ValueError, match="indices must have an integer type"):
        li.gather(x, jnp.array([[1.0]]), dnums, (1, 4))
    with pytest.raises(TypeError, match="GatherDimensionNumbers"):
        li.gather(x, jnp.array([[1]]), ((1,), (0,), (0,)), (1, 4))
    sdn = li.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    with pytest.raises(TypeError, match="Bounds of the scatter dimensions of updates"):
        li.scatter_add(x, jnp.array([[1], [2]]), jnp.ones((3, 4)), sdn)
    with pytest.raises(TypeError, match="same dtypes"):
        li.scatter_add(x, jnp.array([[1]]), jnp.ones((1, 4), jnp.int32), sdn)
    with pytest.raises(ValueError, match="Unknown gather mode"):
        li.scatter(x, jnp.array([[1]]), jnp.ones((1, 4)), sdn, mode="wrap")


def test_lax_wrappers_and_modes():
    x = jnp.arange(6.0)
    dnums = li.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                      start_index_map=(0,))
    idx = jnp.array([[1], [9]])
    np.testing.assert_array_equal(np.asarray(li.gather(x, idx, dnums, (1,))), [1, np.nan])
    np.testing.assert_array_equal(np.asarray(li.gather(x, idx, dnums, (1,), mode="clip")),
                                  [1, 5])
    assert li.GatherScatterMode.from_any("drop") is li.GatherScatterMode.FILL_OR_DROP
    sdn = li.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    upd = jnp.array([10.0, 20.0])
    np.testing.assert_array_equal(np.asarray(li.scatter_max(x, idx, upd, sdn)),
                                  [0, 10, 2, 3, 4, 5])
    np.testing.assert_array_equal(np.asarray(li.scatter_min(x, idx, upd, sdn, mode="clip")),
                                  [0, 1, 2, 3, 4, 5])
    np.testing.assert_array_equal(np.asarray(li.scatter_mul(x, idx, upd, sdn, mode="clip")),
                                  [0, 10, 2, 3, 4, 100])
    out = li.scatter_apply(x, idx, lambda v: v + 100, sdn, update_shape=(2,))
    np.testing.assert_array_equal(np.asarray(out), [0, 101, 2, 3, 4, 5])


# --- take, take_along_axis, put_along_axis ------------------------------------------------

def test_take():
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    aj = jnp.asarray(a)
    idx = np.array([[0, 2], [-1, 1]])
    for axis in (None, 0, 1, -1):
        np.testing.assert_array_equal(np.asarray(ix.take(aj, idx, axis=axis)),
                                      np.take(a, idx, axis=axis))
    np.testing.assert_array_equal(np.asarray(ix.take(aj, np.array([0, 13]))), [0, np.nan])
    np.testing.assert_array_equal(np.asarray(ix.take(aj, np.array([0, 13]), mode="clip")),
                                  np.take(a, [0, 13], mode="clip"))
    np.testing.assert_array_equal(np.asarray(ix.take(aj, np.array([0, 13, -14]), mode="wrap")),
                                  np.take(a, [0, 13, -14], mode="wrap"))
    np.testing.assert_array_equal(
        np.asarray(ix.take(jnp.arange(3), np.array([5]), fill_value=-1)), [-1])
    with pytest.raises(NotImplementedError, match="raise"):
        ix.take(aj, idx, mode="raise")


def test_take_along_axis_and_put_along_axis():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    aj = jnp.asarray(a)
    for axis in (0, 1, 2, -1):
        shape = list(a.shape)
        shape[axis] = 2
        idx = rng.integers(-a.shape[axis], a.shape[axis], size=shape)
        np.testing.assert_array_equal(np.asarray(ix.take_along_axis(aj, idx, axis)),
                                      np.take_along_axis(a, idx, axis))
        expected = a.copy()
        np.put_along_axis(expected, idx, -1.0, axis)
        out = ix.put_along_axis(aj, idx, -1.0, axis, inplace=False)
        np.testing.assert_array_equal(np.asarray(out), expected)
    sorted_idx = np.argsort(a, axis=1)
    np.testing.assert_array_equal(np.asarray(ix.take_along_axis(aj, sorted_idx, axis=1)),
                                  np.sort(a, axis=1))
    np.testing.assert_array_equal(
        np.asarray(ix.take_along_axis(aj, np.zeros((1, 2, 1), int), axis=1)),
        np.take_along_axis(a, np.zeros((1, 2, 1), int), axis=1))
    with pytest.raises(ValueError, match="inplace=False"):
        ix.put_along_axis(aj, sorted_idx, 0.0, 1)
    with pytest.raises(ValueError, match="same number of dimensions"):
        ix.take_along_axis(aj, np.zeros((2,), int), 0)


# --- nonzero, argwhere, flatnonzero -----------------------------------------------------

def test_nonzero_family():
    a = np.array([[0, 1, 2], [3, 0, 0]])
    aj = jnp.asarray(a)
    for got, want in zip(ix.nonzero(aj), np.nonzero(a)):
        np.testing.assert_array_equal(np.asarray(got), want)
    rows, cols = ix.nonzero(aj, size=5, fill_value=-1)
    np.testing.assert_array_equal(np.asarray(rows), [0, 0, 1, -1, -1])
    np.testing.assert_array_equal(np.asarray(cols), [1, 2, 0, -1, -1])
    rows, cols = pyjax.jit(lambda x: ix.nonzero(x, size=2))(aj)
    np.testing.assert_array_equal(np.asarray(rows), [0, 0])
    np.testing.assert_array_equal(np.asarray(cols), [1, 2])
    np.testing.assert_array_equal(np.asarray(ix.argwhere(aj)), np.argwhere(a))
    np.testing.assert_array_equal(np.asarray(ix.argwhere(aj, size=4, fill_value=9)),
                                  [[0, 1], [0, 2], [1, 0], [9, 9]])
    assert ix.argwhere(jnp.array(3)).shape == np.argwhere(np.array(3)).shape
    np.testing.assert_array_equal(np.asarray(ix.flatnonzero(aj)), np.flatnonzero(a))
    np.testing.assert_array_equal(np.asarray(pyjax.jit(
        lambda x: ix.flatnonzero(x > 0, size=4))(aj)), [1, 2, 3, 0])
    with pytest.raises(errors.ConcretizationTypeError, match="size="):
        pyjax.jit(ix.nonzero)(aj)
    with pytest.raises(ValueError, match="0d"):
        ix.nonzero(jnp.array(1))


# --- gradients --------------------------------------------------------------------------

def _numerical_grad(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        grad[i] = (float(f(jnp.asarray(x + d))) - float(f(jnp.asarray(x - d)))) / (2 * eps)
    return grad


GRAD_FUNCTIONS = {
    "advanced": lambda x: (x[jnp.array([0, 2, 0]), 1:3] ** 2).sum(),
    "basic": lambda x: (x[1, ::-2] ** 3).sum(),
    "dynamic": lambda x: (x[jnp.array(2), 1] * x[0, 0]),
    "mask": lambda x: jnp.sin(x[x > 0.5]).sum(),
    "set_repeated": lambda x: (x.at[jnp.array([0, 0, 1])].set(x[2] * 3.0) ** 2).sum(),
    "set_unique": lambda x: (x.at[jnp.array([0, 1])].set(x[2] ** 2,
                                                         unique_indices=True) ** 2).sum(),
    "add": lambda x: (x.at[jnp.array([1, 1]), 2].add(x[0, :2] ** 2) ** 2).sum(),
    "multiply": lambda x: (x.at[jnp.array([0, 0, 1])].multiply(x[2] * 3.0) ** 2).sum(),
    "multiply_zero": lambda x: (x.at[jnp.array([0, 0])].multiply(
        jnp.stack([x[2] * 0.0, x[1]])) ** 2).sum(),
    "max": lambda x: (x.at[jnp.array([0, 0, 1])].max(x[2] * 3.0 - 1.0) ** 2).sum(),
    "min": lambda x: (x.at[jnp.array([2, 0])].min(-x[1] + 0.25) ** 2).sum(),
    "fill_get": lambda x: (x.at[jnp.array([0, 5])].get(mode="fill", fill_value=0.0)
                           ** 2).sum(),
    "take_along_axis": lambda x: (ix.take_along_axis(x, jnp.array([[2, 0, 1, 1]]), 0)
                                  ** 2).sum(),
    "put_along_axis": lambda x: (ix.put_along_axis(x, jnp.array([[2], [0], [1]]),
                                                   x[:, :1] * 2.0, 1, inplace=False)
                                 ** 2).sum(),
}


@pytest.mark.parametrize("name", list(GRAD_FUNCTIONS))
def test_gradients_match_finite_differences(name):
    f = GRAD_FUNCTIONS[name]
    x = np.random.default_rng(3).uniform(-1.0, 1.0, (3, 4))
    with pyjax.enable_x64(True):
        got = np.asarray(pyjax.grad(f)(jnp.asarray(x)))
        np.testing.assert_allclose(got, _numerical_grad(f, x), rtol=1e-6, atol=1e-7)
        if name != "mask":   # a boolean mask needs concrete values: not under jit
            jitted = np.asarray(pyjax.jit(pyjax.grad(f))(jnp.asarray(x)))
            np.testing.assert_allclose(jitted, got, rtol=1e-12, atol=1e-12)


def test_scatter_apply_is_not_differentiable():
    with pytest.raises(NotImplementedError, match="scatter_apply"):
        pyjax.grad(lambda x: x.at[0].apply(jnp.sin).sum())(jnp.ones(3))


# --- vmap -------------------------------------------------------------------------------

def test_vmap_of_indexing_matches_a_loop():
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((3, 5, 4)).astype(np.float32)
    idx = rng.integers(-5, 5, size=(3, 2))
    for f in (lambda x, i: x[i], lambda x, i: x[i, ::-1], lambda x, i: x.at[i].add(1.0),
              lambda x, i: x.at[:, i[0]].set(x[0, 0]), lambda x, i: x[i[1], 1:3]):
        out = pyjax.vmap(f)(jnp.asarray(xs), jnp.asarray(idx))
        expected = np.stack([np.asarray(f(jnp.asarray(x), jnp.asarray(i)))
                             for x, i in zip(xs, idx)])
        np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
    out = pyjax.vmap(lambda i: jnp.asarray(xs[0])[i])(jnp.asarray(idx))
    np.testing.assert_array_equal(np.asarray(out), np.stack([xs[0][np.where(i < 0, i + 5, i)]
                                                             for i in idx]))
