"""jax.scipy.spatial.transform (Rotation, Slerp) against values observed from JAX 0.10.2."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.scipy.spatial.transform import Rotation, Slerp

QUATS = jnp.array([[0.1, -0.2, 0.3, -0.9], [0.5, 0.5, -0.5, 0.5]])


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-5, atol=1e-6)


def test_euler_matrix_rotvec_and_composition():
    r = Rotation.from_euler("z", 90, degrees=True)
    close(r.as_rotvec(), [0., 0., 1.5707964])
    close(r.as_matrix(), [[0., -1., 0.], [1., 0., 0.], [0., 0., 1.]])
    close((r * Rotation.from_euler("x", 90, degrees=True)).as_matrix(),
          [[0., 0., 1.], [1., 0., 0.], [0., 1., 0.]])


def test_conversions_of_a_stack():
    rot = Rotation.from_quat(QUATS)
    assert len(rot) == 2 and not rot.single and rot[0].single
    close(rot.as_quat(canonical=True, scalar_first=True),
          [[0.92338, -0.102598, 0.205196, -0.307793], [0.5, 0.5, 0.5, -0.5]])
    close(rot.as_mrp(), [[-0.053342, 0.106685, -0.160027], [0.333333, 0.333333, -0.333333]])
    close(rot.magnitude(), [0.788002, 2.094395])
    close(rot.as_euler("XYZ"), [[-0.070471, 0.457944, -0.627071], [1.570796, 0., -1.570796]])
    close(rot.as_euler("zxz", degrees=True),
          [[-135.00002, 26.525354, 98.130104], [-90., 90., 0.]])
    close(rot.inv().as_rotvec(degrees=True),
          [[12.066629, -24.133259, 36.199886], [-69.28203, -69.28203, 69.28203]])
    close(rot.apply(jnp.array([1., 2., 3.])),
          [[3.105263, 1.157895, 1.736842], [2., -3., -1.]])
    close(rot.apply(jnp.array([1., 2., 3.]), inverse=True),
          [[-1.442105, 1.157895, 3.252631], [-3., 1., -2.]])
    close(rot.mean(jnp.array([1., 3.])).as_quat(), [-0.39667, -0.464778, 0.487481, -0.623696])
    close(Rotation.from_matrix(rot.as_matrix()).as_quat(),
          [[-0.102598, 0.205196, -0.307793, 0.923381], [0.5, 0.5, -0.5, 0.5]])
    close(Rotation.from_mrp(rot.as_mrp()).as_quat(),
          [[-0.102598, 0.205196, -0.307793, 0.923381], [0.5, 0.5, -0.5, 0.5]])
    close(Rotation.from_rotvec(jnp.array([1e-4, 0, 0])).as_quat(), [5e-05, 0., 0., 1.])
    assert Rotation.concatenate([rot, rot[:1]]).quat.shape == (3, 4)
    assert jax.jit(lambda r: r.as_matrix())(rot).shape == (2, 3, 3)


def test_slerp():
    keys = Rotation.from_euler("zxy", jnp.array([[90, 0, 0], [0, 45, 0], [0, 0, -30]]),
                               degrees=True)
    slerp = Slerp.init([0, 1, 2], keys)
    close(slerp([0, 0.5, 1, 1.5, 2]).as_euler("zxy"),
          [[1.5707963, 0., 0.], [0.8530903, 0.3871195, 0.1776865], [0., 0.7853982, 0.],
           [-0.05666804, 0.39213133, -0.2834754], [0., 0., -0.5235989]])
    close(slerp(0.25).as_quat(), [0.107699, 0., 0.560865, 0.820873])


@pytest.mark.parametrize("call, error, message", [
    (lambda: Rotation.from_euler("xyzx", [1, 2, 3, 4]), ValueError,
     "non-empty string of upto 3 characters, got xyzx"),
    (lambda: Rotation.from_euler("xY", [1, 2]), ValueError, "got xY"),
    (lambda: Rotation.from_euler("xx", [1, 2]), ValueError,
     "Expected consecutive axes to be different, got xx"),
    (lambda: Rotation.from_quat(QUATS).as_euler("xy"), ValueError, "Expected 3 axes, got xy."),
    (lambda: Rotation.identity()[0], TypeError, "Single rotation is not subscriptable."),
    (lambda: len(Rotation.identity()), TypeError, "Single rotation has no len()."),
    (lambda: Rotation.from_quat(QUATS).mean(jnp.ones(3)), ValueError,
     "got 3 values and 2 rotations."),
    (lambda: Slerp.init([0, 1], Rotation.identity()), ValueError,
     "`rotations` must be a sequence of at least 2 rotations."),
    (lambda: Slerp.init([0, 1], QUATS), TypeError, "`rotations` must be a `Rotation` instance."),
    (lambda: Slerp.init([0, 1, 2], Rotation.from_quat(QUATS)), ValueError,
     "got 2 rotations and 3 timestamps."),
])
def test_bad_input(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)
