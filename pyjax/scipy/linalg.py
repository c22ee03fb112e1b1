"""Public jax.scipy.linalg. Re-exports only; the code lives in pyjax._src.scipy.linalg
(factorisations, solvers, special matrices) and linalg_functions (matrix functions)."""
from pyjax._src.scipy.linalg import (  # noqa: F401
    block_diag, cho_factor, cho_solve, cholesky, circulant, companion, convolution_matrix,
    det, dft, eigh, fiedler, fiedler_companion, hadamard, hankel, helmert, hilbert, inv,
    invhilbert, invpascal, leslie, lu, lu_factor, lu_solve, pascal, qr, qr_multiply, solve,
    solve_triangular, svd, toeplitz,
)
from pyjax._src.scipy.linalg_functions import (  # noqa: F401
    eigh_tridiagonal, expm, expm_frechet, funm, hessenberg, polar, rsf2csf, schur,
    solve_sylvester, sqrtm,
)
