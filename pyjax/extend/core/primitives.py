"""Public jax.extend.core.primitives: pyjax's primitives as `<name>_p` (add_p, cond_p,
scan_p ...), for libraries that inspect or rewrite jaxprs."""
from pyjax._src.core.trace import registered_primitives as _registered
from pyjax._src.lax import all_families as _all_families  # noqa: F401  (registers them all)

globals().update({f"{name}_p": prim for name, prim in _registered().items()})
