"""Traceback filtering at the API boundary, as in JAX: an exception raised below a public
entry point (a jitted function's call, grad, vmap, jvp, lax.cond, scan, ...) leaves it
with pyjax's own frames removed from its traceback, so that the user's frames (the call
site, the traced function, the line that failed) are what it shows. The option
jax_traceback_filtering (env JAX_TRACEBACK_FILTERING) says how: "off", "tracebackhide"
(frames stay, marked for IPython to hide), "remove_frames" (the unfiltered traceback
moves to the exception's __cause__), "quiet_remove_frames" (a note says frames were
removed), or "auto" (tracebackhide under IPython, else quiet_remove_frames).

Only the outermost boundary on the stack filters: an inner one leaves the exception to it.
A boundary is a function made by `api_boundary`, or a method whose code is registered with
`register_boundary` (a jitted function's `__call__`, which catches inline rather than
through another frame)."""
from __future__ import annotations

import builtins
import functools
import os
import threading
import traceback
import types

from pyjax._src import config

_PYJAX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

_SIMPLIFIED_MESSAGE = (
    "For simplicity, JAX has removed its internal frames from the traceback of the "
    "following exception. Set JAX_TRACEBACK_FILTERING=off to include these.")
_UNFILTERED_MESSAGE = (
    "The stack trace below excludes JAX-internal frames.\n"
    "The preceding is the original exception that occurred, unmodified.\n"
    "\n--------------------")


class UnfilteredStackTrace(Exception):
    """In "remove_frames" mode, the __cause__ of a filtered exception: its message and
    its traceback before filtering."""


_boundary_codes: set[types.CodeType] = set()
_boundary_lock = threading.Lock()


def register_boundary(code: types.CodeType) -> None:
    """Frames running `code` are API boundaries (they call `filter_exception`)."""
    with _boundary_lock:
        _boundary_codes.add(code)


def include_frame(frame: types.FrameType) -> bool:
    """Whether a frame stays in a filtered traceback: it is not pyjax's own code."""
    return not frame.f_code.co_filename.startswith(_PYJAX_DIR)


def filter_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback `tb` with pyjax's frames left out."""
    out = None
    for frame, lineno in reversed(list(traceback.walk_tb(tb))):
        if include_frame(frame):
            out = types.TracebackType(out, frame, frame.f_lasti, lineno)
    return out


def _with_callers(tb: types.TracebackType) -> types.TracebackType:
    """`tb` continued by its frame's callers outside pyjax, up to the first run of
    module-level frames (not past a REPL's exec point)."""
    out = tb
    reached_module_level = False
    for frame, lineno in traceback.walk_stack(tb.tb_frame):
        if "importlib._bootstrap" in frame.f_code.co_filename:
            continue
        if reached_module_level and frame.f_code.co_name != "<module>":
            break
        if include_frame(frame):
            out = types.TracebackType(out, frame, frame.f_lasti, lineno)
        if frame.f_code.co_name == "<module>":
            reached_module_level = True
    return out


def _running_under_ipython() -> bool:
    if not hasattr(builtins, "get_ipython"):
        return False
    import IPython
    return IPython.version_info[:2] >= (7, 17)


def _filtering_mode() -> str:
    mode = config.traceback_filtering.value
    if mode == "auto":
        return "tracebackhide" if _running_under_ipython() else "quiet_remove_frames"
    return mode


def _under_boundary(frame: types.FrameType) -> bool:
    """Whether a boundary frame is among the callers of `frame`."""
    caller = frame.f_back
    while caller is not None:
        if caller.f_code in _boundary_codes:
            return True
        caller = caller.f_back
    return False


def filter_exception(e: BaseException) -> None:
    """What a boundary does with the exception `e` it caught (and re-raises): unless an
    outer boundary will, filter its traceback as jax_traceback_filtering says."""
    tb = e.__traceback__
    if tb is None or _under_boundary(tb.tb_frame):
        return
    mode = _filtering_mode()
    if mode == "off":
        return
    if mode == "tracebackhide":
        for frame, _ in traceback.walk_tb(tb):
            if not include_frame(frame):
                frame.f_locals["__tracebackhide__"] = True
        return
    e.with_traceback(filter_traceback(tb))
    if mode == "quiet_remove_frames":
        e.add_note("--------------------\n" + _SIMPLIFIED_MESSAGE)
        return
    message = "".join(traceback.format_exception_only(type(e), e)).strip()
    unfiltered = UnfilteredStackTrace(f"{message}\n\n{_UNFILTERED_MESSAGE}")
    unfiltered.with_traceback(_with_callers(tb))
    unfiltered.__cause__ = e.__cause__
    unfiltered.__context__ = e.__context__
    unfiltered.__suppress_context__ = e.__suppress_context__
    e.__cause__ = unfiltered
    e.__context__ = None


def api_boundary(fun):
    """`fun` as an API boundary: an exception it raises leaves with its traceback
    filtered (by the outermost boundary on the stack)."""
    @functools.wraps(fun)
    def reraise_with_filtered_traceback(*args, **kwargs):
        __tracebackhide__ = True   # noqa: F841 (read by IPython and pytest)
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise
    return reraise_with_filtered_traceback


register_boundary(api_boundary(print).__code__)   # the code of every wrapper made above
