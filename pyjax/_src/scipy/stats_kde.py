"""jax.scipy.stats.gaussian_kde: kernel density estimation with Gaussian kernels, a pytree
(it crosses jit, vmap and grad). Built from jax.numpy, jax.random and jax.scipy.special."""
from __future__ import annotations

import math

import numpy as np

from pyjax._src import dtypes
from pyjax._src.nn.functions import logsumexp
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy.einsum import einsum
from pyjax._src.numpy import linalg as np_linalg
from pyjax._src.numpy import numerical
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from pyjax._src.random import distributions as rd
from pyjax._src.random import gamma_family
from pyjax._src.random import keys
from pyjax._src.scipy import special as sc
from pyjax._src.tree_util import register_pytree_node_class


def _log_mixture_density(centres, weights, points, covariance, inv_cov):
    """log sum_i weights_i N(point; centres[:, i], covariance) for each column of points."""
    diff = centres[:, :, None] - points[:, None, :]                   # (d, n, m)
    energy = red.sum(diff * einsum("ij,jnm->inm", inv_cov, diff), axis=0)
    _, log_det = np_linalg.slogdet(covariance)
    log_norm = 0.5 * (log_det + covariance.shape[0] * math.log(2 * math.pi))
    return logsumexp(-0.5 * energy, axis=0, b=weights[:, None]) - log_norm


@register_pytree_node_class
class gaussian_kde:
    """A weighted sum of Gaussians centred on the columns of `dataset` (d variables by n
    points), their covariance the data's scaled by the squared bandwidth factor."""

    _FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")

    def __init__(self, dataset, bw_method=None, weights=None):
        check_arraylike("gaussian_kde", dataset)
        dataset = lnp.atleast_2d(dataset)
        if dtypes.is_complex(dataset.dtype):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if dataset.ndim != 2:
            raise ValueError(f"gaussian_kde: `dataset` must have shape (d, n) or (n,); got "
                             f"shape {dataset.shape}")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is None:
            (dataset,) = promote_dtypes_inexact(dataset)
            weights = lnp.full((n,), 1 / n, dataset.dtype)
        else:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = promote_dtypes_inexact(dataset, lnp.atleast_1d(weights))
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if weights.shape[0] != n:
                raise ValueError("`weights` input should be of length n")
            weights = weights / red.sum(weights)
        self._set(dataset=dataset, weights=weights, neff=1 / red.sum(weights ** 2))
        factor = self._bandwidth_factor(bw_method)
        data_covariance = lnp.atleast_2d(numerical.cov(dataset, rowvar=True, bias=False,
                                                        aweights=weights))
        self._set(covariance=data_covariance * factor ** 2,
                  inv_cov=np_linalg.inv(data_covariance) / factor ** 2)

    def _set(self, **fields):
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"gaussian_kde is immutable: cannot assign to {name!r}")

    def _bandwidth_factor(self, bw_method):
        d, neff = self.d, self.neff
        if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
            return uf.power(neff, -1 / (d + 4))
        if isinstance(bw_method, str) and bw_method == "silverman":
            return uf.power(neff * (d + 2) / 4, -1 / (d + 4))
        if callable(bw_method):
            return bw_method(self)
        if not isinstance(bw_method, str) and np.ndim(bw_method) == 0:
            return bw_method
        raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a "
                         "callable.")

    def __repr__(self):
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"gaussian_kde({fields})"

    @property
    def d(self):
        return self.dataset.shape[0]

    @property
    def n(self):
        return self.dataset.shape[1]

    def tree_flatten(self):
        return tuple(getattr(self, name) for name in self._FIELDS), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        del aux_data
        kde = object.__new__(cls)
        kde._set(**dict(zip(cls._FIELDS, children)))
        return kde

    def _reshape_points(self, points):
        """Points as a (d, m) array of columns; a flat vector of d values is one point."""
        check_arraylike("gaussian_kde.evaluate", points)
        dataset, points = promote_dtypes_inexact(self.dataset, lnp.atleast_2d(points))
        if dtypes.is_complex(points.dtype):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return dataset, lnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return dataset, points

    def logpdf(self, x):
        """The log of the estimated density at each point."""
        dataset, points = self._reshape_points(x)
        return _log_mixture_density(dataset, self.weights, points, self.covariance,
                                    self.inv_cov)

    def evaluate(self, points):
        """The estimated density at each point."""
        return uf.exp(self.logpdf(points))

    __call__ = pdf = evaluate

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the Gaussian N(mean, cov)."""
        mean, cov = lnp.atleast_1d(mean), lnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        total = self.covariance + cov
        dataset, mean = promote_dtypes_inexact(self.dataset, mean)
        log_value = _log_mixture_density(dataset, self.weights, mean[:, None], total,
                                         np_linalg.inv(total))
        return uf.exp(log_value[0])

    def integrate_box_1d(self, low, high):
        """The integral of a one-dimensional density between two scalar limits."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        spread = uf.sqrt(self.covariance[0, 0])
        below_low, below_high = (sc.ndtr((limit - self.dataset[0]) / spread)
                                 for limit in (low, high))
        return red.sum(self.weights * (below_high - below_low))

    def integrate_kde(self, other):
        """The integral of the product of this density and another gaussian_kde's."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        total = self.covariance + other.covariance
        log_values = _log_mixture_density(self.dataset, self.weights, other.dataset, total,
                                          np_linalg.inv(total))
        return red.sum(other.weights * uf.exp(log_values))

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        raise NotImplementedError("dynamically changing the bandwidth method is not "
                                  "supported")

    def resample(self, key, shape=()):
        """Samples of shape (d,) + shape: a kernel centre drawn by weight, plus Gaussian
        noise of the kernel's covariance (the key split as JAX splits it)."""
        index_key, noise_key = keys.split(key)
        noise = gamma_family.multivariate_normal(
            noise_key, lnp.zeros((self.d,), self.dataset.dtype), self.covariance, shape)
        indices = rd.choice(index_key, self.n, shape, p=self.weights)
        # noise of shape shape + (d,), reversed whole as JAX does (for a shape of two or
        # more dimensions this pairs the centre at (i, j) with the noise drawn at (j, i))
        return self.dataset[:, indices] + lnp.transpose(noise)
