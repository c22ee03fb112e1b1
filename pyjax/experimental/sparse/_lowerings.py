"""Public jax.experimental.sparse._lowerings: the dtypes JAX's GPU sparse lowerings
support (pyjax has no GPU lowerings). Re-exports only."""
from pyjax._src.sparse.util import SUPPORTED_DATA_DTYPES, SUPPORTED_INDEX_DTYPES  # noqa: F401
