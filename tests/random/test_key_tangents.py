"""Tangents and cotangents of typed key arrays are float0 arrays of the keys' shape, as in
JAX (never key arrays around float0 data), through grad, vjp and custom rules; a
symbolic_zeros fwd rule gets one CustomVJPPrimal record per key array. Expected values
are JAX 0.10.2's for the same programs."""
from __future__ import annotations

import numpy as np

import pyjax as jax
from pyjax import random
from pyjax._src import dtypes


def test_grad_and_vjp_of_keys_are_float0():
    key = random.key(0)
    g = jax.grad(lambda x, k: x, argnums=(0, 1), allow_int=True)(1.0, key)
    assert isinstance(g[1], np.ndarray) and g[1].dtype == dtypes.float0 and g[1].shape == ()
    _, vjp = jax.vjp(lambda x, k: x * 2, 1.0, random.split(key, 3))
    ct = vjp(1.0)[1]
    assert ct.dtype == dtypes.float0 and ct.shape == (3,)


def test_custom_jvp_rule_sees_a_float0_key_tangent():
    seen = {}

    @jax.custom_jvp
    def f(x, key):
        return x * random.normal(key, ())

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, key), (x_dot, key_dot) = primals, tangents
        seen["key_dot"] = key_dot
        r = random.normal(key, ())
        return x * r, x_dot * r

    keys = random.split(random.key(1), 2)
    assert np.allclose(jax.grad(f)(0.0, keys[0]),
                       jax.grad(lambda x, k: x * random.normal(k, ()))(0.0, keys[0]))
    assert seen["key_dot"].dtype == dtypes.float0 and seen["key_dot"].shape == ()


def test_custom_vjp_bwd_returns_float0_for_keys():
    @jax.custom_vjp
    def f(_, state):
        return state

    def fwd(_, state):
        return state, None

    def bwd(_, state_bar):
        assert state_bar[1].dtype == dtypes.float0 and state_bar[1].shape == ()
        return state_bar[0], state_bar
    f.defvjp(fwd, bwd)
    state = (8.0, random.key(123))
    assert jax.grad(lambda theta: f(theta, state)[0])(3.0) == 1.0


def test_symbolic_zeros_fwd_gets_one_record_per_key_array():
    @jax.custom_vjp
    def f(_, state):
        return state

    def fwd(_, state):
        assert isinstance(state[1], jax.custom_derivatives.CustomVJPPrimal)
        assert not state[1].perturbed and state[1].value.dtype == random.key(0).dtype
        return jax.tree.map(lambda x: x.value, state), None

    def bwd(_, state_bar):
        assert isinstance(state_bar[1], jax.custom_derivatives.SymbolicZero)
        assert state_bar[1].dtype == dtypes.float0 and state_bar[1].shape == ()
        return state_bar[0], state_bar
    f.defvjp(fwd, bwd, symbolic_zeros=True)
    state = (8.0, random.key(123))
    assert jax.grad(lambda theta: f(theta, state)[0])(3.0) == 1.0


def test_shape_dtype_structs_of_keys():
    key = random.key(1701)
    sds = jax.ShapeDtypeStruct.like(key)
    assert repr(sds) == "ShapeDtypeStruct(shape=(), dtype=key<fry>)"   # uncommitted: JAX's
    assert jax.eval_shape(lambda k: k, sds) == sds
    assert repr(jax.eval_shape(lambda k: (random.normal(k, (2,)), random.split(k, 3)),
                               sds)) == ("(ShapeDtypeStruct(shape=(2,), dtype=float32), "
                                         "ShapeDtypeStruct(shape=(3,), dtype=key<fry>))")
