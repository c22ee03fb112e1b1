"""Public jax.scipy.optimize. Re-exports only; the code lives in
pyjax._src.scipy.optimize."""
from pyjax._src.scipy.optimize import OptimizeResults, minimize  # noqa: F401
