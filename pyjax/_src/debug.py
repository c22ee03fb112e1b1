"""jax.debug (level 7): printing and inspecting values at run time from inside transformed
code, through the debug_callback primitive (lax.callbacks). Imports lax and tree_util."""
from __future__ import annotations

import logging
import string
import sys

import numpy as np

from pyjax._src.lax.callbacks import (  # noqa: F401  (re-exported effect types)
    DebugEffect, OrderedDebugEffect, debug_callback,
)


def _check_format(fmt, args, kwargs):
    """Fails now, not when the computation runs, on a format string that does not fit."""
    if not isinstance(fmt, str):
        raise TypeError(f"jax.debug.print expects a format string first, got {fmt!r}")
    try:
        string.Formatter().vformat(fmt, tuple(range(len(args))), dict.fromkeys(kwargs, 0))
    except (IndexError, KeyError) as err:
        raise ValueError(f"jax.debug.print: the format string {fmt!r} refers to a missing "
                         f"argument ({err!r}); pass one value per placeholder.") from None


def print(fmt, *args, ordered=False, **kwargs):  # noqa: A001  (mirrors jax.debug.print)
    """Prints `fmt.format(*args, **kwargs)` with the actual values when the computation
    runs, also inside jit, vmap (once per example) and loops; ordered=True keeps prints in
    program order. Plain `print` inside jit shows tracers instead."""
    _check_format(fmt, args, kwargs)
    np_printoptions = kwargs.pop("np_printoptions", None)

    def emit(*values, **named):
        with np.printoptions(**(np_printoptions or {})):
            sys.stdout.write(fmt.format(*values, **named) + "\n")

    debug_callback(emit, *args, ordered=ordered, **kwargs)


_logger = logging.getLogger("pyjax.debug")


def log(fmt, *args, ordered=False, level=logging.INFO, **kwargs):
    """Logs `fmt.format(*args, **kwargs)` with the actual values, through the `logging`
    module (logger 'pyjax.debug', at `level`), when the computation runs: like
    jax.debug.print, also inside jit, vmap and loops."""
    _check_format(fmt, args, kwargs)
    if not isinstance(level, int):
        raise TypeError(f"jax.debug.log: level must be a logging level (an int such as "
                        f"logging.INFO), got {level!r}")

    def emit(*values, **named):
        if _logger.isEnabledFor(level):
            _logger.log(level, fmt.format(*values, **named))

    debug_callback(emit, *args, ordered=ordered, **kwargs)


def callback(callback, *args, ordered=False, **kwargs):
    """Calls `callback(*args, **kwargs)` with concrete arrays when the computation runs;
    its return value is ignored."""
    debug_callback(callback, *args, ordered=ordered, **kwargs)
