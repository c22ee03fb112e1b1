"""jax.debug.breakpoint: a debugger that opens where the program runs, also inside jit,
vmap and loops. At trace time it records the caller's Python frames; their array-valued
locals travel through a debug callback, so when the computation runs the debugger sees
the actual values (inside jit, XLA calls back into Python). The debugger is a backend
chosen by name ('cli': a small pdb-like prompt). Imports lax, core and tree_util."""
from __future__ import annotations

import cmd
import os
import pprint
import sys
import traceback

from pyjax._src import tree_util
from pyjax._src.array import Array
from pyjax._src.core.trace import Tracer
from pyjax._src.lax.callbacks import debug_callback

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE_PREFIX = os.path.dirname(_PACKAGE_DIR) + os.sep


class DebuggerFrame:
    """One Python frame as the debugger shows it: where it is and its locals (arrays
    hold their run-time values)."""

    def __init__(self, filename, lineno, function, locals, globals):
        self.filename, self.lineno, self.function = filename, lineno, function
        self.locals, self.globals = locals, globals

    def source_lines(self, context=5):
        """(first line number, lines) around the frame's line, or (lineno, []) when the
        source is not available."""
        try:
            with open(self.filename) as f:
                lines = f.read().splitlines()
        except OSError:
            return self.lineno, []
        first = max(1, self.lineno - context)
        return first, lines[first - 1:self.lineno + context]

    def __repr__(self):
        return f"<frame {self.function} at {self.filename}:{self.lineno}>"


class _FrameSnapshot:
    """A frame recorded at trace time: its array leaves go through the callback; the
    rest of each local stays as it was."""

    def __init__(self, frame):
        self.filename, self.lineno = frame.f_code.co_filename, frame.f_lineno
        self.function, self.globals = frame.f_code.co_name, frame.f_globals
        self.names, self.trees, self.static, self.arrays = [], [], [], []
        for name, value in frame.f_locals.items():
            try:
                leaves, tree = tree_util.tree_flatten(value)
            except Exception:   # noqa: BLE001 - an object whose flattening fails is kept
                leaves, tree = [value], tree_util.tree_structure(0)
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
        return DebuggerFrame(self.filename, self.lineno, self.function, local, self.globals)


def _user_frames(num_frames, filter_frames):
    """Snapshots of the calling frames, innermost first, skipping pyjax's own frames."""
    frame, found = sys._getframe(2), []
    while frame is not None and (num_frames is None or len(found) < num_frames):
        if not (filter_frames and frame.f_code.co_filename.startswith(_PACKAGE_PREFIX)):
            found.append(_FrameSnapshot(frame))
        frame = frame.f_back
    return found


# --- backends ---------------------------------------------------------------------------------

_debuggers = {}


def register_debugger(name, run, priority):
    """Makes `run(frames, thread_id, **kwargs)` available as backend `name`; without an
    explicit backend, the one with the highest priority is used."""
    _debuggers[name] = (priority, run)


def _debugger(backend):
    if backend is None:
        return max(_debuggers.values(), key=lambda entry: entry[0])[1]
    try:
        return _debuggers[backend][1]
    except KeyError:
        raise ValueError(f"jax.debug.breakpoint: unknown debugger backend {backend!r}; "
                         f"available: {sorted(_debuggers)}.") from None


class CliDebugger(cmd.Cmd):
    """A pdb-like prompt over recorded frames: `p expr`, `pp expr`, any expression or
    statement, `l`/`ll` (source), `w` (stack), `u`/`d` (move), `c` (continue), `q`."""

    prompt = "(jdb) "

    def __init__(self, frames, thread_id=None, stdin=None, stdout=None, **kwargs):
        super().__init__(stdin=stdin, stdout=stdout)
        self.use_rawinput = stdin is None
        self.frames, self.index = frames, 0
        self.intro = "Entering jdb:"

    @property
    def frame(self):
        return self.frames[self.index]

    def _eval(self, text):
        return eval(text, self.frame.globals, self.frame.locals)   # noqa: S307 - debugger

    def _error(self):
        kind, value, _ = sys.exc_info()
        self.stdout.write("".join(traceback.format_exception_only(kind, value)))

    def default(self, line):
        if line == "EOF":
            return True
        try:
            try:
                code = compile(line, "<jdb>", "eval")
            except SyntaxError:
                exec(compile(line, "<jdb>", "exec"), self.frame.globals, self.frame.locals)
                return False
            self.stdout.write(repr(eval(code, self.frame.globals, self.frame.locals)) + "\n")
        except Exception:   # noqa: BLE001 - a debugger reports, never dies
            self._error()
        return False

    def do_p(self, arg):
        """p expression: print the value of the expression."""
        try:
            self.stdout.write(repr(self._eval(arg)) + "\n")
        except Exception:   # noqa: BLE001
            self._error()

    def do_pp(self, arg):
        """pp expression: pretty-print the value of the expression."""
        try:
            self.stdout.write(pprint.pformat(self._eval(arg)) + "\n")
        except Exception:   # noqa: BLE001
            self._error()

    def do_list(self, arg):
        """l(ist): the source around the current line."""
        first, lines = self.frame.source_lines()
        if not lines:
            self.stdout.write(f"(source of {self.frame.filename} not available)\n")
        for number, text in enumerate(lines, first):
            mark = "->" if number == self.frame.lineno else "  "
            self.stdout.write(f"{number:4d} {mark} {text}\n")

    do_l = do_ll = do_longlist = do_list

    def do_where(self, arg):
        """w(here): the recorded stack, innermost last; '>' marks the current frame."""
        for i in reversed(range(len(self.frames))):
            f = self.frames[i]
            mark = ">" if i == self.index else " "
            self.stdout.write(f"{mark} {f.filename}({f.lineno}){f.function}()\n")

    do_w = do_bt = do_where

    def do_up(self, arg):
        """u(p): move to the caller's frame."""
        if self.index + 1 >= len(self.frames):
            self.stdout.write("At topmost frame.\n")
        else:
            self.index += 1
            self.do_where("")

    def do_down(self, arg):
        """d(own): move to the callee's frame."""
        if self.index == 0:
            self.stdout.write("At bottommost frame.\n")
        else:
            self.index -= 1
            self.do_where("")

    do_u, do_d = do_up, do_down

    def do_continue(self, arg):
        """c(ont(inue)): leave the debugger; the program goes on."""
        return True

    do_c = do_cont = do_continue

    def do_quit(self, arg):
        """q(uit): leave the debugger and stop the program with an exception."""
        raise SystemExit("jdb: quit")

    do_q = do_exit = do_quit

    def run(self):
        self.cmdloop()


def _run_cli(frames, thread_id=None, **kwargs):
    CliDebugger(frames, thread_id, **kwargs).run()


register_debugger("cli", _run_cli, 0)


# --- breakpoint ------------------------------------------------------------------------------

class _Breakpoint:
    """The host side of one breakpoint: rebuilds the frames and runs the debugger."""

    def __init__(self, snapshots, backend, kwargs):
        self.snapshots, self.backend, self.kwargs = snapshots, backend, kwargs

    def __call__(self, *values):
        it = iter(values)
        frames = [s.rebuild(it) for s in self.snapshots]
        _debugger(self.backend)(frames, None, **self.kwargs)


def breakpoint(*, backend=None, filter_frames=True, num_frames=None,  # noqa: A001
               ordered=False, token=None, **kwargs):
    """Opens a debugger when this point of the program runs (eagerly, or at every
    execution of a jitted function; once per example under vmap), showing the caller's
    frames with the actual values of their arrays. `backend` names the debugger ('cli'
    by default); `num_frames` limits the frames recorded; `filter_frames` hides pyjax's
    own frames; extra keyword arguments go to the debugger (e.g. stdin/stdout for 'cli')."""
    if token is not None:
        raise NotImplementedError("jax.debug.breakpoint(token=...) is not supported; use "
                                  "ordered=True to keep breakpoints in program order.")
    if num_frames is not None and num_frames < 1:
        raise ValueError(f"jax.debug.breakpoint: num_frames must be positive, got "
                         f"{num_frames}.")
    _debugger(backend)    # an unknown backend fails here, not when the program runs
    snapshots = _user_frames(num_frames, filter_frames)
    arrays = [x for s in snapshots for x in s.arrays]
    for s in snapshots:
        s.arrays = None   # the callback must not keep tracers alive
    debug_callback(_Breakpoint(snapshots, backend, kwargs), *arrays, ordered=ordered)


__all__ = ["breakpoint", "register_debugger", "CliDebugger", "DebuggerFrame"]
