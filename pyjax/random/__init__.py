"""Public jax.random: splittable counter-based PRNG keys (threefry2x32) and samplers that
give the values JAX gives for the same key. Re-exports only; the code lives in
pyjax._src.random."""
from pyjax._src.lax.random_gamma import random_gamma_p  # noqa: F401
from pyjax._src.random.distributions import (  # noqa: F401
    bernoulli, categorical, cauchy, choice, double_sided_maxwell, exponential, geometric,
    gumbel, laplace, logistic, lognormal, maxwell, normal, pareto, permutation, rademacher,
    randint, rayleigh, triangular, truncated_normal, uniform, wald, weibull_min,
)
from pyjax._src.random.gamma_family import (  # noqa: F401
    ball, beta, binomial, chisquare, dirichlet, f, gamma, generalized_normal, loggamma,
    multinomial, multivariate_normal, orthogonal, poisson, t,
)
from pyjax._src.random.keys import (  # noqa: F401
    PRNGKey, bits, clone, fold_in, key, key_data, key_dtype, key_impl, split, wrap_key_data,
)
