"""Public jax.ref: mutable array references (jax.Ref) and the functions that read and
write them. Re-exports only."""
from pyjax._src.core.avals import AbstractRef  # noqa: F401
from pyjax._src.state.refs import (  # noqa: F401
    Ref, addupdate, empty_ref, free_ref, freeze, get, new_ref, set, swap)

__all__ = ["AbstractRef", "Ref", "addupdate", "free_ref", "freeze", "get", "new_ref",
           "empty_ref", "set", "swap"]
