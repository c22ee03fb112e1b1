"""`out_sharding=jax.typeof(x).sharding` outside any mesh (a NamedSharding over the empty
AbstractMesh, as optax's tree_random_like passes it) asks nothing, eagerly and under jit,
as in JAX. Values are JAX 0.10.2's for the same program."""
import numpy as np

import pyjax as jax
import pyjax.numpy as jnp


def _with_type_shardings(x):
    return (jax.random.normal(jax.random.key(0), x.shape, x.dtype,
                              out_sharding=jax.typeof(x).sharding),
            jnp.reshape(x, (2, 1), out_sharding=jax.typeof(x.reshape(2, 1)).sharding),
            jnp.dot(x, x, out_sharding=jax.typeof(x[0]).sharding),
            x.at[0].get(out_sharding=jax.typeof(x[0]).sharding))


def test_type_sharding_outside_a_mesh_asks_nothing():
    x = jnp.array([1.0, 2.0])
    assert jax.typeof(x).sharding.mesh.empty
    for out in (jax.jit(_with_type_shardings)(x), _with_type_shardings(x)):
        normal, reshaped, dot, got = out
        np.testing.assert_allclose(normal, [1.622642159461975, 2.0252647399902344],
                                   rtol=1e-6)
        np.testing.assert_array_equal(reshaped, [[1.0], [2.0]])
        assert float(dot) == 5.0 and float(got) == 1.0
