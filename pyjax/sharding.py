"""jax.sharding: meshes, partition specs and shardings."""
from pyjax._src.sharding import (  # noqa: F401
    AxisType, Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding, get_mesh,
    make_single_device_sharding, set_mesh)
