"""Sparse-aware autodiff (jax.experimental.sparse.grad, value_and_grad, jacfwd, jacrev,
jacobian): with respect to a sparse argument, only its data buffer is differentiated
(the derivative lives in the subspace of its sparsity pattern), and the result is a
sparse array with the argument's indices. JAX's algorithm, on the public autodiff API."""
from __future__ import annotations

import functools
import itertools
import operator

from pyjax._src import tree_util
from pyjax._src.api import autodiff
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.sparse.base import JAXSparse
from pyjax._src.sparse.bcoo import BCOO


def is_sparse(x):
    return isinstance(x, JAXSparse)


def _index_tuple(argnums):
    if isinstance(argnums, (tuple, list)):
        return tuple(operator.index(a) for a in argnums)
    return (operator.index(argnums),)


def _split(seq, sizes):
    seq, out = list(seq), []
    for n in sizes:
        out.append(seq[:n])
        seq = seq[n:]
    return out


def flatten_fun_for_sparse_ad(fun, argnums, args):
    """(fun of the flat buffers, the argnums of the buffers to differentiate, the flat
    buffers, a function rebuilding the gradients as the arguments' structure)."""
    argnums_tup = _index_tuple(argnums)
    if not all(0 <= a < len(args) for a in argnums_tup):
        raise ValueError(f"argnums {argnums} out of range for {len(args)} arguments")
    # flatten to sparse and dense objects, then to buffers; for a sparse argument only
    # its first buffer (the data) is differentiated
    args_flat1, tree1 = tree_util.tree_flatten(args, is_leaf=is_sparse)
    leaf_argnums1 = _split(range(tree1.num_leaves),
                           [child.num_leaves for child in tree1.children()])
    argnums_flat1 = list(itertools.chain.from_iterable(
        nums for i, nums in enumerate(leaf_argnums1) if i in argnums_tup))
    args_flat, tree2 = tree_util.tree_flatten(args_flat1)
    leaf_argnums2 = _split(range(tree2.num_leaves),
                           [child.num_leaves for child in tree2.children()])
    leaf_argnums2 = [nums[:1] if is_sparse(arg) else nums
                     for arg, nums in zip(args_flat1, leaf_argnums2)]
    argnums_flat = tuple(itertools.chain.from_iterable(
        nums for i, nums in enumerate(leaf_argnums2) if i in argnums_flat1))

    def fun_flat(*args_flat, **kwargs):
        args = tree_util.tree_unflatten(tree1, tree_util.tree_unflatten(tree2, args_flat))
        return fun(*args, **kwargs)

    def reconstruct(i, grad_out):
        arg = args_flat1[i]
        bufs, tree = tree_util.tree_flatten(arg)
        extra = grad_out.ndim - bufs[0].ndim
        if not is_sparse(arg) or extra == 0:
            return tree_util.tree_unflatten(tree, [grad_out, *bufs[1:]])
        if not isinstance(arg, BCOO):
            raise NotImplementedError(
                f"sparse Jacobians with respect to a {type(arg).__name__} array: its "
                "derivatives cannot gain batch dimensions (use BCOO)")
        # the output's dimensions become leading batch dimensions, over which the
        # indices are shared (what vmapping the BCOO constructor gives in JAX)
        batch = grad_out.shape[:extra]
        indices = jnp.broadcast_to(arg.indices, batch + arg.indices.shape)
        return BCOO((grad_out, indices), shape=batch + arg.shape,
                    indices_sorted=arg.indices_sorted, unique_indices=arg.unique_indices)

    def postprocess_gradients(grads_out):
        leaf_grads = [None] * tree1.num_leaves
        for i, g in zip(argnums_flat1, grads_out):
            leaf_grads[i] = reconstruct(i, g)
        grad_tree = tree_util.tree_unflatten(tree1, leaf_grads)
        grad_tree = tuple(x for x in grad_tree if tree_util.tree_leaves(x))
        return grad_tree[0] if len(grad_tree) == 1 else grad_tree

    return fun_flat, argnums_flat, args_flat, postprocess_gradients


def value_and_grad(fun, argnums=0, has_aux=False, **kwargs):
    """Sparse-aware jax.value_and_grad."""
    _index_tuple(argnums)

    @functools.wraps(fun)
    def value_and_grad_fun(*args, **kw):
        fun_flat, argnums_flat, args_flat, post = flatten_fun_for_sparse_ad(fun, argnums, args)
        val_out, grad_out = autodiff.value_and_grad(
            fun_flat, argnums=argnums_flat, has_aux=has_aux, **kwargs)(*args_flat, **kw)
        return val_out, post(grad_out)
    return value_and_grad_fun


def _sparse_derivative(transform):
    def derivative(fun, argnums=0, has_aux=False, **kwargs):
        _index_tuple(argnums)

        @functools.wraps(fun)
        def derivative_fun(*args, **kw):
            fun_flat, argnums_flat, args_flat, post = flatten_fun_for_sparse_ad(
                fun, argnums, args)
            out = transform(fun_flat, argnums=argnums_flat, has_aux=has_aux,
                            **kwargs)(*args_flat, **kw)
            return (post(out[0]), out[1]) if has_aux else post(out)
        return derivative_fun
    derivative.__name__ = transform.__name__
    derivative.__doc__ = f"Sparse-aware jax.{transform.__name__}."
    return derivative


grad = _sparse_derivative(autodiff.grad)
jacfwd = _sparse_derivative(autodiff.jacfwd)
jacrev = _sparse_derivative(autodiff.jacrev)
jacobian = jacrev
