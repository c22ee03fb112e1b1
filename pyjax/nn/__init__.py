"""Public jax.nn: activation functions, softmax and friends. Re-exports only; the code
lives in pyjax._src.nn."""
from pyjax._src.nn.functions import (  # noqa: F401
    gelu, log_softmax, logsumexp, one_hot, relu, relu6, sigmoid, silu, soft_sign, softmax,
    softplus, swish,
)
from pyjax._src.nn.activations import (  # noqa: F401
    celu, dot_product_attention, elu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh,
    identity, leaky_relu, log1mexp, log_sigmoid, logmeanexp, mish, selu,
    sparse_plus, sparse_sigmoid, squareplus, standardize, tanh,
)
from pyjax._src.nn.scaled_matmul import (  # noqa: F401
    get_scaled_dot_general_config, scaled_dot_general, scaled_matmul,
)
from pyjax.nn import initializers  # noqa: F401
