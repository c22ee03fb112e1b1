"""Public jax.experimental.sparse.coo: the COO matrix and its primitives (with the
private entry points JAX's tests call). Re-exports only."""
from pyjax._src.sparse.coo import (  # noqa: F401
    COO, COOInfo, _coo_fromdense, _coo_matmat, _coo_matvec, _coo_todense, coo_fromdense,
    coo_fromdense_p, coo_matmat, coo_matmat_p, coo_matvec, coo_matvec_p, coo_todense,
    coo_todense_p,
)
