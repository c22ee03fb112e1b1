"""jax.experimental.multihost_utils: values across the processes of jax.distributed."""
from pyjax._src.api.multihost import (  # noqa: F401
    broadcast_one_to_all, global_array_to_host_local_array,
    host_local_array_to_global_array, process_allgather, sync_global_devices)
