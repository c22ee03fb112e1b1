"""jax.extend.random: PRNG implementations a library defines (define_prng_impl, whose
PRNGSpec jax.random.key(..., impl=...) takes), the built-in ones, typed keys from seeds
of any shape (random_seed, seed_with_impl), and the Threefry hash (threefry2x32_p,
threefry_2x32). Imports lax, api and random."""
from __future__ import annotations

from pyjax._src.api.vmap import vmap
from pyjax._src.core.avals import get_aval
from pyjax._src.lax.prng import (  # noqa: F401  (re-exported)
    PRNGImpl, rbg_prng_impl, threefry_prng_impl, unsafe_rbg_prng_impl)
from pyjax._src.lax.random_bits import threefry2x32_p, threefry_2x32  # noqa: F401
from pyjax._src.random import keys


def define_prng_impl(*, key_shape, seed, split, random_bits, fold_in, name="<unnamed>",
                     tag="?"):
    """A PRNG implementation from its four operations on raw uint32 key data of shape
    `key_shape`: seed(int[]) -> key, split(key, shape) -> keys[*shape],
    random_bits(key, bit_width, shape) -> uint<bit_width>[*shape],
    fold_in(key, uint32[]) -> key. Pass it as `impl=` to jax.random.key."""
    return keys.PRNGSpec(PRNGImpl(tuple(key_shape), seed, split, random_bits, fold_in,
                                  name, tag))


def random_seed(seeds, impl):
    """Typed keys of `impl`, one per element of the integer array `seeds`."""
    impl = keys.resolve_impl(impl, None, "random_seed")

    def make(seed):
        return keys.key(seed, impl=impl)
    ndim = get_aval(seeds).ndim if hasattr(seeds, "aval") else len(getattr(
        seeds, "shape", ()))
    for _ in range(ndim):
        make = vmap(make)
    return make(seeds)


def seed_with_impl(impl, seed):
    """A typed key of `impl` from `seed`."""
    return random_seed(seed, impl=impl)


__all__ = ["define_prng_impl", "random_seed", "seed_with_impl", "rbg_prng_impl",
           "threefry2x32_p", "threefry_2x32", "threefry_prng_impl", "unsafe_rbg_prng_impl"]
