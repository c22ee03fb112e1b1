"""jax.ffi: ffi_call lowers to the custom call JAX 0.10.2 emits (attributes in
mhlo.backend_config, layouts, aliases, side effects), runs jaxlib's LAPACK geqrf handler
eagerly, under jit and under every vmap_method, refuses what JAX refuses with JAX's
messages, and ships jaxlib's FFI headers. Expected text and values are JAX's."""
import os
import re
from functools import partial

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax


def test_public_names():
    assert sorted(n for n in dir(jax.ffi) if not n.startswith("_")) == [
        "build_ffi_lowering_function", "ffi_call", "ffi_lowering", "include_dir",
        "pycapsule", "register_ffi_target", "register_ffi_target_as_batch_partitionable",
        "register_ffi_type", "register_ffi_type_id"]


def _custom_call_line(fun, *args):
    text = jax.jit(fun).lower(*args).as_text()
    return next(line.strip() for line in text.splitlines() if "stablehlo.custom_call" in line)


def test_attributes_lower_into_mhlo_backend_config():
    def fun(x):
        return jax.ffi.ffi_call("test_ffi", x)(
            x, a=1, b=2.5, c=True, d="s", e=np.float32(1), f={"a": 1, "b": 2.0},
            g=np.arange(3), h=np.int8(3))
    assert _custom_call_line(fun, jnp.ones(5)) == (
        '%0 = stablehlo.custom_call @test_ffi(%arg0) {backend_config = "", '
        'mhlo.backend_config = {a = 1 : i64, b = 2.500000e+00 : f64, c = true, d = "s", '
        'e = 1.000000e+00 : f32, f = {a = 1 : i64, b = 2.000000e+00 : f64}, '
        'g = dense<[0, 1, 2]> : tensor<3xi64>, h = 3 : i8}, '
        'operand_layouts = [dense<0> : tensor<1xindex>], '
        'result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<5xf32>) -> tensor<5xf32>')
    jaxpr = str(jax.make_jaxpr(fun)(jnp.ones(5)))
    assert "('f', FrozenDict({'a': 1, 'b': 2.0}))" in jaxpr
    assert "('g', HashableArray(array([0, 1, 2])))" in jaxpr


def test_side_effects_aliases_and_several_results():
    def fun(x):
        return jax.ffi.ffi_call(
            "test", (x, jax.ShapeDtypeStruct((2,), np.int32)), has_side_effect=True,
            input_output_aliases={0: 0})(x)
    assert _custom_call_line(fun, jnp.ones(5)) == (
        '%0:2 = stablehlo.custom_call @test(%arg0) {backend_config = "", '
        'has_side_effect = true, mhlo.backend_config = {}, '
        'operand_layouts = [dense<0> : tensor<1xindex>], output_operand_aliases = '
        '[#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, '
        'operand_tuple_indices = []>], result_layouts = [dense<0> : tensor<1xindex>, '
        'dense<0> : tensor<1xindex>]} : (tensor<5xf32>) -> (tensor<5xf32>, tensor<2xi32>)')
    assert isinstance(jax.eval_shape(fun, jnp.ones(5)), tuple)
    legacy = jax.ffi.ffi_call("test", jnp.ones(5), custom_call_api_version=2,
                              legacy_backend_config="12345")
    assert 'backend_config = "12345"' in jax.jit(legacy).lower(jnp.ones(5)).as_text()
    wide = jax.ffi.ffi_call("test", jax.ShapeDtypeStruct((), np.int64))
    assert "tensor<i64>" in jax.jit(wide).lower().as_text()


def test_vmap_methods_stage_as_jax_does():
    def call(method):
        return lambda x, y: jax.ffi.ffi_call("test_ffi", x, vmap_method=method)(x, y)
    x, y = jnp.ones((3, 2)), jnp.ones(2)
    expand = jax.make_jaxpr(jax.vmap(call("expand_dims"), in_axes=(0, None)))(x, y)
    assert "c:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] b" in str(expand)
    assert "input_layouts=((1, 0), (1, 0))" in str(expand)
    every = jax.make_jaxpr(jax.vmap(call("broadcast_all"), in_axes=(0, None)))(x, y)
    assert "c:f32[3,2] = broadcast_in_dim[broadcast_dimensions=(1,)] b" in str(every)
    one_by_one = jax.make_jaxpr(jax.vmap(
        lambda v: jax.ffi.ffi_call("test_ffi", v, vmap_method="sequential")(v)))(x)
    assert one_by_one.eqns[0].primitive.name == "scan"


def _geqrf(x, **kwargs):
    ndim = x.ndim
    major_to_minor = tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)
    results = [x, jax.ShapeDtypeStruct(x.shape[:-2] + (min(*x.shape[-2:]),), x.dtype)]

    def call(x):
        return jax.ffi.ffi_call(
            "lapack_sgeqrf_ffi", results, input_output_aliases={0: 0},
            input_layouts=[major_to_minor], output_layouts=[major_to_minor, None],
            **kwargs)(x)
    return lax.platform_dependent(x, cpu=call)


def test_runs_a_lapack_handler_eagerly_jitted_and_batched():
    x = np.random.RandomState(0).randn(4, 3).astype(np.float32)
    for fun in (_geqrf, jax.jit(_geqrf)):
        np.testing.assert_allclose(fun(x)[1], [1.5814, 1.8653, 1.5946], atol=1e-4)
    xs = np.random.RandomState(1).randn(2, 4, 3).astype(np.float32)
    for method in ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all"):
        taus = jax.vmap(partial(_geqrf, vmap_method=method))(xs)[1]
        np.testing.assert_allclose(taus, [[1.6185, 1.2606, 1.1662], [1.199, 1.6678, 1.0337]],
                                   atol=1e-4)


@pytest.mark.parametrize("call, error, message", [
    (lambda: jax.ffi.ffi_call("test", None)(), ValueError,
     "All elements of result_shape_dtypes must have 'shape' and 'dtype' attributes. Got "
     "None at position 0."),
    (lambda: jax.ffi.ffi_call("test", (jax.ShapeDtypeStruct((), np.float32), ()))(),
     ValueError, "All elements of result_shape_dtypes.*position 1"),
    (lambda: jax.ffi.ffi_call("t", jax.ShapeDtypeStruct((), np.float32), vmap_method="x"),
     ValueError, "vmap_method must be on of the allowed methods ['sequential', "
     "'sequential_unrolled', 'expand_dims', 'broadcast_all', 'legacy_vectorized', None], "
     "but got: x"),
    (lambda: jax.jvp(lambda x: jax.ffi.ffi_call("test_ffi", x)(x), (0.5,), (0.5,)),
     ValueError, "The FFI call to `test_ffi` cannot be differentiated. You can use "
     "`jax.custom_jvp` or `jax.custom_jvp` to add support."),
    (lambda: jax.vmap(lambda x: jax.ffi.ffi_call("test_ffi", x)(x))(jnp.ones(3)),
     NotImplementedError, "vmap is only supported for the ffi_call primitive when "
     "vmap_method is one of 'sequential', 'sequential_unrolled', 'expand_dims', "
     "'broadcast_all', or 'legacy_vectorized'. Got vmap_method=None."),
    (lambda: jax.ffi.ffi_call("test", jnp.ones(5), input_output_aliases={1: 0})(
        jnp.ones(5)), ValueError, "with input index 1 outside the range [0, 1)."),
    (lambda: jax.ffi.ffi_call("test", jnp.ones(5), input_output_aliases={0: 1})(
        jnp.ones(5)), ValueError, "with output index 1 outside the range [0, 1)."),
    (lambda: jax.ffi.ffi_call("test", jax.ShapeDtypeStruct((5,), np.int32),
                              input_output_aliases={0: 0})(jnp.ones(5)),
     ValueError, "referring to an input with abstract value"),
    (lambda: jax.ffi.ffi_call("test", jnp.ones(5), legacy_backend_config="12345"),
     ValueError, "The use of the legacy_backend_config parameter requires "
     "custom_call_api_version < 4; got 4."),
    (lambda: jax.jit(lambda x: jax.ffi.ffi_call("test", x, custom_call_api_version=2)(
        x, attribute=1)).lower(jnp.ones(5)).as_text(), ValueError,
     "The use of ffi_call attributes requires a custom call API version of at least 4; "
     "got api_version=2."),
    (lambda: jax.ffi.register_ffi_type_id("t", None), ValueError,
     "register_ffi_type_id is not supported after jaxlib version 381."),
])
def test_bad_use_raises_as_jax_does(call, error, message):
    with pytest.raises(error, match=message if "*" in message else re.escape(message)):
        call()


def test_include_dir_holds_the_ffi_headers():
    base = os.path.join(jax.ffi.include_dir(), "xla", "ffi", "api")
    assert all(os.path.exists(os.path.join(base, h)) for h in ("c_api.h", "api.h", "ffi.h"))


def test_registered_handler_runs_under_its_new_name():
    from jaxlib.lapack import _lapack   # a compiled handler to register again
    jax.ffi.register_ffi_target("pyjax_test_sgeqrf", _lapack.registrations()[
        "lapack_sgeqrf_ffi"], platform="cpu", api_version=1)
    jax.ffi.register_ffi_target_as_batch_partitionable("pyjax_test_sgeqrf")
    x = np.random.RandomState(0).randn(4, 3).astype(np.float32)
    taus = jax.ffi.ffi_call("pyjax_test_sgeqrf", [x, jax.ShapeDtypeStruct((3,), np.float32)],
                            input_layouts=[(1, 0)], output_layouts=[(1, 0), None])(x)[1]
    np.testing.assert_allclose(taus, [1.5814, 1.8653, 1.5946], atol=1e-4)


def test_a_typed_key_is_passed_as_its_key_data():
    def f(key):
        return jax.ffi.ffi_call("edtype", (), has_side_effect=True)(key)
    assert _custom_call_line(f, jax.random.key(0)) == (
        'stablehlo.custom_call @edtype(%arg0) {backend_config = "", has_side_effect = true, '
        'mhlo.backend_config = {}, operand_layouts = [dense<0> : tensor<1xindex>], '
        'result_layouts = []} : (tensor<2xui32>) -> ()')


def test_ffi_lowering_inside_a_registered_lowering_rule():
    # ffi_test's pattern: a primitive's rule (JAX's form, MLIR's bindings) returns
    # jax.ffi.ffi_lowering(...)(ctx, x); its custom call is emitted inline, as JAX's
    from pyjax.extend.core import Primitive
    from pyjax.interpreters import mlir
    prim = Primitive("test_ffi_in_rule")
    prim.def_impl(lambda x: x)
    prim.def_abstract_eval(lambda x: x)
    mlir.register_lowering(prim, lambda ctx, x: jax.ffi.ffi_lowering(
        "test_ffi", operand_layouts=[(0, 1)], result_layouts=[None])(
            ctx, x, alpha=np.float32(2.0)))
    assert _custom_call_line(prim.bind, jnp.ones((2, 3))) == (
        '%0 = stablehlo.custom_call @test_ffi(%arg0) {backend_config = "", '
        "mhlo.backend_config = {alpha = 2.000000e+00 : f32}, operand_layouts = "
        "[dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : "
        "tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>")
