"""Config context managers (`with jax.enable_x64():` ...) act in their own thread only,
as in JAX; and a function that enters enable_x64 inside grad/jvp differentiates as in
JAX 0.10.2 (float64 inside, the float32 gradient outside)."""
import concurrent.futures
import threading

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp


def test_enable_x64_is_per_thread():
    both_inside = threading.Barrier(2)

    def run(x64):
        with jax.enable_x64(x64):
            both_inside.wait(timeout=30)   # the other thread's block is open too
            eager = jnp.array(np.int64(0)).dtype
            jitted = jax.jit(lambda x: x + 1)(np.int64(1)).dtype
            return eager, jitted, jax.config.x64_enabled

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        x32, x64 = pool.submit(run, False), pool.submit(run, True)
        assert x32.result() == (np.dtype("int32"), np.dtype("int32"), False)
        assert x64.result() == (np.dtype("int64"), np.dtype("int64"), True)
    assert jnp.array(np.int64(0)).dtype == np.int32 and not jax.config.x64_enabled


def test_update_inside_a_block_changes_the_global_value_only():
    with jax.enable_x64(True):
        jax.config.update("jax_enable_x64", False)
        assert jax.config.x64_enabled   # the block still rules its thread
    assert not jax.config.x64_enabled


def test_grad_of_a_function_that_enables_x64():
    def fun(x):
        with jax.enable_x64(True):
            return jnp.sin(x)
    g = jax.grad(fun)(0.5)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.cos(0.5), rtol=1e-6)


def test_custom_jvp_inside_enable_x64():
    @jax.custom_jvp
    def f(x):
        return x ** 2.

    @f.defjvp
    def f_jvp(xs, ts):
        return f(xs[0]), ts[0] * jnp.sin(xs[0])

    def g(x):
        with jax.enable_x64():
            return f(jnp.array(x, jnp.float64))

    primal, tangent = jax.jvp(g, (5.,), (1.,))
    assert primal.dtype == tangent.dtype == np.float64
    assert jax.grad(g)(5.).dtype == np.float32
    assert jax.grad(jax.grad(g))(5.).dtype == np.float32
    np.testing.assert_allclose(jax.grad(g)(5.), np.sin(5.), rtol=1e-6)


def test_context_managers_take_jax_keyword_names():
    # JAX: disable_jit(disable=True) (chex.fake_pmap passes disable=); States take new_val.
    traced = []
    f = jax.jit(lambda x: traced.append(type(x).__name__) or x)
    with jax.disable_jit(disable=True):
        f(1.0)
    with jax.disable_jit(disable=False):
        f(2.0)
    assert traced[0] == "float" and traced[1] != "float"
    with jax.enable_x64(new_val=True):
        assert jnp.ones(1).dtype == np.float64
