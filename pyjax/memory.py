"""Public `jax.memory`: `Space`, the memory spaces an array can live in. Re-exports only."""
from pyjax._src.core.avals import MemorySpace as Space  # noqa: F401
