"""jax.scipy.special and jax.scipy.stats against SciPy: values on grids (eager, and under
jit where XLA runs the SciPy-backed primitives on the host), derivatives against central
differences, JAX's conventions at the edges (xlogy(0, 0) = 0, entr, kl_div domains)."""
import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as ss

import pyjax as jax
import pyjax.numpy as jnp
import pyjax.scipy.special as jsp
import pyjax.scipy.stats as jst
from pyjax._src import errors
from pyjax._src.test_util import check_grads
from harness import assert_named_error

POS = np.linspace(0.2, 4.0, 9, dtype=np.float32)
REAL = np.linspace(-3.0, 3.0, 9, dtype=np.float32)
UNIT = np.linspace(0.05, 0.95, 9, dtype=np.float32)

# (name, ours, SciPy's, arguments)
SPECIAL = [
    ("gammaln", jsp.gammaln, sp.gammaln, (POS,)),
    ("gamma", jsp.gamma, sp.gamma, (np.array([-2.5, -1.5, -0.5, 0.5, 3.2], np.float32),)),
    ("gammasgn", jsp.gammasgn, sp.gammasgn, (np.array([-2.5, -1.5, -0.5, 0.5], np.float32),)),
    ("loggamma", jsp.loggamma, sp.loggamma, (POS,)),
    ("digamma", jsp.digamma, sp.digamma, (POS,)),
    ("polygamma", lambda x: jsp.polygamma(2, x), lambda x: sp.polygamma(2, x), (POS,)),
    ("betaln", jsp.betaln, sp.betaln, (POS, POS[::-1])),
    ("beta", jsp.beta, sp.beta, (POS, POS[::-1])),
    ("multigammaln", lambda a: jsp.multigammaln(a, 3), lambda a: sp.multigammaln(a, 3),
     (POS + 2,)),
    ("factorial", jsp.factorial, lambda n: sp.factorial(n, exact=False),
     (np.array([0., 1., 4., 7.5], np.float32),)),
    ("comb", jsp.comb, sp.comb, (np.array([5., 10., 7.], np.float32),
                                 np.array([2., 3., 7.], np.float32))),
    ("poch", jsp.poch, sp.poch, (POS, POS[::-1] / 2)),
    ("gammainc", jsp.gammainc, sp.gammainc, (POS, POS[::-1])),
    ("gammaincc", jsp.gammaincc, sp.gammaincc, (POS, POS[::-1])),
    ("betainc", jsp.betainc, sp.betainc, (POS, POS[::-1], UNIT)),
    ("erf", jsp.erf, sp.erf, (REAL,)),
    ("erfc", jsp.erfc, sp.erfc, (REAL,)),
    ("erfinv", jsp.erfinv, sp.erfinv, (UNIT * 2 - 1,)),
    ("erfcx", jsp.erfcx, sp.erfcx, (REAL,)),
    ("ndtr", jsp.ndtr, sp.ndtr, (REAL * 3,)),
    ("ndtri", jsp.ndtri, sp.ndtri, (UNIT,)),
    ("log_ndtr", jsp.log_ndtr, sp.log_ndtr, (REAL * 8,)),
    ("dawsn", jsp.dawsn, sp.dawsn, (REAL,)),
    ("expit", jsp.expit, sp.expit, (REAL * 5,)),
    ("logit", jsp.logit, sp.logit, (UNIT,)),
    ("xlogy", jsp.xlogy, sp.xlogy, (np.array([0., 0., 1., 2.], np.float32),
                                    np.array([0., 2., 3., 0.5], np.float32))),
    ("xlog1py", jsp.xlog1py, sp.xlog1py, (np.array([0., 0., 1., 2.], np.float32),
                                          np.array([-1., 2., 3., 0.5], np.float32))),
    ("entr", jsp.entr, sp.entr, (np.array([-1., 0., 0.5, 2.], np.float32),)),
    ("rel_entr", jsp.rel_entr, sp.rel_entr, (np.array([0., 0., 1., 2., -1.], np.float32),
                                             np.array([0., 1., 3., 0., 1.], np.float32))),
    ("kl_div", jsp.kl_div, sp.kl_div, (np.array([0., 0., 1., 2., -1.], np.float32),
                                       np.array([0., 1., 3., 0., 1.], np.float32))),
    ("boxcox", jsp.boxcox, sp.boxcox, (POS, np.array(0.5, np.float32))),
    ("boxcox0", jsp.boxcox, sp.boxcox, (POS, np.array(0.0, np.float32))),
    ("boxcox1p", jsp.boxcox1p, sp.boxcox1p, (POS, np.array(-0.5, np.float32))),
    ("i0", jsp.i0, sp.i0, (REAL,)),
    ("i0e", jsp.i0e, sp.i0e, (REAL,)),
    ("i1", jsp.i1, sp.i1, (REAL,)),
    ("i1e", jsp.i1e, sp.i1e, (REAL,)),
    ("zeta", jsp.zeta, sp.zeta, (POS + 1.5, POS)),
    ("riemann_zeta", jsp.zeta, sp.zeta, (POS + 1.5,)),
    ("expi", jsp.expi, sp.expi, (REAL[REAL != 0],)),
    ("exp1", jsp.exp1, sp.exp1, (POS,)),
    ("expn", jsp.expn, sp.expn, (np.array([0, 1, 2, 5]), np.array([0.5, 1., 2., 3.],
                                                                     np.float32))),
    ("spence", jsp.spence, sp.spence, (POS,)),
    ("hyp1f1", jsp.hyp1f1, sp.hyp1f1, (POS / 2, POS + 1, REAL / 3)),
    ("hyp2f1", jsp.hyp2f1, sp.hyp2f1, (POS / 4, POS / 3, POS + 1, UNIT - 0.5)),
    ("logsumexp", lambda x: jsp.logsumexp(x), lambda x: sp.logsumexp(x), (REAL * 20,)),
    ("softmax", jsp.softmax, sp.softmax, (REAL,)),
]


@pytest.mark.parametrize("name,ours,ref,args", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_special_matches_scipy(name, ours, ref, args):
    expected = ref(*[np.asarray(a, np.float64) if np.asarray(a).dtype.kind == "f" else a
                     for a in args])
    got = ours(*args)
    np.testing.assert_allclose(np.asarray(got, np.float64), expected, rtol=2e-5, atol=1e-6,
                               equal_nan=True, err_msg=name)


@pytest.mark.parametrize("name", ["gammainc", "betainc", "i1e", "zeta", "ndtri", "erfcx",
                                  "expn"])
def test_special_under_jit(name):
    """XLA runs the SciPy-backed primitives on the host: same values."""
    _, ours, _, args = next(c for c in SPECIAL if c[0] == name)
    np.testing.assert_allclose(jax.jit(ours)(*args), ours(*args), rtol=1e-6)


def test_special_derivatives():
    x = np.array([0.7, 1.3, 2.9])
    with jax.enable_x64(True):
        for f in [jsp.gammaln, jsp.digamma, jsp.erfcx, jsp.i0e, jsp.i1e, jsp.log_ndtr,
                  jsp.dawsn, jsp.spence, jsp.exp1, jsp.expi, jsp.logit, jsp.expit]:
            check_grads(f, (x * 0.3 if f is jsp.logit else x,), order=1)
        check_grads(lambda a, v: jsp.gammainc(a, v), (x, x[::-1]), order=1)
        check_grads(lambda a, v: jsp.gammaincc(a, v), (x, x[::-1]), order=1)
        check_grads(lambda v: jsp.betainc(2.0, 3.0, v), (x / 4,), order=2)
        check_grads(lambda q: jsp.zeta(3.0, q), (x,), order=2)
        check_grads(jsp.ndtri, (x / 4,), order=2)
        check_grads(lambda a, b: jsp.xlogy(a, b), (x, x[::-1]), order=2)
    # JAX's conventions at x = 0: finite value and gradient
    assert float(jsp.xlogy(0.0, 0.0)) == 0.0
    assert float(jax.grad(jsp.xlogy)(0.0, 1.0)) == 0.0
    with pytest.raises(NotImplementedError, match="not implemented"):
        jax.grad(lambda a: jsp.betainc(a, 2.0, 0.5))(1.0)
    np.testing.assert_allclose(jsp.bernoulli(4), sp.bernoulli(4), rtol=1e-6)


# --- Bessel J_n, Fresnel and sine/cosine integrals, Owen's T, wofz, spherical harmonics ------

LINE = np.concatenate([np.linspace(-12, 12, 97),
                       [1e-20, 1e-5, -1e-3, 0.999, -2.99, 37.5, 1e3, -2e4]])
H_GRID, A_GRID = np.meshgrid([-7, -2.5, -0.3, 0, 0.4, 1, 3, 9, 40],
                             [-20, -1.5, -1, -0.2, 0, 1e-6, 0.6, 1, 2.5, 1e3])
_AXIS = np.array([-500, -30, -8.5, -3, -0.5, 0, 0.2, 1.1, 5, 7.9, 12, 60])
PLANE = (_AXIS[:, None] + 1j * _AXIS).ravel()
PLANE = PLANE[np.abs(sp.wofz(PLANE)) < 1e30]   # what float32 holds
DEGREES, ORDERS = (a.ravel() for a in np.meshgrid(np.arange(7), np.arange(-7, 8)))
ATOL = {False: 3e-7, True: 1e-15}
POLAR = np.linspace(-np.pi, np.pi, DEGREES.size)   # P_n^m(cos t) carries |sin t|
AZIMUTH = np.linspace(2 * np.pi, 0, DEGREES.size)

# (name, ours, SciPy's, arguments, (rtol in float32, in float64)); atol is ATOL
MORE_SPECIAL = [
    ("fresnel", jsp.fresnel, sp.fresnel, (LINE,), (3e-7, 1e-15)),
    ("sici", jsp.sici, sp.sici, (LINE,), (3e-7, 1e-15)),
    ("owens_t", jsp.owens_t, sp.owens_t, (H_GRID, A_GRID), (3e-7, 1e-15)),
    ("wofz", jsp.wofz, sp.wofz, (PLANE,), (2e-6, 3e-14)),
    ("wofz_real", jsp.wofz, sp.wofz, (LINE,), (5e-7, 5e-15)),
    ("bessel_jn", lambda z: jsp.bessel_jn(z, v=5),
     lambda z: np.stack([sp.jv(k, z) for k in range(6)]), (np.linspace(-20, 20, 81),),
     (3e-7, 1e-15)),
    ("sph_harm_y", lambda t, p: jsp.sph_harm_y(DEGREES, ORDERS, t, p),
     lambda t, p: sp.sph_harm_y(DEGREES, ORDERS, t, p), (POLAR, AZIMUTH), (3e-7, 1e-15)),
]


@pytest.mark.parametrize("x64", [False, True], ids=["float32", "float64"])
@pytest.mark.parametrize("name,ours,ref,args,tols", MORE_SPECIAL,
                         ids=[c[0] for c in MORE_SPECIAL])
def test_more_special_match_scipy(name, ours, ref, args, tols, x64):
    """Eagerly and under jit, relative errors (absolute ones near zeros of the functions).
    SciPy sees the arguments as rounded to the tested dtype."""
    real, cplx = (np.float64, np.complex128) if x64 else (np.float32, np.complex64)
    args = [a.astype(cplx if np.iscomplexobj(a) else real) for a in args]
    expected = ref(*[a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
                     for a in args])
    with jax.enable_x64(x64):
        for f in (ours, jax.jit(ours)):
            for got, want in zip(jax.tree_util.tree_leaves(f(*args)), np.broadcast_arrays(
                    *expected) if isinstance(expected, tuple) else [expected]):
                assert got.dtype == (want.astype(cplx) if np.iscomplexobj(want) else
                                     want.astype(real)).dtype
                np.testing.assert_allclose(got, want, rtol=tols[x64], atol=ATOL[x64],
                                           err_msg=name)


def test_more_special_edges():
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)
    s, c = jsp.fresnel(edges)
    np.testing.assert_array_equal(s, [0, 0, 0.5, -0.5, np.nan])
    np.testing.assert_array_equal(c, [0, 0, 0.5, -0.5, np.nan])
    si, ci = jsp.sici(edges)
    np.testing.assert_allclose(si, [0, 0, np.pi / 2, -np.pi / 2, np.nan])
    assert np.signbit(si[1])                    # Si(-0) = -0 as in JAX (SciPy gives +0)
    np.testing.assert_array_equal(ci, [-np.inf, -np.inf, 0, np.nan, np.nan])
    h = np.array([0, 1, np.inf, np.nan, 1, 1, -2], np.float32)
    a = np.array([np.inf, np.inf, 1, 1, np.nan, 0, -np.inf], np.float32)
    np.testing.assert_allclose(jsp.owens_t(h, a), sp.owens_t(h, a), rtol=1e-6)
    with jax.enable_x64(True):   # relative accuracy in the tail
        h, a = np.meshgrid([5.0, 8.0, 12.0, 20.0], [0.3, 1.0, 4.0, 50.0])
        np.testing.assert_allclose(jsp.owens_t(h, a), sp.owens_t(h, a), rtol=1e-12)
    z = np.array([0, np.inf, -np.inf, complex(np.inf, 1), complex(np.inf, -1),
                  complex(1, np.inf), complex(np.nan, 1), 1e10], np.complex64)
    np.testing.assert_allclose(jsp.wofz(z), [1, 0, 0, 0, 0, 0, np.nan, 5.641896e-11j],
                               rtol=1e-6)
    # wofz builds its results with lax.complex, which keeps infinite parts apart
    parts = jax.lax.complex(np.float32([1, np.inf]), np.float32([-np.inf, 2]))
    assert list(np.asarray(parts)) == [complex(1, -np.inf), complex(np.inf, 2)]
    x = np.linspace(-6, 6, 25, dtype=np.float32)   # Re w(x) = exp(-x^2) exactly
    np.testing.assert_array_equal(np.real(jsp.wofz(x)), np.exp(-x * x))
    np.testing.assert_allclose(jsp.bessel_jn(edges, v=2),
                               [[1, 1, np.nan, np.nan, np.nan], [0, 0] + [np.nan] * 3,
                                [0, 0] + [np.nan] * 3])
    # JAX computes J_n at tiny z as nan; the recurrence on ratios has no overflow to fear
    np.testing.assert_allclose(jsp.bessel_jn(np.float32(1e-10), v=2), [1, 5e-11, 1.25e-21])
    assert jsp.bessel_jn(np.ones((2, 3), np.float32), v=4).shape == (5, 2, 3)
    # |m| > n gives 0 (as SciPy); degrees above n_max are clipped to it (values from JAX)
    assert complex(jsp.sph_harm_y(2, 3, 0.7, 0.3)) == 0
    with jax.enable_x64(True):
        np.testing.assert_allclose(
            jsp.sph_harm_y(np.array([3, 10]), np.array([1, -2]), np.array([0.7, 2.0]),
                           np.array([0.3, 5.0]), n_max=2),
            [-0.36365247258846456 - 0.11249089203178193j,
             -0.2679826104502794 + 0.1737494270561892j], rtol=1e-14)
        # far out SciPy rounds pi x^2 / 2 (and stops at 1/2); these are exact (mpmath)
        s, c = jsp.fresnel(np.array([12345.678, 26826957.95279694]))
        np.testing.assert_allclose(s, [0.5000109663298015, 0.5000000004994956], rtol=1e-15)
        np.testing.assert_allclose(c, [0.500023334695318, 0.499999988145219], rtol=1e-15)


def test_more_special_dtypes_and_errors():
    half = np.array([0.5, 1.5], np.float16)
    assert [v.dtype for v in jsp.fresnel(half) + jsp.sici(half)] == [np.float16] * 4
    assert jsp.bessel_jn(half, v=1).dtype == np.float16
    assert jsp.owens_t(half, half).dtype == np.float32     # as in JAX
    assert jsp.wofz(half).dtype == np.complex64
    assert jsp.wofz(np.arange(3)).dtype == np.complex64
    assert not jsp.fresnel(1.0)[0].aval.weak_type and not jsp.owens_t(1.0, 2.0).aval.weak_type
    with pytest.raises(TypeError, match="`v` must be an integer"):
        jsp.bessel_jn(1.0, v=2.0)
    with pytest.raises(ValueError, match="non-negative"):
        jsp.bessel_jn(1.0, v=-1)
    with pytest.raises(ValueError, match="real-valued"):
        jsp.sici(1 + 1j)
    with pytest.raises(NotImplementedError, match="real-valued"):
        jsp.fresnel(np.array([1j]))
    with pytest.raises(TypeError, match="`n` must be an integer"):
        jsp.sph_harm_y(np.array([1.0]), np.array([1]), 0.5, 0.5)
    with pytest.raises(NotImplementedError, match="diff_n"):
        jsp.sph_harm_y(np.array([1]), np.array([1]), 0.5, 0.5, diff_n=1)
    with pytest.raises(errors.ConcretizationTypeError, match="n_max"):
        jax.jit(lambda n: jsp.sph_harm_y(n, np.array([1]), 0.5, 0.5))(np.array([2]))


def test_more_special_vmap_and_derivatives():
    x = np.array([-2.3, -0.4, 0.3, 0.9, 1.7, 5.5])
    for f in [jsp.fresnel, jsp.sici, jsp.wofz, lambda v: jsp.owens_t(v, v / 2),
              lambda v: jsp.bessel_jn(v, v=3).T,
              lambda v: jsp.sph_harm_y(np.array(3), np.array(-2), v, 2 * v, n_max=3)]:
        for got, want in zip(jax.tree_util.tree_leaves(jax.vmap(f)(x)),
                             jax.tree_util.tree_leaves(f(x))):
            np.testing.assert_allclose(got, want, rtol=1e-6)
    with jax.enable_x64(True):
        check_grads(jsp.fresnel, (x,), order=2)
        check_grads(jsp.sici, (x,), order=2)
        check_grads(jsp.owens_t, (x, x[::-1] / 2), order=2)
        check_grads(jsp.wofz, (x + 1j * x[::-1] / 3,), order=2)
        check_grads(lambda v: jsp.wofz(v).real, (x,), order=1)
        check_grads(lambda v: jsp.bessel_jn(v, v=3), (x,), order=2)
        check_grads(lambda t, p: jsp.sph_harm_y(np.arange(6), np.array([0, -1, 2, 3, -2, 1]),
                                                t, p), (x[::-1] / 2 + 1, x), order=2)
        # JAX's values
        np.testing.assert_allclose(jax.grad(jsp.owens_t, argnums=(0, 1))(0.5, 0.7),
                                   [-0.048173327917516204, 0.08866383580702068], rtol=1e-12)
        np.testing.assert_allclose(jax.grad(lambda v: jsp.bessel_jn(v, v=2)[2])(1.3),
                                   0.24044371084737187, rtol=1e-12)
        np.testing.assert_allclose(jax.grad(jsp.wofz, holomorphic=True)(0.5 + 0.5j),
                                   -0.3026684765277165 + 0.3647342277988792j, rtol=1e-12)
    assert float(jax.grad(lambda v: jsp.sici(v)[0])(0.0)) == 1.0
    assert float(jax.grad(lambda v: jsp.sici(v)[1])(0.0)) == np.inf
    assert float(jax.grad(lambda v: jsp.bessel_jn(v, v=1)[0])(0.0)) == 0.0  # JAX: nan


LOC, SCALE = np.float32(0.5), np.float32(2.0)
STATS = [
    ("norm.logpdf", jst.norm.logpdf, ss.norm.logpdf, (REAL, LOC, SCALE)),
    ("norm.pdf", jst.norm.pdf, ss.norm.pdf, (REAL, LOC, SCALE)),
    ("norm.cdf", jst.norm.cdf, ss.norm.cdf, (REAL, LOC, SCALE)),
    ("norm.logcdf", jst.norm.logcdf, ss.norm.logcdf, (REAL * 5, LOC, SCALE)),
    ("norm.sf", jst.norm.sf, ss.norm.sf, (REAL, LOC, SCALE)),
    ("norm.logsf", jst.norm.logsf, ss.norm.logsf, (REAL * 5, LOC, SCALE)),
    ("norm.ppf", jst.norm.ppf, ss.norm.ppf, (UNIT, LOC, SCALE)),
    ("norm.isf", jst.norm.isf, ss.norm.isf, (UNIT, LOC, SCALE)),
    ("uniform.logpdf", jst.uniform.logpdf, ss.uniform.logpdf, (REAL, LOC, SCALE)),
    ("uniform.cdf", jst.uniform.cdf, ss.uniform.cdf, (REAL, LOC, SCALE)),
    ("uniform.ppf", jst.uniform.ppf, ss.uniform.ppf, (UNIT, LOC, SCALE)),
    ("expon.logpdf", jst.expon.logpdf, ss.expon.logpdf, (REAL, LOC, SCALE)),
    ("expon.cdf", jst.expon.cdf, ss.expon.cdf, (REAL, LOC, SCALE)),
    ("expon.sf", jst.expon.sf, ss.expon.sf, (REAL, LOC, SCALE)),
    ("expon.ppf", jst.expon.ppf, ss.expon.ppf, (UNIT, LOC, SCALE)),
    ("laplace.logpdf", jst.laplace.logpdf, ss.laplace.logpdf, (REAL, LOC, SCALE)),
    ("laplace.cdf", jst.laplace.cdf, ss.laplace.cdf, (REAL, LOC, SCALE)),
    ("logistic.logpdf", jst.logistic.logpdf, ss.logistic.logpdf, (REAL, LOC, SCALE)),
    ("logistic.cdf", jst.logistic.cdf, ss.logistic.cdf, (REAL, LOC, SCALE)),
    ("logistic.ppf", jst.logistic.ppf, ss.logistic.ppf, (UNIT, LOC, SCALE)),
    ("logistic.isf", jst.logistic.isf, ss.logistic.isf, (UNIT, LOC, SCALE)),
    ("cauchy.logpdf", jst.cauchy.logpdf, ss.cauchy.logpdf, (REAL, LOC, SCALE)),
    ("cauchy.cdf", jst.cauchy.cdf, ss.cauchy.cdf, (REAL, LOC, SCALE)),
    ("cauchy.ppf", jst.cauchy.ppf, ss.cauchy.ppf, (UNIT, LOC, SCALE)),
    ("t.logpdf", jst.t.logpdf, ss.t.logpdf, (REAL, np.float32(3.5), LOC, SCALE)),
    ("chi2.logpdf", jst.chi2.logpdf, ss.chi2.logpdf, (POS, np.float32(3.0))),
    ("chi2.cdf", jst.chi2.cdf, ss.chi2.cdf, (POS, np.float32(3.0))),
    ("chi2.sf", jst.chi2.sf, ss.chi2.sf, (POS, np.float32(3.0))),
    ("gamma.logpdf", jst.gamma.logpdf, ss.gamma.logpdf, (REAL + 3, np.float32(2.5), LOC,
                                                         SCALE)),
    ("gamma.cdf", jst.gamma.cdf, ss.gamma.cdf, (POS, np.float32(2.5))),
    ("gamma.sf", jst.gamma.sf, ss.gamma.sf, (POS, np.float32(2.5))),
    ("beta.logpdf", jst.beta.logpdf, ss.beta.logpdf, (UNIT, np.float32(2.0),
                                                      np.float32(3.5))),
    ("beta.cdf", jst.beta.cdf, ss.beta.cdf, (UNIT, np.float32(2.0), np.float32(3.5))),
    ("poisson.logpmf", jst.poisson.logpmf, ss.poisson.logpmf,
     (np.arange(6, dtype=np.float32), np.float32(2.5))),
    ("poisson.cdf", jst.poisson.cdf, ss.poisson.cdf, (np.arange(6, dtype=np.float32),
                                                      np.float32(2.5))),
    ("bernoulli.logpmf", jst.bernoulli.logpmf, ss.bernoulli.logpmf,
     (np.array([0., 1., 2.], np.float32), np.float32(0.3))),
    ("bernoulli.cdf", jst.bernoulli.cdf, ss.bernoulli.cdf,
     (np.array([-1., 0., 0.5, 1.], np.float32), np.float32(0.3))),
    ("binom.logpmf", jst.binom.logpmf, ss.binom.logpmf,
     (np.arange(6, dtype=np.float32), np.float32(5), np.float32(0.3))),
    ("geom.logpmf", jst.geom.logpmf, ss.geom.logpmf, (np.arange(5, dtype=np.float32),
                                                      np.float32(0.3))),
]


@pytest.mark.parametrize("name,ours,ref,args", STATS, ids=[c[0] for c in STATS])
def test_stats_match_scipy(name, ours, ref, args):
    expected = ref(*[np.asarray(a, np.float64) for a in args])
    np.testing.assert_allclose(np.asarray(ours(*args), np.float64), expected, rtol=3e-5,
                               atol=1e-6, equal_nan=True, err_msg=name)


def test_multivariate_and_dirichlet():
    rng = np.random.default_rng(0)
    cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], np.float32)
    mean = np.array([0.5, -1.0, 0.0], np.float32)
    x = rng.normal(size=(4, 3)).astype(np.float32)
    np.testing.assert_allclose(jst.multivariate_normal.logpdf(x, mean, cov),
                               ss.multivariate_normal.logpdf(x, mean, cov), rtol=1e-5)
    np.testing.assert_allclose(jst.multivariate_normal.pdf(x[0], mean, cov),
                               ss.multivariate_normal.pdf(x[0], mean, cov), rtol=1e-5)
    np.testing.assert_allclose(jst.multivariate_normal.logpdf(x, mean, np.float32(2.0)),
                               ss.multivariate_normal.logpdf(x, mean, 2.0), rtol=1e-5)
    g = jax.grad(lambda m: jst.multivariate_normal.logpdf(x[0], m, cov))(mean)
    np.testing.assert_allclose(g, np.linalg.solve(cov, x[0] - mean), rtol=1e-4)
    alpha = np.array([1.5, 2.0, 3.0], np.float32)
    p = np.array([0.2, 0.3, 0.5], np.float32)
    np.testing.assert_allclose(jst.dirichlet.logpdf(p, alpha), ss.dirichlet.logpdf(p, alpha),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="incompatible shapes"):
        jst.multivariate_normal.logpdf(x, mean, np.eye(2, dtype=np.float32))


def test_stats_under_jit_vmap_and_grad():
    f = jax.jit(jax.vmap(lambda v: jst.norm.logpdf(v, 0.0, 2.0)))
    np.testing.assert_allclose(f(REAL), ss.norm.logpdf(REAL, 0, 2), rtol=1e-5)
    np.testing.assert_allclose(jax.grad(lambda v: jst.norm.logcdf(v))(-1.0),
                               ss.norm.pdf(-1.0) / ss.norm.cdf(-1.0), rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jst.gamma.cdf)(POS, 2.5), ss.gamma.cdf(POS, 2.5),
                               rtol=1e-5)
    np.testing.assert_allclose(jax.grad(lambda a: jst.gamma.logpdf(2.0, a))(2.5),
                               np.log(2.0) - sp.digamma(2.5), rtol=1e-5)


def test_gamma_family_edge_values_match_jax():
    x = np.array([-np.inf, -2., -1., -0.5, -0., 0., 0.5, 2., np.inf, np.nan], np.float32)
    nan, inf = np.nan, np.inf
    np.testing.assert_array_equal(jsp.gammasgn(x),
                                  [nan, nan, nan, -1., -1., 1., 1., 1., 1., nan])
    np.testing.assert_allclose(jsp.gamma(x),
                               [nan, nan, nan, -3.5449077, -inf, inf, 1.7724539, 1., inf, nan],
                               rtol=1e-5)
    np.testing.assert_allclose(jsp.loggamma(x),
                               [nan, nan, nan, nan, nan, nan, 0.5723649, 0., inf, nan],
                               rtol=1e-5, atol=1e-6)
    entr = np.asarray(jsp.entr(x))
    np.testing.assert_allclose(entr, [-inf, -inf, -inf, -inf, -0., -0., 0.3465736,
                                      -1.3862944, -inf, nan], rtol=1e-6)
    assert np.signbit(entr[4:6]).all()


def test_nan_propagates_through_xlogy_and_kl_div():
    """JAX keeps a nan argument: xlogy(0, nan) is nan, and kl_div of a nan is nan."""
    nan = np.float32(np.nan)
    assert np.isnan(jsp.xlogy(np.float32(0), nan))
    assert np.isnan(jsp.xlog1py(np.float32(0), nan))
    np.testing.assert_array_equal(
        jsp.kl_div(np.array([nan, 1., 0., -1.]), np.array([1., nan, nan, nan])), [nan] * 4)
    assert jsp.xlogy(np.float32(0), np.float32(0)) == 0


def test_entr_derivative_at_zero_is_infinite():
    """JAX differentiates x log x as log x + 1, so entr'(0) = inf (not xlogy's nan)."""
    assert float(jax.jacfwd(jsp.entr)(0.0)) == np.inf
    assert float(jax.jacrev(jsp.entr)(0.0)) == np.inf
    np.testing.assert_allclose(jax.grad(jsp.entr)(2.0), -1.6931472, rtol=1e-6)
    with pytest.raises(ValueError, match="complex"):
        jsp.entr(1j)


def test_betaln_keeps_accuracy_for_large_arguments():
    """cdflib's Stirling-series difference once the larger argument is >= 8 (values and
    derivatives from JAX 0.10.2)."""
    a = np.array([1., 1., 3., 0.5, 20.], np.float32)
    b = np.array([1e4, 1e20, 8, 1e7, 1e5], np.float32)
    np.testing.assert_allclose(jsp.betaln(a, b),
                               [-9.2103405, -46.0517, -5.8861027, -7.486683, -190.92052],
                               rtol=1e-6)
    da, db = jax.vmap(jax.grad(jsp.betaln, (0, 1)))(a, b)
    np.testing.assert_allclose(da, [-9.787606, -46.628918, -1.4289684, -18.081606,
                                    -8.542597], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(db)[[0, 2, 3, 4]],
                               [-1e-4, -0.3361116, -5e-8, -1.99981e-4], rtol=1e-5)
    xs = np.geomspace(1, 1e30, 200).astype(np.float32)   # betaln(x, 1) = -log x
    values, slopes = jax.jvp(jsp.betaln, (xs, np.float32(1)), (np.ones_like(xs),
                                                                np.float32(0)))
    np.testing.assert_allclose(values, -np.log(xs), atol=1e-5)
    np.testing.assert_allclose(slopes, -1 / xs, atol=1e-5)
    assert jsp.betaln(1.0, 20.0).weak_type


def test_logsumexp_of_complex_matches_jax():
    """The max is taken over real parts; the result is the complex log, or with
    return_sign a real log-magnitude and a complex sign (values from JAX 0.10.2)."""
    x = np.array([1 + 1j, 2 - 1j, -2 + 3j], np.complex64)
    out = jsp.logsumexp(x)
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, 1.8883877 - 0.6333258j, rtol=1e-6)
    magnitude, sign = jsp.logsumexp(x, return_sign=True)
    assert magnitude.dtype == np.float32 and sign.dtype == np.complex64
    np.testing.assert_allclose(magnitude, 1.8883878, rtol=1e-6)
    np.testing.assert_allclose(sign, 0.8060636 - 0.59182876j, rtol=1e-6)
    scaled = jsp.logsumexp(np.array([[0.5 + 2j, -1j], [3, 1 - 1j]], np.complex64), axis=1,
                           b=np.array([2., -1.], np.float32))
    np.testing.assert_allclose(scaled, [1.4562302 + 2.0329027j, 3.6576445 + 0.05903248j],
                               rtol=1e-6)


def test_hypergeometric_and_zeta_derivatives_match_jax():
    """Every argument is differentiable, as in JAX: the parameters of 1F1 and 2F1 by their
    term-wise differentiated series, zeta in x by its Euler-Maclaurin expansion (values
    from JAX 0.10.2)."""
    a = np.array([0.7, 3., 12., 25.], np.float32)
    b = np.array([1.5, 2., 20., 5.], np.float32)
    x = np.array([0.6, 5., 29., 12.], np.float32)
    expected = [[5.3947812e-01, 5.9413708e+02, 1.5348424e+09, 1.6560709e+12],
                [-2.6144046e-01, -7.7965326e+02, -1.0918804e+09, -4.6119964e+12],
                [7.0941269e-01, 5.9365265e+02, 1.1309030e+09, 4.7288754e+12]]
    for got, want in zip(jax.vmap(jax.grad(jsp.hyp1f1, (0, 1, 2)))(a, b, x), expected):
        np.testing.assert_allclose(got, want, rtol=2e-6)
    c = np.array([0.8, 0.3, 0.5, 0.9], np.float32)
    y = np.array([0.1, 0.5, 0.85, 0.3], np.float32)
    p = np.array([0.2, 0.5, 0.9, 0.4], np.float32)
    expected = [[0.1747494, 0.3015059, 1.751055, 0.5499017],
                [0.0446134, 0.4841424, 2.7090003, 0.257248],
                [-0.0707853, -0.1962196, -1.4213287, -0.3252083],
                [0.3724973, 0.3943464, 4.1195607, 0.8997475]]
    grads = jax.jit(jax.vmap(jax.grad(jsp.hyp2f1, (0, 1, 2, 3))))(p, c, p + 0.3, y)
    for got, want in zip(grads, expected):
        np.testing.assert_allclose(got, want, rtol=5e-6)
    s = np.array([1.5, 2., 3.7, 8.], np.float32)
    q = np.array([0.3, 1., 2.5, 4.], np.float32)
    slope_s, slope_q = jax.vmap(jax.grad(jsp.zeta, (0, 1)))(s, q)
    np.testing.assert_allclose(slope_s, [3.292038, -0.93754822, -0.058196813, -2.690052e-05],
                               rtol=1e-6)
    np.testing.assert_allclose(slope_q, [-31.603855, -2.404114, -0.065803081, -3.5700505e-05],
                               rtol=1e-6)
    with jax.enable_x64(True):
        slope_s, _ = jax.vmap(jax.grad(jsp.zeta, (0, 1)))(s.astype(float), q.astype(float))
        np.testing.assert_allclose(slope_s, [3.2920371, -0.93754825, -0.05819681,
                                             -2.6900519e-05], rtol=1e-7)
    check_grads(lambda s: jsp.zeta(s, 2.0), (np.float32(2.5),), order=2,
                rtol=5e-2, atol=5e-3)


def test_sici_refuses_complex_with_jax_message():
    with pytest.raises(ValueError, match=r"Argument `x` to sici must be real-valued\."):
        jsp.sici(np.ones(3, np.complex64))


def test_complex_gamma_loggamma_erfcx_match_jax():
    """Complex arguments (values from JAX 0.10.2): gamma by Lanczos with reflection,
    loggamma on SciPy's principal branch, erfcx(z) = w(iz); poles give nan+nanj."""
    z = np.array([-0.5, -1.5, 0.5 + 1j, -2.5 + 1e-12j, -2.5 - 1e-12j, 3.3 - 2j,
                  -7.2 + 0.3j, 20 + 5j, 0, -5, complex(np.nan, 1)], np.complex64)
    for f in (jsp.gamma, jax.jit(jsp.gamma)):
        got = f(z)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got[:8], [
            -3.5449064 - 3.0990554e-07j, 2.3632708, 0.30069476 - 0.42496783j,
            -0.9453088 - 8.264152e-08j, -0.9453088 + 8.264152e-08j,
            -0.83441639 - 1.1105491j, 5.5833454e-05 + 3.3317742e-04j,
            -4.4879406e+16 + 4.6361088e+16j], rtol=2e-6)
        assert np.isnan(np.real(got[8:])).all() and np.isnan(np.imag(got[8:])).all()
    got = jsp.loggamma(z)
    np.testing.assert_allclose(got[:8], [
        1.2655125 - 3.1415927j, 0.86004734 - 6.2831855j, -0.65279055 - 0.9550074j,
        -0.05624342 - 9.424778j, -0.05624342 + 9.424778j, 0.32864857 - 2.215164j,
        -7.9929867 - 23.72798j, 38.705833 + 14.906325j], rtol=1e-6)
    assert np.isnan(np.imag(got[8:])).all()
    got = jsp.erfcx(z)
    np.testing.assert_allclose(got[:8], [
        1.9523605, 18.653887, 0.35490033 - 0.34287176j, 1035.8148 - 5.1802025e-09j,
        1035.8148 + 5.1802025e-09j, 0.12496404 + 0.07111685j,
        -2.2818233e+22 + 5.5136467e+22j, 0.02652625 - 0.006616042j], rtol=2e-6)
    slope = jax.grad(lambda x: jsp.erfcx(x).real)(np.complex64(0.3 + 0.4j))
    np.testing.assert_allclose(slope, -0.5323428 + 0.3720277j, rtol=1e-6)


def test_stats_domain_edges_match_jax():
    """beta is nan unless a, b and scale are positive; gamma below loc is -inf without a
    nan on the way (debug_nans); poisson.entropy broadcasts against loc (JAX 0.10.2)."""
    x = np.array([0., 0.5, 1.], np.float32)
    assert np.isnan(jst.beta.pdf(x, -1.1, -1.1)).all()
    assert np.isnan(jst.beta.pdf(x, 1., 1., 0, -1)).all()
    np.testing.assert_allclose(jst.beta.logpdf(np.float32(2.), 2., 3.), -np.inf)
    with jax.debug_nans(True):
        assert float(jst.gamma.pdf(0.0, 1.0, 1.0)) == 0.0
    entropy = jst.poisson.entropy(np.ones((1, 3, 1), np.float32), np.ones((2, 3, 4)))
    assert entropy.shape == (2, 3, 4)
    np.testing.assert_allclose(entropy, 1.3048419, rtol=1e-6)


def test_log_ndtr_is_jax_s_composition_with_its_series_order():
    # JAX 0.10.2 computes log_ndtr in the operand's dtype: log(ndtr(x)) between -10 and 5
    # (float32), -ndtr(-x) above, an asymptotic series of series_order terms below; so
    # log_ndtr(x) == log(ndtr(x)) there, as numpyro's Normal.log_cdf vs cdf relies on
    x = np.float32([-30, -12, -10, -4.292929172515869, 0, 6, 40])
    series_3 = [-454.321228, -75.410675, -53.231285, -11.638878, -0.693147, -9.865896e-10, 0]
    series_0 = [-454.320129, -75.403847, -53.221523]
    jitted = jax.jit(jsp.log_ndtr)(x)
    np.testing.assert_allclose(jitted, series_3, rtol=1e-6)
    np.testing.assert_allclose(jsp.log_ndtr(x), series_3, rtol=1e-6)
    np.testing.assert_allclose(jsp.log_ndtr(x[:3], 0), series_0, rtol=1e-6)
    assert float(jitted[3]) == float(jax.numpy.log(jax.jit(jsp.ndtr)(x[3])))
    np.testing.assert_allclose(jax.vmap(jax.grad(jsp.log_ndtr))(x),
                               [30.032578, 12.082249, 10.098101, 4.505589, 0.797885,
                                6.075888e-09, 0], rtol=1e-5)


@pytest.mark.parametrize("fn, message", [
    (jsp.ndtr, r"x.dtype=float16 is not supported, see docstring"),
    (jsp.ndtri, r"x.dtype=float16 is not supported, see docstring"),
    (jsp.spence, r"x.dtype=float16 is not supported, see docstring"),
    (jsp.log_ndtr, r"x.dtype=float16 is not supported\.")])
def test_float32_or_64_only_functions_refuse_other_dtypes(fn, message):
    # JAX's implementations hold float32 and float64 coefficients only: JAX 0.10.2 raises
    # TypeError for float16, bfloat16 and integer arrays
    assert_named_error(lambda: fn(jnp.array([0.5], jnp.float16)), TypeError, message)
    assert_named_error(lambda: fn(jnp.array([0.5], jnp.bfloat16)), TypeError, "bfloat16")
    assert_named_error(lambda: fn(jnp.array([1])), TypeError, "int32")
    assert np.isfinite(fn(0.5))   # a Python float is float32


def test_log_ndtr_series_order_is_checked():
    assert_named_error(lambda: jsp.log_ndtr(0.5, series_order=2.0), TypeError,
                       "series_order must be a Python integer")
    assert_named_error(lambda: jsp.log_ndtr(0.5, series_order=-1), ValueError,
                       "must be non-negative")
    assert_named_error(lambda: jsp.log_ndtr(0.5, series_order=31), ValueError, "<= 30")


def test_polygamma_order_must_be_an_integer():
    for n in (1.0, jnp.array([1.0]), jnp.array([True])):
        assert_named_error(lambda n=n: jsp.polygamma(n, jnp.array([0.5])), ValueError,
                           "Argument `n` to polygamma must be of integer type")
    np.testing.assert_allclose(jsp.polygamma(jnp.array([1]), jnp.array([0.5])), [4.934802],
                               rtol=1e-6)
