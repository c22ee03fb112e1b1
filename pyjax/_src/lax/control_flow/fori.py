"""The public `fori_loop`: a scan when its trip count is concrete (so reverse mode works),
a while loop otherwise."""
from __future__ import annotations

import numpy as np

from pyjax._src import config, dtypes, errors
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.control_flow.loops import while_loop
from pyjax._src.lax.control_flow.scan import scan
from pyjax._src.traceback_util import api_boundary


def _plus_one(i):
    aval = get_aval(i)
    one = np.array(1, aval.dtype)
    return ew.add(i, one.item() if aval.weak_type else one)   # a weak index stays weak


def _concrete_int(x):
    try:
        return int(x)
    except (errors.ConcretizationTypeError, errors.InconclusiveDimensionOperation):
        return None   # traced, or a symbolic dimension (jax.export): a while loop


@api_boundary
def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """Returns the carry after `val = body_fun(i, val)` for i in range(lower, upper).
    With concrete bounds this is a scan of upper - lower steps (reverse-mode
    differentiable); with traced bounds it is a while loop (forward mode only)."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lower_aval, upper_aval = get_aval(lower), get_aval(upper)
    lower_dtype = dtypes.canonicalize_dtype(lower_aval.dtype)
    upper_dtype = dtypes.canonicalize_dtype(upper_aval.dtype)
    dtype = lower_dtype
    if lower_dtype != upper_dtype:
        # as in JAX, only a weak signed integer (a Python int) joins the other's type
        signed = lower_dtype.kind == "i" and upper_dtype.kind == "i"
        if not (signed and lower_aval.weak_type != upper_aval.weak_type):
            raise TypeError("lower and upper arguments to fori_loop must have equal types, "
                            f"got {lower_dtype.name} and {upper_dtype.name}; cast one of "
                            "them (or pass a Python int).")
        dtype = upper_dtype if lower_aval.weak_type else lower_dtype
    lower_, upper_ = _concrete_int(lower), _concrete_int(upper)
    if lower_ is not None and upper_ is not None:
        # Concrete bounds (floats too, truncated as int() does): a scan whose index
        # starts as the Python int lower_, a weak int32 whatever the bounds' dtype (JAX's)
        length = max(upper_ - lower_, 0)
        if config.disable_jit_flag.value and length == 0:
            return init_val

        def step(loop_carry, _):     # (errors name the carry as JAX's: loop_carry[1])
            i, x = loop_carry
            return (_plus_one(i), body_fun(i, x)), None

        (_, result), _ = scan(step, (lower_, init_val), None, length=length,
                              unroll=1 if unroll is None else unroll)
        return result
    lower = ew.convert_element_type(lower, dtype) if lower_dtype != dtype else lower
    upper = ew.convert_element_type(upper, dtype) if upper_dtype != dtype else upper
    if unroll not in (None, 1, False):
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")

    def loop_cond(carry):
        i, stop, _ = carry
        return ew.lt(i, stop)

    def loop_body(carry):
        i, stop, x = carry
        return _plus_one(i), stop, body_fun(i, x)

    _, _, result = while_loop(loop_cond, loop_body, (lower, upper, init_val))
    return result
