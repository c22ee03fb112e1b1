"""lax.conv_general_dilated and its wrappers (conv, conv_with_general_padding,
conv_transpose, conv_dimension_numbers, padtype_to_pads) and jnp.convolve/correlate: values
against a loop reference and NumPy, gradients (check_grads), vmap against a loop, jit on
both executors, JAX's errors, and the Thinking-in-JAX convolution example."""
import itertools

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.test_util import check_grads

from harness import EXECUTORS, jit_on, rand



def reference_conv(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, dnums,
                   groups=1, batch_groups=1):
    """The convolution written out as loops over outputs, channels and kernel taps."""
    lhs_spec, rhs_spec, out_spec = dnums
    x = np.transpose(lhs, lhs_spec).astype(np.float64)
    w = np.transpose(rhs, rhs_spec).astype(np.float64)
    nsp = x.ndim - 2
    dil_shape = [(n - 1) * d + 1 for n, d in zip(x.shape[2:], lhs_dilation)]
    xd = np.zeros(x.shape[:2] + tuple(dil_shape))
    xd[(slice(None),) * 2 + tuple(slice(None, None, d) for d in lhs_dilation)] = x
    xp = np.pad(xd, [(0, 0)] * 2 + [(max(lo, 0), max(hi, 0)) for lo, hi in padding])
    xp = xp[(slice(None),) * 2 + tuple(
        slice(max(-lo, 0), xp.shape[2 + i] - max(-hi, 0)) for i, (lo, hi) in enumerate(padding))]
    kd = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_dilation)]
    out_sp = [max(0, (p - k) // s + 1) for p, k, s in zip(xp.shape[2:], kd, strides)]
    n_out, o_total, i_per = x.shape[0] // batch_groups, w.shape[0], w.shape[1]
    out = np.zeros((n_out, o_total) + tuple(out_sp))
    for o in range(o_total):
        g = o // (o_total // groups)
        bg = o // (o_total // batch_groups)
        for n in range(n_out):
            for pos in itertools.product(*[range(s) for s in out_sp]):
                acc = 0.0
                for c in range(i_per):
                    for tap in itertools.product(*[range(k) for k in w.shape[2:]]):
                        idx = tuple(p * s + t * d for p, s, t, d in
                                    zip(pos, strides, tap, rhs_dilation))
                        acc += xp[(bg * n_out + n, g * i_per + c) + idx] * w[(o, c) + tap]
                out[(n, o) + pos] = acc
    assert nsp == len(out_sp)
    return np.transpose(out, np.argsort(out_spec))


CASES = [
    # lhs shape, rhs shape, strides, padding, lhs_dil, rhs_dil, dimension_numbers, G, B
    ((1, 1, 3), (1, 1, 10), (1,), [(9, 9)], (1,), (1,), None, 1, 1),
    ((2, 3, 6, 5), (4, 3, 3, 2), (2, 1), [(1, 1), (0, 2)], (1, 1), (1, 2), None, 1, 1),
    ((2, 6, 5, 3), (3, 2, 3, 4), (1, 2), [(2, 1), (1, 0)], (1, 1), (2, 1),
     ("NHWC", "HWIO", "NHWC"), 1, 1),
    ((2, 4, 7), (6, 2, 3), (2,), [(-1, 2)], (2,), (1,), None, 2, 1),
    ((4, 3, 6), (4, 3, 2), (1,), [(1, 0)], (1,), (2,), None, 1, 2),
    ((2, 5, 4, 2), (4, 2, 2, 1), (1, 1), [(0, 0), (1, 1)], (2, 1), (1, 1),
     ("NWHC", "OHWI", "NCHW"), 2, 1),
]


def _dnums(case):
    lhs, rhs, *_, dn, _, _ = case
    return lax.conv_dimension_numbers(lhs, rhs, dn)


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
@pytest.mark.parametrize("executor", ["eager"] + EXECUTORS)
def test_conv_general_dilated_matches_loops(case, executor):
    lhs_shape, rhs_shape, strides, padding, ld, rd, dn, g, bg = case
    lhs, rhs = rand(lhs_shape), rand(rhs_shape, 1)

    def f(lhs, rhs):
        return lax.conv_general_dilated(lhs, rhs, strides, padding, ld, rd, dn,
                                        feature_group_count=g, batch_group_count=bg)
    f = f if executor == "eager" else jit_on(executor, f)
    out = f(lhs, rhs)
    expected = reference_conv(lhs, rhs, strides, padding, ld, rd, _dnums(case), g, bg)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", CASES[1:], ids=range(1, len(CASES)))
def test_conv_gradients(case):
    lhs_shape, rhs_shape, strides, padding, ld, rd, dn, g, bg = case

    def f(lhs, rhs):
        return lax.conv_general_dilated(lhs, rhs, strides, padding, ld, rd, dn,
                                        feature_group_count=g, batch_group_count=bg)
    with jax.enable_x64(True):
        check_grads(f, (rand(lhs_shape).astype(np.float64),
                        rand(rhs_shape, 1).astype(np.float64)), 2, eps=1e-4)


@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[4]], ids=[1, 3, 4])
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 2)])
def test_conv_vmap_matches_loop(case, in_axes):
    lhs_shape, rhs_shape, strides, padding, ld, rd, dn, g, bg = case
    lhs, rhs = rand((3,) + lhs_shape), rand((3,) + rhs_shape, 1)
    args = [np.moveaxis(a, 0, ax) if ax is not None else a[0]
            for a, ax in zip((lhs, rhs), in_axes)]

    def f(lhs, rhs):
        return lax.conv_general_dilated(lhs, rhs, strides, padding, ld, rd, dn,
                                        feature_group_count=g, batch_group_count=bg)
    out = jax.vmap(f, in_axes=in_axes)(*args)
    expected = np.stack([f(lhs[i] if in_axes[0] is not None else lhs[0],
                           rhs[i] if in_axes[1] is not None else rhs[0]) for i in range(3)])
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_string_padding_and_shapes():
    x, k = rand((1, 2, 7, 8)), rand((3, 2, 3, 3), 1)
    dn = lax.conv_dimension_numbers(x.shape, k.shape, None)
    for name in ("SAME", "SAME_LOWER", "VALID"):
        out = lax.conv_general_dilated(x, k, (2, 3), name)
        pads = lax.padtype_to_pads((7, 8), (3, 3), (2, 3), name)
        expected = reference_conv(x, k, (2, 3), pads, (1, 1), (1, 1), dn)
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    assert lax.padtype_to_pads((7, 8), (3, 3), (2, 3), "SAME") == [(1, 1), (0, 1)]
    assert lax.padtype_to_pads((7, 8), (3, 3), (2, 3), "SAME_LOWER") == [(1, 1), (1, 0)]
    assert lax.conv(x, k, (2, 3), "SAME").shape == (1, 3, 4, 3)
    out = lax.conv_with_general_padding(x, k, (1, 1), [(1, 1), (0, 0)], (2, 1), (1, 2))
    expected = reference_conv(x, k, (1, 1), [(1, 1), (0, 0)], (2, 1), (1, 2), dn)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_conv_dimension_numbers():
    dn = lax.conv_dimension_numbers((1, 5, 6, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_dimension_numbers((1, 2, 3), (4, 2, 1), None) == \
        lax.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))
    with pytest.raises(TypeError, match="layout strings"):
        lax.conv_dimension_numbers((1, 2, 3), (4, 2, 1), ((0, 1, 2),) * 3)
    with pytest.raises(TypeError, match="spatial letters"):
        lax.conv_dimension_numbers((1, 5, 6, 3), (3, 3, 3, 8), ("NHWC", "HXIO", "NHWC"))


@pytest.mark.parametrize("padding", ["SAME", "VALID", [(2, 1), (0, 1)]])
@pytest.mark.parametrize("strides", [(1, 1), (2, 2), (3, 1)])
def test_conv_transpose_is_the_input_gradient(padding, strides):
    """conv_transpose with transpose_kernel=True is the gradient of a forward
    convolution with respect to its input (TensorFlow's conv2d_transpose)."""
    x, k = rand((2, 6, 6, 3)), rand((3, 2, 3, 4), 1)
    dn = ("NHWC", "HWIO", "NHWC")

    def forward(x):
        return lax.conv_general_dilated(x, k, strides, padding, dimension_numbers=dn)
    y, pullback = jax.vjp(forward, x)
    ct = rand(y.shape, 2)
    (expected,) = pullback(ct)
    if isinstance(padding, list):   # the matching explicit padding of the transpose
        pads = [(k.shape[i] - 1 - lo, x.shape[1 + i] - (y.shape[1 + i] - 1) * strides[i]
                 - 1 + lo) for i, (lo, _) in enumerate(padding)]
    else:
        pads = padding
    out = lax.conv_transpose(ct, k, strides, pads, dimension_numbers=dn,
                             transpose_kernel=True)
    if padding == "VALID":   # sizes differ by what no window reached (zero gradient there)
        h, w = min(out.shape[1], 6), min(out.shape[2], 6)
        np.testing.assert_allclose(out[:, h:], 0, atol=1e-6)
        np.testing.assert_allclose(expected[:, h:], 0, atol=1e-6)
        np.testing.assert_allclose(expected[:, :, w:], 0, atol=1e-6)
        out, expected = out[:, :h, :w], expected[:, :h, :w]
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_conv_transpose_consistent_padding_matches_jax():
    """use_consistent_padding reads explicit pairs as the forward conv's padding (values
    from JAX 0.10.2)."""
    r = np.random.RandomState(0)
    x = r.randn(1, 5, 4, 2).astype(np.float32)
    k = r.randn(3, 2, 2, 3).astype(np.float32)
    out = lax.conv_transpose(x, k, (2, 1), [(1, 0), (0, 1)], use_consistent_padding=True)
    assert out.shape == (1, 10, 4, 3)
    np.testing.assert_allclose(np.asarray(out)[0, :3, :2, 0],
                               [[-1.2629, -2.1562], [-2.8774, -4.2910], [-0.0822, -0.3857]],
                               atol=1e-4)


def test_conv_transpose_output_shapes():
    x, k = rand((1, 5, 4, 2)), rand((3, 3, 2, 6), 1)   # NHWC, HWIO (TF defaults)
    assert lax.conv_transpose(x, k, (2, 2), "SAME").shape == (1, 10, 8, 6)
    assert lax.conv_transpose(x, k, (2, 2), "VALID").shape == (1, 11, 9, 6)
    assert lax.conv_transpose(x, k, (1, 1), "VALID").shape == (1, 7, 6, 6)
    k1 = rand((3, 2, 4), 1)
    assert lax.conv_transpose(rand((2, 5, 2)), k1, (3,), "SAME").shape == (2, 15, 4)


def test_gradient_of_a_bfloat16_conv_with_a_float32_result():
    # JAX 0.10.2 (issue 31592): the transposes take the cotangent's dtype, and the
    # gradients come back as the operands' bfloat16
    x = jnp.asarray(np.random.RandomState(0).randn(1, 2, 6, 6), jnp.bfloat16)
    w = jnp.asarray(np.random.RandomState(1).randn(3, 2, 3, 3), jnp.bfloat16)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        preferred_element_type=jnp.float32).sum()
    for grad in (jax.grad(f, (0, 1)), jax.jit(jax.grad(f, (0, 1)))):
        gx, gw = grad(x, w)
        assert gx.dtype == gw.dtype == jnp.bfloat16
        assert float(gx.astype(jnp.float32).sum()) == -65.82421875
        assert float(gw.astype(jnp.float32).sum()) == -32.810302734375


def test_preferred_element_type_and_integers():
    x = np.arange(12, dtype=np.int8).reshape(1, 2, 6)
    k = np.ones((2, 2, 3), np.int8)
    out = lax.conv_general_dilated(x, k, (1,), "VALID", preferred_element_type=np.int32)
    assert out.dtype == np.int32
    expected = reference_conv(x, k, (1,), [(0, 0)], (1,), (1,),
                              lax.conv_dimension_numbers(x.shape, k.shape, None))
    np.testing.assert_array_equal(out, expected)
    for executor in EXECUTORS:
        jitted = jit_on(executor, lambda a, b: lax.conv_general_dilated(
            a, b, (1,), "VALID", preferred_element_type=np.int32))
        np.testing.assert_array_equal(jitted(x, k), expected)
    bf = lax.conv(x.astype(jnp.bfloat16), k.astype(jnp.bfloat16), (1,), "VALID")
    assert bf.dtype == jnp.bfloat16
    np.testing.assert_allclose(np.asarray(bf, np.float32), expected, rtol=1e-2)


def test_conv_errors():
    x, k = rand((1, 4, 5)), rand((2, 2, 3), 1)
    with pytest.raises(ValueError, match="must divide lhs feature"):
        lax.conv_general_dilated(x, k, (1,), "VALID", feature_group_count=3)
    with pytest.raises(ValueError, match="rhs input feature dimension"):
        lax.conv_general_dilated(x, k, (1,), "VALID")
    with pytest.raises(ValueError, match="At most one of"):
        lax.conv_general_dilated(rand((2, 4, 5)), k, (1,), "VALID", feature_group_count=2,
                                 batch_group_count=2)
    with pytest.raises(ValueError, match="Unknown padding type"):
        lax.conv_general_dilated(x, k, (1,), "FULL", feature_group_count=2)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.conv_general_dilated(x, k.astype(np.int32), (1,), "VALID",
                                 feature_group_count=2)
    with pytest.raises(ValueError, match="transposed convolution"):
        lax.conv_general_dilated(x, k, (1,), "SAME", lhs_dilation=(2,),
                                 feature_group_count=2)
    with pytest.raises(ValueError, match="window_strides"):
        lax.conv_general_dilated(x, k, (1, 1), "VALID", feature_group_count=2)
    with pytest.raises(ValueError, match="must be positive"):
        lax.conv_general_dilated(x, k, (0,), "VALID", feature_group_count=2)
    with pytest.raises(TypeError, match="ndim to be equal"):
        lax.conv_general_dilated(x, rand((2, 2)), (1,), "VALID")


# --- jnp.convolve / jnp.correlate -----------------------------------------------------------

def test_thinking_in_jax_convolution_example():
    x = jnp.array([1, 2, 1])
    y = jnp.ones(10)
    out = jnp.convolve(x, y)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [1, 3, 4, 4, 4, 4, 4, 4, 4, 4, 3, 1])
    assert repr(out) == ("Array([1., 3., 4., 4., 4., 4., 4., 4., 4., 4., 3., 1.], "
                         "dtype=float32)")
    result = lax.conv_general_dilated(
        x.reshape(1, 1, 3).astype(float),   # note: explicit promotion
        y.reshape(1, 1, 10),
        window_strides=(1,),
        padding=[(len(y) - 1, len(y) - 1)])  # equivalent of padding='full' in NumPy
    assert result[0, 0].dtype == np.float32
    np.testing.assert_array_equal(result[0, 0], out)
    np.testing.assert_array_equal(jax.jit(jnp.convolve)(x, y), out)


@pytest.mark.parametrize("n,m", [(5, 3), (3, 5), (4, 4), (1, 6), (7, 2)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("complex_", [False, True])
def test_convolve_and_correlate_match_numpy(n, m, mode, complex_):
    rng = np.random.default_rng(n * 10 + m)
    a, v = rng.standard_normal(n), rng.standard_normal(m)
    if complex_:
        a, v = a + 1j * rng.standard_normal(n), v + 1j * rng.standard_normal(m)
    dtype = np.complex64 if complex_ else np.float32
    a, v = a.astype(dtype), v.astype(dtype)
    np.testing.assert_allclose(jnp.convolve(a, v, mode), np.convolve(a, v, mode),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jnp.correlate(a, v, mode), np.correlate(a, v, mode),
                               rtol=1e-5, atol=1e-5)


def test_convolve_dtypes_jit_and_grad():
    a, v = np.array([1, 2, 3, 2, 1]), np.array([4, 1, 2])
    np.testing.assert_array_equal(jnp.convolve(a, v), [4, 9, 16, 15, 12, 5, 2])
    assert jnp.convolve(a, v).dtype == np.float32
    exact = jnp.convolve(a, v, preferred_element_type=np.int32)
    assert exact.dtype == np.int32
    np.testing.assert_array_equal(exact, np.convolve(a, v))
    for executor in EXECUTORS:
        f = jit_on(executor, lambda a, v: jnp.correlate(a, v, "same"))
        np.testing.assert_allclose(f(a.astype(np.float32), v.astype(np.float32)),
                                   np.correlate(a, v, "same"), rtol=1e-6)
    with jax.enable_x64(True):
        check_grads(lambda a, v: jnp.convolve(a, v, "same"),
                    (rand(6).astype(np.float64), rand(3, 1).astype(np.float64)), 2)


def test_convolve_errors():
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.convolve(jnp.ones((2, 2)), jnp.ones(2))
    with pytest.raises(ValueError, match="cannot be empty"):
        jnp.correlate(jnp.ones(0), jnp.ones(2))
    with pytest.raises(ValueError, match="mode must be one of"):
        jnp.convolve(jnp.ones(3), jnp.ones(2), mode="circular")
    with pytest.raises(TypeError, match="jnp.array"):
        jnp.convolve([1, 2, 3], jnp.ones(2))
