"""jax.sharding: meshes, partition specs and shardings."""
from pyjax._src.sharding import (  # noqa: F401
    AxisType, Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding, get_mesh,
    set_mesh)
