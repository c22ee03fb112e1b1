"""Public jax.nn: activation functions, softmax and friends. Re-exports only; the code
lives in pyjax._src.nn."""
from pyjax._src.nn.functions import (  # noqa: F401
    gelu, log_softmax, logsumexp, one_hot, relu, relu6, sigmoid, silu, soft_sign, softmax,
    softplus, swish,
)
