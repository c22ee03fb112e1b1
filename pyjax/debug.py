"""Public jax.debug: run-time printing and callbacks from inside transformed code, and
explain (a jaxpr table with shapes and source lines; pyjax only).
Re-exports only; the code lives in pyjax._src.debug."""
from pyjax._src.api.debugger import breakpoint  # noqa: F401
from pyjax._src.debug import DebugEffect, OrderedDebugEffect, callback, log, print  # noqa: F401
from pyjax._src.api.explain import explain  # noqa: F401
from pyjax._src.debug import (  # noqa: F401
    inspect_array_sharding, visualize_array_sharding, visualize_sharding)
