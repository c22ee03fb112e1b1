"""Bad input to jax.numpy and the Array, table-driven (array creation, shape manipulation,
reductions and axes, indexing, products, jnp.fft, conversions to Python values): each case
raises a named exception whose message names the problem, never an internal error (see
harness.assert_named_error). Then the edge cases that are numbers, not errors: integer
division by zero and float-to-int casts run eagerly and under jit on both executors and
give XLA's (and JAX's) answers; huge shapes trace without allocating."""
import re

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import assert_named_error, bad_input_case as case
from pyjax import errors, lax

x = jnp.ones((2, 3))

CASES = [
    # --- array creation: shapes, dtypes, values ---------------------------------------------------
    case("zeros_negative_dim", TypeError, r"negative dimensions.*\(-1, 2\)",
         lambda: jnp.zeros((-1, 2))),
    case("zeros_float_dim", TypeError, r"integer type, got \(2\.5,\)",
         lambda: jnp.zeros((2.5,))),
    case("zeros_string_shape", TypeError, "Shapes must be 1D sequences of concrete values",
         lambda: jnp.zeros("abc")),
    case("zeros_none_dim", TypeError, r"got \(2, None\)", lambda: jnp.zeros((2, None))),
    case("zeros_bad_dtype", TypeError, "data type 'foo' not understood",
         lambda: jnp.zeros(3, dtype="foo")),
    case("ones_negative", TypeError, "negative dimensions", lambda: jnp.ones(-3)),
    case("full_like_negative_shape", TypeError, "negative dimensions",
         lambda: jnp.zeros_like(x, shape=(-1,))),
    case("full_fill_shape_mismatch", ValueError, "Incompatible shapes",
         lambda: jnp.full((2,), jnp.ones(3))),
    case("eye_negative", ValueError, "jnp.eye: negative dimensions", lambda: jnp.eye(-1)),
    case("eye_float", TypeError, "jnp.eye: Shapes must be", lambda: jnp.eye(2.5)),
    case("arange_zero_step", ZeroDivisionError, "step must not be zero",   # NumPy's, JAX's
         lambda: jnp.arange(0, 5, 0)),
    # values JAX 0.10.2 refuses that used to give numbers: fractional repeats were
    # truncated, complex argmax took the real part, N < 0 gave an empty matrix, an array
    # initial broadcast the sum, lax.reshape's dimensions were not checked
    case("repeat_fractional", TypeError, "repeats must be integers",
         lambda: jnp.repeat(jnp.arange(3.0), 1.5)),
    case("repeat_float_array", TypeError, "repeats must be integers",
         lambda: jnp.repeat(jnp.arange(3.0), jnp.array([1.0, 2.0, 1.0]))),
    case("round_int_negative_decimals", NotImplementedError,   # JAX 0.10.2 raises it
         "integer np.round not implemented for decimals < 0",
         lambda: jnp.round(jnp.array([15]), -1)),
    case("argmax_complex", TypeError, "argmax does not accept dtype complex64",
         lambda: jnp.argmax(jnp.ones(3, jnp.complex64))),
    case("argmin_complex", TypeError, "argmin does not accept dtype complex64",
         lambda: jnp.argmin(jnp.ones(3, jnp.complex64))),
    case("vander_negative_n", ValueError, "^N must be nonnegative$",
         lambda: jnp.vander(jnp.arange(3.0), -1)),
    case("sum_array_initial", ValueError,
         r"^initial value must be a scalar\. Got array of shape \(2,\)$",
         lambda: jnp.sum(jnp.arange(3.0), initial=jnp.ones(2))),
    case("max_array_initial", ValueError, "initial value must be a scalar",
         lambda: jnp.max(jnp.arange(3.0), initial=jnp.ones(1))),
    case("lax_reshape_dimensions_not_a_permutation", TypeError,
         r"^reshape dimensions must be a permutation of operand dimensions, got dimensions "
         r"\(0, 0\) for shape \(2, 3\)\.$",
         lambda: lax.reshape(jnp.ones((2, 3)), (6,), dimensions=(0, 0))),
    case("linspace_negative_num", ValueError, "must be non-negative",
         lambda: jnp.linspace(0, 1, -3)),
    case("linspace_float_num", TypeError, "num must be an integer",
         lambda: jnp.linspace(0, 1, 2.5)),
    case("array_of_string", TypeError, "string arrays", lambda: jnp.array("abc")),
    case("array_of_bytes", TypeError, "string arrays", lambda: jnp.array(b"abc")),
    case("array_of_objects", TypeError, "dtype object",
         lambda: jnp.array(np.array([object(), 1], dtype=object))),
    case("array_of_dict", TypeError, "object array", lambda: jnp.array({"a": 1})),
    case("array_of_set", TypeError, "object array", lambda: jnp.array({1, 2})),
    case("array_of_none", ValueError, "None is not a valid value", lambda: jnp.array(None)),
    case("array_ragged_list", ValueError, "different shapes", lambda: jnp.array([[1, 2], [3]])),
    case("asarray_ragged_list", ValueError, "different shapes",
         lambda: jnp.asarray([[1, 2], [3]])),
    case("array_ragged_arrays", TypeError, "Cannot concatenate",
         lambda: jnp.array([jnp.ones(2), jnp.ones(3)])),
    case("array_mixed_str", TypeError, "string arrays", lambda: jnp.array([1, "a"])),
    case("array_int_too_big", OverflowError, "too large", lambda: jnp.array(2 ** 70)),
    case("array_list_int_too_big", OverflowError, "too large", lambda: jnp.array([1, 2 ** 70])),
    # JAX 0.10.2: a Python int operand must fit the default int type even where it would
    # promote to float (JAX's test_large_python_ints); an explicit dtype takes it
    case("python_int_operand_too_big_for_float_op", OverflowError, "An overflow",
         lambda: jnp.multiply(2 ** 100, 3.)),
    case("python_int_operand_past_int32", OverflowError, "does not fit in int32",
         lambda: jnp.add(2 ** 31, 1.)),
    case("python_int_operand_of_where", OverflowError, "An overflow",
         lambda: jnp.where(True, 2 ** 40, 1.)),
    case("array_bad_dtype", TypeError, "not understood", lambda: jnp.array([1], dtype="foo")),
    case("array_str_dtype", TypeError, "number, bool, and string dtypes",
         lambda: jnp.array([1, 2], dtype=np.str_)),
    case("astype_str", TypeError, "number, bool, and string dtypes", lambda: x.astype(np.str_)),
    case("sds_float_shape_in_eval_shape", TypeError, r"integer type, got \(2\.5,\)",
         lambda: jax.eval_shape(lambda a: a, jax.ShapeDtypeStruct((2.5,), jnp.float32))),
    case("sds_negative_shape_in_eval_shape", TypeError, "negative dimensions",
         lambda: jax.eval_shape(lambda a: a, jax.ShapeDtypeStruct((-1,), jnp.float32))),
    case("unravel_index_negative_dims", TypeError, "negative dimensions",
         lambda: jnp.unravel_index(jnp.array([1]), (-1, 2))),
    case("histogram_negative_bins", ValueError, "`bins` must be a positive integer",
         lambda: jnp.histogram(x, bins=-1)),
    # --- shape manipulation -----------------------------------------------------------------------
    # JAX's texts, which libraries match (numpyro's ReshapeTransform tests)
    case("reshape_size_mismatch", TypeError, re.escape(
        "cannot reshape array of shape (2, 3) (size 6) into shape (4, 2) (size 8)"),
         lambda: x.reshape(4, 2)),
    case("reshape_two_unknowns", TypeError, re.escape(
        "can only specify one unknown axis size with a `-1` value, got (-1, -1)"),
         lambda: x.reshape(-1, -1)),
    case("reshape_unknown_not_dividing", TypeError, re.escape(
        "into shape (-1, 4) because the product of specified axis sizes (4) does not "
        "evenly divide 6"), lambda: x.reshape(-1, 4)),
    case("reshape_negative", TypeError, re.escape("into shape (-3, 2) (size -6)"),
         lambda: x.reshape(-3, 2)),
    case("reshape_function_size_mismatch", TypeError, re.escape(
        "cannot reshape array of shape (2,) (size 2) into shape (2, 3) (size 6)"),
         lambda: jnp.reshape(jnp.arange(2), (2, 3))),
    case("reshape_float", TypeError, r"jnp.reshape: .*got \(2\.0, 3\)",
         lambda: x.reshape(2.0, 3)),
    case("reshape_string", TypeError, "jnp.reshape: Shapes must", lambda: jnp.reshape(x, "ab")),
    case("reshape_none", TypeError, "jnp.reshape: Shapes must", lambda: x.reshape(None)),
    case("reshape_bad_order", ValueError, "order", lambda: jnp.reshape(x, (3, 2), order="Q")),
    case("transpose_repeated", TypeError, "don't match", lambda: jnp.transpose(x, (0, 0))),
    case("transpose_out_of_bounds", ValueError, "out of bounds",
         lambda: jnp.transpose(x, (0, 2))),
    case("moveaxis_out_of_bounds", ValueError, "out of bounds", lambda: jnp.moveaxis(x, 5, 0)),
    case("moveaxis_repeated", ValueError, "duplicate value in 'source'",
         lambda: jnp.moveaxis(x, (0, 0), (1, 0))),
    case("moveaxis_length_mismatch", ValueError, "Inconsistent number",
         lambda: jnp.moveaxis(x, (0, 1), (0,))),
    case("swapaxes_out_of_bounds", ValueError, "out of bounds", lambda: jnp.swapaxes(x, 0, 4)),
    case("squeeze_not_one", ValueError, "size not equal to one", lambda: jnp.squeeze(x, 0)),
    case("squeeze_out_of_bounds", ValueError, "out of bounds", lambda: jnp.squeeze(x, 5)),
    case("expand_dims_out_of_bounds", ValueError, "out of bounds",
         lambda: jnp.expand_dims(x, 5)),
    case("expand_dims_repeated", ValueError, "repeated axis",
         lambda: jnp.expand_dims(x, (0, 0))),
    case("concatenate_mismatch", TypeError, "differ in dimensions other than",
         lambda: jnp.concatenate([x, jnp.ones((2, 4))], axis=0)),
    case("concatenate_axis", ValueError, "out of bounds",
         lambda: jnp.concatenate([x, x], axis=3)),
    case("concatenate_nothing", ValueError, "at least one array",
         lambda: jnp.concatenate([])),
    case("concatenate_scalars", ValueError, "Zero-dimensional",
         lambda: jnp.concatenate([jnp.float32(1), jnp.float32(2)])),
    case("stack_mismatch", ValueError, "same shape", lambda: jnp.stack([x, jnp.ones((3, 2))])),
    case("stack_nothing", ValueError, "at least one array", lambda: jnp.stack([])),
    case("stack_axis", ValueError, "out of bounds", lambda: jnp.stack([x, x], axis=4)),
    case("split_uneven", ValueError, "equal division", lambda: jnp.split(x, 2, axis=1)),
    case("split_axis", ValueError, "out of bounds", lambda: jnp.split(x, 2, axis=5)),
    case("split_zero_sections", ValueError, "larger than 0", lambda: jnp.split(x, 0, axis=1)),
    case("broadcast_to_incompatible", ValueError, "Incompatible shapes",
         lambda: jnp.broadcast_to(x, (3, 3))),
    case("broadcast_arrays_incompatible", ValueError, "Incompatible shapes",
         lambda: jnp.broadcast_arrays(x, jnp.ones(4))),
    case("tile_negative", TypeError, "nonnegative", lambda: jnp.tile(x, -1)),
    case("repeat_negative", TypeError, "nonnegative", lambda: jnp.repeat(x, -1)),
    case("pad_negative", ValueError, "non-negative", lambda: jnp.pad(x, -1)),
    case("pad_bad_mode", NotImplementedError, "padding mode 'foo'",
         lambda: jnp.pad(x, 1, mode="foo")),
    case("pad_bad_width_shape", ValueError, r"pad_width with nd=2 has unsupported shape",
         lambda: jnp.pad(x, ((1, 1), (1, 1), (1, 1)))),
    case("flip_axis", ValueError, "out of bounds", lambda: jnp.flip(x, 3)),
    case("roll_axis", ValueError, "out of bounds", lambda: jnp.roll(x, 1, axis=3)),
    case("diagonal_same_axes", ValueError, "distinct", lambda: jnp.diagonal(x, 0, 0, 0)),
    case("round_float_decimals", TypeError, "decimals must be a static integer",
         lambda: jnp.round(x, 1.5)),
    # --- reductions and axes ----------------------------------------------------------------------
    case("sum_axis", ValueError, "axis 2 is out of bounds", lambda: jnp.sum(x, axis=2)),
    case("sum_negative_axis", ValueError, "axis -3 is out of bounds",
         lambda: jnp.sum(x, axis=-3)),
    case("sum_repeated_axis", ValueError, "duplicate value in 'axis': \\(0, 0\\)",
         lambda: jnp.sum(x, axis=(0, 0))),
    case("size_repeated_axis", ValueError, "repeated axis: \\(0, 0\\)",
         lambda: jnp.size(x, (0, -2))),
    case("sum_float_axis", TypeError, "axis must be an integer, got 1.0",
         lambda: jnp.sum(x, axis=1.0)),
    case("sum_string_axis", TypeError, "axis must be an integer, got 'a'",
         lambda: jnp.sum(x, axis="a")),
    case("mean_axis", ValueError, "out of bounds", lambda: jnp.mean(x, axis=5)),
    case("max_of_empty", ValueError, "zero-size array", lambda: jnp.max(jnp.zeros((0,)))),
    case("argmax_of_empty", ValueError, "empty sequence", lambda: jnp.argmax(jnp.zeros((0,)))),
    case("argmax_axis", ValueError, "out of bounds", lambda: jnp.argmax(x, axis=3)),
    case("cumsum_axis", ValueError, "out of bounds", lambda: jnp.cumsum(x, axis=3)),
    case("sort_axis", ValueError, "out of bounds", lambda: jnp.sort(x, axis=3)),
    case("take_axis", ValueError, "out of bounds", lambda: jnp.take(x, 0, axis=3)),
    case("take_bad_mode", ValueError, "Invalid mode 'foo'", lambda: jnp.take(x, 0, mode="foo")),
    case("take_along_axis_rank", ValueError, "same number of dimensions",
         lambda: jnp.take_along_axis(x, jnp.zeros((2,), int), axis=1)),
    case("take_along_axis_list", TypeError,
         r"take_along_axis requires ndarray or scalar arguments, got <class 'list'> at "
         r"position 0\.", lambda: jnp.take_along_axis([[1, 2], [3, 4]], x[:, :1], axis=1)),
    case("take_along_axis_list_indices", TypeError, "got <class 'list'> at position 1",
         lambda: jnp.take_along_axis(x, [[0], [1]], axis=1)),
    case("put_along_axis_list_values", TypeError, "got <class 'list'> at position 2",
         lambda: jnp.put_along_axis(x, jnp.zeros((2, 1), int), [5.0], axis=1,
                                    inplace=False)),
    case("nonzero_under_jit", errors.ConcretizationTypeError, "size",
         lambda: jax.jit(jnp.nonzero)(x)),
    case("unique_under_jit", errors.ConcretizationTypeError, "size",
         lambda: jax.jit(jnp.unique)(x)),
    case("bincount_under_jit", errors.ConcretizationTypeError, "jnp.bincount",
         lambda: jax.jit(jnp.bincount)(jnp.array([1, 2]))),
    # --- indexing ---------------------------------------------------------------------------------
    case("too_many_indices", IndexError, "Too many indices", lambda: x[0, 0, 0]),
    case("index_a_scalar", IndexError, "Too many indices", lambda: jnp.float32(1)[0]),
    case("float_index", TypeError, "integer or boolean type", lambda: x[1.0]),
    case("string_index", TypeError, "string indexing; got idx='a'", lambda: x["a"]),
    case("object_index", IndexError, "Indexer must be", lambda: x[object()]),
    case("float_array_index", TypeError, "integer or boolean type",
         lambda: x[jnp.array([1.0])]),
    case("two_ellipses", IndexError, "single ellipsis", lambda: x[..., ...]),
    case("list_index", TypeError, "non-tuple sequence", lambda: x[[0.5, 1]]),
    case("boolean_mask_shape", IndexError, "did not match shape",
         lambda: x[jnp.array([True, False, True])]),
    case("boolean_mask_under_jit", errors.NonConcreteBooleanIndexError, "must be concrete",
         lambda: jax.jit(lambda a: a[a > 0])(x)),
    case("traced_slice_bound", IndexError, "static start/stop/step",
         lambda: jax.jit(lambda a, i: a[:i])(x, 1)),
    case("float_slice_bound", TypeError, "integer", lambda: x[0.5:1]),
    case("at_bad_mode", ValueError, 'Unknown gather mode "foo"',
         lambda: x.at[0].set(1.0, mode="foo")),
    case("at_float_index", TypeError, "indexer value 1.5", lambda: x.at[1.5].set(1.0)),
    case("at_shape_mismatch", ValueError, "Incompatible shapes",
         lambda: x.at[0].set(jnp.ones(5))),
    case("at_too_many_indices", IndexError, "Too many indices", lambda: x.at[0, 0, 0].set(1.0)),
    case("item_assignment", TypeError, "immutable", lambda: x.__setitem__(0, 1.0)),
    # --- products ---------------------------------------------------------------------------------
    case("dot_mismatch", TypeError, "same shape", lambda: jnp.dot(x, x)),
    case("matmul_mismatch", TypeError, "contracted dimensions differ", lambda: x @ x),
    case("matmul_vector_mismatch", TypeError, "contracted dimensions differ",
         lambda: jnp.matmul(jnp.ones(3), jnp.ones(4))),
    case("matmul_batch_mismatch", ValueError, "batch .* do not broadcast",
         lambda: jnp.matmul(jnp.ones((2, 2, 3)), jnp.ones((3, 3, 4)))),
    case("matmul_scalar", ValueError, "scalars", lambda: jnp.matmul(x, 2.0)),
    case("tensordot_axes", TypeError, "exceeds input ranks", lambda: jnp.tensordot(x, x, 5)),
    case("tensordot_axes_lengths", TypeError, "axes lists to have equal length",
         lambda: jnp.tensordot(x, x, axes=([0], [0, 1]))),
    case("tensordot_axes_kinds", TypeError, "either ints, tuples or lists, got bad and axes",
         lambda: jnp.tensordot(x, x, axes=("bad", "axes"))),
    case("tensordot_axes_string", TypeError, "must be an int, a pair of ints, or a pair",
         lambda: jnp.tensordot(x, x, axes="badaxes")),
    case("tri_traced_size", TypeError, "Shapes must be 1D sequences of concrete values",
         lambda: jax.jit(jnp.tri)(3, M=3, k=0)),
    case("take_from_empty_axis", IndexError, r"non-empty jnp.take\(\) from an empty axis",
         lambda: jnp.take(jnp.ones((2, 0, 4)), jnp.array([0]), axis=1, mode="fill")),
    case("searchsorted_too_many_for_int32", OverflowError,
         "Python integer 2147483648 out of bounds for int32",
         lambda: jax.eval_shape(jnp.searchsorted,
                                jax.ShapeDtypeStruct((2**31,), np.float32), 1.0)),
    case("einsum_label_sizes", ValueError, "size of label 'j'",
         lambda: jnp.einsum("ij,jk->ik", x, x)),
    case("einsum_unknown_output", ValueError, "'z'", lambda: jnp.einsum("ij,jk->iz", x, x.T)),
    case("einsum_operand_count", ValueError, "operand", lambda: jnp.einsum("ij,jk->ik", x)),
    case("add_shapes", ValueError, "Incompatible shapes", lambda: x + jnp.ones(4)),
    case("add_string", TypeError, "unsupported operand", lambda: x + "a"),
    case("add_none", TypeError, "unsupported operand", lambda: x + None),
    case("jnp_add_string", TypeError, "position 1", lambda: jnp.add(x, "a")),
    case("sin_of_list", TypeError, "jnp.asarray", lambda: jnp.sin([1.0, 2.0])),
    case("sin_of_none", TypeError, "ndarray or scalar", lambda: jnp.sin(None)),
    case("bitwise_on_float", TypeError, "does not accept dtype float32", lambda: x & x),
    case("int_negative_power", TypeError, "negative powers",   # TypeError in JAX
         lambda: jnp.array([2]) ** -1),
    # --- fft --------------------------------------------------------------------------------------
    case("fftn_repeated_axes", ValueError, "repeated axes",
         lambda: jnp.fft.fftn(x, axes=(0, 0))),
    case("fft_negative_n", ValueError, "FFT data points", lambda: jnp.fft.fft(x, n=-1)),
    # --- conversions to Python values -------------------------------------------------------------
    case("bool_of_array", ValueError, "ambiguous", lambda: bool(x)),
    case("int_of_array", TypeError, "Only scalar arrays can be converted to Python scalars",
         lambda: int(x)),
    case("float_index_into_list", TypeError, "integer", lambda: [1, 2][jnp.float32(1)]),
    case("len_of_scalar", TypeError, "unsized", lambda: len(jnp.float32(1))),
    case("hash_of_array", TypeError, "unhashable", lambda: hash(x)),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)


# --- huge shapes: abstract evaluation must not allocate ------------------------------------------

def test_huge_shapes_trace_without_allocating():
    big = (2 ** 40, 2 ** 40)
    out = jax.eval_shape(lambda: jnp.zeros(big) + jnp.ones(big))
    assert out.shape == big and out.dtype == jnp.float32
    out = jax.eval_shape(lambda a: a @ a.T, jax.ShapeDtypeStruct((2 ** 30, 2 ** 30), jnp.float32))
    assert out.shape == (2 ** 30, 2 ** 30)
    jaxpr = jax.make_jaxpr(lambda: jnp.full((2 ** 31, 2 ** 31), 2.0).sum())()
    assert "broadcast_in_dim" in str(jaxpr)


def test_huge_eager_allocation_fails_cleanly():
    with pytest.raises((ValueError, MemoryError)):
        jnp.zeros((2 ** 40, 2 ** 40))


# --- numbers: both executors, eager and jit, must give XLA's (and JAX's) answers ------------------

I32 = np.int32
NUMERIC = [
    ("floor_divide_by_zero", lambda a, b: a // b,
     [np.array([5, -5, 0], I32), np.zeros(3, I32)], [-2, -2, -1]),
    ("remainder_by_zero", lambda a, b: a % b,
     [np.array([5, -5, 0], I32), np.zeros(3, I32)], [0, 0, 0]),
    ("fmod_by_zero", jnp.fmod, [np.array([5, -5], I32), np.zeros(2, I32)], [0, 0]),
    ("floor_divide_signs", lambda a, b: a // b,
     [np.array([7, -7, 6, -2 ** 31], I32), np.array([3, 3, -4, -1], I32)], [2, -3, -2, -2 ** 31]),
    ("remainder_signs", lambda a, b: a % b,
     [np.array([7, -7, 6], I32), np.array([3, 3, -4], I32)], [1, 2, -2]),
    ("lax_div_by_zero", lax.div, [np.array([5, -5, 0], I32), np.zeros(3, I32)], [-1, -1, -1]),
    ("lax_rem_by_zero", lax.rem, [np.array([5, -5, 0], I32), np.zeros(3, I32)], [5, -5, 0]),
    ("unsigned_div_by_zero", lambda a, b: a // b,
     [np.array([5, 0], np.uint32), np.zeros(2, np.uint32)], [2 ** 32 - 1, 2 ** 32 - 1]),
    ("float_to_int32_saturates", lambda a: a.astype(jnp.int32),
     [np.array([np.nan, np.inf, -np.inf, 3e10, -3e10, 2.9], np.float32)],
     [0, 2 ** 31 - 1, -2 ** 31, 2 ** 31 - 1, -2 ** 31, 2]),
    ("float_to_uint32_saturates", lambda a: a.astype(jnp.uint32),
     [np.array([-1.0, -3.5, 5e9, np.nan], np.float32)], [0, 0, 2 ** 32 - 1, 0]),
    ("float_to_int8_saturates", lambda a: a.astype(jnp.int8),
     [np.array([300.0, -300.0, 127.9], np.float32)], [127, -128, 127]),
    ("bfloat16_to_int8_saturates", lambda a: a.astype(jnp.int8),   # ml_dtypes' floats too
     [np.array([-1, np.inf, 300, np.nan, -np.inf, -300, 2.5, -2.5], jnp.bfloat16)],
     [-1, 127, 127, 0, -128, -128, 2, -2]),
    ("bfloat16_to_uint8_saturates", lambda a: a.astype(jnp.uint8),
     [np.array([-1, np.inf, 300, np.nan, -np.inf, -300, 2.5, -2.5], jnp.bfloat16)],
     [0, 255, 255, 0, 0, 0, 2, 0]),
    ("shift_past_width", lax.shift_left,
     [np.array([1, 1, 1], I32), np.array([31, 32, 40], I32)], [-2 ** 31, 0, 0]),
    ("shift_right_arithmetic_unsigned", lax.shift_right_arithmetic,   # the top bit shifts in
     [np.array([255, 128, 200, 129], np.uint8), np.array([0, 1, 100, 2], np.uint8)],
     [255, 192, 255, 224]),
    ("shift_right_arithmetic_uint32", lax.shift_right_arithmetic,
     [np.array([2 ** 32 - 1, 2 ** 31], np.uint32), np.array([4, 40], np.uint32)],
     [2 ** 32 - 1, 2 ** 32 - 1]),
    ("round_away_from_zero_near_half", lax.round,   # not floor(|x| + 0.5)
     [np.array([0.49999997, -0.49999997, 2.5, -2.5, 8388609.0, 4194304.5], np.float32)],
     [0.0, -0.0, 3.0, -3.0, 8388609.0, 4194305.0]),
    ("pow_half_at_negative_infinity", lambda a: a ** 0.5,   # pow, not sqrt: inf, not nan
     [np.array([-np.inf, -0.0, 4.0, -1.0], np.float32)], [np.inf, 0.0, 2.0, np.nan]),
    ("int32_div_extremes", lax.div,   # exact: no float quotient
     [np.array([2 ** 31 - 1, -2 ** 31, -2 ** 31, 2 ** 31 - 2, -7], I32),
      np.array([3, 3, -1, 2 ** 31 - 1, 2], I32)],
     [715827882, -715827882, -2 ** 31, 0, -3]),
    ("sign_of_negative_zero", lambda a: 1 / jnp.sign(a), [np.array([-0.0, 0.0], np.float32)],
     [-np.inf, np.inf]),
    ("digamma_at_poles", lax.digamma, [np.array([0.0, -1.0, 0.5], np.float32)],
     [np.nan, np.nan, -1.9635100260214235]),
    ("integer_power_negative_exponent", jnp.power,
     [np.array([2, 1, -1, 0], I32), np.full(4, -1, I32)], [0, 1, -1, 0]),
]


@pytest.mark.parametrize("how", ["eager", "jit"])
@pytest.mark.parametrize("fn, args, expected", [pytest.param(*c[1:], id=c[0]) for c in NUMERIC])
def test_numeric_edge_cases_match_xla(executor, how, fn, args, expected):
    f = fn if how == "eager" else jax.jit(fn)
    got = np.asarray(f(*[jnp.asarray(a) for a in args]))
    np.testing.assert_allclose(got.astype(np.float64), np.asarray(expected, np.float64),
                               rtol=1e-6)


def test_out_of_bounds_static_index_clamps_like_jax():
    # JAX (the oracle) clamps out-of-bounds gathers, static Python ints included; NumPy
    # would raise IndexError. Empty axes have nothing to clamp to and raise.
    assert float(jnp.arange(3.0)[5]) == 2.0 and float(jnp.arange(3.0)[-5]) == 0.0
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        jnp.zeros((0, 2))[0]


def test_promoting_functions_refuse_float0_arrays():
    # JAX 0.10.2: "Called equal with a float0 array. float0s do not support any operations
    # by design ..." (a TypeError), not a NumPy ufunc error
    z = np.zeros(2, jax.dtypes.float0)
    for fn, name in ((jnp.equal, "equal"), (jnp.add, "add"), (jnp.sin, "sin")):
        with pytest.raises(TypeError, match=f"Called {name} with a float0 array"):
            fn(*(z,) * (1 if fn is jnp.sin else 2))
    with pytest.raises(TypeError, match="float0s do not support any operations"):
        jnp.asarray([1.0]) + z[:1]
