"""The format-independent entry points of jax.experimental.sparse: `todense` (the
`todense` primitive over any sparse array's buffers, or a dense array passed through),
`empty` and `eye` in a chosen format."""
from __future__ import annotations

import operator

import numpy as np

from pyjax._src import tree_util
from pyjax._src.core.avals import ShapedArray
from pyjax._src.interpreters import ad
from pyjax._src.lax import builders as b
from pyjax._src.sparse.base import JAXSparse
from pyjax._src.sparse.bcoo import BCOO, _bcoo_extract
from pyjax._src.sparse.bcsr import BCSR, bcsr_extract
from pyjax._src.sparse.composite import composite_primitive
from pyjax._src.sparse.coo import COO
from pyjax._src.sparse.csr import CSC, CSR
from pyjax._src.sparse.util import _coo_extract, _csr_extract


def todense(arr):
    """The dense array of a sparse array; a dense array is passed through."""
    bufs, tree = tree_util.tree_flatten(arr)
    return todense_p.bind(*bufs, tree=tree)


def _todense_fun(*bufs, tree):
    arr = tree_util.tree_unflatten(tree, bufs)
    return arr.todense() if isinstance(arr, JAXSparse) else arr


def _todense_abstract_eval(*bufs, tree):
    arr = tree_util.tree_unflatten(tree, bufs)
    if isinstance(arr, ShapedArray):
        return arr
    return ShapedArray(arr.shape, arr.dtype, weak_type=arr.data.weak_type)


def _todense_jvp(primals, tangents, *, tree):
    if any(type(t) is not ad.Zero for t in tangents[1:]):
        raise ValueError("todense: cannot differentiate with respect to sparse indices")
    out = todense_p.bind(*primals, tree=tree)
    if type(tangents[0]) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    return out, todense_p.bind(tangents[0], *primals[1:], tree=tree)


def _todense_transpose(ct, *bufs, tree):
    if any(ad.is_undefined_primal(buf) for buf in bufs[1:]):
        raise ValueError("Cannot transpose with respect to sparse indices")
    ct = ad.instantiate_zeros(ct)
    standin = object()
    obj = tree_util.tree_unflatten(tree, [standin] * len(bufs))
    if obj is standin:
        return [ct]
    if isinstance(obj, BCOO):
        return [_bcoo_extract(bufs[1], ct), None]
    if isinstance(obj, BCSR):
        return [bcsr_extract(bufs[1], bufs[2], ct), None, None]
    if isinstance(obj, COO):
        return [_coo_extract(bufs[1], bufs[2], ct), None, None]
    if isinstance(obj, CSR):
        return [_csr_extract(bufs[1], bufs[2], ct), None, None]
    raise NotImplementedError(f"todense_transpose for {type(obj)}")


def _todense_samples():
    data = b.random_values((3,), np.float32)
    indices = np.array([[0, 2], [1, 0], [1, 1]], np.int32)
    _, tree = tree_util.tree_flatten(BCOO((data, indices), shape=(2, 3)))
    return [b.Sample([data, indices], {"tree": tree})]


todense_p = composite_primitive(
    "todense", _todense_fun, abstract_eval=_todense_abstract_eval, jvp=_todense_jvp,
    transpose=_todense_transpose, samples=_todense_samples)


_FORMATS = {"bcoo": BCOO, "bcsr": BCSR, "coo": COO, "csr": CSR, "csc": CSC}


def empty(shape, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """An empty sparse array of `shape` in `sparse_format` (bcoo, coo, csr, csc)."""
    if sparse_format not in _FORMATS:
        raise ValueError(f"sparse_format={sparse_format!r} not recognized; must be one of "
                         f"{list(_FORMATS.keys())}")
    return _FORMATS[sparse_format]._empty(tuple(shape), dtype=dtype,
                                          index_dtype=index_dtype, **kwds)


def eye(N, M=None, k=0, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """The 2-D sparse matrix with ones on the k-th diagonal, in `sparse_format`."""
    if sparse_format not in _FORMATS:
        raise ValueError(f"sparse_format={sparse_format!r} not recognized; must be one of "
                         f"{list(_FORMATS.keys())}")
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    return _FORMATS[sparse_format]._eye(M=M, N=N, k=k, dtype=dtype,
                                        index_dtype=index_dtype, **kwds)
