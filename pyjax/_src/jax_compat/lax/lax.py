"""jax._src.lax.lax: JAX's module of the core lax operations; JAX's own "How JAX
primitives work" page builds its example from these."""
from pyjax._src.lax.elementwise import add, mul  # noqa: F401
from pyjax._src.lax.reshaping import full_like  # noqa: F401
