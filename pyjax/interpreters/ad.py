"""Public jax.interpreters.ad: symbolic zero tangents, undefined primals (transposition's
unknowns) and the JVP and transpose rule tables of primitives. Re-exports only."""
from pyjax._src.extend.primitives import (  # noqa: F401
    defbilinear, defjvp, defjvp2, deflinear, deflinear2, get_primitive_transpose,
    primitive_jvps, primitive_transposes,
)
from pyjax._src.interpreters.ad import (  # noqa: F401
    JVPTrace, JVPTracer, UndefinedPrimal, Zero, add_tangents, backward_pass, instantiate_zeros,
    is_undefined_primal,
)

add_jaxvals = add_tangents
