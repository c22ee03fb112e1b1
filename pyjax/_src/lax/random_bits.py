"""The counter-based random bit generator: the Threefry-2x32 block cipher (Salmon et al.,
"Parallel random numbers: as easy as 1, 2, 3", SC 2011) as the primitive `threefry2x32`,
and the key operations built on it (seed, split, fold_in, raw bits) that jax.random uses.
Keys here are raw uint32 arrays of shape (..., 2). Imports core, interpreters and lax."""
from __future__ import annotations

import math

import numpy as np

from pyjax._src import config, dtypes
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.lax import builders as b
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import slicing, structural
from pyjax._src.shape_poly import is_symbolic_dim

UINT32 = np.dtype(np.uint32)
# Threefry-2x32 rotation constants, used four rounds at a time, alternating.
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
# The key-schedule parity constant of Threefish/Threefry.
KEY_PARITY = 0x1BD11BDA


def _threefry_injection(x0, x1, rotations, k_a, k_b, count, add, rotl, xor):
    """Four rounds with the rotation amounts `rotations`, then one key injection
    (k_a into the first word, k_b + count into the second). Written once for NumPy and
    for StableHLO: `add`, `rotl`, `xor` act on values."""
    for r in rotations:
        x0 = add(x0, x1)
        x1 = xor(rotl(x1, r), x0)
    return add(x0, k_a), add(add(x1, k_b), count)


def threefry2x32_numpy(k1, k2, x1, x2):
    """Threefry-2x32 on NumPy uint32 arrays (broadcast together); wraps modulo 2**32."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in (k1, k2, x1, x2)))
    k1, k2, x1, x2 = (np.broadcast_to(np.asarray(a, UINT32), shape).reshape(-1)
                      for a in (k1, k2, x1, x2))

    def rotl(v, r):
        return (v << np.uint32(r)) | (v >> np.uint32(32 - r))

    with np.errstate(over="ignore"):
        ks = (k1, k2, k1 ^ k2 ^ np.uint32(KEY_PARITY))
        y1, y2 = x1 + ks[0], x2 + ks[1]
        for i in range(5):
            y1, y2 = _threefry_injection(y1, y2, ROTATIONS[i % 2], ks[(i + 1) % 3],
                                         ks[(i + 2) % 3], np.uint32(i + 1), np.add, rotl,
                                         np.bitwise_xor)
    return [y1.reshape(shape), y2.reshape(shape)]


def _threefry_abstract_eval(k1, k2, x1, x2):
    for a in (k1, k2, x1, x2):
        if a.dtype != UINT32:
            raise TypeError("threefry2x32 requires uint32 arguments, got "
                            f"{[str(x.dtype) for x in (k1, k2, x1, x2)]}")
    shape = b.broadcasting_shape("threefry2x32", k1.shape, k2.shape, x1.shape, x2.shape)
    return [ShapedArray(shape, UINT32)] * 2


def _threefry_lower(ctx, k1, k2, x1, x2):
    """A stablehlo.while over the five key injections (as JAX lowers it on CPU), with the
    two words packed into one uint64 per element. Unrolled, the 20 rounds are elementwise
    ops that XLA copies into every fusion reading the result: a concatenate of 100 slices
    of one bernoulli sample then compiled for minutes. The loop computes the words once;
    packed, each injection is one fused kernel that updates the state in place."""
    shape = ctx.avals_out[0].shape
    wide = np.dtype(np.uint64)
    word = ShapedArray(shape, UINT32)
    index = ShapedArray((), np.int32)

    def pack(c, y1, y2):
        high = c.binary("stablehlo.shift_left", c.convert(y1, wide), c.full(32, (), wide))
        return c.binary("stablehlo.or", high, c.convert(y2, wide))

    def unpack(c, x):
        high = c.binary("stablehlo.shift_right_logical", x, c.full(32, (), wide))
        return c.convert(high, UINT32), c.convert(x, UINT32)

    def rotl(c, v, r):
        left = c.binary("stablehlo.shift_left", v, r)
        return c.binary("stablehlo.or", left, c.binary(
            "stablehlo.shift_right_logical", v, c.binary("stablehlo.subtract",
                                                         c.full(32, (), UINT32), r)))

    def cond(c, i, *state):
        return c.compare(i, c.full(5, (), np.int32), "LT")

    def body(c, i, x, k_prev, k_a, k_b):
        # Injection i uses rotations ROTATIONS[i % 2]; the keys rotate through the state.
        odd = c.compare(c.binary("stablehlo.and", i, c.full(1, (), np.int32)),
                        c.full(1, (), np.int32), "EQ")
        rotations = [c.select(odd, c.full(r1, (), UINT32), c.full(r0, (), UINT32))
                     for r0, r1 in zip(*ROTATIONS)]
        i = c.binary("stablehlo.add", i, c.full(1, (), np.int32))
        y1, y2 = _threefry_injection(
            *unpack(c, x), rotations, k_a, k_b, c.convert(i, UINT32),
            lambda u, v: c.binary("stablehlo.add", u, v), lambda v, r: rotl(c, v, r),
            lambda u, v: c.binary("stablehlo.xor", u, v))
        return [i, pack(c, y1, y2), k_a, k_b, k_prev]

    # Scalar keys stay scalars in the loop state; batched ones take the output shape.
    k1, k2 = (k if k.aval.ndim == 0 else ctx.broadcast(k, shape) for k in (k1, k2))
    k3 = ctx.binary("stablehlo.xor", ctx.binary("stablehlo.xor", k1, k2),
                    ctx.full(KEY_PARITY, (), UINT32))
    x1, x2 = (ctx.binary("stablehlo.add", ctx.broadcast(x, shape), k)
              for x, k in ((x1, k1), (x2, k2)))
    avals = [index, word.update(dtype=wide), k1.aval, k2.aval, k3.aval]
    _, x, *_ = ctx.op("stablehlo.while", [ctx.full(0, (), np.int32), pack(ctx, x1, x2),
                                          k1, k2, k3], avals,
                      regions=[ctx.region(avals, cond), ctx.region(avals, body)])
    return list(unpack(ctx, x))


def _make_threefry_batch(prim):
    elementwise = batching.elementwise_rule.make(prim)

    def rule(args, dims):
        outs, dim = elementwise(args, dims)
        return outs, [dim, dim]
    return rule


def _threefry_samples():
    rng = np.random.default_rng(0)
    words = rng.integers(0, 2 ** 32, size=(4, 5), dtype=np.uint64).astype(UINT32)
    return [b.Sample([words[0, :3], words[1, :3], words[2, :3], words[3, :3]]),
            b.Sample([np.uint32(7), np.uint32(11), words[2].reshape(1, 5),
                      words[3].reshape(1, 5)])]


threefry2x32_p = define_primitive(
    "threefry2x32", multiple_results=True, impl=threefry2x32_numpy,
    abstract_eval=_threefry_abstract_eval, jvp=ad.zero_jvp,
    batch=batching.RuleFactory(_make_threefry_batch), lower=_threefry_lower,
    samples=lambda: _threefry_samples())


def threefry2x32(k1, k2, x1, x2):
    """The Threefry-2x32 hash of counters (x1, x2) under key (k1, k2), all uint32."""
    return threefry2x32_p.bind(k1, k2, x1, x2)


# --- raw keys: uint32[..., 2] --------------------------------------------------------------

def _key_words(key):
    """The two uint32 words of one raw key of shape (2,)."""
    return (structural.reshape(slicing.slice(key, (0,), (1,)), ()),
            structural.reshape(slicing.slice(key, (1,), (2,)), ()))


def seed_key(seed):
    """The raw key of an integer seed: [high 32 bits, low 32 bits] of its value as a 64-bit
    integer when x64 is on, else [0, value modulo 2**32] (negative seeds wrap)."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        if not -2 ** 63 <= int(seed) < 2 ** 63:
            raise OverflowError(f"PRNG key seed {int(seed)} does not fit in a 64-bit signed "
                                "integer; use a seed in [-2**63, 2**63).")
        value = int(seed) % (2 ** 64 if dtypes.x64_enabled() else 2 ** 32)
        return np.array([value >> 32, value & 0xFFFFFFFF], UINT32)
    aval = get_aval(seed)
    if aval.shape:
        raise TypeError(f"PRNG key seed must be a scalar; got an array of shape "
                        f"{aval.shape}. Use jax.vmap to make several keys.")
    if aval.dtype.kind not in "iu":
        raise TypeError(f"PRNG key seed must be an integer; got dtype {aval.dtype}.")
    if aval.dtype.itemsize == 8:
        wide = ew.bitcast_convert_type(seed, np.uint64) if aval.dtype.kind == "i" else seed
        hi = ew.convert_element_type(ew.shift_right_logical(wide, np.uint64(32)), UINT32)
        lo = ew.convert_element_type(ew.bitwise_and(wide, np.uint64(0xFFFFFFFF)), UINT32)
    else:
        if aval.dtype.kind == "i":   # sign-extend, then reinterpret: -1 -> 0xFFFFFFFF
            lo = ew.bitcast_convert_type(ew.convert_element_type(seed, np.int32), UINT32)
        else:
            lo = ew.convert_element_type(seed, UINT32)
        hi = np.zeros((), UINT32)
    return structural.concatenate([structural.reshape(hi, (1,)),
                                   structural.reshape(lo, (1,))], 0)


def threefry_hash(key, count):
    """Threefry of a flat uint32 `count` array under one raw key."""
    k1, k2 = _key_words(key)
    return _threefry_flat(k1, k2, count)


def threefry_2x32(keypair, count):
    """The Threefry-2x32 hash of the uint32 array `count` under the key (k1, k2) of
    uint32 scalars: a uint32 array of count's shape (jax.extend.random's)."""
    k1, k2 = keypair
    kinds = [np.dtype(get_aval(x).dtype) for x in (k1, k2, count)]
    if any(d != UINT32 for d in kinds):
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got {kinds}")
    shape = get_aval(count).shape
    flat = structural.reshape(count, (math.prod(shape),))
    return structural.reshape(_threefry_flat(k1, k2, flat), shape)


def _threefry_flat(k1, k2, count):
    """Threefry of a flat uint32 `count` array under the key words (k1, k2): the counts
    are split into two halves (padded to even length) that form the cipher's two words."""
    n = get_aval(count).shape[0]
    if n % 2:
        count = structural.concatenate([count, np.zeros((1,), UINT32)], 0)
    half = (n + 1) // 2
    x1 = slicing.slice(count, (0,), (half,))
    x2 = slicing.slice(count, (half,), (2 * half,))
    y1, y2 = threefry2x32_p.bind(k1, k2, x1, x2)
    out = structural.concatenate([y1, y2], 0)
    return slicing.slice(out, (0,), (n,)) if n % 2 else out


def _uint64(x):
    """x as uint64, also while x64 is off (the index arithmetic of huge arrays needs it,
    as JAX computes it)."""
    return ew.convert_element_type_p.bind(x, new_dtype=np.dtype(np.uint64), weak_type=False)


def _uint64_constant(value):
    high, low = divmod(value, 2 ** 32)
    return ew.bitwise_or(ew.shift_left(_uint64(np.uint32(high)), _uint64(np.uint32(32))),
                         _uint64(np.uint32(low)))


def iota_2x32(shape):
    """The row-major index of every element of `shape`, as (high, low) uint32 words."""
    size = math.prod(shape)
    if not shape:
        zero = np.zeros((), UINT32)
        return zero, zero
    if not is_symbolic_dim(size) and size < 2 ** 32:
        low = structural.reshape(structural.iota(UINT32, size), tuple(shape))
        return structural.full(shape, 0, UINT32), low
    return wide_iota_2x32(shape)


def wide_iota_2x32(shape):
    """iota_2x32 for 2**32 elements or more, or a symbolic count (jax.export): each
    dimension's index times its stride, summed in 64 bits."""
    index = None
    for dim in range(len(shape)):
        stride = math.prod(shape[dim + 1:])
        stride = _uint64(structural.dim_as_value(stride)) if is_symbolic_dim(stride) \
            else _uint64_constant(stride)
        term = ew.mul(_uint64(structural.broadcasted_iota(UINT32, shape, dim)), stride)
        index = term if index is None else ew.add(index, term)
    high = ew.shift_right_logical(index, _uint64_constant(32))
    return (ew.convert_element_type(high, UINT32), ew.convert_element_type(index, UINT32))


def split_key(key, shape):
    """Raw keys of `shape` derived from one raw key (JAX's partitionable split: each new
    key is the cipher of its own index; with jax_threefry_partitionable off, the original
    scheme: the cipher of the counts 0..2n-1, paired up)."""
    if not config.threefry_partitionable.value:
        num = math.prod(shape)
        counts = structural.iota(UINT32, 2 * num)
        return structural.reshape(threefry_hash(key, counts), tuple(shape) + (2,))
    k1, k2 = _key_words(key)
    hi, lo = iota_2x32(tuple(shape))
    y1, y2 = threefry2x32_p.bind(k1, k2, hi, lo)
    return structural.concatenate([structural.expand_dims(y1, (len(shape),)),
                                   structural.expand_dims(y2, (len(shape),))], len(shape))


def fold_in_key(key, data):
    """A new raw key from one raw key and a uint32 scalar."""
    return threefry_hash(key, seed_key(ew.convert_element_type(data, UINT32)))


def join_words(high, low):
    """high << 32 | low as uint64: 64-bit random bits, which need jax_enable_x64 or
    jax_explicit_x64_dtypes='allow' (then they stay 64-bit without x64, as in JAX)."""
    wide = np.dtype(np.uint64)
    if dtypes.canonicalize_dtype(wide) != wide and \
            config.explicit_x64_dtypes.value != config.ExplicitX64Mode.ALLOW:
        raise TypeError("64-bit random bits need 64-bit types: enable them with "
                        "jax.config.update('jax_enable_x64', True).")
    high, low, shift = (ew.convert_element_type_p.bind(w, new_dtype=wide, weak_type=False)
                        for w in (high, low, np.uint32(32)))
    return ew.bitwise_or(ew.shift_left(high, shift), low)


def random_bits(key, bit_width, shape):
    """Uniform random bits of `shape` as unsigned integers of `bit_width` bits."""
    if bit_width not in (8, 16, 32, 64):
        raise TypeError(f"random_bits requires a bit width of 8, 16, 32 or 64, "
                        f"got {bit_width}")
    if not config.threefry_partitionable.value:
        return _original_random_bits(key, bit_width, tuple(shape))
    k1, k2 = _key_words(key)
    hi, lo = iota_2x32(tuple(shape))
    y1, y2 = threefry2x32_p.bind(k1, k2, hi, lo)
    if bit_width == 64:
        return join_words(y1, y2)
    bits = ew.bitwise_xor(y1, y2)
    if bit_width == 32:
        return bits
    return ew.convert_element_type(bits, np.dtype(f"uint{bit_width}"))


def _original_random_bits(key, bit_width, shape):
    """The original (non-partitionable) scheme: the cipher of the counts 0..m-1, with m
    the number of 32-bit words the bits need, cut into the requested width."""
    size = math.prod(shape)
    words = -(-bit_width * size // 32)
    if words >= 2 ** 32 - 1:
        raise NotImplementedError(f"random arrays of {size} elements need more than 2**32 "
                                  "words; generate them in pieces with split keys.")
    bits = threefry_hash(key, structural.iota(UINT32, words)) if words else \
        structural.full((0,), 0, UINT32)
    if bit_width == 64:
        half = words // 2
        bits = join_words(slicing.slice(bits, (0,), (half,)),
                          slicing.slice(bits, (half,), (words,)))
    elif bit_width < 32:   # each word gives 32 // bit_width values, low bits first
        per = 32 // bit_width
        shifts = structural.broadcasted_iota(UINT32, (per, 1), 0)
        spread = ew.shift_right_logical(structural.broadcast(bits, (1,)),
                                        ew.mul(np.full((per, 1), bit_width, UINT32), shifts))
        spread = ew.bitwise_and(spread, np.uint32(2 ** bit_width - 1))
        flat = structural.reshape(structural.transpose(spread, (1, 0)), (words * per,))
        bits = slicing.slice(ew.convert_element_type(flat, np.dtype(f"uint{bit_width}")),
                             (0,), (size,))
    return structural.reshape(bits, shape)


__all__ = ["threefry2x32_p", "threefry2x32", "threefry_2x32", "threefry2x32_numpy", "seed_key",
           "split_key", "fold_in_key", "random_bits", "threefry_hash", "iota_2x32"]
