"""jax.smap: shard_map over one mesh axis with vmap-style in_axes/out_axes, on 4 CPU
devices (a subprocess); expected values recorded from JAX 0.10.2 (mesh of Auto axes)."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

from harness import checks_on_devices


def check_smap_split_and_replicated_axes():
    mesh = jax.make_mesh((4,), ("i",))
    x = jnp.arange(8.0).reshape(4, 2)
    with jax.set_mesh(mesh):
        f = jax.smap(lambda a: a * lax.axis_index("i"), in_axes=0, out_axes=0, axis_name="i")
        assert f(jax.device_put(x, jax.P("i"))).tolist() == [[0, 0], [2, 3], [8, 10], [18, 21]]
        # over an Explicit axis an argument is laid out by its type, which in_axes must
        # say (JAX 0.10.2 refuses the unsharded x: "P('i', None) does not match ...")
        with pytest.raises(ValueError, match=r"in_specs passed to shard_map: P\('i', None\) "
                           r"does not match the specs of the input: P\(None, None\)"):
            f(x)
        g = jax.smap(lambda a, b: a.sum(0, keepdims=True) + b, in_axes=(1, None),
                     out_axes=1, axis_name="i")
        assert g(jax.device_put(x.T, jax.P(None, "i")), 1.0).tolist() == [[2.0, 6.0, 10.0, 14.0]]
        h = jax.smap(lambda a: lax.psum(a, "i"), in_axes=0, out_axes=None, axis_name="i")
        assert h(jax.device_put(jnp.ones(4), jax.P("i"))).tolist() == [4.0]
        # in_axes left out over an Explicit axis: inferred from the argument's type, so
        # an unsharded x is replicated and every member returns all of it (as in JAX).
        assert jax.smap(lambda a: a, out_axes=0, axis_name="i")(x).shape == (16, 2)
        y = jax.device_put(x, jax.P("i"))
        doubled = [[0.0, 2.0], [4.0, 6.0], [8.0, 10.0], [12.0, 14.0]]
        assert jax.smap(lambda a: a * 2, out_axes=0, axis_name="i")(y).tolist() == doubled
        assert jax.jit(jax.smap(lambda a: a * 2, out_axes=0, axis_name="i"))(
            y).tolist() == doubled
        auto = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    with jax.set_mesh(auto):
        with pytest.raises(TypeError, match="in_axes was not specified"):
            jax.smap(lambda a: a, out_axes=0, axis_name="i")(x)


def check_explicit_in_specs_drop_size_one_axes_when_types_do():
    # jax_remove_size_one_mesh_axis_from_type: an argument's type leaves out a size-1
    # axis, and so does the in_specs it is checked against (JAX's shard_map_test
    # test_remove_one_sized_mesh_axis_from_vma)
    mesh = jax.make_mesh((4, 1), ("x", "y"))
    with jax.remove_size_one_mesh_axis_from_type(True), jax.set_mesh(mesh):
        x = jax.device_put(jnp.arange(8).reshape(4, 2), jax.P("x", "y"))
        f = jax.shard_map(lambda a: a * 2, in_specs=jax.P("x", "y"), out_specs=jax.P("x", "y"))
        assert f(x).tolist() == [[0, 2], [4, 6], [8, 10], [12, 14]]


test_on_four_devices = checks_on_devices(globals(), 4)
def test_smap_argument_errors():
    with pytest.raises(TypeError, match="axis_name should be a `str`"):
        jax.smap(lambda a: a, axis_name=("i",), out_axes=0)
    with pytest.raises(TypeError, match="in_axes must be an int, None"):
        jax.smap(lambda a: a, axis_name="i", in_axes=[0], out_axes=0)
    with pytest.raises(TypeError, match="out_axes must be an int, None"):
        jax.smap(lambda a: a, axis_name="i", out_axes="a")
    with pytest.raises(ValueError, match="context mesh cannot be empty"):
        jax.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="i")(np.ones(2))
