"""jax.scipy.ndimage: map_coordinates, interpolation of an N-d array at fractional
coordinates (nearest-neighbour or linear)."""
from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import ufuncs
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact


def _round_half_away_from_zero(x):
    return ufuncs.sign(x) * ufuncs.floor(ufuncs.abs(x) + 0.5)


def _constant(index, size):
    return lnp.clip(index, 0, size - 1), (index >= 0) & (index < size)


def _nearest(index, size):
    return lnp.clip(index, 0, size - 1), None


def _wrap(index, size):
    return ufuncs.mod(index, size), None


def _mirror(index, size):
    """Reflect about the edge samples: -1 -> 1, size -> size - 2."""
    if size == 1:
        return lnp.zeros_like(index), None
    period = 2 * (size - 1)
    index = ufuncs.mod(index, period)
    return lnp.where(index >= size, period - index, index), None


def _reflect(index, size):
    """Reflect about the array's outer edges: -1 -> 0, size -> size - 1."""
    period = 2 * size
    index = ufuncs.mod(index, period)
    return lnp.where(index >= size, period - 1 - index, index), None


_MODES = {"constant": _constant, "nearest": _nearest, "wrap": _wrap, "mirror": _mirror,
          "reflect": _reflect}


def _taps(coordinate, order):
    """The (integer index, weight) pairs that order-0 or order-1 interpolation reads."""
    if order == 0:
        return [(_round_half_away_from_zero(coordinate).astype("int32"), None)]
    lower = ufuncs.floor(coordinate)
    upper_weight = coordinate - lower
    lower = lower.astype("int32")
    return [(lower, 1 - upper_weight), (lower + 1, upper_weight)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """Sample `input` at the points coordinates[0][...], ..., coordinates[ndim-1][...]
    by nearest-neighbour (order=0) or linear (order=1) interpolation. Points outside are
    handled by `mode`: 'constant' (read cval), 'nearest', 'wrap', 'mirror', 'reflect'."""
    check_arraylike("map_coordinates", input)
    input = lnp.asarray(input)
    coordinates = [lnp.asarray(c) for c in coordinates]
    if len(coordinates) != input.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {input.ndim}")
    if mode not in _MODES:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_MODES)}.")
    if operator.index(order) > 1:
        raise NotImplementedError(
            "jax.scipy.ndimage.map_coordinates currently requires order<=1")
    coordinates = promote_dtypes_inexact(*coordinates)
    cval = lnp.asarray(cval, input.dtype)
    to_index = _MODES[mode]

    taps_per_axis = []
    for coordinate, size in zip(coordinates, input.shape):
        taps_per_axis.append([(*to_index(index, size), weight)
                              for index, weight in _taps(coordinate, order)])
    out = 0
    for corner in itertools.product(*taps_per_axis):
        indices, valids, weights = zip(*corner)
        value = input[tuple(indices)]
        valids = [v for v in valids if v is not None]
        if valids:
            value = lnp.where(functools.reduce(operator.and_, valids), value, cval)
        weights = [w for w in weights if w is not None]
        out = out + (functools.reduce(operator.mul, weights) * value if weights else value)
    if np.issubdtype(input.dtype, np.integer):   # round to the nearest, as JAX does
        out = _round_half_away_from_zero(out)
    return lnp.asarray(out).astype(input.dtype)


__all__ = ["map_coordinates"]
