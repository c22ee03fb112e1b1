"""Public jax.experimental.sparse: the BCOO and BCSR arrays and the older COO, CSR and CSC
matrices,
their primitives, `todense`, `empty`, `eye`, and LOBPCG (`linalg`). Re-exports only."""
from pyjax._src.sparse.ad import grad, jacfwd, jacobian, jacrev, value_and_grad  # noqa: F401
from pyjax._src.sparse.api import empty, eye, todense, todense_p  # noqa: F401
from pyjax._src.sparse.base import JAXSparse  # noqa: F401
from pyjax._src.sparse.bcoo import (  # noqa: F401
    BCOO, bcoo_dot_general, bcoo_dot_general_p, bcoo_dot_general_sampled,
    bcoo_dot_general_sampled_p, bcoo_extract, bcoo_extract_p, bcoo_fromdense, bcoo_fromdense_p,
    bcoo_sort_indices, bcoo_sort_indices_p, bcoo_spdot_general_p, bcoo_sum_duplicates,
    bcoo_sum_duplicates_p,
    bcoo_todense, bcoo_todense_p, bcoo_transpose, bcoo_transpose_p, bcoo_update_layout,
)
from pyjax._src.sparse.bcoo_structural import (  # noqa: F401
    bcoo_broadcast_in_dim, bcoo_concatenate, bcoo_conv_general_dilated, bcoo_dynamic_slice,
    bcoo_gather,    bcoo_multiply_dense,
    bcoo_multiply_sparse, bcoo_reduce_sum, bcoo_reshape, bcoo_rev, bcoo_slice, bcoo_squeeze,
)
from pyjax._src.sparse.bcsr import (  # noqa: F401
    BCSR, bcsr_broadcast_in_dim, bcsr_concatenate, bcsr_dot_general, bcsr_dot_general_p,
    bcsr_extract, bcsr_extract_p, bcsr_fromdense, bcsr_fromdense_p, bcsr_sum_duplicates,
    bcsr_todense, bcsr_todense_p,
)
from pyjax._src.sparse.coo import (  # noqa: F401
    COO, coo_fromdense, coo_fromdense_p, coo_matmat, coo_matmat_p, coo_matvec, coo_matvec_p,
    coo_todense, coo_todense_p,
)
from pyjax._src.sparse.csr import (  # noqa: F401
    CSC, CSR, csr_fromdense, csr_fromdense_p, csr_matmat, csr_matmat_p, csr_matvec,
    csr_matvec_p, csr_todense, csr_todense_p,
)
from pyjax._src.sparse.random import random_bcoo  # noqa: F401
from pyjax._src.sparse.transform import SparseTracer, sparsify  # noqa: F401
from pyjax._src.sparse.util import (  # noqa: F401
    CuSparseEfficiencyWarning, SparseEfficiencyError, SparseEfficiencyWarning,
)
from pyjax.experimental.sparse import (  # noqa: F401
    _base, _lowerings, ad, api, bcoo, bcsr, coo, csr, linalg, random, transform, util,
)  # noqa: F401
