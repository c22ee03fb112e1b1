"""jax.scipy.linalg against values observed from JAX 0.10.2 (written here as literals) or
SciPy where JAX equals it, plus jit/vmap/grad and bad input."""
import warnings

import numpy as np
import pytest
import scipy.linalg as sla

import pyjax as jax
import pyjax.numpy as jnp
import pyjax.scipy.linalg as L

A = jnp.array([[4., 1., 0., 2.], [-1., 3., 1., 0.], [0.5, 1., 2., 0.3], [1., 0., -2., 5.]])
S = jnp.array([[4., 1., 0., 0.5], [1., 3., 1., 0.], [0., 1., 2., 0.3], [0.5, 0., 0.3, 5.]])
B = jnp.array([1., 2., 3., -1.])
B2 = jnp.stack([B, 2 * B], 1)


def close(actual, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


def flat(x):
    return np.asarray(x).ravel()


# --- Cholesky -------------------------------------------------------------------------

CHOL_U = [2., 0.5, 0., 0.25, 0., 1.6583124, 0.6030227, -0.07537784,
          0., 0., 1.2792042, 0.27005428, 0., 0., 0., 2.2042887]
SOLVE_S_B = [0.27166706, 0.07226162, 1.5115483, -0.3178596]


def test_cholesky_upper_and_lower():
    u = L.cholesky(S)
    assert u.dtype == jnp.float32 and u.shape == (4, 4)
    close(flat(u), CHOL_U)
    close(L.cholesky(S, lower=True), np.asarray(u).T)


def test_cholesky_reads_one_triangle_and_batches():
    junk = S + jnp.tril(jnp.ones((4, 4)), -1) * 9     # the upper factor reads the upper part
    close(flat(L.cholesky(junk)), CHOL_U)
    batch = jnp.stack([S, 2 * S])
    close(L.cholesky(batch)[1], np.sqrt(2) * np.asarray(L.cholesky(S)), rtol=1e-5)
    close(jax.vmap(L.cholesky)(batch), L.cholesky(batch))


def test_cholesky_complex():
    h = S + 1j * (jnp.triu(A, 1) - jnp.triu(A, 1).T)
    u = L.cholesky(h)
    assert u.dtype == jnp.complex64
    close(np.asarray(u)[0], [2, 0.5 + 0.5j, 0, 0.25 + 1j])
    close(np.asarray(u)[1, 1:], [1.5811388, 0.6324555 + 0.6324555j, -0.3952847 - 0.23717082j])


def test_cho_factor_and_cho_solve():
    c, lower = L.cho_factor(S)
    assert lower is False
    close(L.cho_solve((c, lower), B), SOLVE_S_B)
    close(L.cho_solve(L.cho_factor(S, lower=True), B2),
          np.stack([SOLVE_S_B, 2 * np.array(SOLVE_S_B)], 1))
    close(jax.jit(lambda s, b: L.cho_solve(L.cho_factor(s), b))(S, B), SOLVE_S_B)


def test_cho_solve_batched_vectors_warn_as_in_jax():
    with pytest.warns(FutureWarning, match="batched 1D solves"):
        out = L.cho_solve(L.cho_factor(jnp.stack([S, S])), jnp.stack([B, B]))
    close(out[1], SOLVE_S_B)


def test_cho_solve_bad_input():
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        L.cho_solve((S, False), B[:3])
    with pytest.raises(TypeError, match=r"\(c, lower\) from cho_factor"):
        L.cho_solve(S, B)
    with pytest.raises(ValueError, match="square matrix"):
        L.cholesky(B)


# --- LU -------------------------------------------------------------------------------

LU_L = [1., 0., 0., 0., -0.25, 1., 0., 0., 0.25, -0.07692308, 1., 0.,
        0.125, 0.26923078, -0.90000004, 1.]
LU_U = [4., 1., 0., 2., 0., 3.25, 1., 0.5, 0., 0., -1.9230769, 4.5384617, 0., 0., 0., 4.0000005]
LU_P = [1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 0., 1., 0., 0., 1., 0.]


def test_lu():
    p, l_, u = L.lu(A)
    assert p.dtype == l_.dtype == u.dtype == jnp.float32
    close(flat(p), LU_P)
    close(flat(l_), LU_L)
    close(flat(u), LU_U)
    pl, u2 = L.lu(A, permute_l=True)
    close(flat(pl), [1., 0., 0., 0., -0.25, 1., 0., 0., 0.125, 0.26923078, -0.90000004, 1.,
                     0.25, -0.07692308, 1., 0.])
    close(u2, u)


def test_lu_rectangular_complex_and_batched():
    p, l_, u = L.lu(A[:3])
    assert (p.shape, l_.shape, u.shape) == ((3, 3), (3, 3), (3, 4))
    close(flat(u), [4., 1., 0., 2., 0., 3.25, 1., 0.5, 0., 0., 1.7307692, -0.08461538])
    p, l_, u = L.lu(A[:, :3])
    assert (p.shape, l_.shape, u.shape) == ((4, 4), (4, 3), (3, 3))
    close(flat(l_)[-3:], [0.125, 0.26923078, -0.90000004])
    p, l_, u = L.lu(A.astype(jnp.complex64))
    assert p.dtype == jnp.float32 and l_.dtype == jnp.complex64
    batch = jnp.stack([A, A.T])
    p, l_, u = L.lu(batch)
    close(jnp.matmul(jnp.matmul(p, l_), u), batch)


def test_lu_factor_and_solve():
    lu_, piv = L.lu_factor(A)
    assert piv.dtype == jnp.int32
    assert piv.tolist() == [0, 1, 3, 3]
    close(flat(lu_), [4., 1., 0., 2., -0.25, 3.25, 1., 0.5, 0.25, -0.07692308, -1.9230769,
                      4.5384617, 0.125, 0.26923078, -0.90000004, 4.0000005])
    close(L.lu_solve((lu_, piv), B), [0.02900002, 0.234, 1.3270001, 0.32499996])
    transposed = [0.27600002, 0.23800004, 1.0099999, -0.37100005]
    close(L.lu_solve((lu_, piv), B, trans=1), transposed)
    close(L.lu_solve((lu_, piv), B, trans=2), transposed)
    close(L.lu_solve((lu_, piv), B2)[:, 1], [0.05800004, 0.468, 2.6540003, 0.6499999])
    ac = A + 1j * A.T
    x = L.lu_solve(L.lu_factor(ac), B, trans=2)
    close(jnp.matmul(jnp.conj(ac.T), x), B, atol=1e-4)


def test_lu_bad_input():
    with pytest.raises(TypeError, match=r"\(\.\.\., M, N\)"):
        L.lu(B)
    with pytest.raises(ValueError, match="square"):
        L.lu_solve(L.lu_factor(A[:3]), B)
    with pytest.raises(ValueError, match="trans"):
        L.lu_solve(L.lu_factor(A), B, trans=3)


# --- QR -------------------------------------------------------------------------------

QR_R = [-4.2720017, -0.35112333, 0.46816462, 0., -3.2979863, -1.5659204, 0., 0., -2.515694]
QR_Q = [-0.9363291, -0.20352809, -0.04756038, -0.28213826, 0.23408231, -0.9345678,
        0.22778921, -0.14106911, -0.11704116, -0.2907544, -0.63580734, 0.7053457,
        -0.23408231, 0.02492181, 0.7359343, 0.63481104]


def test_qr_modes():
    q, r = L.qr(A[:, :3])
    assert q.shape == (4, 4) and r.shape == (4, 3)
    close(flat(q), QR_Q)
    close(flat(r[:3]), QR_R)
    q, r = L.qr(A[:, :3], mode="economic")
    assert q.shape == (4, 3) and r.shape == (3, 3)
    close(flat(r), QR_R)
    (r,) = L.qr(A[:, :3], mode="r")
    assert r.shape == (4, 3)


def test_qr_multiply():
    cq, r = L.qr_multiply(A[:, :3], B)
    close(cq, [-0.5852058, -2.9698486, -2.2353382])
    close(flat(r), QR_R)
    cq, r = L.qr_multiply(A[:, :3], B[:3], mode="left")
    close(cq, [-1.4860666, -0.9516857, -2.6059718, 2.0235643])
    cq, r = L.qr_multiply(A[:3], B[:3])
    assert r.shape == (3, 4)
    close(cq, [-0.84270096, -2.940837, 2.1543753])
    close(flat(r)[:4], [-4.1533117, -0.36115754, 0., -1.9622893])
    # conjugate uses conj(Q)
    ac = A + 0.5j * A.T
    cq, _ = L.qr_multiply(ac, B, conjugate=True)
    q, _ = L.qr(ac, mode="economic")
    close(cq, jnp.matmul(B.astype(jnp.complex64), jnp.conj(q)), atol=1e-4)


PIVOTED_R = [-5.3935146, -2.4381137, -0.4264381, 1.7428339, 0., 3.5079343, 0.13121557,
             0.64118266, 0., 0., -3.2864773, -1.7219284, 0., 0., 0., 1.6082224]


def test_qr_pivoting():
    q, r, p = L.qr(A, pivoting=True)
    assert p.dtype == jnp.int32 and p.tolist() == [3, 0, 1, 2]
    close(flat(r), PIVOTED_R, atol=2e-6)
    close(flat(q)[:4], [-0.37081575, 0.8825449, -0.22092544, -0.18655376])
    close(jnp.matmul(q, r), A[:, p], atol=1e-5)
    q, r, p = L.qr(A[:, :3], pivoting=True, mode="economic")
    assert q.shape == (4, 3) and p.tolist() == [0, 1, 2]
    close(flat(r), QR_R)
    r, p = L.qr(A[:3], pivoting=True, mode="r")
    assert r.shape == (3, 4) and p.tolist() == [0, 1, 2, 3]
    q, r, p = L.qr(A + 1j * A.T, pivoting=True)
    assert p.tolist() == [3, 0, 1, 2]
    close(np.diag(np.asarray(r)), [-7.687002, 5.0083013, 3.8599713, -1.5371014], atol=2e-6)
    q, r, p = L.qr(jnp.ones((3, 3)), pivoting=True)
    assert p.tolist() == [0, 1, 2]
    close(flat(r)[:3], [-1.7320509, -1.7320509, -1.7320509])
    assert L.qr(jnp.stack([A, A.T]), pivoting=True)[2].tolist() == [[3, 0, 1, 2]] * 2
    assert jax.jit(lambda a: L.qr(a, pivoting=True))(A)[2].tolist() == [3, 0, 1, 2]
    cq, r, p = L.qr_multiply(A[:, :3], A[0], pivoting=True)
    close(cq, [-3.9793987, -1.6988367, 1.5094166])
    g = jax.grad(lambda a: L.qr(a, pivoting=True)[1].sum())(A)
    close(flat(g)[:4], [0.8172986, 0.47983637, 0.10424993, -1.6715628], atol=1e-5)
    q, r, p = L.qr(jnp.zeros((2, 3)), pivoting=True)
    close(q, np.eye(2))
    close(r, np.zeros((2, 3)))


def test_qr_bad_input():
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'raw'"):
        L.qr(A, mode="raw")
    with pytest.raises(ValueError, match="c @ Q operation"):
        L.qr_multiply(A, B[:3])
    with pytest.raises(ValueError, match="Q @ c operation"):
        L.qr_multiply(A[:, :3], B, mode="left")
    with pytest.raises(ValueError, match="mode must be 'right' or 'left'"):
        L.qr_multiply(A, B, mode="x")


# --- solvers --------------------------------------------------------------------------

def test_solve_assume_a():
    for assume_a in ("gen", "sym", "her", "pos"):
        close(L.solve(S, B, assume_a=assume_a), SOLVE_S_B)
    close(L.solve(S, B2, assume_a="pos")[:, 1], 2 * np.array(SOLVE_S_B))
    close(L.solve(S, B2, assume_a="pos", lower=True)[:, 0], SOLVE_S_B)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        out = L.solve(jnp.stack([S, 2 * S]), jnp.stack([B, B]), assume_a="pos")
    close(out[1], [0.1358335, 0.03613083, 0.755774, -0.15892977])


def test_solve_grad_jit_vmap():
    g = jax.grad(lambda s: L.solve(s, B, assume_a="pos").sum())(S)
    close(flat(g)[:4], [-0.05379915, -0.01431021, -0.29933703, 0.06294681])
    close(flat(g)[-4:], [-0.04224413, -0.01123666, -0.23504522, 0.04942705])
    close(jax.jit(lambda s, b: L.solve(s, b, assume_a="pos"))(S, B), SOLVE_S_B)
    close(jax.vmap(lambda b: L.solve(S, b, assume_a="pos"))(B2.T)[1], 2 * np.array(SOLVE_S_B))


def test_solve_bad_input():
    with pytest.raises(ValueError, match="Expected assume_a to be one of"):
        L.solve(A, B, assume_a="x")
    with pytest.raises(ValueError, match="shapes a="):
        L.solve(A, B[:3], assume_a="pos")
    with pytest.raises(ValueError, match="shapes a="):
        L.solve(jnp.stack([S, S]), B, assume_a="pos")
    with pytest.raises(ValueError):
        L.solve(A, B[:3])


TRI_N = [0.31083333, 0.15666668, 1.53, -0.2]
TRI_T = [0.25, 0.5833334, 1.2083333, -0.3725]


def test_solve_triangular():
    for trans, expected in ((0, TRI_N), ("N", TRI_N), (1, TRI_T), ("T", TRI_T), (2, TRI_T),
                            ("C", TRI_T)):
        close(L.solve_triangular(A, B, trans=trans), expected)
    close(flat(L.solve_triangular(A, B2, lower=True, unit_diagonal=True)),
          [1., 2., 3., 6., -0.5, -1., -3., -6.])
    with pytest.warns(FutureWarning, match="batched 1D solves"):
        out = L.solve_triangular(jnp.stack([A, A]), jnp.stack([B, B]))
    close(out[1], TRI_N)
    ac = jnp.triu(A + 1j * A.T)
    close(L.solve_triangular(ac, B, trans="C"), sla.solve_triangular(np.asarray(ac),
                                                                   np.asarray(B), trans="C"),
          atol=1e-5)
    with pytest.raises(ValueError, match="Invalid 'trans' value 3"):
        L.solve_triangular(A, B, trans=3)


def test_solve_triangular_bool_trans_is_0_or_1():
    # JAX compares trans with 0 and 1, so True transposes and False does not (blackjax
    # passes trans=True)
    close(L.solve_triangular(A, B, trans=True), TRI_T)
    close(L.solve_triangular(A, B, trans=np.True_), TRI_T)
    close(L.solve_triangular(A, B, trans=False), TRI_N)


def test_solve_triangular_grad():
    g = jax.grad(lambda a: L.solve_triangular(a, B, lower=True).sum())(A)
    close(flat(g), [-0.034375, 0., 0., 0., -0.025, -0.075, 0., 0., -0.175, -0.525, -0.74375, 0.,
                    -0.05, -0.15, -0.2125, -0.035])


def test_grads_of_factor_solvers():
    g = jax.grad(lambda a: L.lu_solve(L.lu_factor(a), B, trans=1).sum())(A)
    close(flat(g)[:4], [-0.008004, -0.064584, -0.09025203, -0.08970001])
    close(flat(g)[-4:], [0.01075901, 0.08681398, 0.1213171, 0.12057503])
    g = jax.grad(lambda a: L.lu(a)[2].sum())(A)
    close(flat(g), [1.0132574, 1.708509, 0.0752306, 0.61923075, -0.7235858, 1.1404971,
                    0.604923, 0.8769231, -0.28, -0.88, 2.36, 1., -0.63661534, -1.2535387,
                    3.124, 1.9], rtol=1e-4)
    # cho_solve(cho_factor(s)) reads one triangle of s; the gradient along symmetric
    # directions equals JAX's (whose cholesky gradient also has the other triangle).
    g = jax.grad(lambda s: L.cho_solve(L.cho_factor(s), B).sum())(S)
    g_sym = np.asarray(g) + np.asarray(g).T - np.diag(np.diag(np.asarray(g)))
    jax_g = np.array([[-0.05379915, -0.04899907, -0.36738545, 0.02839134],
                      [-0.00065952, -0.00940245, -0.44840595, 0.02408106],
                      [-0.0437743, 0.22198436, -0.6221787, -0.09377426],
                      [-0.00768865, 0.00604109, -0.0104346, 0.04942705]])
    close(g_sym, jax_g + jax_g.T - np.diag(np.diag(jax_g)), atol=1e-5)


def test_det_inv_eigh_svd():
    close(L.det(A), 100.00001, rtol=1e-5)
    close(flat(jax.grad(L.det)(A))[:4], [26.800005, 12.800001, -11.600001, -10.], rtol=1e-5)
    close(flat(L.inv(A))[:4], [0.26799998, -0.066, -0.06999999, -0.10299999])
    w, v = L.eigh(S)
    close(w, [1.2362554, 2.9931767, 4.4054003, 5.3651657])
    close(np.abs(flat(v)[:4]), [0.22341117, 0.58600676, 0.5991446, 0.49770415], atol=1e-5)
    close(L.eigh(A, lower=False, eigvals_only=True), [1.1312636, 2.9445422, 3.763119, 6.1610756])
    close(L.svd(A[:3], compute_uv=False), [4.667757, 3.6607773, 1.4665428])
    u, s, vh = L.svd(A[:3], full_matrices=False)
    close(jnp.matmul(u * s, vh), A[:3])
    with pytest.raises(NotImplementedError, match="b=None"):
        L.eigh(A, A)
    with pytest.raises(NotImplementedError, match="type=1"):
        L.eigh(A, type=2)


# --- special matrices -----------------------------------------------------------------

def test_block_diag():
    out = L.block_diag(jnp.array([[1, 2], [3, 4]]), jnp.array([5., 6.]), 7)
    assert out.dtype == jnp.float32 and out.shape == (4, 5)
    close(flat(out), [1, 2, 0, 0, 0, 3, 4, 0, 0, 0, 0, 0, 5, 6, 0, 0, 0, 0, 0, 7])
    assert L.block_diag().shape == (1, 0)
    assert L.block_diag(jnp.array([[1, 2]]), jnp.array([[3], [4]])).dtype == jnp.int32
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        L.block_diag(jnp.ones((2, 2, 2)))


def test_toeplitz_hankel_circulant():
    out = L.toeplitz(jnp.array([1, 2, 3]))
    assert out.dtype == jnp.int32
    close(out, sla.toeplitz([1, 2, 3]))
    close(L.toeplitz(jnp.array([1., 2, 3]), jnp.array([9, 4, 5, 6])),
          sla.toeplitz([1., 2, 3], [9, 4, 5, 6]))
    close(L.toeplitz(jnp.array([1 + 2j, 3])), sla.toeplitz([1 + 2j, 3]))
    batched = L.toeplitz(jnp.array([[1, 2], [3, 4]]), jnp.array([5, 6, 7]))
    assert batched.shape == (2, 2, 3)
    close(batched[1], [[3, 6, 7], [4, 3, 6]])
    assert L.toeplitz(3).shape == (1, 1) and L.toeplitz(jnp.zeros(0)).shape == (0, 0)
    close(L.hankel(jnp.array([1, 2, 3])), sla.hankel([1, 2, 3]))
    close(L.hankel(jnp.array([1, 2, 3]), jnp.array([9, 4, 5, 6])),
          sla.hankel([1, 2, 3], [9, 4, 5, 6]))
    assert L.hankel(jnp.array([[1, 2], [3, 4]]), jnp.array([[5., 6, 7]])).shape == (2, 2, 3)
    close(L.circulant(jnp.array([1, 2, 3])), sla.circulant([1, 2, 3]))
    assert L.circulant(jnp.array([[1, 2], [3, 4]])).shape == (2, 2, 2)
    close(jax.grad(lambda c: L.toeplitz(c, c[::-1] * 2).sum())(B), [6., 7., 8., 1.])
    close(jax.jit(L.hankel)(B, B), sla.hankel(np.asarray(B), np.asarray(B)))
    with pytest.raises(ValueError, match="hankel: c must be at least 1-dimensional"):
        L.hankel(3)
    with pytest.raises(TypeError, match="toeplitz requires ndarray or scalar arguments"):
        L.toeplitz([1, 2])


def test_companion_family():
    close(L.leslie(jnp.array([0.1, 2, 1.5]), jnp.array([0.2, 0.8])),
          sla.leslie([0.1, 2, 1.5], [0.2, 0.8]))
    assert L.leslie(jnp.array([1, 2]), jnp.array([3])).dtype == jnp.int32
    close(L.companion(jnp.array([1, -10, 31, -30])), sla.companion([1, -10, 31, -30]))
    close(L.companion(jnp.array([2., 3.])), [[-1.5]])
    assert L.fiedler(jnp.array([1, 4, 12, 45])).dtype == jnp.int32
    close(L.fiedler(jnp.array([1, 4, 12, 45])), sla.fiedler([1, 4, 12, 45]))
    coeffs = [1., -10, 31, -30, 5, 7]
    close(L.fiedler_companion(jnp.array(coeffs)), sla.fiedler_companion(coeffs))
    close(L.fiedler_companion(jnp.array([2., 3.])), [[-1.5]])
    assert L.fiedler_companion(jnp.array([2.])).shape == (0, 0)
    assert L.fiedler_companion(jnp.array([1, 2, 3])).dtype == jnp.float32
    with pytest.raises(ValueError, match="must be at least 2"):
        L.leslie(jnp.array([1.]), jnp.array([]))
    with pytest.raises(ValueError, match="Incorrect lengths for f and s"):
        L.leslie(jnp.array([1., 2, 3]), jnp.array([1.]))
    with pytest.raises(ValueError, match="at least 2"):
        L.companion(jnp.array([1.]))
    with pytest.raises(ValueError, match="nonzero length"):
        L.fiedler_companion(jnp.array([]))


@pytest.mark.parametrize("a,n,mode", [([-1, 4, -2], 5, "full"), ([-1., 4, -2], 5, "same"),
                                      ([-1, 4, -2], 5, "valid"), ([1, 2, 3, 4, 5], 3, "same"),
                                      ([1, 2, 3, 4, 5], 2, "valid")])
def test_convolution_matrix(a, n, mode):
    close(L.convolution_matrix(jnp.array(a), n, mode), sla.convolution_matrix(a, n, mode))


def test_convolution_matrix_bad_input():
    with pytest.raises(ValueError, match="n must be a positive integer"):
        L.convolution_matrix(jnp.array([1, 2]), 0)
    with pytest.raises(ValueError, match="mode must be one of"):
        L.convolution_matrix(jnp.array([1, 2]), 2, "x")
    with pytest.raises(ValueError, match="at least 1-dimensional"):
        L.convolution_matrix(3, 2)


def test_named_matrices():
    assert L.hilbert(3).dtype == jnp.float32
    close(L.hilbert(3), sla.hilbert(3))
    close(L.invhilbert(4), sla.invhilbert(4), rtol=1e-5, atol=1e-2)
    for kind in (None, "lower", "upper"):
        assert L.pascal(4, kind).dtype == jnp.float32
        close(L.pascal(4, kind), sla.pascal(4, kind or "symmetric"), rtol=2e-6)
        close(L.invpascal(4, kind), sla.invpascal(4, kind or "symmetric"), rtol=2e-6,
              atol=1e-5)
    close(L.helmert(4), sla.helmert(4))
    close(L.helmert(3, full=True), sla.helmert(3, full=True))
    assert L.helmert(1).shape == (0, 1)
    h = L.hadamard(4)
    assert h.dtype == jnp.int32
    close(h, sla.hadamard(4))
    assert L.hadamard(2, dtype=jnp.float32).dtype == jnp.float32
    d = L.dft(3)
    assert d.dtype == jnp.complex64
    close(d, sla.dft(3))
    close(L.dft(2, "sqrtn"), sla.dft(2, "sqrtn"))
    close(L.dft(2, "n"), sla.dft(2, "n"))
    assert L.hilbert(0).shape == (0, 0)


def test_named_matrices_bad_input():
    with pytest.raises(ValueError, match="power of 2"):
        L.hadamard(3)
    with pytest.raises(ValueError, match="power of 2"):
        L.hadamard(0)
    with pytest.raises(ValueError, match="scale must be None"):
        L.dft(3, "x")
    with pytest.raises(ValueError, match="complex floating-point"):
        L.dft(3, dtype=jnp.float32)
    with pytest.raises(ValueError, match="Expected kind to be"):
        L.pascal(3, "x")
    with pytest.raises(ValueError, match="Expected kind to be"):
        L.invpascal(3, "x")
    with pytest.raises(ValueError, match="n must be a positive integer"):
        L.helmert(0)
    with pytest.raises(TypeError, match="n must be an integer"):
        L.hilbert(2.5)


# --- expm, expm_frechet -----------------------------------------------------------------

EXPM_A4 = [2.8158665, 0.5889276, -0.25167423, 1.5541064, -0.5788135, 2.1093185, 0.48902434,
           -0.1436694, 0.22857709, 0.49913833, 1.6559589, 0.25584757, 0.70907754, -0.06702692,
           -1.2524805, 3.627003]


def test_expm():
    close(flat(L.expm(A / 4)), EXPM_A4)
    close(flat(L.expm(A))[:4], [107.02055, 23.306341, -92.86918, 213.91608], rtol=2e-5)
    close(flat(L.expm(A * 0.01))[:4], [1.04086304e+00, 1.03558935e-02, -1.55952090e-04,
                                       2.09208354e-02])
    close(flat(L.expm(A * 0.1))[-4:], [0.15024912, -0.00676303, -0.28578728, 1.6597105])
    close(flat(L.expm(jnp.triu(A) / 3, upper_triangular=True))[:4],
          [3.7936678, 1.075386, 0.15241916, 3.0076735])
    assert np.isnan(np.asarray(L.expm(A * 100))).all()
    batched = L.expm(jnp.stack([A, -A]) / 5)
    close(flat(batched[1])[:4], [0.4575577, -0.09813804, -0.02784753, -0.16343886])
    c = L.expm((A + 1j * A.T) / 5)
    assert c.dtype == jnp.complex64
    close(flat(c)[:2], [1.2985203 + 1.8119926j, 0.5474798 - 0.02357253j])
    close(L.expm(jnp.zeros((2, 2))), np.eye(2))


def test_expm_x64_matches_scipy():
    with jax.enable_x64(True):
        a64 = jnp.asarray(np.asarray(A), jnp.float64)
        for scale in (1., 0.02):
            out = L.expm(a64 * scale)
            assert out.dtype == jnp.float64
            close(out, sla.expm(np.asarray(A, np.float64) * scale), rtol=1e-12, atol=1e-12)


def test_expm_transforms():
    close(flat(jax.jit(L.expm)(A / 4)), EXPM_A4)
    close(jax.vmap(L.expm)(jnp.stack([A, -A]) / 5), L.expm(jnp.stack([A, -A]) / 5))
    g = jax.grad(lambda a: L.expm(a / 4).sum())(A)
    close(flat(g), [0.9926404, 0.6272623, 0.7182532, 0.7562065, 1.008172, 0.6363158, 0.7289089,
                    0.76751614, 0.6100114, 0.34797224, 0.41433024, 0.44296414, 1.3103234,
                    0.85952824, 0.9708676, 1.0165088])


def test_expm_frechet():
    frechet = [1.1928669, 0.45099097, -0.0601391, 0.8679677, 0.04656121, 0.67902493,
               0.30470166, 0.01179474, 0.09023933, 0.3311118, 0.35975823, 0.18009318,
               0.48822406, -0.01875216, -0.39553913, 1.8552734]
    e, f = L.expm_frechet(A / 4, S / 10)
    close(flat(e), EXPM_A4)
    close(flat(f), frechet)
    close(flat(L.expm_frechet(A / 4, S / 10, compute_expm=False)), frechet)


def test_expm_bad_input():
    with pytest.raises(ValueError, match="square matrix"):
        L.expm(A[0])
    with pytest.raises(ValueError, match="same shape"):
        L.expm_frechet(A, S[:3, :3])
    with pytest.raises(ValueError, match="square matrix"):
        L.expm_frechet(A[0], A[0])


# --- polar --------------------------------------------------------------------------

POLAR_U = [0.95402557, 0.28222287, -0.04905053, 0.08820148, -0.28315604, 0.9587188, 0.02458562,
           0.008749, 0.02703365, -0.01920093, 0.9535731, 0.29933077, -0.09448305, -0.02898125,
           -0.29612154, 0.9500237]
POLAR_P = [4.018292, 0.13159099, -0.04012268, 1.4437461, 0.13159099, 3.1391783, 0.9782795,
           0.41377923, -0.04012268, 0.9782795, 2.523975, -1.2926369, 1.4437461, 0.41377923,
           -1.2926369, 5.0163207]


def test_polar():
    for method in ("qdwh", "svd"):
        u, p = L.polar(A, method=method)
        close(flat(u), POLAR_U, atol=2e-6)
        close(flat(p), POLAR_P, atol=1e-5)
    u, p = L.polar(A[:, :3])
    assert u.shape == (4, 3) and p.shape == (3, 3)
    close(flat(p), [4.2543054, 0.2358329, -0.30865458, 0.2358329, 3.2007601, 0.8363718,
                    -0.30865458, 0.8363718, 2.8644748])
    u, p = L.polar(A[:3], side="left")
    assert u.shape == (3, 4) and p.shape == (3, 3)
    close(flat(p), [4.542713, -0.19408712, 0.57104194, -0.19408712, 3.1924436, 0.8778583,
                    0.57104194, 0.8778583, 2.0599215])
    u, p = L.polar(A, side="left", method="svd")
    close(flat(p)[:4], [4.274729, -0.15640783, 0.68759537, 1.4931343], atol=1e-5)
    u, p = jax.jit(L.polar)(jnp.stack([A, A]))
    close(flat(u[1]), POLAR_U, atol=2e-6)
    g = jax.grad(lambda a: L.polar(a, method="svd")[1].sum())(A)
    close(flat(g)[:4], [1.2748694, 1.35249, 1.8346696, 1.345492], rtol=1e-5)


def test_polar_x64_and_complex():
    with jax.enable_x64(True):
        a64 = jnp.asarray(np.asarray(A), jnp.float64)
        u, p = L.polar(a64)
        su, sp = sla.polar(np.asarray(a64))
        close(u, su, rtol=1e-12, atol=1e-12)
        close(p, sp, rtol=1e-12, atol=1e-12)
    ac = A + 0.5j * A.T
    u, p = L.polar(ac)
    su, sp = sla.polar(np.asarray(ac, np.complex128))
    close(u, su, atol=2e-5)
    close(p, sp, atol=5e-5)


def test_polar_bad_input():
    with pytest.raises(NotImplementedError, match="use method='svd'"):
        L.polar(A, side="left")
    with pytest.raises(ValueError, match="`side` must be either 'right' or 'left'"):
        L.polar(A, side="x")
    with pytest.raises(ValueError, match="at least a 2-D array"):
        L.polar(A[0])
    with pytest.raises(ValueError, match="Unknown polar decomposition method x"):
        L.polar(A, method="x")


# --- Hessenberg -----------------------------------------------------------------------

HESS_A = [4., 0.6666666, 1.5526578, 1.4645166, 1.4999999, 2.955556, 2.6831384, -0.6393689,
          0., 1.0925109, 3.6749778, -0.25737143, 0., 0., 1.2759621, 3.3694668]


def test_hessenberg():
    close(flat(L.hessenberg(A)), HESS_A)
    h, q = L.hessenberg(A, calc_q=True)
    close(flat(q), [1., 0., 0., 0., 0., -0.66666675, 0.27798665, 0.69157726, 0., 0.33333334,
                    -0.7186979, 0.6102148, 0., 0.6666667, 0.6373356, 0.3864697])
    close(jnp.matmul(jnp.matmul(q, h), q.T), A, atol=1e-5)
    batched = L.hessenberg(jnp.stack([A, A.T]))
    close(flat(batched[1])[:8], [4., -0.44721365, 0.25766918, 1.4084057, -2.236068, 4.5999994,
                                 0.20485884, -1.0535812])
    close(flat(jax.jit(L.hessenberg)(A)), HESS_A)
    hc, qc = L.hessenberg(A + 1j * A.T, calc_q=True)
    close(np.diag(np.asarray(hc), -1), [2.6925824, -1.8743937, 2.031327], atol=1e-5)
    close(flat(qc)[5:8], [-0.3713907 + 0.37139067j, -0.6565917 - 0.09906974j,
                          -0.53077835 + 0.03853157j])
    assert L.hessenberg(jnp.zeros((0, 0))).shape == (0, 0)
    with pytest.raises(ValueError, match=r"shape \[\.\.\., n, n\]"):
        L.hessenberg(A[:3])


# --- eigh_tridiagonal -------------------------------------------------------------------

TRI_D = jnp.array([1., 2, 3, 4])
TRI_E = jnp.array([0.5, -1, 2])
TRI_W = [0.58756244, 1.164569, 2.5771823, 5.670686]
TRI_V = [0.6630369, -0.7057452, 0.24891143, -0.0186789, -0.5469229, -0.23228809, 0.7851574,
         -0.17448656, -0.44097617, -0.54693323, -0.32872328, 0.63114595, 0.2584523, 0.38578492,
         0.46207368, 0.755553]


def test_eigh_tridiagonal():
    close(L.eigh_tridiagonal(TRI_D, TRI_E, eigvals_only=True), TRI_W)
    w, v = L.eigh_tridiagonal(TRI_D, TRI_E)
    close(w, TRI_W)
    close(flat(v), TRI_V)     # the same random starts (key 42) as JAX: the same signs
    w, v = L.eigh_tridiagonal(TRI_D, TRI_E, select="i", select_range=(1, 2))
    close(w, TRI_W[1:3])
    close(flat(v), [0.7057452, 0.24891143, 0.23228808, 0.7851574, 0.5469332, -0.32872328,
                    -0.3857849, 0.46207368])
    w, v = L.eigh_tridiagonal(jnp.array([1., 2, 3]), jnp.array([0., 0]))
    close(w, [1., 2., 3.])
    close(np.abs(np.asarray(v)), np.eye(3))
    w, v = L.eigh_tridiagonal(jnp.array([1., 1, 1]), jnp.array([0., 0]))
    close(w, [1., 1., 1.])
    close(jnp.matmul(v.T, v), np.eye(3))      # any orthonormal basis is an eigenbasis
    w, v = L.eigh_tridiagonal(jnp.array([1. + 0j, 2, 3]), jnp.array([1j, 1 + 1j]))
    assert w.dtype == jnp.float32 and v.dtype == jnp.complex64
    close(w, [0.13919425, 1.7458984, 4.1149073])
    close(flat(v)[:3], [0.25299186 + 0.675477j, -0.52303684 + 0.41006815j,
                        -0.11798543 + 0.1551835j])
    w, v = L.eigh_tridiagonal(jnp.array([5.]), jnp.array([]))
    close(w, [5.])
    close(v, [[1.]])
    close(jax.jit(lambda d, e: L.eigh_tridiagonal(d, e)[1])(TRI_D, TRI_E), np.reshape(TRI_V,
                                                                                      (4, 4)))


def test_eigh_tridiagonal_x64_matches_scipy():
    with jax.enable_x64(True):
        d = jnp.linspace(-1., 3., 12)
        e = jnp.cos(jnp.arange(11.))
        w, v = L.eigh_tridiagonal(d, e)
        sw = sla.eigh_tridiagonal(np.asarray(d), np.asarray(e), eigvals_only=True)
        close(w, sw, rtol=1e-13, atol=1e-13)
        t = np.diag(np.asarray(d)) + np.diag(np.asarray(e), 1) + np.diag(np.asarray(e), -1)
        close(t @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-12)


def test_eigh_tridiagonal_bad_input():
    with pytest.raises(TypeError, match="Only float32 and float64"):
        L.eigh_tridiagonal(jnp.array([1, 2]), jnp.array([1]))
    with pytest.raises(TypeError, match="must have same dtype"):
        L.eigh_tridiagonal(jnp.array([1., 2]), jnp.array([1], jnp.int32))
    with pytest.raises(NotImplementedError, match="select='v'"):
        L.eigh_tridiagonal(jnp.array([1., 2]), jnp.array([1.]), select="v", select_range=(0, 1))
    with pytest.raises(ValueError, match="select must have a value in"):
        L.eigh_tridiagonal(jnp.array([1., 2]), jnp.array([1.]), select="x")
    with pytest.raises(ValueError, match="select_range must be specified"):
        L.eigh_tridiagonal(jnp.array([1., 2]), jnp.array([1.]), select="i")
    with pytest.raises(ValueError, match="e of shape"):
        L.eigh_tridiagonal(jnp.array([1., 2]), jnp.array([1., 2.]))


# --- Schur and the functions built on it ---------------------------------------------------

SCHUR_T = [5.7230377, 1.8441201, -1.663256, -0.516189, 0., 1.3663336, 0.22573365, -0.5466602,
           0., 0., 3.4553132, -1.2689599, 0., 0., 0.6692234, 3.4553132]


def test_schur():
    t, z = L.schur(A)
    close(flat(t), SCHUR_T)
    close(flat(z)[:4], [-0.68015033, -0.43012813, -0.59164524, -0.04838364])
    t, z = L.schur(A, output="complex")
    assert t.dtype == jnp.complex64
    close(np.diag(np.asarray(t)), [5.723041, 1.3663325, 3.4553123 + 0.92152995j,
                                   3.455313 - 0.92153013j], atol=2e-6)
    close(jnp.matmul(jnp.matmul(z, t), jnp.conj(z.T)), A, atol=1e-5)
    t, z = jax.jit(L.schur)(A)
    close(flat(t), SCHUR_T)
    tb, zb = jax.vmap(L.schur)(jnp.stack([A, A.T]))
    close(flat(tb[0]), SCHUR_T)
    close(L.schur(jnp.stack([A, A.T]))[0], tb)
    with pytest.raises(ValueError, match="Expected 'output' to be either 'real' or 'complex'"):
        L.schur(A, output="x")
    with pytest.raises(NotImplementedError, match="schur"):
        jax.grad(lambda a: L.schur(a)[0].sum())(A)


def test_rsf2csf():
    t, z = L.rsf2csf(jnp.array([[1., 2, 3], [-4, 1, 5], [0, 0, 2]]), jnp.eye(3))
    st, sz = sla.rsf2csf(np.array([[1., 2, 3], [-4, 1, 5], [0, 0, 2]]), np.eye(3))
    close(t, st, atol=2e-6)
    close(z, sz, atol=2e-6)
    t, z = L.rsf2csf(*L.schur(A))
    close(np.tril(np.asarray(t), -1), np.zeros((4, 4)), atol=1e-6)
    close(jnp.matmul(jnp.matmul(z, t), jnp.conj(z.T)), A, atol=1e-5)
    with pytest.raises(ValueError, match="Input array shapes must match"):
        L.rsf2csf(A, A[:3, :3])
    with pytest.raises(ValueError, match="Input 'T' must be square"):
        L.rsf2csf(A[:3], A)


def test_sqrtm_and_funm():
    r = L.sqrtm(S)
    assert r.dtype == jnp.complex64
    close(flat(r)[:4], [1.9768304, 0.27694437, -0.03047352, 0.12048334], atol=1e-6)
    r = L.sqrtm(A)
    close(flat(r)[:4], [1.9853863, 0.26183257, 0.0531082, 0.47352737], atol=1e-6)
    close(jnp.matmul(r, r), A, atol=1e-5)
    close(jax.jit(L.sqrtm)(A), r)
    f = L.funm(A / 4, jnp.exp)
    close(f, np.asarray(EXPM_A4).reshape(4, 4), atol=1e-5)
    f, err = L.funm(A / 4, jnp.exp, disp=False)
    close(err, 1.3740467e-07, rtol=1e-3)
    close(flat(L.funm(S, jnp.sin))[:4], [-0.44104648, -0.58215094, -0.03095386, -0.01327124],
          atol=1e-6)
    with pytest.raises(ValueError, match="expected square array_like input"):
        L.funm(A[:3], jnp.exp)
    with pytest.raises(NotImplementedError, match="Blocked version"):
        L.sqrtm(A, blocksize=2)


SYLV = [0.484214, -0.2860855, 0.07639673, -0.01601022, 0.1597031, 0.40951508, 0.03589508,
        0.02706876, -0.05675766, 0.06122568, 0.47928566, -0.3231812, 0.13033733, 0.01623667,
        0.1483055, 0.42599893]


def test_solve_sylvester():
    for method in ("schur", "eigen"):
        x = L.solve_sylvester(A, S, A.T, method=method)
        assert x.dtype == jnp.float32
        close(flat(x), SYLV, atol=2e-6)
    close(jnp.matmul(A, x) + jnp.matmul(x, S), A.T, atol=1e-5)
    batched = jax.vmap(L.solve_sylvester, (None, None, 0))(A, S, jnp.stack([A, S]))
    close(flat(batched[1])[:4], [0.49373907, 0.01626685, -0.05512478, -0.08048911], atol=2e-6)
    close(flat(jax.jit(L.solve_sylvester)(A, S, A.T)), SYLV, atol=2e-6)
    assert np.isnan(np.asarray(L.solve_sylvester(A, -A, A))).all()
    with pytest.raises(ValueError, match="Incompatible shapes for Sylvester equation"):
        L.solve_sylvester(A, S[:3, :3], A)
    with pytest.raises(ValueError, match="Unrecognized method"):
        L.solve_sylvester(A, S, A, method="x")


def test_loop_built_functions_round_the_same_eagerly_and_jitted():
    """JAX compiles solve_sylvester and rsf2csf whole, so eager calls equal jitted ones
    to the bit; op-by-op NumPy rounding would drift over their loops (1e-5 at 50x50)."""
    r = np.random.RandomState(0)
    a, b = r.randn(30, 30).astype(np.float32), r.randn(7, 7).astype(np.float32)
    c = r.randn(30, 7).astype(np.float32)
    for method in ("schur", "eigen"):
        np.testing.assert_array_equal(
            L.solve_sylvester(a, b, c, method=method),
            jax.jit(L.solve_sylvester, static_argnames="method")(a, b, c, method=method))
    t, z = (r.randn(30, 30) + 1j * r.randn(30, 30)).astype(np.complex64), a
    for eager, jitted in zip(L.rsf2csf(t, z), jax.jit(L.rsf2csf)(t, z)):
        np.testing.assert_array_equal(eager, jitted)


@pytest.mark.parametrize("name", ["polar", "hessenberg", "sqrtm", "funm", "rsf2csf", "qr_pivoting",
                                  "expm_frechet"])
def test_vmap_equals_loop(name):
    f = {"polar": lambda a: L.polar(a)[0],
         "hessenberg": lambda a: L.hessenberg(a, calc_q=True)[1],
         "sqrtm": L.sqrtm,
         "funm": lambda a: L.funm(a / 4, jnp.exp),
         "rsf2csf": lambda a: L.rsf2csf(*L.schur(a))[0],
         "qr_pivoting": lambda a: L.qr(a, pivoting=True)[1],
         "expm_frechet": lambda a: L.expm_frechet(a / 4, a.T / 4)[1]}[name]
    batch = jnp.stack([A, A.T, A / 3])
    close(jax.vmap(f)(batch), np.stack([np.asarray(f(x)) for x in batch]), atol=1e-5)


def test_eigh_tridiagonal_vmap():
    d = jnp.stack([TRI_D, jnp.array([2., 0, 1, 5])])
    e = jnp.stack([TRI_E, jnp.array([1., 1, 1])])
    w, v = jax.vmap(L.eigh_tridiagonal)(d, e)
    close(w[0], TRI_W)
    close(v[0], np.reshape(TRI_V, (4, 4)))
    close(v[1], L.eigh_tridiagonal(d[1], e[1])[1])


def test_integer_matrices_are_exact_under_jit_and_eagerly():
    """pascal, invpascal and invhilbert are integer matrices: computed exactly and
    rounded once, so jit and eager agree bit for bit and match SciPy's exact values."""
    for n in (0, 1, 5, 20):
        for kind in ("symmetric", "lower", "upper"):
            got = jax.scipy.linalg.pascal(n, kind)
            assert got.dtype == np.float32 and got.shape == (n, n)
            np.testing.assert_array_equal(got, jax.jit(
                lambda kind=kind, n=n: jax.scipy.linalg.pascal(n, kind))())
            np.testing.assert_array_equal(
                got, sla.pascal(n, kind, exact=True).astype(np.float32))
            np.testing.assert_array_equal(
                jax.scipy.linalg.invpascal(min(n, 9), kind),
                sla.invpascal(min(n, 9), kind, exact=True).astype(np.float32))
    for n in (0, 3, 8):
        got = jax.scipy.linalg.invhilbert(n)
        np.testing.assert_array_equal(got, jax.jit(lambda n=n: jax.scipy.linalg.invhilbert(n))())
        np.testing.assert_array_equal(
            got, sla.invhilbert(n, exact=True).astype(np.float32))


def test_triangular_solve_of_a_vector():
    """A b of one rank less than a is a column (left_side) or a row (values from JAX)."""
    a = jnp.tril(jnp.ones((4, 4)) + 4 * jnp.eye(4))
    b = jnp.arange(4.)
    solve = jax.lax.linalg.triangular_solve
    np.testing.assert_allclose(solve(a, b, left_side=True, lower=True),
                               [0., 0.2, 0.36, 0.488], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(solve(a, b, left_side=False, lower=True),
                               [-0.1808, 0.024, 0.28, 0.6], rtol=1e-5)
    grad_b = jax.grad(lambda b: solve(a, b, left_side=True, lower=True).sum())(b)
    np.testing.assert_allclose(grad_b, [0.1024, 0.128, 0.16, 0.2], rtol=1e-6)
    with pytest.raises(ValueError):
        solve(a, jnp.ones(3))
