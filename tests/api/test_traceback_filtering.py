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

# (mode, case, exception, the frames of this file left in its traceback, whether other
# frames are left, whether JAX's note was added, the type of its __cause__)
JAX_RESULTS = [
    ('quiet_remove_frames', 'jit', 'AssertionError',
     ['run', '<lambda>', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'nested_jit', 'AssertionError',
     ['run', '<lambda>', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'grad', 'AssertionError',
     ['run', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'vmap', 'AssertionError',
     ['run', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'jvp', 'AssertionError',
     ['run', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'vjp', 'AssertionError',
     ['run', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'cond', 'AssertionError',
     ['run', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'scan', 'AssertionError',
     ['run', '<lambda>', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'while_loop', 'AssertionError',
     ['run', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'fori_loop', 'AssertionError',
     ['run', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'custom_jvp', 'AttributeError',
     ['run', '<lambda>'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'make_jaxpr', 'AssertionError',
     ['run', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'trace', 'AssertionError',
     ['run', '<lambda>', 'err'], False, True, 'NoneType'),
    ('quiet_remove_frames', 'bad_arg', 'TypeError',
     ['run', '<lambda>'], False, True, 'NoneType'),
    ('off', 'jit', 'AssertionError',
     ['run', '<lambda>', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'nested_jit', 'AssertionError',
     ['run', '<lambda>', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'grad', 'AssertionError',
     ['run', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'vmap', 'AssertionError',
     ['run', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'jvp', 'AssertionError',
     ['run', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'vjp', 'AssertionError',
     ['run', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'cond', 'AssertionError',
     ['run', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'scan', 'AssertionError',
     ['run', '<lambda>', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'while_loop', 'AssertionError',
     ['run', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'fori_loop', 'AssertionError',
     ['run', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'custom_jvp', 'AttributeError',
     ['run', '<lambda>'], True, False, 'NoneType'),
    ('off', 'make_jaxpr', 'AssertionError',
     ['run', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'trace', 'AssertionError',
     ['run', '<lambda>', 'err'], True, False, 'NoneType'),
    ('off', 'bad_arg', 'TypeError',
     ['run', '<lambda>'], True, False, 'NoneType'),
    ('remove_frames', 'jit', 'AssertionError',
     ['run', '<lambda>', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'nested_jit', 'AssertionError',
     ['run', '<lambda>', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'grad', 'AssertionError',
     ['run', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'vmap', 'AssertionError',
     ['run', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'jvp', 'AssertionError',
     ['run', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'vjp', 'AssertionError',
     ['run', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'cond', 'AssertionError',
     ['run', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'scan', 'AssertionError',
     ['run', '<lambda>', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'while_loop', 'AssertionError',
     ['run', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'fori_loop', 'AssertionError',
     ['run', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'custom_jvp', 'AttributeError',
     ['run', '<lambda>'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'make_jaxpr', 'AssertionError',
     ['run', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'trace', 'AssertionError',
     ['run', '<lambda>', 'err'], False, False, 'UnfilteredStackTrace'),
    ('remove_frames', 'bad_arg', 'TypeError',
     ['run', '<lambda>'], False, False, 'UnfilteredStackTrace'),
]


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
