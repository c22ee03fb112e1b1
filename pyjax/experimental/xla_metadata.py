"""Public jax.experimental.xla_metadata: set_xla_metadata. Re-exports only."""
from pyjax._src.lax.xla_metadata import set_xla_metadata  # noqa: F401
