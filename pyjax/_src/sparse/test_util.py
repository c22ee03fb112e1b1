"""jax.experimental.sparse.test_util: the test case and random sparse inputs JAX's
sparse tests use (JAX's module, on pyjax's JaxTestCase): checks of a sparse operation
against its dense equivalent, under jit, vmap and autodiff, random BCOO and BCSR arrays
and dense arrays with a given number of nonzeros, and the sparse layouts of a shape."""
from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np

from pyjax._src import tree_util
from pyjax._src.api.autodiff import jacfwd, jacrev
from pyjax._src.api.jit import jit
from pyjax._src.api.vmap import vmap
from pyjax._src.lax import structural
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.sparse.api import todense
from pyjax._src.sparse.base import JAXSparse
from pyjax._src.sparse.bcoo import BCOO
from pyjax._src.sparse.bcsr import BCSR
from pyjax._src.sparse.transform import sparsify
from pyjax._src.test_case import JaxTestCase, rand_default

MATMUL_TOL = {
    np.float32: 1e-5,
    np.float64: 1e-10,
    np.complex64: 1e-5,
    np.complex128: 1e-10,
}


def is_sparse(x):
    return isinstance(x, JAXSparse)


class BatchedDotGeneralProperties(NamedTuple):
    lhs_shape: tuple[int, ...]
    rhs_shape: tuple[int, ...]
    n_batch: int
    n_dense: int
    dimension_numbers: tuple


class SparseLayout(NamedTuple):
    n_batch: int
    n_dense: int
    n_sparse: int


class SparseTestCase(JaxTestCase):
    """JaxTestCase with checks of sparse operations against their dense equivalents."""

    def assertSparseArraysEquivalent(self, x, y, *, check_dtypes=True, atol=None,
                                     rtol=None, canonicalize_dtypes=True, err_msg=""):
        x_bufs, x_tree = tree_util.tree_flatten(x)
        y_bufs, y_tree = tree_util.tree_flatten(y)
        self.assertEqual(x_tree, y_tree)
        self.assertAllClose(x_bufs, y_bufs, check_dtypes=check_dtypes, atol=atol, rtol=rtol,
                            canonicalize_dtypes=canonicalize_dtypes, err_msg=err_msg)

    def _CheckAgainstDense(self, dense_op, sparse_op, args_maker, check_jit=True,
                           check_dtypes=True, tol=None, atol=None, rtol=None,
                           canonicalize_dtypes=True):
        """sparse_op agrees with dense_op on the dense form of the arguments (and under
        jit with itself)."""
        sparse_args = args_maker()
        dense_args = tree_util.tree_map(todense, sparse_args, is_leaf=is_sparse)
        expected = dense_op(*dense_args)
        sparse_ans = sparse_op(*sparse_args)
        actual = tree_util.tree_map(todense, sparse_ans, is_leaf=is_sparse)
        self.assertAllClose(expected, actual, check_dtypes=check_dtypes, atol=atol or tol,
                            rtol=rtol or tol, canonicalize_dtypes=canonicalize_dtypes)
        if check_jit:
            sparse_ans_jit = jit(sparse_op)(*sparse_args)
            self.assertSparseArraysEquivalent(sparse_ans, sparse_ans_jit, atol=atol or tol,
                                              rtol=rtol or tol)

    def _CheckGradsSparse(self, dense_fun, sparse_fun, args_maker, *, argnums=None,
                          modes=("fwd", "rev"), atol=None, rtol=None):
        """The Jacobians of sparse_fun (with respect to the sparse arguments' data) and of
        dense_fun agree, in forward and reverse mode."""
        args = args_maker()
        args_flat, tree = tree_util.tree_flatten(args)
        num_bufs = [len(tree_util.tree_flatten(arg)[0]) for arg in args]
        argnums_flat = np.cumsum([0, *num_bufs[:-1]]).tolist()
        if argnums is not None:
            argnums_flat = [argnums_flat[n] for n in argnums]

        def dense_fun_flat(*args_flat):
            args = tree_util.tree_unflatten(tree, args_flat)
            return dense_fun(*tree_util.tree_map(todense, args, is_leaf=is_sparse))

        def sparse_fun_flat(*args_flat):
            out = sparse_fun(*tree_util.tree_unflatten(tree, args_flat))
            return tree_util.tree_map(todense, out, is_leaf=is_sparse)

        for mode, jac in (("rev", jacrev), ("fwd", jacfwd)):
            if mode in modes:
                self.assertAllClose(jac(dense_fun_flat, argnums=argnums_flat)(*args_flat),
                                    jac(sparse_fun_flat, argnums=argnums_flat)(*args_flat),
                                    atol=atol, rtol=rtol)

    def _CheckBatchingSparse(self, dense_fun, sparse_fun, args_maker, *, batch_size=3,
                             bdims=None, check_jit=False, check_dtypes=True, tol=None,
                             atol=None, rtol=None, canonicalize_dtypes=True):
        """vmap of sparse_fun agrees with vmap of dense_fun on `batch_size` stacked
        arguments (sparse ones stacked along a batch dimension, at random `bdims`)."""
        if bdims is None:
            bdims = self._random_bdims(*(arg.n_batch if is_sparse(arg) else arg.ndim
                                         for arg in args_maker()))

        def concat(args, bdim):
            return sparsify(functools.partial(structural.concatenate, dimension=bdim))(args)

        def expand(arg, bdim):
            return sparsify(functools.partial(structural.expand_dims, dimensions=[bdim]))(arg)

        def batched_args_maker():
            args = list(zip(*(args_maker() for _ in range(batch_size))))
            return [arg[0] if bdim is None else concat([expand(x, bdim) for x in arg], bdim)
                    for arg, bdim in zip(args, bdims, strict=True)]
        self._CheckAgainstDense(vmap(dense_fun, bdims), vmap(sparse_fun, bdims),
                                batched_args_maker, check_dtypes=check_dtypes, tol=tol,
                                atol=atol, rtol=rtol, check_jit=check_jit,
                                canonicalize_dtypes=canonicalize_dtypes)

    def _random_bdims(self, *args):
        rng = self.rng()
        return [rng.randint(0, arg + 1) for arg in args]


def _rand_sparse(shape: Sequence[int], dtype: Any, *, rng: np.random.RandomState,
                 rand_method: Callable[..., Any], nse: int | float, n_batch: int,
                 n_dense: int, sparse_format: str) -> BCOO | BCSR:
    if sparse_format not in ["bcoo", "bcsr"]:
        raise ValueError(f"Sparse format {sparse_format} not supported.")
    n_sparse = len(shape) - n_batch - n_dense
    if n_sparse < 0 or n_batch < 0 or n_dense < 0:
        raise ValueError(f"Invalid parameters: shape={shape} n_batch={n_batch} "
                         f"n_sparse={n_sparse}")
    if sparse_format == "bcsr" and n_sparse != 2:
        raise ValueError(f"bcsr array must have 2 sparse dimensions; {n_sparse} is given.")
    batch_shape = tuple(shape[:n_batch])
    sparse_shape = tuple(shape[n_batch:n_batch + n_sparse])
    dense_shape = tuple(shape[n_batch + n_sparse:])
    if 0 <= nse < 1:
        nse = int(np.ceil(nse * np.prod(sparse_shape)))
    nse_int = int(nse)
    data = jnp.array(rand_method(rng)((*batch_shape, nse_int, *dense_shape), dtype))
    int32 = np.dtype("int32")
    if sparse_format == "bcoo":
        indices = jnp.array(rng.randint(0, sparse_shape,
                                        size=(*batch_shape, nse_int, n_sparse), dtype=int32))
        return BCOO((data, indices), shape=shape)
    indices = jnp.array(rng.randint(0, sparse_shape[1], size=(*batch_shape, nse_int),
                                    dtype=int32))
    indptr = np.sort(rng.randint(0, nse_int + 1, size=(*batch_shape, sparse_shape[0] + 1),
                                 dtype=int32), axis=-1)
    indptr = jnp.array(indptr)
    indptr = indptr.at[..., 0].set(0)
    return BCSR((data, indices, indptr), shape=shape)


def rand_bcoo(rng: np.random.RandomState, rand_method: Callable[..., Any] = rand_default,
              nse: int | float = 0.5, n_batch: int = 0, n_dense: int = 0):
    """Generates a random BCOO array."""
    return functools.partial(_rand_sparse, rng=rng, rand_method=rand_method, nse=nse,
                             n_batch=n_batch, n_dense=n_dense, sparse_format="bcoo")


def rand_bcsr(rng: np.random.RandomState, rand_method: Callable[..., Any] = rand_default,
              nse: int | float = 0.5, n_batch: int = 0, n_dense: int = 0):
    """Generates a random BCSR array."""
    return functools.partial(_rand_sparse, rng=rng, rand_method=rand_method, nse=nse,
                             n_batch=n_batch, n_dense=n_dense, sparse_format="bcsr")


def iter_subsets(s: Sequence) -> Iterable[tuple]:
    """Return an iterator over all subsets of a sequence s"""
    return itertools.chain.from_iterable(
        itertools.combinations(s, n) for n in range(len(s) + 1))


def iter_sparse_layouts(shape: Sequence[int], min_n_batch=0) -> Iterator[SparseLayout]:
    for n_batch in range(min_n_batch, len(shape) + 1):
        for n_dense in range(len(shape) + 1 - n_batch):
            n_sparse = len(shape) - n_batch - n_dense
            yield SparseLayout(n_batch=n_batch, n_sparse=n_sparse, n_dense=n_dense)


def iter_bcsr_layouts(shape: Sequence[int], min_n_batch=0) -> Iterator[SparseLayout]:
    n_sparse = 2
    for n_batch in range(min_n_batch, len(shape) - 1):
        n_dense = len(shape) - n_sparse - n_batch
        yield SparseLayout(n_batch=n_batch, n_sparse=n_sparse, n_dense=n_dense)


def rand_sparse(rng, nse=0.5, post=lambda x: x, rand_method=rand_default):
    """A function (shape, dtype) -> dense random array with about `nse` nonzeros."""
    def _rand_sparse(shape, dtype, nse=nse):
        rand = rand_method(rng)
        size = math.prod(shape)
        if 0 <= nse < 1:
            nse = nse * size
        nse = min(size, int(nse))
        M = rand(shape, dtype)
        indices = rng.choice(size, size - nse, replace=False)
        M.flat[indices] = 0
        return post(M)
    return _rand_sparse
