"""Public jax.extend.core: primitives a library defines itself, the jaxpr types, avals,
and the trace state. Re-exports only."""
from pyjax._src.core.avals import ShapedArray, get_aval  # noqa: F401
from pyjax._src.core.jaxpr import (  # noqa: F401
    ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, JaxprTypeError, Literal, Var, check_jaxpr,
    eval_jaxpr,
)
from pyjax._src.core.tokens import AbstractToken, Token  # noqa: F401
from pyjax._src.core.trace import Trace, Tracer  # noqa: F401
from pyjax._src.extend.primitives import (  # noqa: F401
    Primitive, find_top_trace, mapped_aval, unmapped_aval,
)
from pyjax._src.extend.trace_state import (  # noqa: F401
    Effect, get_opaque_trace_state, jaxpr_as_fun, trace_state_clean,
)
from pyjax.extend.core import primitives  # noqa: F401
