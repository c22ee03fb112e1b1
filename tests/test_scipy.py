"""jax.scipy.special and jax.scipy.stats against SciPy: values on grids (eager, and under
jit where XLA runs the SciPy-backed primitives on the host), derivatives against central
differences, JAX's conventions at the edges (xlogy(0, 0) = 0, entr, kl_div domains)."""
import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as ss

import pyjax as jax
import pyjax.scipy.special as jsp
import pyjax.scipy.stats as jst
from pyjax._src.test_util import check_grads

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
