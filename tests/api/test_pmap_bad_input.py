"""Bad input to pmap (more shards than devices, in_axes, sizes that disagree, devices,
axis_size, results that are not JAX types): each case raises a named exception whose
message names the problem (see harness.assert_named_error)."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from harness import assert_named_error, bad_input_case as case

x1 = jnp.ones((1, 2))

CASES = [
    case("pmap_too_many_shards", ValueError, "logical devices",
         lambda: jax.pmap(lambda a: a)(jnp.ones((100, 2)))),
    case("pmap_scalar", ValueError, "rank 0", lambda: jax.pmap(lambda a: a)(1.0)),
    case("pmap_in_axes", ValueError, "along axis 5",
         lambda: jax.pmap(lambda a: a, in_axes=5)(jnp.ones((1, 2)))),
    case("pmap_size_mismatch", ValueError, "inconsistent sizes",
         lambda: jax.pmap(lambda a, b: a)(jnp.ones((1, 2)), jnp.ones((2, 2)))),
    case("pmap_bad_devices", TypeError, "sequence of Devices",
         lambda: jax.pmap(lambda a: a, devices=["cpu"])),
    case("pmap_float_axis_size", TypeError, "axis_size must be a non-negative int",
         lambda: jax.pmap(lambda a: a, axis_size=1.5)),
    case("pmap_returns_string", TypeError, "not a valid JAX type",
         lambda: jax.pmap(lambda a: "s")(jnp.ones((1, 2)))),
    case("axis_index_groups_miss_an_index", ValueError, "exactly once",
         lambda: jax.pmap(lambda a: lax.psum(a, "i", axis_index_groups=[[1]]),
                          axis_name="i")(jnp.ones((1, 2)))),
    case("axis_index_groups_not_integers", TypeError, "lists of integer indices",
         lambda: jax.pmap(lambda a: lax.psum(a, "i", axis_index_groups=[["a"]]),
                          axis_name="i")(jnp.ones((1, 2)))),
    case("pmap_no_devices", ValueError, "'devices' argument to pmap must be non-empty",
         lambda: jax.pmap(lambda a: a, devices=[])),
    # JAX's key path: in_axes is matched as (in_axes, 0) against (args, kwargs).
    case("pmap_in_axes_not_a_prefix", ValueError,
         r"different lengths of tuple at key path\n    pmap in_axes\[0\]\[0\]",
         lambda: jax.pmap(lambda a, b: a, in_axes=((0, 0, 0), 0))((x1, x1), x1)),
    case("pmap_out_axes_not_a_prefix", ValueError,
         r"different lengths of tuple at key path\n    pmap out_axes\[0\]",
         lambda: jax.pmap(lambda a: ((a, a), a), out_axes=((0, 0, 0), 0))(x1)),
    case("pmap_in_axes_with_keywords", ValueError,
         "each argument passed by keyword is mapped over its leading axis",
         lambda: jax.pmap(lambda a, b: a, in_axes=((0, 0), 0))(a=(x1, x1), b=x1)),
    case("pshuffle_not_a_permutation", ValueError, "`perm` does not represent a permutation",
         lambda: jax.pmap(lambda a: lax.pshuffle(a, "i", [0, 0]), axis_name="i")(x1)),
    case("removed_device_put_sharded", AttributeError, "jax.device_put_sharded is deprecated",
         lambda: jax.device_put_sharded),
    # JAX's message: vmap runs no collective over subgroups of its axis.
    case("axis_index_groups_under_vmap", NotImplementedError,
         "axis_index_groups not supported in vmap collectives",
         lambda: jax.vmap(lambda a: lax.psum(a, "i", axis_index_groups=[[0, 1]]),
                          axis_name="i")(jnp.ones(2))),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)
