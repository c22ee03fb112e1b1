"""Public core types, mirroring the parts of `jax.core` that user code meets: `Tracer`
(for `isinstance` checks inside transformed functions), `AbstractValue` (the base of
every aval), `ShapedArray`, `Trace` and `eval_jaxpr`, `max_dim`/`min_dim` (of
dimensions, symbolic ones included), and `Atom` (what a jaxpr equation reads: a `Var`
or a `Literal`; code that walks jaxprs annotates with it). Re-exports only; the code
lives in pyjax._src.core."""
from typing import Union

from pyjax._src.core.avals import AbstractValue, ManualAxisType, ShapedArray  # noqa: F401
from pyjax._src.core.jaxpr import Literal as _Literal
from pyjax._src.core.jaxpr import Var as _Var
from pyjax._src.core.jaxpr import eval_jaxpr  # noqa: F401
from pyjax._src.shape_poly import max_dim, min_dim  # noqa: F401
from pyjax._src.core.trace import Trace, Tracer  # noqa: F401
from pyjax._src.errors import ShardingTypeError  # noqa: F401

Atom = Union[_Var, _Literal]   # as JAX's: a typing alias, not a class
