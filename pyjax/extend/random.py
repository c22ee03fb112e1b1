"""Public jax.extend.random: PRNG implementations (the built-in ones, and
define_prng_impl for new ones), seeding by implementation, and the Threefry primitive.
Re-exports only."""
from pyjax._src.extend.random import define_prng_impl  # noqa: F401
from pyjax._src.lax.prng import (  # noqa: F401
    rbg_prng_impl, threefry_prng_impl, unsafe_rbg_prng_impl,
)
from pyjax._src.lax.random_bits import threefry2x32_p, threefry_2x32  # noqa: F401
from pyjax._src.random.keys import random_seed, seed_with_impl  # noqa: F401
