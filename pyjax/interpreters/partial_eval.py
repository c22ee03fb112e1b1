"""Public jax.interpreters.partial_eval: tracing functions to jaxprs. Re-exports only."""
from pyjax._src.interpreters.partial_eval import (  # noqa: F401
    DynamicJaxprTrace, DynamicJaxprTracer, trace_to_jaxpr,
)
