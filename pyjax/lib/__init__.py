"""Public jax.lib: the version of jaxlib, the XLA runtime under pyjax (libraries read
`jax.lib.__version__`)."""
from pyjax._src.backends.xla import JAXLIB_VERSION as __version__  # noqa: F401
