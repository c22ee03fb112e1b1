"""Symbolic dimensions (jax.export.symbolic_shape and friends): parsing, normal forms,
arithmetic, comparisons and their inconclusive cases, scopes and constraints;
printed forms and messages recorded from JAX 0.10.2."""
import re

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import export
from pyjax.errors import InconclusiveDimensionOperation
from harness import assert_named_error


def _strs(spec, **kw):
    return [str(d) for d in export.symbolic_shape(spec, **kw)]


def test_parse_and_print_in_jax_normal_form():
    assert _strs("b, 2*b, 3, b+1") == ["b", "2*b", "3", "b + 1"]
    assert _strs("a*b, b*a, a*b*b + a*a, floordiv(a, 2), mod(a,2)") == [
        "a*b", "a*b", "a*b^2 + a^2", "floordiv(a, 2)", "mod(a, 2)"]
    assert _strs("max(a, b), min(a,b), a^2, a*2, a + -1, a - -1") == [
        "max(a, b)", "min(a, b)", "a^2", "2*a", "a - 1", "a + 1"]
    assert _strs("(a + 1)") == ["a + 1"]
    assert _strs("-a, a-b, a - 2*b, floordiv(a + 3, 2), max(a, 0), a + 0") == [
        "- a", "- b + a", "- 2*b + a", "floordiv(a + 3, 2)", "a", "a"]
    assert _strs("(a, b)") == ["a", "b"]
    assert [type(d) for d in export.symbolic_shape("max(2,3), 0*a, a*0 + 3, -3")] == [int] * 4
    assert export.symbolic_shape("") == ()
    assert export.symbolic_shape(None, like=(2, 3)) == (2, 3)
    assert _strs("a, ...", like=(2, 3, 4)) == ["a", "3", "4"]
    assert _strs("a, _, 4", like=(2, 3, 4)) == ["a", "3", "4"]


def test_arithmetic_normal_forms():
    a, b, c = export.symbolic_shape("a, b, c")
    assert [str(x) for x in (a + b, b + a, 2 * a, a * 2, b * a, a // 2, a % 2)] == [
        "b + a", "b + a", "2*a", "2*a", "a*b", "floordiv(a, 2)", "mod(a, 2)"]
    assert (a - a, (2 * a) // 2, (2 * a) % 2) == (0, a, 0)
    assert type(a - a) is int
    assert [str(x) for x in ((2 * a + 4) // 2, a // b, 5 // a, 5 % a, a * a,
                             (a + 1) * (a - 1), a ** 2, -a, 2 - a, 3 * a - 2 * b + 7)] == [
        "a + 2", "floordiv(a, b)", "floordiv(5, a)", "mod(5, a)", "a^2", "a^2 - 1", "a^2",
        "- a", "- a + 2", "- 2*b + 3*a + 7"]
    assert [str(x) for x in divmod(a, 3)] == ["floordiv(a, 3)", "mod(a, 3)"]
    assert [str(x) for x in (a + b + c, c * b * a + 3 * a * b, a * b + 5 * c * c,
                             a // 2 + a, a + b // 2 + c % 2, -a * b, (-a) // 2,
                             (a - 10) % 3, a // -2)] == [
        "c + b + a", "a*b*c + 3*a*b", "a*b + 5*c^2", "floordiv(a, 2) + a",
        "mod(c, 2) + floordiv(b, 2) + a", "- a*b", "floordiv(- a, 2)", "mod(a - 10, 3)",
        "floordiv(a, - 2)"]
    assert str(a + np.int32(3)) == "a + 3" and str(np.int64(3) * a) == "3*a"
    assert str(np.prod((a, b, 3))) == "3*a*b"
    with pytest.raises(ZeroDivisionError):
        a // 0


def test_max_min_dim():
    a, b = export.symbolic_shape("a, b")
    assert jax.core.max_dim(2, 3) == 3 and jax.core.max_dim(a, a) is a
    assert [str(x) for x in (jax.core.max_dim(a, 3), jax.core.max_dim(a, 0),
                             jax.core.max_dim(a, 1), jax.core.min_dim(a, 1),
                             jax.core.max_dim(a, a + 1), jax.core.max_dim(a - 3, 0))] == [
        "max(a, 3)", "a", "a", "1", "a + 1", "max(a - 3, 0)"]
    assert jax.core.max_dim(a, b) >= a


def test_comparisons():
    a, b = export.symbolic_shape("a, b")
    assert (a == a, a == b, a == 1, a == 0, a != 0) == (True, False, False, False, True)
    assert (a >= 1, a > 0, a < 1, a + 1 > a) == (True, True, False, True)
    assert (a % 3 >= 0, a % 3 < 3, a // 3 >= 0, a // b >= 0, a % b < b) == (True,) * 5
    assert (-a <= 0, -a < 0, 3 - a <= 2) == (True, True, True)
    assert bool(a) and export.is_symbolic_dim(a)
    assert not export.is_symbolic_dim(3) and not export.is_symbolic_dim(a - a)
    msg = "Symbolic dimension comparison 'a' >= '2' is inconclusive.\nThis error arises"
    assert_named_error(lambda: a >= 2, InconclusiveDimensionOperation, msg)
    assert_named_error(lambda: a >= b, InconclusiveDimensionOperation, "'a' >= 'b'")
    assert_named_error(lambda: a * b >= a, InconclusiveDimensionOperation, "'a\\*b' >= 'a'")
    assert_named_error(lambda: int(a), InconclusiveDimensionOperation,
                       "Symbolic dimension 'a' used in a context that requires a constant")
    assert_named_error(lambda: float(a), TypeError, "float")


def test_scopes_and_constraints():
    scope = export.SymbolicScope(["a >= b", "b >= 3", "c == a + b"])
    a, b = export.symbolic_shape("a, b", scope=scope)
    assert (a >= b, a >= 3, a - b >= 0) == (True, True, True)
    assert_named_error(lambda: a > b, InconclusiveDimensionOperation,
                       "is inconclusive.\nUsing symbolic scope .* with constraints:\n"
                       "  a >= b\n  b >= 3\n  c == a \\+ b\n")
    other, = export.symbolic_shape("a")
    assert a != other
    assert_named_error(lambda: a + other, ValueError,
                       "Invalid mixing of symbolic scopes for linear combination")
    s2 = export.SymbolicScope(["c == a + b"])
    assert _strs("a, c, a+b", scope=s2) == ["a", "b + a", "b + a"]
    a2, b2, c2 = export.symbolic_shape("a, b, c", scope=s2)
    assert (c2 == a2 + b2, c2 >= a2, str(c2 - a2)) == (True, True, "b")
    # where it was made, as JAX writes it: file:line:column (function)
    assert re.search(r"^\d+ created at .*test_shape_poly.py:\d+:25 "
                     r"\(test_scopes_and_constraints\) with constraints:\n  a >= 2$",
                     str(export.SymbolicScope(["a >= 2"])))


def test_symbolic_args_specs():
    specs = export.symbolic_args_specs([np.zeros((2, 3)), np.zeros((4,))], ["a, b", "c"])
    assert [repr(s) for s in specs] == [
        "ShapeDtypeStruct(shape=(a, b), dtype=float32)",
        "ShapeDtypeStruct(shape=(c,), dtype=float32)"]
    spec, = export.symbolic_args_specs([np.zeros((2, 3))], "a, b")
    assert str(spec.shape) == "(a, b)"


@pytest.mark.parametrize("call, exc, match", [
    (lambda: export.symbolic_shape("a + "), ValueError,
     "syntax error in symbolic shape 'a \\+ ' in dimension 0: expecting one of "
     "{NAME, MINUS, NUMBER} but found ENDMARKER. Parsed '', remaining ''."),
    (lambda: export.symbolic_shape("3.5"), ValueError,
     "in dimension 0: expecting integer, found 3.5. Parsed '', remaining '3.5'."),
    (lambda: export.symbolic_shape("a b"), ValueError,
     "expecting one of {STAR} but found NAME. Parsed 'a ', remaining 'b'."),
    (lambda: export.symbolic_shape("2*(a+b)"), ValueError,
     "expecting one of {NAME, MINUS, NUMBER} but found LPAR. Parsed '2\\*', "
     "remaining '\\(a\\+b\\)'."),
    (lambda: export.symbolic_shape("a, _"), ValueError,
     "in dimension 1: spec contains ... but no 'like' shape was given. Parsed 'a, ', "
     "remaining '_'."),
    (lambda: export.symbolic_shape("a, 5", like=(2, 3)), ValueError,
     "in dimension 1: different size 5 for known dimension; like=\\(2, 3\\)."),
    (lambda: export.symbolic_shape(3), ValueError,
     "polymorphic shape spec should be None or a string. Found 3."),
    (lambda: export.SymbolicScope(["a > b"]), ValueError,
     "Constraint parsing error: must contain one of '==' or '>=' or '<='"),
    (lambda: export.SymbolicScope("a >= b"), ValueError,
     "The symbolic constraints should be a sequence of strings. Got 'a >= b'"),
    (lambda: export.SymbolicScope(["a + b == 2*c"]), ValueError,
     "Invalid equality constraint: {e1} == {e2}. The left-hand-side must be of the form "
     "`term \\* coefficient`."),
    (lambda: export.symbolic_shape("a", scope=export.SymbolicScope(), constraints=["a >= 2"]),
     ValueError, "Cannot specify both a `scope` and `constraints`."),
])
def test_bad_input(call, exc, match):
    assert_named_error(call, exc, match)


# --- exporting and calling shape-polymorphic functions --------------------------------------

def _export(f, spec, dtype=np.float32, **kw):
    return export.export(jax.jit(f))(
        jax.ShapeDtypeStruct(export.symbolic_shape(spec, **kw), dtype))


def test_export_elementwise_and_call_on_concrete_shapes():
    exp = _export(lambda x: x * 2 + 1, "3, a, a+8")
    assert repr(exp.in_avals) == repr(exp.out_avals) == "(ShapedArray(float32[3,a,a + 8]),)"
    assert exp.uses_global_constants
    text = exp.mlir_module()
    assert "jax.uses_shape_polymorphism = true" in text
    assert "tensor<3x?x?xf32>" in text and "stablehlo.dynamic_broadcast_in_dim" in text
    x = np.arange(48, dtype=np.float32).reshape(3, 4, 4)
    x = np.concatenate([x, x, x], axis=2)
    np.testing.assert_allclose(exp.call(x), x * 2 + 1)
    y = np.ones((3, 5, 13), np.float32)
    assert jax.jit(exp.call)(y).shape == (3, 5, 13)
    assert jax.grad(lambda x: exp.call(x).sum())(y).shape == (3, 5, 13)
    again = export.deserialize(exp.serialize())
    assert repr(again.in_avals) == "(ShapedArray(float32[3,a,a + 8]),)"
    np.testing.assert_allclose(again.call(y), y * 2 + 1)


def test_export_booleans_and_sin():
    exp = _export(jnp.logical_not, "b", np.bool_)
    assert exp.call(np.array([True, False])).tolist() == [False, True]
    x = np.arange(30, dtype=np.float32).reshape((5, 6))
    np.testing.assert_allclose(_export(jnp.sin, "w, h").call(x), np.sin(x), rtol=1e-6)


_ERRORS = "Please see https://docs.jax.dev/en/latest/export/shape_poly.html"


@pytest.mark.parametrize("spec, shape, match", [
    ("3, a, a+8", (3, 4, 13),
     "Input shapes do not match the polymorphic shapes specification. Found inconsistency "
     "between dimension size args[0].shape[2] (= 13) and the specification 'a + 8' (= 12). "
     "Using the following polymorphic shapes specifications: args[0].shape = (3, a, a + 8). "
     "Obtained dimension variables: 'a' = 4 from specification 'a' for dimension "
     "args[0].shape[1] (= 4), . " + _ERRORS),
    ("3, a, a+8", (2, 4, 12),
     "Shape mismatch for args[0].shape[0] (expected same constant): expected (3, a, a + 8) "
     "and called with (2, 4, 12)"),
    ("3, a, a+8", (4, 12),
     "Rank mismatch for args[0]: expected (3, a, a + 8) and called with (4, 12)"),
    ("6*a", (13,),
     "Input shapes do not match the polymorphic shapes specification. Division had "
     "remainder 1 when computing the value of 'a'. Using the following polymorphic shapes "
     "specifications: args[0].shape = (6*a,). Obtained dimension variables: . " + _ERRORS),
    ("a+1", (1,),
     "Expected value >= 1 for dimension variable 'a'. Using the following polymorphic "
     "shapes specifications: args[0].shape = (a + 1,). Obtained dimension variables: "
     "'a' = 0 from specification 'a + 1' for dimension args[0].shape[0] (= 1), . "),
])
def test_call_with_shapes_that_do_not_match(spec, shape, match):
    exp = _export(lambda x: x, spec)
    assert_named_error(lambda: exp.call(np.ones(shape, np.float32)), ValueError,
                       re.escape(match))


def test_call_breaking_a_constraint_and_unsolvable_specs():
    exp = _export(lambda x: x, "a, b", constraints=["a >= b"])
    assert_named_error(lambda: exp.call(np.ones((2, 3), np.float32)), ValueError, re.escape(
        "Input shapes do not match the symbolic shape constraint a >= b. Expected '- b + a' "
        "to be greater or equal to 0, but found -1.  Using the following polymorphic shapes "
        "specifications: args[0].shape = (a, b). Obtained dimension variables: 'a' = 2 from "
        "specification 'a' for dimension args[0].shape[0] (= 2), 'b' = 3 from specification "
        "'b' for dimension args[0].shape[1] (= 3), . " + _ERRORS))
    assert_named_error(lambda: _export(lambda x: x, "a*b"), ValueError,
                       "Cannot solve for values of dimension variables {'[ab]', '[ab]'}. We "
                       "can only solve linear uni-variate constraints. Using the following "
                       + re.escape("polymorphic shapes specifications: args[0].shape = (a*b,). "
                                 "Unprocessed specifications: 'a*b' for dimension size "
                                 "args[0].shape[0]."))


def _spec(spec, **kw):
    return jax.ShapeDtypeStruct(export.symbolic_shape(spec, **kw), np.float32)


def test_reshape_concatenate_and_broadcast_with_symbolic_sizes():
    exp = export.export(jax.jit(lambda x: jnp.reshape(x, (x.shape[0] * 2, -1)) * 2.))(
        _spec("b, 4"))
    assert repr(exp.out_avals) == "(ShapedArray(float32[2*b,2]),)"
    assert exp.call(np.ones((3, 4), np.float32)).shape == (6, 2)
    scope = export.SymbolicScope()
    exp = export.export(jax.jit(lambda a, b: jnp.concatenate([a, b], axis=0)))(
        _spec("2*w, h", scope=scope), _spec("w, h", scope=scope))
    assert repr(exp.out_avals) == "(ShapedArray(float32[3*w,h]),)"
    b, h = export.symbolic_shape("b, h")
    out = jax.eval_shape(lambda x, y: x + y, jax.ShapeDtypeStruct((b, h), np.float32),
                         jax.ShapeDtypeStruct((h,), np.float32))
    assert str(out.shape) == "(b, h)"


def test_calling_a_polymorphic_export_from_another_export():
    inner = export.export(jax.jit(lambda x: jnp.reshape(x, (-1, x.shape[1]))))(
        _spec("3,a,a+b"))
    assert repr(inner.out_avals) == "(ShapedArray(float32[3*b + 3*a,a]),)"
    outer = export.export(jax.jit(lambda x: inner.call(x) + x.reshape(-1, 4)))(
        _spec("3,4,12"))
    assert outer.uses_global_constants
    assert repr(outer.out_avals) == "(ShapedArray(float32[36,4]),)"
    arg = np.arange(144, dtype=np.float32).reshape(3, 4, 12)
    assert float(outer.call(arg).sum()) == 20592.0
    inner3 = export.export(jax.jit(lambda x: jnp.reshape(x, (-1, x.shape[1]))))(
        _spec("3,a,a+8"))
    outer3 = export.export(jax.jit(inner3.call))(_spec("3,c+2,c+10"))
    assert repr(outer3.out_avals) == "(ShapedArray(float32[3*c + 30,c + 2]),)"
    assert outer3.call(arg).shape == (36, 4)
    assert_named_error(
        lambda: export.export(jax.jit(inner.call))(_spec("3,c,d")), ValueError,
        re.escape("Expected value >= 1 for dimension variable 'b'. Using the following "
                  "polymorphic shapes specifications: args[0].shape = (3, a, b + a). "
                  "Obtained dimension variables: 'a' = c from specification 'a' for "
                  "dimension args[0].shape[1] (= c), 'b' = d - c from specification 'b + a' "
                  "for dimension args[0].shape[2] (= d), . "))


def test_export_refuses_two_scopes():
    assert_named_error(
        lambda: export.export(jax.jit(lambda a, b: jnp.concatenate([a, b], axis=1)))(
            _spec("w, h1"), _spec("w, h2")), ValueError,
        "Invalid mixing of symbolic scopes when exporting <lambda>.\nExpected current "
        "\\(from args\\[0\\]\\) scope .*\nand found for 'w' \\(args\\[1\\]\\) scope ")


@pytest.mark.parametrize("f, expected", [
    (lambda x: jnp.mean(x, axis=0), [4.0, 5.0, 6.0, 7.0]),
    (lambda x: x * x.shape[0], [[0.0, 3.0, 6.0, 9.0], [12.0, 15.0, 18.0, 21.0],
                                [24.0, 27.0, 30.0, 33.0]]),
    (lambda x: x + jnp.arange(x.shape[0], dtype=x.dtype).reshape((x.shape[0], 1)),
     [[0.0, 1.0, 2.0, 3.0], [5.0, 6.0, 7.0, 8.0], [10.0, 11.0, 12.0, 13.0]]),
    (lambda x: x.shape[0] + x, [[3.0, 4.0, 5.0, 6.0], [7.0, 8.0, 9.0, 10.0],
                                [11.0, 12.0, 13.0, 14.0]]),
    (lambda x: jnp.ones((x.shape[0], 2)) * 3., [[3.0, 3.0], [3.0, 3.0], [3.0, 3.0]]),
    (lambda x: jnp.sum(x) / x.size, 5.5),
])
def test_dimension_sizes_as_values(f, expected):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.asarray(export.export(jax.jit(f))(_spec("b, 4")).call(x)).tolist() == expected


def test_dimension_as_value_in_jaxprs_and_outside_export():
    jaxpr = jax.make_jaxpr(lambda x: x * x.shape[0])(_spec("b, 4"))
    assert "b:i32[] = dim_as_value[dim=b]" in str(jaxpr)
    assert "d:f32[b,4] = mul a c" in str(jaxpr)
    assert_named_error(lambda: export.symbolic_shape("b")[0] + jnp.ones(3),
                       NotImplementedError,
                       "Evaluation rule for 'dim_as_value' is not implemented. It seems "
                       "that you are using shape polymorphism outside jax.export.")


@pytest.mark.parametrize("f, out_shape, expected", [
    (lambda x: x[1:, :2], "(b - 1, 2)", [[4.0, 5.0], [8.0, 9.0], [12.0, 13.0], [16.0, 17.0]]),
    (lambda x: x[0], "(4,)", [0.0, 1.0, 2.0, 3.0]),
    (lambda x: x[-1], "(4,)", [16.0, 17.0, 18.0, 19.0]),
    (lambda x: x[:-2, 1], "(max(0, b - 2),)", [1.0, 5.0, 9.0]),
    (lambda x: x[::2, 0], "(floordiv(b + 1, 2),)", [0.0, 8.0, 16.0]),
    (lambda x: x[1:-1, 1:3], "(max(0, b - 2), 2)", [[5.0, 6.0], [9.0, 10.0], [13.0, 14.0]]),
    (lambda x: jnp.where(x > 17, x, 0.)[3:], "(- min(b, 3) + b, 4)",
     [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 18.0, 19.0]]),
    (lambda x: x[jnp.array([0, -1]), 0], "(2,)", [0.0, 16.0]),
    (lambda x: x[np.array([-1, 0]), 1], "(2,)", [17.0, 1.0]),
    (lambda x: x[jnp.argmax(x[:, 0])], "(4,)", [16.0, 17.0, 18.0, 19.0]),
])
def test_static_indexing_of_symbolic_dimensions(f, out_shape, expected):
    exp = export.export(jax.jit(f))(_spec("b, 4"))
    assert str(exp.out_avals[0].shape) == out_shape
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    assert np.asarray(exp.call(x)).tolist() == expected


def test_bounds_of_max_and_min_factors():
    b, = export.symbolic_shape("b")
    assert jax.core.max_dim(b - 2, 0) <= b and jax.core.min_dim(b, 3) <= 3
    assert b + 1 - jax.core.max_dim(b - 2, 0) >= 1


def test_nested_functions_take_the_dimension_variables():
    exp = export.export(jax.jit(lambda x: jax.jit(lambda y: y * 2)(x)))(_spec("b, 4"))
    assert 'jax.global_constant = "b"' in exp.mlir_module()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(exp.call(x), x * 2)
    var = export.export(jax.jit(lambda x: jnp.var(x, axis=0)))(_spec("b, 4"))
    np.testing.assert_allclose(var.call(x), np.var(x, axis=0), rtol=1e-6)


@pytest.mark.parametrize("f, expected", [
    (lambda x: jax.lax.cumsum(x, axis=0, reverse=True),
     [[3.0, 3.75, 4.5, 5.25], [3.0, 3.5, 4.0, 4.5], [2.0, 2.25, 2.5, 2.75]]),
    (lambda x: jnp.cumprod(x, axis=0),
     [[0.0, 0.25, 0.5, 0.75], [0.0, 0.312, 0.75, 1.312], [0.0, 0.703, 1.875, 3.609]]),
    (lambda x: jax.lax.cumlogsumexp(x, axis=0),
     [[0.0, 0.25, 0.5, 0.75], [1.313, 1.563, 1.813, 2.063], [2.408, 2.658, 2.908, 3.158]]),
    (lambda x: jax.grad(lambda x: jnp.cumsum(x, 0).sum())(x),
     [[3.0, 3.0, 3.0, 3.0], [2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0]]),
    (lambda x: jnp.cumsum(x.astype(np.int32), axis=0),
     [[0, 0, 0, 0], [1, 1, 1, 1], [3, 3, 3, 3]]),
    (lambda x: jax.lax.cummax(jnp.flip(x, 0), axis=0),
     [[2.0, 2.25, 2.5, 2.75], [2.0, 2.25, 2.5, 2.75], [2.0, 2.25, 2.5, 2.75]]),
])
def test_cumulative_reductions_over_a_symbolic_axis(f, expected):
    # a dynamic_reduce_window over the whole axis, as JAX lowers them, refined by XLA
    exp = export.deserialize(export.export(jax.jit(f))(_spec("b, 4")).serialize())
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    np.testing.assert_allclose(np.asarray(exp.call(x)), expected, atol=1e-3)
    assert "stablehlo.dynamic_reduce_window" in exp.mlir_module()


def test_attention_block_with_symbolic_sequence_length():
    # einsum picks its contraction order with symbolic sizes counted as 8, as JAX does
    def attention(x):
        w = jnp.cos(jnp.arange(64.0, dtype=np.float32)).reshape(8, 8)
        q, k = x @ w, x @ w.T
        s = jnp.einsum("bsd,btd->bst", q, k) / np.float32(8.0)
        n = x.shape[1]
        s = jnp.where(jnp.tril(jnp.ones((n, n), bool)), s, -1e9)
        o = jnp.einsum("bst,btd->bsd", jax.nn.softmax(s, axis=-1), x)
        return (o - o.mean(-1, keepdims=True)) / jnp.sqrt(o.var(-1, keepdims=True) + 1e-5)
    exp = export.deserialize(export.export(jax.jit(attention))(_spec("b, s, 8")).serialize())
    assert repr(exp.out_avals) == "(ShapedArray(float32[b,s,8]),)"
    x = np.sin(np.arange(48, dtype=np.float32)).reshape(2, 3, 8)
    np.testing.assert_allclose(np.asarray(exp.call(x))[:, :, :2], [
        [[-0.1044, 1.1645], [0.8846, 0.9909], [0.9957, -0.3299]],
        [[-1.1087, 0.0081], [-0.4237, 1.0009], [1.0553, 0.7392]]], atol=2e-4)


@pytest.mark.parametrize("f, expected", [
    (lambda x: jax.lax.fori_loop(0, x.shape[0], lambda i, c: c + x[i], jnp.zeros(4)),
     [12.0, 15.0, 18.0, 21.0]),
    (lambda x: jax.lax.dynamic_update_slice(x, jnp.ones((1, 4)), (x.shape[0] - 1, 0)),
     [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [1.0, 1.0, 1.0, 1.0]]),
    (lambda x: jax.lax.add(x, jax.lax.convert_element_type(x.shape[0], np.float32)),
     [[3.0, 4.0, 5.0, 6.0], [7.0, 8.0, 9.0, 10.0], [11.0, 12.0, 13.0, 14.0]]),
    (lambda x: jax.lax.dynamic_index_in_dim(x, x.shape[0] - 2, keepdims=False),
     [4.0, 5.0, 6.0, 7.0]),
])
def test_symbolic_dimensions_as_operands_of_primitives(f, expected):
    # a dimension passed where a value goes is staged as dim_as_value, as in JAX
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.asarray(export.export(jax.jit(f))(_spec("b, 4")).call(x)).tolist() == expected


@pytest.mark.parametrize("f, out_shape, expected", [
    (lambda x: x[jnp.arange(x.shape[0]) % 2], "(b, 4)",
     [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0]]),
    (lambda x: x[jnp.arange(x.shape[0])[:, None], jnp.array([0, 3])], "(b, 2)",
     [[0.0, 3.0], [4.0, 7.0], [8.0, 11.0]]),
    (lambda x: jnp.ones(x.shape[0] * 2).sum() + x[0], "(4,)", [6.0, 7.0, 8.0, 9.0]),
    (lambda x: jnp.zeros(x.shape[0]) + x[:, 1], "(b,)", [1.0, 5.0, 9.0]),
])
def test_index_arrays_and_shapes_of_symbolic_size(f, out_shape, expected):
    # advanced indices broadcast to symbolic shapes; a lone symbolic size is a shape
    exp = export.export(jax.jit(f))(_spec("b, 4"))
    assert str(exp.out_avals[0].shape) == out_shape
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.asarray(exp.call(x)).tolist() == expected


@pytest.mark.parametrize("f, expected", [
    (lambda x: x + jax.random.uniform(jax.random.key(0), x.shape),
     [[0.9476670026779175, 0.9785798788070679], [0.33229148387908936, 0.46866846084594727],
      [0.569888710975647, 0.16550302505493164]]),
    (lambda x: x + jax.random.normal(jax.random.key(1), x.shape, x.dtype),
     [[-0.15443718433380127, 0.08470727503299713], [-0.135980486869812, -0.15503625571727753],
      [1.266667366027832, 0.14829757809638977]]),
    (lambda x: jax.random.bits(jax.random.key(2), (x.shape[0],)),
     [2752176745, 3868056420, 987989481]),
])
def test_random_values_of_symbolic_shape(f, expected):
    # the counters of a symbolic count are computed in 64 bits, as JAX's iota_2x32_shape
    x = np.zeros((3, 2), np.float32)
    assert np.asarray(export.export(jax.jit(f))(_spec("b, 2")).call(x)).tolist() == expected


def test_conv_net_with_symbolic_batch_and_image_sizes():
    # a window count is max_dim(..., 0), decided by the bounds, as JAX's stride_dim
    kernel = np.cos(np.arange(54, dtype=np.float32)).reshape(3, 3, 2, 3)

    def convnet(x):
        y = jax.lax.conv_general_dilated(x, kernel, (1, 1), "SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jax.lax.reduce_window(jax.nn.relu(y), -np.inf, jax.lax.max, (1, 2, 2, 1),
                                     (1, 2, 2, 1), "VALID")
    exp = export.export(jax.jit(convnet))(_spec("b, h, w, 2"))
    assert repr(exp.out_avals) == \
        "(ShapedArray(float32[b,floordiv(h - 2, 2) + 1,floordiv(w - 2, 2) + 1,3]),)"
    x = np.sin(np.arange(80, dtype=np.float32)).reshape(2, 5, 4, 2)
    out = np.asarray(exp.call(x))
    assert out.shape == (2, 2, 2, 3)
    np.testing.assert_allclose(out[..., 0], [[[0.598, 0.5172], [1.4303, 1.4316]],
                                             [[0.8965, 0.5832], [0.5097, 1.2089]]], atol=2e-4)


def test_one_hot_with_a_symbolic_number_of_classes():
    spec = jax.ShapeDtypeStruct(export.symbolic_shape("b"), np.int32)
    exp = export.export(jax.jit(lambda x: jax.nn.one_hot(x, x.shape[0], axis=0)))(spec)
    assert repr(exp.out_avals) == "(ShapedArray(float32[b,b]),)"
    assert np.asarray(exp.call(np.array([2, 0, 5], np.int32))).tolist() == [
        [0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]


@pytest.mark.parametrize("f, expected", [
    (lambda x: jnp.take(x, jnp.array([0, 2]), axis=0), [[0.0, 1.0], [4.0, 5.0]]),
    (lambda x: x.at[jnp.array([1, 5, -1])].get(mode="fill", fill_value=-1.0),
     [[2.0, 3.0], [-1.0, -1.0], [4.0, 5.0]]),
    (lambda x: x.at[jnp.array([0, 7])].set(9.0, mode="drop"),
     [[9.0, 9.0], [2.0, 3.0], [4.0, 5.0]]),
])
def test_gathers_and_scatters_that_check_bounds_of_symbolic_size(f, expected):
    # the bounds of a fill-or-drop gather are computed from the shapes
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert np.asarray(export.export(jax.jit(f))(_spec("b, 2")).call(x)).tolist() == expected


@pytest.mark.parametrize("f, expected", [
    (lambda x: jax.lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(2), x),
     ([20.0, 25.0], [[0.0, 0.0], [0.0, 3.0], [8.0, 20.0], [36.0, 63.0], [96.0, 144.0]])),
    (lambda x: jax.lax.scan(lambda c, r: (c + r, c * r), jnp.ones(2), x, reverse=True),
     ([21.0, 26.0], [[0.0, 25.0], [38.0, 66.0], [60.0, 85.0], [54.0, 70.0], [8.0, 9.0]])),
    (lambda x: jax.grad(lambda x: jax.lax.scan(lambda c, r: (c * r, c), jnp.ones(2), x)[0]
                        .sum())(x),
     [[384.0, 945.0], [0.0, 315.0], [0.0, 189.0], [0.0, 135.0], [0.0, 105.0]]),
    (lambda x: jax.lax.map(lambda r: r.sum(), x), [1.0, 5.0, 9.0, 13.0, 17.0]),
])
def test_scan_over_a_symbolic_length(f, expected):
    # the loop runs to the length computed from the shapes, as JAX lowers it
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    out = export.export(jax.jit(f))(_spec("b, 2")).call(x)
    assert jax.tree_util.tree_map(lambda a: np.asarray(a).tolist(), out) == expected


@pytest.mark.parametrize("f, out_shape, expected", [
    (lambda x: jax.lax.dynamic_slice_in_dim(x, 0, x.shape[0] - 1), "(b - 1, 2)",
     [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]),
    (lambda x: jax.lax.dynamic_slice_in_dim(x, 3, x.shape[0] - 1), "(b - 1, 2)",
     [[2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]),
    (lambda x: jax.lax.dynamic_slice(x, (jnp.argmax(x[:, 0]), 1), (x.shape[0] // 2, 1)),
     "(floordiv(b, 2), 1)", [[5.0], [7.0]]),
    (lambda x: jax.grad(lambda x: jax.lax.dynamic_slice_in_dim(x, 1, x.shape[0] - 1).sum())(x),
     "(b, 2)", [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]),
])
def test_dynamic_slices_of_symbolic_size(f, out_shape, expected):
    # a real_dynamic_slice whose starts are clamped into bounds, as JAX lowers it
    spec = jax.ShapeDtypeStruct(export.symbolic_shape("b, 2", constraints=("b >= 2",)),
                                np.float32)
    exp = export.export(jax.jit(f))(spec)
    assert str(exp.out_avals[0].shape) == out_shape
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    assert np.asarray(exp.call(x)).tolist() == expected


@pytest.mark.parametrize("f, out_shape, expected, expected_one_row", [
    (lambda x: x[::-1], "(b, 2)",
     [[8.0, 9.0], [6.0, 7.0], [4.0, 5.0], [2.0, 3.0], [0.0, 1.0]], [[0.0, 1.0]]),
    (lambda x: x[::-2, 0], "(floordiv(b + 1, 2),)", [8.0, 4.0, 0.0], [0.0]),
    (lambda x: x[-2::-1, 1], "(b - 1,)", [7.0, 5.0, 3.0, 1.0], []),
    (lambda x: x[:1:-1, 0], "(- min(b - 1, 1) + b - 1,)", [8.0, 6.0, 4.0], []),
    (lambda x: x[3::-2, 0], "(floordiv(min(b - 1, 3) + 2, 2),)", [6.0, 2.0], [0.0]),
])
def test_negative_step_slices_of_symbolic_dimensions(f, out_shape, expected,
                                                     expected_one_row):
    # clamped as Python clamps a slice with a negative step, in JAX's symbolic forms
    exp = export.export(jax.jit(f))(_spec("b, 2"))
    assert str(exp.out_avals[0].shape) == out_shape
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    assert np.asarray(exp.call(x)).tolist() == expected
    assert np.asarray(exp.call(x[:1])).tolist() == expected_one_row


@pytest.mark.parametrize("f, out_shape, expected", [
    (lambda x: jax.lax.reduce_window(x, 0., jax.lax.add, (x.shape[0], 1), (1, 1), "VALID"),
     "(1, 4)", [[3.0, 3.75, 4.5, 5.25]]),
    (lambda x: jax.lax.reduce_window(x, -np.inf, jax.lax.max, (x.shape[0], 2), (1, 2),
                                     "VALID"), "(1, 2)", [[2.25, 2.75]]),
    (lambda x: jax.lax.reduce_window(x, 0., jax.lax.add, (x.shape[0], 1), (1, 1),
                                     ((x.shape[0] - 1, 0), (0, 0))), "(b, 4)",
     [[0.0, 0.25, 0.5, 0.75], [1.0, 1.5, 2.0, 2.5], [3.0, 3.75, 4.5, 5.25]]),
])
def test_reduce_window_with_symbolic_window_parameters(f, out_shape, expected):
    # stablehlo.dynamic_reduce_window, as JAX lowers a window of symbolic size
    exp = export.export(jax.jit(f))(_spec("b, 4"))
    assert str(exp.out_avals[0].shape) == out_shape
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    assert np.asarray(exp.call(x)).tolist() == expected
