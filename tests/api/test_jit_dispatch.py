"""What jit's cached calls return and which path they take: results built by the lean
runner are ordinary Arrays, and shardings prefixes of only None (flax's nnx.jit passes
`out_shardings=(None, [None])`) leave calls on the fast path, as no prefix does, with
JAX's results (uncommitted outputs of uncommitted inputs) and JAX's prefix errors."""
import collections
import threading

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src.array import Array
from pyjax._src.backends import dispatch


def _step(params, x):
    new = jax.tree_util.tree_map(lambda p: p - 0.5 * x, params)
    return new, jnp.sum(x)


def test_runner_results_are_complete_arrays():
    params = [{"w": jnp.ones((2, 2)), "b": jnp.zeros(2)} for _ in range(3)]
    f = jax.jit(_step)
    for _ in range(3):   # the later calls run the cached fast call
        params, total = f(params, jnp.float32(1.0))
    assert len(f._jit.fast_calls) == 1
    for leaf in jax.tree_util.tree_leaves(params):
        assert type(leaf) is Array and isinstance(leaf, jax.Array)
        assert not leaf.committed and not leaf.is_deleted()
        assert leaf.sharding == jax.sharding.SingleDeviceSharding(jax.devices()[0])
        assert leaf.block_until_ready() is leaf and leaf.is_ready()
    # jax.block_until_ready returns what it is given: one Array, or the whole pytree
    fresh = f(params, jnp.float32(2.0))[1]
    assert jax.block_until_ready(fresh) is fresh and fresh.is_ready() and float(fresh) == 2
    assert jax.block_until_ready(params) is params
    np.testing.assert_array_equal(params[0]["w"], np.full((2, 2), -0.5, np.float32))
    np.testing.assert_array_equal(params[2]["b"], np.full(2, -1.5, np.float32))
    assert float(total) == 1.0 and total.shape == () and not total.weak_type
    weak = jax.jit(lambda x: x * 2)(3.0)   # a Python float in: a weakly typed result
    assert weak.weak_type and weak.dtype == np.float32 and float(weak) == 6.0
    # results are values: deleting one leaves its neighbours alone
    first, second = params[0]["w"], params[0]["b"]
    first.delete()
    assert first.is_deleted() and not second.is_deleted()
    np.testing.assert_array_equal(second, np.full(2, -1.5, np.float32))


def _is_host_float0(x, shape):
    return (isinstance(x, np.ndarray) and not isinstance(x, jax.Array)
            and x.dtype == jax.dtypes.float0 and x.shape == shape)


def test_float0_results_are_host_arrays(executor):
    # JAX 0.10.2 hands float0 results of compiled programs out as NumPy arrays (its
    # TypedNdArray), which NumPy compares; the other results stay Arrays
    z = np.zeros((2,), jax.dtypes.float0)
    f = jax.jit(lambda a, b: (a, b * 2))
    for _ in range(2):   # the first call, then the cached one
        a, b = f(z, 1.0)
        assert _is_host_float0(a, (2,)) and (a == a).all()
        assert isinstance(b, jax.Array) and float(b) == 2.0
    assert _is_host_float0(jax.jit(lambda a: a).lower(z).compile()(z), (2,))
    g = jax.jit(jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True))
    for _ in range(2):
        gx, gn = g(2.0, 3)
        assert isinstance(gx, jax.Array) and float(gx) == 3.0 and _is_host_float0(gn, ())
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
    s = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
    a, b = jax.jit(lambda a, b: (a, b * 2), out_shardings=(None, s))(z, jnp.arange(4.0))
    assert _is_host_float0(a, (2,)) and isinstance(b, jax.Array)


def test_float0_results_of_pmap_are_host_arrays():
    out = jax.pmap(lambda a: a)(np.zeros((1, 2), jax.dtypes.float0))
    assert _is_host_float0(out, (1, 2))


def test_committed_inputs_give_committed_results():
    x = jax.device_put(jnp.arange(3.0), jax.devices()[0])
    f = jax.jit(lambda v: (v + 1, v * 2))
    for _ in range(2):
        a, b = f(x)
    assert a.committed and b.committed
    assert a.device == b.device == jax.devices()[0]


def test_donated_argument_is_deleted_on_the_fast_path():
    f = jax.jit(lambda v: v + 1, donate_argnums=0)
    x = jnp.arange(4.0)
    for _ in range(3):
        x = f(x)
    old = jnp.arange(4.0)
    f(old)
    assert old.is_deleted()
    np.testing.assert_array_equal(x, np.arange(4.0) + 3)


def test_lowered_and_compiled_give_the_flat_donated_indices():
    # JAX 0.10.2: donate_argnums of Lowered and Compiled count argument leaves
    def f(*args):
        return args[0] + 4.
    lowered = jax.jit(f, donate_argnums=(0,)).lower(1., 1.)
    assert lowered.donate_argnums == lowered.compile().donate_argnums == (0,)
    lowered = jax.jit(lambda a, b: a, donate_argnums=(1,)).lower((1., 2.), 3.)
    assert lowered.donate_argnums == lowered.compile().donate_argnums == (2,)
    assert jax.jit(lambda a, b: a).lower((1., 2.), 3.).donate_argnums == ()


@pytest.mark.parametrize("donate", [{"donate_argnames": ("z", "y")},
                                    {"donate_argnums": (0, 1)}])
def test_keyword_arguments_out_of_order_donate_the_named_ones(donate):
    # JAX's test_dict_donation: keyword arguments flatten in sorted key order, so the
    # donation flags must follow that order, not the order of the call's keywords.
    f = jax.jit(lambda z, y, x: (z, y, x), **donate)
    _, info = f.lower(z={"c": 3.}, y={"b": 2.}, x={"a": 1.}).args_info
    assert [info[k][n].donated for k, n in (("z", "c"), ("y", "b"), ("x", "a"))] == \
        [True, True, False]                                     # JAX 0.10.2
    z, y, x = ({k: jnp.ones(3)} for k in "cba")
    f(z=z, y=y, x=x)
    assert [z["c"].is_deleted(), y["b"].is_deleted(), x["a"].is_deleted()] == \
        [True, True, False]                                     # JAX 0.10.2


def test_keyword_arguments_out_of_order_are_named_in_errors():
    with pytest.raises(TypeError, match="at path x"):
        jax.jit(lambda z, y, x: z)(z=1., y=2., x="a")


def test_donation_reuses_the_buffer_of_an_array_made_on_the_host():
    # An Array computed on the host gets its device buffer on first use. XLA may alias
    # 64-byte aligned host memory, and could not reuse such a buffer when the array is
    # donated: the result would get a fresh one. In JAX the result of donating a device
    # array takes its buffer (equinox's test_buffer_donation_method checks the pointer).
    raw = np.zeros(4096 * 4 + 64, np.uint8)
    offset = (-raw.ctypes.data) % 64
    aligned = raw[offset:offset + 4096 * 4].view(np.float32)
    x = Array(aligned)
    pointer = x.unsafe_buffer_pointer()
    out = jax.jit(lambda v: v + 1, donate_argnums=0)(x)
    assert x.is_deleted() and out.unsafe_buffer_pointer() == pointer
    np.testing.assert_array_equal(out, np.ones(4096, np.float32))


def test_shardings_of_only_none_take_the_fast_path(monkeypatch):
    partitioned = []
    run_sharded = dispatch.run_sharded
    monkeypatch.setattr(dispatch, "run_sharded",
                        lambda *a, **k: partitioned.append(1) or run_sharded(*a, **k))
    f = jax.jit(lambda x: (x + 1, [x * 2]), in_shardings=None,
                out_shardings=(None, [None]))
    for _ in range(3):
        out = f(jnp.ones(2))
    assert len(f._jit.fast_calls) == 1 and not partitioned
    # as in JAX 0.10.2: (Array([2., 2.], dtype=float32), [Array([2., 2.], ...)]), and
    # out[0]._committed is False
    assert not out[0].committed and not out[1][0].committed
    np.testing.assert_array_equal(out[1][0], [2.0, 2.0])


def test_shardings_of_only_none_still_check_the_prefix():
    g = jax.jit(lambda x: (x + 1, x * 2), out_shardings=(None, None, None))
    # JAX 0.10.2: ValueError ... "different lengths of tuple at key path pjit out_shardings"
    with pytest.raises(ValueError, match="out_shardings"):
        g(jnp.ones(2))


def test_fast_calls_from_threads():
    f = jax.jit(_step)
    params = [{"w": jnp.ones((2, 2)), "b": jnp.zeros(2)} for _ in range(2)]
    f(params, jnp.float32(1.0))
    results, errors = [], []

    def worker():
        try:
            p = params
            for _ in range(20):
                p, _ = f(p, jnp.float32(1.0))
            results.append(float(p[1]["w"][0, 0]))
        except Exception as err:   # noqa: BLE001 - reported below
            errors.append(err)
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and results == [-9.0] * 4


class _Scaled:
    """A registered node with aux data, as flax and equinox modules are."""

    def __init__(self, scale, value):
        self.scale, self.value = scale, value


jax.tree_util.register_pytree_node(_Scaled, lambda s: ((s.value,), s.scale),
                                   lambda scale, kids: _Scaled(scale, *kids))


def test_cached_calls_take_apart_and_build_pytrees():
    Pair = collections.namedtuple("Pair", "a b")

    def step(params, state):
        new = {"w": params["w"] - state.a, "b": params["b"] * 2.0}   # unsorted: comes back sorted
        return new, Pair(state.a + 1.0, _Scaled(state.b.scale, state.b.value * 3.0)), None

    f = jax.jit(step)
    params, state = {"b": jnp.ones(2), "w": jnp.ones(3)}, Pair(jnp.float32(1), _Scaled(
        "s", jnp.arange(2.0)))
    for _ in range(3):   # the first call traces; later ones take the fast call
        params, state, none = f(params, state)
    assert list(params) == ["b", "w"] and none is None   # sorted keys, as on JAX
    np.testing.assert_allclose(params["w"], -5.0)   # 1 - 1 - 2 - 3
    np.testing.assert_allclose(params["b"], 8.0)
    assert type(state) is Pair and type(state.b) is _Scaled and state.b.scale == "s"
    np.testing.assert_allclose(state.b.value, [0.0, 27.0])
    assert f(params, state._replace(b=_Scaled("t", state.b.value)))[1].b.scale == "t"
    assert f._cache_size() == 2   # another aux: another structure, traced again


def test_compiler_options_calls_take_the_fast_path():
    # jit(compiler_options=...) used to run every call through the general path (a
    # fresh dispatch each call); its calls now go straight to the executable's runner,
    # which was compiled with those options.
    f = jax.jit(lambda x: x * 2, compiler_options={"xla_cpu_enable_fast_min_max": False})
    for _ in range(3):
        out = f(jnp.arange(4.0))
    assert len(f._jit.fast_calls) == 1
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0, 6.0])
    bad = jax.jit(lambda x: x * 2, compiler_options={"invalid_key": "x"})
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option"):
        bad(jnp.arange(4.0))


def test_eval_shape_and_out_info_carry_the_out_shardings():
    # as JAX's: a result placed by out_shardings says so; the others say nothing
    s = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    g = jax.jit(lambda x: (x * 2, x), out_shardings=(s, None))
    placed, free = g.eval_shape(np.arange(8))
    assert placed.sharding == s and placed.shape == (8,) and free.sharding is None
    assert g.trace(np.arange(8)).out_info[0].sharding == s
    assert jax.jit(lambda x: x * 2).eval_shape(np.arange(8)).sharding is None
