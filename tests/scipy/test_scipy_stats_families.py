"""jax.scipy.stats beyond the first distributions (stats_families.py, stats_kde.py, and the
functions added to beta, cauchy, chi2 and poisson): values JAX 0.10.2 gives, recorded as
literals; edge values (outside the support, invalid parameters); jit, vmap and grad;
accuracy in the far tails against SciPy; the errors of bad input."""
import math

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as ss

import pyjax as jax
import pyjax.scipy.stats as st
from pyjax.scipy.stats import gaussian_kde, mode, rankdata, sem

nan, inf = np.nan, np.inf
F = np.float32
XG = F([-inf, -3., -1., -0.5, 0., 0.5, 1., 2., 4., inf, nan])
XP = F([-1., 0.5, 1.4, 1.5, 2., 3., 10., inf, nan])
XT = F([-inf, -2., -1., -0.5, 0., 0.5, 1., 2., 3., inf, nan])
XS = F([-inf, -2., -1., -0.5, 0., 0.5, 1., 2., 3., inf, nan])
XV = F([-7., -np.pi, -1., 0., 1., np.pi, 4., 7., inf, nan])
XW = F([-1., 0., 1., np.pi, 2 * np.pi, 7., inf, nan])
Q = F([-0.1, 0., 0.1, 0.5, 0.9, 1., 1.1, nan])
K = F([-1., 0., 1., 2., 2.5, 3., 5., 6., inf, nan])
BAD_SCALE = F([-1., 0., nan])
A = np.int32([[3, 1, 2, 3], [1, 1, 5, 5], [2, 1, 2, 0]])
AN = F([[3., nan, 2., 3.], [1., 1., 5., 5.], [2., 1., 2., 0.]])
R = F([0.5, -0., 0., 2., 2., -inf, inf, 0.5, 0.5])
D2 = F([[0.1, 0.5, -1.2, 2.0, 0.7], [1.0, -0.3, 0.4, 0.9, -1.1]])
W = F([1., 2., 3., 4., 5.])
PTS = F([[0., 1., 2.], [0.5, -0.5, 3.]])

# (expression, the call, JAX 0.10.2's result, its dtype)
DISTRIBUTIONS = [
    ('gumbel_r.logpdf(XG, 0.5, 1.5)',
     lambda: st.gumbel_r.logpdf(XG, 0.5, 1.5),
     [nan, -8.384391, -2.1237469, -1.6865325, -1.4677442, -1.4054651, -1.4553298, -1.7733445,
      -2.8357706, -inf, nan], 'float32'),
    ('gumbel_r.pdf(XG, 0.5, 1.5)',
     lambda: st.gumbel_r.pdf(XG, 0.5, 1.5),
     [nan, 0.00022840485, 0.11958273, 0.18516046, 0.23044473, 0.24525295, 0.23332341, 0.16976425,
      0.058673296, 0.0, nan], 'float32'),
    ('gumbel_r.cdf(XG, 0.5, 1.5)',
     lambda: st.gumbel_r.cdf(XG, 0.5, 1.5),
     [0.0, 3.322328e-05, 0.06598804, 0.14259681, 0.24768129, 0.36787945, 0.48844358, 0.6922006,
      0.90758145, 1.0, nan], 'float32'),
    ('gumbel_r.logcdf(XG, 0.5, 1.5)',
     lambda: st.gumbel_r.logcdf(XG, 0.5, 1.5),
     [-inf, -10.31226, -2.7182817, -1.9477341, -1.3956125, -1.0, -0.7165313, -0.36787945,
      -0.09697195, -0.0, nan], 'float32'),
    ('gumbel_r.sf(XG, 0.5, 1.5)',
     lambda: st.gumbel_r.sf(XG, 0.5, 1.5),
     [1.0, 0.9999668, 0.93401194, 0.85740316, 0.75231874, 0.63212055, 0.5115564, 0.3077994,
      0.09241855, 0.0, nan], 'float32'),
    ('gumbel_r.logsf(XG[:8], 0.5, 1.5)',
     lambda: st.gumbel_r.logsf(XG[:8], 0.5, 1.5),
     [-0.0, -3.3223834e-05, -0.068266034, -0.15384701, -0.28459522, -0.45867515, -0.67029744,
      -1.178307], 'float32'),
    ('gumbel_r.ppf(Q, 0.5, 1.5)',
     lambda: st.gumbel_r.ppf(Q, 0.5, 1.5),
     [nan, nan, -0.7510487, 1.0497694, 3.8755507, nan, nan, nan], 'float32'),
    ('gumbel_r.logpdf(F(1.), 0., BAD_SCALE)',
     lambda: st.gumbel_r.logpdf(F(1.), 0., BAD_SCALE),
     [nan, nan, nan], 'float32'),
    ('gumbel_r.cdf(F(1.), 0., BAD_SCALE)',
     lambda: st.gumbel_r.cdf(F(1.), 0., BAD_SCALE),
     [nan, nan, nan], 'float32'),
    ('gumbel_r.ppf(F(0.3), 0., BAD_SCALE)',
     lambda: st.gumbel_r.ppf(F(0.3), 0., BAD_SCALE),
     [0.18562678, 0.0, nan], 'float32'),
    ('gumbel_l.logpdf(XG, 0.5, 1.5)',
     lambda: st.gumbel_l.logpdf(XG, 0.5, 1.5),
     [-inf, -2.8357706, -1.7733445, -1.5855489, -1.4553298, -1.4054651, -1.4677442, -2.1237469,
      -8.384391, nan, nan], 'float32'),
    ('gumbel_l.pdf(XG, 0.5, 1.5)',
     lambda: st.gumbel_l.pdf(XG, 0.5, 1.5),
     [0.0, 0.058673292, 0.16976425, 0.20483533, 0.23332341, 0.24525295, 0.23044473, 0.11958273,
      0.00022840485, nan, nan], 'float32'),
    ('gumbel_l.cdf(XG, 0.5, 1.5)',
     lambda: st.gumbel_l.cdf(XG, 0.5, 1.5),
     [0.0, 0.09241854, 0.3077994, 0.40155292, 0.5115564, 0.63212055, 0.75231874, 0.93401194,
      0.9999668, 1.0, nan], 'float32'),
    ('gumbel_l.logcdf(XG[:8], 0.5, 1.5)',
     lambda: st.gumbel_l.logcdf(XG[:8], 0.5, 1.5),
     [-inf, -2.3814278, -1.178307, -0.912416, -0.67029744, -0.45867515, -0.2845952, -0.06826606],
      'float32'),
    ('gumbel_l.sf(XG, 0.5, 1.5)',
     lambda: st.gumbel_l.sf(XG, 0.5, 1.5),
     [1.0, 0.90758145, 0.6922006, 0.5984471, 0.48844358, 0.36787945, 0.24768129, 0.06598804,
      3.322328e-05, 0.0, nan], 'float32'),
    ('gumbel_l.logsf(XG, 0.5, 1.5)',
     lambda: st.gumbel_l.logsf(XG, 0.5, 1.5),
     [-0.0, -0.09697195, -0.36787945, -0.5134171, -0.7165313, -1.0, -1.3956125, -2.7182817,
      -10.31226, -inf, nan], 'float32'),
    ('gumbel_l.ppf(Q, 0.5, 1.5)',
     lambda: st.gumbel_l.ppf(Q, 0.5, 1.5),
     [nan, nan, -2.8755512, -0.0497694, 1.7510486, nan, nan, nan], 'float32'),
    ('gumbel_l.sf(F(1.), 0., BAD_SCALE)',
     lambda: st.gumbel_l.sf(F(1.), 0., BAD_SCALE),
     [nan, nan, nan], 'float32'),
    ('pareto.logpdf(XP, 2.0, 0.5, 1.0)',
     lambda: st.pareto.logpdf(XP, 2.0, 0.5, 1.0),
     [-inf, -inf, -inf, 0.6931472, -0.5232481, -2.055725, -6.060728, -inf, nan], 'float32'),
    ('pareto.pdf(XP, 2.0, 0.5, 1.0)',
     lambda: st.pareto.pdf(XP, 2.0, 0.5, 1.0),
     [0.0, 0.0, 0.0, 2.0, 0.59259266, 0.12799999, 0.0023327018, 0.0, nan], 'float32'),
    ('pareto.cdf(XP, 2.0, 0.5, 1.0)',
     lambda: st.pareto.cdf(XP, 2.0, 0.5, 1.0),
     [0.0, 0.0, 0.0, 0.0, 0.5555556, 0.84000003, 0.9889197, 1.0, nan], 'float32'),
    ('pareto.logcdf(XP, 2.0, 0.5, 1.0)',
     lambda: st.pareto.logcdf(XP, 2.0, 0.5, 1.0),
     [-inf, -inf, -inf, -inf, -0.5877866, -0.17435339, -0.011142177, -0.0, nan], 'float32'),
    ('pareto.sf(XP, 2.0, 0.5, 1.0)',
     lambda: st.pareto.sf(XP, 2.0, 0.5, 1.0),
     [1.0, 1.0, 1.0, 1.0, 0.44444445, 0.16, 0.011080334, 0.0, nan], 'float32'),
    ('pareto.logsf(XP, 2.0, 0.5, 1.0)',
     lambda: st.pareto.logsf(XP, 2.0, 0.5, 1.0),
     [0.0, 0.0, 0.0, -0.0, -0.8109302, -1.8325815, -4.5025835, -inf, nan], 'float32'),
    ('pareto.ppf(Q, 2.0, 0.5, 1.0)',
     lambda: st.pareto.ppf(Q, 2.0, 0.5, 1.0),
     [nan, 1.5, 1.5540925, 1.9142135, 3.6622772, inf, nan, nan], 'float32'),
    ('pareto.logpdf(F(2.), F([-1., 0., 0.5, inf, nan]))',
     lambda: st.pareto.logpdf(F(2.), F([-1., 0., 0.5, inf, nan])),
     [nan, -inf, -1.732868, nan, nan], 'float32'),
    ('pareto.cdf(F(2.), F([-1., 0., 0.5, inf, nan]))',
     lambda: st.pareto.cdf(F(2.), F([-1., 0., 0.5, inf, nan])),
     [-1.0, 0.0, 0.29289323, 1.0, nan], 'float32'),
    ('pareto.logpdf(F(2.), 2., 0., BAD_SCALE)',
     lambda: st.pareto.logpdf(F(2.), 2., 0., BAD_SCALE),
     [nan, nan, nan], 'float32'),
    ('pareto.cdf(F(2.), 2., 0., BAD_SCALE)',
     lambda: st.pareto.cdf(F(2.), 2., 0., BAD_SCALE),
     [0.75, 1.0, nan], 'float32'),
    ('truncnorm.logpdf(XT, -1., 2.)',
     lambda: st.truncnorm.logpdf(XT, -1., 2.),
     [-inf, -inf, -1.2187722, -0.8437722, -0.7187722, -0.8437722, -1.2187722, -2.7187724, -inf,
      -inf, nan], 'float32'),
    ('truncnorm.pdf(XT, -1., 2., 0.5, 2.)',
     lambda: st.truncnorm.pdf(XT, -1., 2., 0.5, 2.),
     [0.0, 0.0, 0.18393564, 0.21504256, 0.23617804, 0.24367514, 0.23617804, 0.18393564, 0.11156258,
      0.0, nan], 'float32'),
    ('truncnorm.cdf(XT, -1., 2.)',
     lambda: st.truncnorm.cdf(XT, -1., 2.),
     [0.0, 0.0, 0.0, 0.18309706, 0.4169887, 0.6508804, 0.8339775, 1.0, 1.0, 1.0, 1.0], 'float32'),
    ('truncnorm.logcdf(XT, -1., 2., 0.5, 2.)',
     lambda: st.truncnorm.logcdf(XT, -1., 2., 0.5, 2.),
     [-inf, -inf, -2.4884918, -1.6977389, -1.2160167, -0.87469614, -0.62069815, -0.28642637,
      -0.10677339, 0.0, 0.0], 'float32'),
    ('truncnorm.sf(XT, -1., 2.)',
     lambda: st.truncnorm.sf(XT, -1., 2.),
     [1.0, 1.0, 1.0, 0.81690294, 0.58301127, 0.3491196, 0.16602251, 0.0, 0.0, 0.0, 1.0], 'float32'),
    ('truncnorm.logsf(XT, -1., 2., 0.5, 2.)',
     lambda: st.truncnorm.logsf(XT, -1., 2., 0.5, 2.),
     [0.0, 0.0, -0.0866861, -0.202235, -0.35155725, -0.53954875, -0.7712579, -1.390071, -2.289958,
      -inf, 0.0], 'float32'),
    ('truncnorm.logpdf(F([-1., 0.5, 3.]), -inf, inf)',
     lambda: st.truncnorm.logpdf(F([-1., 0.5, 3.]), -inf, inf),
     [-1.4189385, -1.0439385, -5.4189386], 'float32'),
    ('truncnorm.cdf(F([-1., 0.5, 3.]), 0., inf)',
     lambda: st.truncnorm.cdf(F([-1., 0.5, 3.]), 0., inf),
     [0.0, 0.3829249, 0.9973002], 'float32'),
    ('truncnorm.logsf(F([-1., 0.5, 3.]), -inf, 1.)',
     lambda: st.truncnorm.logsf(F([-1., 0.5, 3.]), -inf, 1.),
     [-0.20896138, -1.7251514, -inf], 'float32'),
    ('truncnorm.logcdf(F([8.1, 9., 10., 10.9]), 8., 11.)',
     lambda: st.truncnorm.logcdf(F([8.1, 9., 10., 10.9]), 8., 11.),
     [-0.582901, -0.00018143356, -1.2248328e-08, -6.192333e-13], 'float32'),
    ('truncnorm.logsf(F([-10.9, -10., -9., -8.1]), -11., -8.)',
     lambda: st.truncnorm.logsf(F([-10.9, -10., -9., -8.1]), -11., -8.),
     [-6.192333e-13, -1.2248328e-08, -0.00018143356, -0.582901], 'float32'),
    ('truncnorm.logpdf(F(0.5), F([1., 1., nan]), F([0., 1., 1.]))',
     lambda: st.truncnorm.logpdf(F(0.5), F([1., 1., nan]), F([0., 1., 1.])),
     [nan, nan, nan], 'float32'),
    ('truncnorm.cdf(F(0.5), F([1., 1.]), F([0., 1.]))',
     lambda: st.truncnorm.cdf(F(0.5), F([1., 1.]), F([0., 1.])),
     [nan, nan], 'float32'),
    ('truncnorm.logpdf(F(0.5), -1., 2., 0., F([-1., 0., 2.]))',
     lambda: st.truncnorm.logpdf(F(0.5), -1., 2., 0., F([-1., 0., 2.])),
     [-0.8437722, -inf, -1.4431694], 'float32'),
    ('truncnorm.cdf(F(0.5), -1., 2., 0., F([-1., 0., 2.]))',
     lambda: st.truncnorm.cdf(F(0.5), -1., 2., 0., F([-1., 0., 2.])),
     [0.18309706, 1.0, 0.537569], 'float32'),
    ('gennorm.logpdf(XS, 1.5)',
     lambda: st.gennorm.logpdf(XS, 1.5),
     [-inf, -3.4192603, -1.5908332, -0.9443866, -0.5908332, -0.9443866, -1.5908332, -3.4192603,
      -5.7869854, -inf, nan], 'float32'),
    ('gennorm.pdf(XS, 1.)',
     lambda: st.gennorm.pdf(XS, 1.),
     [0.0, 0.06766761, 0.18393964, 0.30326518, 0.49999976, 0.30326518, 0.18393964, 0.06766761,
      0.024893522, 0.0, nan], 'float32'),
    ('gennorm.cdf(XS, 1.5)',
     lambda: st.gennorm.cdf(XS, 1.5),
     [0.0, 0.014119625, 0.11240873, 0.25825074, 0.5, 0.7417493, 0.88759124, 0.9858804, 0.9988813,
      1.0, nan], 'float32'),
    ('gennorm.cdf(XS, 8.)',
     lambda: st.gennorm.cdf(XS, 8.),
     [0.0, 0.0, 0.015409797, 0.23464978, 0.5, 0.7653502, 0.9845902, 1.0, 1.0, 1.0, nan], 'float32'),
    ('gennorm.logpdf(F(0.5), F([-1., 0., 0.1, 2., inf, nan]))',
     lambda: st.gennorm.logpdf(F(0.5), F([-1., 0., 0.1, 2., inf, nan])),
     [nan, -inf, -16.730595, -0.8223648, nan, nan], 'float32'),
    ('gennorm.cdf(F(0.5), F([-1., 0., 0.1, 2., inf, nan]))',
     lambda: st.gennorm.cdf(F(0.5), F([-1., 0., 0.1, 2., inf, nan])),
     [nan, nan, 0.5, 0.76025, nan, nan], 'float32'),
    ('vonmises.logpdf(XV, 2.)',
     lambda: st.vonmises.logpdf(XV, 2.),
     [-1.1540661, -4.6618705, -1.581266, -0.6618706, -1.581266, -4.6618705, -3.9691577, -1.1540661,
      nan, nan], 'float32'),
    ('vonmises.pdf(XV, 0.5)',
     lambda: st.vonmises.pdf(XV, 0.5),
     [0.21817109, 0.090769954, 0.19607154, 0.24673834, 0.19607154, 0.090769954, 0.10793255,
      0.21817109, nan, nan], 'float32'),
    ('vonmises.logpdf(F(0.5), F([-1., 0., 1e-3, 50., 1e4, inf, nan]))',
     lambda: st.vonmises.logpdf(F(0.5), F([-1., 0., 1e-3, 50., 1e4, inf, nan])),
     [nan, nan, -1.8369998, -5.086325, -1220.4883, nan, nan], 'float32'),
    ('wrapcauchy.logpdf(XW, 0.3)',
     lambda: st.wrapcauchy.logpdf(XW, 0.3),
     [-inf, -1.218838, -1.6653779, -2.4569163, -1.218838, -inf, -inf, -inf], 'float32'),
    ('wrapcauchy.pdf(XW, 0.9)',
     lambda: st.wrapcauchy.pdf(XW, 0.9),
     [0.0, 3.0239482, 0.03610871, 0.008376579, 3.0239482, 0.0, 0.0, 0.0], 'float32'),
    ('wrapcauchy.logpdf(F(0.5), F([-0.1, 0., 1e-3, 0.5, 1., 1.5, nan]))',
     lambda: st.wrapcauchy.logpdf(F(0.5), F([-0.1, 0., 1e-3, 0.5, 1., 1.5, nan])),
     [nan, nan, -1.8361224, -1.1378193, nan, nan, nan], 'float32'),
    ('betabinom.logpmf(K, 5, 2., 3.)',
     lambda: st.betabinom.logpmf(K, 5, 2., 3.),
     [-inf, -1.7917573, -1.4350846, -1.4350841, -1.4350841, -1.6582277, -3.044523, -inf, -inf, nan],
      'float32'),
    ('betabinom.pmf(K, 5, 2., 3., 1)',
     lambda: st.betabinom.pmf(K, 5, 2., 3., 1),
     [0.0, 0.0, 0.16666701, 0.23809522, 0.23809522, 0.23809534, 0.11904767, 0.047619022, 0.0, nan],
      'float32'),
    ('betabinom.logpmf(K, 20, 0.5, 0.7)',
     lambda: st.betabinom.logpmf(K, 20, 0.5, 0.7),
     [-inf, -1.8552705, -2.533304, -2.80507, -2.80507, -2.9705868, -3.1727438, -3.2395506, -inf,
      nan], 'float32'),
    ('betabinom.logpmf(F(1.), F([-1., 0., 2.5, 5., nan]), 2., 3.)',
     lambda: st.betabinom.logpmf(F(1.), F([-1., 0., 2.5, 5., nan]), 2., 3.),
     [nan, -inf, -0.9862802, -1.4350846, nan], 'float32'),
    ('betabinom.logpmf(F(1.), 5., F([-1., 0., 0.5, inf, nan]), 3.)',
     lambda: st.betabinom.logpmf(F(1.), 5., F([-1., 0., 0.5, inf, nan]), 3.),
     [nan, nan, -1.545897, nan, nan], 'float32'),
    ('betabinom.logpmf(F(1.), 5., 2., F([-1., 0., 0.5, inf, nan]))',
     lambda: st.betabinom.logpmf(F(1.), 5., 2., F([-1., 0., 0.5, inf, nan])),
     [nan, nan, -3.065723, nan, nan], 'float32'),
    ('nbinom.logpmf(K, 5, 0.3)',
     lambda: st.nbinom.logpmf(K, 5, 0.3),
     [-inf, -6.0198646, -4.7671013, -4.0251637, -3.7562144, -3.5345416, -2.9669561, -2.8128057, nan,
      nan], 'float32'),
    ('nbinom.pmf(K, 2.5, 0.7, 1)',
     lambda: st.nbinom.pmf(K, 2.5, 0.7, 1),
     [0.0, 0.0, 0.4099632, 0.30747256, 0.22872102, 0.1614233, 0.029964186, 0.011686023, nan, nan],
      'float32'),
    ('nbinom.logpmf(F([0., 1., 3.]), F([-1., 0., 0.5, 2.5, nan])[:, None], 0.3)',
     lambda: st.nbinom.logpmf(F([0., 1., 3.]), F([-1., 0., 0.5, 2.5, nan])[:, None], 0.3),
     [[nan, nan, -inf], [nan, -inf, -inf], [-0.6019869, -1.651808, -2.8351626], [-3.0099325,
      -2.4503162, -2.1985846], [nan, nan, nan]], 'float32'),
    ('nbinom.logpmf(F([1., 3.]), 5., F([-0.1, 0., 0.5, 1., 1.1, nan])[:, None])',
     lambda: st.nbinom.logpmf(F([1., 3.]), 5., F([-0.1, 0., 0.5, 1., 1.1, nan])[:, None]),
     [[nan, nan], [-inf, -inf], [-2.5494452, -1.98983], [-inf, -inf], [nan, nan], [nan, nan]],
      'float32'),
    ('multinomial.logpmf(np.int32([1, 2, 3]), 6, F([0.2, 0.3, 0.5]))',
     lambda: st.multinomial.logpmf(np.int32([1, 2, 3]), 6, F([0.2, 0.3, 0.5])),
     -2.002481, 'float32'),
    ('multinomial.pmf(np.int32([1, 2, 3]), 6, F([0.2, 0.3, 0.5]))',
     lambda: st.multinomial.pmf(np.int32([1, 2, 3]), 6, F([0.2, 0.3, 0.5])),
     0.13499993, 'float32'),
    ('multinomial.logpmf(np.int32([1, 2, 3]), 7, F([0.2, 0.3, 0.5]))',
     lambda: st.multinomial.logpmf(np.int32([1, 2, 3]), 7, F([0.2, 0.3, 0.5])),
     -inf, 'float32'),
    ('multinomial.logpmf(np.int32([1, 2, 3]), 6, F([0.4, 0.6, 1.0]))',
     lambda: st.multinomial.logpmf(np.int32([1, 2, 3]), 6, F([0.4, 0.6, 1.0])),
     2.156403, 'float32'),
    ('multinomial.logpmf(np.int32([0, 2, 4]), 6, F([0., 0.5, 0.5]))',
     lambda: st.multinomial.logpmf(np.int32([0, 2, 4]), 6, F([0., 0.5, 0.5])),
     -1.4508328, 'float32'),
    ('multinomial.logpmf(np.int32([1, 2, 3]), 6, F([0., 0.5, 0.5]))',
     lambda: st.multinomial.logpmf(np.int32([1, 2, 3]), 6, F([0., 0.5, 0.5])),
     -inf, 'float32'),
    ('multinomial.logpmf(np.int32([1, 2, 3]), 6, F([-0.2, 0.7, 0.5]))',
     lambda: st.multinomial.logpmf(np.int32([1, 2, 3]), 6, F([-0.2, 0.7, 0.5])),
     nan, 'float32'),
    ('multinomial.logpmf(np.int32([1, 2, 3]), 6, F([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]))',
     lambda: st.multinomial.logpmf(np.int32([1, 2, 3]), 6, F([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])),
     [-2.002481, -3.482841], 'float32'),
    ('multinomial.logpmf(np.array([True, False]), 1, F([0.5, 0.5]))',
     lambda: st.multinomial.logpmf(np.array([True, False]), 1, F([0.5, 0.5])),
     -0.69314766, 'float32'),
    ('multinomial.logpmf(np.uint8([1, 2]), 3, np.float64([0.5, 0.5]))',
     lambda: st.multinomial.logpmf(np.uint8([1, 2]), 3, np.float64([0.5, 0.5])),
     -0.98082864, 'float32'),
    ('poisson.entropy(F([-1., 0., 0.5, 1., 2.5, 10., 19.9, 20., 30., 100., 1e5, inf, nan]))',
     lambda: st.poisson.entropy(F([-1., 0., 0.5, 1., 2.5, 10., 19.9, 20., 30., 100., 1e5, inf,
      nan])),
     [nan, 0.0, 0.9276376, 1.3048419, 1.830726, 2.561407, 2.9099956, 2.912522, 3.1167073, 3.7206903,
      7.1754003, inf, nan], 'float32'),
    ('poisson.entropy(F(2.5), 3)',
     lambda: st.poisson.entropy(F(2.5), 3),
     1.830726, 'float32'),
    ('poisson.entropy(3)',
     lambda: st.poisson.entropy(3),
     1.9314697, 'float32'),
    ('beta.logcdf(F([-0.5, 0., 0.3, 0.9, 1., 1.5, nan]), 2., 3.)',
     lambda: st.beta.logcdf(F([-0.5, 0., 0.3, 0.9, 1., 1.5, nan]), 2., 3.),
     [-inf, -inf, -1.0546908, -0.00370688, 0.0, 0.0, nan], 'float32'),
    ('beta.logsf(F([-0.5, 0., 0.3, 0.9, 0.999, 1., 1.5, nan]), 2., 3.)',
     lambda: st.beta.logsf(F([-0.5, 0., 0.3, 0.9, 0.999, 1., 1.5, nan]), 2., 3.),
     [0.0, 0.0, -0.4281711, -5.5994215, -19.33776, -inf, -inf, nan], 'float32'),
    ('beta.sf(F([0.2, 0.9, 0.999]), 2., 3.)',
     lambda: st.beta.sf(F([0.2, 0.9, 0.999]), 2., 3.),
     [0.8191999, 0.0037000037, 3.996847e-09], 'float32'),
    ('chi2.logcdf(F([-0.5, 0., 0.3, 1., 50., inf, nan]), 3.)',
     lambda: st.chi2.logcdf(F([-0.5, 0., 0.3, 1., 50., inf, nan]), 3.),
     [-inf, -inf, -3.2195885, -1.6157176, 0.0, 0.0, nan], 'float32'),
    ('chi2.logsf(F([-0.5, 0., 0.3, 1., 50., inf, nan]), 3., 1., 2.)',
     lambda: st.chi2.logsf(F([-0.5, 0., 0.3, 1., 50., inf, nan]), 3., 1., 2.),
     [0.0, 0.0, 0.0, 0.0, -10.837888, -inf, nan], 'float32'),
    ('cauchy.sf(F([-inf, -100., -1., 0., 1., 100., inf, nan]), 0.5, 2.)',
     lambda: st.cauchy.sf(F([-inf, -100., -1., 0., 1., 100., inf, nan]), 0.5, 2.),
     [1.0, 0.9936663, 0.7048328, 0.57797915, 0.42202085, 0.0063973367, 0.0, nan], 'float32'),
    ('cauchy.logcdf(F([-inf, -100., -1., 0., 1., 100., inf, nan]), 0.5, 2.)',
     lambda: st.cauchy.logcdf(F([-inf, -100., -1., 0., 1., 100., inf, nan]), 0.5, 2.),
     [-inf, -5.061874, -1.2202133, -0.8627006, -0.5482175, -0.006417917, 0.0, nan], 'float32'),
    ('cauchy.logsf(F([-inf, -100., -1., 0., 1., 100., inf, nan]), 0.5, 2.)',
     lambda: st.cauchy.logsf(F([-inf, -100., -1., 0., 1., 100., inf, nan]), 0.5, 2.),
     [0.0, -0.006353852, -0.3497947, -0.5482175, -0.8627006, -5.0518737, -inf, nan], 'float32'),
    ('cauchy.isf(F([0.1, 0.25, 0.5, 0.9, nan]), 0.5, 2.)',
     lambda: st.cauchy.isf(F([0.1, 0.25, 0.5, 0.9, nan]), 0.5, 2.),
     [6.655368, 2.5, 0.5, -5.6553655, nan], 'float32'),
]


def _check(got, expected, dtype, rtol=1e-5):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert ",".join(str(g.dtype) for g in got) == dtype
    for g, e in zip(got, expected):
        e = np.asarray(e, np.float64)
        assert np.shape(g) == e.shape
        np.testing.assert_allclose(np.asarray(g, np.float64), e, rtol=rtol, atol=1e-7,
                                   equal_nan=True)


@pytest.mark.parametrize("expr,call,expected,dtype", DISTRIBUTIONS,
                         ids=[c[0] for c in DISTRIBUTIONS])
def test_distribution_values_match_jax(expr, call, expected, dtype):
    _check(call(), expected, dtype)


# sample statistics, gaussian_kde (resample included: JAX's key use), and derivatives
STATISTICS = [
    ('rankdata(A)',
     lambda: rankdata(A),
     [9.5, 3.5, 7.0, 9.5, 3.5, 3.5, 11.5, 11.5, 7.0, 3.5, 7.0, 1.0], 'float32'),
    ("rankdata(A, 'min', axis=0)",
     lambda: rankdata(A, 'min', axis=0),
     [[3.0, 1.0, 1.0, 2.0], [1.0, 1.0, 3.0, 3.0], [2.0, 1.0, 1.0, 1.0]], 'float32'),
    ("rankdata(A, 'max', axis=1)",
     lambda: rankdata(A, 'max', axis=1),
     [[4.0, 1.0, 2.0, 4.0], [2.0, 2.0, 4.0, 4.0], [4.0, 2.0, 4.0, 1.0]], 'float32'),
    ("rankdata(A, 'dense', axis=-1)",
     lambda: rankdata(A, 'dense', axis=-1),
     [[3.0, 1.0, 2.0, 3.0], [1.0, 1.0, 2.0, 2.0], [3.0, 2.0, 3.0, 1.0]], 'float32'),
    ("rankdata(A, 'ordinal', axis=0)",
     lambda: rankdata(A, 'ordinal', axis=0),
     [[3.0, 1.0, 1.0, 2.0], [1.0, 2.0, 3.0, 3.0], [2.0, 3.0, 2.0, 1.0]], 'float32'),
    ('rankdata(AN, axis=1)',
     lambda: rankdata(AN, axis=1),
     [[nan, nan, nan, nan], [1.5, 1.5, 3.5, 3.5], [3.5, 2.0, 3.5, 1.0]], 'float32'),
    ("rankdata(AN, 'dense')",
     lambda: rankdata(AN, 'dense'),
     [nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan], 'float32'),
    ("rankdata(R, 'average')",
     lambda: rankdata(R, 'average'),
     [5.0, 2.5, 2.5, 7.5, 7.5, 1.0, 9.0, 5.0, 5.0], 'float32'),
    ("rankdata(R, 'min')",
     lambda: rankdata(R, 'min'),
     [4.0, 2.0, 2.0, 7.0, 7.0, 1.0, 9.0, 4.0, 4.0], 'float32'),
    ("rankdata(R, 'max')",
     lambda: rankdata(R, 'max'),
     [6.0, 3.0, 3.0, 8.0, 8.0, 1.0, 9.0, 6.0, 6.0], 'float32'),
    ("rankdata(R, 'dense')",
     lambda: rankdata(R, 'dense'),
     [3.0, 2.0, 2.0, 4.0, 4.0, 1.0, 5.0, 3.0, 3.0], 'float32'),
    ("rankdata(R, 'ordinal')",
     lambda: rankdata(R, 'ordinal'),
     [4.0, 2.0, 3.0, 7.0, 8.0, 1.0, 9.0, 5.0, 6.0], 'float32'),
    ('rankdata(np.array([True, False, True]))',
     lambda: rankdata(np.array([True, False, True])),
     [2.5, 1.0, 2.5], 'float32'),
    ('rankdata(F(3.))',
     lambda: rankdata(F(3.)),
     [1.0], 'float32'),
    ('mode(A)',
     lambda: mode(A),
     ([1, 1, 2, 0], [1, 3, 2, 1]), 'int32,int32'),
    ('mode(A, axis=1, keepdims=True)',
     lambda: mode(A, axis=1, keepdims=True),
     ([[3], [1], [2]], [[2], [2], [2]]), 'int32,int32'),
    ('mode(A, axis=None)',
     lambda: mode(A, axis=None),
     (1, 4), 'int32,int32'),
    ('mode(A, axis=None, keepdims=True)',
     lambda: mode(A, axis=None, keepdims=True),
     ([[1]], [[4]]), 'int32,int32'),
    ('mode(AN, axis=1)',
     lambda: mode(AN, axis=1),
     ([3.0, 1.0, 2.0], [2, 2, 2]), 'float32,int32'),
    ('mode(F([nan, 1., nan, 1., 2.]))',
     lambda: mode(F([nan, 1., nan, 1., 2.])),
     (1.0, 2), 'float32,int32'),
    ('mode(F([nan, nan, 1.]))',
     lambda: mode(F([nan, nan, 1.])),
     (nan, 2), 'float32,int32'),
    ('mode(np.array([2, 2, 1, 1, 0]))',
     lambda: mode(np.array([2, 2, 1, 1, 0])),
     (1, 2), 'int32,int32'),
    ('mode(np.array([True, False, True]))',
     lambda: mode(np.array([True, False, True])),
     (True, 2), 'bool,int32'),
    ('mode(np.zeros((0, 3), np.float32))',
     lambda: mode(np.zeros((0, 3), np.float32)),
     ([nan, nan, nan], [0.0, 0.0, 0.0]), 'float32,float32'),
    ('mode(np.zeros((3, 0), np.float32))',
     lambda: mode(np.zeros((3, 0), np.float32)),
     ([], []), 'float32,int32'),
    ('mode(F(3.))',
     lambda: mode(F(3.)),
     (3.0, 1), 'float32,int32'),
    ('sem(A)',
     lambda: sem(A),
     [0.57735026, 0.0, 0.99999994, 1.4529663], 'float32'),
    ('sem(A, axis=1, keepdims=True)',
     lambda: sem(A, axis=1, keepdims=True),
     [[0.47871357], [1.1547005], [0.47871357]], 'float32'),
    ('sem(A, axis=None)',
     lambda: sem(A, axis=None),
     0.4578165, 'float32'),
    ('sem(A, ddof=0)',
     lambda: sem(A, ddof=0),
     [0.47140452, 0.0, 0.81649655, 1.1863421], 'float32'),
    ('sem(A, ddof=3)',
     lambda: sem(A, ddof=3),
     [nan, nan, nan, nan], 'float32'),
    ('sem(AN, axis=1)',
     lambda: sem(AN, axis=1),
     [nan, 1.1547005, 0.47871357], 'float32'),
    ("sem(AN, axis=1, nan_policy='omit')",
     lambda: sem(AN, axis=1, nan_policy='omit'),
     [0.3333333, 1.1547005, 0.47871357], 'float32'),
    ("sem(AN, axis=None, nan_policy='omit')",
     lambda: sem(AN, axis=None, nan_policy='omit'),
     0.48786938, 'float32'),
    ('sem(np.ones((3,), np.float16))',
     lambda: sem(np.ones((3,), np.float16)),
     0.0, 'float16'),
    ('gaussian_kde(D2).covariance',
     lambda: gaussian_kde(D2).covariance,
     [[0.77603436, 0.017836494], [0.017836502, 0.4543924]], 'float32'),
    ('gaussian_kde(D2).inv_cov',
     lambda: gaussian_kde(D2).inv_cov,
     [[1.2897664, -0.05062785], [-0.050627876, 2.2027285]], 'float32'),
    ('gaussian_kde(D2).neff',
     lambda: gaussian_kde(D2).neff,
     4.9999995, 'float32'),
    ('gaussian_kde(D2).evaluate(PTS)',
     lambda: gaussian_kde(D2).evaluate(PTS),
     [0.08950064, 0.08466433, 0.0004944281], 'float32'),
    ('gaussian_kde(D2).logpdf(PTS)',
     lambda: gaussian_kde(D2).logpdf(PTS),
     [-2.4135096, -2.469061, -7.612109], 'float32'),
    ('gaussian_kde(D2).pdf(F([0.3, -0.2]))',
     lambda: gaussian_kde(D2).pdf(F([0.3, -0.2])),
     [0.09216151], 'float32'),
    ('gaussian_kde(D2, weights=W).logpdf(PTS)',
     lambda: gaussian_kde(D2, weights=W).logpdf(PTS),
     [-2.8690977, -2.4760995, -6.5052133], 'float32'),
    ('gaussian_kde(D2, weights=W).neff',
     lambda: gaussian_kde(D2, weights=W).neff,
     4.0909085, 'float32'),
    ("gaussian_kde(D2, bw_method='silverman').covariance",
     lambda: gaussian_kde(D2, bw_method='silverman').covariance,
     [[0.77603436, 0.017836494], [0.017836502, 0.4543924]], 'float32'),
    ('gaussian_kde(D2[0], bw_method=0.3).covariance',
     lambda: gaussian_kde(D2[0], bw_method=0.3).covariance,
     [[0.119430006]], 'float32'),
    ('gaussian_kde(D2[0], bw_method=lambda k: 0.7).covariance',
     lambda: gaussian_kde(D2[0], bw_method=lambda k: 0.7).covariance,
     [[0.65023005]], 'float32'),
    ('gaussian_kde(D2).logpdf(F([[100.], [100.]]))',
     lambda: gaussian_kde(D2).logpdf(F([[100.], [100.]])),
     [-16520.984], 'float32'),
    ('gaussian_kde(D2).integrate_gaussian(F([0.3, -0.2]), F([[1.0, 0.2], [0.2, 0.5]]))',
     lambda: gaussian_kde(D2).integrate_gaussian(F([0.3, -0.2]), F([[1.0, 0.2], [0.2, 0.5]])),
     0.06644672, 'float32'),
    ('gaussian_kde(D2).integrate_kde(gaussian_kde(D2 * 2 + 1, weights=W))',
     lambda: gaussian_kde(D2).integrate_kde(gaussian_kde(D2 * 2 + 1, weights=W)),
     0.014775231, 'float32'),
    ('gaussian_kde(D2 * 2 + 1, weights=W).integrate_kde(gaussian_kde(D2))',
     lambda: gaussian_kde(D2 * 2 + 1, weights=W).integrate_kde(gaussian_kde(D2)),
     0.014775231, 'float32'),
    ('gaussian_kde(D2[0]).integrate_box_1d(-1., 1.)',
     lambda: gaussian_kde(D2[0]).integrate_box_1d(-1., 1.),
     0.5181484, 'float32'),
    ('gaussian_kde(D2[0], weights=W).integrate_box_1d(-inf, 0.5)',
     lambda: gaussian_kde(D2[0], weights=W).integrate_box_1d(-inf, 0.5),
     0.4575535, 'float32'),
    ('gaussian_kde(D2[0]).integrate_gaussian(0.5, 2.)',
     lambda: gaussian_kde(D2[0]).integrate_gaussian(0.5, 2.),
     0.20441957, 'float32'),
    ('gaussian_kde(D2[0]).evaluate(3)',
     lambda: gaussian_kde(D2[0]).evaluate(3),
     [0.050102662], 'float32'),
    ('gaussian_kde(D2).resample(jax.random.key(0), (3,))',
     lambda: gaussian_kde(D2).resample(jax.random.key(0), (3,)),
     [[-2.051628, 0.88106966, 1.3287556], [-0.42105865, -1.3340541, 0.0904848]], 'float32'),
    ('gaussian_kde(D2[0], weights=W).resample(jax.random.key(1), (2, 2))',
     lambda: gaussian_kde(D2[0], weights=W).resample(jax.random.key(1), (2, 2)),
     [[[-1.4311471, -0.023339106], [0.616436, -0.18234892]]], 'float32'),
    ('gaussian_kde(D2[0]).resample(jax.random.PRNGKey(2))',
     lambda: gaussian_kde(D2[0]).resample(jax.random.PRNGKey(2)),
     [2.6926625], 'float32'),
    ('jax.grad(lambda x: st.gumbel_r.logpdf(x, 0.5, 1.5))(F(1.))',
     lambda: jax.grad(lambda x: st.gumbel_r.logpdf(x, 0.5, 1.5))(F(1.)),
     -0.18897915, 'float32'),
    ('jax.grad(lambda s: st.gumbel_l.logcdf(1., 0.5, s))(F(1.5))',
     lambda: jax.grad(lambda s: st.gumbel_l.logcdf(1., 0.5, s))(F(1.5)),
     -0.1021042, 'float32'),
    ('jax.grad(lambda b: st.pareto.logpdf(3., b, 0.5, 1.))(F(2.))',
     lambda: jax.grad(lambda b: st.pareto.logpdf(3., b, 0.5, 1.))(F(2.)),
     -0.41629076, 'float32'),
    ('jax.grad(lambda x: st.pareto.logcdf(x, 2., 0.5, 1.))(F(3.))',
     lambda: jax.grad(lambda x: st.pareto.logcdf(x, 2., 0.5, 1.))(F(3.)),
     0.15238096, 'float32'),
    ('jax.grad(lambda a: st.truncnorm.logpdf(0.5, a, 2.))(F(-1.))',
     lambda: jax.grad(lambda a: st.truncnorm.logpdf(0.5, a, 2.))(F(-1.)),
     0.29559287, 'float32'),
    ('jax.grad(lambda b: st.truncnorm.logpdf(0.5, -1., b))(F(2.))',
     lambda: jax.grad(lambda b: st.truncnorm.logpdf(0.5, -1., b))(F(2.)),
     -0.06595568, 'float32'),
    ('jax.grad(lambda x: st.truncnorm.logcdf(x, -1., 2.))(F(0.5))',
     lambda: jax.grad(lambda x: st.truncnorm.logcdf(x, -1., 2.))(F(0.5)),
     0.66077435, 'float32'),
    ('jax.grad(lambda b: st.gennorm.logpdf(0.7, b))(F(1.5))',
     lambda: jax.grad(lambda b: st.gennorm.logpdf(0.7, b))(F(1.5)),
     0.28967577, 'float32'),
    ('jax.grad(lambda x: st.gennorm.cdf(x, 1.5))(F(0.7))',
     lambda: jax.grad(lambda x: st.gennorm.cdf(x, 1.5))(F(0.7)),
     0.30835757, 'float32'),
    ('jax.grad(lambda k: st.vonmises.logpdf(0.5, k))(F(2.))',
     lambda: jax.grad(lambda k: st.vonmises.logpdf(0.5, k))(F(2.)),
     0.17980787, 'float32'),
    ('jax.grad(lambda c: st.wrapcauchy.logpdf(0.5, c))(F(0.3))',
     lambda: jax.grad(lambda c: st.wrapcauchy.logpdf(0.5, c))(F(0.3)),
     1.3908217, 'float32'),
    ('jax.grad(lambda a: st.betabinom.logpmf(2., 5., a, 3.))(F(2.))',
     lambda: jax.grad(lambda a: st.betabinom.logpmf(2., 5., a, 3.))(F(2.)),
     0.0876987, 'float32'),
    ('jax.grad(lambda p: st.nbinom.logpmf(3., 5., p))(F(0.3))',
     lambda: jax.grad(lambda p: st.nbinom.logpmf(3., 5., p))(F(0.3)),
     12.380952, 'float32'),
    ('jax.grad(lambda n: st.nbinom.logpmf(3., n, 0.3))(F(5.))',
     lambda: jax.grad(lambda n: st.nbinom.logpmf(3., n, 0.3))(F(5.)),
     -0.69444966, 'float32'),
    ('jax.grad(lambda p: st.multinomial.logpmf(np.int32([1, 2, 3]), 6, p))(F([0.2, 0.3, 0.5]))',
     lambda: jax.grad(lambda p: st.multinomial.logpmf(np.int32([1, 2, 3]), 6, p))(F([0.2, 0.3,
      0.5])),
     [5.0, 6.6666665, 6.0], 'float32'),
    ('jax.grad(lambda m: st.poisson.entropy(m))(F(2.5))',
     lambda: jax.grad(lambda m: st.poisson.entropy(m))(F(2.5)),
     0.22313333, 'float32'),
    ('jax.grad(lambda x: st.sem(x))(F([1., 2., 4.]))',
     lambda: jax.grad(lambda x: st.sem(x))(F([1., 2., 4.])),
     [-0.2519763, -0.06299407, 0.3149704], 'float32'),
    ('jax.grad(lambda x: st.gaussian_kde(D2).logpdf(x)[0])(F([0.3, -0.2]))',
     lambda: jax.grad(lambda x: st.gaussian_kde(D2).logpdf(x)[0])(F([0.3, -0.2])),
     [0.11309378, -0.06404637], 'float32'),
    ('jax.grad(lambda d: st.gaussian_kde(d).logpdf(F([0.3, -0.2]))[0])(D2)',
     lambda: jax.grad(lambda d: st.gaussian_kde(d).logpdf(F([0.3, -0.2]))[0])(D2),
     [[0.018715164, -0.12570545, 0.3277688, -0.26608753, -0.067784734], [-0.30883116, 0.13841984,
      -0.02772984, -0.18147697, 0.4436645]], 'float32'),
    ('jax.grad(lambda x: st.beta.logsf(x, 2., 3.))(F(0.3))',
     lambda: jax.grad(lambda x: st.beta.logsf(x, 2., 3.))(F(0.3)),
     -2.706769, 'float32'),
    ('jax.grad(lambda x: st.cauchy.logsf(x, 0.5, 2.))(F(1.))',
     lambda: jax.grad(lambda x: st.cauchy.logsf(x, 0.5, 2.))(F(1.)),
     -0.35494187, 'float32'),
    ('jax.grad(lambda x: st.chi2.logcdf(x, 3.))(F(1.))',
     lambda: jax.grad(lambda x: st.chi2.logcdf(x, 3.))(F(1.)),
     1.2174747, 'float32'),
    ('jax.vmap(lambda x: st.gaussian_kde(x).logpdf(F(0.3)))(D2)',
     lambda: jax.vmap(lambda x: st.gaussian_kde(x).logpdf(F(0.3)))(D2),
     [[-1.197396], [-1.0108358]], 'float32'),
    ('jax.vmap(lambda x: st.rankdata(x))(AN)',
     lambda: jax.vmap(lambda x: st.rankdata(x))(AN),
     [[nan, nan, nan, nan], [1.5, 1.5, 3.5, 3.5], [3.5, 2.0, 3.5, 1.0]], 'float32'),
    ('jax.vmap(lambda x: st.mode(x).mode)(A)',
     lambda: jax.vmap(lambda x: st.mode(x).mode)(A),
     [3, 1, 2], 'int32'),
]


@pytest.mark.parametrize("expr,call,expected,dtype", STATISTICS,
                         ids=[c[0] for c in STATISTICS])
def test_statistics_kde_and_gradients_match_jax(expr, call, expected, dtype):
    _check(call(), expected, dtype)


# each public module holds exactly the functions of JAX 0.10.2's module of that name
JAX_MODULES = {
    'bernoulli': ['cdf', 'logpmf', 'pmf', 'ppf'],
    'beta': ['cdf', 'logcdf', 'logpdf', 'logsf', 'pdf', 'sf'],
    'betabinom': ['logpmf', 'pmf'], 'binom': ['logpmf', 'pmf'],
    'cauchy': ['cdf', 'isf', 'logcdf', 'logpdf', 'logsf', 'pdf', 'ppf', 'sf'],
    'chi2': ['cdf', 'logcdf', 'logpdf', 'logsf', 'pdf', 'sf'],
    'dirichlet': ['logpdf', 'pdf'],
    'expon': ['cdf', 'logcdf', 'logpdf', 'logsf', 'pdf', 'ppf', 'sf'],
    'gamma': ['cdf', 'logcdf', 'logpdf', 'logsf', 'pdf', 'sf'],
    'gennorm': ['cdf', 'logpdf', 'pdf'], 'geom': ['logpmf', 'pmf'],
    'gumbel_l': ['cdf', 'logcdf', 'logpdf', 'logsf', 'pdf', 'ppf', 'sf'],
    'gumbel_r': ['cdf', 'logcdf', 'logpdf', 'logsf', 'pdf', 'ppf', 'sf'],
    'laplace': ['cdf', 'logpdf', 'pdf'],
    'logistic': ['cdf', 'isf', 'logpdf', 'pdf', 'ppf', 'sf'],
    'multinomial': ['logpmf', 'pmf'], 'multivariate_normal': ['logpdf', 'pdf'],
    'nbinom': ['logpmf', 'pmf'],
    'norm': ['cdf', 'isf', 'logcdf', 'logpdf', 'logsf', 'pdf', 'ppf', 'sf'],
    'pareto': ['cdf', 'logcdf', 'logpdf', 'logsf', 'pdf', 'ppf', 'sf'],
    'poisson': ['cdf', 'entropy', 'logpmf', 'pmf'], 't': ['logpdf', 'pdf'],
    'truncnorm': ['cdf', 'logcdf', 'logpdf', 'logsf', 'pdf', 'sf'],
    'uniform': ['cdf', 'logpdf', 'pdf', 'ppf'], 'vonmises': ['logpdf', 'pdf'],
    'wrapcauchy': ['logpdf', 'pdf'],
}


def test_modules_hold_jax_functions():
    import types
    ours = {n: sorted(a for a in dir(m) if not a.startswith("_"))
            for n, m in vars(st).items() if isinstance(m, types.ModuleType)}
    assert ours == JAX_MODULES
    assert {"gaussian_kde", "mode", "rankdata", "sem"} <= set(dir(st))


def test_weak_types_as_jax():
    """All-Python-scalar arguments give a weakly typed result, except in truncnorm and
    poisson.entropy (as JAX 0.10.2)."""
    weak = [st.gumbel_r.cdf(1, 0, 2), st.pareto.logpdf(2, 1), st.betabinom.logpmf(1, 5, 2, 3),
            st.vonmises.logpdf(1, 2), st.gennorm.cdf(1, 2), st.nbinom.pmf(1, 5, 0.5),
            st.cauchy.logsf(1), st.beta.logcdf(0.5, 2, 3), st.norm.logpdf(1),
            st.expon.logpdf(1), st.poisson.logpmf(1, 2), st.bernoulli.ppf(0.5, 0.5)]
    assert all(r.weak_type and r.dtype == np.float32 for r in weak)
    strong = [st.truncnorm.cdf(1, -1, 2), st.poisson.entropy(3),
              st.gumbel_r.cdf(np.float32(1))]
    assert not any(r.weak_type for r in strong)
    assert st.gumbel_l.pdf(np.float16(1)).dtype == np.float16
    assert st.pareto.cdf(np.arange(3), 1).dtype == np.float32


JITTED = [
    (st.gumbel_r.logcdf, (F([-1., 0., 2.]), F(0.5), F(1.5))),
    (st.gumbel_l.ppf, (F([0.1, 0.5, 0.9]), F(0.5), F(1.5))),
    (st.pareto.logsf, (F([0.5, 2., 3.]), F(2.), F(0.5))),
    (st.truncnorm.logcdf, (F([-0.5, 0.5, 1.5, 10.5]), F([-1., -1., -1., 10.]),
                           F([2., 2., 2., 11.]))),
    (st.gennorm.cdf, (F([-1., 0.3, 2.]), F(1.5))),
    (st.vonmises.logpdf, (F([-1., 0.3, 2.]), F(2.))),
    (st.wrapcauchy.logpdf, (F([-1., 0.3, 2.]), F(0.4))),
    (st.betabinom.logpmf, (F([0., 2., 6.]), F(5.), F(2.), F(3.))),
    (st.nbinom.logpmf, (F([0., 2., 6.]), F(5.), F(0.3))),
    (st.multinomial.logpmf, (np.int32([1, 2, 3]), np.int32(6), F([0.2, 0.3, 0.5]))),
    (st.poisson.entropy, (F([0.5, 5., 25., 300.]),)),
    (lambda x: rankdata(x, axis=1), (AN,)),
    (lambda x: mode(x, axis=1), (A,)),
    (lambda x: sem(x, axis=1, nan_policy="omit"), (AN,)),
    (lambda d, x: gaussian_kde(d).logpdf(x), (D2, PTS)),
]


@pytest.mark.parametrize("fn,args", JITTED, ids=range(len(JITTED)))
def test_jit_matches_eager(fn, args):
    eager, jitted = fn(*args), jax.jit(fn)(*args)
    for e, j in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(jitted)):
        assert e.dtype == j.dtype
        np.testing.assert_allclose(j, e, rtol=2e-6, atol=1e-7)


def test_vmap_matches_a_loop():
    xs = F([[-1., 0., 2.], [0.5, 1., 3.]])
    params = F([0.5, 2.])
    for f in (lambda x, p: st.gumbel_r.logpdf(x, 0., p), lambda x, p: st.pareto.logpdf(x + 2, p),
              lambda x, p: st.truncnorm.logpdf(x, -p, p), lambda x, p: st.gennorm.logpdf(x, p),
              lambda x, p: st.vonmises.logpdf(x, p), lambda x, p: st.nbinom.logpmf(x + 1, p, 0.3)):
        batched = jax.vmap(f)(xs, params)
        np.testing.assert_allclose(batched, np.stack([f(x, p) for x, p in zip(xs, params)]),
                                   rtol=1e-6)
    counts = np.int32([[1, 2, 3], [0, 0, 6]])
    probs = F([0.2, 0.3, 0.5])
    np.testing.assert_allclose(jax.vmap(st.multinomial.logpmf, (0, None, None))(counts, 6, probs),
                               [-2.002481, -4.1588845], rtol=1e-5)
    kde_rows = jax.vmap(lambda d: gaussian_kde(d).integrate_box_1d(-1., 1.))(D2)
    np.testing.assert_allclose(kde_rows, [gaussian_kde(d).integrate_box_1d(-1., 1.) for d in D2],
                               rtol=1e-6)


def test_mode_gradient_goes_to_the_first_occurrence():
    x = F([3., 1., 2., 3., 1., 1.])
    np.testing.assert_array_equal(jax.grad(lambda v: mode(v).mode)(x), [0, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(jax.grad(lambda v: rankdata(v).sum())(x), np.zeros(6))


def test_gradients_against_finite_differences():
    cases = [(lambda v: st.gumbel_l.logsf(v, 0.5, 1.5), 1.2),
             (lambda v: st.truncnorm.logpdf(0.3, -1., v), 1.5),
             (lambda v: st.truncnorm.logcdf(v, -1., 2.), 0.4),
             (lambda v: st.pareto.logsf(3., v), 1.7),
             (lambda v: st.wrapcauchy.logpdf(v, 0.6), 2.0),
             (lambda v: st.betabinom.logpmf(3., 7., 1.5, v), 2.5),
             (lambda v: st.poisson.entropy(v), 7.0),
             (lambda v: st.poisson.entropy(v), 1e-3),   # JAX 0.10.2: nan
             (lambda v: gaussian_kde(D2[0], bw_method=v).logpdf(0.4)[0], 0.5)]
    with jax.enable_x64(True):
        for f, at in cases:
            at = np.float64(at)
            h = 1e-6
            numeric = (f(at + h) - f(at - h)) / (2 * h)
            np.testing.assert_allclose(jax.grad(f)(at), numeric, rtol=1e-5, atol=1e-8)


# --- accuracy where JAX 0.10.2 loses digits (pyjax follows SciPy there) -------------------

def test_truncnorm_far_tails_match_scipy():
    cases = [(st.truncnorm.logcdf, ss.truncnorm.logcdf, F([8.1, 9., 10., 10.9]), 8., 11.),
             (st.truncnorm.logsf, ss.truncnorm.logsf, F([-10.9, -10., -9., -8.1]), -11., -8.),
             (st.truncnorm.logpdf, ss.truncnorm.logpdf, F([30.5, 35., 39.]), 30., 40.),
             (st.truncnorm.sf, ss.truncnorm.sf, F([30.5, 35., 39.]), 30., 40.),
             (st.truncnorm.logcdf, ss.truncnorm.logcdf, F([30.5, 35., 39.]), 30., 40.),
             (st.truncnorm.cdf, ss.truncnorm.cdf, F([-1e-3, 0., 1e-3]), -1e-2, 1e-2),
             (st.truncnorm.pdf, ss.truncnorm.pdf, F([-1e-3, 0., 1e-3]), -1e-2, 1e-2),
             (st.truncnorm.logcdf, ss.truncnorm.logcdf, F([0.5, 3., 6.]), 0., np.inf)]
    for ours, ref, x, a, b in cases:
        np.testing.assert_allclose(ours(x, a, b), ref(x.astype(np.float64), a, b), rtol=2e-5,
                                   atol=1e-30)
    # far in the lower tail JAX 0.10.2's float32 log_ndtr series is 2.6e-5 from SciPy's
    np.testing.assert_allclose(st.truncnorm.cdf(F([-39.5, -35., -31.]), -40., -30.),
                               [0, 0, 5.492843e-14], rtol=1e-5, atol=1e-30)
    # d/dx log sf = -pdf / sf, finite in the upper tail (JAX 0.10.2 gives nan here)
    g = jax.grad(lambda v: st.truncnorm.logsf(v, 8., 11.))(F(9.))
    np.testing.assert_allclose(g, -ss.truncnorm.pdf(9., 8., 11.) / ss.truncnorm.sf(9., 8., 11.),
                               rtol=1e-5)


def test_gumbel_tails_match_scipy():
    x = F([-4., -2., 3., 6., 10., 30.])
    np.testing.assert_allclose(st.gumbel_r.sf(x), ss.gumbel_r.sf(x.astype(np.float64)),
                               rtol=1e-5)
    np.testing.assert_allclose(st.gumbel_r.logsf(x), ss.gumbel_r.logsf(x.astype(np.float64)),
                               rtol=1e-5)
    np.testing.assert_allclose(st.gumbel_l.logcdf(-x), ss.gumbel_l.logcdf(-x.astype(np.float64)),
                               rtol=1e-5)


def _poisson_entropy(mu):
    k = np.arange(int(mu + 40 * math.sqrt(mu) + 100))
    log_p = k * math.log(mu) - mu - sp.gammaln(k + 1)
    return -(np.exp(log_p) * log_p).sum()


def test_poisson_entropy_against_the_series():
    mu = F([1e-3, 0.01, 0.5, 1., 2.5, 5., 9.9, 15., 19.9, 20., 20.1, 30., 49., 100., 1e3])
    np.testing.assert_allclose(st.poisson.entropy(mu), [_poisson_entropy(m) for m in mu],
                               rtol=3e-6)
    # d/dmu of the asymptotic series (JAX 0.10.2 gives 0.016762972)
    grad = jax.grad(st.poisson.entropy)(F(30.))
    series_slope = 1 / 60 + 1 / (12 * 30 ** 2) + 1 / (12 * 30 ** 3) + 19 / (120 * 30 ** 4)
    np.testing.assert_allclose(grad, series_slope, rtol=3e-6)


def test_added_functions_of_the_first_distributions_match_scipy():
    x = F([0.05, 0.3, 0.7, 0.95])
    np.testing.assert_allclose(st.beta.logcdf(x, 2., 3.), ss.beta.logcdf(x, 2., 3.), rtol=1e-5)
    np.testing.assert_allclose(st.beta.logsf(x, 2., 3.), ss.beta.logsf(x, 2., 3.), rtol=1e-5)
    y = F([0.1, 1., 4., 20.])
    # log of a cdf near 1 keeps float32's absolute, not relative, accuracy (as in JAX)
    np.testing.assert_allclose(st.chi2.logcdf(y, 3.), ss.chi2.logcdf(y, 3.), rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(st.chi2.logsf(y, 3.), ss.chi2.logsf(y, 3.), rtol=1e-5)
    z = F([-30., -1., 0., 2., 30.])
    for ours, ref in ((st.cauchy.sf, ss.cauchy.sf), (st.cauchy.logcdf, ss.cauchy.logcdf),
                      (st.cauchy.logsf, ss.cauchy.logsf)):
        np.testing.assert_allclose(ours(z, 0.5, 2.), ref(z, 0.5, 2.), rtol=2e-5)
    q = F([0.1, 0.3, 0.5, 0.8])
    np.testing.assert_allclose(st.cauchy.isf(q, 0.5, 2.), ss.cauchy.isf(q, 0.5, 2.), rtol=1e-5)


def test_new_distributions_match_scipy_on_grids():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    pos = np.linspace(0.3, 6, 12).astype(np.float32)
    unit = np.linspace(0.05, 0.95, 10).astype(np.float32)
    pairs = [
        (st.gumbel_r.logpdf(x, 0.5, 1.5), ss.gumbel_r.logpdf(x, 0.5, 1.5)),
        (st.gumbel_l.cdf(x, 0.5, 1.5), ss.gumbel_l.cdf(x, 0.5, 1.5)),
        (st.gumbel_r.ppf(unit, 0.5, 1.5), ss.gumbel_r.ppf(unit, 0.5, 1.5)),
        (st.gumbel_l.ppf(unit, 0.5, 1.5), ss.gumbel_l.ppf(unit, 0.5, 1.5)),
        (st.pareto.logpdf(pos + 1, 2.5), ss.pareto.logpdf(pos + 1, 2.5)),
        (st.pareto.ppf(unit, 2.5, 0.5), ss.pareto.ppf(unit, 2.5, 0.5)),
        (st.truncnorm.logpdf(x, -1.5, 2., 0.5, 1.5), ss.truncnorm.logpdf(x, -1.5, 2., 0.5, 1.5)),
        (st.truncnorm.sf(x, -1.5, 2., 0.5, 1.5), ss.truncnorm.sf(x, -1.5, 2., 0.5, 1.5)),
        (st.gennorm.logpdf(x, 1.3), ss.gennorm.logpdf(x, 1.3)),
        (st.gennorm.cdf(x, 3.), ss.gennorm.cdf(x, 3.)),
        (st.vonmises.logpdf(x, 1.7), ss.vonmises.logpdf(x, 1.7)),
        (st.wrapcauchy.logpdf(pos, 0.4), ss.wrapcauchy.logpdf(pos, 0.4)),
        (st.betabinom.logpmf(np.arange(8.), 7, 1.5, 2.5),
         ss.betabinom.logpmf(np.arange(8), 7, 1.5, 2.5)),
        (st.nbinom.logpmf(np.arange(8.), 3.5, 0.4), ss.nbinom.logpmf(np.arange(8), 3.5, 0.4)),
        (st.multinomial.logpmf(np.int32([2, 0, 5]), 7, F([0.3, 0.2, 0.5])),
         ss.multinomial.logpmf([2, 0, 5], 7, [0.3, 0.2, 0.5])),
        (st.poisson.entropy(pos), ss.poisson.entropy(pos)),
    ]
    for ours, ref in pairs:
        np.testing.assert_allclose(ours, ref, rtol=2e-5, atol=1e-6)
    data = np.random.default_rng(0).normal(size=(3, 17))
    for method in ("average", "min", "max", "dense", "ordinal"):
        np.testing.assert_array_equal(rankdata(data.round(1), method, axis=1),
                                      ss.rankdata(data.round(1), method, axis=1))
    np.testing.assert_allclose(sem(data, axis=1), ss.sem(data, axis=1), rtol=1e-5)
    kde, ref = gaussian_kde(F(data[:2])), ss.gaussian_kde(data[:2])
    np.testing.assert_allclose(kde.covariance, ref.covariance, rtol=1e-5)
    np.testing.assert_allclose(kde.logpdf(F(data[:2, :4])), ref.logpdf(data[:2, :4]), rtol=1e-5)


def test_kde_is_an_immutable_pytree():
    kde = gaussian_kde(D2, weights=W)
    leaves, tree = jax.tree_util.tree_flatten(kde)
    assert len(leaves) == 5 and (kde.d, kde.n) == (2, 5)
    back = jax.tree_util.tree_unflatten(tree, leaves)
    np.testing.assert_array_equal(back.logpdf(PTS), kde.logpdf(PTS))
    np.testing.assert_allclose(jax.jit(lambda k, x: k.pdf(x))(kde, PTS), kde.pdf(PTS), rtol=1e-6)
    with pytest.raises(AttributeError, match="immutable"):
        kde.dataset = D2
    assert repr(kde).startswith("gaussian_kde(neff=Array(")
    np.testing.assert_array_equal(kde(PTS), kde.evaluate(PTS))


BAD_INPUT = [
    (lambda: st.multinomial.logpmf(F([1., 2.]), 3, F([0.5, 0.5])), ValueError,
     "must be of integer type"),
    (lambda: st.multinomial.logpmf(np.int32([1, 2]), 3., F([0.5, 0.5])), ValueError,
     "must be of integer type"),
    (lambda: rankdata(A, "foo"), ValueError, "unknown method 'foo'"),
    (lambda: rankdata(AN, nan_policy="omit"), NotImplementedError, "omit"),
    (lambda: rankdata(AN, nan_policy="raise"), NotImplementedError, "cannot know whether"),
    (lambda: mode(AN, nan_policy="foo"), ValueError, "Illegal nan_policy value 'foo'"),
    (lambda: mode(A, axis=2), ValueError, "out of bounds"),
    (lambda: sem(AN, nan_policy="raise"), ValueError, "raise is not supported"),
    (lambda: sem(A, axis=3), ValueError, "out of bounds"),
    (lambda: gaussian_kde(F([1.])), ValueError, "should have multiple elements"),
    (lambda: gaussian_kde(D2, bw_method="foo"), ValueError, "`bw_method` should be"),
    (lambda: gaussian_kde(D2, weights=np.ones((5, 1))), ValueError, "one-dimensional"),
    (lambda: gaussian_kde(D2, weights=np.ones(4)), ValueError, "of length n"),
    (lambda: gaussian_kde(D2[0] + 1j), NotImplementedError, "complex"),
    (lambda: gaussian_kde(np.zeros((1, 1, 5))), ValueError, r"shape \(d, n\)"),
    (lambda: gaussian_kde(D2).evaluate(np.zeros((3, 2))), ValueError,
     "points have dimension 3, dataset has dimension 2"),
    (lambda: gaussian_kde(D2).integrate_box([0, 0], [1, 1]), NotImplementedError,
     "integrate_box_1d"),
    (lambda: gaussian_kde(D2).set_bandwidth(0.5), NotImplementedError, "bandwidth"),
    (lambda: gaussian_kde(D2).integrate_box_1d(0., 1.), ValueError, "only handles 1D"),
    (lambda: gaussian_kde(D2[0]).integrate_box_1d(F([0., 1.]), 2.), ValueError, "scalars"),
    (lambda: gaussian_kde(D2).integrate_kde(gaussian_kde(D2[0])), ValueError,
     "not the same dimensionality"),
    (lambda: gaussian_kde(D2).integrate_gaussian(np.zeros(3), np.eye(2)), ValueError,
     "mean does not have dimension 2"),
    (lambda: gaussian_kde(D2).integrate_gaussian(np.zeros(2), np.eye(3)), ValueError,
     "covariance does not have dimension 2"),
    (lambda: st.gumbel_r.logpdf([1., 2.]), TypeError, "requires ndarray or scalar"),
]


@pytest.mark.parametrize("call,error,match", BAD_INPUT, ids=range(len(BAD_INPUT)))
def test_bad_input_is_a_named_error(call, error, match):
    with pytest.raises(error, match=match):
        call()
