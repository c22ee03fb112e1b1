"""Public jax.experimental.sparse.test_util (needs absl-py, as JAX's). Re-exports only."""
from pyjax._src.sparse.test_util import (  # noqa: F401
    MATMUL_TOL, BatchedDotGeneralProperties, SparseLayout, SparseTestCase, is_sparse,
    iter_bcsr_layouts, iter_sparse_layouts, iter_subsets, rand_bcoo, rand_bcsr, rand_sparse,
)
