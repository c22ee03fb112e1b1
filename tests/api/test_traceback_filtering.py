"""Traceback filtering at the API boundary (jax_traceback_filtering): an exception raised
below jit, grad, vmap, jvp, vjp, lax.cond, scan, while_loop, fori_loop, custom_jvp,
make_jaxpr or jit(...).trace leaves it without pyjax's frames, with JAX's note
("quiet_remove_frames", the default outside IPython), with the unfiltered traceback as its
__cause__ ("remove_frames"), or untouched ("off"). Every row was recorded on JAX 0.10.2
with the same program."""
import traceback

import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

_NOTE = ("--------------------\nFor simplicity, JAX has removed its internal frames from the "
         "traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to include "
         "these.")


def err(*_):
    raise AssertionError("err")


def run(call):
    try:
        call()
    except Exception as e:   # noqa: BLE001 - the exception is what the test inspects
        return e
    raise AssertionError("no exception")


CASES = {
    "jit": lambda: jax.jit(lambda x: err(x))(1.0),
    "nested_jit": lambda: jax.jit(lambda x: jax.jit(err)(x) + 1)(1.0),
    "grad": lambda: jax.grad(err)(1.0),
    "vmap": lambda: jax.vmap(err)(jnp.ones(2)),
    "jvp": lambda: jax.jvp(err, (1.0,), (1.0,)),
    "vjp": lambda: jax.vjp(err, 1.0),
    "cond": lambda: lax.cond(True, err, lambda _: (), ()),
    "scan": lambda: lax.scan(lambda c, x: (err(c), x), 0.0, jnp.arange(2.0)),
    "while_loop": lambda: lax.while_loop(err, lambda x: x, 0.0),
    "fori_loop": lambda: lax.fori_loop(0, 2, err, 0.0),
    "custom_jvp": lambda: jax.custom_jvp(err)(1.0),
    "make_jaxpr": lambda: jax.make_jaxpr(err)(1.0),
    "trace": lambda: jax.jit(err).trace(1.0),
    "bad_arg": lambda: jax.jit(lambda a: a + 1)(object()),
}

# Recorded on JAX 0.10.2: per case, the exception and the frames of this file left in its
# traceback (alike in every mode); per mode, whether other frames are left, whether JAX's
# note was added, and the type of the exception's __cause__.
JAX_FRAMES = {
    "jit": ("AssertionError", ["run", "<lambda>", "<lambda>", "err"]),
    "nested_jit": ("AssertionError", ["run", "<lambda>", "<lambda>", "err"]),
    "grad": ("AssertionError", ["run", "<lambda>", "err"]),
    "vmap": ("AssertionError", ["run", "<lambda>", "err"]),
    "jvp": ("AssertionError", ["run", "<lambda>", "err"]),
    "vjp": ("AssertionError", ["run", "<lambda>", "err"]),
    "cond": ("AssertionError", ["run", "<lambda>", "err"]),
    "scan": ("AssertionError", ["run", "<lambda>", "<lambda>", "err"]),
    "while_loop": ("AssertionError", ["run", "<lambda>", "err"]),
    "fori_loop": ("AssertionError", ["run", "<lambda>", "err"]),
    "custom_jvp": ("AttributeError", ["run", "<lambda>"]),
    "make_jaxpr": ("AssertionError", ["run", "<lambda>", "err"]),
    "trace": ("AssertionError", ["run", "<lambda>", "err"]),
    "bad_arg": ("TypeError", ["run", "<lambda>"]),
}
JAX_MODES = {
    "quiet_remove_frames": (False, True, "NoneType"),
    "off": (True, False, "NoneType"),
    "remove_frames": (False, False, "UnfilteredStackTrace"),
}
JAX_RESULTS = [(mode, case, *JAX_FRAMES[case], *JAX_MODES[mode])
               for mode in JAX_MODES for case in CASES]


@pytest.mark.parametrize("mode,case,etype,user,internal,noted,cause", JAX_RESULTS,
                         ids=[f"{r[0]}-{r[1]}" for r in JAX_RESULTS])
def test_filtered_traceback(mode, case, etype, user, internal, noted, cause):
    saved = jax.config.jax_traceback_filtering
    jax.config.update("jax_traceback_filtering", mode)
    try:
        e = run(CASES[case])
    finally:
        jax.config.update("jax_traceback_filtering", saved)
    frames = [frame.f_code for frame, _ in traceback.walk_tb(e.__traceback__)]
    assert type(e).__name__ == etype
    assert [c.co_name for c in frames if c.co_filename == __file__] == user
    assert any(c.co_filename != __file__ for c in frames) == internal
    assert getattr(e, "__notes__", None) == ([_NOTE] if noted else None)
    assert type(e.__cause__).__name__ == cause
