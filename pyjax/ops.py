"""Public jax.ops: segment reductions. Re-exports only; the code lives in pyjax._src.ops."""
from pyjax._src.ops import segment_max, segment_min, segment_prod, segment_sum  # noqa: F401
