"""jax._src.api: JAX's transformations, which JAX's own "How JAX primitives work" page
calls through this module (`api.grad`, `api.jit`)."""
from pyjax._src.api.autodiff import grad, jvp, vjp  # noqa: F401
from pyjax._src.api.jit import jit  # noqa: F401
from pyjax._src.api.vmap import vmap  # noqa: F401
