"""Public jax.experimental.layout: Layout and Format. Re-exports only."""
from pyjax._src.layout import Format, Layout  # noqa: F401
