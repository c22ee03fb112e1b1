"""Several processes as one JAX program: jax.distributed.initialize joins this process
to the others through jaxlib's distributed runtime (a coordination service run by process
0, a client in each), after which XLA's CPU client spans every process's devices and
runs collectives between processes with Gloo over TCP. All jaxlib calls go through the
XLA adapter. Imports backends.devices."""
from __future__ import annotations

import os

from pyjax._src.backends import devices as devices_mod


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, *, initialization_timeout=300,
               heartbeat_timeout_seconds=100, shutdown_timeout_seconds=300,
               coordinator_bind_address=None, cluster_detection_method=None,
               partition_index=None, slice_index=None):
    """Joins this process, number `process_id` of `num_processes`, to the group whose
    coordinator (process 0) listens at `coordinator_address` ('host:port'). Must come
    before any computation. Values left out are read from JAX_COORDINATOR_ADDRESS,
    JAX_NUM_PROCESSES and JAX_PROCESS_ID."""
    coordinator_address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS")
    if num_processes is None and "JAX_NUM_PROCESSES" in os.environ:
        num_processes = int(os.environ["JAX_NUM_PROCESSES"])
    if process_id is None and "JAX_PROCESS_ID" in os.environ:
        process_id = int(os.environ["JAX_PROCESS_ID"])
    if coordinator_address is None or num_processes is None or process_id is None:
        raise ValueError(
            "jax.distributed.initialize needs coordinator_address ('host:port' of "
            "process 0), num_processes and process_id (no cluster was detected; pass "
            "them, or set JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES and JAX_PROCESS_ID).")
    if not 0 <= int(process_id) < int(num_processes):
        raise ValueError(f"jax.distributed.initialize: process_id {process_id} must be in "
                         f"[0, num_processes={num_processes}).")
    if local_device_ids is not None:
        raise NotImplementedError(
            "jax.distributed.initialize: local_device_ids selects among a host's "
            "accelerators; CPU processes get their devices from jax_num_cpu_devices "
            "(or --xla_force_host_platform_device_count).")
    xla = devices_mod.xla_runtime()
    if xla is None:
        raise RuntimeError("jax.distributed.initialize needs the XLA executor (jaxlib); "
                           "the NumPy executor runs in one process.")
    bind = coordinator_bind_address if int(process_id) == 0 and coordinator_bind_address \
        else coordinator_address
    xla.initialize_distributed(bind if int(process_id) == 0 else coordinator_address,
                               int(num_processes), int(process_id),
                               int(initialization_timeout), int(heartbeat_timeout_seconds),
                               int(shutdown_timeout_seconds))


def shutdown():
    """Leaves the group; a later initialize may join another."""
    xla = devices_mod.xla_runtime()
    if xla is not None:
        xla.shutdown_distributed()


def is_initialized():
    xla = devices_mod.xla_runtime()
    return xla is not None and xla.distributed_initialized()
