"""Imports every primitive family, so that registered_primitives() lists them all: for code
that enumerates primitives (the rule-completeness tests). `import pyjax` loads only the
common families (lax.py); the rest load here or when their public functions are first used."""
from pyjax._src.lax import lax  # noqa: F401
from pyjax._src.lax import conv_helpers, convolution, fft, linalg, linalg_schur  # noqa: F401
from pyjax._src.lax import linalg_spectral  # noqa: F401
from pyjax._src.lax import parallel_more, program, random_bits, random_gamma, rng  # noqa: F401
from pyjax._src.lax import sharding_constraint, special, structural_more  # noqa: F401
from pyjax._src.lax import windowed_reductions  # noqa: F401
