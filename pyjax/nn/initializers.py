"""Public jax.nn.initializers: weight initializers `init(key, shape, dtype)`. Re-exports
only; the code lives in pyjax._src.nn.initializers."""
from pyjax._src.nn.initializers import (  # noqa: F401
    Initializer, constant, delta_orthogonal, glorot_normal, glorot_uniform, he_normal,
    he_uniform, kaiming_normal, kaiming_uniform, lecun_normal, lecun_uniform, normal, ones,
    orthogonal, truncated_normal, uniform, variance_scaling, xavier_normal, xavier_uniform,
    zeros,
)
