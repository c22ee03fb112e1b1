"""Public jax.api_util: flattening a wrapped function's arguments and results, and the
debug info of a traced function. Re-exports only."""
from pyjax._src.extend.linear_util import flatten_fun, flatten_fun_nokwargs  # noqa: F401
from pyjax._src.interpreters.partial_eval import debug_info_of as _debug_info_of


def debug_info(traced_for, fun, args, kwargs, *, static_argnums=(), static_argnames=()):
    """What pyjax records about a traced function (its name and where it is defined)."""
    return _debug_info_of(fun)
