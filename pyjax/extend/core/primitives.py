"""Public jax.extend.core.primitives: pyjax's primitives as `<name>_p` (add_p, cond_p,
jit_p, scan_p ...), for libraries that inspect or rewrite jaxprs; JAX's call primitives
that pyjax never stages (call_p, closed_call_p) exist so such libraries can name them."""
import importlib as _importlib
import pkgutil as _pkgutil

import pyjax._src.lax as _lax_package
from pyjax._src.core.trace import registered_primitives as _registered
from pyjax._src.extend.primitives import absent_primitive as _absent

for _module in _pkgutil.walk_packages(_lax_package.__path__, "pyjax._src.lax."):
    _importlib.import_module(_module.name)   # each family registers its primitives

globals().update({f"{name}_p": prim for name, prim in _registered().items()})
call_p = _absent("call")
closed_call_p = _absent("closed_call")
