"""Linear-algebra primitives: cholesky (and its rank-1 update), triangular_solve, lu, qr,
eigh, svd, eig. Leading dimensions are batch dimensions. Impls call NumPy/SciPy LAPACK; XLA
runs the LAPACK custom calls jaxlib registers for CPU (see lower_lapack). Imports core,
interpreters, backends.stablehlo and the lax families."""
from __future__ import annotations

import functools

import numpy as np

from pyjax._src import dtypes
from pyjax._src.backends import numpy_backend
from pyjax._src.backends import stablehlo as hlo
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import NO_BATCHING, NOT_DIFFERENTIABLE, RuleFactory, define_primitive
from pyjax._src.interpreters import ad, batching
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import builders as b
from pyjax._src.lax import sharding_rules
from pyjax._src.lax import dot as ldot
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reductions as red
from pyjax._src.lax import slicing as sl
from pyjax._src.lax import structural as st
from pyjax._src.lax.control_flow.fori import fori_loop

_LAPACK_DTYPES = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
                  np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


# --- shape and dtype checks ---------------------------------------------------------------

def _check_matrix(name, x, square=False):
    if np.dtype(x.dtype) not in _LAPACK_DTYPES:
        # a narrower float is a dtype the kernels lack (NotImplementedError, as JAX); any
        # other dtype is a type error
        error = NotImplementedError if dtypes.is_inexact(x.dtype) else TypeError
        raise error(f"Unsupported dtype {x.dtype.name}: {name} takes float32, float64, "
                    "complex64 or complex128 arrays. Convert with x.astype(jnp.float32) "
                    "first.")
    if x.ndim < 2:
        raise ValueError(f"{name} takes arrays of rank >= 2 (leading dimensions are batch "
                         f"dimensions), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name} takes square matrices, got shape {x.shape}")


# --- small lax helpers used by the JVP rules ----------------------------------------------

def _T(x):
    n = get_aval(x).ndim
    return st.transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def _conj(x):
    return ew.conj(x) if dtypes.is_complex(get_aval(x).dtype) else x


def _H(x):
    return _conj(_T(x))


def _matmul(a, b_):
    """a @ b_ for operands of equal rank and equal batch dimensions, at the highest
    precision (as JAX's linear-algebra rules compute theirs)."""
    n = get_aval(a).ndim
    batch = tuple(range(n - 2))
    return ldot.dot_general(a, b_, (((n - 1,), (n - 2,)), (batch, batch)),
                            precision="highest")


def _mask(x, keep):
    """x with the (row, col) entries where keep(rows, cols) is false set to zero."""
    aval = get_aval(x)
    rows = st.broadcasted_iota(np.int32, aval.shape, aval.ndim - 2)
    cols = st.broadcasted_iota(np.int32, aval.shape, aval.ndim - 1)
    return ew.select(keep(rows, cols), x, ew._zeros_like(x))


def tril(x, k=0):
    return _mask(x, lambda r, c: ew.ge(ew.add(r, np.int32(k)), c))


def triu(x, k=0):
    return _mask(x, lambda r, c: ew.le(ew.add(r, np.int32(k)), c))


def _eye(shape, dtype):
    """Identity matrices of `shape` (..., n, m) broadcast over the leading dims."""
    rows = st.broadcasted_iota(np.int32, shape, len(shape) - 2)
    cols = st.broadcasted_iota(np.int32, shape, len(shape) - 1)
    return ew.convert_element_type(ew.eq(rows, cols), dtype)


def _diagonal(x):
    """The main diagonal of each matrix of x (..., n, n) -> (..., n)."""
    aval = get_aval(x)
    return red.reduce_sum(ew.mul(x, _eye(aval.shape, aval.dtype)), (aval.ndim - 1,))


def _diag_embed(v, dtype=None):
    """(..., n) -> (..., n, n) with v on the diagonal."""
    aval = get_aval(v)
    shape = aval.shape + aval.shape[-1:]
    full = st.broadcast_in_dim(v, shape, tuple(range(aval.ndim - 1)) + (aval.ndim,))
    out = ew.mul(full, _eye(shape, aval.dtype))
    return out if dtype is None else ew.convert_element_type(out, dtype)


def _as(x, dtype):
    return x if get_aval(x).dtype == dtype else ew.convert_element_type(x, dtype)


def _hermitian_from_triangle(x, lower):
    """The Hermitian matrix LAPACK sees when it reads only one triangle of x (and the
    real part of its diagonal): what the impls of cholesky and eigh depend on."""
    strict = tril(x, -1) if lower else triu(x, 1)
    diag = _diagonal(x)
    if dtypes.is_complex(get_aval(x).dtype):
        diag = _as(ew.real(diag), get_aval(x).dtype)
    return ew.add(ew.add(strict, _H(strict)), _diag_embed(diag))


def _zero_tangent(aval):
    return ad.Zero(ad.tangent_aval(aval))


# --- batching and lowering helpers --------------------------------------------------------

def _leading_batch(prim):
    def rule(args, dims, **params):
        size = batching.axis_size_of(args, dims)
        args = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
        out = prim.bind(*args, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)
    return rule


# Every operand gets the batch in front; the primitive already maps over leading dimensions.
_leading_batch_rule = RuleFactory(_leading_batch)


def _layout(aval, matrix):
    """A dense<minor-to-major> layout: batches of column-major matrices (what LAPACK
    reads and writes) or row-major arrays (vectors of a batch, info)."""
    n = aval.ndim
    dims = ([n - 2, n - 1] + list(range(n - 3, -1, -1)) if matrix
            else list(range(n - 1, -1, -1)))
    return (f"dense<[{', '.join(map(str, dims))}]> : tensor<{n}xindex>" if dims
            else "dense<> : tensor<0xindex>")


def lower_lapack(ctx, routine, operands, results, kinds="", **chars):
    """A call of jaxlib's LAPACK FFI kernel `lapack_<s|d|c|z><routine>_ffi`. `kinds` has
    one letter per operand then per result: 'm' for a batch of matrices, 'v' for
    anything else (default: operands are matrices, results as `kinds` says, else 'm').
    Character options (uplo="L", ...) are passed as ui8 attributes, as the kernels decode
    them. The XLA adapter registers jaxlib's LAPACK targets when a module uses them."""
    dtype = operands[0].aval.dtype
    target = f"lapack_{_LAPACK_DTYPES[np.dtype(dtype)]}{routine}_ffi"
    kinds = kinds.ljust(len(operands) + len(results), "m")
    in_kinds, out_kinds = kinds[:len(operands)], kinds[len(operands):]
    if any(k == "m" and 0 in v.aval.shape[-2:] for v, k in zip(operands, in_kinds)):
        # LAPACK rejects leading dimensions of 0: the results are empty, identities (the
        # square factors of an empty matrix) and info = 0.
        return [_lower_eye(ctx, a) if k == "m" and a.shape[-1] == a.shape[-2] and a.size
                else ctx.full(0, a.shape, a.dtype) for a, k in zip(results, out_kinds)]
    config = ", ".join(f"{k} = {ord(v)} : ui8" for k, v in chars.items())
    attrs = {"call_target_name": f'"{target}"', "api_version": "4 : i32",
             "backend_config": "{" + config + "}",
             "operand_layouts": "[" + ", ".join(
                 _layout(v.aval, k == "m") for v, k in zip(operands, in_kinds)) + "]",
             "result_layouts": "[" + ", ".join(
                 _layout(a, k == "m") for a, k in zip(results, out_kinds)) + "]"}
    return ctx.op("stablehlo.custom_call", operands, list(results), attrs)


def _lower_eye(ctx, aval):
    idx = ShapedArray(aval.shape, np.int32)
    rows = ctx.op("stablehlo.iota", [], idx, {"iota_dimension": hlo.i64_attr(aval.ndim - 2)})
    cols = ctx.op("stablehlo.iota", [], idx, {"iota_dimension": hlo.i64_attr(aval.ndim - 1)})
    return ctx.convert(ctx.compare(rows, cols, "EQ"), aval.dtype)


def _info_aval(aval):
    return ShapedArray(aval.shape[:-2], np.int32)


def _lower_mask(ctx, x, keep):
    shape = x.aval.shape
    idx = ShapedArray(shape, np.int32)
    rows = ctx.op("stablehlo.iota", [], idx, {"iota_dimension": hlo.i64_attr(len(shape) - 2)})
    cols = ctx.op("stablehlo.iota", [], idx, {"iota_dimension": hlo.i64_attr(len(shape) - 1)})
    return ctx.select(keep(rows, cols), x, ctx.full(0, shape, x.aval.dtype))


def _lower_tril(ctx, x, k=0):
    return _lower_mask(ctx, x, lambda r, c: ctx.compare(
        ctx.binary("stablehlo.add", r, ctx.full(k, (), np.int32)), c, "GE"))


def _lower_triu(ctx, x, k=0):
    return _lower_mask(ctx, x, lambda r, c: ctx.compare(
        ctx.binary("stablehlo.add", r, ctx.full(k, (), np.int32)), c, "LE"))


def _lower_nan_unless_ok(ctx, x, info):
    """x where LAPACK's info is 0, NaN elsewhere (JAX's way of reporting failure)."""
    ok = ctx.compare(info, ctx.full(0, (), np.int32), "EQ")
    ok = ctx.op("stablehlo.broadcast_in_dim", [ok], ShapedArray(x.aval.shape, np.bool_),
                {"broadcast_dimensions": hlo.i64_array(range(info.aval.ndim))})
    return ctx.select(ok, x, ctx.full(np.nan, x.aval.shape, x.aval.dtype))


def _lower_slice(ctx, x, limits):
    """x[..., :limits[0], :limits[1]] on the last two dimensions."""
    shape = x.aval.shape[:-2] + tuple(limits)
    if shape == x.aval.shape:
        return x
    return ctx.op("stablehlo.slice", [x], x.aval.update(shape=shape),
                  {"start_indices": hlo.i64_array([0] * len(shape)),
                   "limit_indices": hlo.i64_array(shape),
                   "strides": hlo.i64_array([1] * len(shape))})


def _flat_batch(x, core=2):
    """x with its batch dimensions flattened into one (zero-size batches too)."""
    return x.reshape((int(np.prod(x.shape[:-core])),) + x.shape[-core:])


def host_batched(f, x, out_templates):
    """Runs f (SciPy's LAPACK, the library XLA's custom calls use too, so eager and jit
    agree to the bit) on each matrix of a batch; a matrix LAPACK fails on gives NaNs."""
    batch = x.shape[:-2]
    flat = _flat_batch(x)
    outs = [np.empty((flat.shape[0],) + t.shape, t.dtype) for t in out_templates]
    for i in range(flat.shape[0]):
        try:
            if not np.isfinite(flat[i]).all():
                raise np.linalg.LinAlgError("non-finite input")
            results = f(flat[i])
        except (np.linalg.LinAlgError, ValueError):
            results = [np.full(t.shape, np.nan, t.dtype) for t in out_templates]
        for o, r in zip(outs, results):
            o[i] = r
    return [o.reshape(batch + o.shape[1:]) for o in outs]


# --- cholesky -------------------------------------------------------------------------------

def _cholesky_abstract_eval(x):
    _check_matrix("cholesky", x, square=True)
    return x.strip_weak_type()


def _cholesky_impl(x):
    from scipy.linalg import cholesky as scipy_cholesky
    template = np.empty(x.shape[-2:], x.dtype)
    return host_batched(lambda m: [scipy_cholesky(m, lower=True, check_finite=False)],
                        x, [template])[0]


def _cholesky_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    L = cholesky_p.bind(x)
    sigma = _hermitian_from_triangle(dx, lower=True)
    # dL = L phi(L^-1 sigma L^-H), phi taking the lower triangle with a halved diagonal.
    tmp = triangular_solve(L, sigma, left_side=False, lower=True, transpose_a=True,
                           conjugate_a=True)
    tmp = triangular_solve(L, tmp, left_side=True, lower=True)
    half = ew.mul(_eye(get_aval(tmp).shape, get_aval(tmp).dtype),
                  np.array(0.5, get_aval(tmp).dtype))
    phi = ew.sub(tril(tmp), ew.mul(half, tmp))
    return L, _matmul(L, phi)


def _lower_cholesky(ctx, x):
    out, info = lower_lapack(ctx, "potrf", [x], [x.aval, _info_aval(x.aval)], "mmv",
                             uplo="L")
    return _lower_nan_unless_ok(ctx, _lower_tril(ctx, out), info)


def _spd(shape, dtype, seed=0):
    a = b.random_values(shape, dtype, seed=seed)
    n = shape[-1]
    return (np.matmul(a, np.conj(np.swapaxes(a, -1, -2))) + n * np.eye(n)).astype(dtype)


cholesky_p = define_primitive(
    "cholesky", impl=_cholesky_impl, abstract_eval=sharding_rules.typed(
        _cholesky_abstract_eval, sharding_rules.linalg("cholesky")),
    jvp=_cholesky_jvp, lower=_lower_cholesky,
    samples=lambda: [b.Sample([_spd((3, 3), np.float32)]), b.Sample([_spd((2, 3, 3), np.float32)]),
             b.Sample([_spd((3, 3), np.complex64)])], batch=_leading_batch_rule)


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor L of each Hermitian positive-definite matrix (x = L L^H).
    A matrix that is not positive definite gives NaNs, as in JAX."""
    _check_matrix("cholesky", get_aval(x), square=True)
    if symmetrize_input:
        x = ew.div(ew.add(x, _H(x)), np.array(2, get_aval(x).dtype))
    return cholesky_p.bind(x)


# --- cholesky_update ------------------------------------------------------------------------

def _cholesky_update_abstract_eval(r_matrix, w_vector):
    for position, (x, rank) in enumerate(((r_matrix, 2), (w_vector, 1))):
        if x.ndim != rank:
            raise TypeError(f"Input {position} to cholesky_update must have a rank of "
                            f"exactly {rank}, but got shape={x.shape}")
        if not np.issubdtype(x.dtype, np.floating):
            raise TypeError(f"cholesky_update does not accept dtype {x.dtype} at position "
                            f"{position}. Accepted dtypes at position {position} are "
                            f"subtypes of floating.")
    if r_matrix.dtype != w_vector.dtype:
        raise TypeError(f"lax.cholesky_update requires arguments to have the same dtypes, "
                        f"got {r_matrix.dtype}, {w_vector.dtype}.")
    if r_matrix.shape[0] != r_matrix.shape[1] or w_vector.shape[0] != r_matrix.shape[1]:
        raise ValueError(f"Rank-1 update to Cholesky decomposition takes a square matrix "
                         f"and a vector of the same size as input. Got shapes "
                         f"{r_matrix.shape} and {w_vector.shape} instead")
    return r_matrix.strip_weak_type()


def _cholesky_update_flat(r_matrix, w_vector):
    """JAX's algorithm: row k of R and what is left of w turn by the Givens rotation that
    zeroes w[k] against R[k, k] (the identity where w[k] is 0), for k = 0 ... n-1."""
    dtype = get_aval(r_matrix).dtype

    def step(k, carry):
        r, w = carry
        row = sl.dynamic_index_in_dim(r, k, 0, keepdims=False)
        x = sl.dynamic_index_in_dim(row, k, 0, keepdims=False)
        y = sl.dynamic_index_in_dim(w, k, 0, keepdims=False)
        size = ew.select(ew.gt(ew.abs(x), ew.abs(y)), ew.abs(x), ew.abs(y))
        x_, y_ = ew.div(x, size), ew.div(y, size)
        scale = ew.div(np.array(1, dtype), ew.sqrt(ew.add(ew.mul(x_, x_), ew.mul(y_, y_))))
        no_turn = ew.eq(y, np.array(0, dtype))
        c = ew.select(no_turn, np.array(1, dtype), ew.mul(x_, scale))
        s = ew.select(no_turn, np.array(0, dtype), ew.neg(ew.mul(y_, scale)))
        new_row = ew.sub(ew.mul(c, row), ew.mul(s, w))
        w = ew.add(ew.mul(c, w), ew.mul(s, row))
        return sl.dynamic_update_index_in_dim(r, new_row, k, 0), w

    return [fori_loop(0, get_aval(w_vector).shape[0], step, (r_matrix, w_vector))[0]]


@functools.lru_cache(maxsize=64)
def _cholesky_update_jaxpr(r_aval, w_aval):
    closed, _ = pe.trace_to_closed_jaxpr(_cholesky_update_flat, [r_aval, w_aval])
    return closed


def _cholesky_update_impl(r_matrix, w_vector):
    closed = _cholesky_update_jaxpr(get_aval(r_matrix).strip_weak_type(),
                                    get_aval(w_vector).strip_weak_type())
    return numpy_backend.execute_closed_jaxpr(closed, [r_matrix, w_vector])[0]


def _lower_cholesky_update(ctx, r_matrix, w_vector):
    closed = _cholesky_update_jaxpr(r_matrix.aval.strip_weak_type(),
                                    w_vector.aval.strip_weak_type())
    return ctx.lower_jaxpr(closed, [r_matrix, w_vector])[0]


cholesky_update_p = define_primitive(
    "cholesky_update", impl=_cholesky_update_impl,
    abstract_eval=_cholesky_update_abstract_eval, jvp=NOT_DIFFERENTIABLE, batch=NO_BATCHING,
    lower=_lower_cholesky_update,
    samples=lambda: [b.Sample([np.triu(_spd((3, 3), np.float32)),
                               b.random_values((3,), np.float32)])])


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of R^T R + w w^T, given the upper factor R of a matrix and
    a vector w (a rank-1 update in O(n^2) Givens rotations)."""
    return cholesky_update_p.bind(r_matrix, w_vector)


# --- triangular_solve -------------------------------------------------------------------

def _triangular_solve_abstract_eval(a, b_, *, left_side, lower, transpose_a, conjugate_a,
                                    unit_diagonal):
    _check_matrix("triangular_solve", a, square=True)
    _check_matrix("triangular_solve", b_)
    if a.dtype != b_.dtype:
        raise TypeError(f"triangular_solve requires a and b of one dtype, got {a.dtype.name} "
                        f"and {b_.dtype.name}")
    k = b_.shape[-2] if left_side else b_.shape[-1]
    if a.shape[:-2] != b_.shape[:-2] or a.shape[-1] != k:
        raise ValueError(
            f"triangular_solve: a of shape {a.shape} does not match b of shape {b_.shape} "
            f"(left_side={left_side}); batch dimensions must be equal and a's size must "
            f"equal b's {'rows' if left_side else 'columns'}")
    return b_.strip_weak_type()


def _op_a(a, transpose_a, conjugate_a):
    a = _conj(a) if conjugate_a else a
    return _T(a) if transpose_a else a


def _triangular_solve_impl(a, b_, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
    # BLAS trsm, as XLA runs it: a singular matrix gives infs/NaNs, not an exception.
    from scipy.linalg import get_blas_funcs
    if conjugate_a and not transpose_a:
        a = np.conj(a)
    trans = (2 if conjugate_a else 1) if transpose_a else 0
    (trsm,) = get_blas_funcs(("trsm",), (a, b_))
    batch = b_.shape[:-2]
    fa, fb = _flat_batch(a), _flat_batch(b_)
    out = np.empty(fb.shape, b_.dtype)
    for i in range(fb.shape[0]):
        out[i] = trsm(1.0, fa[i], fb[i], side=0 if left_side else 1, lower=int(lower),
                      trans_a=trans, diag=int(unit_diagonal))
    return out.reshape(batch + b_.shape[-2:])


def _triangular_solve_jvp(primals, tangents, **params):
    (a, b_), (da, db) = primals, tangents
    x = triangular_solve_p.bind(a, b_, **params)
    out = ad.Zero(ad.tangent_aval(get_aval(x)))
    if type(db) is not ad.Zero:
        out = triangular_solve_p.bind(a, db, **params)
    if type(da) is not ad.Zero:
        k = 0 if not params["unit_diagonal"] else (-1 if params["lower"] else 1)
        da = tril(da, k) if params["lower"] else triu(da, k)
        op_da = _op_a(da, params["transpose_a"], params["conjugate_a"])
        rhs = _matmul(op_da, x) if params["left_side"] else _matmul(x, op_da)
        out = ad.add_tangents(out, ew.neg(triangular_solve_p.bind(a, rhs, **params)))
    return x, out


def _triangular_solve_transpose(ct, a, b_, **params):
    if ad.is_undefined_primal(a):
        raise ValueError("triangular_solve is not linear in its matrix a")
    params = dict(params, transpose_a=not params["transpose_a"])
    return [None, triangular_solve_p.bind(a, ct, **params)]


def _triangular_solve_batch(args, dims, **params):
    size = batching.axis_size_of(args, dims)
    (a, b_), (ad_, bd) = args, dims
    return triangular_solve_p.bind(batching.bdim_at_front(a, ad_, size),
                                   batching.bdim_at_front(b_, bd, size), **params), 0


def _lower_triangular_solve(ctx, a, b_, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    if conjugate_a and not transpose_a:
        a = ctx.unary("chlo.conj", a)
    trans = ("C" if conjugate_a else "T") if transpose_a else "N"
    (out,) = lower_lapack(ctx, "trsm", [a, b_], [b_.aval.strip_weak_type()],
                          side="L" if left_side else "R", uplo="L" if lower else "U",
                          trans_x=trans, diag="U" if unit_diagonal else "N")
    return out


def _tri_samples():
    f = np.float32
    a = np.tril(b.random_values((3, 3), f)) + 3 * np.eye(3, dtype=f)
    rhs = b.random_values((3, 2), f, seed=1)
    base = dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False,
                unit_diagonal=False)
    batched = np.stack([a, a.T + np.eye(3, dtype=f)])
    return [b.Sample([a, rhs], base),
            b.Sample([a.T.copy(), rhs], dict(base, lower=False, transpose_a=True)),
            b.Sample([a, rhs.T.copy()], dict(base, left_side=False)),
            b.Sample([a, rhs], dict(base, unit_diagonal=True)),
            b.Sample([batched, b.random_values((2, 3, 2), f, seed=2)],
                     dict(base, lower=False, left_side=True)),
            b.Sample([a.astype(np.complex64) * (1 + 0.5j), rhs.astype(np.complex64)],
                     dict(base, transpose_a=True, conjugate_a=True))]


triangular_solve_p = define_primitive(
    "triangular_solve", impl=_triangular_solve_impl,
    abstract_eval=sharding_rules.typed(
        _triangular_solve_abstract_eval, sharding_rules.linalg("triangular_solve", (2, 2))),
    jvp=_triangular_solve_jvp,
    transpose=_triangular_solve_transpose, batch=_triangular_solve_batch,
    lower=_lower_triangular_solve, samples=lambda: _tri_samples())


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """Solves op(a) x = b (left_side) or x op(a) = b for x, a triangular; op is chosen by
    transpose_a/conjugate_a. Only the `lower` (or upper) triangle of a is read. A b of
    one rank less than a is a vector: a column (left_side) or a row, as in JAX."""
    a_rank, b_rank = np.ndim(a), np.ndim(b)
    vector = b_rank == a_rank - 1
    if vector:
        b = st.expand_dims(b, (b_rank if left_side else b_rank - 1,))
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a),
                                  conjugate_a=bool(conjugate_a),
                                  unit_diagonal=bool(unit_diagonal))
    return st.squeeze(out, (b_rank if left_side else b_rank - 1,)) if vector else out


# --- lu -------------------------------------------------------------------------------------

def _lu_abstract_eval(x):
    _check_matrix("lu", x)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    return [x.strip_weak_type(), ShapedArray(batch + (min(m, n),), np.int32),
            ShapedArray(batch + (m,), np.int32)]


def pivots_to_permutation(pivots, m):
    """Applies the row swaps i <-> pivots[i] in order to range(m) (host NumPy)."""
    batch = pivots.shape[:-1]
    flat = pivots.reshape((int(np.prod(batch)), pivots.shape[-1]))
    perm = np.tile(np.arange(m, dtype=np.int32), (flat.shape[0], 1))
    rows = np.arange(flat.shape[0])
    for i in range(flat.shape[1]):
        j = flat[:, i]
        perm[rows, i], perm[rows, j] = perm[rows, j], perm[rows, i].copy()
    return perm.reshape(batch + (m,))


def _lu_impl(x):
    from scipy.linalg import get_lapack_funcs
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    flat = _flat_batch(x)
    lu = np.empty_like(flat)
    piv = np.empty((flat.shape[0], min(m, n)), np.int32)
    (getrf,) = get_lapack_funcs(("getrf",), (flat,))
    for i in range(flat.shape[0] if m and n else 0):
        lu_i, piv_i, _ = getrf(flat[i])
        lu[i], piv[i] = lu_i, piv_i
    piv = piv.reshape(batch + (min(m, n),))
    return [lu.reshape(x.shape), piv, pivots_to_permutation(piv, m)]


def _lu_factors(lu, m, n):
    """L padded to (m, m) with a unit diagonal and U padded to (n, n), so that the
    triangular solves of the JVP work for rectangular matrices too."""
    k = min(m, n)
    aval = get_aval(lu)
    nd = aval.ndim
    zero = np.array(0, aval.dtype)
    pad_l = [(0, 0, 0)] * (nd - 1) + [(0, m - k, 0)]
    lower = st.pad(tril(sl.slice_in_dim(lu, 0, k, axis=nd - 1), -1), zero, pad_l)
    lower = ew.add(lower, _eye(aval.shape[:-2] + (m, m), aval.dtype))
    pad_u = [(0, 0, 0)] * (nd - 2) + [(0, n - k, 0), (0, 0, 0)]
    upper = st.pad(triu(sl.slice_in_dim(lu, 0, k, axis=nd - 2)), zero, pad_u)
    rows = st.broadcasted_iota(np.int32, aval.shape[:-2] + (n, n), nd - 2)
    cols = st.broadcasted_iota(np.int32, aval.shape[:-2] + (n, n), nd - 1)
    tail = ew.bitwise_and(ew.eq(rows, cols), ew.ge(rows, np.int32(k)))
    upper = ew.add(upper, ew.convert_element_type(tail, aval.dtype))
    return lower, upper


def permutation_matrix(perm, dtype):
    """P with P[..., i, j] = (perm[..., i] == j), so P @ x == x[..., perm, :]."""
    aval = get_aval(perm)
    m = aval.shape[-1]
    shape = aval.shape + (m,)
    rows = st.broadcast_in_dim(perm, shape, tuple(range(aval.ndim)))
    cols = st.broadcasted_iota(np.int32, shape, aval.ndim)
    return ew.convert_element_type(ew.eq(rows, cols), dtype)


def _lu_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    lu, pivots, perm = lu_p.bind(x)
    aval = get_aval(x)
    m, n = aval.shape[-2:]
    lower, upper = _lu_factors(lu, m, n)
    permuted = _matmul(permutation_matrix(perm, aval.dtype), dx)
    la = triangular_solve(lower, permuted, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(upper, la, left_side=False, lower=False)
    dlu = ew.add(_matmul(lower, tril(lau, -1)), _matmul(triu(lau), upper))
    nd = aval.ndim
    dlu = sl.slice(dlu, (0,) * nd, aval.shape)
    return [lu, pivots, perm], [dlu, _zero_tangent(get_aval(pivots)),
                                _zero_tangent(get_aval(perm))]


def _lower_permutation(ctx, pivots, m):
    """The permutation that the row swaps `pivots` (0-based, applied in order) produce,
    as a stablehlo.while over the swaps."""
    batch = pivots.aval.shape[:-1]
    k = pivots.aval.shape[-1]
    nb = len(batch)
    perm_aval = ShapedArray(batch + (m,), np.int32)
    col_aval = ShapedArray(batch + (1,), np.int32)
    scalar = ShapedArray((), np.int32)
    iota = ctx.op("stablehlo.iota", [], perm_aval, {"iota_dimension": hlo.i64_attr(nb)})
    if k == 0 or perm_aval.size == 0:
        return iota
    perm0 = iota
    zero = ctx.full(0, (), np.int32)

    def column(c, x, i):
        starts = [zero] * nb + [i]
        return c.op("stablehlo.dynamic_slice", [x] + starts, col_aval,
                    {"slice_sizes": hlo.i64_array(batch + (1,))})

    def cond(c, i, perm):
        return c.compare(i, c.full(k, (), np.int32), "LT")

    def body(c, i, perm):
        p = column(c, pivots, i)
        here = column(c, perm, i)
        p_full = c.broadcast(p, perm_aval.shape)
        hit = c.compare(iota, p_full, "EQ")
        there = hlo.reduce(c, c.select(hit, perm, c.full(0, perm_aval.shape, np.int32)),
                           (nb,), "stablehlo.add")
        there = c.reshape(there, col_aval.shape)
        at_i = c.compare(iota, c.broadcast(i, perm_aval.shape), "EQ")
        swapped = c.select(hit, c.broadcast(here, perm_aval.shape), perm)
        swapped = c.select(at_i, c.broadcast(there, perm_aval.shape), swapped)
        return [c.binary("stablehlo.add", i, c.full(1, (), np.int32)), swapped]

    _, perm = ctx.op("stablehlo.while", [zero, perm0], [scalar, perm_aval],
                     regions=[ctx.region([scalar, perm_aval], cond),
                              ctx.region([scalar, perm_aval], body)])
    return perm


def _lower_lu(ctx, x):
    m, n = x.aval.shape[-2:]
    batch = x.aval.shape[:-2]
    ipiv_aval = ShapedArray(batch + (min(m, n),), np.int32)
    lu, ipiv, _ = lower_lapack(ctx, "getrf", [x], [x.aval.strip_weak_type(), ipiv_aval,
                                                   _info_aval(x.aval)], "mmvv")
    pivots = ctx.binary("stablehlo.subtract", ipiv, ctx.full(1, (), np.int32))
    return [lu, pivots, _lower_permutation(ctx, pivots, m)]


def _lu_samples():
    f = np.float32
    a = b.random_values((3, 3), f) + np.diag([4.0, -3.0, 2.0]).astype(f)
    return [b.Sample([a]), b.Sample([np.stack([a, a.T[::-1].copy()])]),
            b.Sample([np.concatenate([a, b.random_values((1, 3), f, seed=3)])]),
            b.Sample([np.concatenate([a, b.random_values((3, 1), f, seed=4)], 1)])]


lu_p = define_primitive("lu", multiple_results=True, impl=_lu_impl,
                        abstract_eval=sharding_rules.typed(
                            _lu_abstract_eval, sharding_rules.linalg("lu")),
                        jvp=_lu_jvp, lower=_lower_lu,
                        samples=lambda: _lu_samples(), batch=_leading_batch_rule)


def lu(x):
    """LU decomposition with partial pivoting: (lu, pivots, permutation) with
    x[..., permutation, :] == L @ U; L (unit lower) and U packed in lu."""
    return tuple(lu_p.bind(x))


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation that the row swaps i <-> pivots[..., i], applied in order, make
    of range(permutation_size) (pivots may be traced)."""
    aval = get_aval(pivots)
    m = int(permutation_size)
    if aval.dtype != np.int32:
        pivots = ew.convert_element_type(pivots, np.int32)
    batch = aval.shape[:-1]
    shape = batch + (m,)
    dims = tuple(range(len(batch)))
    iota = st.broadcasted_iota(np.int32, shape, len(batch))
    perm = iota
    for i in range(aval.shape[-1]):
        p = st.broadcast_in_dim(sl.index_in_dim(pivots, i, len(batch), keepdims=False),
                                shape, dims)
        here = st.broadcast_in_dim(sl.index_in_dim(perm, i, len(batch), keepdims=False),
                                   shape, dims)
        hit = ew.eq(iota, p)
        there = red.reduce_sum(ew.select(hit, perm, ew._zeros_like(perm)), (len(batch),))
        there = st.broadcast_in_dim(there, shape, dims)
        perm = ew.select(ew.eq(iota, np.int32(i)), there, ew.select(hit, here, perm))
    return perm


# --- qr -------------------------------------------------------------------------------------

def _qr_abstract_eval(x, *, full_matrices):
    _check_matrix("qr", x)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    k = m if full_matrices else min(m, n)
    return [ShapedArray(batch + (m, k), x.dtype), ShapedArray(batch + (k, n), x.dtype)]


def _qr_impl(x, *, full_matrices):
    from scipy.linalg import qr as scipy_qr
    m, n = x.shape[-2:]
    k = m if full_matrices else min(m, n)
    mode = "full" if full_matrices else "economic"
    return host_batched(lambda a: scipy_qr(a, mode=mode, check_finite=False), x,
                        [np.empty((m, k), x.dtype), np.empty((k, n), x.dtype)])


def _thin_qr_jvp(q, r, dx):
    """Tangents of q (..., m, n) and r (..., n, n) of a reduced QR decomposition with
    m >= n (j-towns.github.io/papers/qr-derivative.pdf)."""
    dx_rinv = triangular_solve(r, dx, left_side=False, lower=False)
    qt_dx_rinv = _matmul(_H(q), dx_rinv)
    low = tril(qt_dx_rinv, -1)
    omega = ew.sub(low, _H(low))   # skew-Hermitian part that keeps q orthonormal
    if dtypes.is_complex(get_aval(q).dtype):   # the free imaginary diagonal of dq
        diag = _diagonal(qt_dx_rinv)
        imag = ew.sub(diag, _as(ew.real(diag), get_aval(diag).dtype))
        omega = ew.add(omega, _diag_embed(imag))
    dq = ew.add(_matmul(q, ew.sub(omega, qt_dx_rinv)), dx_rinv)
    dr = _matmul(ew.sub(qt_dx_rinv, omega), r)
    return dq, dr


def _columns(x, start, stop):
    return sl.slice_in_dim(x, start, stop, axis=get_aval(x).ndim - 1)


def _rows(x, start, stop):
    return sl.slice_in_dim(x, start, stop, axis=get_aval(x).ndim - 2)


def _qr_jvp(primals, tangents, *, full_matrices):
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, full_matrices=full_matrices)
    m, n = get_aval(x).shape[-2:]
    last = get_aval(x).ndim - 1
    if m < n:
        # x = [x1 x2] with x1 square: x1 = q r1 is a square QR decomposition and
        # r2 = q^H x2, so dr2 = dq^H x2 + q^H dx2.
        dq, dr1 = _thin_qr_jvp(q, _columns(r, 0, m), _columns(dx, 0, m))
        dr2 = ew.add(_matmul(_H(dq), _columns(x, m, n)), _matmul(_H(q), _columns(dx, m, n)))
        return [q, r], [dq, st.concatenate([dr1, dr2], last)]
    if not full_matrices or m == n:
        dq, dr = _thin_qr_jvp(q, r, dx)
        return [q, r], [dq, dr]
    # Complete q of a tall x: the first n columns follow the reduced rule, the other
    # m - n ones arXiv:2409.13374 eqs. 32-33, and the zero rows of r stay zero.
    q_mn, q_mp = _columns(q, 0, n), _columns(q, n, m)
    dq_mn, dr = _thin_qr_jvp(q_mn, _rows(r, 0, n), dx)
    q_nn, q_pn = _rows(q_mn, 0, n), _rows(q_mn, n, m)
    dq_nn, dq_pn = _rows(dq_mn, 0, n), _rows(dq_mn, n, m)
    eye = _eye(get_aval(q_nn).shape, get_aval(q_nn).dtype)
    z_pn_h = solve(_H(ew.sub(q_nn, eye)), _H(q_pn))   # z_pn = q_pn (q_nn - I)^-1
    z_pn = _H(z_pn_h)
    dq_mp = ew.sub(_matmul(dq_mn, z_pn_h),
                   _matmul(ew.add(q_mn, _matmul(q_mp, z_pn)),
                           _H(ew.sub(dq_pn, _matmul(z_pn, dq_nn)))))
    zeros = st.full(get_aval(x).shape[:-2] + (m - n, n), 0, get_aval(x).dtype)
    return [q, r], [st.concatenate([dq_mn, dq_mp], last),
                    st.concatenate([dr, zeros], last - 1)]


def _lower_qr(ctx, x, *, full_matrices):
    m, n = x.aval.shape[-2:]
    batch = x.aval.shape[:-2]
    k = min(m, n)
    dtype = x.aval.dtype
    a, tau = lower_lapack(ctx, "geqrf", [x], [x.aval.strip_weak_type(),
                                              ShapedArray(batch + (k,), dtype)], "mmv")
    cols = m if full_matrices else k
    if cols > n:   # orgqr builds q in place: pad the reflectors to (m, cols)
        pad = [0] * (len(batch) + 2)
        hi = pad[:-1] + [cols - n]
        a_q = ctx.op("stablehlo.pad", [a, ctx.full(0, (), dtype)],
                     ShapedArray(batch + (m, cols), dtype),
                     {"edge_padding_low": hlo.i64_array(pad),
                      "edge_padding_high": hlo.i64_array(hi),
                      "interior_padding": hlo.i64_array(pad)})
    else:
        a_q = _lower_slice(ctx, a, (m, cols))
    routine = "ungqr" if dtypes.is_complex(dtype) else "orgqr"
    (q,) = lower_lapack(ctx, routine, [a_q, tau], [a_q.aval], "mvm")
    r = _lower_triu(ctx, _lower_slice(ctx, a, (min(cols, m), n)))
    return [q, r]


def _qr_samples():
    f = np.float32
    return [b.Sample([b.random_values((4, 3), f)], {"full_matrices": False}),
            b.Sample([b.random_values((3, 3), f)], {"full_matrices": True}),
            b.Sample([b.random_values((2, 3, 3), f)], {"full_matrices": False}),
            b.Sample([b.random_values((3, 2), np.complex64)], {"full_matrices": False})]


qr_p = define_primitive("qr", multiple_results=True, impl=_qr_impl,
                        abstract_eval=sharding_rules.typed(
                            _qr_abstract_eval, sharding_rules.linalg("qr")),
                        jvp=_qr_jvp, lower=_lower_qr,
                        samples=lambda: _qr_samples(), batch=_leading_batch_rule)


def qr(x, *, pivoting=False, full_matrices=True):
    """QR decomposition: (q, r) with x = q @ r, q with orthonormal columns, r upper
    triangular."""
    if pivoting:
        raise NotImplementedError("lax.linalg.qr(pivoting=True) is not supported")
    return tuple(qr_p.bind(x, full_matrices=bool(full_matrices)))


# --- composites ---------------------------------------------------------------------------

def solve(a, b_):
    """Solves a x = b_ for square a through its LU decomposition (b_ a batch of matrices
    of a's rank)."""
    lu_, _, perm = lu_p.bind(a)
    permuted = _matmul(permutation_matrix(perm, get_aval(a).dtype), b_)
    y = triangular_solve(lu_, permuted, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, y, left_side=True, lower=False)


def householder_product(a, taus):
    """The first n columns of Q = H_1 ... H_k (LAPACK's orgqr/ungqr) for a (..., m, n) and
    taus (..., k), k <= n <= m: H_i = I - taus[i] v_i v_i^H, where v_i is 0 above row i, 1
    at row i and a's column i below it."""
    a_aval, t_aval = get_aval(a), get_aval(taus)
    m, n = a_aval.shape[-2:]
    k = t_aval.shape[-1]
    if a_aval.ndim < 2 or not k <= n <= m or t_aval.shape[:-1] != a_aval.shape[:-2]:
        raise ValueError(f"householder_product takes a (..., m, n) and taus (..., k) with "
                         f"k <= n <= m and equal batch dimensions, got a of shape "
                         f"{a_aval.shape} and taus of shape {t_aval.shape}")
    if t_aval.dtype != a_aval.dtype:
        raise TypeError(f"householder_product: a ({a_aval.dtype}) and taus "
                        f"({t_aval.dtype}) must have the same dtype")
    reflectors = ew.add(tril(a, -1), _eye(a_aval.shape, a_aval.dtype))   # v_i in column i
    q = _eye(a_aval.shape, a_aval.dtype)
    batch = tuple(range(a_aval.ndim - 2))
    for i in reversed(range(k)):   # Q = H_1 (H_2 (... (H_k I)))
        v = sl.slice_in_dim(reflectors, i, i + 1, axis=a_aval.ndim - 1)        # (..., m, 1)
        w = ldot.dot_general(_conj(v), q, (((a_aval.ndim - 2,), (a_aval.ndim - 2,)),
                                           (batch, batch)), precision="highest")  # (..., 1, n)
        tau = st.expand_dims(sl.slice_in_dim(taus, i, i + 1, axis=t_aval.ndim - 1),
                             (t_aval.ndim,))                                    # (..., 1, 1)
        q = ew.sub(q, ew.mul(tau, _matmul(v, w)))
    return q


def symmetric_product(a_matrix, c_matrix, *, alpha=1., beta=0., symmetrize_output=False):
    """alpha a a^T + beta c for a (..., m, n) and a symmetric c (..., m, m). Only the lower
    triangle is guaranteed (as in JAX); symmetrize_output mirrors it into the upper one."""
    dtype = get_aval(a_matrix).dtype
    product = ldot.dot_general(a_matrix, a_matrix, (
        ((get_aval(a_matrix).ndim - 1,), (get_aval(a_matrix).ndim - 1,)),
        (tuple(range(get_aval(a_matrix).ndim - 2)),) * 2), precision="highest")
    result = ew.add(ew.mul(np.array(alpha, dtype), product),
                    ew.mul(np.array(beta, dtype), c_matrix))
    if symmetrize_output:
        result = ew.add(tril(result), _T(tril(result, -1)))
    return result


def tridiagonal_solve(dl, d, du, b_, *, perturb_singular=False):
    """Solves the tridiagonal systems given by sub-, main and super-diagonals (dl[0] and
    du[-1] are ignored) for right-hand sides b_ (..., m, n). With perturb_singular, a
    singular system gets a finite (large) solution: pivots of the partially pivoted LU
    factorisation smaller than eps * max|U| become that size (the smallest normal number
    when U is 0), as JAX's CPU kernel does for inverse iteration."""
    aval = get_aval(d)
    n = aval.shape[-1]
    shape = aval.shape + (n,)
    nd = len(shape)
    rows = st.broadcasted_iota(np.int32, shape, nd - 2)
    cols = st.broadcasted_iota(np.int32, shape, nd - 1)
    dims = tuple(range(nd - 1))   # each diagonal value belongs to its row
    zeros = st.full(shape, 0, aval.dtype)

    def band(v, offset):
        on_band = ew.eq(ew.add(rows, np.int32(offset)), cols)
        return ew.select(on_band, st.broadcast_in_dim(v, shape, dims), zeros)
    a = ew.add(ew.add(band(dl, -1), band(d, 0)), band(du, 1))
    if not perturb_singular:
        return solve(a, b_)
    lu_, _, perm = lu_p.bind(a)
    upper = triu(lu_)
    real = dtypes.real_dtype(aval.dtype)
    size = red.reduce_max(ew.abs(upper), (nd - 2, nd - 1))
    pert = ew.mul(size, np.array(np.finfo(real).eps, real))
    pert = ew.select(ew.eq(pert, st.full(get_aval(pert).shape, 0, real)),
                     st.full(get_aval(pert).shape, np.finfo(real).tiny, real), pert)
    pert = st.broadcast_in_dim(pert, aval.shape, tuple(range(nd - 2)))
    pivots = _diagonal(lu_)
    magnitude = ew.abs(pivots)
    direction = ew.select(ew.eq(magnitude, st.full(aval.shape, 0, real)),
                          st.full(aval.shape, 1, aval.dtype),
                          ew.div(pivots, _as(magnitude, aval.dtype)))
    perturbed = ew.select(ew.lt(magnitude, pert),
                          ew.mul(direction, _as(pert, aval.dtype)), pivots)
    lu_ = ew.add(ew.sub(lu_, _diag_embed(pivots)), _diag_embed(perturbed))
    permuted = _matmul(permutation_matrix(perm, aval.dtype), b_)
    y = triangular_solve(lu_, permuted, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, y, left_side=True, lower=False)
