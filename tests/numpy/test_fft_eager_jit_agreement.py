"""The eager FFT (the NumPy executor's impl) gives the same bits as the jitted one (XLA's
CPU FFT), as eager and jitted JAX do: both are pocketfft-family algorithms, and the
multi-axis complex transforms take the axes in the same order. They agree bit for bit for
lengths below 512; beyond, XLA's kernels differ by rounding only."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp

SHAPES = [(97,), (250,), (7, 3), (16, 8, 4, 8), (5, 12, 9)]
TRANSFORMS = ["fft", "ifft", "fftn", "ifftn", "fft2", "rfft", "rfftn", "irfftn", "hfft"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", TRANSFORMS)
def test_eager_fft_equals_jitted_fft_bit_for_bit(name, shape, dtype):
    if name == "fft2" and len(shape) < 2:
        pytest.skip("fft2 needs two axes")
    rng = np.random.RandomState(0)
    x = rng.randn(*shape) * 3
    if name not in ("rfft", "rfftn"):
        x = x + 1j * rng.randn(*shape)
    with jax.enable_x64(dtype == np.float64):
        x = jnp.asarray(x.astype(np.result_type(x.dtype, dtype)) if dtype == np.float64
                        else x.astype(np.complex64 if np.iscomplexobj(x) else np.float32))
        transform = getattr(jnp.fft, name)
        np.testing.assert_array_equal(transform(x), jax.jit(transform)(x))


def test_long_eager_fft_agrees_with_jitted_fft_to_rounding():
    x = jnp.asarray(np.random.RandomState(1).randn(8, 4096).astype(np.complex64))
    eager, jitted = np.asarray(jnp.fft.fft(x)), np.asarray(jax.jit(jnp.fft.fft)(x))
    assert np.abs(eager - jitted).max() <= 1e-6 * np.abs(jitted).max()
