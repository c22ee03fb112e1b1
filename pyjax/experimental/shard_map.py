"""jax.experimental.shard_map: shard_map(f, mesh, in_specs, out_specs, check_rep=True)."""
from pyjax._src.api.shard_map import experimental_shard_map as shard_map  # noqa: F401
