"""The lax functions the transformations need (to build zeros, sums and broadcasts),
installed by lax at import (pyjax/_src/lax/lax.py), so that this layer never imports
lax."""
from __future__ import annotations


class _LaxHooks:
    zeros_like_aval = None     # aval -> array of zeros (traced if under a trace)
    add_tangents = None        # (a, b) -> a + b for tangent values (add_any)
    broadcast_to = None        # (x, shape) -> x broadcast to shape (lax broadcasting)
    dim_as_value = None        # symbolic dimension -> its size as a traced integer


lax_hooks = _LaxHooks()
