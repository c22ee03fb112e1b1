"""jax.experimental.jet (Taylor mode) against values observed from JAX 0.10.2: the
series of each primitive family's jet rule (recurrences, compositions, linear and
piecewise-constant rules, calls), its errors, and the trace's composition with jit."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
import pyjax.scipy.special
from pyjax import lax
from pyjax.experimental.jet import fact, jet, jet2, zero_series

X = np.array([0.3, 0.7, 1.1], np.float32)
TERMS = [np.array([1., 2., 3.], np.float32), np.array([.5, .1, -1.], np.float32),
         np.array([.2, .3, .4], np.float32)]

# (function, primal out, its three factorial-scaled terms), observed on JAX 0.10.2
CASES = {
    "exp": (jnp.exp, [1.34986, 2.01375, 3.00417],
            [[1.34986, 4.02751, 9.0125], [2.02479, 8.25639, 24.03334],
             [3.64462, 17.92241, 55.27671]]),
    "log": (jnp.log, [-1.20397, -0.35667, 0.09531],
            [[3.33333, 2.85714, 2.72727], [-9.44445, -8.02041, -8.34711],
             [58.07412, 45.85136, 48.37269]]),
    "tanh": (jnp.tanh, [0.29131, 0.60437, 0.8005],
             [[0.91514, 1.26948, 1.0776], [-0.07561, -3.00546, -5.53493],
              [-1.98105, 0.70282, 23.21102]]),
    "sqrt": (jnp.sqrt, [0.54772, 0.83666, 1.04881],
             [[0.91287, 1.19523, 1.43019], [-1.06502, -1.64771, -2.427],
              [5.50766, 7.2409, 10.11932]]),
    "sigmoid": (jax.nn.sigmoid, [0.57444, 0.66819, 0.75026],
                [[0.24446, 0.44343, 0.56211], [0.08583, -0.27614, -1.03141],
                 [-0.1198, -0.56405, 0.29057]]),
    "pow": (lambda x: x ** 3.3, [0.01881, 0.30819, 1.36961],
            [[0.20696, 2.90582, 12.32646], [1.6902, 19.24072, 73.21172],
             [9.29725, 74.22611, 198.45966]]),
    "integer_pow": (lambda x: x ** 5, [0.00243, 0.16807, 1.61051],
                    [[0.0405, 2.401, 21.9615], [0.56025, 27.56005, 232.2596],
                     [6.2181, 239.67632, 1723.55]]),
    "div": (lambda x: 1 / (x + 2.), [0.43478, 0.37037, 0.32258],
            [[-0.18904, -0.27435, -0.31217], [0.06986, 0.39272, 0.70827],
             [-0.00565, -0.88339, -2.39999]]),
    "atan2": (lambda x: jnp.arctan2(x, 2.), [0.14889, 0.33667, 0.50284],
              [[0.489, 0.89087, 1.15163], [0.17276, -0.51101, -1.84276],
               [-0.22788, -0.8441, 1.32987]]),
    "erf": (pyjax.scipy.special.erf, [0.32863, 0.6778, 0.88021],
            [[1.03126, 1.38255, 1.00944], [-0.10313, -3.80201, -6.99878],
             [-2.41315, -0.5945, 32.59818]]),
    "erf_inv": (lambda x: pyjax.scipy.special.erfinv(x / 2), [0.13373, 0.32086, 0.53416],
                [[0.45111, 0.98233, 1.76828], [0.27998, 0.66835, 2.75102],
                 [0.3686, 2.91675, 20.57435]]),
    "max": (lambda x: jnp.maximum(x, 0.7), [0.7, 0.7, 1.1],
            [[0., 1., 3.], [0., 0.05, -1.], [0., 0.15, 0.4]]),
    "cumprod": (jnp.cumprod, [0.3, 0.21, 0.231],
                [[1., 1.3, 2.06], [0.5, 4.38, 12.408], [0.2, 3.53, 39.48704]]),
    "reduce_max": (jnp.max, 1.1, [3., -1., 0.4]),
    "jit": (jax.jit(lambda x: jnp.sin(x) * x), [0.08866, 0.45095, 0.98033],
            [[0.58212, 2.35921, 4.17049], [2.11308, 4.43289, -2.04839],
             [1.67629, -18.74324, -84.44539]]),
    "custom_jvp": (jax.nn.logsumexp, 1.8512505, [2.25979, 0.28211, -1.38493]),
    "gather": (lambda x: x[1:], [0.7, 1.1], [[2., 3.], [0.1, -1.], [0.3, 0.4]]),
    "sinh": (jnp.sinh, [0.30452, 0.75858, 1.33565],
             [[1.04534, 2.51034, 5.00556], [0.82719, 3.15985, 10.35231],
              [1.71119, 10.87306, 33.69662]]),
    "acosh": (lambda x: jnp.arccosh(x + 2), [1.47504, 1.65019, 1.79746],
              [[0.4828, 0.79745, 1.0224], [-0.01744, -0.64474, -1.44513],
               [0.01208, 1.27305, 3.75044]]),
    "abs": (lambda x: jnp.abs(x - 0.5), [0.2, 0.2, 0.6],
            [[-1., 2., 3.], [-0.5, 0.1, -1.], [-0.2, 0.3, 0.4]]),
    "select_n": (lambda x: jnp.where(x > 0.5, x ** 2, -x), [-0.3, 0.49, 1.21],
                 [[-1., 2.8, 6.6], [-0.5, 8.14, 15.8], [-0.2, 1.62, -17.12001]]),
    "rem": (lambda x: jnp.remainder(x, 0.5), [0.3, 0.2, 0.1],
            [[1., 2., 3.], [0.5, 0.1, -1.], [0.2, 0.3, 0.4]]),
    "dot_general": (lambda x: jnp.dot(x, x), 1.79, [10., 26.24001, -12.38001]),
    "fft": (lambda x: jnp.fft.fft(x).real, [2.1, -0.6, -0.6],
            [[6., -1.5, -1.5], [-0.4, 0.95, 0.95], [0.9, -0.15, -0.15]]),
    "log1p": (jnp.log1p, [0.26236, 0.53063, 0.74194],
              [[0.76923, 1.17647, 1.42857], [-0.2071, -1.32526, -2.51701],
               [0.1766, 3.22553, 8.0622]]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_series_of_each_rule(name):
    fun, primal, terms = CASES[name]
    out, out_terms = jet(fun, (X,), (TERMS,))
    np.testing.assert_allclose(out, primal, rtol=1e-4, atol=1e-5)
    assert len(out_terms) == 3
    for got, want in zip(out_terms, terms):
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_faa_di_bruno_and_unscaled_series():
    h0, h1, h2 = 0.5 ** 3., 3. * 0.5 ** 2., 6. * 0.5
    f0, (f1, f2) = jet(jnp.sin, (h0,), ((h1, h2),))
    np.testing.assert_allclose([f0, f1, f2], [0.12467473, 0.74414825, 2.9064636], rtol=1e-6)
    np.testing.assert_allclose(jet2(jnp.exp, (X,), (TERMS,))[1][2],
                               [1.16988, 3.69188, 5.70792], rtol=1e-4)
    np.testing.assert_allclose(fact(3), 6., rtol=1e-5)


def test_outputs_without_series_get_zeros():
    out, terms = jet(lambda x: jnp.full_like(x, 2.), (X,), (TERMS,))
    assert terms is not zero_series
    np.testing.assert_array_equal(np.asarray(terms), np.zeros((3, 3)))
    out, ((bool_term,), (term,)) = jet(lambda x: (x < 0.5, x * 2), (X,), ([TERMS[0]],))
    assert bool_term.dtype == np.float32 and bool_term.weak_type   # zeros * 1!, as JAX's
    np.testing.assert_array_equal(bool_term, np.zeros(3))
    np.testing.assert_allclose(term, [2., 4., 6.])


def test_jet_under_jit_stages_one_jit_of_the_series():
    f = jax.jit(lambda x: jnp.sin(x) * x)
    out, terms = jax.jit(lambda x, t: jet(f, (x,), ([t],)))(X, TERMS[0])
    np.testing.assert_allclose(terms[0], [0.58212, 2.35921, 4.17049], rtol=1e-4)
    jaxpr = jax.make_jaxpr(lambda x, t: jet(f, (x,), ([t],)))(X, TERMS[0])
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns if e.primitive.name == "jit"] == ["jit"]


def test_a_primitive_without_a_rule_is_named():
    with pytest.raises(NotImplementedError, match="Primitive 'while' has no jet rule"):
        jet(lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2),
                                     (0, x))[1], (X,), ([TERMS[0]],))


@pytest.mark.parametrize("call, message", [
    (lambda: jet(jnp.sin, (X, X), ([X], [X, X])),
     "jet terms have inconsistent lengths for different arguments"),
    (lambda: jet(jnp.sin, ((X,),), ([X],)), "primal value at position 0 is not an array"),
    (lambda: jet(jnp.sin, (X,), ([(X,)],)), "term 0 for argument 0 is not an array"),
])
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
