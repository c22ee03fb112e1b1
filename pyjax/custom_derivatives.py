"""Public jax.custom_derivatives: functions with their own JVP or VJP rules, the symbolic
zero and primal types their rules receive, and the primitives they stage to. Re-exports
only."""
from pyjax._src.api.custom_derivatives import (  # noqa: F401
    CustomJVPException, CustomVJPException, CustomVJPPrimal, SymbolicZero, closure_convert,
    custom_jvp, custom_jvp_call_p, custom_vjp, custom_vjp_call_p, custom_vjp_primal_tree_values,
    zero_from_primal,
)
from pyjax._src.api.tracing_tools import custom_gradient  # noqa: F401
