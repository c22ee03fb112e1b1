"""jax.experimental.ode.odeint; expected values observed from JAX 0.10.2 (same method:
adaptive Dormand-Prince with the adjoint method for gradients)."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental.ode import odeint


def decay(y, t, rate):
    return -rate * y + jnp.sin(t)


TIMES = jnp.linspace(0.0, 3.0, 5)
Y0 = jnp.array([1.0, 2.0])


def test_odeint_matches_jax_values_and_gradients():
    ys = odeint(decay, Y0, TIMES, 0.7)
    np.testing.assert_allclose(ys, [[1.0, 2.0], [0.8177387, 1.4092933], [1.0059425, 1.3558803],
                                    [1.1330698, 1.3400769], [0.9353645, 1.0578208]],
                               rtol=2e-6)
    grad_rate = jax.grad(lambda a: odeint(decay, Y0, TIMES, a)[-1].sum())(0.7)
    np.testing.assert_allclose(grad_rate, -2.9334102, rtol=1e-5)
    grad_y0 = jax.grad(lambda y0: odeint(decay, y0, TIMES, 0.7)[-1].sum())(Y0)
    np.testing.assert_allclose(grad_y0, [0.12245645] * 2, rtol=1e-5)
    loose = odeint(decay, Y0, TIMES, 0.7, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(loose[-1], [0.9365402, 1.0588726], rtol=1e-5)
    jitted = jax.jit(lambda y: odeint(decay, y, TIMES, 0.7))(jnp.ones(2))
    np.testing.assert_allclose(jitted[-1], [0.9353645] * 2, rtol=2e-6)
    batched = jax.vmap(lambda a: odeint(decay, jnp.ones(2), TIMES, a)[-1])(jnp.array([0.5, 1.0]))
    np.testing.assert_allclose(batched, [[1.2500768] * 2, [0.6402376] * 2], rtol=2e-6)



def test_odeint_runs_as_one_compiled_program():
    """As in JAX, an eager call compiles the whole solver: it rounds exactly like a call
    under jit (op by op, NumPy's transcendental functions differ in their last bits)."""
    eager = odeint(decay, Y0, TIMES, 0.7)
    jitted = jax.jit(lambda y0, rate: odeint(decay, y0, TIMES, rate))(Y0, 0.7)
    np.testing.assert_array_equal(eager, jitted)

def test_odeint_pytree_state_and_step_limit():
    def oscillator(state, t):
        return {"x": state["v"], "v": -state["x"]}
    out = odeint(oscillator, {"x": 1.0, "v": 0.0}, jnp.array([0.0, np.pi / 2]))
    np.testing.assert_allclose(out["x"], [1.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(out["v"], [0.0, -1.0], atol=1e-6)
    # two steps per output interval are not enough here: the answer is visibly off
    rough = odeint(decay, Y0, TIMES, 0.7, mxstep=2)
    assert rough.shape == (5, 2)
    assert np.abs(rough[-1] - np.array([0.9353645, 1.0578208])).max() > 0.1


def test_odeint_rejects_bad_arguments():
    with pytest.raises(TypeError, match="must be arrays or scalars"):
        odeint(lambda y, t, f: f(y), Y0, TIMES, jnp.sin)
    with pytest.raises(ValueError, match="1-D array of times"):
        odeint(decay, Y0, jnp.ones((2, 2)), 0.7)
