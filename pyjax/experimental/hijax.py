"""Public jax.experimental.hijax: high-level types and their primitives (see
pyjax._src.core.hijax). Re-exports only."""
from pyjax._src.core.avals import ShapedArray  # noqa: F401
from pyjax._src.extend.hijax import (  # noqa: F401
    AbstractValue, AvalMutableQDD, AvalQDD, HiPrimitive, HiType, MutableHiType, Zero,
    aval_method, aval_property, control_flow_allowed_effects, instantiate_zeros,
    is_undefined_primal, register_hitype,
)
from pyjax._src.state.refs import AbstractRef  # noqa: F401
