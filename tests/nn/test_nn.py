"""jax.nn (first part): values against NumPy/SciPy formulas, gradients by check_grads in
float64, JAX's conventions (relu'(0) = 0, stable softmax/logsumexp), and jit."""
import warnings

import numpy as np
import pytest
import scipy.special as sp

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import nn
from pyjax.test_util import check_grads

from harness import close

X = np.array([[-2.5, -0.3, 0.0, 0.7, 3.1], [1.2, -1.1, 0.4, 2.2, -0.6]])


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


REFERENCES = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "sigmoid": (nn.sigmoid, sp.expit),
    "softplus": (nn.softplus, lambda x: np.logaddexp(x, 0)),
    "soft_sign": (nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    "silu": (nn.silu, lambda x: x * sp.expit(x)),
    "gelu": (nn.gelu, _gelu_tanh),
    "gelu_exact": (lambda x: nn.gelu(x, approximate=False),
                   lambda x: x * 0.5 * (1 + sp.erf(x / np.sqrt(2)))),
    "softmax": (nn.softmax, _softmax),
    "softmax_axis0": (lambda x: nn.softmax(x, axis=0), lambda x: _softmax(x, 0)),
    "log_softmax": (nn.log_softmax, lambda x: np.log(_softmax(x))),
    "logsumexp": (nn.logsumexp, lambda x: sp.logsumexp(x)),
    "logsumexp_axis": (lambda x: nn.logsumexp(x, axis=1, keepdims=True),
                       lambda x: sp.logsumexp(x, axis=1, keepdims=True)),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_values_and_jit(name):
    f, ref = REFERENCES[name]
    x = X.astype(np.float32)
    close(f(x), ref(X), 2e-6 if name != "gelu_exact" else 1e-5)
    close(jax.jit(f)(x), ref(X), 1e-5)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_gradients(name):
    f, _ = REFERENCES[name]
    x = X + 0.05   # keep away from relu's kink
    with jax.enable_x64(True):
        check_grads(f, (x,), 2)


def test_relu_gradient_at_zero_is_zero():
    assert float(jax.grad(nn.relu)(0.)) == 0.
    assert float(jax.grad(nn.relu)(2.)) == 1.
    close(jax.jit(jax.grad(lambda x: jnp.sum(nn.relu(x))))(jnp.array([-1., 0., 1.])),
          [0., 0., 1.])


def test_sigmoid_faq_values():
    x = jnp.array([-10.0, -1.0, 0.0, 1.0, 10.0])
    np.testing.assert_allclose(np.round(np.asarray(nn.sigmoid(x)), 2),
                               [0., 0.27, 0.5, 0.73, 1.])
    np.testing.assert_allclose(np.round(np.asarray(jax.vmap(jax.grad(nn.sigmoid))(x)), 2),
                               [0., 0.2, 0.25, 0.2, 0.])


def test_softmax_and_logsumexp_are_stable():
    big = jnp.array([1000., 0., -1000.])
    close(nn.softmax(big), [1., 0., 0.])
    close(nn.log_softmax(big), [0., -1000., -2000.])
    close(nn.logsumexp(big), 1000.)
    g = jax.grad(lambda x: nn.logsumexp(x))(big)
    close(g, [1., 0., 0.])
    assert np.all(np.isfinite(jax.grad(lambda x: nn.log_softmax(x)[0])(big)))
    assert np.all(np.isfinite(jax.jacrev(nn.softmax)(big)))


@pytest.mark.parametrize("jit", [False, True])
def test_masked_softmax_gradients_are_zero_on_a_slice_masked_whole(jit):
    # optax's softmax_cross_entropy(where=...) relies on this; values from JAX 0.10.2
    ys = np.array([[10.0, 1.0, -2.0], [1.0, 4.0, 0.2], [3.0, -1.0, 0.5]], np.float32)
    where = np.array([[True, True, False], [False, False, False], [True, False, True]])
    ct = np.array([[1.0, 2.0, 3.0], [1.0, -1.0, 2.0], [0.5, 1.0, -2.0]], np.float32)
    grad = {f: jax.grad(lambda x, f=f: jnp.where(where, f(x, -1, where) * ct, 0.0).sum())
            for f in (nn.log_softmax, nn.softmax)}
    if jit:
        grad = {f: jax.jit(g) for f, g in grad.items()}
    np.testing.assert_allclose(grad[nn.log_softmax](ys), [
        [-1.9996299743652344, 1.9996298551559448, 0.0], [0.0, 0.0, 0.0],
        [1.886212706565857, 0.0, -1.886212706565857]], rtol=1e-6)
    np.testing.assert_allclose(grad[nn.softmax](ys), [
        [-0.0001233816146850586, 0.00012337934458628297, 0.0], [0.0, 0.0, 0.0],
        [0.1752593219280243, 0.0, -0.1752592772245407]], rtol=1e-6)
    np.testing.assert_array_equal(nn.log_softmax(ys, -1, where)[1], [-np.inf] * 3)
    np.testing.assert_array_equal(nn.softmax(ys, -1, where)[1], [0.0] * 3)


def test_softmax_where_and_logsumexp_options():
    x = jnp.array([1., 2., 3.])
    mask = jnp.array([True, False, True])
    close(nn.softmax(x, where=mask), np.where([1, 0, 1], _softmax(np.array([1., -np.inf, 3.])),
                                              0.))
    out, sign = nn.logsumexp(x, b=jnp.array([1., -3., 0.5]), return_sign=True)
    total = np.exp(1.) - 3 * np.exp(2.) + 0.5 * np.exp(3.)
    close(out, np.log(abs(total)))
    close(sign, np.sign(total))
    assert np.isnan(nn.logsumexp(x, b=jnp.array([0., -1., 0.])))
    close(nn.logsumexp(x, where=mask), sp.logsumexp([1., 3.]))
    close(jax.grad(lambda x: nn.logsumexp(x, b=jnp.array([1., 2., 0.5])))(x),
          np.array([1., 2., 0.5]) * np.exp(x) / np.sum(np.array([1., 2., 0.5]) * np.exp(x)))


def test_one_hot():
    out = nn.one_hot(jnp.array([0, 2, 5, -1]), 3)
    np.testing.assert_array_equal(out, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(nn.one_hot(jnp.array([1, 0]), 2, axis=0), [[0, 1], [1, 0]])
    assert nn.one_hot(jnp.array([1]), 4, dtype=jnp.int32).dtype == np.int32
    assert nn.one_hot(jnp.zeros((2, 3), jnp.int32), 5).shape == (2, 3, 5)
    np.testing.assert_array_equal(jax.jit(nn.one_hot, static_argnums=1)(jnp.array([1]), 2),
                                  [[0, 1]])
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(nn.one_hot)(jnp.array([1]), 2)


def test_integer_inputs_promote_like_jax():
    assert nn.sigmoid(jnp.arange(3)).dtype == np.float32
    assert nn.relu(jnp.arange(-1, 2)).dtype == np.int32
    assert nn.softmax(jnp.arange(3)).dtype == np.float32


def test_variance_scaling_of_low_rank_shapes_with_explicit_axes():
    # JAX 0.10.2: only the default in_axis needs 2 dimensions; values recorded from it.
    key = jax.random.PRNGKey(0)
    vs = nn.initializers.variance_scaling
    cases = [(vs(1, "fan_in", "normal", in_axis=[0], out_axis=[]), (3,),
              [0.9368, 1.1693, -0.2503]),
             (vs(1, "fan_out", "uniform", in_axis=[], out_axis=[0]), (3,),
              [0.8953, 0.9572, -0.3354]),
             (vs(1, "fan_avg", "truncated_normal", in_axis=0, out_axis=-1), (3,),
              [1.6552, 1.9494, -0.4691]),
             (vs(1, "fan_in", "normal", in_axis=[], out_axis=[]), (), [1.6226])]
    for init, shape, expected in cases:
        out = init(key, shape)
        assert out.shape == shape and out.dtype == jnp.float32
        np.testing.assert_allclose(np.ravel(out), expected, atol=1e-4)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3)])
def test_orthogonal_of_an_empty_shape_is_empty(shape):
    out = nn.initializers.orthogonal()(jax.random.PRNGKey(0), shape, jnp.float32)
    assert out.shape == shape and out.dtype == jnp.float32


def test_standardize_algorithms():
    # values from JAX 0.10.2
    x = jnp.array([1e6, 1e6 + 1, 1e6 + 2], dtype=jnp.float32)
    for f in (nn.standardize, jax.jit(nn.standardize, static_argnames="algorithm")):
        np.testing.assert_allclose(np.asarray(f(x, algorithm="stable")),
                                   [-1.2247356, 0.0, 1.2247356], rtol=1e-6)
        # E[x^2] - E[x]^2 cancels: clipped at 0, so only epsilon is left
        np.testing.assert_allclose(np.asarray(f(x, algorithm="fast")),
                                   [-316.22775, 0.0, 316.22775], rtol=1e-6)
    z = jnp.array([[1.0, 2.0, 4.0], [0.0, 5.0, 1.0]])
    out = nn.standardize(z, axis=0, where=jnp.array([[True, False, True]] * 2),
                         algorithm="stable")
    np.testing.assert_allclose(np.asarray(out), [[0.99998, np.nan, 0.9999978],
                                                 [-0.99998, np.nan, -0.9999978]], rtol=1e-6)
    with pytest.raises(ValueError, match="^Unknown algorithm 'exact'. Expected 'fast' or "
                       "'stable'.$"):
        nn.standardize(x, algorithm="exact")


@pytest.mark.parametrize("fn", [nn.softmax, nn.log_softmax])
@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
def test_softmax_of_an_empty_array_is_empty(fn, shape):
    # JAX 0.10.2: the max starts from -inf, so an empty slice needs no identity
    x = jnp.zeros(shape)
    assert fn(x).shape == shape and jax.jit(fn)(x).shape == shape


def test_one_hot_of_non_integers_is_deprecated():
    # JAX 0.10.2's DeprecationWarning (jax-nn-one-hot-float-input); integers give none
    with pytest.warns(DeprecationWarning, match=r"^jax.nn.one_hot input should be "
                      r"integer-typed; got dtype=float32$"):
        out = nn.one_hot(jnp.array([1.0]), 3)
    assert out.tolist() == [[0.0, 1.0, 0.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert nn.one_hot(jnp.array([2], jnp.uint8), 3).tolist() == [[0.0, 0.0, 1.0]]
