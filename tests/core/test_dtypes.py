"""dtype canonicalisation, weak types and the whole promotion table of JAX's lattice."""
import numpy as np
import pytest

import pyjax
import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src import dtypes

# JAX's documented binary promotion table (x64 enabled, so no canonicalisation).
_TABLE = """
     b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
b1   b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
u1   u1  u1  u2  u4  u8  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 u1  f*  c*
u2   u2  u2  u2  u4  u8  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 u2  f*  c*
u4   u4  u4  u4  u4  u8  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 u4  f*  c*
u8   u8  u8  u8  u8  u8  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 u8  f*  c*
i1   i1  i2  i4  i8  f*  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i1  f*  c*
i2   i2  i2  i4  i8  f*  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 i2  f*  c*
i4   i4  i4  i4  i8  f*  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 i4  f*  c*
i8   i8  i8  i8  i8  f*  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 i8  f*  c*
bf   bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  f4  f4  f8  c8  c16 bf  bf  c8
f2   f2  f2  f2  f2  f2  f2  f2  f2  f2  f4  f2  f4  f8  c8  c16 f2  f2  c8
f4   f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f8  c8  c16 f4  f4  c8
f8   f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  c16 c16 f8  f8  c16
c8   c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c16 c8  c16 c8  c8  c8
c16  c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16
i*   i*  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
f*   f*  f*  f*  f*  f*  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 f*  f*  c*
c*   c*  c*  c*  c*  c*  c*  c*  c*  c*  c8  c8  c8  c16 c8  c16 c*  c*  c*
"""

_CODES = {"b1": np.bool_, "u1": np.uint8, "u2": np.uint16, "u4": np.uint32,
          "u8": np.uint64, "i1": np.int8, "i2": np.int16, "i4": np.int32, "i8": np.int64,
          "bf": dtypes.bfloat16, "f2": np.float16, "f4": np.float32, "f8": np.float64,
          "c8": np.complex64, "c16": np.complex128}
_WEAK = {"i*": (np.int64, 1), "f*": (np.float64, 1.0), "c*": (np.complex128, 1j)}


def _operand(code):
    """A value of the table's type: a NumPy scalar, or a Python scalar for weak types."""
    return _WEAK[code][1] if code in _WEAK else np.zeros((), _CODES[code])


def _expected(code):
    return (np.dtype(_WEAK[code][0]), True) if code in _WEAK else (np.dtype(_CODES[code]),
                                                                   False)


def _rows():
    lines = [ln.split() for ln in _TABLE.strip().splitlines()]
    cols = lines[0]
    for row in lines[1:]:
        for col, result in zip(cols, row[1:]):
            yield row[0], col, result


@pytest.mark.parametrize("a,b,result", list(_rows()))
def test_promotion_table_matches_lattice(a, b, result):
    with pyjax.enable_x64(True):
        got = dtypes.result_type(_operand(a), _operand(b), return_weak_type_flag=True)
    assert got == _expected(result), (a, b, got)


def test_table_is_symmetric_and_join_is_associative():
    codes = list(_CODES) + list(_WEAK)
    with pyjax.enable_x64(True):
        for a in codes:
            for b in codes:
                assert dtypes.result_type(_operand(a), _operand(b)) == \
                    dtypes.result_type(_operand(b), _operand(a))
                for c in ("i1", "u4", "bf", "f*"):
                    ab = dtypes.result_type(_operand(a), _operand(b),
                                            return_weak_type_flag=True)
                    left = dtypes._promote([ab, _expected(c)])
                    assert left == dtypes.result_type(_operand(a), _operand(b), _operand(c),
                                                      return_weak_type_flag=True)


def test_x64_off_canonicalises_to_32_bits():
    assert dtypes.canonicalize_dtype(np.float64) == np.float32
    assert dtypes.canonicalize_dtype(np.int64) == np.int32
    assert dtypes.canonicalize_dtype(np.uint64) == np.uint32
    assert dtypes.canonicalize_dtype(np.complex128) == np.complex64
    assert jnp.array(np.ones(3)).dtype == np.float32
    assert jnp.arange(3).dtype == np.int32
    with pyjax.enable_x64(True):
        assert jnp.array(np.ones(3)).dtype == np.float64
        assert jnp.arange(3).dtype == np.int64


def test_x64_from_config_update():
    pyjax.config.update("jax_enable_x64", True)
    try:
        assert pyjax.config.jax_enable_x64
        assert jnp.zeros(2).dtype == np.float64
    finally:
        pyjax.config.update("jax_enable_x64", False)
    assert jnp.zeros(2).dtype == np.float32


def test_unknown_config_option_is_named():
    with pytest.raises(AttributeError, match="jax_enable_x65"):
        pyjax.config.update("jax_enable_x65", True)


def test_weak_python_scalars_do_not_widen():
    x = jnp.ones(3, jnp.float16)
    assert (x + 1.0).dtype == np.float16
    assert (jnp.ones(3, jnp.uint8) + 3).dtype == np.uint8
    assert (jnp.ones(3, jnp.int8) + 1.5).dtype == np.float32
    out = jnp.add(1, 1.0)
    assert out.dtype == np.float32 and out.weak_type
    assert repr(out) == "Array(2., dtype=float32, weak_type=True)"


def test_promote_types_public():
    assert jnp.promote_types("uint8", int) == np.uint8
    assert jnp.promote_types("float16", float) == np.float16
    assert jnp.promote_types(np.int32, np.float32) == np.float32
    assert jnp.promote_types(jnp.bfloat16, jnp.float16) == np.float32


def test_float8_has_no_implicit_promotion():
    with pytest.raises(dtypes.TypePromotionError, match="no available implicit"):
        jnp.promote_types(dtypes.float8_dtypes[0], np.float16)


def test_float0_and_bfloat16_exist():
    assert pyjax.float0.itemsize == 0
    x = jnp.ones(3, jnp.bfloat16)
    assert x.dtype == dtypes.bfloat16
    assert (x * 2).dtype == dtypes.bfloat16


def test_public_dtypes_module():
    import pyjax.random as jr
    d = pyjax.dtypes
    key = jr.key(0)
    assert jnp.issubdtype(key.dtype, d.prng_key) and jnp.issubdtype(key.dtype, d.extended)
    assert not jnp.issubdtype(key.dtype, jnp.floating)
    assert not jnp.issubdtype(jnp.float32, d.prng_key)
    assert [d.scalar_type_of(x) for x in (True, 1, jnp.ones(2, jnp.bfloat16), 1j)] == \
        [bool, int, float, complex]
    assert [d.itemsize_bits(t) for t in (jnp.int4, jnp.float8_e4m3fn, bool, jnp.float64)] == \
        [4, 8, 8, 64]
    assert d.canonicalize_dtype(np.float64) == np.float32 and d.float0 == pyjax.float0
    with pytest.raises(TypeError, match="not a valid JAX array type"):
        d.scalar_type_of("a")
    assert issubclass(d.TypePromotionError, ValueError)


def test_equal_avals_are_one_object_and_survive_copy_and_pickle():
    import copy
    import pickle

    from pyjax._src.core import avals
    a = avals.ShapedArray([2, 3], np.float32)
    assert a is avals.ShapedArray((2, 3), "float32", weak_type=0)
    assert a is not avals.ShapedArray((2, 3), np.float32, weak_type=True)
    assert copy.copy(a) is a and copy.deepcopy(a) is a and pickle.loads(pickle.dumps(a)) is a
    assert jnp.ones((2, 3)).aval is jnp.zeros((2, 3)).aval
    avals._interned.clear()            # the table is only an accelerator: equality holds
    b = avals.ShapedArray((2, 3), np.float32)
    assert b is not a and b == a and hash(b) == hash(a) and {a: 1}[b] == 1


def test_aval_str_is_short_as_jax():
    from pyjax._src.core import avals
    assert str(avals.ShapedArray((3,), np.float32)) == "float32[3]"
    assert str(avals.ShapedArray((), np.float32, True)) == "~float32[]"
    assert repr(avals.ShapedArray((), np.float32, True)) == \
        "ShapedArray(float32[], weak_type=True)"


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float16", "bfloat16",
                                   "float32", "complex64", "bool"])
def test_eager_scalar_and_unary_fast_paths_type_as_traced_calls(dtype):
    """Eager jnp calls on one Array (unary) or an Array and a Python int/float take short
    paths; under jit the same calls take full promotion. Both must agree on dtype, weak
    type and value (or both raise)."""
    x = jnp.asarray(np.array([0, 1, 3], jnp.dtype(dtype)))
    calls = [lambda x, op=op, s=s: op(x, s) for op in (
        jnp.add, jnp.subtract, jnp.multiply, jnp.true_divide, jnp.floor_divide,
        jnp.remainder, jnp.maximum, jnp.equal, jnp.left_shift) for s in (2, -1, 2.5)]
    calls += [lambda x, op=op, s=s: op(s, x) for op in (jnp.subtract, jnp.true_divide)
              for s in (2, 2.5)]
    calls += [lambda x, op=op: op(x) for op in (
        jnp.sin, jnp.exp, jnp.negative, jnp.square, jnp.sqrt, jnp.floor, jnp.absolute)]
    for call in calls:
        try:
            eager = call(x)
        except (TypeError, OverflowError, ValueError) as err:
            with pytest.raises(type(err)):
                jax.jit(call)(x)
            continue
        traced = jax.jit(call)(x)
        assert (eager.dtype, eager.weak_type) == (traced.dtype, traced.weak_type)
        inexact = dtypes.is_inexact(eager.dtype)   # NumPy and XLA may round differently
        np.testing.assert_allclose(eager, traced,
                                   rtol=2 * float(jnp.finfo(eager.dtype).eps) if inexact else 0)


def test_integers_become_float32_or_float64_by_width_under_x64():
    """JAX 0.10.2 with x64 on: integers and bools of up to 32 bits become float32 where jnp
    needs a float (sin, /, mean, quantile, fft...), 64-bit ones float64; quantile takes
    its input's dtype whatever q's is (observed values)."""
    with pyjax.enable_x64(True):
        i16, i32, i64 = (jnp.arange(3, dtype=d) for d in (jnp.int16, jnp.int32, jnp.int64))
        cases = [
            (jnp.sin(i32), "float32"), (jnp.sin(i64), "float64"), (i32 / 2, "float32"),
            (i64 / i32, "float64"), (jnp.mean(i16), "float32"), (jnp.var(i32), "float32"),
            (jnp.sqrt(jnp.array([True])), "float32"), (jnp.exp(np.int32(2)), "float32"),
            (jnp.median(i32), "float32"), (jnp.fft.fft(i32), "complex64"),
            (jnp.quantile(i32, jnp.array(0.5, jnp.float64)), "float32"),
            (jnp.quantile(jnp.arange(4.0), jnp.array(0.5, jnp.float32)), "float64"),
            (jnp.rint(i32), "float64"), (jnp.linspace(0, 1, 3), "float64"),
        ]
        assert [str(result.dtype) for result, _ in cases] == [want for _, want in cases]
        assert jnp.sin(3).dtype == np.float64 and jnp.sin(3).weak_type


# Recorded from JAX 0.10.2 with x64 off: the only pairs where jnp.promote_types differs
# from x64 on. JAX's x32 lattice joins uint32 and the signed types at int32, so no
# promotion of 32-bit inputs forms a 64-bit type.
@pytest.mark.parametrize("a, b, x32, x64", [
    ("uint32", "int8", "int32", "int64"), ("uint32", "int16", "int32", "int64"),
    ("uint32", "int32", "int32", "int64"), ("int8", "uint32", "int32", "int64"),
    ("uint32", "int64", "int64", "int64"), ("uint32", "uint64", "uint64", "uint64"),
    ("uint64", "int8", "float64", "float64"), ("uint32", float, "float64", "float64"),
])
def test_promote_types_is_canonical_with_x64_off(a, b, x32, x64):
    assert jnp.promote_types(a, b) == np.dtype(x32)
    with pyjax.enable_x64(True):
        assert jnp.promote_types(a, b) == np.dtype(x64)


_UNRELATED = [{"a": 1}, "a,b", None, 1, 1.0, object(), [1], (1,), float, int, "i4,i4",
              "foo", "", b"f4", np.dtype([("a", "f4")])]


@pytest.mark.parametrize("name", ["float32", "float64", "int32", "int64", "uint8",
                                  "bool_", "bfloat16", "complex64"])
def test_scalar_type_comparisons_never_raise(name):
    """JAX's answers (0.10.2): a jnp scalar type equals itself, its NumPy scalar type and
    its np.dtype, and nothing else: not its name as a string, not a Python type, never an
    unrelated object (the array API test suite compares dtypes with anything)."""
    t = getattr(jnp, name)
    same = [t, np.dtype(t.dtype), t.dtype.type, jnp.dtype(t)]
    for other in same:
        assert t == other and other == t and not t != other and not other != t
    for other in _UNRELATED + [name, str(t.dtype), t.dtype.str]:
        assert (t == other) is False and (other == t) is False
        assert (t != other) is True and (other != t) is True
    for other_name in ["float16", "int8", "uint32", "complex128"]:
        other = getattr(jnp, other_name)
        assert t != other and t != np.dtype(other_name) and t != getattr(np, other_name)
    assert hash(t) == hash(t.dtype.type) and {t: 1}.get(t.dtype.type) == 1


def test_scalar_type_reported_by_array_api_fixture_style():
    # The array API suite's reporting fixture does `dtype == x` over arbitrary values.
    assert (jnp.float32 == {"a": 1}) is False
    assert (jnp.float32 == "a,b") is False
    assert (None == jnp.float64) is False   # noqa: E711
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    assert np.dtype("float32") == jnp.float32 and "float32" != jnp.float32


def test_scalar_type_compared_with_an_ndarray_does_not_raise():
    # JAX raises TypeError from NumPy here; pyjax leaves it to the ndarray (elementwise
    # False, what JAX gives for `ndarray == jnp.float32`), as comparisons never raise.
    assert (jnp.float32 == np.ones(3)).tolist() == [False, False, False]
    assert (jnp.float32 != np.ones(3)).tolist() == [True, True, True]


def test_public_bfloat16_is_the_scalar_type():
    # as JAX's jax.dtypes.bfloat16: callable and usable with isinstance (equinox's
    # serialisation and tree_equal use both), and a dtype-like
    import pyjax.dtypes as public_dtypes
    x = public_dtypes.bfloat16(1.5)
    assert isinstance(x, public_dtypes.bfloat16) and float(x) == 1.5
    assert np.dtype(public_dtypes.bfloat16) == dtypes.bfloat16
    assert jnp.zeros(2, public_dtypes.bfloat16).dtype == dtypes.bfloat16
