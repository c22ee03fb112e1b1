"""Public core types, mirroring the parts of `jax.core` that user code meets: `Tracer`
(for `isinstance` checks inside transformed functions), `AbstractValue` (the base of
every aval), `ShapedArray`, `Trace` and
`eval_jaxpr`. Re-exports only; the code lives in pyjax._src.core."""
from pyjax._src.core.avals import AbstractValue, ManualAxisType, ShapedArray  # noqa: F401
from pyjax._src.core.jaxpr import eval_jaxpr  # noqa: F401
from pyjax._src.core.trace import Trace, Tracer  # noqa: F401
from pyjax._src.errors import ShardingTypeError  # noqa: F401
