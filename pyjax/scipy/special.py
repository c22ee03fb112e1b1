"""Public jax.scipy.special. Re-exports only; the code lives in pyjax._src.scipy.special
and pyjax._src.scipy.special_bessel_fresnel."""
from pyjax._src.scipy.special import (  # noqa: F401
    bernoulli, beta, betainc, betaln, boxcox, boxcox1p, comb, dawsn, digamma, entr, erf,
    erfc, erfcx, erfinv, exp1, expi, expit, expn, factorial, gamma, gammainc, gammaincc,
    gammaln, gammasgn, hyp1f1, hyp2f1, i0, i0e, i1, i1e, kl_div, log_ndtr, log_softmax,
    loggamma, logit, logsumexp, multigammaln, ndtr, ndtri, poch, polygamma, rel_entr,
    softmax, spence, xlog1py, xlogy, zeta,
)
from pyjax._src.scipy.special_bessel_fresnel import (  # noqa: F401
    bessel_jn, fresnel, owens_t, sici, sph_harm_y, wofz,
)
