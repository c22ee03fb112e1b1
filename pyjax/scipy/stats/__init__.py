"""Public jax.scipy.stats: one module per distribution, and the sample statistics.
Re-exports only."""
from pyjax._src.scipy.stats_kde import gaussian_kde  # noqa: F401
from pyjax._src.scipy.stats_families import mode, rankdata, sem  # noqa: F401
from pyjax.scipy.stats import (  # noqa: F401
    bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm, geom,
    gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm,
    pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy,
)
