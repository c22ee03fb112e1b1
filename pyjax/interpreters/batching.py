"""Public jax.interpreters.batching: the vmap rule tables of primitives and `not_mapped`.
Re-exports only."""
from pyjax._src.extend.primitives import (  # noqa: F401
    axis_primitive_batchers, fancy_primitive_batchers, primitive_batchers,
)
from pyjax._src.interpreters.batching import AxisData, moveaxis, not_mapped  # noqa: F401
