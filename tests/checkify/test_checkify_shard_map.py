"""checkify of shard_map: each device checks its own blocks, and the error reports the
failing devices by their index along the mesh's manual axes. Expected messages and
values are JAX 0.10.2's for the same programs (recorded in a scratch install). The
checks run in one subprocess with eight devices; each is reported as its own test."""
from __future__ import annotations

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental import checkify
from pyjax.sharding import Mesh, NamedSharding, PartitionSpec as P

from harness import checks_on_devices


def _division_by_index(check_vma):
    mesh = Mesh(np.array(jax.devices()[:8]), ("dev",))
    ps = NamedSharding(mesh, P("dev"))
    inp = np.tile(np.arange(4, dtype=np.int32), 2)
    x = jax.make_array_from_callback(inp.shape, ps, lambda idx: inp[idx])
    f = jax.shard_map(lambda x: jax.lax.axis_index("dev") * x / x, mesh=mesh,
                      in_specs=P("dev"), out_specs=P("dev"), check_vma=check_vma)
    f = checkify.checkify(jax.jit(f, in_shardings=ps, out_shardings=ps),
                          errors=checkify.float_checks)
    err, out = f(x)
    assert err.get() == ("at mapped index 0: division by zero\n"
                         "at mapped index 4: division by zero"), err.get()
    np.testing.assert_array_equal(np.asarray(out), [np.nan, 1, 2, 3, np.nan, 5, 6, 7])


def check_jitted_shard_map_reports_failing_devices():
    with jax.checking_leaks():   # (the body's tracers must not outlive its trace)
        _division_by_index(True)


def check_jitted_shard_map_without_check_vma():
    _division_by_index(False)


def check_two_axis_mesh_counts_devices_in_mesh_order():
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("a", "b"))
    f = jax.shard_map(lambda x: x / x, mesh=mesh, in_specs=P(("a", "b")),
                      out_specs=P(("a", "b")))
    err, out = checkify.checkify(f, errors=checkify.float_checks)(
        jnp.array([1., 0., 2., 3., 4., 0., 1., 1.]))
    assert err.get() == ("at mapped index 0: division by zero\n"
                         "at mapped index 2: division by zero"), err.get()
    np.testing.assert_array_equal(np.asarray(out), [1, np.nan, 1, 1, 1, np.nan, 1, 1])
    err, _ = checkify.checkify(f, errors=checkify.float_checks)(jnp.ones(8))
    assert err.get() is None


test_on_eight_devices = checks_on_devices(globals(), 8)
