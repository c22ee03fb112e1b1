"""Public jax.scipy.spatial.transform. Re-exports only; the code lives in
pyjax._src.scipy.spatial_transform."""
from pyjax._src.scipy.spatial_transform import Rotation, Slerp  # noqa: F401
