"""jax.debug (level 7): printing and inspecting values at run time from inside transformed
code, through the debug_callback primitive (lax.callbacks). Imports lax and tree_util."""
from __future__ import annotations

import logging
import string
import sys

import numpy as np

from pyjax._src import tree_util
from pyjax._src.sharding_diagram import sharding_diagram

from pyjax._src.lax.callbacks import (  # noqa: F401  (re-exported effect types)
    DebugEffect, OrderedDebugEffect, debug_callback, inspect_sharding_p,
)


class _FormatChecker(string.Formatter):
    """Formats nothing; fails on missing arguments (str.format's own KeyError or
    IndexError, as in JAX) and on unused ones, as JAX checks them."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: "
                             f"{unused_args}")
        if unused_kwargs:
            raise ValueError(f"Unused keyword arguments to `jax.debug.print`: "
                             f"{unused_kwargs}. You may be passing an f-string (i.e, "
                             "`f\"{x}\"`) into `jax.debug.print` and instead should pass in a "
                             "regular string.")


def _check_format(fmt, args, kwargs):
    """Fails now, not when the computation runs, on a format string that does not fit
    its arguments: a missing or an unused one."""
    if not isinstance(fmt, str):
        raise TypeError(f"jax.debug.print expects a format string first, got {fmt!r}")
    _FormatChecker().format(fmt, *args, **kwargs)


def _formatted(fmt, args, kwargs, np_printoptions, skip_format_check):
    if not skip_format_check:
        _check_format(fmt, args, kwargs)
    has_placeholders = any(field is not None for _, field, _, _ in
                           string.Formatter().parse(fmt))

    def text(*values, **named):
        with np.printoptions(**np_printoptions):
            if has_placeholders:
                return fmt.format(*values, **named)
            return " ".join((fmt, *(str(v) for v in values)))
    return text


def _two_call_form(name, first, args, kwargs, call):
    """jax.debug.X(first, *args, **kwargs) runs now; jax.debug.X(**options) returns the
    function to call with the arguments (JAX's recommended two-call form)."""
    if first is not None:
        call(first, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug_{name} received unexpected arguments in the two-call form:"
                        f" {args=} {kwargs=}")
    return call


def print(fmt=None, *args, ordered=False, partitioned=False,  # noqa: A001  (jax.debug.print)
          skip_format_check=False, **kwargs):
    """Prints `fmt.format(*args, **kwargs)` with the actual values when the computation
    runs, also inside jit, vmap (once per example) and loops; ordered=True keeps prints in
    program order. Plain `print` inside jit shows tracers instead. Called with options
    only, returns the print function to call with the format and values."""
    def print_now(fmt, *args, **kwargs):
        text = _formatted(fmt, args, kwargs, np.get_printoptions(), skip_format_check)
        debug_callback(lambda *v, **k: sys.stdout.write(text(*v, **k) + "\n"), *args,
                       ordered=ordered, partitioned=partitioned, **kwargs)
    return _two_call_form("print", fmt, args, kwargs, print_now)


_logger = logging.getLogger("jax._src.debugging")   # JAX's logger name


def log(fmt, *args, ordered=False, level=logging.INFO, **kwargs):
    """Logs `fmt.format(*args, **kwargs)` with the actual values, through the `logging`
    module (logger 'jax._src.debugging', at `level`, as JAX's), when the computation runs: like
    jax.debug.print, also inside jit, vmap and loops."""
    if not isinstance(level, int):
        raise TypeError(f"jax.debug.log: level must be a logging level (an int such as "
                        f"logging.INFO), got {level!r}")
    text = _formatted(fmt, args, kwargs, np.get_printoptions(), False)

    def emit(*values, **named):
        if _logger.isEnabledFor(level):
            _logger.log(level, text(*values, **named))

    debug_callback(emit, *args, ordered=ordered, **kwargs)


def callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Calls `callback(*args, **kwargs)` with concrete arrays when the computation runs;
    its return value is ignored. Called with options only, returns the function to call
    with the callback and its arguments."""
    def call_now(callback, *args, **kwargs):
        debug_callback(callback, *args, ordered=ordered, partitioned=partitioned, **kwargs)
    return _two_call_form("callback", callback, args, kwargs, call_now)


# --- shardings ------------------------------------------------------------------------------

def inspect_array_sharding(value, *, callback):
    """Calls callback(sharding) for every array of the pytree `value`: now for arrays,
    and inside jit as the function compiles, with the sharding XLA's partitioner chose
    for that value (once per compilation, as in JAX)."""
    for leaf in tree_util.tree_leaves(value):
        inspect_sharding_p.bind(leaf, callback=callback)


def visualize_array_sharding(arr, **kwargs):
    """Prints which device holds which block of the 1-D or 2-D array `arr`."""
    inspect_array_sharding(arr, callback=lambda s: visualize_sharding(arr.shape, s,
                                                                      **kwargs))


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9,
                       max_width=80, color_map=None):
    """Prints a grid of the blocks `sharding` cuts an array of `shape` into (1-D or 2-D),
    each labelled with the devices holding it, laid out as JAX draws it."""
    lines = sharding_diagram(shape, sharding, use_color=use_color, scale=scale,
                             min_width=min_width, max_width=max_width, color_map=color_map)
    sys.stdout.write("\n".join(lines) + "\n")
