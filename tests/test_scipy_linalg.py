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


def test_qr_bad_input():
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'raw'"):
        L.qr(A, mode="raw")
    with pytest.raises(NotImplementedError, match="pivoting"):
        L.qr(A, pivoting=True)
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
