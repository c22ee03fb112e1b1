"""jnp.eye and jnp.tri with a traced diagonal offset k, as JAX 0.10.2 allows."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


@pytest.mark.parametrize("k", [-4, -1, 0, 2, 5])
@pytest.mark.parametrize("fn", ["eye", "tri"])
def test_traced_k_matches_numpy(fn, k):
    out = jax.jit(lambda k: getattr(jnp, fn)(3, 4, k=k))(k)
    np.testing.assert_array_equal(out, getattr(np, fn)(3, 4, k=k))


def test_static_k_outside_int32_overflows_like_jax():
    with pytest.raises(OverflowError):
        jnp.tri(3, k=2**33)
