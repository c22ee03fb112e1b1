"""Public jax.experimental.sparse.transform: the sparsify transform, its environment and
values, and its sparse rules. Re-exports only."""
from pyjax._src.sparse.transform import (  # noqa: F401
    SparseTrace, SparseTracer, SparsifyEnv, SparsifyValue, arrays_to_spvalues, eval_sparse,
    sparse_rules_bcoo, sparse_rules_bcsr, sparsify, sparsify_raw, spvalues_to_arrays,
    spvalues_to_avals,
)
