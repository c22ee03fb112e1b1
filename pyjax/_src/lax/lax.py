"""Imports the primitive families every program needs and installs the hooks that let lower
layers (autodiff) build zeros, sums and broadcasts without importing lax. The rarer families
load when first used (tests/harness.py imports every module, to enumerate them all)."""
from __future__ import annotations

from pyjax._src.interpreters.lax_hooks import lax_hooks
from pyjax._src.lax import call, dot, elementwise, reductions, slicing, structural  # noqa: F401
from pyjax._src.lax import ad_util, control_flow, indexing  # noqa: F401
from pyjax._src.lax import parallel  # noqa: F401
from pyjax._src.lax import callbacks, precision_ops, sorting  # noqa: F401
from pyjax._src.lax.control_flow import solves  # noqa: F401

lax_hooks.zeros_like_aval = structural.zeros_like_aval
lax_hooks.add_tangents = elementwise.add_any_p.bind
lax_hooks.broadcast_to = structural.broadcast_to_shape
lax_hooks.dim_as_value = structural.dim_as_value
