"""Buffer donation and device_put's copy semantics (donate=, may_alias=), as JAX 0.10.2
decides them: a donated input that no output of its shape takes is still given to XLA
when an output has as many elements, and device_put(..., may_alias=False) makes a
buffer of its own. Sharded cases run in one subprocess with eight devices."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P

from harness import checks_on_devices


def test_a_donation_goes_to_an_output_of_as_many_elements():
    # JAX 0.10.2: x and y are deleted (y's 16 elements go to the (16,) result), z is
    # not (no output left); only z is "not usable"
    x, y, z = jnp.arange(16.), jnp.arange(16.).reshape(16, 1), jnp.ones(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = jax.jit(lambda x, y, z: (x + z.sum(), y.reshape(16)),
                      donate_argnums=(0, 1, 2))(x, y, z)
    assert [str(w.message) for w in caught] == [
        "Some donated buffers were not usable: f32[3]{0}"]
    assert (x.is_deleted(), y.is_deleted(), z.is_deleted()) == (True, True, False)
    np.testing.assert_array_equal(out[1], np.arange(16.))
    text = jax.jit(lambda y: y.reshape(16), donate_argnums=0).lower(
        jnp.ones((16, 1))).as_text()
    assert "%arg0: tensor<16x1xf32> {jax.buffer_donor = true}" in text


def test_device_put_copy_semantics():
    d0 = jax.devices()[0]
    x = np.arange(1000)
    y = jax.device_put(x, device=d0, may_alias=False, donate=False)
    z = jax.device_put(y, device=d0, may_alias=False, donate=False)
    assert z is not y
    a = jax.jit(lambda y: y * 2, donate_argnums=0)(y)
    assert y.is_deleted() and not z.is_deleted()
    np.testing.assert_array_equal(a, x * 2)
    np.testing.assert_array_equal(z, x)
    assert jax.device_put(z, d0) is z   # may alias by default
    donated = jax.device_put(z, d0, donate=True)
    assert donated is not z and not z.is_deleted()   # as JAX 0.10.2 on one device


def test_device_put_donate_and_may_alias_per_leaf():
    x = jnp.arange(4)
    with pytest.raises(ValueError, match="may_alias and donate cannot be True at the "
                       "same time."):
        jax.device_put(x, jax.devices()[0], donate=True, may_alias=True)
    with pytest.raises(ValueError, match=r"device_put donate specification must be a "
                       r"tree prefix(.|\n)*different lengths of tuple"):
        jax.device_put((x, x), jax.devices()[0], donate=(True,))
    kept, copied = jax.device_put((x, x), may_alias=(True, False))
    assert kept is x and copied is not x


def check_sharded_donation_by_size():
    # JAX 0.10.2: every donated input is deleted (y and z by element count)
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,),
                         devices=jax.devices()[:2])
    s1, s2 = NamedSharding(mesh, P("x")), NamedSharding(mesh, P(None, "x", None))
    x = jax.device_put(np.arange(16), s1)
    y = jax.device_put(np.arange(16).reshape(16, 1), s1)
    z = jax.device_put(np.arange(16).reshape(2, 2, 4), s1)
    f = jax.jit(lambda x, y, z: (x, jnp.reshape(y, (16,)), z), out_shardings=(s1, s1, s2),
                donate_argnames=("x", "y", "z"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outs = f(x, y, z)
    assert x.is_deleted() and y.is_deleted() and z.is_deleted()
    np.testing.assert_array_equal(outs[1], np.arange(16))
    np.testing.assert_array_equal(outs[2], np.arange(16).reshape(2, 2, 4))


def check_device_put_to_the_same_sharding_copies_unless_it_may_alias():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,),
                         devices=jax.devices()[:2])
    s = NamedSharding(mesh, P("x"))
    x = jax.device_put(np.arange(4), s)
    assert jax.device_put(x, s) is x
    for kwargs in ({"donate": True}, {"may_alias": False}):
        y = jax.device_put(x, s, **kwargs)
        assert y is not x and not x.is_deleted() and y.sharding == s


def check_device_put_to_unreduced_keeps_each_device_s_block():
    # JAX 0.10.2: a sharded array becomes partial sums where each device keeps its own
    # block (zeros elsewhere); a replicated one is held by the first device
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Explicit,),
                         devices=jax.devices()[:2])
    with jax.set_mesh(mesh):
        shards = lambda a: [np.asarray(s.data).tolist() for s in a.addressable_shards]
        sharded = jax.device_put(np.arange(4), P("x"))
        out = jax.device_put(sharded, P(unreduced={"x"}))
        assert out.sharding == NamedSharding(mesh, P(unreduced={"x"}))
        assert shards(out) == [[0, 1, 0, 0], [0, 0, 2, 3]]
        assert shards(jax.device_put(jnp.arange(4), P(unreduced={"x"}))) == [
            [0, 1, 2, 3], [0, 0, 0, 0]]


test_on_eight_devices = checks_on_devices(globals(), 8)
