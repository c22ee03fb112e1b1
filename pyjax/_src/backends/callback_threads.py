"""Whether this thread is running a host callback of a program over several devices.

XLA's CPU client starts no program over several devices while such a program waits for
one of its callbacks: a callback that runs one (a jitted function over a mesh, a pmap)
would wait forever, and the devices waiting for it at a collective abort the process
after 40 s. lax/callbacks.py's HostCall marks the thread while the callback runs;
backends/xla.py refuses such launches at once with `reentrant_launch_error`. Imports
nothing of pyjax (it is loaded before XLA is)."""
from __future__ import annotations

import contextlib
import threading

_state = threading.local()


@contextlib.contextmanager
def running_multi_device_callback():
    """Marks this thread as running a callback of a program over several devices."""
    outer = getattr(_state, "active", False)
    _state.active = True
    try:
        yield
    finally:
        _state.active = outer


def inside_multi_device_callback() -> bool:
    return getattr(_state, "active", False)


def reentrant_launch_error(what: str, num_devices: int) -> RuntimeError:
    return RuntimeError(
        f"{what} runs on {num_devices} devices, and it was called from a host callback "
        "(jax.pure_callback, jax.experimental.io_callback, jax.debug.callback) of a "
        "program that itself runs on several devices: XLA cannot start it until that "
        "callback returns, so the two would wait for each other forever. Compute the "
        "callback's result with NumPy, or run the function on one device (on "
        "arguments on one device, with no mesh set).")
