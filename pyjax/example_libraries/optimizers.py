"""Public jax.example_libraries.optimizers. Re-exports only; the code lives in
pyjax._src.example_libraries.optimizers."""
from pyjax._src.example_libraries.optimizers import (  # noqa: F401
    InitFn, JoinPoint, Optimizer, OptimizerState, Params, ParamsFn, Schedule, State, Step,
    UpdateFn, Updates, adagrad, adam, adamax, clip_grads, constant, exponential_decay,
    inverse_time_decay, l2_norm, make_schedule, momentum, nesterov, optimizer,
    pack_optimizer_state, piecewise_constant, polynomial_decay, rmsprop, rmsprop_momentum,
    sgd, sm3, unpack_optimizer_state,
)
