"""Public jax.scipy.integrate. Re-exports only; trapezoid is jax.numpy's."""
from pyjax._src.numpy.numerical import trapezoid  # noqa: F401
