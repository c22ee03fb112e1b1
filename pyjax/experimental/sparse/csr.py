"""Public jax.experimental.sparse.csr: the CSR and CSC matrices and their primitives
(with the private entry points JAX's tests call). Re-exports only."""
from pyjax._src.sparse.csr import (  # noqa: F401
    CSC, CSR, _csr_fromdense, _csr_matmat, _csr_matvec, _csr_todense, csr_fromdense,
    csr_fromdense_p, csr_matmat, csr_matmat_p, csr_matvec, csr_matvec_p, csr_todense,
    csr_todense_p,
)
