"""Reduction of a symmetric/Hermitian matrix to tridiagonal form by Householder
reflections: a = Q T Q^H (LAPACK sytrd/hetrd), as jax.lax.linalg.tridiagonal. Runs on CPU
only and has no derivative, as in JAX. Imports core and the linalg family's helpers."""
from __future__ import annotations

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace import NOT_DIFFERENTIABLE, define_primitive
from pyjax._src.lax import builders as b
from pyjax._src.lax import sharding_rules
from pyjax._src.lax.linalg import (
    _check_matrix, _info_aval, _leading_batch_rule, _lower_nan_unless_ok, host_batched,
    lower_lapack,
)


def _tridiagonal_avals(x):
    n = x.shape[-1]
    batch = x.shape[:-2]
    real = np.dtype(dtypes.real_dtype(x.dtype))
    return [x.strip_weak_type(), ShapedArray(batch + (n,), real),
            ShapedArray(batch + (n - 1,), real), ShapedArray(batch + (n - 1,), x.dtype)]


def _tridiagonal_abstract_eval(x, *, lower):
    _check_matrix("tridiagonal", x, square=True)
    if x.shape[-1] == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix of size at "
                         f"least 1, got shape {x.shape}.")
    return _tridiagonal_avals(x)


def _tridiagonal_impl(x, *, lower):
    from scipy.linalg import lapack
    routine = lapack.get_lapack_funcs("hetrd" if dtypes.is_complex(x.dtype) else "sytrd",
                                      dtype=x.dtype)

    def reduce(a):
        c, d, e, tau, info = routine(a, lower=int(lower))
        if info != 0:
            raise np.linalg.LinAlgError(f"{routine.__name__} failed with info={info}")
        return [c, d, e, tau]
    one_matrix = ShapedArray(x.shape[-2:], x.dtype)
    return host_batched(reduce, x, [np.empty(a.shape, a.dtype)
                                    for a in _tridiagonal_avals(one_matrix)])


def _lower_tridiagonal(ctx, x, *, lower):
    routine = "hetrd" if dtypes.is_complex(x.aval.dtype) else "sytrd"
    outs = lower_lapack(ctx, routine, [x], [*ctx.avals_out, _info_aval(x.aval)], "mmvvvv",
                        uplo="L" if lower else "U")
    return [_lower_nan_unless_ok(ctx, o, outs[-1]) for o in outs[:-1]]


def _tridiagonal_samples():
    f = np.float32
    return [b.Sample([b.random_values((4, 4), f)], {"lower": True}),
            b.Sample([b.random_values((2, 3, 3), f)], {"lower": False}),
            b.Sample([b.random_values((1, 1), f)], {"lower": True}),
            b.Sample([b.random_values((3, 3), np.complex64)], {"lower": True})]


tridiagonal_p = define_primitive(
    "tridiagonal", multiple_results=True, impl=_tridiagonal_impl,
    abstract_eval=sharding_rules.typed(
        _tridiagonal_abstract_eval, sharding_rules.linalg("tridiagonal")),
    jvp=NOT_DIFFERENTIABLE,
    lower=_lower_tridiagonal, samples=lambda: _tridiagonal_samples(),
    batch=_leading_batch_rule)


def tridiagonal(a, *, lower=True):
    """Reduces symmetric/Hermitian matrices to tridiagonal form: (a, d, e, taus) with d
    the diagonal, e the first sub- (lower) or super-diagonal (upper), and a's other
    strict triangle and taus the Householder reflectors, as LAPACK's sytrd/hetrd. Only
    the `lower` (or upper) triangle of a is read."""
    return tuple(tridiagonal_p.bind(a, lower=bool(lower)))
