"""jax.export: serializing jitted functions as StableHLO with their calling convention
(exported.py), in pyjax's byte format (serialization.py)."""
