"""Public jax.experimental.sparse.bcsr: the BCSR array and its primitives. Re-exports
only."""
from pyjax._src.sparse.bcsr import (  # noqa: F401
    BCSR, BCSRProperties, _bcoo_to_bcsr, _bcsr_dot_general, _bcsr_fromdense, _bcsr_to_bcoo,
    _bcsr_todense, bcsr_broadcast_in_dim, bcsr_concatenate, bcsr_dot_general,
    bcsr_dot_general_p, bcsr_eliminate_zeros, bcsr_extract, bcsr_extract_p, bcsr_fromdense,
    bcsr_fromdense_p, bcsr_sum_duplicates, bcsr_todense, bcsr_todense_p,
)
