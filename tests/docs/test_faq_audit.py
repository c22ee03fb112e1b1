"""The remaining examples of JAX's FAQ (spec/jax-faq.md, .rst and the older text) that the
other test files do not already run: printed numerics under jit, Python loops vs scan,
placement, benchmarking, the kinds of tracers each transformation introduces, donation
with keyword arguments, printed gradients of step functions, Tracer types, and the
`jnp.split` concreteness error; plus JAX's current Array repr and weak-typed creation."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import errors, lax
from pyjax._src import config

ON_XLA = config.executor.value == "xla"


def xla_folds_like_the_faq():
    """The FAQ's numerics come from XLA's algebraic simplifier (jaxlib 0.10 here)."""
    if not ON_XLA:
        return False
    from pyjax._src.backends import xla
    return tuple(int(p) for p in xla.JAXLIB_VERSION.split(".")[:2]) < (0, 12)


# --- `jit` changes the exact numerics of outputs ----------------------------------------------

def test_jit_numerics_print_like_the_faq(capsys):
    def f(x):
        return jnp.log(jnp.sqrt(x))

    def g(x):
        return jnp.log(jnp.exp(x))

    print(f(jnp.pi))
    print(g(100.0))
    expected = ["0.572365", "inf"]
    if xla_folds_like_the_faq():
        print(jax.jit(f)(jnp.pi))
        print(jax.jit(g)(100.0))
        expected += ["0.5723649", "100.0"]
    assert capsys.readouterr().out.splitlines() == expected


# --- `jit` decorated function is very slow to compile -------------------------------------------

def test_python_loops_unroll_into_the_jaxpr_but_scan_does_not():
    def unrolled(x):
        for _ in range(50):
            x = jnp.sin(x)
        return x

    def rolled(x):
        return lax.scan(lambda c, _: (jnp.sin(c), None), x, None, length=50)[0]

    assert len(jax.make_jaxpr(unrolled)(1.0).jaxpr.eqns) == 50
    assert [e.primitive.name for e in jax.make_jaxpr(rolled)(1.0).jaxpr.eqns] == ["scan"]
    np.testing.assert_allclose(jax.jit(rolled)(1.0), jax.jit(unrolled)(1.0), rtol=1e-6)


def test_padding_with_where_keeps_one_compiled_shape():
    @jax.jit
    def masked_mean(padded, n):
        valid = jnp.arange(padded.shape[0]) < n
        return jnp.where(valid, padded, 0.0).sum() / n

    for data in ([1.0, 2.0], [1.0, 2.0, 3.0, 4.0, 5.0], [7.0]):
        padded = np.zeros(8, np.float32)
        padded[:len(data)] = data
        assert float(masked_mean(padded, len(data))) == pytest.approx(np.mean(data))
    assert masked_mean._cache_size() == 1


# --- Controlling data and computation placement on devices --------------------------------------

def test_default_placement_is_uncommitted_and_device_put_commits():
    default = jax.devices()[0]
    x = jnp.ones(3)
    assert str(x.device) == f"{default.platform}:{default.id}" and not x.committed
    with pytest.raises(AttributeError, match=r"addressable_data\(0\)"):
        x.device_buffer.device()    # the FAQ's pre-jax.Array spelling
    one = jax.device_put(1, default)
    assert repr(one) == "Array(1, dtype=int32, weak_type=True)" and one.committed
    assert jax.device_put(1).committed is False
    # computation follows committed data, eagerly and under jit
    assert (x + one).committed and jax.jit(lambda a, b: a * b)(x, one).committed
    assert not (x + x).committed and not jax.jit(lambda a: a * 2)(x).committed
    assert jax.device_put(one) is one


@pytest.mark.parametrize("executor", ["xla", "numpy"])
def test_device_put_copies_numpy_arrays(executor):
    with config.executor(executor):
        host = np.arange(4.0)
        placed = jax.device_put(host)
        host[0] = 7.0                  # the placed array must not see later writes
        assert placed.tolist() == [0.0, 1.0, 2.0, 3.0] and placed.dtype == jnp.float32
        assert not placed.committed and jax.device_put(host, jax.devices()[0]).committed


def test_jit_device_argument_is_deprecated():
    with pytest.warns(DeprecationWarning, match="device_put"):
        f = jax.jit(lambda a: a + 1, device=jax.devices()[0])
    assert float(f(1.0)) == 2.0


# --- Benchmarking JAX code --------------------------------------------------------------------

def test_benchmark_recipe_compiles_once_and_blocks_until_ready():
    def f(x):   # the FAQ's benchmark body, runs on NumPy and JAX alike
        return x.T @ (x - x.mean(axis=0))

    x_np = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096
    x_jax = jax.device_put(x_np)
    assert x_jax.dtype == np.float32
    assert jax.device_put(x_np.astype(np.float64)).dtype == np.float32   # 32-bit default
    with jax.enable_x64(True):
        assert jax.device_put(x_np.astype(np.float64)).dtype == np.float64
    f_jit = jax.jit(f)
    if ON_XLA:
        from pyjax._src.backends import xla
        before = xla.stats["compiles"]
    out = f_jit(x_jax)
    assert out.block_until_ready() is out
    if ON_XLA:
        assert xla.stats["compiles"] == before + 1    # the first call compiles...
        f_jit(x_jax).block_until_ready()
        assert xla.stats["compiles"] == before + 1    # ...later calls only run
    np.testing.assert_allclose(out, f(x_np), rtol=1e-4, atol=1e-4)
    tree = {"a": out, "b": [out]}
    assert jax.block_until_ready(tree) is tree


# --- Different kinds of JAX values ----------------------------------------------------------------

def divide(x, y):
    return x / y if y >= 1. else 0.


def test_print_inside_jit_shows_an_abstract_tracer(capsys):
    def func(x):
        print(x)
        return jnp.cos(x)

    res = jax.jit(func)(0.)
    assert float(res) == 1.0
    assert capsys.readouterr().out == "JitTracer(~float32[])\n"


@pytest.mark.parametrize("transform", ["jit", "vmap", "make_jaxpr"])
@pytest.mark.parametrize("use", [lambda y: bool(y >= 1.), int, float, lambda y: y.item(),
                                 lambda y: y.tolist()])
def test_abstract_tracers_cannot_become_python_values(transform, use):
    run = {"jit": lambda f: jax.jit(f)(jnp.ones(())),
           "vmap": lambda f: jax.vmap(f)(jnp.ones(3)),
           "make_jaxpr": lambda f: jax.make_jaxpr(f)(jnp.ones(()))}[transform]
    with pytest.raises(errors.ConcretizationTypeError):
        run(lambda y: jnp.zeros(()) + use(y))


def test_shapes_of_abstract_tracers_are_regular_python_values():
    seen = []

    def f(x):
        seen.append(x.shape)
        return x.reshape(x.shape[0] * x.shape[1])

    jax.jit(f)(jnp.ones((2, 3)))
    jax.vmap(f)(jnp.ones((4, 2, 3)))
    assert seen == [(2, 3), (2, 3)] and all(type(s) is tuple for s in seen)


def test_autodiff_introduces_concrete_tracers():
    def f(x):
        assert bool(x > 0) and int(x) == 3 and float(x) == 3.0
        return x * x.astype(float)

    assert float(jax.grad(f)(3.0)) == 6.0
    assert float(jax.jvp(f, (3.0,), (1.0,))[1]) == 6.0
    assert float(jax.grad(divide)(3., 2.)) == 0.5


def test_pmap_static_broadcasted_argnums_keep_regular_values():
    out = jax.pmap(divide, static_broadcasted_argnums=1)(jnp.ones(1) * 3., 2.)
    np.testing.assert_allclose(out, [1.5])
    with pytest.raises(errors.ConcretizationTypeError):
        jax.pmap(divide)(jnp.ones(1) * 3., jnp.ones(1) * 2.)


@pytest.mark.parametrize("name", ["cond", "while_loop", "fori_loop", "scan"])
def test_control_flow_bodies_get_abstract_tracers_even_untransformed(name):
    run = {
        "cond": lambda: lax.cond(True, lambda v: v if v > 0 else -v, lambda v: v, 1.0),
        "while_loop": lambda: lax.while_loop(lambda v: bool(v < 3), lambda v: v + 1, 0),
        "fori_loop": lambda: lax.fori_loop(0, 3, lambda i, v: v + int(i), 0),
        "scan": lambda: lax.scan(lambda c, v: (c + float(v), v), 0.0, jnp.ones(3)),
    }[name]
    with pytest.raises(errors.ConcretizationTypeError):
        run()


def test_tracer_integer_conversion_is_a_type_error_like_jax():
    assert issubclass(errors.TracerIntegerConversionError, TypeError)
    assert not issubclass(errors.TracerIntegerConversionError, IndexError)


# --- Buffer donation ------------------------------------------------------------------------------

def add(x, y):
    return x + y


def test_donated_array_reports_its_shape_like_jax():
    x = jax.device_put(np.ones((2, 3)))
    y = jax.device_put(np.ones((2, 3)))
    jax.jit(add, donate_argnums=(1,))(x, y)
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[2,3\]"):
        y + 1


def test_donation_and_keyword_arguments():
    # jit maps donate_argnums onto parameter names, so keywords donate too (JAX 0.10)
    x, y = jax.device_put(np.ones((2, 3))), jax.device_put(np.ones((2, 3)))
    jax.jit(add, donate_argnums=(1,))(x, y=y)
    assert y.is_deleted() and not x.is_deleted()
    x, y = jax.device_put(np.ones((2, 3))), jax.device_put(np.ones((2, 3)))
    jax.jit(add, donate_argnums=(1,))(x=x, y=y)
    assert y.is_deleted() and not x.is_deleted()
    # pmap, as the FAQ warns, donates nothing that is passed by keyword
    x, y = jax.device_put(np.ones((1, 3))), jax.device_put(np.ones((1, 3)))
    jax.pmap(add, donate_argnums=(0, 1))(x=x, y=y)
    assert not x.is_deleted() and not y.is_deleted()
    jax.pmap(add, donate_argnums=(1,))(x, y)
    assert y.is_deleted() and not x.is_deleted()


# --- Why are gradients zero for functions based on sort order? ------------------------------------

def test_step_and_sigmoid_gradients_print_like_the_faq(capsys):
    def f(x):
        return (x > 0).astype(float)

    df = jax.vmap(jax.grad(f))
    x = jnp.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    print(f"f(x) = {f(x)}")
    print(f"df(x) = {df(x)}")
    dg = jax.vmap(jax.grad(jax.nn.sigmoid))
    x = jnp.array([-10.0, -1.0, 0.0, 1.0, 10.0])
    with np.printoptions(suppress=True, precision=2):
        print(f"g(x) = {jax.nn.sigmoid(x)}")
        print(f"dg(x) = {dg(x)}")
    out = capsys.readouterr().out.splitlines()
    assert out == ["f(x) = [0. 0. 0. 1. 1.]", "df(x) = [0. 0. 0. 0. 0.]",
                   "g(x) = [0.   0.27 0.5  0.73 1.  ]", "dg(x) = [0.   0.2  0.25 0.2  0.  ]"]
    # the FAQ's text is the same modulo whitespace
    assert " ".join(out[2].split()) == "g(x) = [0. 0.27 0.5 0.73 1. ]"


def test_smooth_replacements_for_rank_based_functions_have_gradients():
    x = jnp.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    np.testing.assert_array_equal(jax.vmap(jax.grad(jnp.sign))(x), np.zeros(5))
    np.testing.assert_allclose(jax.vmap(jax.grad(jax.nn.soft_sign))(x),
                               1 / (1 + np.abs(np.asarray(x))) ** 2, rtol=1e-6)
    np.testing.assert_array_equal(jax.vmap(jax.grad(jax.nn.relu))(x), [0., 0., 0., 1., 1.])
    np.testing.assert_allclose(jax.vmap(jax.grad(jax.nn.softplus))(x),
                               1 / (1 + np.exp(-np.asarray(x))), rtol=1e-6)
    np.testing.assert_allclose(jax.nn.softmax(x).sum(), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(jax.grad(lambda v: jnp.sort(v)[-1])(x), [0, 0, 0, 0, 1])


def test_array_repr_layout_matches_jax():
    sig = jax.nn.sigmoid(jnp.array([-10.0, -1.0, 0.0, 1.0, 10.0]))
    assert repr(sig) == ("Array([4.5397872e-05, 2.6894143e-01, 5.0000000e-01, 7.3105860e-01,\n"
                         "       9.9995458e-01], dtype=float32)")
    assert repr(jnp.arange(30)) == (
        "Array([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16,\n"
        "       17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29], dtype=int32)")
    assert repr(jnp.zeros(0)) == "Array([], shape=(0,), dtype=float32)"
    assert repr(jnp.zeros((0, 3))) == "Array([], shape=(0, 3), dtype=float32)"
    with np.printoptions(precision=2):   # a long last line pushes dtype 6 spaces along
        assert repr(jnp.arange(20.0) / 4).endswith("4.75],      dtype=float32)")


# --- Creating arrays: jnp.array / jnp.asarray keep Python scalars weakly typed ------------------

def test_array_creation_weak_types_like_jax():
    assert repr(jnp.array(1.0)) == "Array(1., dtype=float32, weak_type=True)"
    assert repr(jnp.asarray(3)) == "Array(3, dtype=int32, weak_type=True)"
    assert repr(jnp.array(1.0, dtype=jnp.float32)) == "Array(1., dtype=float32)"
    assert repr(jnp.array([1.0])) == "Array([1.], dtype=float32)"
    assert repr(jnp.array(True)) == "Array(True, dtype=bool)"
    weak = jnp.array(1.0)
    assert jnp.array(weak).weak_type and jnp.asarray(weak) is weak
    assert not jnp.array([weak, weak]).weak_type
    assert jnp.full((2,), 1.0).weak_type and not jnp.full((2,), 1.0, jnp.float32).weak_type
    assert jnp.zeros_like(weak).weak_type and jnp.full_like(weak, 2).weak_type
    assert not jnp.zeros_like(weak, dtype=jnp.float32).weak_type
    # weak values adopt the other operand's dtype
    assert (jnp.array(1.0) + jnp.ones(2, jnp.bfloat16)).dtype == jnp.bfloat16
    assert (jnp.full((2,), 2) * jnp.ones(2, jnp.int8)).dtype == jnp.int8


# --- How can I convert a JAX Tracer to a NumPy array? -------------------------------------------

def test_type_of_a_jit_argument_is_the_staging_tracer(capsys):
    @jax.jit
    def f(x):
        print(type(x))
        assert isinstance(x, jax.core.Tracer)
        return x

    f(jnp.arange(5))
    assert capsys.readouterr().out.strip() == (
        "<class 'pyjax._src.interpreters.partial_eval.DynamicJaxprTracer'>")


# --- Abstract tracer value encountered where concrete value is expected (older FAQ) ------------

def test_split_needs_static_sections_and_axis():
    with pytest.raises(errors.ConcretizationTypeError, match="jnp.split argument 'axis'"):
        jax.jit(jnp.split)(np.zeros(4), 2, 0)
    with pytest.raises(errors.ConcretizationTypeError,
                       match="jnp.split argument 'indices_or_sections'"):
        jax.jit(jnp.split, static_argnums=2)(np.zeros(4), 2, 0)
    for parts in (jax.jit(jnp.split, static_argnums=(1, 2))(np.zeros(4), 2, 0),
                  jax.jit(lambda arr: jnp.split(arr, 2, 0))(np.zeros(4))):
        assert [p.shape for p in parts] == [(2,), (2,)]
