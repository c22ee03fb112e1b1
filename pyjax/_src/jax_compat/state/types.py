"""jax._src.state.types: the abstract type of mutable array references."""
from pyjax._src.state.refs import AbstractRef  # noqa: F401
