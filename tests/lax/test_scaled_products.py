"""lax.scaled_dot and jax.nn's block-scaled products (scaled_matmul,
get_scaled_dot_general_config, scaled_dot_general). Expected values recorded from JAX
0.10.2; JAX runs nn.scaled_matmul only with cuDNN, so its values for the nn functions
were recorded with JAX's own quantization and the documented scaled_matmul math."""
import ml_dtypes
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.nn import scaled_matmul as sm

E4M3, E8M0 = jnp.float8_e4m3fn, jnp.float8_e8m0fnu


def _operands():
    a = jnp.arange(64.0).reshape(2, 32).astype(E4M3)
    b = (jnp.arange(96.0).reshape(32, 3) / 7).astype(E4M3)
    sa = jnp.array([[2.0, 0.5], [1.0, 4.0]], E8M0)
    sb = jnp.array([[1.0, 2.0, 0.25], [8.0, 1.0, 1.0]], E8M0)
    return a, b, sa, sb


def test_scaled_dot_matches_jax():
    a, b, sa, sb = _operands()
    expected = [[16768.0, 4192.0, 2304.0], [292864.0, 41472.0, 37888.0]]
    out = lax.scaled_dot(a, b, lhs_scale=sa, rhs_scale=sb,
                         dimension_numbers=(((1,), (0,)), ((), ())))
    assert out.dtype == jnp.bfloat16 and out.astype(jnp.float32).tolist() == expected
    jitted = jax.jit(lambda x, y, s, t: lax.scaled_dot(x, y, lhs_scale=s, rhs_scale=t))
    assert jitted(a, b, sa, sb).astype(jnp.float32).tolist() == expected
    out = lax.scaled_dot(a, b, preferred_element_type=jnp.float32)
    assert out.dtype == jnp.float32
    assert out.tolist() == [[4458.4375, 4535.6875, 4610.0625], [11269.0, 11504.5, 11715.5]]
    x3, y3 = jnp.ones((2, 3, 4), E4M3), jnp.ones((2, 4, 5), E4M3)
    assert lax.scaled_dot(x3, y3, lhs_scale=jnp.full((2, 3, 2), 2.0, E8M0)).shape == (2, 3, 5)


def test_scaled_dot_errors_match_jax():
    a, b, _, _ = _operands()
    with pytest.raises(TypeError, match=r"The ratio of LHS contracting dim 1 to its scale's "
                                        r"dim size \(1\) must be at least 2."):
        lax.scaled_dot(a, b, lhs_scale=jnp.ones((2, 32), E8M0))
    with pytest.raises(TypeError, match="LHS dim 0 of size 2 does not match scale dim size 3"):
        lax.scaled_dot(a, b, lhs_scale=jnp.ones((3, 2), E8M0))
    with pytest.raises(TypeError, match="does not support 0-rank and 1-rank operands"):
        lax.scaled_dot(jnp.ones(3), jnp.ones(3))


def test_scaled_matmul():
    a = jnp.array([1, 2, 3.0]).reshape((1, 1, 3))
    b = jnp.array([4, 5, 6.0]).reshape((1, 1, 3))
    s = jnp.array([0.5]).reshape((1, 1, 1))
    assert jax.nn.scaled_matmul(a, b, s, s).tolist() == [[[8.0]]]   # JAX's docstring
    with pytest.raises(ValueError, match="3-dimensional"):
        jax.nn.scaled_matmul(a[0], b, s, s)


def test_configs_match_jax():
    mx = jax.nn.get_scaled_dot_general_config("mxfp8")
    assert (mx.mode, mx.block_size, mx.global_scale, mx.infer_only) == ("mxfp8", 32, None,
                                                                         False)
    assert (mx.data_type, mx.scale_type) == (ml_dtypes.float8_e4m3fn,
                                             ml_dtypes.float8_e8m0fnu)
    nv = jax.nn.get_scaled_dot_general_config("nvfp4")
    assert (nv.mode, nv.block_size, nv.data_type, nv.scale_type) == (
        "nvfp4", 16, ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e4m3fn)
    assert nv.global_scale.tolist() == [1.0]
    with pytest.raises(ValueError, match="Unsupported mode"):
        jax.nn.get_scaled_dot_general_config("int8")


def test_quantization_and_scaled_dot_general_match_jax():
    mx = jax.nn.get_scaled_dot_general_config("mxfp8")
    nv = jax.nn.get_scaled_dot_general_config("nvfp4")
    x = jnp.asarray(np.random.RandomState(0).randn(2, 64).astype("float32"))
    y = jnp.asarray(np.random.RandomState(1).randn(64, 3).astype("float32"))
    q, s = sm._quantize(x.reshape(1, 2, 64), mx)
    assert q.astype(jnp.float32).ravel()[:8].tolist() == [224.0, 52.0, 128.0, 288.0, 240.0,
                                                          -128.0, 120.0, -20.0]
    assert s.astype(jnp.float32).tolist() == [[[0.0078125, 0.0078125], [0.0078125, 0.0078125]]]
    q, s = sm._quantize(x.reshape(1, 2, 64), nv)
    assert q.astype(jnp.float32).ravel()[:8].tolist() == [4.0, 1.0, 3.0, 6.0, 4.0, -3.0, 3.0,
                                                          -0.5]
    assert s.astype(jnp.float32).tolist() == [[[0.375, 0.4375, 0.34375, 0.28125],
                                               [0.28125, 0.3125, 0.3125, 0.3125]]]
    dn = (((1,), (0,)), ((), ()))
    assert jax.nn.scaled_dot_general(x, y, dn, configs=[mx] * 3).tolist() == [
        [5.2998046875, 11.1043701171875, -8.745849609375],
        [-1.169464111328125, 5.846103668212891, 4.12078857421875]]
    assert jax.jit(lambda p, r: jax.nn.scaled_dot_general(p, r, dn, configs=[nv] * 3))(
        x, y).tolist() == [[4.74560546875, 10.74072265625, -10.83837890625],
                           [-2.080078125, 6.074951171875, 4.3759765625]]
    np.testing.assert_allclose(jax.nn.scaled_dot_general(x, y, dn), x @ y, rtol=1e-6)


def test_scaled_dot_general_gradient_matches_jax():
    mx = jax.nn.get_scaled_dot_general_config("mxfp8")
    x = jnp.asarray(np.random.RandomState(2).randn(32, 64).astype("float32"))
    y = jnp.asarray(np.random.RandomState(3).randn(64, 32).astype("float32"))
    dn = (((1,), (0,)), ((), ()))
    gx, gy = jax.grad(lambda p, r: jax.nn.scaled_dot_general(p, r, dn, configs=[mx] * 3)
                      .sum(), argnums=(0, 1))(x, y)
    assert gx[0, :4].tolist() == [-0.90625, -8.861328125, -2.8203125, 2.3125]
    assert gy[:2, 0].tolist() == [4.296875, -0.77734375]
