"""jax.debug.breakpoint: a debugger that opens where the program runs, also inside jit,
vmap and loops. At trace time it records the caller's Python frames; their array-valued
locals travel through a debug callback, so when the computation runs the debugger sees
the actual values (inside jit, XLA calls back into Python). The debugger is a backend
chosen by name ('cli': a small pdb-like prompt). Imports lax, core and tree_util."""
from __future__ import annotations

import cmd
import inspect
import pprint
import sys
import threading
import traceback

from pyjax._src import traceback_util, tree_util
from pyjax._src.array import Array
from pyjax._src.core.trace import Tracer
from pyjax._src.lax.callbacks import debug_callback


class _CantFlatten:
    """Stands for a local that is not a pytree (JAX shows it as <cant_flatten>)."""

    def __repr__(self):
        return "<cant_flatten>"


cant_flatten = _CantFlatten()


class DebuggerFrame:
    """One Python frame as the debugger shows it, as JAX's: its file and line, its
    locals (arrays hold their run-time values; globals are not captured), and the source
    of its function with the offset of the current line in it (None: no source)."""

    def __init__(self, filename, locals, globals, code_context, source, lineno, offset):
        self.filename, self.locals, self.globals = filename, locals, globals
        self.code_context, self.source = code_context, source
        self.lineno, self.offset = lineno, offset

    @classmethod
    def from_frameinfo(cls, frame_info):
        try:
            _, start = inspect.getsourcelines(frame_info.frame)
            source = inspect.getsource(frame_info.frame).split("\n")
            offset = frame_info.lineno - max(start, 1)
            if offset >= len(source):
                source, offset = [], None
        except OSError:
            source, offset = [], None
        return cls(frame_info.filename, dict(frame_info.frame.f_locals), {},
                   frame_info.code_context, source, frame_info.lineno, offset)

    def __repr__(self):
        return f"<frame at {self.filename}:{self.lineno}>"


class _FrameSnapshot:
    """A frame recorded at trace time: its array leaves go through the callback; the
    rest of each local stays as it was (a local that is not a pytree: cant_flatten)."""

    def __init__(self, frame):
        # all but the locals, which may hold tracers that must not outlive the trace
        self.where = (frame.filename, frame.globals, frame.code_context, frame.source,
                      frame.lineno, frame.offset)
        self.names, self.trees, self.static, self.arrays = [], [], [], []
        for name, value in frame.locals.items():
            try:
                leaves, tree = tree_util.tree_flatten(value)
            except Exception:   # noqa: BLE001 - as JAX: shown as <cant_flatten>
                leaves, tree = [cant_flatten], tree_util.tree_structure(0)
            is_array = [isinstance(x, (Tracer, Array)) for x in leaves]
            self.names.append(name)
            self.trees.append(tree)
            self.static.append([None if a else x for x, a in zip(leaves, is_array)])
            self.arrays.extend(x for x, a in zip(leaves, is_array) if a)

    def rebuild(self, values):
        """The frame with the run-time array values, consuming them from `values`."""
        local = {}
        for name, tree, static in zip(self.names, self.trees, self.static):
            leaves = [next(values) if s is None else s for s in static]
            local[name] = tree_util.tree_unflatten(tree, leaves)
        filename, globals_, code_context, source, lineno, offset = self.where
        return DebuggerFrame(filename, local, globals_, code_context, source, lineno, offset)


# --- backends ---------------------------------------------------------------------------------

_debuggers: dict = {}
_debuggers_lock = threading.Lock()
_debug_lock = threading.Lock()   # one debugger session at a time, as in JAX


def register_debugger(name, debugger, priority):
    """Makes `debugger(frames, thread_id, **kwargs)` available as backend `name`;
    without a known backend, the one with the highest priority is used."""
    with _debuggers_lock:
        if name in _debuggers:
            raise ValueError(f'Debugger with name "{name}" already registered.')
        _debuggers[name] = (priority, debugger)


def get_debugger(backend=None):
    """The debugger registered as `backend`, else the one of highest priority."""
    with _debuggers_lock:
        if backend is not None and backend in _debuggers:
            return _debuggers[backend][1]
        if not _debuggers:
            raise ValueError("No debuggers registered!")
        return max(_debuggers.values(), key=lambda entry: entry[0])[1]


class CliDebugger(cmd.Cmd):
    """JAX's text debugger over recorded frames: an expression (or `p`/`pp` one) prints
    its value, `l(ist)` the source, `w(here)`/`bt` the stack, `u(p)`/`d(own)` move,
    `c(ontinue)` goes on, `q(uit)` (and end of input) exits the program."""

    prompt = "(jdb) "

    def __init__(self, frames, thread_id, stdin=None, stdout=None, completekey="tab"):
        super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
        self.use_rawinput = stdin is None
        self.frames, self.frame_index, self.thread_id = frames, 0, thread_id
        self.intro = "Entering jdb:"

    def current_frame(self):
        return self.frames[self.frame_index]

    def evaluate(self, expr):
        frame = self.frames[self.frame_index]
        return eval(expr, {}, {**frame.globals, **frame.locals})   # noqa: S307 - debugger

    def default(self, line):
        """Evaluates an expression."""
        self.do_p(line)

    def _error_message(self):
        kind, value = sys.exc_info()[:2]
        print("***", traceback.format_exception_only(kind, value)[-1].strip(),
              file=self.stdout)

    def print_backtrace(self):
        lines = ["Traceback:"]
        for frame in self.frames[::-1]:
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            lines.append("    <no source>" if frame.offset is None
                         else f"    {frame.source[frame.offset].strip()}")
        print("\n".join(lines), file=self.stdout)

    def print_context(self, num_lines=2):
        frame = self.frames[self.frame_index]
        lines = [f"> {frame.filename}({frame.lineno})"]
        for i, line in enumerate(frame.source):
            if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                lines.append(f"->  {line}" if i == frame.offset else f"    {line}")
        print("\n".join(lines), file=self.stdout)

    def do_p(self, arg):
        """p expression: print the value of the expression."""
        try:
            print(repr(self.evaluate(arg)), file=self.stdout)
        except Exception:   # noqa: BLE001 - a debugger reports, never dies
            self._error_message()

    def do_pp(self, arg):
        """pp expression: pretty-print the value of the expression."""
        try:
            print(pprint.pformat(self.evaluate(arg)), file=self.stdout)
        except Exception:   # noqa: BLE001
            self._error_message()

    def do_up(self, arg):
        """u(p): move to the caller's frame."""
        if self.frame_index == len(self.frames) - 1:
            print("At topmost frame.", file=self.stdout)
        else:
            self.frame_index += 1
        self.print_context()

    def do_down(self, arg):
        """d(own): move to the callee's frame."""
        if self.frame_index == 0:
            print("At bottommost frame.", file=self.stdout)
        else:
            self.frame_index -= 1
        self.print_context()

    do_u, do_d = do_up, do_down

    def do_list(self, arg):
        """l(ist): the source around the current line."""
        self.print_context(num_lines=5)

    do_l = do_list

    def do_continue(self, arg):
        """c(ont(inue)): leave the debugger; the program goes on."""
        return True

    do_c = do_cont = do_continue

    def do_quit(self, arg):
        """q(uit), exit or end of input: exit the program."""
        sys.exit(0)

    do_q = do_EOF = do_exit = do_quit

    def do_where(self, arg):
        """w(here), bt: the stack, the most recent frame last."""
        self.print_backtrace()

    do_w = do_bt = do_where

    def run(self):
        while True:
            try:
                self.cmdloop()
                break
            except KeyboardInterrupt:
                print("--KeyboardInterrupt--", file=sys.stdout)


def _run_cli(frames, thread_id, **kwargs):
    CliDebugger(frames, thread_id, **kwargs).run()


register_debugger("cli", _run_cli, -1)


# --- breakpoint ------------------------------------------------------------------------------

class _Breakpoint:
    """The host side of one breakpoint: rebuilds the frames and runs the debugger."""

    def __init__(self, snapshots, backend, kwargs):
        self.snapshots, self.backend, self.kwargs = snapshots, backend, kwargs

    def __call__(self, *values):
        it = iter(values)
        frames = [s.rebuild(it) for s in self.snapshots]
        thread_id = (None if threading.current_thread() is threading.main_thread()
                     else threading.get_ident())
        debugger = get_debugger(self.backend)
        with _debug_lock:
            debugger(frames, thread_id, **self.kwargs)


def breakpoint(*, backend=None, filter_frames=True, num_frames=None,  # noqa: A001
               ordered=False, token=None, **kwargs):
    """Opens a debugger when this point of the program runs (eagerly, or at every
    execution of a jitted function; once per example under vmap), showing the caller's
    frames with the actual values of their arrays. `backend` names the debugger (else
    the registered one of highest priority: 'cli'); `num_frames` limits the frames;
    `filter_frames` hides pyjax's own frames; extra keyword arguments go to the debugger
    (e.g. stdin/stdout for 'cli')."""
    if token is not None:
        raise NotImplementedError("jax.debug.breakpoint(token=...) is not supported; use "
                                  "ordered=True to keep breakpoints in program order.")
    infos = inspect.stack()[1:]
    frames = [DebuggerFrame.from_frameinfo(info) for info in infos
              if not filter_frames or traceback_util.include_frame(info.frame)]
    del infos
    if num_frames is not None:
        frames = frames[:num_frames]
    snapshots = [_FrameSnapshot(frame) for frame in frames]
    arrays = [x for s in snapshots for x in s.arrays]
    for s in snapshots:
        s.arrays = None   # the callback must not keep tracers alive
    debug_callback(_Breakpoint(snapshots, backend, kwargs), *arrays, ordered=ordered)


__all__ = ["breakpoint", "register_debugger", "get_debugger", "CliDebugger",
           "DebuggerFrame"]
