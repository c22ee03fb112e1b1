"""The private JAX names that libraries import (`jax._src.*`), served under the alias by
pyjax._src.jax_compat: each with the library that needs it, and what it must be."""
import importlib
import inspect
import re

import pytest

import pyjax
import pyjax.numpy as jnp

# (module under jax._src, name, library that imports it)
PRIVATE_NAMES = [
    ("traceback_util", "register_exclusion", "flax, equinox"),
    ("traceback_util", "api_boundary", "flax, equinox"),
    ("traceback_util", "include_frame", "equinox"),
    ("traceback_util", "_exclude_paths", "flax"),
    ("core", "ShapedArray", "equinox, flax"),
    ("core", "trace_state_clean", "numpyro"),
    ("core", "Tracer", "flax"),
    ("dtypes", "ExtendedDType", "flax"),
    ("dtypes", "TypePromotionError", "equinox"),
    ("compiler", None, "chex (restrict_backends)"),
    ("dispatch", "wait_for_tokens", "equinox"),
    ("flatten_util", "ravel_pytree", "blackjax"),
    ("tree_util", "_registry", "flax (nnx graph)"),
    ("tree_util", "prefix_errors", "flax (struct_test)"),
    ("checkify", "checkify", "flax (nnx)"),
    ("xla_bridge", "_backends", "chex (set_n_cpu_devices)"),
    ("xla_bridge", "backends", "chex"),
    ("util", "safe_map", "JAX's Writing custom interpreters notebook"),
    ("util", "safe_zip", "JAX's Writing custom interpreters notebook"),
    *[("api", name, "JAX's How JAX primitives work page")
      for name in ("grad", "jit", "jvp", "vjp", "vmap")],
    *[("lax.lax", name, "JAX's How JAX primitives work page")
      for name in ("add", "mul", "full_like")],
    ("lib.mlir", "ir", "lowering rules written with MLIR's bindings"),
    ("lib.mlir.dialects", "hlo", "JAX's How JAX primitives work page"),
    ("xla_bridge", "get_backend", "JAX's Autodidax (part 3)"),
    ("lib", "xla_client", "JAX's Autodidax (part 3)"),
    ("interpreters.mlir", "custom_call", "JAX's Exporting and serializing page"),
    ("interpreters.mlir", "register_lowering", "JAX's Exporting and serializing page"),
]


@pytest.fixture(scope="module", autouse=True)
def aliased():
    pyjax.alias_jax()


@pytest.mark.parametrize("module,name,library", PRIVATE_NAMES)
def test_private_name_is_served(module, name, library):
    mod = importlib.import_module(f"jax._src.{module}")
    assert mod.__name__ == f"pyjax._src.jax_compat.{module}", library
    if name is not None:
        assert hasattr(mod, name), f"jax._src.{module}.{name} (needed by {library})"


def test_served_names_behave():
    from jax._src import core, dtypes, traceback_util, tree_util
    from jax._src.dispatch import wait_for_tokens
    assert core.ShapedArray is pyjax.core.ShapedArray and core.trace_state_clean()
    key_dtype = pyjax.random.key(0).dtype
    assert isinstance(key_dtype, dtypes.ExtendedDType)
    assert pyjax.tree_util.Partial in tree_util._registry   # registered node types
    wait_for_tokens()
    traceback_util.register_exclusion("/some/library/")
    assert "/some/library/" in traceback_util._exclude_paths
    assert traceback_util.api_boundary(len) is len
    with pytest.raises(AttributeError, match="chex.restrict_backends is not supported"):
        importlib.import_module("jax._src.compiler").backend_compile_and_load()
    assert jnp.ones(2).shape == (2,)
    from jax._src.util import safe_map, safe_zip
    assert safe_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    assert safe_zip([1], ["a"]) == [(1, "a")]
    with pytest.raises(ValueError, match="length mismatch"):
        safe_map(lambda a, b: a, [1, 2], [3])


def test_src_modules_are_attributes_of_jax():
    # JAX imports its _src modules eagerly: chex reads jax._src.xla_bridge._backends
    # after a bare `import jax`.
    import jax
    assert jax._src.xla_bridge.__name__ == "pyjax._src.jax_compat.xla_bridge"
    with pytest.raises(AttributeError, match="does not serve it"):
        _ = jax._src.no_such_module


def test_xla_bridge_backends_are_the_clients_made():
    from jax._src import xla_bridge
    made = xla_bridge.backends()            # makes the client, as in JAX
    assert list(made) == [pyjax.devices()[0].client.platform] == ["cpu"]
    assert xla_bridge._backends == made     # read live, not a snapshot


def test_jitted_function_type_is_named_as_in_jax():
    # chex.assert_max_traces refuses to wrap a jitted function, found by this type name.
    assert type(pyjax.jit(lambda x: x)).__name__ == "PjitFunction"


def test_jitted_function_has_the_signature_of_its_function():
    # chex.fake_pmap reads inspect.signature(fn, follow_wrapped=False) of a jitted fn.
    def f(a, b=1, *, c):
        return a

    assert str(inspect.signature(pyjax.jit(f, static_argnums=1),
                                 follow_wrapped=False)) == "(a, b=1, *, c)"


def test_registry_holds_builtin_containers_as_in_jax():
    # flax's nnx graph tells pytree nodes from leaves by `type(x) in _registry`; JAX's
    # registry holds the builtin containers as well as registered types.
    import collections

    from jax._src.tree_util import _registry
    for node_type in (tuple, list, dict, type(None), collections.OrderedDict,
                      collections.defaultdict, pyjax.tree_util.Partial):
        assert node_type in _registry, node_type
    assert int not in _registry and jnp.ndarray not in _registry
    to_iter, from_iter = _registry[dict]
    children, keys = to_iter({"b": 1, "a": 2})
    assert list(children) == [2, 1] and from_iter(keys, [5, 6]) == {"a": 5, "b": 6}
    assert _registry[collections.OrderedDict].to_iter(collections.OrderedDict(b=1, a=2)) \
        == ([1, 2], ["b", "a"])
    assert list(_registry)[:4] == [tuple, list, dict, type(None)]   # JAX's order


def test_prefix_errors_describe_where_a_prefix_does_not_fit():
    # flax's struct_test reads JAX's private prefix_errors
    from jax._src.tree_util import prefix_errors
    (err,) = prefix_errors((1, [2]), (1, 2.0))
    assert str(err("in_axes")) == (
        "pytree structure error: different types at key path\n    in_axes[1]\nAt that key "
        "path, the prefix pytree in_axes has a subtree of type\n    <class 'list'>\nbut at "
        "the same key path the full pytree has a subtree of different type\n    "
        "<class 'float'>.")
    assert prefix_errors([1, 2], [1, (2, 3)]) == []


def test_lib_reports_the_jaxlib_version():
    # equinox's test_while_loop imports jax.lib and compares jax.lib.__version__; JAX
    # 0.10.2 reports its jaxlib's version, "0.10.2", the one pyjax runs on.
    import pyjax.lib
    assert pyjax.lib.__version__ == "0.10.2"


def test_mlir_bindings_are_jaxlibs():
    from jax._src.lib.mlir import dialects, ir
    assert ir.__name__ == "jaxlib.mlir.ir"
    assert dialects.hlo.__name__ == "jaxlib.mlir.dialects.stablehlo"
    assert dialects.func.FuncOp.OPERATION_NAME == "func.func"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = dialects.nothing


def test_autodidax_compiles_its_own_module_on_the_backend():
    """Autodidax part 3 builds a module with the bindings, compiles it on the backend's
    client and puts its arguments on the device with jaxlib's xla_client."""
    import io

    import numpy as np
    from jax._src import xla_bridge as xb
    from jax._src.core import ShapedArray
    from jax._src.lib import xla_client as xc
    from jax.extend.mlir import ir
    from jax.extend.mlir.dialects import func
    from jax.extend.mlir.dialects import stablehlo as hlo

    with ir.Context() as ctx, ir.Location.unknown(ctx):
        hlo.register_dialect(ctx)
        module = ir.Module.create()
        scalar = ir.RankedTensorType.get((), ir.F64Type.get())
        with ir.InsertionPoint(module.body):
            @func.func(scalar, scalar)
            def main(x, y):
                return [hlo.multiply(hlo.sine(x), hlo.cosine(y))]
    output = io.StringIO()
    module.operation.print(file=output)
    backend = xb.get_backend(None)
    assert xb.get_backend("cpu") is backend
    compiled = backend.compile_and_load(output.getvalue(), backend.devices()[:1])
    device = backend.devices()[0]
    bufs = [xc.batched_device_put(ShapedArray((), np.float64),
                                  xc.GSPMDSharding((device,), xc.OpSharding()),
                                  [np.float64(v)], [device], True, enable_x64=True)
            for v in (3.0, 4.0)]
    (out,) = compiled.execute(bufs)
    assert float(np.asarray(out)) == -0.09224219304455371   # JAX's Autodidax prints it
    with pytest.raises(RuntimeError, match=re.escape(
            "Unknown backend foo. Available backends are ['cpu']")):
        xb.get_backend("foo")


def test_custom_call_lowering_as_the_export_page_writes_it():
    import numpy as np
    from jax import export
    from jax._src import core
    from jax._src.interpreters import mlir

    new_prim = core.Primitive("new_prim")
    new_prim.def_abstract_eval(lambda x: x)
    mlir.register_lowering(new_prim, lambda ctx, o: mlir.custom_call(
        "my_new_prim", operands=[o], result_types=[o.type]).results)
    f = pyjax.jit(new_prim.bind)
    assert str(f.lower(1.0).compiler_ir()).splitlines()[2].strip() == (
        '%0 = stablehlo.custom_call @my_new_prim(%arg0) {api_version = 2 : i32, '
        'backend_config = ""} : (tensor<f32>) -> tensor<f32>')
    with pytest.raises(ValueError, match="Cannot serialize code with custom calls whose "
                       "targets have no compatibility guarantees"):
        export.export(f)(1.0)
    export.export(f, disabled_checks=[
        export.DisabledSafetyCheck.custom_call("my_new_prim")])(1.0)

    pair_p = core.Primitive("pair")
    pair_p.multiple_results = True
    pair_p.def_abstract_eval(lambda x: [x, x])
    mlir.register_lowering(pair_p, lambda ctx, x: mlir.custom_call(
        "t", operands=[x], result_types=[x.type, x.type],
        backend_config={"k": mlir.i32_attr(3)}, has_side_effect=True,
        operand_output_aliases={0: 1}, operand_layouts=[(0,)],
        result_layouts=[(0,), (0,)]).results)
    text = pyjax.jit(pair_p.bind).lower(np.ones(3, np.float32)).as_text()
    assert text.splitlines()[2].strip() == (   # JAX's
        '%0:2 = stablehlo.custom_call @t(%arg0) {backend_config = "", has_side_effect = '
        'true, mhlo.backend_config = {k = 3 : i32}, operand_layouts = [dense<0> : '
        'tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<'
        'output_tuple_indices = [1], operand_index = 0, operand_tuple_indices = []>], '
        'result_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : '
        '(tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)')
