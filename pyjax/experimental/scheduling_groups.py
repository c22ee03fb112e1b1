"""Public jax.experimental.scheduling_groups: xla_metadata_call, scheduling_group.
Re-exports only."""
from pyjax._src.lax.xla_metadata import scheduling_group, xla_metadata_call  # noqa: F401
