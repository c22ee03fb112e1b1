"""Set operations of jax.numpy on 1-D arrays: isin, union1d, intersect1d, setdiff1d,
setxor1d. Their result sizes depend on the values, so under jit pass a static `size=`
(padding with fill_value, by default the smallest result value), as in JAX. Imports the
other jnp modules (unique and argsort come from sorting)."""
from __future__ import annotations

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import array_manipulation as more
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import sorting
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import check_arraylike, promote_dtypes


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element occurs in test_elements (compared all against all)."""
    check_arraylike("isin", element, test_elements)
    element, test = promote_dtypes(lnp.asarray(element), lnp.ravel(test_elements))
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"jnp.isin: unknown method {method!r}")
    if not get_aval(test).shape[0]:
        found = lnp.zeros(get_aval(element).shape, np.bool_)
    else:
        found = red.any(element[..., None] == test, axis=-1)
    return uf.logical_not(found) if invert else found


def _unique_with_valid(a, assume_unique=False):
    """unique(a) padded to a's length, and which entries are real (not padding); a itself,
    all valid, when the caller promises it is unique already."""
    if assume_unique:
        return a, lnp.ones(get_aval(a).shape, np.bool_)
    n = get_aval(a).shape[0]
    values, counts = sorting.unique(a, return_counts=True, size=n)
    return values, counts > 0


def _compact(values, keep, size, fill_value, name):
    """The entries of values where keep holds, in order: exactly those when size is None
    (needs concrete keep), else the first `size` of them padded with fill_value."""
    if size is None:
        mask = more.concrete(keep, name, "ar1 and ar2")
        return values[np.nonzero(mask)[0]]
    size = int(size)
    order = sorting.argsort(lnp.asarray(uf.logical_not(keep), np.int32), stable=True)
    count = red.sum(keep)
    n = get_aval(values).shape[0]
    picked = values[order[:size]] if size <= n else \
        lnp.concatenate([values[order], lnp.zeros((size - n,), get_aval(values).dtype)])
    if fill_value is None:   # the smallest result, or 0 when there is none (as JAX)
        zero = lnp.zeros((), get_aval(values).dtype)
        big = _largest(get_aval(values).dtype)
        fill = lnp.where(count > 0, red.min(lnp.where(keep, values, big)), zero) if n \
            else zero
    else:
        fill = lnp.asarray(fill_value, get_aval(values).dtype)
    return lnp.where(lnp.arange(size) < count, picked, fill)


def _largest(dtype):
    if dtypes.is_inexact(dtype):
        return lnp.asarray(np.inf, dtype)
    if dtype == np.bool_:
        return lnp.asarray(True)
    return lnp.asarray(np.iinfo(dtype).max, dtype)


def _flat_operands(name, ar1, ar2, size, promote=True):
    """ar1 and ar2 flattened (and promoted to one dtype, unless told not to); without
    `size` they must be concrete, since the result's length depends on their values."""
    check_arraylike(name, ar1, ar2)
    if size is None:
        for a in (ar1, ar2):
            if isinstance(a, Tracer) and a.to_concrete_value() is None:
                more.concrete(a, name, "ar1/ar2")
    flat = lnp.ravel(ar1), lnp.ravel(ar2)
    return promote_dtypes(*flat) if promote else flat


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values found in either array."""
    check_arraylike("union1d", ar1, ar2)
    ar1, ar2 = promote_dtypes(lnp.ravel(ar1), lnp.ravel(ar2))
    return sorting.unique(lnp.concatenate([ar1, ar2]), size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of ar1 that are not in ar2 (with size, padded with
    fill_value, by default 0 as in JAX), of ar1's dtype."""
    ar1, ar2 = _flat_operands("setdiff1d", ar1, ar2, size, promote=False)
    values, valid = _unique_with_valid(ar1, assume_unique)
    keep = valid & isin(values, ar2, invert=True)
    return _compact(values, keep, size, 0 if fill_value is None else fill_value, "setdiff1d")


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values found in exactly one of the arrays."""
    ar1, ar2 = _flat_operands("setxor1d", ar1, ar2, size)
    if assume_unique:
        # NumPy's and JAX's rule: the values equal to neither sorted neighbour (with
        # repeats inside one array, as those give, a repeated value is dropped)
        values = sorting.sort(lnp.concatenate([ar1, ar2]))
        differs = values[1:] != values[:-1]
        edge = lnp.ones((1,), np.bool_)
        keep = lnp.concatenate([edge, differs]) & lnp.concatenate([differs, edge]) \
            if get_aval(values).shape[0] else lnp.zeros((0,), np.bool_)
        return _compact(values, keep, size, fill_value, "setxor1d")
    (v1, ok1), (v2, ok2) = _unique_with_valid(ar1), _unique_with_valid(ar2)
    keep = lnp.concatenate([ok1 & isin(v1, ar2, invert=True),
                            ok2 & isin(v2, ar1, invert=True)])
    values, keep = _sorted_kept(lnp.concatenate([v1, v2]), keep)
    return _compact(values, keep, size, fill_value, "setxor1d")


def _sorted_kept(values, keep):
    """values with the kept entries first in ascending order, and the matching mask."""
    if not get_aval(values).shape[0]:
        return values, keep
    order = sorting.lexsort((values,
                             lnp.asarray(uf.logical_not(keep), np.int32)))
    return values[order], keep[order]


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted unique values found in both arrays (and, with return_indices, the
    index of each one's first occurrence in ar1 and ar2)."""
    ar1, ar2 = _flat_operands("intersect1d", ar1, ar2, size)
    n1 = get_aval(ar1).shape[0]
    if assume_unique:
        order1 = sorting.argsort(ar1, stable=True)
        values, valid, first1 = ar1[order1], lnp.ones((n1,), np.bool_), order1
    else:
        values, first1, counts = sorting.unique(ar1, return_index=True, return_counts=True,
                                                size=n1)
        valid = counts > 0
    keep = valid & isin(values, ar2)
    out = _compact(values, keep, size, fill_value, "intersect1d")
    if not return_indices:
        return out
    # with `size`, the padding indices are the arrays' lengths, as JAX's
    n2 = get_aval(ar2).shape[0]
    idx1 = _compact(first1, keep, size, n1, "intersect1d")
    hits = ar2[None, :] == out[:, None]
    idx2 = lnp.asarray(red.argmax(hits, axis=1), get_aval(idx1).dtype) \
        if n2 else lnp.zeros_like(idx1)
    if size is not None:
        idx2 = lnp.where(lnp.arange(int(size)) < red.sum(keep), idx2, n2)
    return out, idx1, idx2
