"""Public jax.experimental.ode. Re-exports only; the code lives in pyjax._src.ode."""
from pyjax._src.ode import odeint  # noqa: F401
