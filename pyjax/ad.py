"""Public `jax.ad`: the markers for a vjp pullback's `with_refs` (which cotangents to
return, skip, or accumulate into a Ref). Re-exports only."""
from pyjax._src.api.autodiff import DidntWant, DontWant, GradRef, GradValue  # noqa: F401
