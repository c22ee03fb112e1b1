"""Public jax.interpreters.partial_eval: running a function with some inputs known and
others unknown (PartialVal, trace_to_jaxpr_nounits), and pyjax's staging trace.
Re-exports only."""
from pyjax._src.extend.partial_values import PartialVal, trace_to_jaxpr_nounits  # noqa: F401
from pyjax._src.interpreters.partial_eval import (  # noqa: F401
    DynamicJaxprTrace, DynamicJaxprTracer, trace_to_jaxpr,
)
