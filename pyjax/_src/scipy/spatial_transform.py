"""jax.scipy.spatial.transform: Rotation (3-d rotations stored as scalar-last unit
quaternions, one or a stack) and Slerp (spherical linear interpolation between key
rotations), as SciPy's, written with jnp.vectorize so every conversion maps over stacks."""
from __future__ import annotations

import functools
import re
import typing

import numpy as np

from pyjax._src import config
from pyjax._src.numpy import array_manipulation as more
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import linalg as np_linalg
from pyjax._src.numpy import numerical
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import sorting
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.functional import vectorize

Array = typing.Any


def _check_euler_seq(seq: str) -> bool:
    """Validates a sequence of Euler axes; True when it is intrinsic (upper case)."""
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return intrinsic


def _axis_indices(seq: str):
    return lnp.array(["xyz".index(axis) for axis in seq.lower()])


class Rotation(typing.NamedTuple):
    """Rotation in 3 dimensions, as :class:`scipy.spatial.transform.Rotation`: ``quat``
    holds one scalar-last unit quaternion (shape ``(4,)``, a single rotation) or a
    stack of them (shape ``(N, 4)``)."""
    quat: Array

    @classmethod
    def concatenate(cls, rotations: typing.Sequence):
        """Concatenate a sequence of `Rotation` objects."""
        return cls(lnp.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Array, degrees: bool = False):
        """Initialize from Euler angles (intrinsic axes in upper case, extrinsic in lower)."""
        if not 1 <= len(seq) <= 3:
            raise ValueError("Expected axis specification to be a non-empty string of upto "
                             f"3 characters, got {seq}")
        intrinsic = _check_euler_seq(seq)
        return cls(_elementary_quat_compose(lnp.atleast_1d(angles), _axis_indices(seq),
                                            intrinsic, degrees))

    @classmethod
    def from_matrix(cls, matrix: Array):
        """Initialize from rotation matrix."""
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: Array):
        """Initialize from Modified Rodrigues Parameters (MRPs)."""
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat: Array):
        """Initialize from quaternions (normalised)."""
        return cls(_normalize_quaternion(quat))

    @classmethod
    def from_rotvec(cls, rotvec: Array, degrees: bool = False):
        """Initialize from rotation vectors."""
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float):
        """Get the identity rotation (a single one: JAX takes no ``num``)."""
        if num is not None:
            raise NotImplementedError("Rotation.identity makes a single rotation; num must "
                                      f"be None, got {num}")
        return cls(lnp.array([0., 0., 0., 1.], dtype=dtype))

    @classmethod
    def random(cls, random_key: Array, num: int | None = None):
        """Uniformly distributed rotations: not implemented, as in JAX (it needs
        scipy.stats.special_ortho_group)."""
        raise NotImplementedError("Rotation.random is not implemented")

    def __getitem__(self, indexer):
        """Extract rotation(s) at given index(es) from object."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        """Number of rotations contained in this object."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other) -> Rotation:
        """Compose this rotation with the other."""
        return Rotation.from_quat(_compose_quat(self.quat, other.quat))

    def apply(self, vectors: Array, inverse: bool = False) -> Array:
        """Apply this rotation to one or more vectors."""
        return _apply(self.as_matrix(), vectors, inverse)

    def as_euler(self, seq: str, degrees: bool = False):
        """Represent as Euler angles."""
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        extrinsic = not _check_euler_seq(seq)
        with config.numpy_rank_promotion("allow"):
            return _compute_euler_from_quat(self.quat, _axis_indices(seq), extrinsic, degrees)

    def as_matrix(self) -> Array:
        """Represent as rotation matrix."""
        return _as_matrix(self.quat)

    def as_mrp(self) -> Array:
        """Represent as Modified Rodrigues Parameters (MRPs)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Array:
        """Represent as rotation vectors."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Array:
        """Represent as quaternions (canonical: with w >= 0, ties broken by x, y, z)."""
        quat = _make_canonical(self.quat) if canonical else self.quat
        return more.roll(quat, shift=1, axis=-1) if scalar_first else quat

    def inv(self):
        """Invert this rotation."""
        return Rotation(_inv(self.quat))

    def magnitude(self) -> Array:
        """Get the magnitude(s) of the rotation(s)."""
        return _magnitude(self.quat)

    def mean(self, weights: Array | None = None):
        """Get the (weighted) mean of the rotations."""
        dtype = self.quat.dtype
        w = (lnp.ones(self.quat.shape[0], dtype=dtype) if weights is None
             else lnp.asarray(weights, dtype=dtype))
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number "
                             f"of rotations, got {w.shape[0]} values and {len(self)} "
                             "rotations.")
        k = lnp.dot(w[np.newaxis, :] * self.quat.T, self.quat)
        _, v = np_linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this instance represents a single rotation."""
        return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical Linear Interpolation of Rotations, as
    :class:`scipy.spatial.transform.Slerp`; made with ``Slerp.init(times, rotations)``."""
    times: Array
    timedelta: Array
    rotations: Rotation
    rotvecs: Array

    @classmethod
    def init(cls, times: Array, rotations: Rotation):
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = lnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError("Expected times to be specified in a 1 dimensional array, got "
                             f"{times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        starts = Rotation(rotations.as_quat()[:-1])
        return cls(times=times, timedelta=numerical.diff(times), rotations=starts,
                   rotvecs=(starts.inv() * Rotation(rotations.as_quat()[1:])).as_rotvec())

    def __call__(self, times: Array):
        """Interpolate rotations."""
        compute_times = lnp.asarray(times, dtype=self.times.dtype)
        if compute_times.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single_time = compute_times.ndim == 0
        compute_times = lnp.atleast_1d(compute_times)
        ind = uf.maximum(sorting.searchsorted(self.times, compute_times) - 1, 0)
        alpha = (compute_times - self.times[ind]) / self.timedelta[ind]
        result = (self.rotations[ind]
                  * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None]))
        return result[0] if single_time else result


@functools.partial(vectorize, signature="(m,m),(m),()->(m)")
def _apply(matrix, vector, inverse):
    return lnp.where(inverse, matrix.T, matrix) @ vector


@functools.partial(vectorize, signature="(m)->(n,n)")
def _as_matrix(quat):
    x, y, z, w = quat[0], quat[1], quat[2], quat[3]
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    return lnp.array([[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
                      [2 * (xy + zw), - x2 + y2 - z2 + w2, 2 * (yz - xw)],
                      [2 * (xz - yw), 2 * (yz + xw), - x2 - y2 + z2 + w2]])


@functools.partial(vectorize, signature="(m)->(n)")
def _as_mrp(quat):
    sign = lnp.where(quat[3] < 0, -1., 1.)
    return sign * quat[:3] / (1. + sign * quat[3])


@functools.partial(vectorize, signature="(m),()->(n)")
def _as_rotvec(quat, degrees):
    quat = lnp.where(quat[3] < 0, -quat, quat)  # w > 0, so that 0 <= angle <= pi
    angle = 2. * uf.arctan2(_vector_norm(quat[:3]), quat[3])
    angle2 = angle * angle
    small_scale = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    scale = lnp.where(angle <= 1e-3, small_scale, angle / uf.sin(angle / 2))
    scale = lnp.where(degrees, uf.rad2deg(scale), scale)
    return scale * quat[:3]


@functools.partial(vectorize, signature="(n),(n)->(n)")
def _compose_quat(p, q):
    cross = numerical.cross(p[:3], q[:3])
    return lnp.array([p[3] * q[0] + q[3] * p[0] + cross[0],
                      p[3] * q[1] + q[3] * p[1] + cross[1],
                      p[3] * q[2] + q[3] * p[2] + cross[2],
                      p[3] * q[3] - p[0] * q[0] - p[1] * q[1] - p[2] * q[2]])


@functools.partial(vectorize, signature="(m),(l),(),()->(n)")
def _compute_euler_from_quat(quat, axes, extrinsic, degrees):
    """SciPy's quaternion-to-Euler algorithm (Bernardes and Viollet, 2022), with every
    branch taken by `where` so that it traces once."""
    angle_first = lnp.where(extrinsic, 0, 2)
    angle_third = lnp.where(extrinsic, 2, 0)
    axes = lnp.where(extrinsic, axes, axes[::-1])
    i, j, k = axes[0], axes[1], axes[2]
    symmetric = i == k
    k = lnp.where(symmetric, 3 - i - j, k)
    sign = lnp.array((i - j) * (j - k) * (k - i) // 2, dtype=quat.dtype)
    eps = 1e-7
    a = lnp.where(symmetric, quat[3], quat[3] - quat[j])
    b = lnp.where(symmetric, quat[i], quat[i] + quat[k] * sign)
    c = lnp.where(symmetric, quat[j], quat[j] + quat[3])
    d = lnp.where(symmetric, quat[k] * sign, quat[k] * sign - quat[i])
    angles = lnp.empty(3, dtype=quat.dtype)
    angles = angles.at[1].set(2 * uf.arctan2(uf.hypot(c, d), uf.hypot(a, b)))
    case = lnp.where(uf.abs(angles[1] - np.pi) <= eps, 2, 0)
    case = lnp.where(uf.abs(angles[1]) <= eps, 1, case)
    half_sum = uf.arctan2(b, a)
    half_diff = uf.arctan2(d, c)
    # In a degenerate case (case 1 or 2) the first angle takes the whole rotation.
    angles = angles.at[0].set(lnp.where(case == 1, 2 * half_sum,
                                        2 * half_diff * lnp.where(extrinsic, -1, 1)))
    angles = angles.at[angle_first].set(
        lnp.where(case == 0, half_sum - half_diff, angles[angle_first]))
    angles = angles.at[angle_third].set(
        lnp.where(case == 0, half_sum + half_diff, angles[angle_third]))
    angles = angles.at[angle_third].set(
        lnp.where(symmetric, angles[angle_third], angles[angle_third] * sign))
    angles = angles.at[1].set(lnp.where(symmetric, angles[1], angles[1] - np.pi / 2))
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return lnp.where(degrees, uf.rad2deg(angles), angles)


@functools.partial(vectorize, signature="(m),(m),(),()->(n)")
def _elementary_quat_compose(angles, axes, intrinsic, degrees):
    angles = lnp.where(degrees, uf.deg2rad(angles), angles)
    result = _make_elementary_quat(axes[0], angles[0])
    for idx in range(1, len(axes)):
        quat = _make_elementary_quat(axes[idx], angles[idx])
        result = lnp.where(intrinsic, _compose_quat(result, quat), _compose_quat(quat, result))
    return result


@functools.partial(vectorize, signature="(m),()->(n)")
def _from_rotvec(rotvec, degrees):
    rotvec = lnp.where(degrees, uf.deg2rad(rotvec), rotvec)
    angle = _vector_norm(rotvec)
    angle2 = angle * angle
    small_scale = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    scale = lnp.where(angle <= 1e-3, small_scale, uf.sin(angle / 2) / angle)
    return lnp.hstack([scale * rotvec, uf.cos(angle / 2)])


@functools.partial(vectorize, signature="(m,m)->(n)")
def _from_matrix(matrix):
    """Shepperd's method: build the quaternion from the largest of the diagonal entries
    and the trace, for accuracy."""
    trace = matrix[0, 0] + matrix[1, 1] + matrix[2, 2]
    decision = lnp.array([matrix[0, 0], matrix[1, 1], matrix[2, 2], trace],
                         dtype=matrix.dtype)
    choice = red.argmax(decision)
    i = choice
    j = (i + 1) % 3
    k = (j + 1) % 3
    quat_012 = lnp.empty(4, dtype=matrix.dtype)
    quat_012 = quat_012.at[i].set(1 - decision[3] + 2 * matrix[i, i])
    quat_012 = quat_012.at[j].set(matrix[j, i] + matrix[i, j])
    quat_012 = quat_012.at[k].set(matrix[k, i] + matrix[i, k])
    quat_012 = quat_012.at[3].set(matrix[k, j] - matrix[j, k])
    quat_3 = lnp.array([matrix[2, 1] - matrix[1, 2], matrix[0, 2] - matrix[2, 0],
                        matrix[1, 0] - matrix[0, 1], 1 + decision[3]], dtype=matrix.dtype)
    return _normalize_quaternion(lnp.where(choice != 3, quat_012, quat_3))


@functools.partial(vectorize, signature="(m)->(n)")
def _from_mrp(mrp):
    mrp_squared_plus_1 = lnp.dot(mrp, mrp) + 1
    return lnp.hstack([2 * mrp[:3], (2 - mrp_squared_plus_1)]) / mrp_squared_plus_1


@functools.partial(vectorize, signature="(n)->(n)")
def _inv(quat):
    return quat * lnp.array([-1, -1, -1, 1], dtype=quat.dtype)


@functools.partial(vectorize, signature="(n)->()")
def _magnitude(quat):
    return 2. * uf.arctan2(_vector_norm(quat[:3]), uf.abs(quat[3]))


@functools.partial(vectorize, signature="(),()->(n)")
def _make_elementary_quat(axis, angle):
    quat = lnp.zeros(4, dtype=angle.dtype)
    quat = quat.at[3].set(uf.cos(angle / 2.))
    return quat.at[axis].set(uf.sin(angle / 2.))


@functools.partial(vectorize, signature="(n)->(n)")
def _normalize_quaternion(quat):
    return quat / _vector_norm(quat)


@functools.partial(vectorize, signature="(n)->()")
def _vector_norm(vector):
    return uf.sqrt(lnp.dot(vector, vector))


@functools.partial(vectorize, signature="(n)->(n)")
def _make_canonical(quat):
    is_neg = quat < 0
    is_zero = quat == 0
    neg = (is_neg[3] | (is_zero[3] & is_neg[0]) | (is_zero[3] & is_zero[0] & is_neg[1])
           | (is_zero[3] & is_zero[0] & is_zero[1] & is_neg[2]))
    return lnp.where(neg, -quat, quat)
