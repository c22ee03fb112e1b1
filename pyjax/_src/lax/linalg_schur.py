"""The Schur decomposition primitive: a = Z T Z^H with Z unitary and T upper triangular
(quasi-triangular, with 2x2 blocks for complex pairs, for real input). Runs on CPU only
(LAPACK gees), has no derivative, as in JAX. Imports core, backends.stablehlo and the
linalg family's helpers."""
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


def _schur_abstract_eval(x, *, compute_schur_vectors):
    _check_matrix("schur", x, square=True)
    out = x.strip_weak_type()
    return [out, out] if compute_schur_vectors else [out]


def _schur_impl(x, *, compute_schur_vectors):
    from scipy.linalg import schur as scipy_schur
    output = "complex" if dtypes.is_complex(x.dtype) else "real"
    template = np.empty(x.shape[-2:], x.dtype)
    outs = host_batched(lambda m: list(scipy_schur(m, output=output, check_finite=False)),
                        x, [template, template])
    return outs if compute_schur_vectors else outs[:1]


def _lower_schur(ctx, x, *, compute_schur_vectors):
    aval = x.aval
    info = _info_aval(aval)
    values = ShapedArray(aval.shape[:-1], aval.dtype)
    if dtypes.is_complex(aval.dtype):
        results, kinds = [aval, aval, values, info, info], "mmmvvv"
    else:
        results, kinds = [aval, aval, values, values, info, info], "mmmvvvv"
    outs = lower_lapack(ctx, "gees", [x], results, kinds,
                        mode="V" if compute_schur_vectors else "N", sort="N")
    t, z, info_out = outs[0], outs[1], outs[-1]
    found = [t, z] if compute_schur_vectors else [t]
    return [_lower_nan_unless_ok(ctx, o, info_out) for o in found]


def _schur_samples():
    f = np.float32
    rotation = np.array([[0.0, -2.0, 0.1], [1.0, 0.0, 0.2], [0.0, 0.3, 1.5]], f)
    return [b.Sample([b.random_values((4, 4), f)], {"compute_schur_vectors": True}),
            b.Sample([rotation], {"compute_schur_vectors": False}),
            b.Sample([b.random_values((2, 3, 3), f)], {"compute_schur_vectors": True}),
            b.Sample([b.random_values((3, 3), np.complex64)], {"compute_schur_vectors": True})]


schur_p = define_primitive("schur", multiple_results=True, impl=_schur_impl,
                           abstract_eval=sharding_rules.typed(
                               _schur_abstract_eval, sharding_rules.linalg("schur")),
                           jvp=NOT_DIFFERENTIABLE,
                           lower=_lower_schur, samples=lambda: _schur_samples(),
                           batch=_leading_batch_rule)


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """The Schur form (t, z) of square matrices: x = z t z^H. Eigenvalue sorting is not
    supported, as in JAX's CPU implementation."""
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented.")
    return tuple(schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors)))
