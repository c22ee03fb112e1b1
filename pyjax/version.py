"""Public jax.version: pyjax's version and how it is computed. It is the module
pyjax._src.version itself (not a copy of its names), so that its functions read the
values a caller sets on it, as JAX's jax.version does."""
import sys

from pyjax._src import version

sys.modules[__name__] = version
