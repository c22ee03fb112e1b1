"""jax.export: exporting a jitted function, serializing it in pyjax's format and calling
it back eagerly, under jit and under grad; values and messages recorded from JAX 0.10.2."""
import collections

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import export
from harness import assert_named_error

X = np.arange(4, dtype=np.float32)
SIN2 = [0.0, 1.6829419136047363, 1.8185948133468628, 0.28224000334739685]
GRAD = [2.0, 1.0806045532226562, -0.832293689250946, -1.979984998703003]


def _exported(vjp_order=0):
    exp = export.export(jax.jit(lambda x: jnp.sin(x) * 2.))(X)
    return export.deserialize(exp.serialize(vjp_order=vjp_order))


def test_public_names_are_jax_s():
    assert {n for n in dir(export) if not n.startswith("_")} == {
        "DisabledSafetyCheck", "Exported", "SymbolicScope", "default_export_platform",
        "deserialize", "export", "is_symbolic_dim",
        "maximum_supported_calling_convention_version",
        "minimum_supported_calling_convention_version", "register_namedtuple_serialization",
        "register_pytree_node_serialization", "symbolic_args_specs", "symbolic_shape"}


def test_fields_as_jax():
    exp = export.export(jax.jit(lambda x: jnp.sin(x) * 2.))(
        jax.ShapeDtypeStruct((4,), np.float32))
    assert exp.fun_name == "<lambda>"
    assert repr(exp.in_avals) == "(ShapedArray(float32[4]),)"
    assert exp.platforms == ("cpu",) == (export.default_export_platform(),)
    assert (exp.nr_devices, exp.calling_convention_version) == (1, 10)
    assert exp.in_tree == jax.tree.structure(((1,), {}))
    assert "stablehlo.sine" in exp.mlir_module()


def test_call_after_round_trip_eagerly_and_under_jit():
    exp = _exported()
    np.testing.assert_allclose(exp.call(X), SIN2, rtol=1e-6)
    twice = jax.jit(lambda x: exp.call(x) + exp.call(x))(X)
    np.testing.assert_allclose(twice, 2 * np.array(SIN2), rtol=1e-6)


def test_grad_through_the_serialized_vjp():
    exp = _exported(vjp_order=1)
    np.testing.assert_allclose(jax.grad(lambda x: exp.call(x).sum())(X), GRAD, rtol=1e-6)


def test_pytrees_round_trip():
    T = collections.namedtuple("T", ("a", "b"))
    export.register_namedtuple_serialization(T, serialized_name="tests.export.T")
    exp = export.export(jax.jit(lambda t, *, d: T(t.b, d["k"])))(T(X, X), d={"k": X})
    back = export.deserialize(exp.serialize())
    assert (back.in_tree, back.out_tree) == (exp.in_tree, exp.out_tree)
    res = back.call(T(X, 2 * X), d={"k": X})
    assert type(res) is T
    np.testing.assert_array_equal(res.a, 2 * X)


def test_closed_over_constant_is_inside_the_module():
    const = np.linspace(0., 1., 4, dtype=np.float32)
    exp = export.deserialize(export.export(jax.jit(lambda x: x + const))(X).serialize())
    np.testing.assert_allclose(exp.call(X), X + const)


def test_bad_calls_and_bytes():
    exp = _exported()
    assert_named_error(lambda: exp.call(np.arange(6, dtype=np.float32)), ValueError,
                       r"Shape mismatch for args\[0\].shape\[0\] \(expected same constant\):"
                       r" expected \(4,\) and called with \(6,\)")
    assert_named_error(lambda: exp.call(X.astype(np.int32)), ValueError,
                       r"Dtype mismatch for args\[0\]")
    assert_named_error(lambda: exp.call(X, X), ValueError,
                       "The invocation args and kwargs must have the same pytree structure")
    assert_named_error(lambda: export.export(lambda x: x), ValueError,
                       "Function to be exported must be the result of `jit`")
    assert_named_error(lambda: export.deserialize(b"\x10\x00\x00\x00JAXE"), ValueError,
                       "not a pyjax serialized Exported")
    keyed = export.export(jax.jit(lambda d: d[(0, 1)]))({(0, 1): X})
    assert_named_error(keyed.serialize, TypeError,
                       "Serialization is supported only for dictionaries with string keys")


def test_library_functions_jax_defines_as_jitted_export():
    # jnp.sin is jit(sin, inline=True) in JAX: a stages.Wrapped, which export takes
    assert isinstance(jnp.sin, jax.stages.Wrapped)
    assert not isinstance(lambda x: x, jax.stages.Wrapped)
    exp = export.deserialize(export.export(jnp.tanh)(np.ones(3, np.float32)).serialize())
    assert exp.fun_name == "tanh"
    assert repr((exp.in_avals, exp.out_avals)) == \
        "((ShapedArray(float32[3]),), (ShapedArray(float32[3]),))"
    np.testing.assert_allclose(exp.call(np.array([0.5, 1.0, 2.0], np.float32)),
                               np.tanh([0.5, 1.0, 2.0]), rtol=1e-6)
    assert str(jnp.sin.eval_shape(np.ones(3, np.float32))) == \
        "ShapeDtypeStruct(shape=(3,), dtype=float32)"
    assert str(jnp.sin.trace(1.).jaxpr) == "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }"
    assert str(jnp.cos.lower(np.ones(2, np.int32)).out_info) == \
        "ShapeDtypeStruct(shape=(2,), dtype=float32)"
    assert (jnp.abs.__name__, jnp.acos.__name__) == ("abs", "acos")
    assert repr(jnp.sin).startswith("<PjitFunction of <function sin at ")
    assert not isinstance(jax.vmap(jnp.sin), jax.stages.Wrapped)


def test_platform_check_and_its_disabling():
    f = jax.jit(jnp.sin)
    exp = export.export(f, platforms=("tpu",))(X)
    with pytest.raises(ValueError, match="was exported for platforms"):
        exp.call(X)
    lenient = export.export(f, platforms=("tpu",),
                            disabled_checks=[export.DisabledSafetyCheck.platform()])(X)
    np.testing.assert_allclose(lenient.call(X), np.sin(X), rtol=1e-6)


def test_typed_key_arguments_round_trip():
    key = jax.random.key(42)
    exp = export.export(jax.jit(lambda k: jax.random.split(k, 2)))(key)
    back = export.deserialize(exp.serialize())
    # as on JAX: the key is one leaf, of type key<fry>[] (JAX prints its aval
    # ShapedArray(key<fry>[]))
    assert back.in_tree == exp.in_tree == jax.tree.structure(((1,), {}))
    assert (back.in_avals[0].shape, str(back.in_avals[0].dtype)) == ((), "key<fry>")
    assert str(back.out_avals[0].dtype) == "key<fry>" and back.out_avals[0].shape == (2,)
    np.testing.assert_array_equal(jax.random.key_data(back.call(key)),
                                  [[1832780943, 270669613], [64467757, 2916123636]])


def test_grad_beside_a_key_argument():
    key = jax.random.key(0)
    f = jax.jit(lambda k, x: (x * jax.random.uniform(k, (3,)), k))
    exp = export.deserialize(export.export(f)(key, X[:3]).serialize(vjp_order=1))
    np.testing.assert_allclose(jax.grad(lambda x: exp.call(key, x)[0].sum())(X[:3]),
                               [0.947667, 0.9785799, 0.33229148], rtol=1e-6)


def test_shardings_in_types_round_trip():
    mesh = jax.sharding.AbstractMesh((1,), ("x",),
                                     axis_types=(jax.sharding.AxisType.Explicit,))
    spec = jax.sharding.PartitionSpec("x", None)
    s = jax.sharding.NamedSharding(mesh, spec)
    arg = jax.ShapeDtypeStruct((8, 2), np.float32, sharding=s)
    exp = export.export(jax.jit(lambda x: x * 2.), platforms=("cpu",))(arg)
    back = export.deserialize(exp.serialize())
    assert back.in_avals[0].sharding == exp.in_avals[0].sharding
    assert back.in_avals[0].sharding.spec == spec
    assert back.in_shardings_jax(mesh) == exp.in_shardings_jax(mesh)


def test_one_device_export_with_a_mesh_runs_without_one():
    mesh = jax.sharding.Mesh(jax.devices()[:1], ("x",))
    s = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    exp = export.export(jax.jit(lambda x: x + 1., in_shardings=s, out_shardings=s))(X)
    np.testing.assert_array_equal(export.deserialize(exp.serialize()).call(X), X + 1.)


def _plus_platform_constant(x):
    return x + jax.lax.platform_dependent(cpu=lambda: 1., tpu=lambda: 2., default=lambda: 3.)


def test_multi_platform_module_takes_the_platform_index():
    exp = export.export(jax.jit(lambda x: x * 2.), platforms=("cpu", "tpu"))(np.float32(1.))
    assert exp.platforms == ("cpu", "tpu")
    assert '%arg0: tensor<i32> {jax.global_constant = "_platform_index"}' in exp.mlir_module()
    back = export.deserialize(exp.serialize())
    assert float(back.call(np.float32(3.))) == 6.0
    assert float(jax.jit(lambda x: back.call(x) + 1.)(np.float32(3.))) == 7.0


def test_platform_dependent_follows_the_export_platform():
    exp = export.export(jax.jit(_plus_platform_constant), platforms=("tpu",))(np.float32(1.))
    assert "dense<2.000000e+00>" in exp.mlir_module()
    # the trace for TPU is not reused for the caller's platform
    assert float(jax.jit(_plus_platform_constant)(np.float32(1.))) == 2.0
    assert_named_error(
        lambda: export.export(jax.jit(_plus_platform_constant),
                              platforms=("cpu", "tpu"))(np.float32(1.)),
        ValueError, "lax.platform_dependent has different branches for the platforms")


def test_multi_platform_donation_needs_every_platform_to_donate():
    f = jax.jit(jnp.sin, donate_argnums=(0,))
    x = np.arange(3, dtype=np.float32)
    assert_named_error(lambda: export.export(f, platforms=["cpu", "tpu", "other"])(x),
                       NotImplementedError,
                       "In multi-platform lowering either all or no lowering platforms "
                       "should support donation")
    exp = export.export(f, platforms=["cpu", "tpu"])(x)
    np.testing.assert_allclose(jax.jit(lambda x: x + exp.call(x))(x), x + np.sin(x),
                               rtol=1e-6)


def test_refuses_what_cannot_be_serialized():
    x = np.ones((3,), np.float32)
    callback = jax.jit(lambda x: jax.pure_callback(
        np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x))
    assert_named_error(lambda: export.export(callback)(x), NotImplementedError,
                       "serialization of host_callbacks is not yet implemented")
    sink = jax.jit(lambda x: jax.lax.dce_sink(x, prevent_mlir_dce=True) or x)
    assert_named_error(lambda: export.export(sink)(x), ValueError,
                       "Cannot serialize code with custom calls whose targets have no "
                       "compatibility guarantees.*\nstablehlo.custom_call @dce_sink")
    allowed = export.export(sink, disabled_checks=[
        export.DisabledSafetyCheck.custom_call("dce_sink")])(x)
    np.testing.assert_array_equal(allowed.call(x), x)
    cholesky = export.export(jax.jit(jnp.linalg.cholesky))(np.eye(3, dtype=np.float32))
    assert "lapack_spotrf_ffi" in cholesky.mlir_module()
