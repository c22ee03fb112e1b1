"""jax.experimental.buffer_callback: the callback fills its output Buffers in place, eagerly
and under jit on both executors; Buffers and the ExecutionContext as JAX's; aliasing,
pytrees of arguments and results, vmap methods, side effects and the errors. Expected
values are JAX 0.10.2's."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental import buffer_callback as bc

X = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
Y = jnp.full((2, 3), 0.5, jnp.float32)
SPEC = jax.ShapeDtypeStruct((2, 3), jnp.float32)


def _add(ctx, out, x, y):
    np.add(np.asarray(x), np.asarray(y), out=np.asarray(out))


def _increment(ctx, out, x):
    o = np.asarray(out)
    o += 1


def test_public_names_are_jaxs():
    assert sorted(n for n in dir(bc) if not n.startswith("_")) == [
        "Buffer", "ExecutionContext", "ExecutionStage", "buffer_callback"]
    assert [(k, v.value) for k, v in bc.ExecutionStage.__members__.items()] == [
        ("INSTANTIATE", 0), ("PREPARE", 1), ("INITIALIZE", 2), ("EXECUTE", 3)]


@pytest.mark.parametrize("jit", [False, True])
def test_output_filled_in_place(executor, jit):
    f = bc.buffer_callback(_add, SPEC)
    f = jax.jit(f) if jit else f
    np.testing.assert_array_equal(f(X, Y), [[0.5, 1.5, 2.5], [3.5, 4.5, 5.5]])


@pytest.mark.parametrize("jit", [False, True])
def test_aliased_output_starts_as_its_input(executor, jit):
    seen = []

    def callback(ctx, out, x):
        seen.append(np.asarray(x).ctypes.data == np.asarray(out).ctypes.data)
        _increment(ctx, out, x)
    f = bc.buffer_callback(callback, SPEC, input_output_aliases={0: 0})
    f = jax.jit(f) if jit else f
    np.testing.assert_array_equal(f(X), [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(X, [[0, 1, 2], [3, 4, 5]])   # the caller's is unchanged
    assert seen == [True]


def test_buffers_and_context(executor):
    checks = {}

    def callback(ctx, out, arg):
        checks["stage"] = ctx.stage
        with pytest.raises(jax.errors.JaxRuntimeError,
                           match="XLA FFI GPU context is not available"):
            _ = ctx.stream
        checks["arg"] = (arg.shape, arg.dtype, arg.ndim, arg.writeable)
        checks["out"] = (out.shape, out.dtype, out.ndim, out.writeable)
        with pytest.raises(ValueError, match="dtype parameter is not supported"):
            np.asarray(arg, dtype=np.float64)
        with pytest.raises(ValueError, match="copy=True is not supported"):
            np.array(arg)
        with pytest.raises(jax.errors.JaxRuntimeError, match="only supported on CUDA"):
            _ = arg.__cuda_array_interface__
        checks["dlpack"] = (arg.__dlpack_device__(), np.from_dlpack(arg).tolist())
        np.asarray(out)[...] = np.asarray(arg)
    out = jax.jit(bc.buffer_callback(callback, SPEC))(X)
    np.testing.assert_array_equal(out, X)
    assert checks == {"stage": bc.ExecutionStage.EXECUTE,
                      "arg": ((2, 3), np.dtype(np.float32), 2, False),
                      "out": ((2, 3), np.dtype(np.float32), 2, True),
                      "dlpack": ((1, 0), [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])}


def test_buffers_are_not_constructible():
    with pytest.raises(TypeError, match="no constructor"):
        bc.Buffer()
    with pytest.raises(TypeError, match="no constructor"):
        bc.ExecutionContext()


def test_pytrees_of_arguments_and_results(executor):
    def callback(ctx, out, a, *, b):
        np.asarray(out["s"])[...] = np.asarray(a) + np.asarray(b)
        np.asarray(out["p"])[...] = np.asarray(a) * np.asarray(b)
    spec = {"s": jax.ShapeDtypeStruct((2,), jnp.float32),
            "p": jax.ShapeDtypeStruct((2,), jnp.float32)}
    out = jax.jit(bc.buffer_callback(callback, spec))(jnp.array([1., 2.]),
                                                      b=jnp.array([3., 4.]))
    np.testing.assert_array_equal(out["s"], [4., 6.])
    np.testing.assert_array_equal(out["p"], [3., 8.])


@pytest.mark.parametrize("method", ["sequential", "sequential_unrolled", "expand_dims",
                                    "broadcast_all", "legacy_vectorized"])
def test_vmap_methods(executor, method):
    def leading(ctx, out, x):
        np.asarray(out)[...] = np.asarray(x).shape[0]
    f = bc.buffer_callback(leading, jax.ShapeDtypeStruct((), jnp.int32), vmap_method=method)
    np.testing.assert_array_equal(jax.vmap(f, in_axes=(None,), axis_size=3)(jnp.ones(4)),
                                  [4, 4, 4])
    g = bc.buffer_callback(_add, jax.ShapeDtypeStruct((3,), jnp.float32),
                           vmap_method=method)
    np.testing.assert_array_equal(jax.vmap(g)(X, Y), [[0.5, 1.5, 2.5], [3.5, 4.5, 5.5]])


def test_expand_dims_gives_unbatched_arguments_a_unit_axis():
    shapes = []

    def callback(ctx, out, x, y):
        shapes.append((x.shape, y.shape, out.shape))
    f = bc.buffer_callback(callback, jax.ShapeDtypeStruct((), jnp.float32),
                           vmap_method="expand_dims")
    jax.block_until_ready(jax.vmap(f, in_axes=(0, None))(jnp.ones(3), jnp.ones(2)))
    assert shapes == [((3,), (1, 2), (3,))]


def test_side_effect_keeps_an_unused_call(executor):
    calls = []

    def callback(ctx, out):
        calls.append(1)
    f = bc.buffer_callback(callback, jax.ShapeDtypeStruct((), jnp.float32),
                           has_side_effect=True)
    jax.block_until_ready(jax.jit(lambda: (f(), 0)[1])())
    assert calls == [1]


def test_errors():
    no_op = bc.buffer_callback(lambda ctx, out, x: None,
                               jax.ShapeDtypeStruct((), jnp.float32))
    with pytest.raises(ValueError, match="Buffer callbacks do not support JVP"):
        jax.grad(no_op)(1.0)
    with pytest.raises(NotImplementedError,
                       match="vmap is only supported for the buffer_callback primitive when "
                             "vmap_method is one of .* Got vmap_method=None."):
        jax.vmap(no_op)(jnp.ones(3))
    returns = bc.buffer_callback(lambda ctx, out, x: 1, jax.ShapeDtypeStruct((), jnp.float32))
    with pytest.raises(jax.errors.JaxRuntimeError,
                       match="buffer_callback callback must not return any values"):
        returns(1.0)


@pytest.mark.parametrize("aliases, arg, match", [
    ({1: 0}, 1.0, r"mapping '1:0' with input index 1 outside the range \[0, 1\)\."),
    ({0: 1}, 1.0, r"mapping '0:1' with output index 1 outside the range \[0, 1\)\."),
    ({0: 0}, jnp.int32(1), "mapping '0:0' referring to an input with abstract value int32"
                           r"\[\] and an output with a different abstract value float32\[\]."),
])
def test_bad_aliases(aliases, arg, match):
    f = bc.buffer_callback(lambda ctx, out, x: None, jax.ShapeDtypeStruct((), jnp.float32),
                           input_output_aliases=aliases)
    with pytest.raises(ValueError, match=match):
        f(arg)
