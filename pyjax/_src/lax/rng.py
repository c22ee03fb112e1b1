"""XLA's own random-number operations: `rng_bit_generator` (stateless: random bits and a
new state from a key, by the Threefry-2x32 or Philox-4x32 counter-based generator laid out
exactly as XLA's RngBitGenerator lays them out, so the NumPy impl gives XLA's bits) and
`rng_uniform` (stateful: every call draws new numbers). Imports core, interpreters and the
lax families."""
from __future__ import annotations

import enum
import math

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import NO_BATCHING, NOT_DIFFERENTIABLE, define_primitive, no_samples
from pyjax._src.interpreters import batching
from pyjax._src.lax import builders as b
from pyjax._src.lax import sharding_rules, slicing, structural
from pyjax._src.lax.random_bits import threefry2x32_numpy
from pyjax._src.lax.sharding_constraint import apply_out_sharding
from pyjax._src.util import canonicalize_shape

UINT32, UINT64 = np.dtype(np.uint32), np.dtype(np.uint64)
_BIT_DTYPES = tuple(np.dtype(f"uint{n}") for n in (8, 16, 32, 64))


class RandomAlgorithm(enum.IntEnum):
    """The generator of lax.rng_bit_generator: the platform's default (Philox on CPU),
    Threefry-2x32 or Philox-4x32."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


_HLO_ALGORITHMS = {RandomAlgorithm.RNG_DEFAULT: "DEFAULT",
                   RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
                   RandomAlgorithm.RNG_PHILOX: "PHILOX"}


# --- the generators, on NumPy values ---------------------------------------------------------
# The state is two uint64 words (s0, s1): s0 is the cipher key, s1 a counter that each call
# advances by the number of cipher blocks it used. Philox counts in 128 bits, s0 being the
# counter's high half, so a carry out of s1 reaches the counter but never the state.

def _low(x):
    return x.astype(UINT32)


def _high(x):
    return (x >> np.uint64(32)).astype(UINT32)


def _philox4x32(x0, x1, x2, x3, k0, k1):
    """Philox-4x32 with 10 rounds (Salmon et al., "Parallel random numbers: as easy as 1,
    2, 3", SC 2011) on four uint32 word arrays under the key (k0, k1)."""
    for _ in range(10):
        p0 = x0.astype(UINT64) * np.uint64(0xD2511F53)
        p1 = x2.astype(UINT64) * np.uint64(0xCD9E8D57)
        x0, x1, x2, x3 = _high(p1) ^ x1 ^ k0, _low(p1), _high(p0) ^ x3 ^ k1, _low(p0)
        k0, k1 = k0 + np.uint32(0x9E3779B9), k1 + np.uint32(0xBB67AE85)
    return x0, x1, x2, x3


def _philox_words(s0, s1, count):
    """The first `count` 32-bit words from state (s0, s1): block i enciphers the counter
    s0 * 2**64 + s1 + i under the key s0, and the blocks' four words follow one another."""
    blocks = -(-count // 4)
    low = s1 + np.arange(blocks, dtype=UINT64)
    high = np.where(low < s1, s0 + np.uint64(1), s0)
    words = _philox4x32(_low(low), _high(low), _low(high), _high(high), _low(s0), _high(s0))
    return np.stack(words, axis=1).reshape(-1)[:count], s1 + np.uint64(blocks)


def _philox_bits(s0, s1, shape, dtype):
    size = math.prod(shape)
    if dtype.itemsize == 8:   # two consecutive words per element, low word first
        words, s1 = _philox_words(s0, s1, 2 * size)
        bits = words[0::2].astype(UINT64) | (words[1::2].astype(UINT64) << np.uint64(32))
    else:                     # one word per element; narrower types keep its low bits
        words, s1 = _philox_words(s0, s1, size)
        bits = words.astype(dtype)
    return bits.reshape(shape), s1


def _threefry(s0, counters):
    return threefry2x32_numpy(_low(s0), _high(s0), _low(counters), _high(counters))


def _threefry_bits(s0, s1, shape, dtype):
    """Block i enciphers the counter s1 + i under the key s0. A 64-bit element takes one
    block's two words; narrower elements pair up along one dimension (the first of even
    size, else the first longest), the block's two words being two neighbours there."""
    if dtype.itemsize == 8:
        size = math.prod(shape)
        y0, y1 = _threefry(s0, s1 + np.arange(size, dtype=UINT64))
        bits = y0.astype(UINT64) | (y1.astype(UINT64) << np.uint64(32))
        return bits.reshape(shape), s1 + np.uint64(size)
    dims = shape or (1,)
    even = [i for i, d in enumerate(dims) if d % 2 == 0]
    axis = even[0] if even else dims.index(max(dims))
    pairs = -(-dims[axis] // 2)
    half = dims[:axis] + (pairs, 1) + dims[axis + 1:]
    y0, y1 = _threefry(s0, s1 + np.arange(math.prod(half), dtype=UINT64).reshape(half))
    both = np.concatenate([y0, y1], axis + 1).reshape(dims[:axis] + (2 * pairs,) + dims[axis + 1:])
    bits = np.take(both, np.arange(dims[axis]), axis)
    return bits.astype(dtype).reshape(shape), s1 + np.uint64(math.prod(half))


def _rbg_impl(key, *, shape, dtype, algorithm):
    if key.dtype == UINT32:   # two uint64 words as four uint32, low half first
        wide = key.astype(UINT64)
        s0, s1 = wide[0] | (wide[1] << np.uint64(32)), wide[2] | (wide[3] << np.uint64(32))
    else:
        s0, s1 = key[0], key[1]
    generate = _threefry_bits if algorithm == RandomAlgorithm.RNG_THREE_FRY else _philox_bits
    with np.errstate(over="ignore"):
        bits, s1 = generate(s0, s1, tuple(shape), np.dtype(dtype))
    if key.dtype == UINT32:
        new_key = np.array([_low(s0), _high(s0), _low(s1), _high(s1)], UINT32)
    else:
        new_key = np.array([s0, s1], UINT64)
    return [new_key, bits]


# --- rng_bit_generator -----------------------------------------------------------------------

def _rbg_abstract_eval(key, *, shape, dtype, algorithm):
    if (key.shape, key.dtype) not in (((4,), UINT32), ((2,), UINT64)):
        raise TypeError(f"rng_bit_generator needs a key of type uint32[4] (or uint64[2] "
                        f"with jax_enable_x64), got {key.str_short(True)}.")
    if np.dtype(dtype) not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype).name}; "
                        "use uint8, uint16, uint32 or uint64.")
    return [ShapedArray(key.shape, key.dtype, key.weak_type), ShapedArray(shape, dtype)]


def _rbg_lower(ctx, key, *, shape, dtype, algorithm):
    """stablehlo.rng_bit_generator on the state as uint64[2] (a uint32[4] key is
    reinterpreted)."""
    state_aval = ShapedArray((2,), UINT64)
    as_words = key.aval.dtype == UINT32
    state = ctx.op("stablehlo.bitcast_convert", [ctx.reshape(key, (2, 2))], state_aval) \
        if as_words else key
    new_state, bits = ctx.op(
        "stablehlo.rng_bit_generator", [state], [state_aval, ctx.avals_out[1]],
        {"rng_algorithm": f"#stablehlo<rng_algorithm {_HLO_ALGORITHMS[algorithm]}>"})
    if as_words:
        new_state = ctx.reshape(ctx.op("stablehlo.bitcast_convert", [new_state],
                                       ShapedArray((2, 2), UINT32)), (4,))
    return [new_state, bits]


def _rbg_batch(args, dims, *, shape, dtype, algorithm):
    """JAX's rule, not a loop over the keys: every example's bits come from the first
    key, in one draw of shape (batch, *shape), and only that key advances."""
    (keys,), (dim,) = args, dims
    params = dict(shape=shape, dtype=dtype, algorithm=algorithm)
    if dim is None:
        return rng_bit_generator_p.bind(keys, **params), [None, None]
    keys = batching.moveaxis(keys, dim, 0)
    size, width = get_aval(keys).shape
    if size == 0:
        return [keys, structural.full((0,) + shape, 0, dtype)], [0, 0]
    first = structural.reshape(slicing.slice(keys, (0, 0), (1, width)), (width,))
    new_first, bits = rng_bit_generator_p.bind(first, **{**params, "shape": (size,) + shape})
    rest = slicing.slice(keys, (1, 0), (size, width))
    new_keys = structural.concatenate([structural.reshape(new_first, (1, width)), rest], 0)
    return [new_keys, bits], [0, 0]


def _rbg_samples():
    keys = np.array([[1, 2, 3, 4], [0xFFFFFFFF, 7, 0xFFFFFFFE, 0xFFFFFFFF],
                     [0x9E3779B9, 42, 5, 0]], UINT32)
    return [b.Sample([keys[0]], {"shape": (5,), "dtype": UINT32,
                                 "algorithm": RandomAlgorithm.RNG_DEFAULT}),
            b.Sample([keys[1]], {"shape": (2, 3), "dtype": np.dtype(np.uint8),
                                 "algorithm": RandomAlgorithm.RNG_PHILOX}),
            b.Sample([keys[2]], {"shape": (3, 5), "dtype": UINT32,
                                 "algorithm": RandomAlgorithm.RNG_THREE_FRY}),
            b.Sample([keys[1]], {"shape": (), "dtype": np.dtype(np.uint16),
                                 "algorithm": RandomAlgorithm.RNG_THREE_FRY})]


def _rbg_sharding(outs, key, **params):
    """The new key split as the key; the bits whole on every device (out_sharding=
    splits them afterwards)."""
    return [sharding_rules.entries(key), (None,) * len(outs[1].shape)]


rng_bit_generator_p = define_primitive(
    "rng_bit_generator", multiple_results=True, impl=_rbg_impl,
    abstract_eval=sharding_rules.typed(_rbg_abstract_eval, _rbg_sharding),
    jvp=NOT_DIFFERENTIABLE, batch=_rbg_batch, lower=_rbg_lower, samples=_rbg_samples)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
    """Random bits of `shape` and unsigned `dtype` from `key` (uint32[4], or uint64[2]
    with x64), by XLA's RngBitGenerator: returns (new_key, bits). jax.random is the
    stable, portable API; this one exposes the XLA operation."""
    shape = canonicalize_shape(shape, "rng_bit_generator")
    # 64-bit without x64: warn and truncate, raise or keep, as jax_explicit_x64_dtypes
    # says (the abstract eval checks it is unsigned)
    dtype = dtypes.check_user_dtype(dtype, "rng_bit_generator")
    try:
        algorithm = RandomAlgorithm(algorithm)
    except ValueError:
        raise ValueError(f"rng_bit_generator: algorithm must be a lax.RandomAlgorithm, got "
                         f"{algorithm!r}.") from None
    new_key, bits = rng_bit_generator_p.bind(key, shape=shape, dtype=dtype,
                                             algorithm=algorithm)
    return new_key, apply_out_sharding(bits, out_sharding, "rng_bit_generator")


# --- rng_uniform -----------------------------------------------------------------------------

_UNIFORM_INTS = tuple(np.dtype(t) for t in (np.int32, np.uint32, np.int64, np.uint64))
_UNIFORM_FLOATS = (np.dtype(np.float16), np.dtype(dtypes.bfloat16), np.dtype(np.float32),
                   np.dtype(np.float64))
_generators = []   # the one stateful generator, made on first use


def _rng_uniform_abstract_eval(a, b, *, shape):
    if a.dtype != b.dtype:
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got "
                         f"{a.dtype.name} and {b.dtype.name}.")
    if a.shape or b.shape:
        raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes {a.shape} "
                         f"and {b.shape}.")
    if a.dtype not in _UNIFORM_INTS + _UNIFORM_FLOATS:
        raise TypeError(f"rng_uniform does not accept dtype {a.dtype.name}: XLA draws "
                        "float16, bfloat16, float32, float64 or 32- and 64-bit integers.")
    return ShapedArray(shape, a.dtype, a.weak_type and b.weak_type)


def _rng_uniform_impl(a, b, *, shape):
    """Floats: a + (b - a) u with u on a grid of [0, 1) fine as the mantissa; integers:
    a plus random bits modulo the width b - a (wrapping, as for b <= a in XLA)."""
    if not _generators:
        _generators.append(np.random.default_rng())
    rng, dtype = _generators[0], a.dtype
    if dtype.kind in "iu":
        unsigned = np.dtype(f"uint{8 * dtype.itemsize}")
        width = (b.astype(unsigned) - a.astype(unsigned)) if b != a else unsigned.type(1)
        bits = rng.integers(0, np.iinfo(unsigned).max, shape, unsigned, endpoint=True)
        with np.errstate(over="ignore"):
            return (a.astype(unsigned) + bits % width).astype(dtype)
    mantissa = dtypes.finfo(dtype).nmant
    unit = (rng.integers(0, 2 ** mantissa, shape) * 2.0 ** -mantissa).astype(dtype)
    return (unit * (b - a) + a).astype(dtype)


def _rng_uniform_lower(ctx, a, b, *, shape):
    dims = ctx.constant(np.array(shape, np.int64))
    return ctx.op("stablehlo.rng", [a, b, dims], ctx.avals_out[0].strip_weak_type(),
                  {"rng_distribution": "#stablehlo<rng_distribution UNIFORM>"})


rng_uniform_p = define_primitive(
    "rng_uniform", impl=_rng_uniform_impl, abstract_eval=_rng_uniform_abstract_eval,
    jvp=NOT_DIFFERENTIABLE, batch=NO_BATCHING, lower=_rng_uniform_lower,
    samples=no_samples("its results are fresh random draws on every call, so no two "
                       "executions agree"))


def rng_uniform(a, b, shape):
    """Uniform random numbers in [a, b) of `shape` from a stateful generator (each call
    draws anew; b <= a gives unspecified values). jax.random is the reproducible API."""
    return rng_uniform_p.bind(a, b, shape=canonicalize_shape(shape, "rng_uniform"))


__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_bit_generator_p", "rng_uniform",
           "rng_uniform_p"]
