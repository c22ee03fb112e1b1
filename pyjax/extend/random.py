"""Public jax.extend.random: define_prng_impl, random_seed, seed_with_impl, the built-in
PRNG implementations and the Threefry hash. Re-exports only."""
from pyjax._src.extend.random import (  # noqa: F401
    define_prng_impl, random_seed, rbg_prng_impl, seed_with_impl, threefry2x32_p,
    threefry_2x32, threefry_prng_impl, unsafe_rbg_prng_impl,
)
