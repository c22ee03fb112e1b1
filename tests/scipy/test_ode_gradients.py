"""odeint's second-order reverse-mode gradients (the adjoint rule differentiated again)
and gradients of a complex-valued ODE, against values recorded from JAX 0.10.2."""
import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental.ode import odeint

TS = np.array([0.0, 0.5, 1.0])


def _decay(y, t, k):
    return -k * y + jnp.sin(t)


def _final_sum(y0, k):
    return odeint(_decay, y0, jnp.asarray(TS), k)[-1].sum()


def test_first_and_second_order_reverse_gradients_match_jax():
    with jax.enable_x64(True):
        y0, k = jnp.array([1.0, 2.0]), 0.7
        grad_y0, grad_k = jax.grad(_final_sum, argnums=(0, 1))(y0, k)
        np.testing.assert_allclose(grad_y0, [0.49658530361198805] * 2, rtol=1e-9)
        np.testing.assert_allclose(grad_k, -1.7145729011414728, rtol=1e-9)
        second_k = jax.grad(lambda k: jax.grad(_final_sum, 1)(y0, k))(k)
        np.testing.assert_allclose(second_k, 1.5962871132946295, rtol=1e-9)
        np.testing.assert_allclose(jax.jacrev(jax.grad(_final_sum))(y0, k), np.zeros((2, 2)),
                                   atol=1e-12)


def test_gradient_of_a_complex_ode_matches_jax():
    def dy_dt(y, t, alpha):
        return alpha * y * jnp.exp(-t).astype(y.dtype)

    def real_sum(y0, ts, alpha):
        return odeint(dy_dt, y0, ts, alpha).real.sum()

    with jax.enable_x64(True):
        grads = jax.grad(real_sum, argnums=(0, 1, 2))(1 + 2j, jnp.linspace(0., 1., 5), 3 + 4j)
        np.testing.assert_allclose(grads[0], -5.73056855507844 + 12.768274900447736j,
                                   rtol=1e-9)
        np.testing.assert_allclose(grads[1], [94.02990694453975, -16.491216863211466,
                                              -19.71631898973964, -13.82030839537153,
                                              -4.079951111326354], rtol=1e-9)
        np.testing.assert_allclose(grads[2], -16.976658601936485 - 2.75196605522968j,
                                   rtol=1e-9)
