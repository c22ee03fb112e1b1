"""jax.scipy.signal's spectral analysis (stft, istft, csd, welch): values recorded from
JAX 0.10.2, scipy.signal as the reference over parameter combinations, jit with a traced
sampling frequency, and the errors for inconsistent segment arguments."""
import numpy as np
import pytest
import scipy.signal as osp_signal

import pyjax as jax
import pyjax.scipy.signal as sig

X = np.array([[1., 2., 3., 2., 1., 0., 1., 2., 4., -1.],
              [0., 1., 0., -1., 0., 1., 3., 2., 1., 0.]], np.float32)
Y = np.array([[2., -1., 0., 1., 3., 1.]], np.float32)


def _close(actual, expected, tol=1e-5):
    actual = np.asarray(actual)
    assert actual.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def test_welch_matches_jax():
    freqs, pxx = sig.welch(X, nperseg=4)
    _close(freqs, np.array([0., 0.25, 0.5], np.float32))
    _close(pxx, np.array([[0.708333, 3.916667, 2.208333],
                          [0.541667, 1.916667, 0.375]], np.float32))


def test_welch_median_of_linearly_detrended_spectra_matches_jax():
    _, pxx = sig.welch(X, nperseg=4, noverlap=1, average="median", scaling="spectrum",
                       detrend="linear")
    _close(pxx, np.array([[0.108, 0.48, 0.3], [0.027, 0.12, 0.]], np.float32))


def test_csd_zero_pads_the_shorter_signal_and_broadcasts_like_jax():
    freqs, pxy = sig.csd(X, Y, nperseg=4, fs=2.0)
    _close(freqs, np.array([0., 0.5, 1.], np.float32))
    _close(pxy, np.array([[-0.208333, -0.3125 - 0.625j, 0.],
                          [-0.1875, -0.458333 + 0.416667j, -0.0625]], np.complex64))


def test_stft_with_odd_extension_and_padded_fft_matches_jax():
    freqs, times, zxx = sig.stft(X[0], nperseg=4, boundary="odd", nfft=6)
    _close(freqs, np.array([0., 1 / 6, 1 / 3, 0.5], np.float32))
    _close(times, np.array([0., 2., 4., 6., 8., 10.], np.float32))
    _close(zxx, np.array(
        [[1., 2.5, 1., 1., 2.25, -4.25],
         [-0.75 - 0.433013j, -1. - 1.732051j, -0.866025j, -0.75 - 0.433013j,
          -0.5 - 2.165063j, 2.375 + 2.814582j],
         [0.25 + 0.433013j, -0.5 + 0.866025j, -0.5, 0.25 + 0.433013j,
          -1.5 + 1.299038j, 0.625 - 2.38157j],
         [0., 0.5, 0., 0., 1.75, -1.75]], np.complex64))


def test_istft_inverts_stft():
    _, _, zxx = sig.stft(X, nperseg=4)
    times, x = sig.istft(zxx, nperseg=4)
    _close(times, np.array([0., 1.], np.float32))
    _close(x, X)


@pytest.mark.parametrize("window", ["hann", "blackman", ("tukey", 0.3)])
@pytest.mark.parametrize("boundary", [None, "even", "zeros"])
@pytest.mark.parametrize("detrend", [False, "constant", "linear"])
def test_stft_against_scipy(window, boundary, detrend):
    x = np.random.RandomState(0).randn(2, 37, 3)
    kwds = dict(window=window, nperseg=9, noverlap=4, nfft=12, boundary=boundary,
                detrend=detrend, axis=1, fs=3.0)
    expected = osp_signal.stft(x, **kwds)
    for ours, theirs in zip(sig.stft(x.astype(np.float32), **kwds), expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("average", ["mean", "median"])
@pytest.mark.parametrize("scaling", ["density", "spectrum"])
@pytest.mark.parametrize("onesided", [True, False])
def test_welch_and_csd_against_scipy(average, scaling, onesided):
    rng = np.random.RandomState(1)
    x, y = rng.randn(3, 50), rng.randn(3, 50)
    kwds = dict(nperseg=16, nfft=20, scaling=scaling, average=average,
                return_onesided=onesided)
    for ours, theirs in zip(sig.welch(x.astype(np.float32), **kwds),
                            osp_signal.welch(x, **kwds)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)
    for ours, theirs in zip(sig.csd(x.astype(np.float32), y.astype(np.float32), **kwds),
                            osp_signal.csd(x, y, **kwds)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("onesided", [True, False])
def test_istft_against_scipy(onesided):
    zxx = np.random.RandomState(2).randn(2, 9, 7) + 1j * np.random.RandomState(3).randn(
        2, 9, 7)
    kwds = dict(nperseg=16, noverlap=5, nfft=16 if onesided else 9, input_onesided=onesided)
    if not onesided:
        kwds["nperseg"] = 9
    expected = osp_signal.istft(zxx, **kwds)
    for ours, theirs in zip(sig.istft(zxx.astype(np.complex64), **kwds), expected):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def test_welch_under_jit_with_a_traced_sampling_frequency():
    x = np.random.RandomState(4).randn(40).astype(np.float32)
    freqs, pxx = jax.jit(lambda x, fs: sig.welch(x, fs=fs, nperseg=8))(x, 3.0)
    expected_freqs, expected_pxx = osp_signal.welch(x.astype(np.float64), fs=3.0, nperseg=8)
    np.testing.assert_allclose(freqs, expected_freqs, rtol=1e-6)
    np.testing.assert_allclose(pxx, expected_pxx, rtol=1e-4)


@pytest.mark.parametrize("kwds, message", [
    (dict(nperseg=0), "nperseg must be a positive integer"),
    (dict(nperseg=8, noverlap=8), "noverlap must be less than nperseg"),
    (dict(nperseg=8, nfft=4), "nfft must be greater than or equal to nperseg"),
    (dict(scaling="power"), "Unknown scaling"),
    (dict(nperseg=8, average="mode"), 'average must be "median" or "mean"'),
    (dict(window=np.ones(5), nperseg=4), "different from length of window"),
])
def test_inconsistent_segment_arguments_raise(kwds, message):
    with pytest.raises(ValueError, match=message):
        sig.welch(np.ones(20, np.float32), **kwds)


def test_istft_needs_distinct_time_and_frequency_axes():
    with pytest.raises(ValueError, match="differing time and frequency axes"):
        sig.istft(np.ones((5, 4), np.complex64), time_axis=0, freq_axis=-2)
