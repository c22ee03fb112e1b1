"""jax.numpy.linalg and jax.lax.linalg: values against NumPy for several dtypes, shapes and
batch dimensions; derivatives with check_grads; vmap against a Python loop; jit on the
NumPy and XLA executors (XLA runs jaxlib's LAPACK custom calls); JAX's departures (NaNs
instead of LinAlgError, eigenvector derivatives not implemented)."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax._src.test_util import check_grads

RNG = np.random.default_rng(0)
TOL = {np.float32: 2e-4, np.complex64: 2e-4, np.float64: 1e-10, np.complex128: 1e-10}


def _rand(shape, dtype, rng=RNG):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _well_conditioned(shape, dtype):
    n = shape[-1]
    return (_rand(shape, dtype) + 3 * n * np.eye(n)).astype(dtype) if shape[-1] == \
        shape[-2] else _rand(shape, dtype)


def _spd(shape, dtype):
    a = _rand(shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _hermitian(shape, dtype):
    a = _rand(shape, dtype)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dtype)


def _close(actual, expected, dtype, factor=1.0):
    tol = TOL[dtype] * factor
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=tol, atol=tol)


def _executors():
    yield "numpy"
    try:
        import jaxlib  # noqa: F401
        yield "xla"
    except ImportError:
        pass


DTYPES = [np.float32, np.complex64]
SHAPES = [(4, 4), (2, 3, 3)]


# --- values against NumPy -------------------------------------------------------------------

VALUE_CASES = {
    "inv": (lambda m, a: m.linalg.inv(a), _well_conditioned),
    "det": (lambda m, a: m.linalg.det(a), _well_conditioned),
    "slogdet": (lambda m, a: tuple(m.linalg.slogdet(a)), _well_conditioned),
    "solve_matrix": (lambda m, a: m.linalg.solve(a, a[..., :2] * 2 + 1), _well_conditioned),
    "cholesky": (lambda m, a: m.linalg.cholesky(a), _spd),
    "cholesky_upper": (lambda m, a: m.linalg.cholesky(a, upper=True), _spd),
    "eigvalsh": (lambda m, a: m.linalg.eigvalsh(a), _hermitian),
    "svdvals": (lambda m, a: m.linalg.svd(a, compute_uv=False), _rand),
    "eigvals_sorted": (lambda m, a: np.sort_complex(np.asarray(m.linalg.eigvals(a))),
                       _well_conditioned),
    "pinv": (lambda m, a: m.linalg.pinv(a), _rand),
    "matrix_power": (lambda m, a: m.linalg.matrix_power(a, 3), _rand),
    "matrix_power_neg": (lambda m, a: m.linalg.matrix_power(a, -2), _well_conditioned),
    "matrix_rank": (lambda m, a: m.linalg.matrix_rank(a), _rand),
    "cond": (lambda m, a: m.linalg.cond(a), _well_conditioned),
    "cond_fro": (lambda m, a: m.linalg.cond(a, "fro"), _well_conditioned),
    "norm_fro": (lambda m, a: m.linalg.norm(a, axis=(-2, -1)), _rand),
    "norm_nuc": (lambda m, a: m.linalg.norm(a, "nuc", axis=(-2, -1)), _rand),
    "norm_2": (lambda m, a: m.linalg.norm(a, 2, axis=(-2, -1)), _rand),
    "norm_m2": (lambda m, a: m.linalg.norm(a, -2, axis=(-2, -1)), _rand),
    "norm_1": (lambda m, a: m.linalg.norm(a, 1, axis=(-2, -1)), _rand),
    "norm_inf": (lambda m, a: m.linalg.norm(a, -np.inf, axis=(-2, -1)), _rand),
    "norm_vec": (lambda m, a: [m.linalg.norm(a, o, axis=-1) for o in
                               (None, 0, 1, 3, np.inf, -np.inf, -1)], _rand),
    "trace_diag": (lambda m, a: (m.linalg.trace(a, offset=1), m.linalg.diagonal(a)), _rand),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_match_numpy(name, dtype, shape):
    fn, make = VALUE_CASES[name]
    a = make(shape, dtype)
    expected = fn(np, a)
    actual = fn(jnp, jnp.asarray(a))
    for e, x in zip(expected if isinstance(expected, (tuple, list)) else [expected],
                    actual if isinstance(actual, (tuple, list)) else [actual]):
        assert np.asarray(x).shape == np.shape(e)
        _close(x, e, dtype, factor=10)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)], ids=str)
def test_decompositions_reconstruct(dtype, shape):
    a = _rand(shape, dtype)
    for mode in ("reduced", "complete"):
        q, r = jnp.linalg.qr(a, mode=mode)
        _close(q @ r, a, dtype, 10)
        _close(np.swapaxes(np.conj(q), -1, -2) @ q,
               np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2),
               dtype, 10)
        assert np.allclose(np.tril(np.asarray(r), -1), 0)
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    _close((u * s[..., None, :]) @ vh, a, dtype, 10)
    _close(s, np.linalg.svd(a, compute_uv=False), dtype, 10)
    if shape[-1] == shape[-2]:
        lu, piv, perm = lax.linalg.lu(a)
        k = shape[-1]
        L = np.tril(np.asarray(lu), -1) + np.eye(k)
        U = np.triu(np.asarray(lu))
        _close(L @ U, np.take_along_axis(a, np.asarray(perm)[..., None], -2), dtype, 10)
        h = _hermitian(shape, dtype)
        w, v = jnp.linalg.eigh(h)
        _close((v * w[..., None, :]) @ np.swapaxes(np.conj(v), -1, -2), h, dtype, 10)
        w, v = jnp.linalg.eig(a)
        _close(a.astype(v.dtype) @ v, v * w[..., None, :], dtype, 100)


@pytest.mark.parametrize("b_shape", [(4,), (4, 2), (3, 4, 2)], ids=str)
def test_solve_broadcasting_follows_numpy2(b_shape):
    a = _well_conditioned((3, 4, 4), np.float32)
    b = _rand(b_shape, np.float32)
    _close(jnp.linalg.solve(a, b), np.linalg.solve(a, b), np.float32, 10)


def test_lstsq_and_tensor_solvers_and_multi_dot():
    a, b = _rand((6, 3), np.float32), _rand((6, 2), np.float32)
    x, resid, rank, s = jnp.linalg.lstsq(a, b)
    ex, eresid, erank, es = np.linalg.lstsq(a, b)
    _close(x, ex, np.float32, 10)
    _close(resid, eresid, np.float32, 100)
    assert int(rank) == erank
    t = _well_conditioned((6, 6), np.float32).reshape(2, 3, 2, 3)
    rhs = _rand((2, 3), np.float32)
    _close(jnp.linalg.tensorsolve(t, rhs), np.linalg.tensorsolve(t, rhs), np.float32, 10)
    _close(jnp.linalg.tensorinv(t, 2), np.linalg.tensorinv(t, 2), np.float32, 10)
    mats = [_rand((2, 30), np.float32), _rand((30, 4), np.float32), _rand((4, 50), np.float32),
            _rand((50,), np.float32)]
    _close(jnp.linalg.multi_dot(mats), np.linalg.multi_dot(mats), np.float32, 100)
    u, v = _rand((3,), np.float32), _rand((3,), np.float32)
    _close(jnp.linalg.cross(u, v), np.linalg.cross(u, v), np.float32)
    _close(jnp.linalg.outer(u, v), np.linalg.outer(u, v), np.float32)
    _close(jnp.linalg.vector_norm(a, ord=3), np.linalg.vector_norm(a, ord=3), np.float32, 10)
    _close(jnp.linalg.matrix_norm(a, ord=np.inf), np.linalg.matrix_norm(a, ord=np.inf),
           np.float32, 10)


def test_integer_input_promotes_and_x64_gives_float64():
    a = np.array([[2, 1], [1, 3]], np.int32)
    assert jnp.linalg.inv(a).dtype == np.float32
    assert jnp.linalg.det(a).dtype == np.float32
    with config.enable_x64(True):
        out = jnp.linalg.inv(a.astype(np.float64))
        assert out.dtype == np.float64
        _close(out, np.linalg.inv(a), np.float64)
        assert jnp.linalg.eigvals(a.astype(np.float64)).dtype == np.complex128


# --- JAX's departures from NumPy ------------------------------------------------------------

def test_failures_give_nans_not_exceptions():
    not_pd = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    for executor in _executors():
        with config.executor(executor):
            out = pyjax.jit(jnp.linalg.cholesky)(not_pd)
        assert np.isnan(np.asarray(out)).all(), executor
    assert np.isnan(np.asarray(jnp.linalg.cholesky(not_pd))).all()
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    assert float(jnp.linalg.det(singular)) == 0.0
    sign, logdet = jnp.linalg.slogdet(singular)
    assert float(sign) == 0.0 and float(logdet) == -np.inf


def test_eigenvector_derivatives_are_not_implemented_but_eigenvalues_are():
    a = np.array([[2.0, 1.0], [0.5, -1.0]], np.float32)
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        pyjax.jvp(lambda x: jnp.linalg.eig(x)[1], (a,), (a,))
    g = pyjax.grad(lambda x: jnp.sum(jnp.real(jnp.linalg.eigvals(x))))(a)
    _close(g, np.eye(2), np.float32)      # d trace / da


def test_bad_input_errors():
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.inv(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        jnp.linalg.det(jnp.ones(3))
    # a float the kernels lack is NotImplementedError (as JAX), other dtypes TypeError
    with pytest.raises(NotImplementedError, match="Unsupported dtype float16"):
        lax.linalg.cholesky(jnp.ones((2, 2), jnp.float16))
    with pytest.raises(NotImplementedError, match="Unsupported dtype float16"):
        jnp.linalg.qr(jnp.ones((5, 6), jnp.float16))
    with pytest.raises(TypeError, match="float32, float64, complex64 or complex128"):
        lax.linalg.cholesky(jnp.ones((2, 2), jnp.int32))
    with pytest.raises(ValueError, match="Unsupported QR"):
        jnp.linalg.qr(jnp.ones((2, 2)), mode="economic")
    with pytest.raises(ValueError, match="does not match"):
        jnp.linalg.solve(jnp.eye(3), jnp.ones(4))


# --- derivatives ----------------------------------------------------------------------------

GRAD_CASES = {
    "det": (lambda a: jnp.linalg.det(a), _well_conditioned, (3, 3)),
    "slogdet": (lambda a: jnp.linalg.slogdet(a)[1], _well_conditioned, (3, 3)),
    "inv": (lambda a: jnp.linalg.inv(a), _well_conditioned, (3, 3)),
    "solve": (lambda a: jnp.linalg.solve(a, jnp.arange(6.0).reshape(3, 2)),
              _well_conditioned, (3, 3)),
    "cholesky": (lambda a: jnp.linalg.cholesky(a @ a.T + 3 * jnp.eye(3)), _rand, (3, 3)),
    "eigh": (lambda a: jnp.linalg.eigh(a + a.T + jnp.diag(jnp.arange(3.0) * 3)),
             _rand, (3, 3)),
    "svd": (lambda a: jnp.linalg.svd(a, full_matrices=False), _rand, (4, 3)),
    "qr": (lambda a: jnp.linalg.qr(a), _rand, (4, 3)),
    "qr_complete_tall": (lambda a: jnp.linalg.qr(a, mode="complete"), _rand, (4, 2)),
    "qr_wide": (lambda a: jnp.linalg.qr(a), _rand, (2, 3)),
    "pinv": (lambda a: jnp.linalg.pinv(a), _rand, (4, 3)),
    "lstsq": (lambda a: jnp.linalg.lstsq(a, jnp.ones((4, 2)))[0], _rand, (4, 3)),
    "norm_nuc": (lambda a: jnp.linalg.norm(a, "nuc"), _rand, (4, 3)),
    "norm_2": (lambda a: jnp.linalg.norm(a, 2), _rand, (4, 3)),
    "eigvals": (lambda a: jnp.linalg.eigvals(a), _well_conditioned, (3, 3)),
    "triangular_solve": (lambda a: lax.linalg.triangular_solve(
        a, jnp.ones((3, 2)), left_side=True, lower=True, transpose_a=True),
        _well_conditioned, (3, 3)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grads(name):
    fn, make, shape = GRAD_CASES[name]
    with config.enable_x64(True):
        a = make(shape, np.float64)
        order = 1 if name in ("eigvals", "eigh") else 2
        check_grads(fn, (a,), order, eps=1e-6)


@pytest.mark.parametrize("jit", [False, True])
def test_complete_and_wide_qr_tangents_match_jax(jit):
    """JAX's rules for Q's extra columns (arXiv:2409.13374) and R's extra columns (values
    from JAX 0.10.2)."""
    a = np.arange(8.0).reshape(4, 2) ** 1.5 - 3
    t = np.cos(np.arange(8.0)).reshape(4, 2)
    complete = lambda x: jnp.linalg.qr(x, mode="complete")
    if jit:
        complete = pyjax.jit(complete)
    with config.enable_x64(True):
        _, (dq, dr) = pyjax.jvp(complete, (a,), (t,))
        _, (dq_wide, dr_wide) = pyjax.jvp(complete, (a.T[:, :3],), (t.T[:, :3],))
    np.testing.assert_allclose(dq, [
        [0.08326898299527717, 0.17733112156868244, -0.08728903918424413, 0.1786894624493896],
        [-0.03145093173787899, 0.07508499309001745, -0.26951914838216334, 0.29289852479879425],
        [-0.06127933283790266, -0.3450127029438098, -0.17672773555458204, -0.00641097951328973],
        [0.04708988496662624, 0.1921260652373183, 0.07497231555457506, -0.0762992305407292]],
        rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dr, [[0.38514894114161363, 0.6661038698596006],
                                    [0, 0.2452888858227024], [0, 0], [0, 0]],
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dq_wide, [[0.01617561593788125, -0.0242634239068218],
                                         [-0.02426342390682173, -0.01617561593788119]],
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dr_wide, [
        [-1.1317560894238443, 0.8393426558309955, 0.26891192249063],
        [0, -0.6242479890250034, 0.34495829386598587]], rtol=1e-10, atol=1e-12)


def test_complex_eigh_derivative_up_to_phase():
    """Complex eigenvectors are defined up to a phase per column; the projectors v v^H
    are not, and their derivative must match central differences."""
    def projectors(a):
        h = a + jnp.conj(a.T) + jnp.diag(jnp.arange(3.0) * 4)
        w, v = jnp.linalg.eigh(h)
        return w, jnp.einsum("ik,jk->kij", v, jnp.conj(v))
    with config.enable_x64(True):
        a = _rand((3, 3), np.complex128)
        check_grads(projectors, (a,), 1, eps=1e-6)


# --- vmap and jit -------------------------------------------------------------------------

VMAP_CASES = {
    "inv": (jnp.linalg.inv, _well_conditioned),
    "cholesky": (jnp.linalg.cholesky, _spd),
    "eigh": (lambda a: jnp.linalg.eigh(a)[0], _hermitian),
    "svd": (lambda a: jnp.linalg.svd(a, compute_uv=False), _rand),
    "qr": (lambda a: jnp.linalg.qr(a)[1], _rand),
    "lu": (lambda a: lax.linalg.lu(a)[0], _well_conditioned),
    "eigvals": (lambda a: jnp.sort(jnp.real(jnp.linalg.eigvals(a))), _spd),
    "solve_vec": (lambda a: jnp.linalg.solve(a, jnp.arange(4.0)), _well_conditioned),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_matches_loop(name):
    fn, make = VMAP_CASES[name]
    batch = make((3, 4, 4), np.float32)
    expected = np.stack([np.asarray(fn(b)) for b in batch])
    _close(pyjax.vmap(fn)(batch), expected, np.float32, 10)
    _close(pyjax.vmap(fn, in_axes=2)(np.moveaxis(batch, 0, 2)), expected, np.float32, 10)


JIT_CASES = {
    "cholesky": (jnp.linalg.cholesky, _spd, (2, 3, 3), np.float32),
    "cholesky_c": (jnp.linalg.cholesky, _spd, (3, 3), np.complex64),
    "qr_complete": (lambda a: jnp.linalg.qr(a, mode="complete"), _rand, (4, 3), np.float32),
    "qr_wide": (lambda a: jnp.linalg.qr(a), _rand, (2, 3, 5), np.complex64),
    "svd_full": (lambda a: jnp.linalg.svd(a), _rand, (3, 5), np.float32),
    "svd_c": (lambda a: jnp.linalg.svd(a, full_matrices=False), _rand, (4, 3), np.complex64),
    "eigh_upper": (lambda a: jnp.linalg.eigh(a, UPLO="U", symmetrize_input=False),
                   _hermitian, (2, 4, 4), np.complex64),
    "eig": (jnp.linalg.eig, _rand, (2, 3, 3), np.float32),
    "eig_left": (lambda a: lax.linalg.eig(a), _rand, (3, 3), np.complex64),
    "lu_wide": (lax.linalg.lu, _rand, (2, 3, 5), np.float32),
    "lu_tall": (lax.linalg.lu, _rand, (5, 3), np.complex64),
    "solve": (jnp.linalg.solve, None, (3, 3), np.float32),
    "det_slogdet": (lambda a: (jnp.linalg.det(a), jnp.linalg.slogdet(a)), _well_conditioned,
                    (2, 4, 4), np.float32),
    "triangular_right": (lambda a: lax.linalg.triangular_solve(
        a, a[..., :2, :] + 1, left_side=False, lower=False, unit_diagonal=True),
        _well_conditioned, (3, 3), np.float32),
    "triangular_conj": (lambda a: lax.linalg.triangular_solve(
        a, a[..., :2] + 1, left_side=True, lower=True, conjugate_a=True),
        _well_conditioned, (3, 3), np.complex64),
    "subset": (lambda a: lax.linalg.eigh(a, subset_by_index=(1, 3)), _hermitian, (4, 4),
               np.float32),
}


@pytest.mark.parametrize("executor", list(_executors()))
@pytest.mark.parametrize("name", sorted(JIT_CASES))
def test_jit_matches_eager(name, executor):
    fn, make, shape, dtype = JIT_CASES[name]
    if make is None:
        args = (_well_conditioned(shape, dtype), _rand(shape[:-1] + (2,), dtype))
    else:
        args = (make(shape, dtype),)
    expected = pyjax.tree_util.tree_leaves(fn(*args))
    with config.executor(executor):
        actual = pyjax.tree_util.tree_leaves(pyjax.jit(fn)(*args))
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        _close(a, e, dtype, 10)


def test_xla_lowering_uses_lapack_custom_calls():
    pytest.importorskip("jaxlib")
    a = _spd((3, 3), np.float32)
    text = pyjax.jit(lambda x: (jnp.linalg.cholesky(x), jnp.linalg.svd(x),
                                jnp.linalg.eigh(x), jnp.linalg.qr(x))).lower(a).as_text()
    for target in ("lapack_spotrf_ffi", "lapack_sgesdd_ffi", "lapack_ssyevd_ffi",
                   "lapack_sgeqrf_ffi", "lapack_sorgqr_ffi"):
        assert target in text


def test_lu_pivots_to_permutation_traced_and_concrete():
    a = _well_conditioned((2, 5, 4), np.float32)
    lu, pivots, perm = lax.linalg.lu(a)
    for fn in (lax.linalg.lu_pivots_to_permutation,
               pyjax.jit(lax.linalg.lu_pivots_to_permutation, static_argnums=1)):
        np.testing.assert_array_equal(fn(pivots, 5), perm)


@pytest.mark.parametrize("executor", list(_executors()))
def test_empty_matrices(executor):
    """Empty matrices and empty batches: no LAPACK call is made with a zero leading
    dimension; square factors of empty matrices are identities."""
    cases = [(jnp.linalg.inv, (0, 0)), (jnp.linalg.det, (0, 3, 3)), (jnp.linalg.svd, (0, 3)),
             (jnp.linalg.svd, (3, 0)), (lambda a: jnp.linalg.qr(a, "complete"), (3, 0)),
             (lax.linalg.lu, (3, 0)), (jnp.linalg.eigh, (0, 0)), (jnp.linalg.eig, (2, 0, 0))]
    for fn, shape in cases:
        a = np.zeros(shape, np.float32)
        expected = pyjax.tree_util.tree_leaves(fn(a))
        with config.executor(executor):
            actual = pyjax.tree_util.tree_leaves(pyjax.jit(fn)(a))
        for x, e in zip(actual, expected):
            np.testing.assert_array_equal(x, e)
    u, s, vh = jnp.linalg.svd(np.zeros((3, 0), np.float32))
    np.testing.assert_array_equal(u, np.eye(3))


def test_tridiagonal_solve_perturb_singular():
    """Tiny LU pivots become eps * max|U| (the smallest normal number when U is 0): JAX
    0.10.2's values on CPU."""
    f = np.float32
    solve = lax.linalg.tridiagonal_solve
    zero = np.zeros(3, f)
    np.testing.assert_allclose(solve(zero, zero, zero, np.ones((3, 1), f),
                                     perturb_singular=True), np.full((3, 1), 8.507059e37, f))
    out = pyjax.jit(lambda *a: solve(*a, perturb_singular=True))(
        np.array([0, 1.], f), np.array([1, 3.], f), np.array([3, 0.], f),
        np.array([[1.], [4.]], f))
    np.testing.assert_allclose(out, [[-2.5165824e+07], [8.3886080e+06]], rtol=1e-6)
    out = solve(np.array([0, 2., -2, 3], f), np.array([1, 4., 1, -1], f),
                np.array([2., -1, 1, 0], f), np.array([[1.], [2], [3], [4]], f),
                perturb_singular=True)
    np.testing.assert_allclose(out, [[8.], [-3.5], [0.], [-4.]], atol=1e-6)
    grad = pyjax.grad(lambda d: solve(np.array([0, 1., 1], f), d, np.array([1, 1., 0], f),
                                      np.array([[1.], [2], [3]], f),
                                      perturb_singular=True).sum())(np.array([3, 3., 3], f))
    np.testing.assert_allclose(grad, [-0.06802722, -0.04081632, -0.2585034], rtol=1e-5)


@pytest.mark.parametrize("algorithm", ["QR", "DEFAULT", "DIVIDE_AND_CONQUER"])
def test_svd_algorithms(algorithm):
    alg = lax.linalg.SvdAlgorithm[algorithm]
    x = np.random.default_rng(0).normal(size=(4, 3)).astype("float32")
    u, s, vt = pyjax.jit(lambda x: lax.linalg.svd(x, algorithm=alg, full_matrices=False))(x)
    np.testing.assert_allclose(s, [2.2335, 0.92497, 0.33483], atol=1e-4)
    np.testing.assert_allclose(np.abs(np.asarray(u))[0], [0.0741, 0.6696, 0.5378], atol=1e-4)
    np.testing.assert_allclose(lax.linalg.svd(x, algorithm=alg, compute_uv=False), s,
                               rtol=1e-5)


def test_svd_algorithms_of_other_platforms():
    x = np.ones((3, 3), np.float32)
    with pytest.raises(NotImplementedError, match="Jacobi and Polar"):
        lax.linalg.svd(x, algorithm=lax.linalg.SvdAlgorithm.JACOBI)


def test_det_gradient_of_singular_matrices_matches_jax():
    """d det = tr(adj(a) da), finite where a is singular (JAX 0.10.2's values)."""
    np.testing.assert_array_equal(pyjax.grad(jnp.linalg.det)(np.zeros((2, 2), np.float32)),
                                  np.zeros((2, 2)))
    corank1 = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    np.testing.assert_allclose(pyjax.grad(jnp.linalg.det)(corank1), [[4, -2], [-2, 1]])
    hessian = pyjax.jacfwd(pyjax.grad(jnp.linalg.det))(np.eye(2, dtype=np.float32))
    np.testing.assert_allclose(hessian, [[[[0, 0], [0, 1]], [[0, 0], [-1, 0]]],
                                         [[[0, -1], [0, 0]], [[1, 0], [0, 0]]]])


def test_lstsq_of_a_zero_matrix_matches_numpy():
    x, resid, rank, s = jnp.linalg.lstsq(np.zeros((2, 2)), np.ones((2, 2)), numpy_resid=True)
    np.testing.assert_array_equal(x, np.zeros((2, 2)))
    assert resid.shape == (0,) and int(rank) == 0
    _, resid, rank, _ = jnp.linalg.lstsq(np.zeros((2, 1)), np.ones((2, 1)), numpy_resid=True)
    assert resid.shape == (0,) and int(rank) == 0


def test_vecdot_axis_is_each_operands_own():
    x = np.arange(8.0).reshape(2, 2, 2).astype(np.float32)
    y = np.arange(4.0).reshape(2, 2).astype(np.float32) + 1
    assert jnp.linalg.vecdot(x, y, axis=0).tolist() == [[12, 22], [20, 34]]
    assert jnp.linalg.vecdot(x, y, axis=1).tolist() == [[4, 15], [16, 43]]


def test_householder_product_matches_jax():
    """Q from Householder reflectors, as LAPACK's orgqr (values from JAX 0.10.2)."""
    r = np.random.RandomState(0)
    a = r.randn(2, 5, 3).astype(np.float32)
    taus = r.randn(2, 2).astype(np.float32)
    q = lax.linalg.householder_product(a, taus)
    assert q.shape == (2, 5, 3)
    np.testing.assert_allclose(np.asarray(q)[1, :2],
                               [[1.8878, -4.4875, -3.5391], [0.2779, 1.5759, 0.6043]],
                               atol=1e-4)
    with pytest.raises(ValueError, match="k <= n <= m"):
        lax.linalg.householder_product(a, np.ones((2, 4), np.float32))


@pytest.mark.parametrize("jit", [False, True])
def test_eigh_implementations(jit):
    """lax.linalg.eigh's implementation: QR (the CPU default) runs LAPACK; JACOBI and
    QDWH raise JAX's errors when eigh runs, though they trace (as in JAX 0.10.2)."""
    a = np.array([[2., 1.], [1., 3.]], np.float32)
    impls = lax.linalg.EighImplementation
    assert [i.value for i in impls] == ["qr", "jacobi", "qdwh"]

    def eigh(a, implementation):
        return lax.linalg.eigh(a, implementation=implementation)
    run = pyjax.jit(eigh, static_argnums=1) if jit else eigh
    for implementation in (None, impls.QR):
        np.testing.assert_allclose(run(a, implementation)[1], [1.381966, 3.618034], rtol=1e-6)
    assert "algorithm=EighImplementation.JACOBI" in str(
        pyjax.make_jaxpr(lambda a: eigh(a, impls.JACOBI))(a))
    with pytest.raises(NotImplementedError, match="Jacobi implementation is not supported "
                                                  "on CPU"):
        run(a, impls.JACOBI)
    with pytest.raises(NotImplementedError, match="QDWH implementation is only supported on "
                                                  "TPU"):
        run(a, impls.QDWH)


@pytest.mark.parametrize("jit", [False, True])
def test_cholesky_update_matches_jax(jit):
    """The upper Cholesky factor of R^T R + w w^T by Givens rotations (values from JAX
    0.10.2), and JAX's errors: not differentiable, not batchable, bad shapes and dtypes."""
    update = pyjax.jit(lax.linalg.cholesky_update) if jit else lax.linalg.cholesky_update
    r = np.triu(np.ones((4, 4), np.float32))
    np.testing.assert_allclose(update(r, np.arange(1., 5., dtype=np.float32)),
                               [[1.4142135, 2.1213202, 2.828427, 3.535534],
                                [0, 1.2247448, 1.6329931, 2.0412414],
                                [0, 0, 1.1547005, 1.4433756], [0, 0, 0, 1.118034]],
                               rtol=1e-6, atol=1e-7)
    a = np.array([[2., 1, 0], [1, 3, 1], [0, 1, 4]], np.float32)
    updated = update(np.linalg.cholesky(a).T, np.array([0.5, -1., 0.], np.float32))
    np.testing.assert_allclose(updated, [[1.5, 0.33333331, 0], [0, 1.9720266, 0.50709254],
                                         [0, 0, 1.9346464]], rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(update(np.eye(2, dtype=np.float32), np.zeros(2, np.float32)),
                                  np.eye(2))
    with pytest.raises(NotImplementedError, match="cholesky_update"):
        pyjax.grad(lambda w: lax.linalg.cholesky_update(r, w).sum())(np.ones(4, np.float32))
    with pytest.raises(NotImplementedError, match="cholesky_update"):
        pyjax.vmap(lax.linalg.cholesky_update)(np.stack([r, r]), np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match="Got shapes \\(3, 3\\) and \\(2,\\)"):
        lax.linalg.cholesky_update(np.eye(3, dtype=np.float32), np.ones(2, np.float32))
    with pytest.raises(TypeError, match="does not accept dtype int32 at position 0"):
        lax.linalg.cholesky_update(np.eye(3, dtype=np.int32), np.ones(3, np.int32))
    with pytest.raises(TypeError, match="does not accept dtype complex64"):
        lax.linalg.cholesky_update(np.eye(3, dtype=np.complex64), np.ones(3, np.complex64))
    with pytest.raises(TypeError, match="rank of exactly 2"):
        lax.linalg.cholesky_update(np.ones((2, 3, 3), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="same dtypes, got float32, float16"):
        lax.linalg.cholesky_update(np.eye(3, dtype=np.float32), np.ones(3, np.float16))


@pytest.mark.parametrize("jit", [False, True])
def test_tridiagonal_matches_jax(jit):
    """LAPACK sytrd/hetrd's reduction, one triangle read (values from JAX 0.10.2)."""
    tridiagonal = pyjax.jit(lax.linalg.tridiagonal, static_argnames="lower") if jit \
        else lax.linalg.tridiagonal
    a = np.array([[4., 1, -2], [1, 2, 0], [-2, 0, 3]])
    with config.enable_x64(True):
        arr, d, e, taus = tridiagonal(a, lower=True)
        np.testing.assert_allclose(arr, [[4, 1, -2], [-2.23606797749979, 2.8, 0],
                                         [-0.6180339887498948, 0.4000000000000002, 2.2]],
                                   rtol=1e-13)
        np.testing.assert_allclose(d, [4, 2.8, 2.2], rtol=1e-13)
        np.testing.assert_allclose(e, [-2.23606797749979, 0.4000000000000002], rtol=1e-13)
        np.testing.assert_allclose(taus, [1.4472135954999579, 0], rtol=1e-13)
        arr, d, e, taus = tridiagonal(np.triu(a) + 7 * np.tril(a, -1), lower=False)
        np.testing.assert_array_equal(np.triu(arr), [[2, 1, -1], [0, 4, -2], [0, 0, 3]])
        np.testing.assert_array_equal(d, [2, 4, 3])
        np.testing.assert_array_equal(e, [1, -2])
        np.testing.assert_array_equal(taus, [0, 1])
    c = np.array([[2, 1 - 1j, 0.5j], [1 + 1j, 3, 2], [-0.5j, 2, 1]], np.complex64)
    arr, d, e, taus = tridiagonal(c, lower=True)
    assert (d.dtype, e.dtype, taus.dtype) == (np.float32, np.float32, np.complex64)
    np.testing.assert_allclose(d, [2, 1.8888893, 2.1111107], rtol=1e-5)
    np.testing.assert_allclose(e, [-1.5, 2.233306], rtol=1e-5)
    np.testing.assert_allclose(taus, [1.6666666 + 0.6666667j, 1.6141781 + 0.7891674j],
                               rtol=1e-5)
    np.testing.assert_allclose(arr[2, 0], -0.06896552 - 0.17241378j, rtol=1e-5)
    batch = np.stack([c, c.T])
    for got, one in zip(pyjax.vmap(tridiagonal)(batch), tridiagonal(batch[1])):
        np.testing.assert_array_equal(got[1], one)
    with pytest.raises(ValueError, match="square matri"):
        tridiagonal(np.zeros((0, 0), np.float32))
    with pytest.raises(NotImplementedError, match="tridiagonal"):
        pyjax.grad(lambda x: tridiagonal(x)[1].sum())(np.eye(2, dtype=np.float32))


def test_symmetric_product():
    r = np.random.RandomState(0)
    a = r.randn(3, 4, 2).astype(np.float32)
    c = r.randn(3, 4, 4).astype(np.float32)
    c = c + np.swapaxes(c, -1, -2)
    full = lax.linalg.symmetric_product(a, c, alpha=2.0, beta=0.5, symmetrize_output=True)
    np.testing.assert_allclose(full, 2 * np.einsum("bij,bkj->bik", a, a) + 0.5 * c,
                               rtol=1e-5, atol=1e-5)
    batched = pyjax.vmap(lambda a, c: lax.linalg.symmetric_product(a, c))(a, c)
    np.testing.assert_allclose(np.tril(batched), np.tril(np.einsum("bij,bkj->bik", a, a)),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(0, 2), (2, 0), (0, 0)])
@pytest.mark.parametrize("ord", [1, 2, np.inf, "fro", "nuc"])
def test_norms_of_empty_matrices_are_zero(shape, ord):
    """As in JAX 0.10.2 (its min-based orders still raise for a missing row or column)."""
    assert float(jnp.linalg.matrix_norm(jnp.zeros(shape), ord=ord)) == 0.0
