"""jax_explicit_x64_dtypes: what an explicitly requested 64-bit dtype does while x64 is off
(values observed with JAX 0.10.2), and the narrow-integer dtype queries beside it."""
import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src import config


def _requests():
    return [("array", lambda: jnp.array(1., dtype=jnp.float64)),
            ("zeros", lambda: jnp.zeros(2, "int64")),
            ("arange", lambda: jnp.arange(3, dtype=np.float64)),
            ("astype", lambda: jnp.ones(2).astype("float64")),
            ("sum", lambda: jnp.sum(jnp.ones(3), dtype="float64"))]


def test_default_mode_warns_and_truncates():
    assert jax.config.jax_explicit_x64_dtypes == config.ExplicitX64Mode.WARN
    for name, make in _requests():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = make()
        assert out.dtype in (np.float32, np.int32)
        assert any(f"requested in {name} is not available, and will be truncated" in
                   str(w.message) for w in caught), name


def test_error_mode_raises():
    with config.explicit_x64_dtypes("error"):
        for name, make in _requests():
            with pytest.raises(ValueError, match=f"float64 requested in {name}|int64 "
                               f"requested in {name}"):
                make()
        # values (not dtype requests) are canonicalised silently, as in JAX
        assert jnp.array(np.arange(3.)).dtype == np.float32


def test_allow_mode_keeps_64_bits():
    with config.explicit_x64_dtypes(config.ExplicitX64Mode.ALLOW):
        assert [make().dtype for _, make in _requests()] == [
            np.float64, np.int64, np.float64, np.float64, np.float64]
        x = jnp.array(1., dtype=jnp.float64)
        assert (x + 1).dtype == np.float64
        assert (x + jnp.float32(1)).dtype == np.float64
        assert jnp.sin(jnp.ones(2, "float64")).dtype == np.float64
        out = jax.jit(lambda a: a * 2)(jnp.ones(2, "float64"))
        assert out.dtype == np.float64
        np.testing.assert_array_equal(out, [2., 2.])
        # a value keeps JAX's canonical 32 bits
        assert jnp.array(np.arange(3.)).dtype == np.float32


def test_mode_parsing():
    with config.explicit_x64_dtypes("allow"):
        assert jax.config.jax_explicit_x64_dtypes == config.ExplicitX64Mode.ALLOW
    with pytest.raises(ValueError, match="jax_explicit_x64_dtypes"):
        jax.config.update("jax_explicit_x64_dtypes", "sometimes")
    assert jax.config._read("jax_enable_x64") is False
    assert jax.config.x64_enabled is False


@pytest.mark.parametrize("name,bits,signed", [
    ("int1", 1, True), ("uint1", 1, False), ("int2", 2, True), ("uint2", 2, False),
    ("int4", 4, True), ("uint4", 4, False)])
def test_narrow_integers(name, bits, signed):
    assert jax.dtypes.itemsize_bits(name) == bits
    assert jnp.issubdtype(name, np.integer)
    assert jnp.issubdtype(name, np.signedinteger) == signed
    assert jnp.issubdtype(name, np.unsignedinteger) == (not signed)
    assert jnp.issubdtype(np.dtype(name), name)


def test_itemsize_bits_of_none():
    with pytest.raises(ValueError, match="dtype cannot be None"):
        jax.dtypes.itemsize_bits(None)
