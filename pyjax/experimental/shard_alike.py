"""Public jax.experimental.shard_alike. Re-exports only."""
from pyjax._src.lax.sharding_constraint import shard_alike  # noqa: F401
