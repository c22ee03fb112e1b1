"""Public jax.experimental.jet: Taylor-mode automatic differentiation. Re-exports only;
the code lives in pyjax._src.api.jet and pyjax._src.interpreters.jet."""
from pyjax._src.api.jet import fact, jet, jet2  # noqa: F401
from pyjax._src.interpreters.jet import (  # noqa: F401
    JetTrace, JetTracer, ZeroSeries, ZeroTerm, zero_series, zero_term)
