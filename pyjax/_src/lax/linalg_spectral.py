"""Spectral linear-algebra primitives: eigh, svd and eig (leading dimensions are batch
dimensions). Impls call SciPy's LAPACK; XLA runs jaxlib's LAPACK custom calls. Imports
core, interpreters, backends.stablehlo and the lax families (linalg for shared helpers)."""
from __future__ import annotations

import enum
import warnings

import numpy as np

from pyjax._src import dtypes
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.lax import builders as b
from pyjax._src.lax import sharding_rules
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as red
from pyjax._src.lax import structural as st
from pyjax._src.lax.linalg import (
    _H, _as, _check_matrix, _diag_embed, _diagonal, _eye, _hermitian_from_triangle,
    _info_aval, _leading_batch_rule, _lower_nan_unless_ok, _matmul, host_batched,
    lower_lapack, solve,
)


# --- eigh -----------------------------------------------------------------------------------

class EighImplementation(enum.Enum):
    """The eigh algorithm: QR (LAPACK's, the CPU default), JACOBI (GPU and TPU only) or
    QDWH (TPU only)."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


def _check_eigh_algorithm(algorithm):
    """JAX's errors for the algorithms CPU lacks, raised when eigh runs or compiles."""
    if algorithm == EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    if algorithm == EighImplementation.JACOBI:
        raise NotImplementedError("Jacobi implementation is not supported on CPU")


def _eigh_abstract_eval(x, *, lower, sort_eigenvalues, subset_by_index, algorithm=None):
    _check_matrix("eigh", x, square=True)
    n = x.shape[-1]
    if subset_by_index is not None:
        lo, hi = subset_by_index
        if not 0 <= lo <= hi <= n:
            raise ValueError(f"eigh subset_by_index {subset_by_index} must satisfy "
                             f"0 <= lo <= hi <= {n}")
        n = hi - lo
    batch = x.shape[:-2]
    return [ShapedArray(batch + (x.shape[-1], n), x.dtype),
            ShapedArray(batch + (n,), dtypes.real_dtype(x.dtype))]


def _eigh_impl(x, *, lower, sort_eigenvalues, subset_by_index, algorithm=None):
    _check_eigh_algorithm(algorithm)
    from scipy.linalg import eigh as scipy_eigh
    n = x.shape[-1]
    w, v = host_batched(lambda a: scipy_eigh(a, lower=lower, driver="evd",
                                             check_finite=False),
                        x, [np.empty(n, dtypes.real_dtype(x.dtype)), np.empty((n, n), x.dtype)])
    if subset_by_index is not None:
        lo, hi = subset_by_index
        w, v = w[..., lo:hi], v[..., lo:hi]
    return [v, w]


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index,
              algorithm=None):
    (x,), (dx,) = primals, tangents
    if subset_by_index is not None and subset_by_index[1] - subset_by_index[0] != \
            get_aval(x).shape[-1]:
        raise NotImplementedError("the derivative of eigh with subset_by_index is not "
                                  "implemented")
    v, w = eigh_p.bind(x, algorithm=algorithm, lower=lower,
                       sort_eigenvalues=sort_eigenvalues, subset_by_index=subset_by_index)
    dtype = get_aval(x).dtype
    sigma = _hermitian_from_triangle(dx, lower)
    vh_dx_v = _matmul(_matmul(_H(v), sigma), v)
    n = get_aval(w).shape[-1]
    shape = get_aval(w).shape[:-1] + (n, n)
    eye = _eye(shape, get_aval(w).dtype)
    nd = len(shape)
    w_cols = st.broadcast_in_dim(w, shape, tuple(range(nd - 2)) + (nd - 1,))
    w_rows = st.broadcast_in_dim(w, shape, tuple(range(nd - 1)))
    # F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it.
    f = ew.sub(ew.div(np.array(1, get_aval(w).dtype), ew.add(eye, ew.sub(w_cols, w_rows))),
               eye)
    dv = _matmul(v, ew.mul(_as(f, dtype), vh_dx_v))
    dw = _diagonal(vh_dx_v)
    dw = ew.real(dw) if dtypes.is_complex(dtype) else dw
    return [v, w], [dv, dw]


def _lower_eigh(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm=None):
    _check_eigh_algorithm(algorithm)
    batch, n = x.aval.shape[:-2], x.aval.shape[-1]
    routine = "heevd" if dtypes.is_complex(x.aval.dtype) else "syevd"
    v, w, info = lower_lapack(
        ctx, routine, [x], [x.aval.strip_weak_type(),
                            ShapedArray(batch + (n,), dtypes.real_dtype(x.aval.dtype)),
                            _info_aval(x.aval)], "mmvv", mode="V",
        uplo="L" if lower else "U")
    v, w = _lower_nan_unless_ok(ctx, v, info), _lower_nan_unless_ok(ctx, w, info)
    if subset_by_index is not None:
        lo, hi = subset_by_index
        nd = len(batch) + 1
        w = ctx.op("stablehlo.slice", [w], ctx.avals_out[1],
                   {"start_indices": hlo.i64_array([0] * (nd - 1) + [lo]),
                    "limit_indices": hlo.i64_array(batch + (hi,)),
                    "strides": hlo.i64_array([1] * nd)})
        v = ctx.op("stablehlo.slice", [v], ctx.avals_out[0],
                   {"start_indices": hlo.i64_array([0] * nd + [lo]),
                    "limit_indices": hlo.i64_array(batch + (n, hi)),
                    "strides": hlo.i64_array([1] * (nd + 1))})
    return [v, w]


def _sym(shape, dtype, seed=0):
    a = b.random_values(shape, dtype, seed=seed)
    n = shape[-1]
    return (a + np.conj(np.swapaxes(a, -1, -2)) + np.diag(np.arange(n) * 3.0)).astype(dtype)


_EIGH_DEFAULTS = {"algorithm": None, "lower": True, "sort_eigenvalues": True,
                  "subset_by_index": None}
# Real samples only: complex eigenvectors are defined up to a phase per column, which
# central differences of the impl do not hold fixed (tests check them gauge-invariantly).
eigh_p = define_primitive(
    "eigh", multiple_results=True, impl=_eigh_impl, abstract_eval=sharding_rules.typed(
        _eigh_abstract_eval, sharding_rules.linalg("eigh")),
    jvp=_eigh_jvp, lower=_lower_eigh,
    samples=lambda: [b.Sample([_sym((3, 3), np.float32)], _EIGH_DEFAULTS),
             b.Sample([_sym((2, 3, 3), np.float32)], dict(_EIGH_DEFAULTS, lower=False)),
             b.Sample([_sym((4, 4), np.float32, seed=2)], _EIGH_DEFAULTS)],
             batch=_leading_batch_rule)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None, implementation=None):
    """Eigenvectors and eigenvalues (v, w) of Hermitian matrices, w ascending.
    implementation picks the algorithm (an EighImplementation; on CPU only QR, the
    default)."""
    _check_matrix("eigh", get_aval(x), square=True)
    if symmetrize_input:
        x = ew.div(ew.add(x, _H(x)), np.array(2, get_aval(x).dtype))
    subset = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    v, w = eigh_p.bind(x, algorithm=implementation, lower=bool(lower),
                       sort_eigenvalues=bool(sort_eigenvalues), subset_by_index=subset)
    return v, w


# --- svd ------------------------------------------------------------------------------------

class SvdAlgorithm(enum.Enum):
    """The SVD method: on CPU, QR is LAPACK's gesvd and DEFAULT and DIVIDE_AND_CONQUER its
    gesdd; JACOBI and POLAR are GPU/TPU methods."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _lapack_svd_driver(algorithm):
    if algorithm in (None, SvdAlgorithm.DEFAULT, SvdAlgorithm.DIVIDE_AND_CONQUER):
        return "gesdd"
    if algorithm == SvdAlgorithm.QR:
        return "gesvd"
    if isinstance(algorithm, SvdAlgorithm):
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented "
                                  "on CPU.")
    raise TypeError(f"svd algorithm must be a lax.linalg.SvdAlgorithm or None, got "
                    f"{algorithm!r}.")

def _svd_abstract_eval(x, *, full_matrices, compute_uv, subset_by_index, algorithm=None):
    _check_matrix("svd", x)
    _lapack_svd_driver(algorithm)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    k = min(m, n)
    if subset_by_index is not None:
        lo, hi = subset_by_index
        if not 0 <= lo <= hi <= k or full_matrices:
            raise ValueError(f"svd subset_by_index {subset_by_index} needs 0 <= lo <= hi <= "
                             f"{k} and full_matrices=False")
        k = hi - lo
    s = ShapedArray(batch + (k,), dtypes.real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray(batch + (m, ku), x.dtype), ShapedArray(batch + (kv, n), x.dtype)]


def _svd_impl(x, *, full_matrices, compute_uv, subset_by_index, algorithm=None):
    from scipy.linalg import svd as scipy_svd
    driver = _lapack_svd_driver(algorithm)
    m, n = x.shape[-2:]
    k = min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    s_template = np.empty(k, dtypes.real_dtype(x.dtype))
    if compute_uv:
        u, s, vt = host_batched(
            lambda a: scipy_svd(a, full_matrices=full_matrices, lapack_driver=driver,
                                check_finite=False),
            x, [np.empty((m, ku), x.dtype), s_template, np.empty((kv, n), x.dtype)])
        outs = [s, u, vt]
    else:
        outs = host_batched(lambda a: [scipy_svd(a, compute_uv=False, lapack_driver=driver,
                                                 check_finite=False)], x, [s_template])
    if subset_by_index is not None:
        lo, hi = subset_by_index
        outs[0] = outs[0][..., lo:hi]
        if compute_uv:
            outs[1], outs[2] = outs[1][..., lo:hi], outs[2][..., lo:hi, :]
    return outs


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index,
             algorithm=None):
    (x,), (dx,) = primals, tangents
    aval = get_aval(x)
    m, n = aval.shape[-2:]
    if subset_by_index is not None and subset_by_index[1] - subset_by_index[0] != min(m, n):
        raise NotImplementedError("the derivative of svd with subset_by_index is not "
                                  "implemented")
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("the derivative of svd is not implemented for "
                                  "full_matrices=True with a non-square matrix; use "
                                  "full_matrices=False")
    s, u, vt = svd_p.bind(x, full_matrices=False, compute_uv=True,
                          subset_by_index=subset_by_index, algorithm=algorithm)
    dtype, rdtype = aval.dtype, get_aval(s).dtype
    v = _H(vt)
    ds_mat = _matmul(_matmul(_H(u), dx), v)
    ds = _diagonal(ds_mat)
    ds = ew.real(ds) if dtypes.is_complex(dtype) else ds
    if not compute_uv:
        return [s], [ds]
    k = get_aval(s).shape[-1]
    shape = get_aval(s).shape[:-1] + (k, k)
    nd = len(shape)
    s_row = st.broadcast_in_dim(s, shape, tuple(range(nd - 2)) + (nd - 1,))   # s_j
    s_col = st.broadcast_in_dim(s, shape, tuple(range(nd - 1)))               # s_i
    eye = _eye(shape, rdtype)
    one = np.array(1, rdtype)
    diffs = ew.mul(ew.add(s_row, s_col), ew.sub(s_row, s_col))   # s_j^2 - s_i^2
    f = ew.sub(ew.div(one, ew.add(diffs, eye)), eye)
    s_zero = ew.convert_element_type(ew.eq(s, np.array(0, rdtype)), rdtype)
    s_inv = ew.sub(ew.div(one, ew.add(s, s_zero)), s_zero)
    ds_s = ew.mul(_as(s_row, dtype), ds_mat)   # dS diag(s)
    s_ds = ew.mul(_as(s_col, dtype), ds_mat)   # diag(s) dS
    half = np.array(0.5, dtype)
    du_dv_diag = ew.mul(ew.mul(half, ew.sub(ds_mat, _H(ds_mat))), _diag_embed(s_inv, dtype))
    f = _as(f, dtype)
    du = _matmul(u, ew.add(ew.mul(f, ew.add(ds_s, _H(ds_s))), du_dv_diag))
    dv = _matmul(v, ew.mul(f, ew.add(s_ds, _H(s_ds))))
    s_inv_row = _as(st.broadcast_in_dim(s_inv, get_aval(s).shape[:-1] + (1, k),
                                        tuple(range(nd - 2)) + (nd - 1,)), dtype)
    if m > n:   # the part of dx outside the span of u
        dx_v = _matmul(dx, v)
        du = ew.add(du, ew.mul(ew.sub(dx_v, _matmul(u, _matmul(_H(u), dx_v))),
                               st.broadcast_to_shape(s_inv_row, get_aval(dx_v).shape)))
    if n > m:
        dxh_u = _matmul(_H(dx), u)
        dv = ew.add(dv, ew.mul(ew.sub(dxh_u, _matmul(v, _matmul(vt, dxh_u))),
                               st.broadcast_to_shape(s_inv_row, get_aval(dxh_u).shape)))
    return [s, u, vt], [ds, du, _H(dv)]


def _lower_svd(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm=None):
    m, n = x.aval.shape[-2:]
    batch = x.aval.shape[:-2]
    k = min(m, n)
    dtype = x.aval.dtype
    ku, kv = (m, n) if full_matrices else (k, k)
    results = [x.aval.strip_weak_type(), ShapedArray(batch + (k,), dtypes.real_dtype(dtype)),
               ShapedArray(batch + (m, ku), dtype), ShapedArray(batch + (kv, n), dtype),
               _info_aval(x.aval)]
    _, s, u, vt, info = lower_lapack(ctx, _lapack_svd_driver(algorithm), [x], results, "mmvmmv",
                                     mode="A" if full_matrices else "S")
    outs = [_lower_nan_unless_ok(ctx, s, info)]
    if compute_uv:
        outs += [_lower_nan_unless_ok(ctx, u, info), _lower_nan_unless_ok(ctx, vt, info)]
    if subset_by_index is not None:
        lo, hi = subset_by_index
        nb = len(batch)

        def cut(v, axis, aval):
            starts = [0] * aval.ndim
            starts[axis] = lo
            return ctx.op("stablehlo.slice", [v], aval,
                          {"start_indices": hlo.i64_array(starts),
                           "limit_indices": hlo.i64_array(
                               [hi if i == axis else d for i, d in enumerate(v.aval.shape)]),
                           "strides": hlo.i64_array([1] * aval.ndim)})
        outs[0] = cut(outs[0], nb, ctx.avals_out[0])
        if compute_uv:
            outs[1] = cut(outs[1], nb + 1, ctx.avals_out[1])
            outs[2] = cut(outs[2], nb, ctx.avals_out[2])
    return outs


_SVD_DEFAULTS = {"full_matrices": False, "compute_uv": True, "subset_by_index": None,
                 "algorithm": None}
svd_p = define_primitive(
    "svd", multiple_results=True, impl=_svd_impl, abstract_eval=sharding_rules.typed(
        _svd_abstract_eval, sharding_rules.linalg("svd")),
    jvp=_svd_jvp, lower=_lower_svd,
    samples=lambda: [b.Sample([b.random_values((4, 3), np.float32)], _SVD_DEFAULTS),
             b.Sample([b.random_values((2, 3, 4), np.float32)], _SVD_DEFAULTS),
             b.Sample([b.random_values((3, 3), np.float32)],
                      dict(_SVD_DEFAULTS, compute_uv=False)),
             b.Sample([b.random_values((3, 3), np.float32)],
                      dict(_SVD_DEFAULTS, full_matrices=True))], batch=_leading_batch_rule)


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """Singular value decomposition: (u, s, vh) with x = u diag(s) vh, s descending; only
    s when compute_uv is False."""
    subset = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                      subset_by_index=subset, algorithm=algorithm)
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt


# --- eig ------------------------------------------------------------------------------------

class EigImplementation(enum.Enum):
    """The eig algorithm; on CPU only LAPACK (None picks it)."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


def _eig_abstract_eval(x, *, compute_left_eigenvectors, compute_right_eigenvectors,
                       enable_eigvec_derivs, implementation):
    _check_matrix("eig", x, square=True)
    if implementation not in (None, EigImplementation.LAPACK):
        raise ValueError("Only the lapack implementation is supported on CPU.")
    dtype = dtypes.complex_dtype(x.dtype)
    n = x.shape[-1]
    outs = [ShapedArray(x.shape[:-2] + (n,), dtype)]
    outs += [ShapedArray(x.shape, dtype)] * (int(compute_left_eigenvectors) +
                                              int(compute_right_eigenvectors))
    return outs


def _eig_impl(x, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    from scipy.linalg import eig as scipy_eig
    dtype = dtypes.complex_dtype(x.dtype)
    n = x.shape[-1]
    left, right = compute_left_eigenvectors, compute_right_eigenvectors

    def one(a):
        res = scipy_eig(a, left=left, right=right, check_finite=False)
        return list(res) if isinstance(res, tuple) else [res]
    templates = [np.empty(n, dtype)] + [np.empty((n, n), dtype)] * (int(left) + int(right))
    return host_batched(one, x, templates)


def _eigenvector_jvp(w, v, dx):
    """Tangents (dw, dv) of A v_j = w_j v_j for distinct eigenvalues, with v_j fixed as
    LAPACK's geev fixes it: unit 2-norm and a real largest-magnitude component.
    With P = V^-1 dA V, dw = diag(P) and dv_j = sum_i v_i P_ij / (w_j - w_i) + c_j v_j,
    where the free c_j is what keeps both normalisations."""
    shape = get_aval(v).shape
    eye = _eye(shape, get_aval(w).dtype)
    gaps = ew.sub(st.expand_dims(w, (len(shape) - 2,)), st.expand_dims(w, (len(shape) - 1,)))
    inverse_gaps = ew.sub(ew.div(ew._ones_like(gaps), ew.add(gaps, eye)), eye)   # 0 on diag
    p = solve(v, _matmul(dx, v))
    u = _matmul(v, ew.mul(inverse_gaps, p))
    # Re(v_j^H dv_j) = 0 for the unit norm; Im(dv_kj) = 0 at the largest component k
    largest = red.argmax(ew.abs(v), len(shape) - 2, np.int32)
    rows = st.broadcasted_iota(np.int32, shape, len(shape) - 2)
    at_largest = ew.convert_element_type(
        ew.eq(rows, st.expand_dims(largest, (len(shape) - 2,))), get_aval(v).dtype)
    along_columns = (len(shape) - 2,)
    c = ew.complex(
        ew.neg(ew.real(red.reduce_sum(ew.mul(ew.conj(v), u), along_columns))),
        ew.div(ew.neg(ew.imag(red.reduce_sum(ew.mul(at_largest, u), along_columns))),
               ew.real(red.reduce_sum(ew.mul(at_largest, v), along_columns))))
    return _diagonal(p), ew.add(u, ew.mul(v, st.expand_dims(c, along_columns)))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation):
    if (compute_left_eigenvectors or compute_right_eigenvectors) and \
            not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions "
            "on the input that JAX cannot check (see the enable_eigvec_derivs argument "
            "to jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to "
            "jax.lax.linalg.eig to opt in, or differentiate jnp.linalg.eigvals.")
    (x,), (dx,) = primals, tangents
    outs = eig_p.bind(x, compute_left_eigenvectors=compute_left_eigenvectors,
                      compute_right_eigenvectors=True,
                      enable_eigvec_derivs=enable_eigvec_derivs,
                      implementation=implementation)
    w, vr = outs[0], outs[-1]
    dx = _as(dx, get_aval(w).dtype)
    dw, dvr = _eigenvector_jvp(w, vr, dx)
    primal_out, tangent_out = [w], [dw]
    if compute_left_eigenvectors:   # left eigenvectors are right ones of A^H, at conj(w)
        primal_out.append(outs[1])
        tangent_out.append(_eigenvector_jvp(ew.conj(w), outs[1], _H(dx))[1])
    if compute_right_eigenvectors:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return primal_out, tangent_out


def _lower_eig(ctx, x, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    batch, n = x.aval.shape[:-2], x.aval.shape[-1]
    dtype = x.aval.dtype
    cdtype = dtypes.complex_dtype(dtype)
    vec = ShapedArray(x.aval.shape, cdtype)
    info = _info_aval(x.aval)
    modes = {"compute_left": "V" if compute_left_eigenvectors else "N",
             "compute_right": "V" if compute_right_eigenvectors else "N"}
    if dtypes.is_complex(dtype):
        w, vl, vr, info = lower_lapack(ctx, "geev", [x], [ShapedArray(batch + (n,), cdtype),
                                                          vec, vec, info], "mvmmv", **modes)
    else:
        part = ShapedArray(batch + (n,), dtype)
        wr, wi, vl, vr, info = lower_lapack(ctx, "geev", [x], [part, part, vec, vec, info],
                                            "mvvmmv", **modes)
        w = ctx.op("stablehlo.complex", [wr, wi], ShapedArray(batch + (n,), cdtype))
    outs = [w] + ([vl] if compute_left_eigenvectors else []) + \
        ([vr] if compute_right_eigenvectors else [])
    return [_lower_nan_unless_ok(ctx, o, info) for o in outs]


def _eig_samples():
    f = np.float32
    real = np.array([[2.0, 1.0, 0.0], [0.5, -1.0, 0.3], [0.2, 0.1, 3.5]], f)
    rotation = np.array([[0.0, -2.0, 0.1], [1.0, 0.0, 0.2], [0.0, 0.3, 1.5]], f)
    none = {"compute_left_eigenvectors": False, "compute_right_eigenvectors": False,
            "enable_eigvec_derivs": False, "implementation": None}
    return [b.Sample([real], none), b.Sample([rotation], none),
            b.Sample([np.stack([real, real.T.copy()])], none)]


eig_p = define_primitive("eig", multiple_results=True, impl=_eig_impl,
                         abstract_eval=sharding_rules.typed(
                             _eig_abstract_eval, sharding_rules.linalg("eig")),
                         jvp=_eig_jvp, lower=_lower_eig,
                         samples=lambda: _eig_samples(), batch=_leading_batch_rule)


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, implementation=None, use_magma=None):
    """Eigenvalues (complex) and optionally left/right eigenvectors of square matrices:
    [w, vl, vr] with the eigenvectors asked for. Runs on CPU only, as in JAX. The
    eigenvectors are differentiable only with enable_eigvec_derivs=True: their derivative
    assumes distinct eigenvalues, which cannot be checked."""
    if use_magma is not None:
        warnings.warn("use_magma is deprecated, please use "
                      "implementation=EigImplementation.MAGMA instead.", DeprecationWarning,
                      stacklevel=2)
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    if implementation is not None and not isinstance(implementation, EigImplementation):
        raise TypeError(f"eig implementation must be an EigImplementation or None, got "
                        f"{implementation!r}")
    return eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors),
                      enable_eigvec_derivs=bool(enable_eigvec_derivs),
                      implementation=implementation)
