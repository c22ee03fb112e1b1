"""jax.experimental.multihost_utils: values across the processes of jax.distributed."""
from pyjax._src.api.multihost import (  # noqa: F401
    broadcast_one_to_all, process_allgather, sync_global_devices)
