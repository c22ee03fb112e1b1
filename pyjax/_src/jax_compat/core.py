"""jax._src.core: avals, tracers, jaxpr types and trace state, from pyjax's core."""
from pyjax._src.core.avals import ShapedArray, get_aval  # noqa: F401
from pyjax._src.core.jaxpr import (  # noqa: F401
    ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, eval_jaxpr,
)
from pyjax._src.core.trace import Trace, Tracer  # noqa: F401
from pyjax._src.extend.primitives import (  # noqa: F401
    Primitive, find_top_trace, mapped_aval, unmapped_aval,
)
from pyjax._src.extend.trace_state import (  # noqa: F401
    Effect, get_opaque_trace_state, jaxpr_as_fun, trace_state_clean,
)
