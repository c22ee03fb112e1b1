"""Public jax.experimental.sparse.util: sparse warnings and errors, SparseInfo and the
shared index helpers. Re-exports only."""
from pyjax._src.sparse.util import (  # noqa: F401
    CuSparseEfficiencyWarning, SparseEfficiencyError, SparseEfficiencyWarning, SparseInfo,
    _count_stored_elements, _count_stored_elements_per_batch, _csr_to_coo, nfold_vmap,
)
