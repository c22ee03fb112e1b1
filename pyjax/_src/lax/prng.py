"""The PRNG implementations a jax.random key can use, as JAX 0.10.2 defines them: each is
a PRNGImpl of four operations on raw uint32 key data (seed, split, fold_in, random_bits)
and the key data's shape. threefry2x32 is the default; rbg and unsafe_rbg draw their bits
with XLA's RngBitGenerator (fast, but their values may change across backends and XLA
versions, as in JAX); philox2x32, philox4x32 and threefry4x32 are Random123's other
counter-based generators. Imports lax only."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from pyjax._src.core.avals import get_aval
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import random_bits as rb
from pyjax._src.lax import slicing
from pyjax._src.lax import structural as st
from pyjax._src.lax.precision_ops import mulhi
from pyjax._src.lax.rng import rng_bit_generator

UINT32 = np.dtype(np.uint32)
UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: UINT32,
               64: np.dtype(np.uint64)}


class PRNGImpl(NamedTuple):
    """A PRNG implementation: key data of shape `key_shape` (uint32), and
    seed(int[]) -> key, split(key, shape) -> keys[*shape], fold_in(key, uint32[]) -> key,
    random_bits(key, bit_width, shape) -> uint<bit_width>[*shape]."""
    key_shape: tuple[int, ...]
    seed: Callable
    split: Callable
    random_bits: Callable
    fold_in: Callable
    name: str = "<unnamed>"
    tag: str = "?"

    def __hash__(self):
        return hash(self.tag)

    def __eq__(self, other):
        return isinstance(other, PRNGImpl) and other.tag == self.tag

    def __str__(self):
        return self.tag


PRNGS: dict[str, PRNGImpl] = {}


def register_prng(impl: PRNGImpl) -> PRNGImpl:
    if impl.name in PRNGS:
        raise ValueError(f"PRNG with name {impl.name} already registered: {impl}")
    PRNGS[impl.name] = impl
    return impl


def check_bit_width(bit_width):
    if bit_width not in UINT_DTYPES:
        raise TypeError(f"random_bits requires a bit width of 8, 16, 32 or 64, "
                        f"got {bit_width}")


threefry_prng_impl = register_prng(PRNGImpl(
    key_shape=(2,), seed=rb.seed_key, split=rb.split_key, random_bits=rb.random_bits,
    fold_in=rb.fold_in_key, name="threefry2x32", tag="fry"))


# --- rbg: XLA's RngBitGenerator for bits; keys split and fold in as two threefry keys ---

def _rbg_seed(seed):
    half = rb.seed_key(seed)
    return st.concatenate([half, half], 0)


def _halves(key):
    return slicing.slice(key, (0,), (2,)), slicing.slice(key, (2,), (4,))


def _rbg_split(key, shape):
    shape = tuple(shape)
    return st.concatenate([rb.split_key(half, shape) for half in _halves(key)], len(shape))


def _rbg_fold_in(key, data):
    return st.concatenate([rb.fold_in_key(half, data) for half in _halves(key)], 0)


def _rbg_random_bits(key, bit_width, shape):
    check_bit_width(bit_width)
    _, bits = rng_bit_generator(key, tuple(shape), dtype=UINT_DTYPES[bit_width])
    return bits


rbg_prng_impl = register_prng(PRNGImpl(
    key_shape=(4,), seed=_rbg_seed, split=_rbg_split, random_bits=_rbg_random_bits,
    fold_in=_rbg_fold_in, name="rbg", tag="rbg"))


# --- unsafe_rbg: RngBitGenerator for splitting and folding in too -----------------------

def _unsafe_rbg_split(key, shape):
    # ten draws of the generator serve as a hash of the key
    num = math.prod(shape)
    _, keys = rng_bit_generator(key, (10 * num, 4), dtype=UINT32)
    every_tenth = slicing.slice(keys, (0, 0), (10 * num, 4), (10, 1))
    return st.reshape(every_tenth, (*shape, 4))


def _unsafe_rbg_fold_in(key, data):
    _, bits = rng_bit_generator(_rbg_seed(data), (10, 4), dtype=UINT32)
    return ew.bitwise_xor(key, st.reshape(slicing.slice(bits, (9, 0), (10, 4)), (4,)))


unsafe_rbg_prng_impl = register_prng(PRNGImpl(
    key_shape=(4,), seed=_rbg_seed, split=_unsafe_rbg_split, random_bits=_rbg_random_bits,
    fold_in=_unsafe_rbg_fold_in, name="unsafe_rbg", tag="urbg"))


# --- Random123's counter-based generators (Salmon et al., SC 2011), added in JAX 0.10 ------
# Each hashes a counter under the key; split and random_bits hash every element's index
# (iota as two uint32 words), fold_in hashes the data. Written in lax ops, so jit fuses
# them.

def _u32(value):
    return np.uint32(value)


def _seed_words(seed):
    """The seed's high and low 32-bit words (the high word is 0 for 32-bit seeds)."""
    words = rb.seed_key(seed)
    return (st.reshape(slicing.slice(words, (0,), (1,)), ()),
            st.reshape(slicing.slice(words, (1,), (2,)), ()))


def _key_words(key, n):
    return [st.reshape(slicing.slice(key, (i,), (i + 1,)), ()) for i in range(n)]


def _stack_words(words, shape):
    shape = tuple(shape)
    words = [st.broadcast_in_dim(w, shape, tuple(range(len(shape) - get_aval(w).ndim,
                                                          len(shape)))) for w in words]
    return st.concatenate([st.expand_dims(w, (len(shape),)) for w in words], len(shape))


def _bits_of_words(words, bit_width):
    """random_bits from the hashed words: 64-bit values join two words, narrower ones
    take the XOR of all words."""
    check_bit_width(bit_width)
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        return rb.join_words(*words)
    mixed = words[0]
    for w in words[1:]:
        mixed = ew.bitwise_xor(mixed, w)
    return mixed if bit_width == 32 else ew.convert_element_type(mixed, dtype)


# philox2x32: a one-word key, a two-word counter, ten rounds of one multiply-hi/lo.
_PHILOX_M2x32 = _u32(0xD256D193)
_PHILOX_W32_0, _PHILOX_W32_1 = _u32(0x9E3779B9), _u32(0xBB67AE85)
_PHILOX_M4x32_0, _PHILOX_M4x32_1 = _u32(0xD2511F53), _u32(0xCD9E8D57)


def philox2x32(k0, x0, x1):
    for rnd in range(10):
        if rnd:
            k0 = ew.add(k0, _PHILOX_W32_0)
        lo, hi = ew.mul(_PHILOX_M2x32, x0), mulhi(_PHILOX_M2x32, x0)
        x0, x1 = ew.bitwise_xor(ew.bitwise_xor(hi, x1), k0), lo
    return x0, x1


def _philox2x32_seed(seed):
    k0, k1 = _seed_words(seed)
    out0, _ = philox2x32(_u32(0), k0, k1)
    return st.reshape(out0, (1,))


def _philox2x32_split(key, shape):
    hi, lo = rb.iota_2x32(tuple(shape))
    out0, _ = philox2x32(_key_words(key, 1)[0], hi, lo)
    return st.expand_dims(out0, (len(shape),))


def _philox2x32_fold_in(key, data):
    out0, _ = philox2x32(_key_words(key, 1)[0], _u32(0), ew.convert_element_type(data, UINT32))
    return st.reshape(out0, (1,))


def _philox2x32_random_bits(key, bit_width, shape):
    hi, lo = rb.iota_2x32(tuple(shape))
    return _bits_of_words(philox2x32(_key_words(key, 1)[0], hi, lo), bit_width)


philox2x32_prng_impl = register_prng(PRNGImpl(
    key_shape=(1,), seed=_philox2x32_seed, split=_philox2x32_split,
    random_bits=_philox2x32_random_bits, fold_in=_philox2x32_fold_in, name="philox2x32",
    tag="phx2"))


# philox4x32: a two-word key, a four-word counter, ten rounds of two multiply-hi/los.
def philox4x32(k0, k1, x0, x1, x2, x3):
    for rnd in range(10):
        if rnd:
            k0, k1 = ew.add(k0, _PHILOX_W32_0), ew.add(k1, _PHILOX_W32_1)
        lo0, hi0 = ew.mul(_PHILOX_M4x32_0, x0), mulhi(_PHILOX_M4x32_0, x0)
        lo1, hi1 = ew.mul(_PHILOX_M4x32_1, x2), mulhi(_PHILOX_M4x32_1, x2)
        x0, x1, x2, x3 = (ew.bitwise_xor(ew.bitwise_xor(hi1, x1), k0), lo1,
                          ew.bitwise_xor(ew.bitwise_xor(hi0, x3), k1), lo0)
    return x0, x1, x2, x3


def _philox4x32_seed(seed):
    k0, k1 = _seed_words(seed)
    zero = _u32(0)
    out = philox4x32(zero, zero, k0, k1, zero, zero)
    return _stack_words(out[:2], ())


def _philox4x32_split(key, shape):
    hi, lo = rb.iota_2x32(tuple(shape))
    zeros = st.full(tuple(shape), 0, UINT32)
    out = philox4x32(*_key_words(key, 2), zeros, zeros, hi, lo)
    return _stack_words(out[:2], shape)


def _philox4x32_fold_in(key, data):
    zero = _u32(0)
    out = philox4x32(*_key_words(key, 2), zero, zero, zero,
                     ew.convert_element_type(data, UINT32))
    return _stack_words(out[:2], ())


def _philox4x32_random_bits(key, bit_width, shape):
    hi, lo = rb.iota_2x32(tuple(shape))
    zeros = st.full(tuple(shape), 0, UINT32)
    out = philox4x32(*_key_words(key, 2), hi, lo, zeros, zeros)
    return _bits_of_words(out[:2] if bit_width == 64 else out, bit_width)


philox4x32_prng_impl = register_prng(PRNGImpl(
    key_shape=(2,), seed=_philox4x32_seed, split=_philox4x32_split,
    random_bits=_philox4x32_random_bits, fold_in=_philox4x32_fold_in, name="philox4x32",
    tag="phx4"))


# threefry4x32: Threefry with a four-word key and counter, twenty rounds.
_ROTATIONS_4x32 = ((10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10),
                   (18, 20))


def _rotl(x, d):
    return ew.bitwise_or(ew.shift_left(x, _u32(d)), ew.shift_right_logical(x, _u32(32 - d)))


def threefry4x32(k0, k1, k2, k3, x0, x1, x2, x3):
    parity = ew.bitwise_xor(ew.bitwise_xor(ew.bitwise_xor(ew.bitwise_xor(k0, k1), k2), k3),
                            _u32(0x1BD11BDA))
    ks = [k0, k1, k2, k3, parity]
    x = [ew.add(x0, k0), ew.add(x1, k1), ew.add(x2, k2), ew.add(x3, k3)]
    for rnd in range(20):
        rot0, rot1 = _ROTATIONS_4x32[rnd % 8]
        # even rounds mix (0, 1) and (2, 3); odd rounds (0, 3) and (2, 1)
        a, b = (1, 3) if rnd % 2 == 0 else (3, 1)
        x[0] = ew.add(x[0], x[a])
        x[a] = ew.bitwise_xor(x[0], _rotl(x[a], rot0))
        x[2] = ew.add(x[2], x[b])
        x[b] = ew.bitwise_xor(x[2], _rotl(x[b], rot1))
        if rnd % 4 == 3:
            inject = rnd // 4
            x = [ew.add(x[i], ks[(i + 1 + inject) % 5]) for i in range(4)]
            x[3] = ew.add(x[3], _u32(1 + inject))
    return tuple(x)


def _threefry4x32_seed(seed):
    k0, k1 = _seed_words(seed)
    zero = _u32(0)
    return _stack_words(threefry4x32(k0, k1, zero, zero, zero, zero, zero, zero), ())


def _threefry4x32_split(key, shape):
    hi, lo = rb.iota_2x32(tuple(shape))
    zeros = st.full(tuple(shape), 0, UINT32)
    return _stack_words(threefry4x32(*_key_words(key, 4), zeros, zeros, hi, lo), shape)


def _threefry4x32_fold_in(key, data):
    zero = _u32(0)
    out = threefry4x32(*_key_words(key, 4), zero, zero, zero,
                       ew.convert_element_type(data, UINT32))
    return _stack_words(out, ())


def _threefry4x32_random_bits(key, bit_width, shape):
    hi, lo = rb.iota_2x32(tuple(shape))
    zeros = st.full(tuple(shape), 0, UINT32)
    out0, out1, out2, out3 = threefry4x32(*_key_words(key, 4), hi, lo, zeros, zeros)
    if bit_width == 64:
        return _bits_of_words((ew.bitwise_xor(out0, out2), ew.bitwise_xor(out1, out3)), 64)
    return _bits_of_words((out0, out1, out2, out3), bit_width)


threefry4x32_prng_impl = register_prng(PRNGImpl(
    key_shape=(4,), seed=_threefry4x32_seed, split=_threefry4x32_split,
    random_bits=_threefry4x32_random_bits, fold_in=_threefry4x32_fold_in,
    name="threefry4x32", tag="fry4"))
