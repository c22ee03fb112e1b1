"""jax.experimental.sparse.sparsify: run a function written for dense arrays on BCOO
arrays, each primitive it binds taking its sparse rule where an operand is sparse.

As JAX's transform, two implementations: a jaxpr interpreter (`eval_sparse`, the
default) and a trace (`SparseTrace`, `use_tracer=True`). Both keep values in a
SparsifyEnv, a list of buffers that SparsifyValues point into (a sparse value: its data
and indices; a dense one: its data), so that rules can share a buffer between values
(a linear unary op keeps the indices buffer). Higher-order primitives (jit, while, cond,
scan) get a sub-jaxpr traced on the sparse values' flattened buffers."""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from pyjax._src import tree_util
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import Trace, Tracer, set_current_trace
from pyjax._src.api.custom_derivatives import custom_jvp_call_p
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import convolution as lconv
from pyjax._src.lax import dot as ldot
from pyjax._src.lax import elementwise as lew
from pyjax._src.lax import reductions as lred
from pyjax._src.lax import indexing as lindexing
from pyjax._src.lax import slicing
from pyjax._src.lax import special as lspecial
from pyjax._src.lax import structural as lst
from pyjax._src.lax.call import jit_p
from pyjax._src.lax.control_flow import common
from pyjax._src.lax.control_flow.conditionals import cond_p
from pyjax._src.lax.control_flow.loops import while_p
from pyjax._src.lax.control_flow.scan import scan_p
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.numpy import indexing, ufuncs
from pyjax._src.sparse import bcoo_structural as bst
from pyjax._src.sparse.api import todense_p
from pyjax._src.sparse.bcoo import BCOO, bcoo_dot_general, bcoo_fromdense, bcoo_transpose
from pyjax._src.sparse.bcsr import (
    BCSR, bcsr_broadcast_in_dim, bcsr_concatenate, bcsr_dot_general,
)
from pyjax._src.util import split_list

sparse_rules_bcoo: dict = {}
sparse_rules_bcsr: dict = {}

_zero_preserving_linear_unary_primitives = [
    lew.conj_p, lew.copy_p, lew.imag_p, lew.neg_p, lew.real_p,
]

_zero_preserving_unary_primitives = [
    lew.abs_p, lew.asin_p, lew.asinh_p, lew.atan_p, lew.atanh_p, lspecial.bessel_i1e_p,
    lew.expm1_p, lew.log1p_p, lew.sign_p, lew.sin_p, lew.sinh_p, lew.sqrt_p, lew.square_p,
    lew.tan_p, lew.tanh_p, lew.convert_element_type_p,
]

_densifying_primitives = [
    lew.acos_p, lew.acosh_p, lspecial.bessel_i0e_p, lew.cos_p, lew.cosh_p, lew.eq_p, lew.exp_p,
    lew.ge_p, lew.gt_p, lew.le_p, lew.lt_p, lew.log_p, lew.ne_p, lew.xor_p,
]


def _raise_unimplemented_primitive(primitive):
    if primitive in _densifying_primitives:
        raise NotImplementedError(
            f"sparse rule for {primitive} is not implemented because it would result in "
            "dense output. If this is your intent, use sparse.todense() to convert your "
            "arguments to dense matrices.")
    raise NotImplementedError(f"sparse rule for {primitive} is not implemented.")


class SparsifyEnv:
    """The buffers (arrays or tracers) that SparsifyValues point into; values may share
    buffers."""

    def __init__(self, bufs=()):
        self._buffers = list(bufs)

    def _push(self, arr):
        self._buffers.append(jnp.asarray(arr))
        return len(self._buffers) - 1

    def data(self, spvalue):
        """The data buffer of a SparsifyValue."""
        if spvalue.data_ref is None:
            raise RuntimeError("Internal: requested data from spvalue with data_ref=None")
        return self._buffers[spvalue.data_ref]

    def indices(self, spvalue):
        """The indices buffer of a SparsifyValue."""
        if spvalue.indices_ref is None:
            raise RuntimeError("Internal: requested indices from spvalue with "
                               "indices_ref=None")
        return self._buffers[spvalue.indices_ref]

    def indptr(self, spvalue):
        """The BCSR indptr buffer of a SparsifyValue."""
        if spvalue.indptr_ref is None:
            raise RuntimeError("Internal: requested indices from spvalue with "
                               "indptr_ref=None")
        return self._buffers[spvalue.indptr_ref]

    def dense(self, data):
        """A new dense value holding `data`."""
        return SparsifyValue(np.shape(data), self._push(data))

    def sparse(self, shape, data=None, indices=None, indptr=None, *, data_ref=None,
               indices_ref=None, indptr_ref=None, indices_sorted=False, unique_indices=False):
        """A new sparse value of `shape`: each of its buffers given, or the index of one
        already in the environment (a BCSR value has an indptr)."""
        if (data is None) == (data_ref is None) or (indices is None) == (indices_ref is None):
            raise ValueError("SparsifyEnv.sparse: give each of data and indices either as "
                             "a buffer or as a reference")
        if data is not None:
            data_ref = self._push(data)
        if indices is not None:
            indices_ref = self._push(indices)
        if indptr is not None:
            indptr_ref = self._push(indptr)
        return SparsifyValue(shape, data_ref, indices_ref, indptr_ref,
                             indices_sorted=indices_sorted, unique_indices=unique_indices)


class SparsifyValue(NamedTuple):
    shape: tuple
    data_ref: int | None
    indices_ref: int | None = None
    indptr_ref: int | None = None
    indices_sorted: bool | None = False
    unique_indices: bool | None = False

    @property
    def ndim(self):
        return len(self.shape)

    def is_sparse(self):
        return self.indices_ref is not None

    def is_dense(self):
        return self.indices_ref is None

    def is_bcoo(self):
        return self.is_sparse() and self.indptr_ref is None

    def is_bcsr(self):
        return self.is_sparse() and self.indptr_ref is not None


def _is_sparse_obj(arg):
    return isinstance(arg, (BCOO, BCSR))


def _is_spvalue(arg):
    return isinstance(arg, SparsifyValue)


def arrays_to_spvalues(spenv, args):
    """A pytree of (sparse) arrays as the same pytree of SparsifyValues in `spenv`."""
    def array_to_spvalue(arg):
        if isinstance(arg, BCOO):
            return spenv.sparse(arg.shape, arg.data, arg.indices,
                                indices_sorted=arg.indices_sorted,
                                unique_indices=arg.unique_indices)
        if isinstance(arg, BCSR):
            return spenv.sparse(arg.shape, arg.data, arg.indices, arg.indptr,
                                indices_sorted=arg.indices_sorted,
                                unique_indices=arg.unique_indices)
        return spenv.dense(arg)
    return tree_util.tree_map(array_to_spvalue, args, is_leaf=_is_sparse_obj)


def spvalues_to_arrays(spenv, spvalues):
    """A pytree of SparsifyValues as the same pytree of (sparse) arrays."""
    def spvalue_to_array(spvalue):
        if spvalue.is_bcoo():
            return BCOO((spenv.data(spvalue), spenv.indices(spvalue)), shape=spvalue.shape,
                        indices_sorted=spvalue.indices_sorted,
                        unique_indices=spvalue.unique_indices)
        if spvalue.is_bcsr():
            return BCSR((spenv.data(spvalue), spenv.indices(spvalue), spenv.indptr(spvalue)),
                        shape=spvalue.shape, indices_sorted=spvalue.indices_sorted,
                        unique_indices=spvalue.unique_indices)
        return spenv.data(spvalue)
    return tree_util.tree_map(spvalue_to_array, spvalues, is_leaf=_is_spvalue)


def spvalues_to_avals(spenv, spvalues):
    """A pytree of SparsifyValues as the same pytree of their (dense) abstract values."""
    def spvalue_to_aval(spvalue):
        data = get_aval(spenv.data(spvalue))
        return ShapedArray(spvalue.shape, data.dtype, weak_type=data.weak_type)
    return tree_util.tree_map(spvalue_to_aval, spvalues, is_leaf=_is_spvalue)


# --- sparsify with a trace --------------------------------------------------------------

class SparseTracer(Tracer):
    """A (sparse or dense) value of a SparseTrace: a SparsifyValue in its environment."""

    def __init__(self, trace, *, spvalue):
        super().__init__(trace, spvalues_to_avals(trace.spenv, [spvalue])[0])
        self._spvalue = spvalue

    @property
    def spenv(self):
        return self._trace.spenv

    def _contents(self):
        return [("spvalue", self._spvalue)]


class SparseTrace(Trace):
    """Runs each primitive's sparse rule (on the parent trace's buffers) where an
    operand is sparse, and the primitive itself on the parent trace otherwise."""

    def __init__(self, spenv, parent=None):
        super().__init__(parent)
        self.spenv = spenv

    def lift(self, x):
        with set_current_trace(self.parent):
            spvalue, = arrays_to_spvalues(self.spenv, [x])
        return SparseTracer(self, spvalue=spvalue)

    def process_primitive(self, prim, args, params):
        spvalues = [self.own_or_lift(x)._spvalue for x in args]
        with set_current_trace(self.parent):
            out_spvalues = _apply(prim, self.spenv, spvalues, params)
        out = [SparseTracer(self, spvalue=v) for v in out_spvalues]
        return out if prim.multiple_results else out[0]


def _apply(prim, spenv, spvalues, params):
    """The primitive on SparsifyValues: its sparse rule if an operand is sparse (its BCSR
    rule if one is BCSR)."""
    if any(v.is_sparse() for v in spvalues):
        rules = (sparse_rules_bcsr if any(v.is_bcsr() for v in spvalues)
                 else sparse_rules_bcoo)
        if prim not in rules:
            _raise_unimplemented_primitive(prim)
        return rules[prim](spenv, *spvalues, **params)
    out = prim.bind(*(spenv.data(v) for v in spvalues), **params)
    return [spenv.dense(x) for x in (out if prim.multiple_results else [out])]


def _sparsify_with_tracer(fun):
    @functools.wraps(fun)
    def wrapped(*args):
        args_flat, in_tree = tree_util.tree_flatten(args, is_leaf=_is_sparse_obj)
        spenv = SparsifyEnv()
        spvalues = arrays_to_spvalues(spenv, args_flat)
        trace = SparseTrace(spenv)
        try:
            with set_current_trace(trace):
                tracers = [SparseTracer(trace, spvalue=v) for v in spvalues]
                out = fun(*tree_util.tree_unflatten(in_tree, tracers))
                out_flat, out_tree = tree_util.tree_flatten(out)
                out_spvalues = [trace.own_or_lift(x)._spvalue for x in out_flat]
        finally:
            trace.end()
        return tree_util.tree_unflatten(out_tree, spvalues_to_arrays(spenv, out_spvalues))
    return wrapped


# --- sparsify with a jaxpr interpreter --------------------------------------------------

def eval_sparse(jaxpr, consts, spvalues, spenv):
    """Evaluates `jaxpr` on SparsifyValues (its consts dense); returns those of its
    outputs."""
    env = {}

    def read(var):
        if type(var) is jx.Literal:
            return spenv.dense(var.value())
        return env[var]

    def write(var, spvalue):
        if type(var) is not jx.DropVar:
            env[var] = spvalue

    for var, const in zip(jaxpr.constvars, consts):
        write(var, spenv.dense(const))
    if len(spvalues) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(spvalues)}")
    for var, spvalue in zip(jaxpr.invars, spvalues):
        write(var, spvalue)
    for eqn in jaxpr.eqns:
        outs = _apply(eqn.primitive, spenv, [read(v) for v in eqn.invars], eqn.params)
        for var, spvalue in zip(eqn.outvars, outs):
            write(var, spvalue)
    return [read(v) for v in jaxpr.outvars]


def sparsify_raw(f):
    """f as a function of (spenv, *spvalues, **params) returning (out spvalues, out
    tree): f is traced to a jaxpr on the values' abstract values, then interpreted."""
    def wrapped(spenv, *spvalues, **params):
        spvalues_flat, in_tree = tree_util.tree_flatten(spvalues, is_leaf=_is_spvalue)
        in_avals_flat = spvalues_to_avals(spenv, spvalues_flat)
        box = {}

        def flat_fun(*args_flat):
            out = f(*tree_util.tree_unflatten(in_tree, args_flat), **params)
            out_flat, box["tree"] = tree_util.tree_flatten(out)
            return out_flat
        jaxpr, consts = pe.trace_to_jaxpr(flat_fun, in_avals_flat,
                                          pe.debug_info_of(f))
        return eval_sparse(jaxpr, consts, spvalues_flat, spenv), box["tree"]
    return wrapped


def _sparsify_with_interpreter(f):
    f_raw = sparsify_raw(f)

    @functools.wraps(f)
    def wrapped(*args, **params):
        spenv = SparsifyEnv()
        spvalues = arrays_to_spvalues(spenv, args)
        spvalues_out, out_tree = f_raw(spenv, *spvalues, **params)
        return tree_util.tree_unflatten(out_tree, spvalues_to_arrays(spenv, spvalues_out))
    return wrapped


def sparsify(f, use_tracer=False):
    """Experimental sparsification transform: `f`, written for dense arrays, taking BCOO
    arrays too (each primitive it binds must have a sparse rule where an operand is
    sparse). With `use_tracer`, it runs as a trace instead of a jaxpr interpreter."""
    if use_tracer:
        return _sparsify_with_tracer(f)
    return _sparsify_with_interpreter(f)


# --- sparse rules -----------------------------------------------------------------------

def _ensure_unique_indices(spenv, spvalue):
    """`spvalue` with its duplicate indices summed (if it may have some)."""
    if spvalue.is_dense() or spvalue.unique_indices:
        return spvalue
    arr = spvalues_to_arrays(spenv, spvalue)
    arr = arr.sum_duplicates(nse=arr.nse, remove_zeros=False)
    return arrays_to_spvalues(spenv, arr)


def _zero_preserving_unary_op(prim, linear):
    def rule(spenv, spvalue, **params):
        if not linear:   # f(a) + f(b) != f(a + b): sum duplicates first
            spvalue = _ensure_unique_indices(spenv, spvalue)
        buf_out = prim.bind(spenv.data(spvalue), **params)
        return [spenv.sparse(spvalue.shape, buf_out, indices_ref=spvalue.indices_ref,
                             indptr_ref=spvalue.indptr_ref,
                             indices_sorted=spvalue.indices_sorted,
                             unique_indices=spvalue.unique_indices)]
    return rule


for _prim in _zero_preserving_unary_primitives:
    sparse_rules_bcoo[_prim] = sparse_rules_bcsr[_prim] = _zero_preserving_unary_op(
        _prim, linear=False)
for _prim in _zero_preserving_linear_unary_primitives:
    sparse_rules_bcoo[_prim] = sparse_rules_bcsr[_prim] = _zero_preserving_unary_op(
        _prim, linear=True)


def _standard_sparse_rule(prim, sparse_op):
    def rule(spenv, *spvalues, **params):
        result = sparse_op(*spvalues_to_arrays(spenv, spvalues), **params)
        return arrays_to_spvalues(spenv, result if prim.multiple_results else [result])
    return rule


_BCOO_STANDARD_PRIMITIVES = {
    lst.broadcast_in_dim_p: bst.bcoo_broadcast_in_dim,
    lst.concatenate_p: lambda *a, **k: bst.bcoo_concatenate(a, **k),
    lconv.conv_general_dilated_p: bst.bcoo_conv_general_dilated,
    lst.reshape_p: bst.bcoo_reshape,
    lst.rev_p: bst.bcoo_rev,
    lst.squeeze_p: bst.bcoo_squeeze,
    slicing.slice_p: bst.bcoo_slice,
    slicing.dynamic_slice_p: lambda *a, **k: bst.bcoo_dynamic_slice(a[0], a[1:], **k),
}

for _prim, _impl in _BCOO_STANDARD_PRIMITIVES.items():
    sparse_rules_bcoo[_prim] = _standard_sparse_rule(_prim, _impl)


_BCSR_STANDARD_PRIMITIVES = {
    lst.broadcast_in_dim_p: bcsr_broadcast_in_dim,
    lst.concatenate_p: lambda *a, **k: bcsr_concatenate(a, **k),
}

for _prim, _impl in _BCSR_STANDARD_PRIMITIVES.items():
    sparse_rules_bcsr[_prim] = _standard_sparse_rule(_prim, _impl)


def _dot_general_rule(dot_general):
    def rule(spenv, lhs, rhs, **params):
        result = dot_general(*spvalues_to_arrays(spenv, (lhs, rhs)), **params)
        return arrays_to_spvalues(spenv, [result])
    return rule


sparse_rules_bcoo[ldot.dot_general_p] = _dot_general_rule(bcoo_dot_general)
sparse_rules_bcsr[ldot.dot_general_p] = _dot_general_rule(bcsr_dot_general)


def _integer_pow_sparse(spenv, spvalue, *, y):
    if y <= 0:
        raise NotImplementedError(
            f"sparse rule for {lew.integer_pow_p} with non-positive exponent {y} is not "
            "implemented because it would result in dense output. If this is your intent, "
            "use sparse.todense() to convert your argument to a dense array.")
    return _zero_preserving_unary_op(lew.integer_pow_p, False)(spenv, spvalue, y=y)


sparse_rules_bcoo[lew.integer_pow_p] = sparse_rules_bcsr[lew.integer_pow_p] = \
    _integer_pow_sparse


def _transpose_sparse(spenv, spvalue, *, permutation):
    permutation = tuple(permutation)
    mat = spvalues_to_arrays(spenv, spvalue)
    mat_t = bcoo_transpose(mat, permutation=permutation)
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    batch_same = permutation[:n_batch] == tuple(range(n_batch))
    dense_same = (permutation[n_batch + n_sparse:]
                  == tuple(range(n_batch + n_sparse, mat.ndim)))
    sparse_same = (permutation[n_batch:n_batch + n_sparse]
                   == tuple(range(n_batch, n_batch + n_sparse)))
    # a buffer the permutation leaves as it was is shared
    kwds = ({"data_ref": spvalue.data_ref} if batch_same and dense_same
            else {"data": mat_t.data})
    kwds.update({"indices_ref": spvalue.indices_ref} if batch_same and sparse_same
                else {"indices": mat_t.indices})
    return [spenv.sparse(tuple(mat.shape[i] for i in permutation), **kwds,
                         indices_sorted=mat_t.indices_sorted,
                         unique_indices=mat_t.unique_indices)]


sparse_rules_bcoo[lst.transpose_p] = _transpose_sparse


def _add_sparse(spenv, x, y):
    out_shape = jnp.broadcast_shapes(x.shape, y.shape)
    if x.is_sparse() and y.is_sparse():
        if x.shape != y.shape:
            raise NotImplementedError("Addition between sparse matrices of different shapes.")
        if x.indices_ref == y.indices_ref:
            out_data = lew.add(spenv.data(x), spenv.data(y))
            return [spenv.sparse(x.shape, out_data, indices_ref=x.indices_ref,
                                 indices_sorted=x.indices_sorted,
                                 unique_indices=x.unique_indices)]
        x_ind, y_ind = spenv.indices(x), spenv.indices(y)
        if x_ind.ndim != y_ind.ndim or spenv.data(x).ndim != spenv.data(y).ndim:
            raise NotImplementedError("Addition between sparse matrices with different "
                                      "batch/dense dimensions.")
        # the sum stores the entries of both
        out_indices = lst.concatenate([x_ind, y_ind], x_ind.ndim - 2)
        out_data = lst.concatenate([spenv.data(x), spenv.data(y)], x_ind.ndim - 2)
        return [spenv.sparse(x.shape, out_data, out_indices)]
    if y.is_sparse():
        x, y = y, x
    if y.shape != out_shape:
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented when "
            "the output shape is larger than Y.shape. This is to prevent silent "
            "densification of a large sparse array. If this is your intent, you can "
            "explicitly cast the sparse array to a dense matrix.")
    x_arr, y_arr = spvalues_to_arrays(spenv, (x, y))
    return [spenv.dense(x_arr.todense() + y_arr)]


sparse_rules_bcoo[lew.add_p] = _add_sparse


def _sub_sparse(spenv, x, y):
    if x.is_sparse() and y.is_sparse():
        return _add_sparse(spenv, x, *sparse_rules_bcoo[lew.neg_p](spenv, y))
    raise NotImplementedError("Subtraction between sparse and dense array.")


sparse_rules_bcoo[lew.sub_p] = _sub_sparse


def _mul_sparse(spenv, x, y):
    if x.is_sparse() and y.is_sparse():
        if x.indices_ref == y.indices_ref and x.unique_indices:
            out_data = lew.mul(spenv.data(x), spenv.data(y))
            return [spenv.sparse(x.shape, out_data, indices_ref=x.indices_ref,
                                 indices_sorted=x.indices_sorted, unique_indices=True)]
        mat = bst.bcoo_multiply_sparse(*spvalues_to_arrays(spenv, (x, y)))
        return [spenv.sparse(mat.shape, mat.data, mat.indices)]
    if y.is_sparse():
        x, y = y, x
    out_data = bst.bcoo_multiply_dense(spvalues_to_arrays(spenv, x), spenv.data(y))
    return [spenv.sparse(x.shape, out_data, indices_ref=x.indices_ref,
                         indices_sorted=x.indices_sorted, unique_indices=x.unique_indices)]


sparse_rules_bcoo[lew.mul_p] = _mul_sparse


def _div_sparse(spenv, x, y):
    if y.is_sparse():
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in "
            "dense output. If this is your intent, use sparse.todense() to convert your "
            "arguments to a dense array.")
    out_data = bst.bcoo_multiply_dense(spvalues_to_arrays(spenv, x), 1. / spenv.data(y))
    return [spenv.sparse(x.shape, out_data, indices_ref=x.indices_ref,
                         indices_sorted=x.indices_sorted, unique_indices=x.unique_indices)]


sparse_rules_bcoo[lew.div_p] = _div_sparse


def _reduce_sum_sparse(spenv, spvalue, *, axes, out_sharding=None):
    mat = bst.bcoo_reduce_sum(spvalues_to_arrays(spenv, spvalue), axes=axes)
    if mat.shape == ():
        return [spenv.dense(mat.data.sum())]
    return [spenv.sparse(mat.shape, mat.data, mat.indices)]


sparse_rules_bcoo[lred.reduce_sum_p] = _reduce_sum_sparse


def _gather_sparse_rule(spenv, *spvalues, **params):
    operand, start_indices = spvalues_to_arrays(spenv, spvalues)
    return arrays_to_spvalues(spenv, [bst.bcoo_gather(operand, start_indices, **params)])


sparse_rules_bcoo[lindexing.gather_p] = _gather_sparse_rule


def _sparsify_jaxpr(spenv, closed, *spvalues):
    """`closed` as a closed jaxpr on the flattened (sparse) arrays of `spvalues`,
    evaluating it sparsely; returns it and the tree of its (sparse) outputs."""
    args_flat, in_tree = tree_util.tree_flatten(spvalues_to_arrays(spenv, spvalues))
    box = {}

    def wrapped(*flat):
        inner = SparsifyEnv()
        inner_spvalues = arrays_to_spvalues(inner, tree_util.tree_unflatten(in_tree, flat))
        result = eval_sparse(closed.jaxpr, closed.consts, inner_spvalues, inner)
        out_flat, box["tree"] = tree_util.tree_flatten(spvalues_to_arrays(inner, result))
        return out_flat
    sp_closed = common.trace_closed(wrapped, [get_aval(x) for x in args_flat])
    return sp_closed, box["tree"]


def _flat_arrays(spenv, spvalues):
    return tree_util.tree_flatten(spvalues_to_arrays(spenv, spvalues))


def _while_sparse(spenv, *spvalues, cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    cond_consts, body_consts, init = split_list(list(spvalues), [cond_nconsts, body_nconsts])
    cond_sp, _ = _sparsify_jaxpr(spenv, cond_jaxpr, *cond_consts, *init)
    body_sp, out_tree = _sparsify_jaxpr(spenv, body_jaxpr, *body_consts, *init)
    cond_flat, _ = _flat_arrays(spenv, cond_consts)
    body_flat, _ = _flat_arrays(spenv, body_consts)
    init_flat, init_tree = _flat_arrays(spenv, init)
    if out_tree != init_tree:
        raise TypeError("sparsified while_loop body must return the sparsity structure of "
                        f"its input carry: got {out_tree}, expected {init_tree}")
    out = while_p.bind(*cond_flat, *body_flat, *init_flat, cond_nconsts=len(cond_flat),
                       cond_jaxpr=cond_sp, body_nconsts=len(body_flat), body_jaxpr=body_sp)
    return arrays_to_spvalues(spenv, tree_util.tree_unflatten(out_tree, out))


sparse_rules_bcoo[while_p] = _while_sparse


def _jit_sparse(spenv, *spvalues, jaxpr, donated_invars, **params):
    if any(donated_invars):
        raise NotImplementedError("sparse xla_call with donated_invars")
    sp_jaxpr, out_tree = _sparsify_jaxpr(spenv, jaxpr, *spvalues)
    args_flat, _ = _flat_arrays(spenv, spvalues)
    out = jit_p.bind(*args_flat, jaxpr=sp_jaxpr, donated_invars=(False,) * len(args_flat),
                     **params)
    return arrays_to_spvalues(spenv, tree_util.tree_unflatten(out_tree, out))


sparse_rules_bcoo[jit_p] = _jit_sparse


def _scan_sparse(spenv, *spvalues, jaxpr, num_consts, num_carry, linear, **params):
    consts, carry, xs = split_list(list(spvalues), [num_consts, num_carry])
    if xs:
        raise NotImplementedError("sparse rule for scan with x values.")
    sp_jaxpr, _ = _sparsify_jaxpr(spenv, jaxpr, *consts, *carry)
    consts_flat, _ = _flat_arrays(spenv, consts)
    carry_flat, carry_tree = _flat_arrays(spenv, carry)
    n = len(consts_flat) + len(carry_flat)
    out = scan_p.bind(*consts_flat, *carry_flat, jaxpr=sp_jaxpr, num_consts=len(consts_flat),
                      num_carry=len(carry_flat), linear=(False,) * n, **params)
    return arrays_to_spvalues(spenv, tree_util.tree_unflatten(carry_tree, out))


sparse_rules_bcoo[scan_p] = _scan_sparse


def _cond_sparse(spenv, index, *operands, branches):
    traced = [_sparsify_jaxpr(spenv, branch, *operands) for branch in branches]
    (first, tree), rest = traced[0], traced[1:]
    what1, what2 = "sparsified true_fun output", "sparsified false_fun output"
    for other, other_tree in rest:
        if other_tree != tree:
            raise TypeError(f"{what1} must have same type structure as {what2}, but there "
                            f"are differences: {tree} and {other_tree}")
        if other.out_avals != first.out_avals:
            raise TypeError(f"{what1} and {what2} must have identical types, got "
                            f"{first.out_avals} and {other.out_avals}.")
    args, _ = _flat_arrays(spenv, (index, *operands))
    out = cond_p.bind(*args, branches=tuple(closed for closed, _ in traced))
    return arrays_to_spvalues(spenv, tree_util.tree_unflatten(tree, out))


sparse_rules_bcoo[cond_p] = _cond_sparse


def _todense_sparse_rule(spenv, spvalue, *, tree):
    return [spenv.dense(spvalues_to_arrays(spenv, spvalue).todense())]


sparse_rules_bcoo[todense_p] = sparse_rules_bcsr[todense_p] = _todense_sparse_rule


def _custom_jvp_sparse_rule(spenv, *spvalues, call_jaxpr, num_consts, **params):
    # the function itself, sparsified (as JAX's trace does; the custom rule is dropped)
    return eval_sparse(call_jaxpr.jaxpr, call_jaxpr.consts, list(spvalues), spenv)


sparse_rules_bcoo[custom_jvp_call_p] = sparse_rules_bcsr[custom_jvp_call_p] = \
    _custom_jvp_sparse_rule


# --- BCOO methods derived from sparsify ------------------------------------------------
# (set here, as JAX does, since sparsify is built on the BCOO functions)

def _sum(self, *args, **kwargs):
    """Sum array along axis."""
    return sparsify(lambda x: x.sum(*args, **kwargs))(self)


def _reshape(self, *args, **kwargs):
    """Returns an array containing the same data with a new shape."""
    return sparsify(lambda x: x.reshape(*args, **kwargs))(self)


def _astype(self, *args, **kwargs):
    """Copy the array and cast to a specified dtype."""
    return sparsify(lambda x: x.astype(*args, **kwargs))(self)


def _bcoo_rewriting_take(arr, idx):
    result = sparsify(functools.partial(indexing.getitem, idx=idx))(arr)
    # an empty result comes out of the indexing as a dense array
    if not isinstance(result, BCOO) and np.size(result) == 0:
        result = bcoo_fromdense(result)
    return result


def _bcsr_rewriting_take(arr, idx):
    return sparsify(functools.partial(indexing.getitem, idx=idx))(arr)


def _sparse_iter(arr):
    return iter(arr[i] for i in range(arr.shape[0]))


def _swap_args(f):
    return lambda a, b: f(b, a)


_bcoo_methods: dict[str, Any] = {
    "astype": _astype,
    "reshape": _reshape,
    "sum": _sum,
    "__abs__": sparsify(ufuncs.abs),
    "__neg__": sparsify(ufuncs.negative),
    "__pos__": sparsify(ufuncs.positive),
    "__matmul__": sparsify(jnp.matmul),
    "__rmatmul__": sparsify(_swap_args(jnp.matmul)),
    "__mul__": sparsify(ufuncs.multiply),
    "__rmul__": sparsify(_swap_args(ufuncs.multiply)),
    "__truediv__": sparsify(ufuncs.divide),
    "__rtruediv__": sparsify(_swap_args(ufuncs.divide)),
    "__add__": sparsify(ufuncs.add),
    "__radd__": sparsify(_swap_args(ufuncs.add)),
    "__sub__": sparsify(ufuncs.subtract),
    "__rsub__": sparsify(_swap_args(ufuncs.subtract)),
    "__pow__": lambda x, y: sparsify(lambda x: ufuncs.power(x, y))(x),
    "__rpow__": sparsify(_swap_args(ufuncs.power)),
    "__getitem__": _bcoo_rewriting_take,
    "__iter__": _sparse_iter,
    "__gt__": sparsify(ufuncs.greater),
    "__ge__": sparsify(ufuncs.greater_equal),
    "__lt__": sparsify(ufuncs.less),
    "__le__": sparsify(ufuncs.less_equal),
    "__eq__": sparsify(ufuncs.equal),
    "__ne__": sparsify(ufuncs.not_equal),
}

for _method, _fn in _bcoo_methods.items():
    setattr(BCOO, _method, _fn)
for _method in ("__matmul__", "__rmatmul__"):
    setattr(BCSR, _method, _bcoo_methods[_method])
BCSR.__getitem__ = _bcsr_rewriting_take
