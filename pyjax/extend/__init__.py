"""Public jax.extend: the API for libraries that build on JAX's internals: `core`
(Primitive, jaxpr types, trace state), `linear_util`, `random` (PRNG implementations),
`source_info_util`. Re-exports only."""
from pyjax.extend import core, linear_util, random, source_info_util  # noqa: F401
