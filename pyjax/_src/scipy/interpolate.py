"""jax.scipy.interpolate: RegularGridInterpolator, linear or nearest-neighbour
interpolation of values on a rectilinear grid (SciPy's, with JAX's restrictions: each
axis strictly increasing, no bounds_error under jit)."""
from __future__ import annotations

import itertools

import numpy as np

from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import sorting
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from pyjax._src.tree_util import register_pytree_node

_METHODS = ("linear", "nearest")


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _ndim_coords_from_arrays(points, ndim):
    """The query points as one (..., ndim) array: a tuple of coordinate arrays is
    broadcast and stacked on a new last axis; a 1-d array is a list of ndim-points."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]
    if isinstance(points, tuple):
        coords = lnp.broadcast_arrays(*points)
        stacked = lnp.empty(coords[0].shape + (len(points),), dtype=float)
        for j, coord in enumerate(coords):
            stacked = stacked.at[..., j].set(coord)
        return stacked
    check_arraylike("_ndim_coords_from_arrays", points)
    points = lnp.asarray(points)
    return points.reshape(-1, ndim) if points.ndim == 1 else points


class RegularGridInterpolator:
    """Interpolate points on a regular rectangular grid, as
    :class:`scipy.interpolate.RegularGridInterpolator`.

    Args:
      points: length-N sequence of arrays, the grid coordinates of each axis (each
        strictly increasing; a decreasing axis silently gives wrong results, as in JAX).
      values: N-dimensional (or more: trailing axes are carried along) grid values.
      method: ``"linear"`` or ``"nearest"``.
      bounds_error: must be False (a bounds check cannot act under jit).
      fill_value: value for points outside the grid (NaN by default); None
        extrapolates.
    """

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        _check_method(method)
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        values, = promote_dtypes_inexact(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = lnp.asarray(fill_value)
            if not lnp.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(lnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _ndim_coords_from_arrays(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        xi_shape = xi.shape
        xi = xi.reshape(-1, xi_shape[-1])
        indices, norm_distances, out_of_bounds = self._find_indices(xi.T)
        if method == "linear":
            result = self._evaluate_linear(indices, norm_distances)
        else:
            result = self._evaluate_nearest(indices, norm_distances)
        if self.fill_value is not None:
            mask = out_of_bounds.reshape(result.shape[:1] + (1,) * (result.ndim - 1))
            result = lnp.where(mask, self.fill_value, result)
        return result.reshape(xi_shape[:-1] + self.values.shape[ndim:])

    def _evaluate_linear(self, indices, norm_distances):
        # The weights broadcast over the trailing axes of the values.
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        result = lnp.asarray(0.)
        for corner in itertools.product(*[(i, i + 1) for i in indices]):
            weight = lnp.asarray(1.)
            for ci, i, yi in zip(corner, indices, norm_distances):
                weight = weight * lnp.where(ci == i, 1 - yi, yi)
            result = result + self.values[corner] * weight[trailing]
        return result

    def _evaluate_nearest(self, indices, norm_distances):
        nearest = tuple(lnp.where(yi <= .5, i, i + 1)
                        for i, yi in zip(indices, norm_distances))
        return self.values[nearest]

    def _find_indices(self, xi):
        """Per axis: the index of the grid cell holding each point (clamped to the
        grid's cells), the point's distance from the cell's lower edge in units of the
        cell, and whether any coordinate lies outside the grid."""
        indices, norm_distances = [], []
        out_of_bounds = lnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = lnp.clip(sorting.searchsorted(g, x) - 1, 0, g.size - 2)
            indices.append(i)
            norm_distances.append((x - g[i]) / (g[i + 1] - g[i]))
            out_of_bounds = out_of_bounds | (x < g[0]) | (x > g[-1])
        return indices, norm_distances, out_of_bounds


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    lambda aux, children: RegularGridInterpolator(*children[:2], *aux, *children[2:]))
