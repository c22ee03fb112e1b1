"""Imports every primitive family and installs the hooks that let lower layers
(autodiff) build zeros, sums and broadcasts without importing lax."""
from __future__ import annotations

from pyjax._src.interpreters import ad
from pyjax._src.lax import call, dot, elementwise, reductions, slicing, structural  # noqa: F401
from pyjax._src.lax import ad_util, control_flow, indexing  # noqa: F401
from pyjax._src.lax import parallel  # noqa: F401
from pyjax._src.lax import callbacks, random_bits, random_gamma, sorting, special  # noqa: F401
from pyjax._src.lax import convolution, windowed_reductions  # noqa: F401
from pyjax._src.lax import fft, linalg, linalg_spectral  # noqa: F401
from pyjax._src.lax import conv_helpers, elementwise_more, parallel_more, program  # noqa: F401
from pyjax._src.lax import structural_more  # noqa: F401
from pyjax._src.lax.control_flow import solves  # noqa: F401

ad.lax_hooks.zeros_like_aval = structural.zeros_like_aval
ad.lax_hooks.add_tangents = elementwise.add_any_p.bind
ad.lax_hooks.broadcast_to = structural.broadcast_to_shape
