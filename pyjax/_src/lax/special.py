"""Special functions XLA has no kernel for, as elementwise primitives: the regularised
incomplete gamma and beta functions, exponentially scaled Bessel functions I0 and I1,
Hurwitz zeta, erfcx, ndtri, the exponential integrals, Spence's and Dawson's
functions, and the confluent and Gauss hypergeometric functions. Their NumPy impls call
SciPy; XLA runs the same impl on the host (callbacks.host_lowering). igamma's derivative in
a is the series of lax.random_gamma. Imports core, interpreters and the lax families."""
from __future__ import annotations

import math

import numpy as np

from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import NOT_DIFFERENTIABLE, RuleFactory, define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters.ad import defjvp
from pyjax._src.lax import builders as b
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import random_gamma
from pyjax._src.lax import structural as st
from pyjax._src.lax.builders import FLOAT, binary_op, unary_op
from pyjax._src.lax.callbacks import host_lowering
from pyjax._src.util import quietly, scipy_special

HOST = RuleFactory(host_lowering)


def _scipy(name):
    """A SciPy ufunc as an impl: computed in float64, returned in the operands' dtype."""
    f = quietly(scipy_special(name))

    def impl(*args):
        dtype = np.result_type(*args)
        out = f(*(np.asarray(a, np.float64) for a in args))
        return np.asarray(out, dtype)
    impl.__name__ = name
    return impl


def _c(x, v):
    return np.array(v, get_aval(x).dtype)


def _log_gamma_pdf(a, x):
    """log of x^(a-1) e^-x / Gamma(a): d igamma(a, x) / dx."""
    return ew.sub(ew.sub(ew.mul(ew.sub(a, _c(a, 1)), ew.log(x)), x), ew.lgamma(a))


# --- incomplete gamma ---------------------------------------------------------------------

def _igamma_grad_a_impl(a, x):
    """dP(a, x)/da: minus random_gamma_grad times the density. Where x^a e^-x / Gamma(a)
    underflows the dtype, XLA's series and continued fraction give -0 (here too, though
    random_gamma_grad overflows there), and +0 at x = 0."""
    with np.errstate(all="ignore"):
        grad = np.asarray(random_gamma.random_gamma_grad_p.impl(a, x), np.float64)
        log_gamma_a = scipy_special("gammaln")(np.asarray(a, np.float64))
        log_pdf = (a - 1.0) * np.log(x) - x - log_gamma_a
        out = -grad * np.exp(log_pdf)
        underflow = a * np.log(x) - x - log_gamma_a < -np.log(np.finfo(a.dtype).max)
        out = np.where(underflow & (a > 0), -0.0, out)
        return np.asarray(np.where((x == 0) & (a > 0), 0.0, out), a.dtype)


igamma_grad_a_p = binary_op("igamma_grad_a", _igamma_grad_a_impl, (FLOAT,),
                            jvp=NOT_DIFFERENTIABLE, hlo=None, samples_domain=(0.5, 3),
                            lower=HOST)
igamma_p = binary_op(
    "igamma", _scipy("gammainc"), (FLOAT,), hlo=None, samples_domain=(0.5, 3), lower=HOST,
    jvp=defjvp(lambda g, a, x: ew.mul(g, igamma_grad_a_p.bind(a, x)),
               lambda g, a, x: ew.mul(g, ew.exp(_log_gamma_pdf(a, x)))))
igammac_p = binary_op(
    "igammac", _scipy("gammaincc"), (FLOAT,), hlo=None, samples_domain=(0.5, 3), lower=HOST,
    jvp=defjvp(lambda g, a, x: ew.neg(ew.mul(g, igamma_grad_a_p.bind(a, x))),
               lambda g, a, x: ew.neg(ew.mul(g, ew.exp(_log_gamma_pdf(a, x))))))


# --- n-ary elementwise helper ------------------------------------------------------------------

def _nary(name, f, jvps, samples):
    """An elementwise primitive of several float operands of one dtype and shape (rank-0
    operands broadcast), impl from SciPy, lowered on the host."""
    def abstract_eval(*avals):
        dtype = b.same_dtypes(name, avals)
        b.check_dtype(name, dtype, (FLOAT,))
        return ShapedArray(b.broadcasting_shape(name, *(a.shape for a in avals)), dtype)

    return define_primitive(name, impl=_scipy(f), abstract_eval=abstract_eval,
                            jvp=jvps, batch=batching.elementwise_rule, lower=HOST,
                            samples=samples)


def _betainc_x_jvp(g, a, bb, x):
    log_density = ew.sub(ew.add(ew.mul(ew.sub(a, _c(a, 1)), ew.log(x)),
                                ew.mul(ew.sub(bb, _c(bb, 1)), ew.log1p(ew.neg(x)))),
                         ew.sub(ew.add(ew.lgamma(a), ew.lgamma(bb)),
                                ew.lgamma(ew.add(a, bb))))
    return ew.mul(g, ew.exp(log_density))


def _not_implemented(what):
    def jvp(g, *args):
        raise NotImplementedError(f"the derivative of {what} is not implemented (as in "
                                  "JAX); only the last argument is differentiable.")
    return jvp


def _samples(*domains):
    return lambda: [b.Sample([b.random_values((3,), np.float32, d, seed=i)
                              for i, d in enumerate(domains)])]


betainc_p = _nary("regularized_incomplete_beta", "betainc",
                  defjvp(_not_implemented("betainc in a"), _not_implemented("betainc in b"),
                         _betainc_x_jvp),
                  _samples((0.5, 3), (0.5, 3), (0.1, 0.9)))
hyp1f1_p = _nary("hyp1f1", "hyp1f1", NOT_DIFFERENTIABLE,
                 _samples((0.5, 2), (1, 3), (-1, 1)))
hyp2f1_p = _nary("hyp2f1", "hyp2f1", NOT_DIFFERENTIABLE,
                 _samples((0.5, 2), (0.5, 2), (1, 3), (-0.5, 0.5)))


# --- one operand ----------------------------------------------------------------------------

def _full(x, v):
    return st.broadcast_in_dim(_c(x, v), get_aval(x).shape, ())


def _i1e_jvp(g, ans, x):
    # d/dx i1e(x) = i0e(x) - i1e(x) * (sign(x) + 1/x), which tends to 1/2 at x = 0
    zero = ew.eq(x, _full(x, 0))
    safe = ew.select(zero, _full(x, 1), x)
    slope = ew.sub(bessel_i0e_p.bind(x),
                   ew.mul(ans, ew.add(ew.sign(x), ew.div(_full(x, 1), safe))))
    return ew.mul(g, ew.select(zero, _full(x, 0.5), slope))


bessel_i0e_p = unary_op(
    "bessel_i0e", _scipy("i0e"), (FLOAT,), hlo=None, lower=HOST,
    jvp=ad.defjvp_with_output(lambda g, ans, x: ew.mul(
        g, ew.sub(bessel_i1e_p.bind(x), ew.mul(ew.sign(x), ans)))))
bessel_i1e_p = unary_op("bessel_i1e", _scipy("i1e"), (FLOAT,), hlo=None, lower=HOST,
                        jvp=ad.defjvp_with_output(_i1e_jvp))
erfcx_p = unary_op("erfcx", _scipy("erfcx"), (FLOAT,), hlo=None, lower=HOST,
                   jvp=ad.defjvp_with_output(lambda g, ans, x: ew.mul(g, ew.sub(
                       ew.mul(ew.mul(_c(x, 2), x), ans), _c(x, 2 / math.sqrt(math.pi))))))
ndtri_p = unary_op("ndtri", _scipy("ndtri"), (FLOAT,), hlo=None, lower=HOST,
                   samples_domain=(0.05, 0.95),
                   jvp=ad.defjvp_with_output(lambda g, ans, x: ew.mul(g, ew.mul(
                       _c(x, math.sqrt(2 * math.pi)), ew.exp(ew.mul(ew.mul(ans, ans),
                                                                    _c(x, 0.5)))))))


expi_p = unary_op("expi", _scipy("expi"), (FLOAT,), hlo=None, lower=HOST,
                  samples_domain=(0.5, 3),
                  jvp=defjvp(lambda g, x: ew.mul(g, ew.div(ew.exp(x), x))))
exp1_p = unary_op("exp1", _scipy("exp1"), (FLOAT,), hlo=None, lower=HOST,
                  samples_domain=(0.5, 3),
                  jvp=defjvp(lambda g, x: ew.neg(ew.mul(g, ew.div(ew.exp(ew.neg(x)), x)))))
spence_p = unary_op("spence", _scipy("spence"), (FLOAT,), hlo=None, lower=HOST,
                    samples_domain=(0.5, 3),
                    jvp=defjvp(lambda g, x: ew.mul(g, ew.div(ew.log(x),
                                                             ew.sub(_c(x, 1), x)))))
dawsn_p = unary_op("dawsn", _scipy("dawsn"), (FLOAT,), hlo=None, lower=HOST,
                   jvp=ad.defjvp_with_output(lambda g, ans, x: ew.mul(g, ew.sub(
                       _c(x, 1), ew.mul(ew.mul(_c(x, 2), x), ans)))))

# --- two operands -----------------------------------------------------------------------------

zeta_p = binary_op("zeta", _scipy("zeta"), (FLOAT,), hlo=None, lower=HOST,
                   samples_domain=(1.5, 4),
                   jvp=defjvp(_not_implemented("zeta in x"),
                              lambda g, x, q: ew.neg(ew.mul(g, ew.mul(
                                  x, zeta_p.bind(ew.add(x, _c(x, 1)), q))))))
def _expn_abstract_eval(n, x):
    if n.dtype.kind not in "iu":
        raise TypeError(f"expn: n must be an integer array, got {n.dtype}")
    b.check_dtype("expn", x.dtype, (FLOAT,))
    return ShapedArray(b.broadcasting_shape("expn", n.shape, x.shape), x.dtype)


def _expn_impl(n, x):
    with np.errstate(all="ignore"):
        return np.asarray(scipy_special("expn")(n, np.asarray(x, np.float64)), x.dtype)


def _expn_slope(n, x):
    """d E_n(x)/dx = -E_{n-1}(x) for n >= 1, and -E_0(x) (1 + 1/x) for n = 0."""
    one = np.array(1, get_aval(n).dtype)
    n_shape = b.broadcasting_shape("expn", get_aval(n).shape, get_aval(x).shape)
    n = st.broadcast_to_shape(n, n_shape)
    lower = expn_p.bind(ew.max(ew.sub(n, one), ew.mul(n, np.array(0, get_aval(n).dtype))), x)
    e0 = expn_p.bind(n, x)
    at_zero = ew.mul(e0, ew.add(_c(x, 1), ew.div(_c(x, 1), x)))
    return ew.neg(ew.select(ew.eq(n, ew.mul(n, np.array(0, get_aval(n).dtype))), at_zero,
                            lower))


expn_p = define_primitive(
    "expn", impl=_expn_impl, abstract_eval=_expn_abstract_eval, lower=HOST,
    batch=batching.elementwise_rule,
    jvp=defjvp(None, lambda g, n, x: ew.mul(g, _expn_slope(n, x))),
    samples=lambda: [b.Sample([np.array(n, np.int32), b.random_values((3,), np.float32, (0.5, 3))])
             for n in (1, 2, 3)])


def _call(prim):
    def fn(*args):
        return prim.bind(*args)
    fn.__name__ = prim.name
    return fn


(igamma, igammac, igamma_grad_a, betainc, hyp1f1, hyp2f1, bessel_i0e, bessel_i1e, erfcx,
 ndtri, expi, exp1, spence, dawsn, zeta, expn) = map(_call, (
    igamma_p, igammac_p, igamma_grad_a_p, betainc_p, hyp1f1_p, hyp2f1_p, bessel_i0e_p,
    bessel_i1e_p, erfcx_p, ndtri_p, expi_p, exp1_p, spence_p, dawsn_p, zeta_p,
    expn_p))
