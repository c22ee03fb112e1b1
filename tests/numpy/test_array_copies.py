"""Copies and membership: jnp.array/copy/astype(copy=), copy.copy/deepcopy make new
buffers (also under jit, jvp, vjp and vmap), `x in arr` (behaviour observed on JAX 0.10.2)."""
import copy
import sys

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


def _ptr(x):
    return x.unsafe_buffer_pointer()


@pytest.mark.parametrize("copy_func", [jnp.array, jnp.copy, copy.copy, copy.deepcopy])
def test_copies_are_new_buffers(copy_func):
    x = jnp.ones(10, dtype="int8")
    view, view_jit = jnp.asarray(x), jax.jit(jnp.asarray)(x)
    copied, copied_jit = copy_func(x), jax.jit(copy_func)(x)
    assert _ptr(view) == _ptr(x)
    assert _ptr(view_jit) != _ptr(x)
    assert _ptr(copied) != _ptr(x) and _ptr(copied_jit) != _ptr(x)
    x.delete()
    assert view.is_deleted()
    assert not view_jit.is_deleted() and not copied.is_deleted()
    assert not copied_jit.is_deleted()


@pytest.mark.parametrize("dtype,copy_arg,copies",
                         [("float32", True, True), ("float32", False, True),
                          ("int32", True, True), ("int32", False, False)])
def test_astype_copy(dtype, copy_arg, copies):
    x = jnp.arange(5, dtype="int32")
    y = x.astype(dtype, copy=copy_arg)
    assert y.dtype == dtype
    y.delete()
    assert x.is_deleted() is not copies


def test_astype_complex_to_real_warns():
    x = jnp.array(2.0 + 1.5j, dtype="complex64")
    with pytest.warns(DeprecationWarning, match="Casting from complex to real dtypes"):
        y = x.astype("float32")
    assert float(y) == 2.0


def test_copy_under_transformations_is_a_new_array():
    f = lambda x: jnp.array(x, copy=True)   # noqa: E731
    x, xdot = jnp.ones(10), jnp.ones(10)
    y, ydot = jax.jvp(f, (x,), (xdot,))
    assert y is not x and ydot is not xdot
    ybar = jnp.ones(10)
    y, f_vjp = jax.vjp(f, x)
    (xbar,) = f_vjp(ybar)
    assert y is not x and xbar is not ybar
    assert xbar.tolist() == [1.0] * 10
    assert jax.vmap(f)(x) is not x
    assert "copy" in str(jax.make_jaxpr(f)(x))


def test_contains():
    assert 1 in jnp.arange(4)
    assert 100 not in jnp.arange(4)
    with pytest.raises(ValueError, match="search array must be one-dimensional"):
        _ = 1 in jnp.array(1)
    with pytest.raises(ValueError, match="query value must be a scalar"):
        _ = jnp.arange(2) in jnp.arange(2)
    for query in ["abc", None]:
        with pytest.raises(TypeError, match="Array.__contains__: unsupported operand type"):
            _ = query in jnp.arange(2)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_, np.complex64])
def test_buffer_protocol_gives_a_read_only_view_of_the_host_value(dtype):
    x = np.arange(12).reshape(3, 4).astype(dtype)
    y = jax.device_put(x)
    view = y.__buffer__(0)   # what memoryview(y) calls from Python 3.12 (PEP 688)
    assert view.readonly and view.shape == (3, 4) and view.tobytes() == x.tobytes()
    if sys.version_info >= (3, 12):
        assert memoryview(y).tobytes() == x.tobytes()
    y.delete()   # as in JAX, a view outlives the array's deletion
    assert view.tobytes() == x.tobytes()
    with pytest.raises(BufferError, match="read-only"):
        jnp.ones(2, dtype).__buffer__(1)   # PyBUF_WRITABLE


@pytest.mark.parametrize("dtype, name", [(jnp.bfloat16, "BF16"),
                                         (jnp.float8_e4m3fn, "F8E4M3FN"), (jnp.int4, "S4")])
def test_buffer_protocol_refuses_types_it_has_no_format_for(dtype, name):
    with pytest.raises(BufferError, match=f"^INVALID_ARGUMENT: Buffers of type {name} are "
                                          "not supported by the Python buffer protocol.$"):
        jnp.ones(2, dtype).__buffer__(0)   # JAX 0.10.2's message
