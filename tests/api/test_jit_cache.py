"""jit's caches, as JAX keys them: traces are shared by every jit of one function with
equal options (so `jax.jit(f)(x)` written inline traces once), held weakly; each
signature is lowered and compiled once; a cached call is a few plain Python frames."""
import gc
import logging
import os
import sys
import weakref

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax._src.api import jit as api_jit
from pyjax._src.backends import dispatch

jit = jax.jit


# --- the Sharp Bits cells ("Pure functions"), with the output JAX 0.10.2 prints ---------

def impure_print_side_effect(x):
    print("Executing function")  # This is a side-effect
    return x


g = 0.


def impure_uses_globals(x):
    return x + g


def test_sharp_bits_side_effect_runs_only_while_tracing(capsys):
    # The side-effects appear during the first run
    print("First call: ", jit(impure_print_side_effect)(4.))
    # Subsequent runs with parameters of same type and shape may not show the side-effect
    # This is because JAX now invokes a cached compilation of the function
    print("Second call: ", jit(impure_print_side_effect)(5.))
    # JAX re-runs the Python function when the type or shape of the argument changes
    print("Third call, different type: ", jit(impure_print_side_effect)(jnp.array([5.])))
    assert capsys.readouterr().out == (
        "Executing function\n"
        "First call:  4.0\n"
        "Second call:  5.0\n"
        "Executing function\n"
        "Third call, different type:  [5.]\n")


def test_sharp_bits_global_is_read_only_while_tracing(capsys):
    global g
    g = 0.
    # JAX captures the value of the global during the first run
    print("First call: ", jit(impure_uses_globals)(4.))
    g = 10.  # Update the global
    # Subsequent runs may silently use the cached value of the globals
    print("Second call: ", jit(impure_uses_globals)(5.))
    # JAX re-runs the Python function when the type or shape of the argument changes
    # This will end up reading the latest value of the global
    print("Third call, different type: ", jit(impure_uses_globals)(jnp.array([4.])))
    assert capsys.readouterr().out == (
        "First call:  4.0\n"
        "Second call:  5.0\n"
        "Third call, different type:  [14.]\n")


# --- what the trace cache is keyed on ----------------------------------------------------

def test_inline_jit_of_one_function_traces_once():
    traces = []

    def f(x, n):
        traces.append(n)
        return x * n

    for _ in range(5):
        assert jit(f, static_argnums=1)(jnp.ones(2), 3).tolist() == [3.0, 3.0]
    assert traces == [3]
    jit(f, static_argnums=1)(jnp.ones(2), 4)                 # a new static value
    jit(f, static_argnames="n")(jnp.ones(2), n=3)            # other options: own cache
    jit(f, static_argnums=[1])(jnp.ones(2), 3)               # the same options, spelled
    jit(f, static_argnums=(1,))(jnp.ones(2), 3)              # otherwise
    assert traces == [3, 4, 3]
    assert jit(f, static_argnums=1)._cache_size() == 2


def test_traces_are_keyed_on_the_named_axes_bound():
    # JAX issue 9187: a jitted function traced under vmap(axis_name="i", size 2) must not
    # serve a call under size 3 (lax.axis_size is staged as a constant). Values as JAX's;
    # an unnamed vmap binds no axis and shares the trace.
    traces = []

    def f(x):
        traces.append(x.shape)
        return x * lax.axis_size("i")
    g = jit(f)
    assert jax.vmap(g, axis_name="i")(jnp.ones(2)).tolist() == [2.0, 2.0]
    assert jax.vmap(g, axis_name="i")(jnp.ones(3)).tolist() == [3.0, 3.0, 3.0]
    assert jax.vmap(g, axis_name="i")(jnp.ones(3)).tolist() == [3.0, 3.0, 3.0]
    assert len(traces) == 2
    h = jit(lambda: jnp.float32(1.0))
    jax.vmap(h, axis_size=2, out_axes=None)()
    jax.vmap(h, axis_size=3, out_axes=None)()
    assert h._cache_size() == 1


def test_inline_jit_stages_its_body_in_place():
    # jit(inline=True) leaves no jit equation in an enclosing trace, under autodiff too
    # (jaxprs as JAX's); without inline the call stays one equation
    f = jit(lambda x: x * 2, inline=True)
    assert str(jax.make_jaxpr(lambda x: f(x) + 1)(3)) == (
        "{ lambda ; a:i32[]. let\n    b:i32[] = mul a 2:i32[]\n    c:i32[] = add b 1:i32[]\n"
        "  in (c,) }")
    assert [e.primitive.name for e in jax.make_jaxpr(jax.grad(f))(3.0).eqns] == ["mul", "mul"]
    assert float(jax.grad(f)(3.0)) == 2.0
    assert "jit[" in str(jax.make_jaxpr(jit(lambda x: x * 2))(3))


def test_a_new_function_object_traces_again():
    traces = []
    for k in range(3):
        jit(lambda x, k=k: traces.append(k) or x + 1)(1.0)   # a fresh lambda each time
    assert traces == [0, 1, 2]


def test_the_cache_does_not_keep_the_function_alive():
    def f(x):
        return x * 2

    jit(f)(jnp.ones(2))
    alive = weakref.ref(f)
    del f
    gc.collect()
    assert alive() is None


def test_callables_that_cannot_be_weakly_referenced_or_hashed_refuse_the_call():
    # As in JAX 0.10.2: jit of such a callable is made, its call raises Python's error.
    class Scale:
        __slots__ = ()   # no __weakref__

        def __call__(self, x):
            return x * 3

    class Unhashable:
        __hash__ = None

        def __call__(self, x):
            return x * 3

    f = jit(Scale())
    with pytest.raises(TypeError, match="^cannot create weak reference to 'Scale' object"):
        f(jnp.ones(2))
    g = jit(Unhashable())
    with pytest.raises(TypeError, match="^unhashable type: 'Unhashable'"):
        g(jnp.ones(2))


def test_repr_names_the_function_or_nothing():
    class BadRepr:
        def __call__(self):
            pass

        def __repr__(self):
            raise ValueError("invalid repr")

    def f(x):
        return x

    assert repr(jit(f)) == f"<PjitFunction of {f!r}>"
    jitted = jit(BadRepr())
    assert repr(jitted) == "<PjitFunction>"   # JAX's, where the function's repr fails
    del jitted.__wrapped__
    assert repr(jitted) == "<PjitFunction>"


def test_clear_caches_empties_every_jit_of_the_function():
    f = jit(impure_uses_globals)
    f(jnp.ones(3))
    assert jit(impure_uses_globals)._cache_size() >= 1
    jax.clear_caches()
    assert f._cache_size() == 0 and jit(impure_uses_globals)._cache_size() == 0


# --- one lowering per signature ------------------------------------------------------------

@pytest.mark.parametrize("donate", [False, True])
def test_each_signature_is_lowered_once(donate):
    lowerings = dispatch.stats["lowerings"]
    f = jit(lambda x, y: (x * y, y), donate_argnums=(0,) if donate else ())
    for _ in range(3):
        f(jnp.ones(3), 2.0)
    assert dispatch.stats["lowerings"] == lowerings + 1
    for _ in range(3):
        f(np.ones(3, np.float32), 2.0)                      # a NumPy argument: same program
        f(jax.device_put(jnp.ones(3), jax.devices()[0]), 2.0)   # committed: same device
    assert dispatch.stats["lowerings"] == lowerings + 1
    f(jnp.ones(4), 2.0)                                     # a new shape: one more
    assert dispatch.stats["lowerings"] == lowerings + 2


# --- the cached call -----------------------------------------------------------------------

def _pyjax_frames(call):
    """The pyjax frames a call runs through (code in pyjax, or generated by it)."""
    root = os.path.dirname(jax.__file__)
    frames = []

    def profile(frame, event, arg):
        if event == "call":
            name = frame.f_code.co_filename
            if name.startswith("<"):   # generated code, named as such
                frames.append(name)
            elif name.startswith(root):
                frames.append(f"{os.path.relpath(name, root)}:{frame.f_code.co_name}")

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return frames


@pytest.mark.parametrize("executor", ["xla", "numpy"])
def test_a_cached_call_runs_few_plain_frames(executor):
    with config.executor(executor):
        tiny = jit(lambda x, y: x * y + 1.0)
        x = jnp.ones(3)
        tiny(x, x)
        frames = _pyjax_frames(lambda: tiny(x, x))
        if executor == "xla":   # the NumPy executor interprets the jaxpr: many frames
            assert len(frames) <= 10, frames
        assert not any(f.startswith("<") for f in frames), frames   # no generated code
        pytree = jit(lambda p, x, scale=1.0: {"y": p["w"] * x * scale, "b": p["b"]},
                     static_argnames="scale")
        params = {"w": x, "b": x}
        pytree(params, x, scale=2.0)
        frames = _pyjax_frames(lambda: pytree(params, x, scale=2.0))
        if executor == "xla":
            assert len(frames) <= 16, frames
        assert not any(f.startswith("<") for f in frames), frames


def test_no_generated_code_in_pyjax():
    root = os.path.dirname(api_jit.__file__.rsplit(os.sep + "api" + os.sep, 1)[0])
    found = []
    for folder, _, files in os.walk(os.path.join(root, "_src")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name)) as f:
                    if "exec(" in f.read():
                        found.append(name)
    assert found == []


# --- retrace diagnosis -----------------------------------------------------------------

def _retrace_warnings(record):
    return [str(w.message) for w in record if issubclass(w.category, api_jit.RetraceWarning)]


def test_retrace_warning_for_jit_of_one_function_recreated_in_a_loop():
    # every jit(scale) shares one cache, so the traces of the new jit objects add up
    def scale(x, n):
        return x * n

    with pytest.warns(api_jit.RetraceWarning) as record:
        for n in range(12):
            jax.jit(scale, static_argnums=1)(1.0, n)
    (message,) = _retrace_warnings(record)
    assert message.startswith(f"jit(scale) at {__file__}:")
    assert "has traced 9 times" in message and "different static arguments" in message


def test_no_retrace_warning_for_distinct_functions_of_one_code(recwarn):
    # A suite that defines the same local function in each parametrized test (numpyro's)
    # traces each function object once, as JAX does, and must pass under
    # filterwarnings = error; so must a fresh lambda per call, which JAX never warns of.
    def make_function():
        def square(x):
            return x ** 2
        return square

    for i in range(20):
        assert jax.jit(make_function())(float(i)) == float(i) ** 2
        jax.jit(lambda x: x + 1)(float(i))
    assert _retrace_warnings(recwarn) == []


def test_retrace_warning_for_a_changing_static_int():
    def scale(x, n):
        return x * n

    f = jax.jit(scale, static_argnums=1)
    line = scale.__code__.co_firstlineno
    with config.retrace_warning_threshold(3), pytest.warns(api_jit.RetraceWarning) as record:
        for n in range(10):
            f(jnp.ones(2), n)
    (message,) = _retrace_warnings(record)   # once
    assert message.startswith(f"jit(scale) at {__file__}:{line} has traced 4 times")
    assert "different static arguments:\n  * now (3,) and before (2,)" in message
    assert "static_argnums" in message


def test_retrace_warning_for_a_changing_shape():
    f = jax.jit(lambda x: x.sum())
    with pytest.warns(api_jit.RetraceWarning) as record:
        for n in range(1, 12):
            f(jnp.ones(n))
    (message,) = _retrace_warnings(record)
    assert "different input types:\n  * at args[0], now f32[9] and before f32[8]" in message
    assert "pad the inputs to a few fixed shapes" in message


def test_no_retrace_warning_for_a_stable_loop_or_when_off(recwarn):
    f = jax.jit(lambda x, n: x * n, static_argnums=1)
    for _ in range(30):
        f(jnp.ones(3), 2)
        f(jnp.ones(4), 2)
    with config.retrace_warning_threshold(0):
        for n in range(12):
            f(jnp.ones(3), n)
    assert _retrace_warnings(recwarn) == []


def test_no_retrace_warning_for_functions_of_installed_libraries(recwarn):
    # A library's internal jit wrapper (equinox makes one per decorated function, and
    # retraces one per error message) is not the user's to hoist: under filterwarnings =
    # error, as in equinox's own suite, a warning there would fail correct programs.
    import sysconfig
    source = "def wrapper(x, n):\n    return x * n\n"
    namespace = {}
    library_file = os.path.join(sysconfig.get_paths()["purelib"], "somelib", "jitting.py")
    exec(compile(source, library_file, "exec"), namespace)
    for n in range(12):
        jax.jit(namespace["wrapper"], static_argnums=1)(1.0, n)   # new jit, like equinox's
    f = jax.jit(namespace["wrapper"], static_argnums=1)
    for n in range(12):
        f(1.0, n)
    assert _retrace_warnings(recwarn) == []


def test_tracing_and_compiling_are_logged(caplog):
    # JAX 0.10.2 logs each trace and compile of a jitted function at DEBUG (WARNING
    # under jax_log_compiles): "Finished tracing", "Compiling jit(f) ...", "Finished XLA
    # compilation of jit(f)"; a cached call logs nothing.
    @jax.jit
    def doubled_for_the_logging_test(x):
        return x * 2 + 0.25

    with caplog.at_level(logging.DEBUG, logger="jax"):
        doubled_for_the_logging_test(np.float32(3.))
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Finished tracing doubled_for_the_logging_test for jit in ")
               for m in messages)
    assert any(m.startswith("Compiling jit(doubled_for_the_logging_test) with global shapes "
                            "and types ") for m in messages)
    assert any(m.startswith("Finished XLA compilation of jit(doubled_for_the_logging_test)")
               for m in messages)
    assert all(r.levelno == logging.DEBUG for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="jax"):
        doubled_for_the_logging_test(np.float32(4.))
    assert caplog.records == []
    with caplog.at_level(logging.WARNING, logger="jax"), jax.log_compiles(True):
        doubled_for_the_logging_test(np.ones(2, np.float32))
    assert any(m.getMessage().startswith("Compiling jit(doubled_for_the_logging_test)")
               for m in caplog.records)


# --- jax_explain_cache_misses: JAX 0.10.2's explanation of a retrace --------------------

def _explained_misses(caplog, call):
    with caplog.at_level(logging.WARNING), jax.explain_cache_misses(True):
        call()
    return [r.getMessage() for r in caplog.records if "TRACING CACHE MISS" in r.getMessage()]


def test_explained_miss_names_the_argument_whose_type_changed(caplog):
    def f(x, y):
        return x

    g = jax.jit(f)
    g(np.float32(0), np.float32(1))
    (message,) = _explained_misses(caplog, lambda: g(np.float32(0), np.int32(1)))
    # JAX's text but the column of the call
    assert message.startswith(f"TRACING CACHE MISS at {__file__}:")
    assert message.split("\n")[1:] == [
        f"  for f defined at {__file__}:{f.__code__.co_firstlineno}",
        "  all previously seen cache keys differ. For the closest previous key:",
        "  different input types:",
        "  * at y, now i32[] and before f32[]"]


def test_explained_miss_of_a_weak_type(caplog):
    g = jax.jit(lambda x, y: jnp.sin(x) + y)
    y = jnp.arange(4, dtype="float32")
    g(jnp.float32(0.), y)
    (message,) = _explained_misses(caplog, lambda: g(0., y))
    assert ("  * at x, now f32[]{weak_type=True} and before f32[]{weak_type=False}"
            "https://docs.jax.dev/en/latest/type_promotion.html#weak-types") in message


def test_explained_miss_of_the_tracing_context_comes_first(caplog):
    g = jax.jit(lambda x, y: jnp.sin(x) + y)
    g(0., 1.)

    def call():
        with jax.numpy_rank_promotion("warn"), jax.default_matmul_precision("high"):
            g(0., np.float32(1.))   # the type of y changed too: the context is named

    (message,) = _explained_misses(caplog, call)
    assert message.split("\n")[3:] == [
        "  Tracing context doesn't match, e.g. due to config or context manager.",
        "  * jax_numpy_rank_promotion differs: now warn and before allow",
        "  * jax_default_matmul_precision differs: now high and before None"]


# --- static_argnums and static_argnames: one inferred from the other only if not given --

def _staticness(jitted, *args, **kwargs):
    seen = []

    def record(x, y):
        seen.append((isinstance(x, jax.core.Tracer), isinstance(y, jax.core.Tracer)))
        return 1

    jit(record, **jitted)(*args, **kwargs)
    return seen[0]


@pytest.mark.parametrize("options, args, kwargs, traced", [
    # (as JAX 0.10.2 traces them: (x traced, y traced))
    ({"static_argnums": 1}, (2, "foo"), {}, (True, False)),
    ({"static_argnums": 1}, (1,), {"y": "foo"}, (True, False)),   # the name is inferred
    ({"static_argnums": 1, "static_argnames": ()}, (1,), {"y": 2}, (True, True)),
    ({"static_argnums": (), "static_argnames": "y"}, (2, 3), {}, (True, True)),
    ({"static_argnames": "y"}, (2, "foo"), {}, (True, False)),   # the number is inferred
    ({"static_argnums": (1,), "static_argnames": "x"}, (2, "foo"), {}, (True, False)),
    ({"static_argnums": (1,), "static_argnames": "x"}, (1,), {"y": 3}, (True, True)),
    ({"static_argnums": (1,), "static_argnames": "x"}, (), {"x": "foo", "y": 3},
     (False, True)),
])
def test_static_argnums_and_argnames_given_both_are_kept_as_given(options, args, kwargs,
                                                                  traced):
    assert _staticness(options, *args, **kwargs) == traced
