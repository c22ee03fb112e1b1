"""lax.linalg.eig's derivatives: eigenvalues always, eigenvectors under LAPACK's
normalisation with enable_eigvec_derivs=True (values recorded from JAX 0.10.2), and the
implementation argument as JAX takes it on CPU."""
import numpy as np
import pytest

import pyjax as jax
from pyjax import lax

RNG = np.random.RandomState(0)
A = RNG.randn(4, 4)
DA = RNG.randn(4, 4)
AC = A + 1j * RNG.randn(4, 4)
DAC = DA + 1j * RNG.randn(4, 4)


def _eig_jvp(x, dx, left, right):
    def f(x):
        return lax.linalg.eig(x, compute_left_eigenvectors=left,
                              compute_right_eigenvectors=right, enable_eigvec_derivs=True)
    with jax.enable_x64(True):
        return [np.asarray(t) for t in jax.jvp(f, (x,), (dx,))[1]]


def test_eigenvalue_and_right_eigenvector_tangents_of_a_real_matrix_match_jax():
    dw, dvr = _eig_jvp(A, DA, False, True)
    np.testing.assert_allclose(dw, [2.70951, 3.39537, -0.85543, -2.67783], atol=1e-5)
    np.testing.assert_allclose(dvr.ravel()[:6], [-0.05848, 0.47947, 0.4018, 0.33506,
                                                 0.66672, 0.53512], atol=1e-5)


def test_left_and_right_eigenvector_tangents_of_a_complex_matrix_match_jax():
    dw, dvl, dvr = _eig_jvp(AC, DAC, True, True)
    np.testing.assert_allclose(dw, [1.85059 - 0.91711j, 1.36634 - 0.92257j,
                                    0.83248 - 0.45461j, -1.47779 - 2.86085j], atol=1e-5)
    np.testing.assert_allclose(dvl.ravel()[:6], [
        0.14788, 0.5656 - 0.19914j, -0.45909 - 0.15047j, -0.18003 + 0.48441j,
        -0.16486 - 0.0615j, 0.20941], atol=1e-5)
    np.testing.assert_allclose(dvr.ravel()[:6], [
        0.01446, 0.11614 + 0.12943j, -0.15523 + 0.43476j, -0.91032 + 0.85397j,
        -0.21835 - 0.30022j, 0.00826], atol=1e-5)


def test_eigenvector_tangents_keep_lapack_normalisation():
    with jax.enable_x64(True):
        _, vr = lax.linalg.eig(AC, compute_left_eigenvectors=False)
    (_, dvr) = _eig_jvp(AC, DAC, False, True)
    vr = np.asarray(vr)
    largest = np.argmax(np.abs(vr), axis=0)
    # unit norm: Re(v^H dv) = 0; real largest component: Im(dv_k) = 0
    np.testing.assert_allclose(np.real(np.sum(vr.conj() * dvr, axis=0)), 0, atol=1e-10)
    np.testing.assert_allclose(np.imag(dvr[largest, np.arange(4)]), 0, atol=1e-10)


def test_eigenvector_derivatives_need_opting_in():
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs=True"):
        jax.jvp(lambda x: lax.linalg.eig(x), (A,), (DA,))


def test_cpu_takes_only_the_lapack_implementation():
    w = lax.linalg.eig(A, compute_left_eigenvectors=False, compute_right_eigenvectors=False,
                       implementation=lax.linalg.EigImplementation.LAPACK)[0]
    np.testing.assert_allclose(np.sort_complex(np.asarray(w)),
                               np.sort_complex(np.linalg.eigvals(A)), rtol=1e-5)
    with pytest.raises(ValueError, match="Only the lapack implementation"):
        lax.linalg.eig(A, implementation=lax.linalg.EigImplementation.MAGMA)
