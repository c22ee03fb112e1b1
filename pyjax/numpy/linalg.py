"""Public jax.numpy.linalg. Re-exports only."""
from pyjax._src.numpy.linalg import (  # noqa: F401
    cholesky, cond, cross, det,
    diagonal, eig, eigh, eigvals, eigvalsh, inv, lstsq, matmul, matrix_norm, matrix_power,
    matrix_rank, matrix_transpose, multi_dot, norm, outer, pinv, qr, slogdet, solve, svd,
    svdvals, tensordot, tensorinv, tensorsolve, trace, vecdot, vector_norm,
)
