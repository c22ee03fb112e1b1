"""Public jax.lax.linalg: linear-algebra primitives and their wrappers. Re-exports only."""
from pyjax._src.lax.linalg import (  # noqa: F401
    cholesky, cholesky_p, cholesky_update, cholesky_update_p, householder_product, lu, lu_p,
    lu_pivots_to_permutation, qr, qr_p, symmetric_product, triangular_solve, triangular_solve_p,
    tridiagonal_solve,
)
from pyjax._src.lax.linalg_spectral import (  # noqa: F401
    EigImplementation, EighImplementation, SvdAlgorithm, eig, eig_p, eigh, eigh_p, svd, svd_p,
)
from pyjax._src.lax.linalg_condensed import tridiagonal, tridiagonal_p  # noqa: F401
from pyjax._src.lax.linalg_schur import schur, schur_p  # noqa: F401
