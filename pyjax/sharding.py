"""jax.sharding: meshes, partition specs and shardings."""
from pyjax._src.lax.sharding_constraint import auto_axes, explicit_axes, reshard  # noqa: F401
from pyjax._src.sharding import (  # noqa: F401
    AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec, Sharding,
    SingleDeviceSharding, get_abstract_mesh, get_mesh, make_single_device_sharding, set_mesh,
    use_abstract_mesh)
from pyjax._src.core.avals import ManualAxisType  # noqa: F401
