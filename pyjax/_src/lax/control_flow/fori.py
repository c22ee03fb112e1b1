"""The public `fori_loop`: a scan when its trip count is concrete (so reverse mode works),
a while loop otherwise."""
from __future__ import annotations

import numpy as np

from pyjax._src import config, dtypes, errors
from pyjax._src.core.avals import get_aval
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax.control_flow.loops import while_loop
from pyjax._src.lax.control_flow.scan import scan


def _plus_one(i):
    aval = get_aval(i)
    return ew.add(i, 1 if aval.weak_type else np.array(1, aval.dtype))


def _concrete_int(x):
    try:
        return int(x)
    except errors.ConcretizationTypeError:
        return None


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """Returns the carry after `val = body_fun(i, val)` for i in range(lower, upper).
    With concrete bounds this is a scan of upper - lower steps (reverse-mode
    differentiable); with traced bounds it is a while loop (forward mode only)."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lower_dtype = dtypes.canonicalize_dtype(get_aval(lower).dtype)
    upper_dtype = dtypes.canonicalize_dtype(get_aval(upper).dtype)
    for name, d in (("lower", lower_dtype), ("upper", upper_dtype)):
        if d.kind not in "iu":
            raise TypeError(f"fori_loop {name} bound must be an integer, got dtype "
                            f"{d.name}.")
    if lower_dtype != upper_dtype:
        if not (get_aval(lower).weak_type or get_aval(upper).weak_type):
            raise TypeError("lower and upper arguments to fori_loop must have equal types, "
                            f"got {lower_dtype.name} and {upper_dtype.name}; cast one of "
                            "them (or pass a Python int).")
        dtype = dtypes.result_type(lower, upper)
        lower = ew.convert_element_type(lower, dtype)
        upper = ew.convert_element_type(upper, dtype)
    lower_, upper_ = _concrete_int(lower), _concrete_int(upper)
    if lower_ is not None and upper_ is not None:
        length = max(upper_ - lower_, 0)
        if config.disable_jit_flag.value and length == 0:
            return init_val

        def step(carry, _):
            i, x = carry
            return (_plus_one(i), body_fun(i, x)), None

        (_, result), _ = scan(step, (lower, init_val), None, length=length,
                              unroll=1 if unroll is None else unroll)
        return result
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
