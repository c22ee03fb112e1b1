"""shard_map bodies typed over the body's mesh (its manual axes Manual, the others as the
mesh has them): partial-manual bodies over Explicit axes, vmap of shard_map over
Explicit axes, bare PartitionSpecs inside a body, an AbstractMesh as the mesh, and JAX's
errors for spmd_axis_name in specs and for closing over Explicit-sharded values.
Expected specs, values and messages are JAX 0.10.2's for the same programs (recorded in
a scratch install). The checks run in one subprocess with eight devices; each is
reported as its own test."""
from __future__ import annotations

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src import config
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P

from harness import checks_on_devices, raises_with


def _explicit(shape, names):
    return jax.make_mesh(shape, names, axis_types=(AxisType.Explicit,) * len(names))


def check_partial_manual_body_over_explicit_axes():
    mesh = _explicit((2, 2), ("i", "j"))
    seen = {}

    def g(x):
        seen["types"] = x.aval.sharding.mesh.axis_types
        seen["in"] = x.aval.sharding.spec
        out = x * x
        seen["out"] = out.aval.sharding.spec
        seen["context"] = jax.sharding.get_abstract_mesh().axis_types
        return out

    @jax.jit
    def f(x):
        y = jax.shard_map(g, mesh=mesh, in_specs=P("i", None), out_specs=P("i", None),
                          axis_names=frozenset({"i"}))(x)
        seen["result"] = y.aval.sharding.spec
        return y

    v = jax.device_put(jnp.arange(32.).reshape(4, 8), NamedSharding(mesh, P("i", "j")))
    out = f(v)
    assert seen["types"] == (AxisType.Manual, AxisType.Explicit), seen
    assert seen["context"] == (AxisType.Manual, AxisType.Explicit), seen
    assert seen["in"] == P(None, "j") and seen["out"] == P(None, "j"), seen
    assert seen["result"] == P("i", "j"), seen
    assert out.sharding == NamedSharding(mesh, P("i", "j")), out.sharding
    np.testing.assert_array_equal(np.asarray(out), np.arange(32.).reshape(4, 8) ** 2)
    # Inside the manual computation the Explicit split is a constraint, as JAX's.
    assert 'sdy.sharding_constraint %1 <@mesh, [{}, {"j"}]>' in f.lower(v).as_text()
    grads = jax.jit(jax.grad(lambda x: jnp.sum(f(x))))(v)
    np.testing.assert_array_equal(np.asarray(grads), 2 * np.arange(32.).reshape(4, 8))


def check_two_manual_two_explicit_axes():
    mesh = _explicit((2, 1, 2, 2), ("i", "j", "k", "l"))
    seen = {}

    def g(x):
        seen["in"] = x.aval.sharding.spec
        out = x.T
        seen["out"] = out.aval.sharding.spec
        return out

    with jax.set_mesh(mesh):
        v = jax.device_put(jnp.arange(64.).reshape(4, 2, 2, 4), P("i", "j", "k", "l"))
        out = jax.jit(jax.shard_map(g, out_specs=P("i", "j", None, None),
                                    axis_names=frozenset({"i", "j"})))(v)
    assert seen["in"] == P(None, None, "k", "l"), seen
    assert seen["out"] == P("l", "k", None, None), seen
    assert out.sharding == NamedSharding(mesh, P(("i", "l"), ("j", "k"), None, None))


def check_bare_spec_in_partial_auto_body():
    mesh = jax.make_mesh((2, 2), ("i", "j"), axis_types=(AxisType.Auto,) * 2)
    seen = {}

    def g(x):
        seen["types"] = x.aval.sharding.mesh.axis_types
        return jax.lax.with_sharding_constraint(x, P(None, "j")) ** 2

    @jax.jit
    def f(x):
        return jax.shard_map(g, mesh=mesh, in_specs=P("i", None), out_specs=P("i", None),
                             axis_names=frozenset({"i"}))(x)

    v = jax.device_put(jnp.arange(32.).reshape(4, 8), NamedSharding(mesh, P("i", "j")))
    np.testing.assert_array_equal(np.asarray(f(v)), np.arange(32.).reshape(4, 8) ** 2)
    assert seen["types"] == (AxisType.Manual, AxisType.Auto), seen
    text = f.lower(v).as_text()
    assert 'manual_axes={"i"}' in text and '<@mesh, [{}, {"j"}]>' in text, text


def check_vmap_over_explicit_axes_keeps_their_split():
    mesh = _explicit((1, 2, 2), ("z", "x", "y"))

    @jax.shard_map(mesh=mesh, in_specs=P("y"), out_specs=P("y"))
    def f(x):
        return x

    s = NamedSharding(mesh, P(("z", "x"), "y"))
    x = jax.device_put(jnp.arange(16).reshape(4, 4), s)
    jaxpr = str(jax.make_jaxpr(jax.vmap(f))(x))
    assert "manual_axes=('y',)" in jaxpr and "c:i32[4@(z,x),2]{V:y}" in jaxpr, jaxpr
    out = jax.jit(jax.vmap(f))(x)
    assert out.sharding == s, out.sharding
    np.testing.assert_array_equal(np.asarray(out), np.arange(16).reshape(4, 4))

    mesh = _explicit((2, 2), ("x", "y"))
    with jax.set_mesh(mesh):
        arr = jax.device_put(jnp.arange(16).reshape(2, 8), P("x", "y"))
        g = jax.shard_map(lambda x: jax.lax.psum(x, "y"), in_specs=P("y"),
                          out_specs=P(None))
        for out in (jax.vmap(g)(arr), jax.jit(jax.vmap(g))(arr)):
            assert out.sharding == NamedSharding(mesh, P("x", None)), out.sharding
            np.testing.assert_array_equal(np.asarray(out), [[4, 6, 8, 10], [20, 22, 24, 26]])


def check_vmap_over_explicit_axes_errors():
    mesh = _explicit((2, 2), ("x", "y"))
    f = jax.shard_map(lambda x: x, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                      axis_names={"x", "y"})
    x = jax.device_put(jnp.arange(16).reshape(4, 4), NamedSharding(mesh, P("x", "y")))
    raises_with(ValueError, "jax.shard_map requires axis_names", jax.jit(jax.vmap(f)), x)
    raises_with(ValueError, "Only one of spmd_axis_name or arrays sharded on `Explicit`",
            jax.jit(jax.vmap(f, spmd_axis_name="y")), x)


def check_spmd_axis_name_in_specs():
    mesh = jax.make_mesh((4, 2), ("i", "j"), axis_types=(AxisType.Auto,) * 2)
    xs = jnp.arange(4 * 16.).reshape(4, 16)
    f = jax.shard_map(jnp.sin, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    raises_with(ValueError, "vmap spmd_axis_name cannot appear in shard_map in_specs",
            jax.vmap(f, spmd_axis_name="i"), xs)
    g = jax.shard_map(jnp.sin, mesh=mesh, in_specs=P("j"), out_specs=P(("i", "j")),
                      check_vma=False)
    raises_with(ValueError, "vmap spmd_axis_name cannot appear in shard_map out_specs",
            jax.vmap(g, spmd_axis_name="i"), xs)
    mesh = jax.make_mesh((2,), ("i",), axis_types=(AxisType.Auto,))
    h = jax.shard_map(lambda x, y: x + jax.lax.all_gather(y, "i", tiled=True), mesh=mesh,
                      in_specs=(P(None), P("i")), out_specs=P(None), check_vma=False)
    xs, y = jnp.arange(32).reshape(4, 8), jnp.arange(8)
    raises_with(ValueError, "vmap spmd_axis_name cannot appear in shard_map in_specs",
            jax.vmap(h, in_axes=(0, None), spmd_axis_name="i"), xs, y)
    with config.disable_vmap_shmap_error(True):
        out = jax.vmap(h, in_axes=(0, None), spmd_axis_name="i")(xs, y)
    np.testing.assert_array_equal(np.asarray(out), np.arange(32).reshape(4, 8) +
                                  np.arange(8))


def check_closing_over_explicit_sharded_value():
    mesh = _explicit((2,), ("x",))
    with jax.set_mesh(mesh):
        w = jnp.ones((2, 4), dtype=np.float32)
        x = jax.device_put(jnp.ones((4, 4), dtype=np.float32), P("x"))
        out = jax.shard_map(lambda w, x: jnp.sum(w * x, axis=-1), in_specs=(P(), P("x")),
                            out_specs=P("x"))(w, x)
        np.testing.assert_array_equal(np.asarray(out), [4., 4., 4., 4.])
        raises_with(NotImplementedError, "Closing over inputs to shard_map where the input "
                "is sharded on `Explicit` axes is not implemented",
                jax.shard_map(lambda xi: jnp.sum(w * xi, axis=-1), in_specs=P("x"),
                              out_specs=P("x")), x)


def check_abstract_mesh_argument():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    np_inp = np.arange(16).reshape(8, 2)
    arr = jax.device_put(np_inp, NamedSharding(mesh, P("x", "y")))

    def f(x):
        return jax.shard_map(lambda x: x, mesh=mesh.abstract_mesh, in_specs=P("x"),
                             out_specs=P("x"))(x)

    for out in (jax.jit(f)(arr), f(arr)) + jax.shard_map(
            lambda x, y: (x, y), mesh=mesh.abstract_mesh, in_specs=P("x"),
            out_specs=P("x"))(np_inp, arr):
        np.testing.assert_array_equal(np.asarray(out), np_inp)
        assert out.sharding == NamedSharding(mesh, P("x")), out.sharding

    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
    identity = jax.shard_map(lambda x: x, mesh=mesh.abstract_mesh, in_specs=P("x"),
                             out_specs=P("x"))
    for x in (jnp.arange(8), np.arange(8)):
        raises_with(ValueError, "Please pass `jax.Array`s with a `NamedSharding` as input to "
                "`shard_map` when passing `AbstractMesh` to the mesh argument.", identity, x)
    other = jax.make_mesh((2,), ("y",), axis_types=(AxisType.Auto,))
    on_other = jax.device_put(np.arange(8), NamedSharding(other, P("y")))
    raises_with(ValueError, "Mesh shape of the input (('y', 2),) does not match the mesh "
            "shape passed to shard_map (('x', 2),) for shape int32[8]", identity, on_other)


def check_float0_result_of_a_sharded_program():
    # An integer input's cotangent (float0) comes out of a program over a mesh (JAX's).
    mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
    f = jax.shard_map(lambda x, y: jax.lax.psum((x * y.astype(x.dtype)).sum(), "x"),
                      mesh=mesh, in_specs=(P("x"), P("x")), out_specs=P())
    grad = jax.jit(jax.grad(f, argnums=(0, 1), allow_int=True),
                   in_shardings=NamedSharding(mesh, P(None, "x")),
                   out_shardings=NamedSharding(mesh, P()))
    dx, dy = grad(np.ones((8, 16), np.float32), np.full((8, 16), 3, np.int32))
    assert dy.dtype == jax.dtypes.float0 and dy.shape == (8, 16), dy
    np.testing.assert_array_equal(np.asarray(dx), np.full((8, 16), 3.))


def check_unchecked_transpose_sums_a_partial_sum_inputs_cotangent():
    # check_vma=False: the cotangent of an unreduced input is reduced, summed over the
    # devices (JAX's psum on the backward pass).
    mesh = _explicit((2,), ("x",))
    with jax.set_mesh(mesh):
        arr = jax.device_put(jnp.arange(8, dtype=np.float32), P(unreduced={"x"}))
        f = jax.jit(jax.shard_map(lambda x: jax.lax.psum_scatter(x, "x", tiled=True),
                                  in_specs=P(unreduced={"x"}), out_specs=P("x"),
                                  check_vma=False))
        grad = jax.jit(jax.grad(lambda x: f(x).sum()))
        assert "psum" in str(grad.trace(arr).jaxpr)
        out = grad(arr)
    assert out.sharding == NamedSharding(mesh, P(None, reduced={"x"})), out.sharding
    np.testing.assert_array_equal(np.asarray(out), np.full(8, 2.))


def check_out_of_bounds_slice_of_an_explicit_sharded_array():
    # An empty slice keeps the type's split (JAX's), in and out of a shard_map.
    mesh = _explicit((2,), ("x",))
    with jax.set_mesh(mesh):
        arr = jax.device_put(jnp.ones((32, 32)), P(None, "x"))
        for f in (jax.shard_map(lambda x: x[:, 100:116], in_specs=P(None, "x"),
                                out_specs=P(None, "x")), lambda x: x[:, 100:116]):
            out = jax.jit(f)(arr)
            assert out.shape == (32, 0), out.shape
            assert out.sharding == NamedSharding(mesh, P(None, "x")), out.sharding


def check_eval_shape_in_a_body_keeps_the_varying_axes():
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AxisType.Auto,))
    seen = {}

    def body(x):
        struct = jax.eval_shape(jnp.sum, x)
        seen["struct"] = jax.typeof(struct).mat.varying
        seen["ones"] = jax.typeof(jax.lax.full_like(struct, 1)).mat.varying
        return x

    jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(jnp.arange(4.))
    assert seen == {"struct": frozenset({"x"}), "ones": frozenset({"x"})}, seen
    assert str(jax.typeof(jax.ShapeDtypeStruct((2,), np.float32))) == "float32[2]"


def check_constants_and_loops_in_a_body_over_explicit_axes():
    # Constants made in a body belong to it (not to the context mesh), also where a
    # rule traces while lowering (lax.map's loop): JAX's test_eval_shape_vma program.
    mesh = _explicit((2,), ("x",))
    with jax.set_mesh(mesh):
        p = jax.device_put(jnp.arange(5.), P())
        x = jax.device_put(jnp.arange(20.).reshape(4, 5), P("x"))

        def f(p, x):
            return jnp.einsum("i, i->", x, p)

        @jax.shard_map(in_specs=(P(), P("x")), out_specs=P("x"))
        def g(p, x):
            def grad(x):
                _, vjp = jax.vjp(f, p, x)
                return vjp(jax.lax.full_like(jax.eval_shape(f, p, x), 1))
            return jax.lax.map(grad, x)

        # (JAX spells the layout P('x') eagerly and P('x', None) from jit.)
        for (dp, dx), spec in zip((g(p, x), jax.jit(g)(p, x)), (P("x"), P("x", None))):
            np.testing.assert_array_equal(np.asarray(dp), [[10., 12., 14., 16., 18.],
                                                          [20., 22., 24., 26., 28.]] * 2)
            np.testing.assert_array_equal(np.asarray(dx), np.tile(np.arange(5.), (4, 1)))
            assert dx.sharding == NamedSharding(mesh, spec), dx.sharding


def check_debug_callback_in_a_partial_manual_body():
    # As JAX lowers it: gathered over the automatic axis, run once per manual block.
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("x", "y"))
    seen = []

    def f(x):
        jax.debug.callback(lambda i, x: seen.append((int(i), x.tolist())),
                           jax.lax.axis_index("x"), x * 2)
        return jnp.cos(x)

    g = jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                      axis_names=frozenset({"x"}))
    np.testing.assert_allclose(np.asarray(jax.jit(g)(jnp.arange(8.))), np.cos(np.arange(8.)),
                               rtol=1e-6)
    jax.effects_barrier()
    assert sorted(seen) == [(0, [0.0, 2.0, 4.0, 6.0]), (1, [8.0, 10.0, 12.0, 14.0])], seen


test_on_eight_devices = checks_on_devices(globals(), 8)
