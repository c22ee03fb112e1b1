"""lax.rng_bit_generator and lax.rng_uniform (pyjax/_src/lax/rng.py): the bits equal those
JAX 0.10.2 gives on CPU (recorded below), eagerly and under jit on both executors; JAX's
vmap rule; dtypes, shapes and the errors for bad input. The uniform harness checks the
rules of rng_bit_generator on its samples."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
from pyjax import lax
from pyjax._src import config
from pyjax._src.core.trace import NO_BATCHING, NOT_DIFFERENTIABLE

EXECUTORS = ["xla", "numpy"] if config.executor.value == "xla" else ["numpy"]
RNG = lax.RandomAlgorithm
MAX = 2 ** 32 - 1

# (key, shape, dtype, algorithm, new key, bits) as JAX 0.10.2 returns them on CPU.
RECORDED = [
    ([1, 2, 3, 4], (4,), np.uint32, "RNG_DEFAULT",
     [1, 2, 4, 4], [512747620, 1298009047, 1267190206, 761827841]),
    ([1, 2, 3, 4], (4,), np.uint32, "RNG_THREE_FRY",
     [1, 2, 5, 4], [1576285164, 2249660814, 740599976, 2425682526]),
    ([1, 2, 3, 4], (5,), np.uint8, "RNG_PHILOX",
     [1, 2, 5, 4], [100, 215, 190, 1, 123]),
    ([1, 2, 3, 4], (5,), np.uint8, "RNG_THREE_FRY",
     [1, 2, 6, 4], [236, 142, 168, 94, 67]),
    ([0x9E3779B9, 42, 5, 0], (3, 5), np.uint32, "RNG_THREE_FRY",
     [0x9E3779B9, 42, 14, 0],
     [[2242203661, 2141997532, 1797899459, 2974552546, 2729783974],
      [1645435185, 1167075967, 3175314593, 1834115764, 3250086992],
      [2634959834, 122786996, 628841713, 4019352605, 1813695945]]),
    ([0x9E3779B9, 42, 5, 0], (2, 3), np.uint16, "RNG_THREE_FRY",
     [0x9E3779B9, 42, 8, 0], [[20493, 50371, 12966], [18908, 4578, 5658]]),
    ([7, 9, MAX - 1, MAX], (6,), np.uint32, "RNG_PHILOX",
     [7, 9, 0, 0], [2623294204, 3104719023, 2440030402, 2316050026, 1280363421, 1514400301]),
    ([7, 9, MAX - 1, MAX], (), np.uint32, "RNG_THREE_FRY", [7, 9, MAX, MAX], 1419901795),
    ([7, 9, MAX - 1, MAX], (), np.uint16, "RNG_PHILOX", [7, 9, MAX, MAX], 19196),
]
# (key, algorithm, new key, bits) of uint64 bits of shape (3,), with x64.
RECORDED_64 = [
    (np.array([1, 2, 3, 4], np.uint32), "RNG_PHILOX",
     [1, 2, 5, 4], [5574906407289874532, 3272025663544478142, 7043725020835825787]),
    (np.array([1, 2, 3, 4], np.uint32), "RNG_THREE_FRY",
     [1, 2, 6, 4], [9662219624799024108, 10418227120389269672, 6433701140276733507]),
    (np.array([5, 2 ** 64 - 1], np.uint64), "RNG_PHILOX",
     [5, 1], [17333022358970737082, 17879676503325561529, 15612657552152258155]),
    (np.array([5, 2 ** 64 - 1], np.uint64), "RNG_THREE_FRY",
     [5, 2], [5699853503226913561, 1356859863320810339, 8853074403113563486]),
]


def _assert_exact(got, key, bits, key_dtype, dtype):
    new_key, values = got
    assert isinstance(new_key, jax.Array) and isinstance(values, jax.Array)
    assert new_key.dtype == key_dtype and values.dtype == dtype
    np.testing.assert_array_equal(np.asarray(new_key), np.array(key, key_dtype))
    np.testing.assert_array_equal(np.asarray(values), np.array(bits, dtype))


@pytest.mark.parametrize("key,shape,dtype,algorithm,new_key,bits", RECORDED)
def test_bits_equal_jax_eagerly_and_under_jit(key, shape, dtype, algorithm, new_key, bits):
    key = np.array(key, np.uint32)
    draw = lambda k: lax.rng_bit_generator(k, shape, dtype, RNG[algorithm])   # noqa: E731
    _assert_exact(draw(key), new_key, bits, np.uint32, dtype)
    for executor in EXECUTORS:
        with config.executor(executor):
            _assert_exact(jax.jit(draw)(key), new_key, bits, np.uint32, dtype)


@pytest.mark.parametrize("key,algorithm,new_key,bits", RECORDED_64)
def test_64_bit_bits_and_keys_equal_jax(key, algorithm, new_key, bits):
    with jax.enable_x64(True):
        draw = lambda k: lax.rng_bit_generator(k, (3,), np.uint64, RNG[algorithm])  # noqa
        _assert_exact(draw(key), new_key, bits, key.dtype, np.uint64)
        for executor in EXECUTORS:
            with config.executor(executor):
                _assert_exact(jax.jit(draw)(key), new_key, bits, key.dtype, np.uint64)


def test_default_algorithm_is_philox_on_cpu_and_the_key_chains():
    key = np.array([3, 1, 4, 1], np.uint32)
    for shape in [(7,), (2, 9), (0, 3)]:
        default = lax.rng_bit_generator(key, shape)
        philox = lax.rng_bit_generator(key, shape, algorithm=RNG.RNG_PHILOX)
        for a, b in zip(default, philox):
            np.testing.assert_array_equal(a, b)
    # Drawing twice from the chained key continues the stream: 4 + 4 words = 8 words.
    key1, first = lax.rng_bit_generator(key, (4,))
    _, second = lax.rng_bit_generator(key1, (4,))
    _, both = lax.rng_bit_generator(key, (8,))
    np.testing.assert_array_equal(np.concatenate([first, second]), both)


def test_algorithm_enum():
    assert [int(a) for a in RNG] == [0, 1, 2]
    assert str(RNG.RNG_PHILOX) == "RNG_PHILOX"
    assert RNG(1) is RNG.RNG_THREE_FRY
    np.testing.assert_array_equal(lax.rng_bit_generator(np.arange(4, dtype=np.uint32), (3,),
                                                        algorithm=1)[1],
                                  lax.rng_bit_generator(np.arange(4, dtype=np.uint32), (3,),
                                                        algorithm=RNG.RNG_THREE_FRY)[1])


def test_jaxpr_and_stablehlo():
    key = np.arange(4, dtype=np.uint32)
    f = lambda k: lax.rng_bit_generator(k, (2, 3), np.uint8, RNG.RNG_THREE_FRY)  # noqa: E731
    eqn = jax.make_jaxpr(f)(key).jaxpr.eqns[0]
    assert eqn.primitive is lax.rng_bit_generator_p
    assert eqn.params == {"shape": (2, 3), "dtype": np.dtype(np.uint8),
                          "algorithm": RNG.RNG_THREE_FRY}
    assert "rng_bit_generator[\n      algorithm=RNG_THREE_FRY\n      dtype=uint8\n      " \
        "shape=(2, 3)\n    ] a" in str(jax.make_jaxpr(f)(key))   # JAX's layout: sorted
    text = jax.jit(f).lower(key).as_text()
    assert "stablehlo.rng_bit_generator %1, algorithm = THREE_FRY : (tensor<2xui64>) -> " \
        "(tensor<2xui64>, tensor<2x3xui8>)" in text   # as JAX prints it


def test_vmap_uses_the_first_key_as_jax_does():
    keys = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], np.uint32)
    f = lambda k: lax.rng_bit_generator(k, (3,))   # noqa: E731
    want_keys = [[1, 2, 6, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
    want_bits = lax.rng_bit_generator(keys[0], (3, 3))[1]
    for new_keys, bits in (jax.vmap(f)(keys), jax.jit(jax.vmap(f))(keys),
                           jax.vmap(f, in_axes=1)(keys.T)):
        np.testing.assert_array_equal(new_keys, want_keys)
        np.testing.assert_array_equal(bits, want_bits)
    # An unmapped key draws once and the results broadcast; no examples, no bits.
    new_keys, bits = jax.vmap(lambda _: f(keys[0]))(np.zeros(2))
    np.testing.assert_array_equal(new_keys, [[1, 2, 4, 4]] * 2)
    np.testing.assert_array_equal(bits, [lax.rng_bit_generator(keys[0], (3,))[1]] * 2)
    new_keys, bits = jax.vmap(f)(keys[:0])
    assert new_keys.shape == (0, 4) and bits.shape == (0, 3)


def test_no_derivative_and_integer_tangents():
    assert lax.rng_bit_generator_p.jvp is NOT_DIFFERENTIABLE
    key = np.arange(4, dtype=np.uint32)
    f = lambda k: lax.rng_bit_generator(k, (3,))   # noqa: E731
    _, tangents = jax.jvp(f, (key,), (np.zeros(4, jax.float0),))
    assert [t.dtype for t in tangents] == [jax.float0] * 2
    assert [t.shape for t in tangents] == [(4,), (3,)]


def test_bad_inputs_raise_clear_errors():
    key = np.arange(4, dtype=np.uint32)
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        lax.rng_bit_generator(key, (3,), np.int32)
    with pytest.raises(TypeError, match="unsupported dtype float32"):
        lax.rng_bit_generator(key, (3,), np.float32)
    with pytest.raises(TypeError, match="uint32\\[4\\]"):
        lax.rng_bit_generator(key[:3], (3,))
    with pytest.raises(TypeError, match="uint32\\[4\\]"):
        lax.rng_bit_generator(key.astype(np.int32), (3,))
    with pytest.raises(ValueError, match="RandomAlgorithm"):
        lax.rng_bit_generator(key, (3,), algorithm="RNG_PHILOX")
    with pytest.raises(TypeError, match="negative"):   # JAX: an MLIR error
        lax.rng_bit_generator(key, (-1,))
    with pytest.raises(TypeError, match="integer"):
        lax.rng_bit_generator(key, (2.0,))
    # Without x64, uint64 bits are uint32 bits, as in JAX.
    _, bits = lax.rng_bit_generator(key, (3,), np.uint64)
    assert bits.dtype == np.uint32


# --- rng_uniform: a stateful generator -------------------------------------------------------

@pytest.mark.parametrize("executor", EXECUTORS)
def test_rng_uniform_draws_anew_in_range(executor):
    lo, hi = np.float32(2), np.float32(3)
    with config.executor(executor):
        jitted = jax.jit(lambda a, b: lax.rng_uniform(a, b, (2000,)))
        for draw in (lambda: lax.rng_uniform(lo, hi, (2000,)), lambda: jitted(lo, hi)):
            first, again = np.asarray(draw()), np.asarray(draw())
            assert first.dtype == np.float32 and first.shape == (2000,)
            assert 2 <= first.min() and first.max() < 3 and not np.array_equal(first, again)
        ints = np.asarray(jax.jit(lambda: lax.rng_uniform(np.int32(-3), np.int32(3), (500,)))())
        assert ints.dtype == np.int32 and set(np.unique(ints)) <= set(range(-3, 3))
        assert set(np.unique(lax.rng_uniform(np.int32(-3), np.int32(3), (500,)))) == \
            set(range(-3, 3))
        half = np.asarray(lax.rng_uniform(np.float16(0), np.float16(1), (500,)))
        assert half.dtype == np.float16 and 0 <= half.min() and half.max() < 1


def test_rng_uniform_types_jaxpr_and_stablehlo():
    out = jax.eval_shape(lambda: lax.rng_uniform(0.0, 1.0, [2, 2]))
    assert out.shape == (2, 2) and out.dtype == np.float32 and out.weak_type
    assert not jax.eval_shape(lambda: lax.rng_uniform(np.float32(0), 1.0, (2,))).weak_type
    assert lax.rng_uniform(0.0, 1.0, ()).shape == ()
    lo, hi = np.float32(0), np.float32(1)
    assert "rng_uniform[shape=(3,)]" in str(jax.make_jaxpr(
        lambda a, b: lax.rng_uniform(a, b, (3,)))(lo, hi))
    text = jax.jit(lambda a, b: lax.rng_uniform(a, b, (3,))).lower(lo, hi).as_text()
    assert "stablehlo.rng %arg0, %arg1, %c, distribution = UNIFORM : (tensor<f32>, " \
        "tensor<f32>, tensor<1xi64>) -> tensor<3xf32>" in text   # as JAX prints it


def test_rng_uniform_errors_and_absent_rules():
    with pytest.raises(ValueError, match="identical dtypes"):
        lax.rng_uniform(np.float32(0), np.int32(1), (3,))
    with pytest.raises(ValueError, match="scalars"):
        lax.rng_uniform(np.zeros(2, np.float32), np.float32(1), (3,))
    for lo, hi in [(np.int8(0), np.int8(5)), (True, True),
                   (np.complex64(0), np.complex64(1))]:
        with pytest.raises(TypeError, match="does not accept dtype"):
            lax.rng_uniform(lo, hi, (3,))
    assert lax.rng_uniform_p.jvp is NOT_DIFFERENTIABLE
    assert lax.rng_uniform_p.batch is NO_BATCHING
    with pytest.raises(NotImplementedError, match="jvp"):
        jax.jvp(lambda a: lax.rng_uniform(a, 1.0, (3,)), (0.0,), (1.0,))
    with pytest.raises(NotImplementedError, match="batch"):
        jax.vmap(lambda a: lax.rng_uniform(a, 1.0, (3,)))(np.zeros(2, np.float32))
