"""jax.numpy.fft and lax.fft: values against numpy.fft for every function, norm, length
and axes choice; derivatives with check_grads (JAX's transposes of RFFT/IRFFT); vmap
against a loop; jit on the NumPy and XLA executors (stablehlo.fft); dtypes as JAX gives
them (complex64 unless x64)."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax._src.test_util import check_grads

RNG = np.random.default_rng(1)


def _rand(shape, dtype=np.float32):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _close(actual, expected, tol=2e-4):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


NORMS = [None, "ortho", "forward", "backward"]
ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 5, 12])
@pytest.mark.parametrize("name", ONE_AXIS)
def test_one_axis_transforms_match_numpy(name, n, norm):
    real_in = name in ("rfft", "ihfft")
    x = _rand((3, 8), np.float32 if real_in else np.complex64)
    expected = getattr(np.fft, name)(x, n=n, axis=0 if name == "fft" else -1, norm=norm)
    actual = getattr(jnp.fft, name)(x, n=n, axis=0 if name == "fft" else -1, norm=norm)
    want = np.complex64 if expected.dtype.kind == "c" else np.float32
    assert actual.dtype == want
    _close(actual, expected)


MULTI = {
    "fft2": dict(), "ifft2": dict(axes=(0, 2)), "rfft2": dict(s=(4, 6)),
    "irfft2": dict(s=(3, 10)), "fftn": dict(axes=(2, 0, 1)),
    "ifftn": dict(s=(2, 5, 3), axes=(0, 1, 2)), "rfftn": dict(), "irfftn": dict(axes=(0, 1)),
}


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("name", sorted(MULTI))
def test_multi_axis_transforms_match_numpy(name, norm):
    x = _rand((3, 4, 6), np.float32 if name.startswith("rfft") else np.complex64)
    kwargs = MULTI[name]
    _close(getattr(jnp.fft, name)(x, norm=norm, **kwargs),
           getattr(np.fft, name)(x, norm=norm, **kwargs))


def test_more_than_three_axes_split_into_calls():
    x = _rand((2, 3, 2, 4, 2))
    _close(jnp.fft.fftn(x), np.fft.fftn(x), 1e-3)
    _close(jnp.fft.rfftn(x), np.fft.rfftn(x), 1e-3)
    y = np.fft.rfftn(x)
    axes = tuple(range(x.ndim))
    _close(jnp.fft.irfftn(y, s=x.shape, axes=axes), np.fft.irfftn(y, s=x.shape, axes=axes),
           1e-3)


def test_frequencies_and_shifts():
    for n in (7, 8):
        _close(jnp.fft.fftfreq(n, 0.3), np.fft.fftfreq(n, 0.3))
        _close(jnp.fft.rfftfreq(n, 0.3), np.fft.rfftfreq(n, 0.3))
    assert jnp.fft.fftfreq(4).dtype == np.float32
    x = np.arange(15.0).reshape(3, 5)
    _close(jnp.fft.fftshift(x), np.fft.fftshift(x))
    _close(jnp.fft.ifftshift(x, axes=1), np.fft.ifftshift(x, axes=1))
    _close(jnp.fft.ifftshift(jnp.fft.fftshift(x)), x)


def test_dtypes_follow_jax():
    assert jnp.fft.fft(np.arange(4)).dtype == np.complex64           # int input
    assert jnp.fft.rfft(np.ones(4, np.float64)).dtype == np.complex64  # x64 off
    with config.enable_x64(True):
        assert jnp.fft.fft(np.ones(4)).dtype == np.complex128
        assert jnp.fft.irfft(np.ones(3, np.complex128)).dtype == np.float64


GRADS = {
    "fft": lambda x: jnp.fft.fft(x, norm="ortho"),
    "ifft": lambda x: jnp.fft.ifft(x, n=6),
    "rfft": lambda x: jnp.fft.rfft(jnp.real(x)),
    "irfft": lambda x: jnp.fft.irfft(x),
    "irfft_odd": lambda x: jnp.fft.irfft(x, n=7),
    "fft2": lambda x: jnp.fft.fft2(x),
    "rfftn": lambda x: jnp.fft.rfftn(jnp.real(x), axes=(0, 1)),
    "irfftn": lambda x: jnp.fft.irfftn(x, s=(4, 6)),
    "hfft": lambda x: jnp.fft.hfft(x),
    "loss": lambda x: jnp.sum(jnp.abs(jnp.fft.irfft(jnp.fft.rfft(jnp.real(x)) * 2.0)) ** 2),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grads(name):
    with config.enable_x64(True):
        x = _rand((4, 4), np.complex128)
        check_grads(GRADS[name], (x,), 2, eps=1e-6)


def test_transposes_satisfy_the_inner_product_identity():
    """Re<t, conj(T(conj(ct)))> == Re<f(t), ct> for each fft type: JAX's convention for
    transposes of maps between real and complex values."""
    cases = [("FFT", (5,), np.complex64, (5,)), ("IFFT", (3, 4), np.complex64, (3, 4)),
             ("RFFT", (3, 6), np.float32, (3, 6)), ("IRFFT", (3, 4), np.complex64, (3, 6)),
             ("IRFFT", (2, 3), np.complex64, (5,))]
    for fft_type, shape, dtype, lengths in cases:
        def f(x, fft_type=fft_type, lengths=lengths):
            return lax.fft(x, fft_type, lengths)
        t = _rand(shape, dtype)
        out = np.asarray(f(t))
        ct = _rand(out.shape, out.dtype)
        (t_bar,) = pyjax.linear_transpose(f, t)(np.conj(ct))
        lhs = np.real(np.vdot(t, np.conj(np.asarray(t_bar))))
        rhs = np.real(np.vdot(out, ct))
        np.testing.assert_allclose(lhs, rhs, rtol=1e-4, atol=1e-4, err_msg=fft_type)


def test_vmap_matches_loop():
    x = _rand((3, 4, 6), np.complex64)
    for f in (jnp.fft.fft, jnp.fft.ifft2, lambda v: jnp.fft.irfft(v, n=8),
              lambda v: jnp.fft.rfft(jnp.real(v), axis=0)):
        expected = np.stack([np.asarray(f(v)) for v in x])
        _close(pyjax.vmap(f)(x), expected)
        _close(pyjax.vmap(f, in_axes=1, out_axes=0)(np.moveaxis(x, 0, 1)), expected)


@pytest.mark.parametrize("executor", ["numpy", "xla"])
def test_jit_matches_eager(executor):
    if executor == "xla":
        pytest.importorskip("jaxlib")
    x = _rand((2, 4, 6), np.complex64)
    r = _rand((2, 4, 6), np.float32)

    def f(x, r):
        return (jnp.fft.fftn(x, norm="ortho"), jnp.fft.ifft(x, n=5, axis=1),
                jnp.fft.rfft2(r), jnp.fft.irfftn(x, s=(3, 4, 9)), jnp.fft.hfft(x[0, 0]),
                jnp.fft.fftshift(x, axes=(1, 2)))
    expected = f(x, r)
    with config.executor(executor):
        actual = pyjax.jit(f)(x, r)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype
        _close(a, e)


def test_bad_input_errors():
    with pytest.raises(ValueError, match="Invalid norm"):
        jnp.fft.fft(jnp.ones(4), norm="bogus")
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        jnp.fft.fft(jnp.ones(4), n=0)
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        jnp.fft.fftn(jnp.ones((2, 2)), s=(2,), axes=(0, 1))
    with pytest.raises(TypeError, match="real input"):
        jnp.fft.rfft(jnp.ones(4, jnp.complex64))
    with pytest.raises(ValueError, match="repeated axes"):
        jnp.fft.fftn(jnp.ones((2, 2)), axes=(0, 0))
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        lax.fft(jnp.ones(4, jnp.complex64), "RFFT", (4,))


def test_jax_error_messages_and_empty_transforms():
    """JAX 0.10.2's messages for misused axes/lengths, and an empty FFT gives zeros."""
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"jax.numpy.fft.rfft does not support multiple "
                       r"axes. Please use jax.numpy.fft.rfftn. Got axis = \[1, 1\]."):
        jnp.fft.rfft(x, axis=[1, 1])
    with pytest.raises(ValueError, match=r"jax.numpy.fft.fft2 only supports 2 axes. Got "
                       r"axes = \[0\]."):
        jnp.fft.fft2(x, axes=[0])
    with pytest.raises(ValueError, match=r"The n argument of jax.numpy.fft.fftfreq only "
                       r"takes an int. Got n = \[0, 1, 2\]."):
        jnp.fft.fftfreq(n=[0, 1, 2])
    with pytest.raises(ValueError, match=r"The d argument of jax.numpy.fft.rfftfreq only "
                       r"takes a single value. Got d = \[0, 1, 2\]."):
        jnp.fft.rfftfreq(n=10, d=[0, 1, 2])
    with pytest.raises(ValueError, match=r"jax.numpy.fft.fftn does not support repeated "
                       r"axes. Got axes \[1, 1\]."):
        jnp.fft.fftn(x, axes=[1, 1])
    with pytest.raises(ValueError, match=r"FFT input shape \(14, 15\) must have at least as "
                       r"many input dimensions as fft_lengths \(4, 5, 6\)"):
        lax.fft(np.ones((14, 15), np.complex64), fft_type="fft", fft_lengths=(4, 5, 6))
    with pytest.raises(ValueError, match=r"IRFFT input shape \(2, 14, 15\) minor dimensions "
                       r"must be equal to all except the last fft_length"):
        lax.fft(np.ones((2, 14, 15), np.complex64), fft_type="irfft", fft_lengths=(13, 15))
    with pytest.raises(ValueError, match="RFFT input must be float32 or float64, got "
                       "bfloat16"):
        lax.fft(np.ones((14, 15), jnp.bfloat16), fft_type="rfft", fft_lengths=(5, 6))
    out = jnp.fft.fft(jnp.zeros((0,), jnp.complex64))
    assert out.shape == (0,) and out.dtype == np.complex64
    dev = pyjax.devices()[-1]
    assert jnp.fft.fftfreq(4, device=dev).devices() == {dev}
