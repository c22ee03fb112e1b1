"""Public jax.experimental.sparse._base: the JAXSparse base class. Re-exports only."""
from pyjax._src.sparse.base import JAXSparse  # noqa: F401
