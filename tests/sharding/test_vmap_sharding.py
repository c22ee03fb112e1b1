"""vmap over values whose types are split over Explicit mesh axes (JAX 0.10.2's
explicit_mesh_axis): inside, a value's type drops the mapped dimension's split; every
batch dimension vmap creates is split as its mapped arguments split it; JAX's
ValueErrors for mapped arguments split differently, unmapped ones split over the
vmapped axes, and a conflicting spmd_axis_name. Expected values are JAX 0.10.2's for the
same programs; the checks run in one subprocess with eight devices."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.sharding import PartitionSpec as P

from harness import checks_on_devices


def _mesh():
    return jax.make_mesh((2, 4), ("x", "y"))   # Explicit axes


def _split(spec):
    return jax.device_put(np.arange(32.).reshape(8, 4), spec)


def check_examples_drop_the_mapped_split():
    with jax.set_mesh(_mesh()):
        seen = []

        def f(v):
            seen.append(jax.typeof(v).sharding.spec)
            out = v * 2
            seen.append(jax.typeof(out).sharding.spec)
            return out

        out = jax.jit(jax.vmap(f))(_split(P("x", "y")))
        assert seen == [P("y"), P("y")], seen
        assert out.sharding.spec == P("x", "y")
        eager = jax.vmap(f)(_split(P("x", "y")))
        assert eager.sharding.spec == P("x", "y")
        np.testing.assert_array_equal(eager, np.arange(32.).reshape(8, 4) * 2)


def check_new_batch_dimensions_take_the_mapped_split():
    with jax.set_mesh(_mesh()):
        big = jax.device_put(np.ones((8, 3, 2)), P("x"))
        concat = jax.vmap(lambda p, q: jnp.concatenate([p, q], axis=-1), in_axes=(0, None))
        out = jax.jit(concat)(big, jnp.ones((3, 5)))
        assert out.sharding.spec == P("x", None, None), out.sharding.spec
        zeros = jax.jit(jax.vmap(lambda v: jnp.zeros((4,)), out_axes=-1))(_split(P("x")))
        assert zeros.sharding.spec == P(None, "x"), zeros.sharding.spec


def check_out_sharding_inside_vmap_gains_the_batch_split():
    with jax.set_mesh(jax.make_mesh((2, 2), ("x", "y"))):
        lhs = jax.device_put(np.arange(16.).reshape(4, 2, 2), P("x", None, "y"))
        rhs = jax.device_put(np.arange(16.).reshape(2, 4, 2), P(None, "x", "y"))
        f = jax.vmap(lambda p, q: jnp.einsum("ab,bc->ac", p, q, out_sharding=P(None, "y")),
                     in_axes=(0, 1), out_axes=2)
        assert jax.jit(f)(lhs, rhs).sharding.spec == P(None, "y", "x")
        r = jax.jit(jax.vmap(lambda v: jax.lax.reshape(v, (1, 2), out_sharding=P(None, "y")),
                             in_axes=1))(jax.device_put(np.arange(16).reshape(2, 8),
                                                         P(None, "x")))
        assert r.sharding.spec == P("x", None, "y"), r.sharding.spec


def check_vmap_errors():
    with jax.set_mesh(_mesh()):
        a, b = _split(P("x", "y")), _split(P(None, "y"))
        with pytest.raises(ValueError, match="Mapped away dimension of inputs passed to "
                                             "vmap should be sharded the same"):
            jax.vmap(lambda u, w: u + w)(a, b)
        with pytest.raises(ValueError, match="Unmapped values passed to vmap cannot be "
                                             "sharded along the mesh axis"):
            jax.vmap(lambda u, w: u * w[0], in_axes=(0, None))(
                a, jax.device_put(np.arange(8.), P("x")))
        with pytest.raises(ValueError, match="Only one of spmd_axis_name or arrays sharded"):
            jax.vmap(lambda u: u * 2, spmd_axis_name="y")(a)
        same = jax.jit(jax.vmap(lambda u: u * 2, spmd_axis_name="x"))(a)
        assert same.sharding.spec == P("x", "y")


test_on_eight_devices = checks_on_devices(globals(), 8)
