"""Lowering rules written with MLIR's Python bindings (jax.extend.mlir, jaxlib's), as JAX's
"How JAX primitives work" page writes them: the rule builds ops on the block arguments of
a function of the equation's operand types, which joins pyjax's printed module. Values and
printed forms are JAX 0.10.2's for the same programs."""
import threading

import numpy as np
import pytest

import pyjax as jax
import pyjax.extend.mlir
import pyjax.numpy as jnp
from harness import close
from pyjax.core import ShapedArray
from pyjax.extend.core import Primitive
from pyjax.extend.mlir import ir
from pyjax.extend.mlir.dialects import func
from pyjax.extend.mlir.dialects import stablehlo as hlo
from pyjax.interpreters import ad, mlir

X = jnp.arange(3.0)


def _primitive(name, rule, multiple_results=False):
    p = Primitive(name)
    p.multiple_results = multiple_results
    p.def_impl(lambda x: [x, x] if multiple_results else x)
    p.def_abstract_eval(lambda x: [x, x] if multiple_results else x)
    mlir.register_lowering(p, rule)
    return p


# multiply_add(x, y, z) = x * y + z, lowered as the page lowers it
multiply_add_p = Primitive("multiply_add")
multiply_add_p.def_impl(lambda x, y, z: x * y + z)
multiply_add_p.def_abstract_eval(lambda x, y, z: x)
mlir.register_lowering(multiply_add_p, lambda ctx, xc, yc, zc: [
    hlo.AddOp(hlo.MulOp(xc, yc), zc).result], platform="cpu")
ad.primitive_jvps[multiply_add_p] = lambda primals, tangents: (
    multiply_add_p.bind(*primals),
    multiply_add_p.bind(ad.instantiate_zeros(tangents[0]), primals[1], 0.0 * primals[2])
    + multiply_add_p.bind(primals[0], ad.instantiate_zeros(tangents[1]),
                          ad.instantiate_zeros(tangents[2])))


def test_multiply_add_lowers_with_hlo_ops():
    square_add = jax.jit(lambda a, b: multiply_add_p.bind(a, a, b))
    assert float(square_add(2.0, 10.0)) == 14.0
    primal, tangent = jax.jit(lambda a, t: jax.jvp(lambda v: multiply_add_p.bind(v, v, 10.0),
                                                    (a,), (t,)))(2.0, 1.0)
    assert (float(primal), float(tangent)) == (14.0, 4.0)
    # the rule's ops are emitted inline, at the equation's location, as JAX prints them
    text = square_add.lower(2.0, 10.0).as_text()
    assert text.splitlines()[2:4] == ["    %0 = stablehlo.multiply %arg0, %arg0 : tensor<f32>",
                                      "    %1 = stablehlo.add %0, %arg1 : tensor<f32>"]
    hlo_text = square_add.lower(2.0, 10.0).as_text(dialect="hlo", debug_info=True)
    assert 'add(multiply_add.2, Arg_1.1), metadata={op_name="jit(<lambda>)/multiply_add"' \
        in hlo_text


def test_rule_with_regions_and_several_results():
    sum_max_p = Primitive("test_sum_and_max")
    sum_max_p.multiple_results = True
    sum_max_p.def_impl(lambda x: [x.sum(0), x.max(0)])
    sum_max_p.def_abstract_eval(lambda x: [ShapedArray(x.shape[1:], x.dtype)] * 2)

    def rule(ctx, x):
        out_type = mlir.aval_to_ir_type(ctx.module_context, ctx.avals_out[0])
        scalar = mlir.aval_to_ir_type(ctx.module_context, ShapedArray((), np.float32))
        outs = []
        for init, op in ((0.0, hlo.add), (-np.inf, hlo.maximum)):
            reduce = hlo.ReduceOp([out_type], [x], [mlir.ir_constant(np.float32(init))],
                                  mlir.dense_int_array([0]))
            region = reduce.body.blocks.append(scalar, scalar)
            with ir.InsertionPoint(region):
                hlo.return_([op(*region.arguments)])
            outs.append(reduce.result)
        return outs
    mlir.register_lowering(sum_max_p, rule)
    f = jax.jit(lambda x: sum_max_p.bind(jnp.sin(x)))
    total, largest = f(jnp.arange(6.0).reshape(3, 2))
    close(total, [0.1524949, 0.02366668])
    close(largest, [0.9092974, 0.84147096])
    assert ("%2 = stablehlo.reduce(%0 init: %cst_0) applies stablehlo.maximum across "
            "dimensions = [0]") in f.lower(jnp.zeros((3, 2))).as_text()


def test_rule_gets_block_arguments_and_jaxs_helpers():
    seen = {}

    def rule(ctx, x):
        seen["x"], seen["ctx"] = str(x), repr(ctx)
        seen["avals"] = (ctx.avals_in, ctx.avals_out)
        c = mlir.ir_constant(np.float32(2.0))
        seen["types"] = [str(c.type), str(mlir.ir_constant(np.array([1, 2], np.uint8)).type),
                         str(mlir.aval_to_ir_type(ctx.module_context, ctx.avals_in[0])),
                         str(mlir.dtype_to_ir_type(np.dtype("uint32"))),
                         str(mlir.dtype_to_ir_type(np.dtype(jnp.bfloat16)))]
        seen["attrs"] = [str(mlir.dense_int_array([1, 2])), str(mlir.i64_attr(3)),
                         str(mlir.i32_attr(4))]
        return [hlo.multiply(x, hlo.broadcast_in_dim(x.type, c, mlir.dense_int_array([])))]
    p = _primitive("test_double", rule)
    close(jax.jit(p.bind)(X), [0.0, 2.0, 4.0])
    assert seen["x"] == "BlockArgument(<block argument> of type 'tensor<3xf32>' at index: 0)"
    # JAX's dataclass repr, of the fields pyjax's context has
    assert seen["ctx"].startswith("LoweringRuleContext(module_context=ModuleContext(context=")
    assert seen["ctx"].endswith(", platforms=('cpu',), keepalives=[]), primitive=test_double, "
                                "avals_in=(ShapedArray(float32[3]),), "
                                "avals_out=[ShapedArray(float32[3])])")
    avals_in, avals_out = seen["avals"]   # a tuple and a list, as JAX's
    assert (type(avals_in), type(avals_out)) == (tuple, list)
    assert [str(a) for a in [*avals_in, *avals_out]] == ["float32[3]", "float32[3]"]
    assert seen["types"] == ["tensor<f32>", "tensor<2xui8>", "tensor<3xf32>", "ui32", "bf16"]
    assert seen["attrs"] == ["array<i64: 1, 2>", "3 : i64", "4 : i32"]
    assert isinstance(mlir.ir, type(ir)) and mlir.ir.Value is ir.Value


def test_rule_results_a_list_several_or_one_value():
    p = _primitive("test_negexp", lambda ctx, x: [hlo.negate(x), hlo.exponential(x)],
                   multiple_results=True)
    neg, exp = jax.jit(p.bind)(X)
    close(neg, [-0.0, -1.0, -2.0])
    close(exp, [1.0, 2.7182817, 7.389056])
    p = _primitive("test_neg", lambda ctx, x: hlo.negate(x))
    close(jax.jit(p.bind)(X), [-0.0, -1.0, -2.0])


def test_lower_fun_inside_a_rule():
    def rule(ctx, x):
        (y,) = mlir.lower_fun(lambda a: jnp.sin(a) * 2, multiple_results=False)(ctx, x)
        return [hlo.add(y, x)]
    p = _primitive("test_sin_plus", rule)
    close(jax.jit(p.bind)(X), [0.0, 2.682942, 3.818595])


def test_invalid_rules_raise_mlirs_errors():
    wrong = _primitive("test_wrong_type", lambda ctx, x: [hlo.convert(
        mlir.aval_to_ir_type(ctx.module_context, ctx.avals_in[0].update(dtype=np.int32)),
        x)])
    with pytest.raises(ValueError, match=r"Cannot lower jaxpr with verifier errors:\n\t"
                       r"type of return operand 0 \('tensor<3xi32>'\) doesn't match "
                       r"function result type \('tensor<3xf32>'\)"):
        jax.jit(wrong.bind)(X)
    ranks = _primitive("test_ranks", lambda ctx, x: [
        hlo.add(x, mlir.ir_constant(np.float32(1)))])
    with pytest.raises(ir.MLIRError, match="Mismatched ranks"):
        jax.jit(ranks.bind)(X)


def test_extend_mlir_names_and_portable_artifacts():
    names = sorted(n for n in vars(pyjax.extend.mlir)
                   if not n.startswith("_") and n not in ("dialects", "ir", "passmanager"))
    # JAX's also has lower_with_sharding_in_types, a function of JAX's own lowering
    assert names == ["deserialize_portable_artifact", "hlo_to_stablehlo",
                     "refine_polymorphic_shapes", "serialize_portable_artifact"]
    text = jax.jit(jnp.sin).lower(X).as_text()
    blob = pyjax.extend.mlir.serialize_portable_artifact(text, "1.0.0", True)
    with ir.Context() as ctx:
        hlo.register_dialect(ctx)
        module = pyjax.extend.mlir.deserialize_portable_artifact(blob)
        assert "stablehlo.sine" in str(module)


def test_functions_a_rule_defines_join_the_module():
    p = Primitive("test_twice_sine")
    p.def_impl(lambda x: np.sin(np.sin(x)))
    p.def_abstract_eval(lambda x: x)

    def rule(ctx, x):
        with ir.InsertionPoint(ctx.module_context.module.body):
            helper = func.FuncOp("sine_helper", ir.FunctionType.get([x.type], [x.type]))
            helper.sym_visibility = ir.StringAttr.get("private")
            block = helper.add_entry_block()
            with ir.InsertionPoint(block):
                func.ReturnOp([hlo.sine(block.arguments[0])])
        ctx.module_context.symbol_table.insert(helper)   # as JAX's rules name theirs
        return [func.CallOp(helper, [func.CallOp(helper, [x]).result]).result]
    mlir.register_lowering(p, rule)
    f = jax.jit(lambda a: p.bind(a) + p.bind(a * 2))
    close(f(X), [0.0, 1.5346965, 0.10247207])
    text = f.lower(X).as_text()   # each equation's helper named apart
    assert "%1 = call @sine_helper(%0)" in text and "%5 = call @sine_helper_1(%4)" in text


def test_rule_context_types_and_replace():
    p = Primitive("test_sum_sq")
    p.def_impl(lambda x: (x * x).sum())
    p.def_abstract_eval(lambda x: ShapedArray((), x.dtype))

    def rule(ctx: mlir.LoweringRuleContext, x: mlir.Value):   # JAX's annotations
        assert isinstance(ctx, mlir.LoweringRuleContext)
        assert isinstance(ctx.module_context, mlir.ModuleContext)
        with pytest.raises(TypeError, match="LoweringRuleContext.__init__\\(\\) got an "
                           "unexpected keyword argument 'bad'"):
            ctx.replace(bad=1)
        square = hlo.multiply(x, x)
        return mlir.lower_fun(jnp.sum, multiple_results=False)(
            ctx.replace(avals_in=ctx.avals_in), square)
    mlir.register_lowering(p, rule)
    assert float(jax.jit(p.bind)(jnp.arange(4.0))) == 14.0
    with ir.Context() as context:
        hlo.register_dialect(context)
        assert str(mlir.token_type()) == "!stablehlo.token"


def test_rules_lower_from_many_threads():
    p = Primitive("test_ma_threads")
    p.def_impl(lambda x, y, z: x * y + z)
    p.def_abstract_eval(lambda x, y, z: x)
    mlir.register_lowering(p, lambda ctx, x, y, z: [hlo.add(hlo.multiply(x, y), z)])
    results = {}

    def work(i):
        f = jax.jit(lambda a, b: p.bind(a, a, b) + i)
        results[i] = f(jnp.full(i + 2, 2.0), jnp.ones(i + 2))
    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(6):
        close(results[i], np.full(i + 2, 5.0 + i))


def test_attribute_and_constant_helpers_print_as_jaxs():
    with mlir.make_ir_context(), ir.Location.unknown():
        values = ["s", b"b", True, 3, 2.5, np.float32(1.5), np.int8(3),
                  np.array([1, 2], np.int32), np.dtype(np.float32),
                  {"a": 1, "b": [1.0, "x"]}, (1, 2)]
        assert [str(mlir.ir_attribute(v)) for v in values] == [
            '"s"', '"b"', "true", "3 : i64", "2.500000e+00 : f64", "1.500000e+00 : f32",
            "3 : i8", "dense<[1, 2]> : tensor<2xi32>", "f32",
            '{a = 1 : i64, b = [1.000000e+00, "x"]}', "[1, 2]"]
        with pytest.raises(TypeError, match="No attribute handler defined for type: "
                           "<class 'object'>"):
            mlir.ir_attribute(object())
        assert str(mlir.dense_int_elements([1, 2])) == "dense<[1, 2]> : tensor<2xi64>"
        (c,) = mlir.ir_constants(np.array([1.0, 2.0], np.float32))
        assert str(c.type) == "tensor<2xf32>"
