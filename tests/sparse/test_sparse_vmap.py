"""vmap over BCOO and BCSR arrays (JAX's vmappable sparse arrays: mapped along one of
their batch dimensions, and rebuilt when a result is sparse). Expected values are JAX
0.10.2's."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental import sparse

X = (jnp.arange(24.).reshape(2, 3, 4) % 5) * (jnp.arange(24).reshape(2, 3, 4) % 3 == 0)
M = sparse.BCOO.fromdense(X, n_batch=1)
DATA = [[3.0, 1.0, 4.0], [2.0, 3.0, 1.0]]


def test_vmap_maps_a_bcoo_array_along_its_batch_dimension():
    assert np.asarray(jax.vmap(lambda m: jnp.array(m.shape))(M)).tolist() == [[3, 4]] * 2
    assert np.asarray(jax.vmap(lambda m: m.todense())(M)).tolist() == np.asarray(X).tolist()
    assert np.asarray(jax.vmap(lambda m, v: m @ v)(M, jnp.ones((2, 4)))).tolist() == DATA
    assert np.asarray(jax.vmap(lambda m, v: m @ v, (0, None))(M, jnp.ones(4))).tolist() == DATA
    assert np.asarray(jax.vmap(lambda m: m.sum())(M)).tolist() == [8.0, 6.0]


@pytest.mark.parametrize("fun, arg, text, indices", [
    (lambda m: m, M, "BCOO(float32[2, 3, 4], nse=3, n_batch=1)",
     [[[0, 3], [1, 2], [2, 1]], [[0, 0], [1, 2], [2, 1]]]),
    (lambda x: sparse.BCOO.fromdense(x, nse=3), X, "BCOO(float32[2, 3, 4], nse=3, n_batch=1)",
     [[[0, 3], [1, 2], [2, 1]], [[0, 0], [1, 2], [2, 1]]]),
    (lambda m: m, sparse.BCSR.fromdense(X, n_batch=1),
     "BCSR(float32[2, 3, 4], nse=3, n_batch=1)", [[3, 2, 1], [0, 2, 1]]),
])
def test_vmap_rebuilds_sparse_results(fun, arg, text, indices):
    out = jax.vmap(fun)(arg)
    assert repr(out) == text
    assert np.asarray(out.data).tolist() == DATA
    assert np.asarray(out.indices).tolist() == indices


def test_vmap_of_bcsr_and_unbatched_axis_error():
    dense = jax.vmap(lambda m: m.todense())(sparse.BCSR.fromdense(X, n_batch=1))
    assert np.asarray(dense).tolist() == np.asarray(X).tolist()
    with pytest.raises(ValueError, match="Cannot map in_axis=0 for BCOO array with "
                                         "n_batch=0"):
        jax.vmap(lambda m: m)(sparse.BCOO.fromdense(X))
