"""pyjax.numpy as a Python array API standard namespace (2024.12), checked against JAX
0.10.2's values: the metadata (__array_api_version__, __array_namespace_info__,
__array_namespace__, DLPack) and special cases the standard specifies."""
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp


def test_version_and_namespace():
    assert jnp.__array_api_version__ == "2024.12"
    x = jnp.arange(3.0)
    assert x.__array_namespace__() is jnp
    assert x.__array_namespace__(api_version="2024.12") is jnp
    with pytest.raises(ValueError, match="2021.12"):
        x.__array_namespace__(api_version="2021.12")


def test_namespace_from_a_tracer():
    assert pyjax.jit(lambda x: x.__array_namespace__() is jnp)(1.0) is not None
    seen = []
    pyjax.jit(lambda x: seen.append(x.__array_namespace__()) or x)(1.0)
    assert seen == [jnp]


def test_namespace_info():
    info = jnp.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": False,
                                   "data-dependent shapes": False, "max dimensions": 64}
    assert info.default_device() is None
    devices = info.devices()
    assert devices[0] is None and devices[1:] == pyjax.devices()
    assert info.default_dtypes() == {
        "real floating": np.dtype("float32"), "complex floating": np.dtype("complex64"),
        "integral": np.dtype("int32"), "indexing": np.dtype("int32")}
    assert info.dtypes() == {n: np.dtype(n) for n in (
        "bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32",
        "complex64")}
    assert info.dtypes(kind=("integral", "bool")) == {n: np.dtype(n) for n in (
        "bool", "int8", "int16", "int32", "uint8", "uint16", "uint32")}
    assert info.dtypes(kind="real floating") == {"float32": np.dtype("float32")}
    with pytest.raises(KeyError, match="floats"):
        info.dtypes(kind="floats")


def test_namespace_info_with_x64():
    with pyjax.enable_x64(True):
        info = jnp.__array_namespace_info__()
        assert info.default_dtypes()["integral"] == np.dtype("int64")
        assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}


def test_dlpack():
    x = jnp.arange(4.0)
    assert x.__dlpack_device__() == (1, 0)   # kDLCPU, device 0
    np.testing.assert_array_equal(np.from_dlpack(x), [0.0, 1.0, 2.0, 3.0])
    capsule = x.__dlpack__(stream=None)
    assert type(capsule).__name__ == "PyCapsule"
    np.testing.assert_array_equal(jnp.from_dlpack(x), [0.0, 1.0, 2.0, 3.0])


@pytest.mark.parametrize("offset,count", [(0, 4), (4, 4), (16, 4), (4, 0)])
@pytest.mark.parametrize("copy", [False, True, None])
def test_from_dlpack_copy_false_needs_aligned_data(offset, count, copy):
    # JAX 0.10.2 on CPU: copy=False takes only 64-byte aligned data (XLA's zero-copy
    # rule), even an empty array's; device= commits the result
    buf = np.zeros(200, np.uint8)
    start = (-buf.ctypes.data) % 64 + offset
    host = np.frombuffer(buf.data, dtype=np.float32, count=count, offset=start)
    device = pyjax.devices()[0]
    if copy is False and offset:
        with pytest.raises(ValueError, match="Specified input which requires a copy since "
                           "the source data buffer is not aligned to 64 bytes.  However "
                           "copy=False. Set copy=True or copy=None"):
            jnp.from_dlpack(host, device=device, copy=copy)
        return
    out = jnp.from_dlpack(host, device=device, copy=copy)
    assert out.tolist() == [0.0] * count and out.committed


def test_cuda_array_interface_only_on_gpu():
    x = jnp.arange(5)
    assert not hasattr(x, "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="^__cuda_array_interface__ is only defined for "
                       "GPU buffers.$"):
        _ = x.__cuda_array_interface__


@pytest.mark.parametrize("jit", [False, True])
def test_floor_divide_signed_zero(jit):
    f = pyjax.jit(jnp.floor_divide) if jit else jnp.floor_divide
    a = jnp.array([0.0, -0.0, 0.0, -0.0], jnp.float32)
    b = jnp.array([-1.0, 1.0, 1.0, -1.0], jnp.float32)
    # JAX 0.10.2: [-0., 0., 0., -0.] (the standard wants -0 // 1 to be -0; JAX skips it)
    np.testing.assert_array_equal(np.signbit(f(a, b)), [True, False, False, True])


def test_round_keeps_negative_zero():
    # JAX 0.10.2: jnp.round(-0.2) and lax.round(-0.0) are -0.0
    assert np.signbit(jnp.round(jnp.float32(-0.2)))
    assert np.signbit(pyjax.lax.round(jnp.float32(-0.0)))
    assert np.signbit(pyjax.lax.round(jnp.float32(-0.4),
                                      pyjax.lax.RoundingMethod.AWAY_FROM_ZERO))


def test_eye_with_huge_offset():
    assert jnp.eye(0, k=2**31).shape == (0, 0)
    np.testing.assert_array_equal(jnp.eye(2, 3, k=-2**40), np.zeros((2, 3)))
    np.testing.assert_array_equal(jnp.eye(2, 3, k=2**33), np.zeros((2, 3)))
    np.testing.assert_array_equal(jnp.eye(2, 3, k=2), [[0, 0, 1], [0, 0, 0]])


def test_unstack_empty_axis():
    assert jnp.unstack(jnp.zeros((0, 3)), axis=0) == ()
    assert jnp.unstack(jnp.zeros((2, 0)), axis=1) == ()
    assert [a.shape for a in jnp.unstack(jnp.zeros((2, 0)), axis=0)] == [(0,), (0,)]


def test_empty_boolean_masks():
    assert jnp.zeros(0)[jnp.zeros(0, bool)].shape == (0,)
    assert jnp.zeros((0, 2))[jnp.zeros(0, bool)].shape == (0, 2)
    assert jnp.zeros((2, 0))[:, jnp.zeros(0, bool)].shape == (2, 0)


def test_vecdot_checks_contraction_sizes():
    with pytest.raises(ValueError, match=r"axes must match; got shapes \(3,\) and \(4,\) "
                                         r"with axis=-1"):
        jnp.vecdot(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match="axes must match"):
        jnp.vecdot(jnp.ones((2, 3)), jnp.ones((2, 1)))
    np.testing.assert_array_equal(jnp.vecdot(jnp.ones((2, 3)), jnp.ones((1, 3))), [3, 3])


def test_creation_functions_commit_to_device():
    device = pyjax.devices()[0]
    made = [jnp.asarray([1, 2], device=device), jnp.array([1.0], device=device),
            jnp.zeros(3, device=device), jnp.full((2,), 7, device=device),
            jnp.arange(3, device=device), jnp.eye(2, device=device),
            jnp.linspace(0, 1, 3, device=device), jnp.ones(2).astype("int32", device=device),
            jnp.zeros_like(jnp.ones(2), device=device)]
    for x in made:
        assert x.committed and x.devices() == {device}
    assert not jnp.zeros(3).committed
    np.testing.assert_array_equal(made[6], [0.0, 0.5, 1.0])


@pytest.mark.parametrize("jit", [False, True])
def test_complex_expm1_special_values(jit):
    f = pyjax.jit(jnp.expm1) if jit else jnp.expm1
    x = jnp.array([complex(np.inf, 0), complex(np.nan, 0), complex(-np.inf, 0),
                   complex(1, 0), complex(0, 1e-3), complex(np.inf, 1.0)], jnp.complex64)
    # JAX 0.10.2 (eager and jit)
    expected = np.array([complex(np.inf, 0), complex(np.nan, 0), complex(-1, 0),
                         complex(1.7182817, 0), complex(-5.0e-07, 9.9999993e-04),
                         complex(np.inf, np.inf)], np.complex64)
    np.testing.assert_allclose(f(x), expected, rtol=2e-6, atol=0)


def test_complex_expm1_signed_zeros():
    x = jnp.array([complex(-0.0, 0), complex(0.0, 0), complex(-0.0, -0.0)], jnp.complex64)
    y = jnp.expm1(x)   # JAX 0.10.2: all +0 + 0j
    assert not np.signbit(y.real).any() and not np.signbit(y.imag).any()
    assert np.signbit(jnp.expm1(jnp.float32(-0.0)))   # the real function keeps -0
