"""jax.example_libraries.optimizers and stax; expected values observed from JAX 0.10.2."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.example_libraries import optimizers, stax


def _loss(params):
    return (jnp.sum((params["w"] * jnp.arange(1., 4.) - 1.) ** 2)
            + jnp.sum(jnp.sin(params["b"][0]) ** 2))


def _initial_params():
    return {"w": jnp.array([0.5, -0.2, 0.3]), "b": (jnp.array([[0.3, 0.1], [-0.4, 0.2]]),)}


@pytest.mark.parametrize("maker, expected", [
    ("sgd(0.1)", [0.7952, 0.49888, 0.31968, 0.1272414, 0.04111822, -0.1743686, 0.08319563]),
    ("momentum(0.1, 0.9)",
     [1.1543, 0.78616, 0.30186, -0.08153646, -0.03045455, 0.09705245, -0.05846588]),
    ("nesterov(0.1, 0.9)",
     [1.162411, 0.4656926, -0.1992452, -0.09194302, -0.03228237, 0.1166487, -0.06335367]),
    ("adagrad(0.3)",
     [0.7010829, 0.003363776, 0.3567959, 0.1036474, -0.05688623, -0.1994358, 0.01238133]),
    ("rmsprop(0.05)",
     [0.8635876, 0.1944776, 0.3309066, 0.01400766, 0.006169953, -0.05904591, 6.141362e-05]),
    ("rmsprop_momentum(0.05)",
     [1.312878, 0.7236973, 0.2274225, -0.2700582, 0.05746875, 0.3194324, -0.152116]),
    ("adam(0.1)",
     [0.8870819, 0.1929955, 0.2875014, -0.06376872, -0.04878734, -0.01759666, -0.1085425]),
    ("adamax(0.1)",
     [0.8390178, 0.1559762, 0.3046926, -0.004981771, -0.05099407, -0.06824554, -0.05896945]),
    ("sm3(0.2)",
     [0.6358216, -0.0632166, 0.3647287, 0.1660285, 0.001186438, -0.2642961, 0.0694987]),
    ("adam(optimizers.exponential_decay(0.1, 2, 0.5))",
     [0.7521483, 0.05384398, 0.3273589, 0.05374283, -0.05252006, -0.1487586, -0.029614]),
    ("sgd(optimizers.polynomial_decay(0.1, 3, 0.01, 2.0))",
     [0.661312, 0.4350848, 0.3347328, 0.2075031, 0.06789674, -0.2811055, 0.1367476]),
    ("sgd(optimizers.inverse_time_decay(0.1, 2, 0.5, staircase=True))",
     [0.7596444, 0.4939022, 0.33248, 0.1487927, 0.04823818, -0.2032827, 0.09748637]),
    ("sgd(optimizers.piecewise_constant([1, 3], [0.1, 0.05, 0.01]))",
     [0.7408, 0.48992, 0.33312, 0.1601769, 0.05201042, -0.2185139, 0.1050495]),
])
def test_four_steps_on_a_pytree_match_jax(maker, expected):
    init_fn, update_fn, get_params = eval("optimizers." + maker)
    step = lambda i, state: update_fn(i, jax.grad(_loss)(get_params(state)), state)  # noqa: E731
    if not maker.startswith("sm3"):   # sm3 keeps the parameter shape (ints) in its state
        step = jax.jit(step)
    state = init_fn(_initial_params())
    for i in range(4):
        state = step(i, state)
    params = get_params(state)
    assert jax.tree_util.tree_structure(params) == jax.tree_util.tree_structure(
        _initial_params())
    got = np.concatenate([np.ravel(params["w"]), np.ravel(params["b"][0])])
    np.testing.assert_allclose(got, expected, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("schedule, expected", [
    ("exponential_decay(0.1, 2, 0.5)",
     [0.1, 0.07071068, 0.05, 0.03535534, 0.025, 0.01767767]),
    ("inverse_time_decay(0.1, 2, 0.5)",
     [0.1, 0.08, 0.06666667, 0.05714286, 0.05, 0.04444445]),
    ("inverse_time_decay(0.1, 2, 0.5, staircase=True)",
     [0.1, 0.1, 0.06666667, 0.06666667, 0.05, 0.05]),
    ("polynomial_decay(0.1, 3, 0.01, 2.0)", [0.1, 0.05, 0.02, 0.01, 0.01, 0.01]),
    ("piecewise_constant([1, 3], [0.1, 0.05, 0.01])", [0.1, 0.1, 0.05, 0.05, 0.01, 0.01]),
])
def test_schedules(schedule, expected):
    fn = eval("optimizers." + schedule)
    np.testing.assert_allclose([fn(jnp.int32(i)) for i in range(6)], expected, rtol=1e-6)


def test_make_schedule_and_bad_schedules():
    assert optimizers.make_schedule(0.3)(7) == 0.3
    assert optimizers.make_schedule(abs)(-2) == 2
    with pytest.raises(TypeError):
        optimizers.make_schedule([0.1, 0.2])
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="sequences"):
        optimizers.piecewise_constant(1, [0.1, 0.2])


def test_clip_grads_and_l2_norm():
    grads = {"a": jnp.array([3., 4.]), "b": jnp.array([12.])}
    assert float(optimizers.l2_norm(grads)) == 13.0
    clipped = optimizers.clip_grads(grads, 5.)
    np.testing.assert_allclose(clipped["a"], [1.1538461, 1.5384616], rtol=1e-6)
    np.testing.assert_allclose(optimizers.l2_norm(clipped), 5., rtol=1e-6)
    assert optimizers.clip_grads(grads, 20.)["b"].tolist() == [12.]


def test_state_is_a_pytree_and_packs_round_trip():
    init_fn, update_fn, get_params = optimizers.adam(0.1)
    state = init_fn(_initial_params())
    assert isinstance(state, optimizers.OptimizerState)
    assert len(jax.tree_util.tree_leaves(state)) == 6     # (x, m, v) for each of 2 leaves
    unpacked = optimizers.unpack_optimizer_state(state)
    assert isinstance(unpacked["w"], optimizers.JoinPoint)
    x, m, v = unpacked["w"]
    np.testing.assert_array_equal(x, np.float32([0.5, -0.2, 0.3]))
    assert m.tolist() == [0., 0., 0.]
    repacked = optimizers.pack_optimizer_state(unpacked)
    assert jax.tree_util.tree_structure(repacked) == jax.tree_util.tree_structure(state)
    np.testing.assert_array_equal(get_params(repacked)["w"], np.float32([0.5, -0.2, 0.3]))


def test_update_with_a_mismatched_gradient_tree_raises():
    init_fn, update_fn, _ = optimizers.sgd(0.1)
    state = init_fn({"w": jnp.ones(2)})
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        update_fn(0, [jnp.ones(2)], state)


def test_sm3_on_a_scalar_parameter():
    init_fn, update_fn, get_params = optimizers.sm3(0.1)
    state = update_fn(0, jnp.float32(0.5), init_fn(jnp.float32(2.)))
    state = update_fn(1, jnp.float32(-0.5), state)
    assert get_params(state).shape == ()
    np.testing.assert_allclose(get_params(state), 1.9880711, rtol=1e-6)


# --- stax ------------------------------------------------------------------------------------

def test_dense_parameters_match_jax_for_the_same_key():
    init_fun, apply_fun = stax.Dense(3)
    out_shape, (W, b) = init_fun(jax.random.PRNGKey(0), (5, 4))
    assert out_shape == (5, 3)
    np.testing.assert_allclose(W.ravel(), [
        0.5720341, -0.5183409, -0.4299979, -0.6620127, -0.4988698, 0.3396773, 0.4163307,
        -0.5837926, 0.9020486, -0.99527, -0.7232944, 0.07747422], rtol=1e-5)
    np.testing.assert_allclose(b, [-0.02442456, -0.0203568, 0.002055442], rtol=1e-5)
    np.testing.assert_allclose(apply_fun((W, b), jnp.ones((1, 4))), jnp.ones((1, 4)) @ W + b)


IMAGES = jnp.asarray(np.arange(2 * 6 * 6 * 2, dtype=np.float32).reshape(2, 6, 6, 2) / 50.0)


def test_conv_net_shapes_and_outputs():
    init_fun, apply_fun = stax.serial(
        stax.Conv(3, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Conv(4, (2, 2)), stax.Tanh, stax.AvgPool((2, 2), padding="SAME"), stax.Flatten,
        stax.Dense(2), stax.LogSoftmax)
    out_shape, params = init_fun(jax.random.PRNGKey(1), IMAGES.shape)
    assert out_shape == (2, 2)
    assert [leaf.shape for leaf in jax.tree_util.tree_leaves(params)] == [
        (3, 3, 2, 3), (1, 1, 1, 3), (2, 2, 3, 4), (1, 1, 1, 4), (16, 2), (2,)]
    out = jax.jit(apply_fun)(params, IMAGES)
    np.testing.assert_allclose(out.ravel(), [-0.1814923, -1.795916, -0.06691141, -2.737656],
                               rtol=1e-5)


def test_transposed_convolutions_and_batch_norm():
    init_fun, apply_fun = stax.serial(
        stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME"), stax.BatchNorm(),
        stax.Gelu, stax.Identity)
    out_shape, params = init_fun(jax.random.PRNGKey(2), IMAGES.shape)
    assert out_shape == (2, 12, 12, 2)
    out = apply_fun(params, IMAGES)
    np.testing.assert_allclose(out.sum(axis=(1, 2)).ravel(),
                               [17.39117, 30.70614, 61.15614, 40.77419], rtol=1e-4)
    np.testing.assert_allclose(out[0, :3, 0, 0], [0.05795801, 0.05525036, 0.03958641],
                               rtol=1e-4)

    init_fun, apply_fun = stax.Conv1DTranspose(2, (3,), strides=(2,), padding="VALID")
    out_shape, params = init_fun(jax.random.PRNGKey(3), (1, 4, 3))
    assert out_shape == (1, 9, 2)
    np.testing.assert_allclose(apply_fun(params, jnp.ones((1, 4, 3)))[0, :3].ravel(),
                               [0.2168441, 0.535127, 0.2638215, -1.00869, -0.676246,
                                -0.03839172], rtol=1e-5)


def test_fan_out_parallel_concat_and_dropout():
    init_fun, apply_fun = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity),
                                      stax.FanInConcat(), stax.Dropout(0.5))
    out_shape, params = init_fun(jax.random.PRNGKey(4), (2, 3))
    assert out_shape == (2, 6)
    out = apply_fun(params, jnp.ones((2, 3)), rng=jax.random.PRNGKey(5))
    np.testing.assert_allclose(out.ravel(), [-1.07191, 0, 0, 0, 0, 2, 0, 0, 0.5651764, 2, 0, 2],
                               rtol=1e-5)
    with pytest.raises(ValueError, match="PRNG key"):
        apply_fun(params, jnp.ones((2, 3)))
    _, test_mode = stax.Dropout(0.5, mode="test")
    assert test_mode((), jnp.ones(3), rng=jax.random.PRNGKey(0)).tolist() == [1., 1., 1.]


def test_fan_in_sum_of_elementwise_layers():
    init_fun, apply_fun = stax.serial(
        stax.FanOut(3), stax.parallel(stax.Sigmoid, stax.Softplus, stax.Elu), stax.FanInSum,
        stax.Softmax)
    out_shape, params = init_fun(jax.random.PRNGKey(4), (2, 3))
    assert out_shape == (2, 3)
    out = apply_fun(params, jnp.array([[0.5, -1., 2.], [0., 1., -3.]]))
    np.testing.assert_allclose(out.ravel(), [0.0512938, 0.005996142, 0.94271, 0.1333981,
                                             0.8493834, 0.01721861], rtol=1e-5)


def test_pooling_with_a_channels_first_spec_and_shape_dependent():
    init_fun, apply_fun = stax.SumPool((2, 2), strides=(1, 2), spec="NCHW")
    out_shape, _ = init_fun(None, (1, 1, 3, 4))
    assert out_shape == (1, 1, 2, 2)
    x = jnp.arange(12.).reshape(1, 1, 3, 4)
    assert apply_fun((), x).ravel().tolist() == [10., 18., 26., 34.]
    _, avg = stax.AvgPool((2, 2), padding="SAME", spec="NCHW")
    # windows are averaged over their in-bounds elements only
    assert avg((), x)[0, 0, -1].tolist() == [8.5, 9.5, 10.5, 11.]

    layer = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2))
    out_shape, params = layer[0](jax.random.PRNGKey(0), (3, 5))
    assert out_shape == (3, 10) and layer[1](params, jnp.ones((3, 5))).shape == (3, 10)
