"""The top-level jax names beyond the transformations: Device, clear_caches,
ensure_compile_time_eval, custom_gradient, named_call/named_scope, typeof, live_arrays,
the host functions, print_environment_info, the configuration context managers (strict
dtype promotion, threefry_partitionable, enable_checks, transfer guards, no_tracing, ...),
single-device array assembly, and jax.debug.breakpoint / jax.debug.log."""
from __future__ import annotations

import io
import logging

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src import config
from pyjax._src.api import debugger
from pyjax._src.core import jaxpr as jx
from pyjax.errors import ConcretizationTypeError, UnexpectedTracerError

from harness import close


# --- devices, hosts, environment ---------------------------------------------------------------

def test_device_class():
    assert all(isinstance(d, jax.Device) for d in jax.devices())
    assert isinstance(jnp.ones(2).device, jax.Device)
    assert not isinstance("cpu", jax.Device) and not isinstance(jnp.ones(2), jax.Device)
    with config.executor("numpy"):
        assert isinstance(jax.devices()[0], jax.Device)


def test_hosts_and_environment_info(capsys):
    assert (jax.host_count(), jax.host_id(), jax.host_ids(), jax.process_indices()) == \
        (1, 0, [0], [0])
    text = jax.print_environment_info(return_string=True)
    assert "jaxlib:" in text and f"numpy:    {np.__version__}" in text
    jax.print_environment_info()
    assert capsys.readouterr().out == text


def test_typeof():
    assert jax.typeof(jnp.ones((2, 3))).shape == (2, 3)
    assert jax.typeof(1.0).weak_type and str(jax.typeof(1.0).dtype) == "float32"
    seen = []
    jax.jit(lambda x: seen.append(jax.typeof(x)) or x)(np.int32(1))
    assert seen[0].dtype == np.int32 and seen[0].shape == ()


def test_live_arrays_and_copy_to_host_async():
    x = jnp.arange(5.0) * 3
    assert any(a is x for a in jax.live_arrays())
    assert all(a.device.platform == "cpu" for a in jax.live_arrays("cpu"))
    x.delete()
    assert not any(a is x for a in jax.live_arrays())
    y = jax.jit(lambda v: v + 1)(jnp.ones(3))
    assert jax.copy_to_host_async({"y": y})["y"] is y
    assert y._npy is not None and y.tolist() == [2.0, 2.0, 2.0]


def test_copy_to_host_async_calls_the_method_of_any_leaf():
    # as JAX 0.10.2: any leaf's copy_to_host_async is called (a key array's, a duck
    # array's), leaves without one are left alone, and the method's own errors show
    calls = []

    class Duck:
        def copy_to_host_async(self):
            calls.append(self)

    class Broken:
        def copy_to_host_async(self):
            raise AttributeError("foo")

    o, duck = object(), Duck()
    x = [o, 1, 2, 3, duck]
    assert jax.copy_to_host_async(x) is x and x == [o, 1, 2, 3, duck]
    assert calls == [duck]
    with pytest.raises(AttributeError, match="foo"):
        jax.copy_to_host_async(Broken())


def test_clear_caches():
    f = jax.jit(lambda v: v * 2)
    f(1.0)
    f(np.ones(2, np.float32))
    assert f._cache_size() == 2
    jax.clear_caches()
    assert f._cache_size() == 0
    close(f(3.0), 6.0)
    assert f._cache_size() == 1


def test_make_array_helpers():
    sharding = jnp.ones(1).sharding
    data = np.arange(6.0).reshape(2, 3)
    a = jax.make_array_from_callback((2, 3), sharding, lambda index: data[index])
    assert a.committed and a.tolist() == data.tolist()
    b = jax.make_array_from_single_device_arrays((2, 3), sharding, [jnp.asarray(data)])
    assert b.committed and b.shape == (2, 3)
    c = jax.make_array_from_process_local_data(sharding, data)
    assert c.tolist() == data.tolist()
    with pytest.raises(TypeError, match="Unsupported type for elements in `arrays`"):
        jax.make_array_from_single_device_arrays((2, 3), sharding, [data, data])
    with pytest.raises(ValueError, match="Expected shard shape"):
        jax.make_array_from_callback((3, 3), sharding, lambda index: data[index])
    with pytest.raises(TypeError, match="Sharding"):
        jax.make_array_from_callback((2, 3), object(), lambda index: data)


# --- tracing tools -------------------------------------------------------------------------------

def test_ensure_compile_time_eval():
    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(3.0)
            z = jnp.sin(y)
            positive = z > 0
        assert isinstance(positive, jax.Array)
        return jnp.sin(x) if positive else jnp.cos(x)

    close(f(1.0), np.sin(1.0))
    inner = jax.make_jaxpr(f)(1.0).jaxpr.eqns[0].params["jaxpr"].jaxpr
    assert [e.primitive.name for e in inner.eqns] == ["sin"]   # the rest was folded

    # An operation on a traced operand is staged as usual, as in JAX 0.10.2 (numpyro's
    # argument checks rely on it): the result is a tracer, and the jaxpr keeps the op.
    @jax.jit
    def g(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(x)
            assert isinstance(y, jax.core.Tracer)
            return y * 2

    close(g(1.0), 2 * np.sin(1.0))
    inner = jax.make_jaxpr(g)(1.0).jaxpr.eqns[0].params["jaxpr"].jaxpr
    assert [e.primitive.name for e in inner.eqns] == ["sin", "mul"]

    @jax.jit
    def needs_value(x):
        with jax.ensure_compile_time_eval():
            return jnp.sin(x) if x > 0 else x

    with pytest.raises(ConcretizationTypeError):
        needs_value(1.0)

    def h(x):   # under grad the tangent is kept (JAX: 1.3817732)
        with jax.ensure_compile_time_eval():
            return jnp.sin(x) * x

    close(jax.grad(h)(1.0), 1.3817732)
    with jax.ensure_compile_time_eval():   # outside any transformation: plain eager
        close(jnp.cos(0.0), 1.0)


def test_named_scope_and_named_call():
    def f(x):
        with jax.named_scope("outer"):
            y = jnp.sin(x)
            with jax.named_scope("inner"):
                z = y * 2
        return z + 1

    eqns = jax.make_jaxpr(f)(1.0).jaxpr.eqns
    stacks = [str(e.source_info.name_stack) for e in eqns]
    assert stacks == ["outer", "outer/inner", ""]
    named = jax.named_call(lambda v: v * 3, name="triple")
    eqns = jax.make_jaxpr(named)(1.0).jaxpr.eqns
    assert str(eqns[0].source_info.name_stack) == "triple"
    close(named(2.0), 6.0)
    close(jax.grad(named)(2.0), 3.0)
    with pytest.raises(TypeError):
        with jax.named_scope(3):
            pass


def test_custom_gradient():
    @jax.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * 10 * x,)

    close(f(3.0), 9.0)
    close(jax.grad(f)(3.0), 30.0)
    close(jax.jit(jax.grad(f))(3.0), 30.0)
    close(jax.vmap(jax.grad(f))(np.float32([1.0, 2.0])), [10.0, 20.0])

    @jax.custom_gradient
    def clip_gradient(x, y):
        return x * y, lambda g: (jnp.clip(g * y, -1.0, 1.0), g * x)

    gx, gy = jax.grad(clip_gradient, argnums=(0, 1))(2.0, 5.0)
    close(gx, 1.0)
    close(gy, 2.0)

    @jax.custom_gradient
    def single(x):
        return jnp.sin(x), lambda g: g * 7.0   # a bare cotangent for one argument

    close(jax.grad(single)(0.3), 7.0)

    @jax.custom_gradient
    def broken(x):
        return x

    with pytest.raises(TypeError, match="pair"):
        jax.grad(broken)(1.0)


# --- configuration context managers ----------------------------------------------------------

def test_strict_dtype_promotion():
    i32, f32 = jnp.ones(2, jnp.int32), jnp.ones(2, jnp.float32)
    assert (i32 + f32).dtype == np.float32
    with jax.numpy_dtype_promotion("strict"):
        assert (i32 + 1).dtype == np.int32 and (f32 + 1).dtype == np.float32
        assert (f32 * 2.5).dtype == np.float32 and (f32 + f32).dtype == np.float32
        with pytest.raises(jax.numpy.TypePromotionError if hasattr(
                jax.numpy, "TypePromotionError") else ValueError, match="strict"):
            i32 + f32
        with pytest.raises(ValueError, match="strict"):
            jnp.ones(2, jnp.float16) + f32
        with pytest.raises(ValueError, match="strict"):
            i32 + 1.5
    with pytest.raises(ValueError, match="must be one of"):
        config.config.update("jax_numpy_dtype_promotion", "loose")


def test_threefry_partitionable_switches_to_the_original_scheme():
    key = jax.random.PRNGKey(0)
    with jax.threefry_partitionable(False):
        # the values JAX's original scheme gives (its long-documented examples)
        assert jax.random.split(key).tolist() == [[4146024105, 967050713],
                                                  [2718843009, 1272950319]]
        close(jax.random.uniform(key, (3,)), [0.9653214, 0.31468165, 0.63302994])
        close(jax.jit(lambda k: jax.random.uniform(k, (3,)))(key),
              [0.9653214, 0.31468165, 0.63302994])
        assert jax.random.bits(key, (5,), np.uint8).shape == (5,)
    assert jax.random.split(key).tolist() != [[4146024105, 967050713],
                                              [2718843009, 1272950319]]


def test_default_prng_impl_and_legacy_keys():
    with jax.default_prng_impl("threefry2x32"):
        assert str(jax.random.key_impl(jax.random.key(0))) == "threefry2x32"
    with pytest.raises(ValueError, match="must be one of"):
        with jax.default_prng_impl("mersenne"):
            pass
    with jax.legacy_prng_key("error"):
        with pytest.raises(ValueError, match="Legacy uint32 key"):
            jax.random.normal(jax.random.PRNGKey(0))
        jax.random.normal(jax.random.key(0))
    with jax.legacy_prng_key("warn"):   # JAX 0.10.2's message, as for "error"
        with pytest.warns(UserWarning, match="Legacy uint32 key array passed as key"):
            jax.random.normal(jax.random.PRNGKey(0))


def test_enable_checks_runs_check_jaxpr(monkeypatch):
    calls = []
    original = jx.check_jaxpr
    monkeypatch.setattr(jx, "check_jaxpr", lambda j: calls.append(j) or original(j))
    jax.make_jaxpr(lambda v: jnp.sin(v) * 2)(1.0)
    assert not calls
    with jax.enable_checks(True):
        jax.make_jaxpr(lambda v: jnp.sin(v) * 2)(1.0)
        jax.jit(lambda v: lax_cond(v))(1.0)
    assert len(calls) >= 3   # the outer jaxprs and the cond branches


def lax_cond(v):
    return jax.lax.cond(v > 0, jnp.sin, jnp.cos, v)


def test_transfer_guards(caplog):
    f = jax.jit(lambda v: v + 1)
    on_device = jnp.ones(3)
    with jax.transfer_guard("disallow"):
        close(f(on_device), 2.0)                      # already a jax Array: no transfer
        with pytest.raises(RuntimeError, match="Disallowed host-to-device"):
            f(np.ones(3, np.float32))
        close(jax.device_put(np.ones(2)), [1, 1])     # explicit transfers are allowed
        assert jax.device_get(on_device).tolist() == [1, 1, 1]
    with jax.transfer_guard_host_to_device("disallow_explicit"):
        with pytest.raises(RuntimeError, match="explicit host-to-device"):
            jax.device_put(np.ones(2))
    with jax.transfer_guard_device_to_host("disallow_explicit"):
        with pytest.raises(RuntimeError, match="device-to-host"):
            jax.device_get(on_device)
    with caplog.at_level(logging.WARNING, logger="pyjax"):
        with jax.transfer_guard("log"):
            f(np.zeros(3, np.float32))
    assert "host-to-device transfer" in caplog.text
    assert config.transfer_guard_host_to_device.value == "allow"


def test_no_tracing_and_leak_checks_and_logging(caplog):
    f = jax.jit(lambda v: v * 2)
    f(1.0)
    with jax.no_tracing(True):
        close(f(2.0), 4.0)
        with pytest.raises(RuntimeError, match="no_tracing"):
            f(np.ones(2, np.float32))
    leaked = []
    with jax.check_tracer_leaks(True):
        with pytest.raises(UnexpectedTracerError):
            jax.jit(lambda v: leaked.append(v) or v)(1.0)
    with caplog.at_level(logging.WARNING):
        with jax.explain_cache_misses(True):
            g = jax.jit(lambda v: v - 1)
            g(1.0)
            g(np.ones(2, np.float32))
    assert "TRACING CACHE MISS" in caplog.text


def test_softmax_custom_jvp_switch():
    # JAX 0.10.2 defaults jax_softmax_custom_jvp to False (the rule is opt-in).
    assert jax.config.jax_softmax_custom_jvp is False
    x = jnp.array([1.0, 2.0, 3.0])
    plain = jax.make_jaxpr(jax.nn.softmax)(x).jaxpr.eqns[0].primitive.name
    with jax.softmax_custom_jvp(True):
        custom = jax.make_jaxpr(jax.nn.softmax)(x).jaxpr.eqns[0].primitive.name
        g = jax.grad(lambda v: jax.nn.softmax(v)[0])(x)
    assert custom == "custom_jvp_call" and plain != "custom_jvp_call"
    close(g, jax.grad(lambda v: jax.nn.softmax(v)[0])(x))


# --- jax.debug.breakpoint and jax.debug.log --------------------------------------------------

def _session(commands):
    out = io.StringIO()
    return out, dict(stdin=io.StringIO(commands), stdout=out)


def test_breakpoint_eager_shows_values_and_source():
    out, io_kwargs = _session("p y\np label\npp {'k': y}\nz = y + 1\np foo_global\nl\nbt\nc\n")

    def f(x):
        y = x * 2
        label = "here"
        jax.debug.breakpoint(**io_kwargs)
        return y, label

    f(jnp.float32(1.5))
    text = out.getvalue()
    # JAX 0.10.2's session: expressions only, the frame's locals only (no globals)
    assert text.startswith(
        "Entering jdb:\n(jdb) Array(3., dtype=float32)\n(jdb) 'here'\n"
        "(jdb) {'k': Array(3., dtype=float32)}\n(jdb) *** SyntaxError: invalid syntax\n"
        "(jdb) *** NameError: name 'foo_global' is not defined\n(jdb) > "), text
    assert "\n->          jax.debug.breakpoint(**io_kwargs)\n" in text
    assert "\n            label = \"here\"\n" in text
    assert "(jdb) Traceback:\n" in text and "test_toplevel.py\", line " in text
    assert text.endswith("\n(jdb) ")


foo_global = 1


def test_breakpoint_under_jit_and_vmap_sees_runtime_values():
    out, io_kwargs = _session("p y\nc\n")

    @jax.jit
    def f(x):
        y = jnp.sin(x)
        jax.debug.breakpoint(**io_kwargs)
        return y

    f(0.5)
    assert "Array(0.4794255" in out.getvalue()
    seen = []
    debugger.register_debugger("record", lambda frames, thread_id, **kw: seen.append(
        float(frames[0].locals["y"])), -1)
    def g(x):
        y = x + 1
        jax.debug.breakpoint(backend="record")
        return y

    jax.vmap(g)(np.float32([1.0, 2.0]))
    assert seen == [2.0, 3.0]
    with pytest.raises(ValueError, match='Debugger with name "record" already registered.'):
        debugger.register_debugger("record", print, 0)
    # an unknown backend is the registered debugger of highest priority, as in JAX
    assert debugger.get_debugger("nope") is debugger.get_debugger("cli")


def test_breakpoint_moves_between_frames_and_unflattenable_locals():
    out, io_kwargs = _session("u\np outer_local\np table\nd\nu\nu\n")

    def inner(y):
        jax.debug.breakpoint(**io_kwargs)
        return y

    def outer(x):
        outer_local = 41
        table = {print: 1, len: 2}   # keys that do not sort: not a pytree
        return inner(x * 2) + outer_local + len(table)

    with pytest.raises(SystemExit) as info:   # end of input quits, as in JAX
        outer(jnp.float32(1.0))
    assert info.value.code == 0
    text = out.getvalue()
    assert "(jdb) 41\n(jdb) <cant_flatten>\n" in text
    assert "->          return inner(x * 2) + outer_local + len(table)" in text


def test_debug_log(caplog):
    @jax.jit
    def f(x):
        jax.debug.log("x is {}, doubled {d}", x, d=x * 2)
        jax.debug.log("quiet {}", x, level=logging.DEBUG)
        return x

    with caplog.at_level(logging.INFO, logger="jax._src.debugging"):
        f(np.float32(1.5))
        jax.vmap(lambda v: jax.debug.log("v={}", v) or v)(np.float32([1.0, 2.0]))
    messages = [r.getMessage() for r in caplog.records if r.name == "jax._src.debugging"]
    assert messages == ["x is 1.5, doubled 3.0", "v=1.0", "v=2.0"]
    with pytest.raises(IndexError, match="tuple index out of range"):   # as in JAX
        jax.debug.log("{} and {}", 1.0)
    with pytest.raises(TypeError, match="level"):
        jax.debug.log("x", level="INFO")


def test_stages_types_and_args_info():
    import pyjax.stages as stages
    import pyjax.typing as jtyping
    f = jax.jit(lambda x, n, p=None: x * n, static_argnums=1, donate_argnums=0)
    traced = f.trace(jnp.ones(3), 2, p={"a": 1.0})
    lowered = traced.lower()
    compiled = lowered.compile()
    assert isinstance(f, stages.Wrapped) and isinstance(traced, stages.Traced)
    assert isinstance(lowered, stages.Lowered) and isinstance(compiled, stages.Compiled)
    expected = ("((ArgInfo(_aval=ShapedArray(float32[3]), donated=True),), {'p': {'a': "
                "ArgInfo(_aval=ShapedArray(float32[], weak_type=True), donated=False)}})")
    for stage in (traced, lowered, compiled):          # static arguments are left out
        assert str(stage.args_info) == expected
    info = lowered.args_info[0][0]
    assert info.shape == (3,) and info.dtype == jnp.float32 and info.donated
    assert jtyping.ArrayLike.__args__[0] is jax.Array and np.ndarray in jtyping.ArrayLike.__args__


def test_dlpack_module():
    import ml_dtypes

    import pyjax.dlpack
    assert pyjax.dlpack.from_dlpack(np.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
    assert all(pyjax.dlpack.is_supported_dtype(t) for t in
               (np.float16, np.float64, np.uint64, np.bool_, np.complex64, jnp.bfloat16))
    assert not pyjax.dlpack.is_supported_dtype(ml_dtypes.float8_e4m3fn)


def test_make_jaxpr_prints_like_jax():
    text = str(jax.make_jaxpr(jax.grad(lambda x: jnp.sin(x) * x))(1.0))
    # the seed is a literal; an output nothing reads prints as _
    assert text == ("{ lambda ; a:f32[]. let\n    b:f32[] = sin a\n    c:f32[] = cos a\n"
                    "    _:f32[] = mul b a\n    d:f32[] = mul b 1.0:f32[]\n"
                    "    e:f32[] = mul 1.0:f32[] a\n    f:f32[] = mul e c\n"
                    "    g:f32[] = add_any d f\n  in (g,) }")
    # short equations share a line, as JAX joins them (recorded from JAX 0.10.2)
    def cos_of(x):
        y = jnp.cos(x)
        jnp.sin(y)
        return y
    assert str(jax.make_jaxpr(cos_of)(1.0)) == (
        "{ lambda ; a:f32[]. let b:f32[] = cos a; _:f32[] = sin b in (b,) }")
    assert str(jax.make_jaxpr(lambda x: x)(1.0)) == "{ lambda ; a:f32[]. let  in (a,) }"
    assert str(jax.make_jaxpr(lambda x: x + 1)(1.0)) == \
        "{ lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (b,) }"
    text = str(jax.make_jaxpr(lambda p, x: jax.lax.cond(p, lambda y: y + 1 - 2,
                                                        lambda y: y * 2, x))(True, 1.0))
    assert text == """{ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = mul e 2.0:f32[] in (f,) }
        { lambda ; g:f32[]. let
            h:f32[] = add g 1.0:f32[]
            i:f32[] = sub h 2.0:f32[]
          in (i,) }
      )
    ] c b
  in (d,) }"""


def test_shape_dtype_struct_needs_a_dtype_and_has_a_length():
    with pytest.raises(ValueError, match="dtype must be specified"):
        jax.ShapeDtypeStruct((2,), None)
    assert len(jax.ShapeDtypeStruct((2, 3), jnp.float32)) == 2


def test_shape_dtype_struct_staged_by_a_trace_is_a_constant_of_its_type():
    # JAX 0.10.2: a jitted function (or a primitive) given a ShapeDtypeStruct under a
    # trace stages it as a constant without a value; only running that fails
    sds = jax.ShapeDtypeStruct((), jnp.float32)
    inner = jax.jit(lambda x: x + 1)
    out = jax.eval_shape(lambda: inner(sds))
    assert (out.shape, out.dtype) == ((), np.float32)
    assert str(jax.make_jaxpr(lambda: jax.lax.add(sds, 1.))()) == (
        "{ lambda a:f32[]; . let b:f32[] = add a 1.0:f32[] in (b,) }")
    for outer in (lambda: inner(sds), lambda: jax.lax.add(sds, 1.)):
        with pytest.raises(TypeError, match=r"^A ShapeDtypeStruct does not have a value and "
                           r"cannot be used as a constant in a JAX function\."):
            jax.jit(outer)()
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        inner(sds)   # outside a trace: refused as before



def test_make_jaxpr_prints_a_jit_equation_as_jax():
    inner = jax.jit(lambda y: y * 2, donate_argnums=0)
    assert str(jax.make_jaxpr(lambda x: inner(x) + 1)(1.0)) == """{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      donated_invars=(True,)
      jaxpr={ lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) }
    ] a
    c:f32[] = add b 1.0:f32[]
  in (c,) }"""



def test_a_jit_body_prints_with_its_equations_names():
    # JAX 0.10.2 (its jaxpr.md page): the body's binders print as the jit equation's
    # operands and results, its other variables go on from the outer jaxpr's names, and
    # a short jit equation stays on one line
    def func12(arg):
        @jax.jit
        def inner(x):
            return x + arg * jnp.ones(1)
        return arg + inner(arg - 2.)
    assert str(jax.make_jaxpr(func12)(1.)) == """{ lambda ; a:f32[]. let
    b:f32[] = sub a 2.0:f32[]
    c:f32[1] = jit[
      name=inner
      jaxpr={ lambda ; a:f32[] b:f32[]. let
          d:f32[1] = broadcast_in_dim 1.0:f32[]
          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
          f:f32[1] = mul e d
          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
          c:f32[1] = add g f
        in (c,) }
    ] a b
    h:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    i:f32[1] = add h c
  in (i,) }"""
    assert str(jax.make_jaxpr(lambda x: jax.jit(lambda a: a)(x))(1.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = jit[name=<lambda> jaxpr={ lambda ; a:f32[]. let  in (a,) }] a\n"
        "  in (b,) }")

def test_works_from_a_thread_other_than_the_importing_one():
    import threading
    results = []

    def work():
        results.append((float(jnp.sin(1.0)), float(jax.jit(lambda x: x * 2)(3.0)),
                        float(jax.grad(jnp.sin)(0.0))))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert results == [(pytest.approx(np.sin(1.0)), 6.0, 1.0)]


def test_device_get_passes_tracers_through():
    # as JAX 0.10.2: jit -> 6.0, grad -> 6.0, and vmap keeps the batched leaf
    assert float(jax.jit(lambda x: jax.device_get(x) * 2)(jnp.float32(3))) == 6.0
    assert float(jax.grad(lambda x: jax.device_get(x) ** 2)(3.0)) == 6.0
    out = jax.vmap(lambda x: jax.device_get({"a": x, "b": 1}))(jnp.arange(3.))
    assert out["a"].tolist() == [0.0, 1.0, 2.0] and out["b"].tolist() == [1, 1, 1]


def test_objects_with_a_shape_and_dtype_stand_for_arrays_where_jax_takes_them():
    # eval_shape, make_jaxpr, linear_transpose and lower take any object with .shape and
    # .dtype (canonicalized, weak if it says so); typeof refuses it. Recorded on JAX.
    import types

    class EasyDict(dict):   # a dict subclass is a leaf, as in JAX
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.__dict__ = self

    duck = types.SimpleNamespace(shape=[3], dtype=np.float64)
    assert jax.eval_shape(lambda x: x, duck) == jax.ShapeDtypeStruct((3,), np.float32)
    weak = jax.eval_shape(lambda x: x, types.SimpleNamespace(shape=(3,), dtype="int64",
                                                            weak_type=True))
    assert (weak.dtype, weak.weak_type) == (np.int32, True)
    assert jax.eval_shape(lambda x: x, EasyDict(shape=(3,), dtype=np.dtype("float32"))
                          ).shape == (3,)
    scalar = types.SimpleNamespace(shape=(), dtype=np.dtype(np.float32))
    assert str(jax.make_jaxpr(lambda x: x + 2.0)(scalar)) == \
        "{ lambda ; a:f32[]. let b:f32[] = add a 2.0:f32[] in (b,) }"
    vector = types.SimpleNamespace(shape=(2,), dtype=np.dtype(np.float32))
    close(jax.linear_transpose(lambda x: 2 * x, vector)(np.ones(2, np.float32))[0],
          [2.0, 2.0])
    assert "tensor<2xf32>" in jax.jit(lambda x: x).lower(vector).as_text()
    with pytest.raises(TypeError, match="not a valid JAX type"):
        jax.typeof(scalar)
    with pytest.raises(TypeError, match="not a valid JAX type"):
        jax.eval_shape(lambda x: x, types.SimpleNamespace(shape=(2,)))
