"""jax.extend.random's own function: a PRNG implementation a library defines from its four
operations, usable wherever jax.random takes `impl=`. Imports random only."""
from __future__ import annotations

from collections.abc import Callable

from pyjax._src.lax.prng import PRNGImpl
from pyjax._src.random.keys import PRNGSpec


def define_prng_impl(*, key_shape: tuple[int, ...], seed: Callable, split: Callable,
                     random_bits: Callable, fold_in: Callable, name: str = "<unnamed>",
                     tag: str = "?") -> PRNGSpec:
    """A PRNG implementation of uint32 key data of shape `key_shape`: seed(int[]) -> key,
    split(key, shape) -> keys[*shape], random_bits(key, bit_width, shape) -> bits,
    fold_in(key, uint32[]) -> key. Pass it as jax.random.key(seed, impl=...)."""
    return PRNGSpec(PRNGImpl(tuple(key_shape), seed, split, random_bits, fold_in,
                             name=name, tag=tag))
