"""Derivatives of jnp.frexp's mantissa (and so of ldexp): 2**-exponent, JAX's rule
(values observed on JAX 0.10.2)."""
import numpy as np

import pyjax as jax
import pyjax.numpy as jnp

X = np.array([0.3, -1.7, 2.5, 5.0], np.float32)


def test_frexp_mantissa_derivative():
    expected = [2.0, 0.5, 0.25, 0.125]
    assert jax.grad(lambda x: jnp.frexp(x)[0].sum())(X).tolist() == expected
    assert jax.jvp(lambda x: jnp.frexp(x)[0], (X,), (np.ones_like(X),))[1].tolist() == expected
    assert jax.jit(jax.grad(lambda x: jnp.frexp(x)[0].sum()))(X).tolist() == expected


def test_ldexp_derivative():
    assert jax.grad(lambda x: jnp.ldexp(x, 3).sum())(X).tolist() == [8.0] * 4
    assert jax.grad(lambda x: jnp.ldexp(x, -2).sum())(X).tolist() == [0.25] * 4
