"""Copies and membership: jnp.array/copy/astype(copy=), copy.copy/deepcopy make new
buffers (also under jit, jvp, vjp and vmap), `x in arr` (behaviour observed on JAX 0.10.2)."""
import copy

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
