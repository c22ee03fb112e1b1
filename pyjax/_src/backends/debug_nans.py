"""jax_debug_nans / jax_debug_infs: the check after each primitive that the NumPy executor
runs (eagerly, or re-running a jitted computation de-optimized), and an error that says
more than JAX's: the user's source line, whether it happened in grad's backward pass, and
why (0 * inf; the FAQ's jnp.where trap, with its fix). Imports config and core."""
from __future__ import annotations

import textwrap

import numpy as np

from pyjax._src import config
from pyjax._src.core.source_info import BackwardSource, describe
from pyjax._src.core.trace import trace_context

_WIDTH = 88
_WHERE_FIX = """\
The FAQ's fix ("Gradients contain NaN where using `where`"): also guard the input of the
function that is undefined there, with a where *inside* it, so the unselected side is
computed at a harmless point:
    jnp.where(x > 0., jnp.log(x), 0.)                            # NaN gradient at x <= 0
    jnp.where(x > 0., jnp.log(jnp.where(x > 0., x, 1.)), 0.)     # finite everywhere"""


def check_nans(prim_name, values, operands=(), source_info=None):
    """Raises FloatingPointError when one of `values` (a primitive's outputs, NumPy) holds
    a NaN (jax_debug_nans) or an inf (jax_debug_infs). `source_info` is that of the
    equation being run; eager ops find theirs in the trace context (set while grad's
    backward pass or eval_jaxpr runs an equation)."""
    for v in values:
        if v.dtype.kind not in "fc":
            continue
        if config.debug_nans.value and np.isnan(v).any():
            raise FloatingPointError(_message("nan", prim_name, v, operands, source_info))
        if config.debug_infs.value and np.isinf(v).any():
            raise FloatingPointError(_message("inf", prim_name, v, operands, source_info))


def _message(kind, prim_name, value, operands, source_info):
    lines = [f"invalid value ({kind}) encountered in {prim_name}"]   # JAX's wording
    if source_info is None:
        override = trace_context().source_info
        source_info = override[0] if override else None
    backward = isinstance(source_info, BackwardSource)
    if source_info:
        where = describe(source_info, full_path=True)
        lines.append(f"  in grad's backward pass, differentiating the operation at {where}"
                     if backward else f"  at {where}")
    form = _zero_times_inf(prim_name, operands, value) if kind == "nan" else None
    masked_by = source_info.masked_by if backward else None
    if form and masked_by:
        lines += [textwrap.fill(f"This NaN is {form}: a zero cotangent times an infinite "
                                "derivative. The zero cotangent comes from the side of a "
                                "jnp.where (select_n) that was not selected:", _WIDTH),
                  f"  {describe(masked_by, full_path=True)}",
                  textwrap.fill("grad differentiates both sides of a where: the side not "
                                "taken is evaluated where it is undefined, and its derivative "
                                "there is infinite.", _WIDTH),
                  _WHERE_FIX]
    elif form:
        lines.append(textwrap.fill(
            f"This NaN is {form}: an operand is zero (or infinite) where the other is "
            "infinite (or zero)." + (
                " In grad's backward pass that is a zero cotangent times an infinite "
                "derivative: guard the input of the function with jnp.where (JAX FAQ, "
                "'Gradients contain NaN where using `where`')." if backward else ""), _WIDTH))
    return "\n".join(lines)


def _zero_times_inf(prim_name, operands, value):
    """'0 * inf', '0 / 0' or 'inf / inf' when that made a NaN of `value` (a mul or div of
    operands that are not NaN there), else None."""
    if prim_name not in ("mul", "div") or len(operands) != 2:
        return None
    try:
        a, b, out = np.broadcast_arrays(*(np.asarray(x) for x in operands), value)
    except ValueError:
        return None
    made = np.isnan(out)
    zero_a, zero_b, inf_a, inf_b = a == 0, b == 0, np.isinf(a), np.isinf(b)
    if prim_name == "mul":
        return "0 * inf" if (((zero_a & inf_b) | (inf_a & zero_b)) & made).any() else None
    if (zero_a & zero_b & made).any():
        return "0 / 0"
    return "inf / inf" if (inf_a & inf_b & made).any() else None
