"""jax.nn.initializers: functions `init(key, shape, dtype)` that draw initial weights
(constant, normal, uniform, truncated normal, variance scaling and its named forms,
orthogonal, delta orthogonal), with JAX's recipes so a key gives JAX's weights. Built
from jax.random and jax.numpy."""
from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from pyjax._src import dtypes
from pyjax._src.lax.sharding_constraint import takes_out_sharding
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import linalg
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.random import distributions as dist
from pyjax._src.random import keys as rkeys


class Initializer(Protocol):
    """What every initializer is: a function of a PRNG key, a shape, a dtype and how
    the result is laid out (out_sharding)."""

    def __call__(self, key, shape, dtype=None, out_sharding=None):
        ...


def _dtype(dtype):
    return dtypes.default_float_dtype() if dtype is None else \
        np.dtype(dtypes.canonicalize_dtype(dtype))


def _shape(shape):
    return rkeys.canonical_shape(shape, "initializer")


@takes_out_sharding
def zeros(key, shape, dtype=None):
    """An initializer of zeros."""
    return lnp.zeros(_shape(shape), _dtype(dtype))


@takes_out_sharding
def ones(key, shape, dtype=None):
    """An initializer of ones."""
    return lnp.ones(_shape(shape), _dtype(dtype))


def constant(value, dtype=None):
    """An initializer that fills with `value`."""
    @takes_out_sharding
    def init(key, shape, dtype=dtype):
        return lnp.full(_shape(shape), value, _dtype(dtype))
    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer of N(0, stddev^2) samples."""
    @takes_out_sharding
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return dist.normal(key, _shape(shape), dtype) * np.asarray(stddev, dtype)
    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer of uniform samples in [0, scale)."""
    @takes_out_sharding
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return dist.uniform(key, _shape(shape), dtype) * np.asarray(scale, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer of normal samples truncated to [lower, upper] standard deviations,
    then scaled by stddev."""
    @takes_out_sharding
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return dist.truncated_normal(key, lower, upper, _shape(shape), dtype) * \
            np.asarray(stddev, dtype)
    return init


def _size(shape, axes):
    return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)


def compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out) of a weight shape; dimensions in no axis argument are the
    receptive field (a convolution's spatial dimensions)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-"
                         "dimensional weights tensor with default in_axis. Must be at least "
                         "2D or specify in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    batch_size = _size(shape, batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def _complex_uniform(key, shape, dtype):
    """Uniform samples in the unit disk, scaled to unit variance."""
    key_r, key_theta = rkeys.split(key)
    real = dtypes.real_dtype(dtype)
    r = uf.sqrt(2 * dist.uniform(key_r, shape, real)).astype(dtype)
    theta = 2 * np.pi * dist.uniform(key_theta, shape, real).astype(dtype)
    return r * uf.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """Circular complex normal samples with modulus below `upper`."""
    key_r, key_theta = rkeys.split(key)
    real = dtypes.real_dtype(dtype)
    t = (1 - uf.exp(lnp.asarray(-(upper ** 2), dtype))) * \
        dist.uniform(key_r, shape, real).astype(dtype)
    r = uf.sqrt(-uf.log(1 - t))
    theta = 2 * np.pi * dist.uniform(key_theta, shape, real).astype(dtype)
    return r * uf.exp(1j * theta)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """Samples of variance scale / n, n the fan in, fan out, or their arithmetic
    ("fan_avg") or geometric ("fan_geo_avg") mean; distribution "truncated_normal" (cut
    at 2 standard deviations), "normal" or "uniform"."""
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    @takes_out_sharding
    def init(key, shape, dtype=dtype):
        shape, dtype = _shape(shape), _dtype(dtype)
        fan_in, fan_out = compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out,
                       "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = lnp.array(scale / denominator, dtype=dtype)
        complex_ = dtypes.is_complex(dtype)
        if distribution == "truncated_normal":
            if not complex_:
                # .8796... is the standard deviation of N(0, 1) truncated to [-2, 2]
                stddev = uf.sqrt(variance) / lnp.array(.87962566103423978, dtype)
                return dist.truncated_normal(key, -2, 2, shape, dtype) * stddev
            stddev = uf.sqrt(variance) / lnp.array(.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return dist.normal(key, shape, dtype) * uf.sqrt(variance)
        if not complex_:
            return dist.uniform(key, shape, dtype, -1) * uf.sqrt(3 * variance)
        return _complex_uniform(key, shape, dtype) * uf.sqrt(variance)
    return init


def _named(scale, mode, distribution, doc):
    def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis,
                                dtype)
    make.__doc__ = doc
    return make


glorot_uniform = _named(1.0, "fan_avg", "uniform", "Glorot (Xavier) uniform initializer.")
glorot_normal = _named(1.0, "fan_avg", "truncated_normal",
                       "Glorot (Xavier) truncated-normal initializer.")
lecun_uniform = _named(1.0, "fan_in", "uniform", "LeCun uniform initializer.")
lecun_normal = _named(1.0, "fan_in", "truncated_normal",
                      "LeCun truncated-normal initializer.")
he_uniform = _named(2.0, "fan_in", "uniform", "He (Kaiming) uniform initializer.")
he_normal = _named(2.0, "fan_in", "truncated_normal",
                   "He (Kaiming) truncated-normal initializer.")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Uniformly random orthogonal matrices (reshaped to `shape`, the columns along
    column_axis), times scale."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError("orthogonal initializer does not take out_sharding")
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if 0 in shape:
            return lnp.zeros(shape, dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        matrix_shape = (n_cols, n_rows) if n_rows < n_cols else (n_rows, n_cols)
        q, r = linalg.qr(dist.normal(key, matrix_shape, dtype))
        q = q * uf.sign(linalg.diagonal(r))[None, :]   # makes the distribution uniform
        if n_rows < n_cols:
            q = q.T
        rest = tuple(d for i, d in enumerate(shape) if i != column_axis % len(shape))
        q = lnp.reshape(q, rest + (n_cols,))
        return np.asarray(scale, dtype) * lnp.moveaxis(q, -1, column_axis)
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """For convolution kernels of rank 3-5: zero except an orthogonal matrix at the
    spatial centre (Xiao et al., 2018)."""
    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError("delta_orthogonal initializer does not take "
                                      "out_sharding")
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return lnp.zeros(shape, dtype).at[centre].set(matrix)
    return init
