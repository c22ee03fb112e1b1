"""Primitives a library defines through JAX's extension API (jax.extend.core.Primitive and
the rule tables of jax.interpreters.ad/batching/mlir, as equinox does) run eagerly, under
jit (lowered through pyjax's StableHLO printer), grad, vmap and transposition. Values are
JAX 0.10.2's for the same program."""
import re
import typing

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.extend import linear_util as lu
from pyjax.extend.core import (Primitive, find_top_trace, get_opaque_trace_state, mapped_aval,
                               trace_state_clean, unmapped_aval)
from pyjax.interpreters import ad, batching, mlir

# scale(x, c) = c * x: linear in x, with a transpose rule.
scale_p = Primitive("test_scale")
scale_p.def_impl(lambda x, *, c: x * c)
scale_p.def_abstract_eval(lambda x, *, c: x)
ad.primitive_jvps[scale_p] = lambda primals, tangents, *, c: (
    scale_p.bind(primals[0], c=c), ad.instantiate_zeros(tangents[0]) * c)
ad.primitive_transposes[scale_p] = lambda ct, x, *, c: [scale_p.bind(ct, c=c)]
batching.primitive_batchers[scale_p] = lambda args, dims, *, c: (
    scale_p.bind(args[0], c=c), dims[0])
mlir.register_lowering(scale_p, mlir.lower_fun(lambda x, *, c: x * c, multiple_results=False))

# sincos(x) -> [sin x, cos x]: multiple results, a JVP rule, an axis-aware batcher.
sincos_p = Primitive("test_sincos")
sincos_p.multiple_results = True
sincos_p.def_impl(lambda x: [jnp.sin(x), jnp.cos(x)])
sincos_p.def_abstract_eval(lambda x: [x, x])


def sincos_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    s, c = sincos_p.bind(x)
    return [s, c], [c * t, -s * t]


def sincos_batch(axis_size, axis_name, trace_type, args, dims):
    (x,), (d,) = args, dims
    x = jnp.moveaxis(x, d, 0) if d is not None else jnp.broadcast_to(x, (axis_size,) + x.shape)
    return sincos_p.bind(x), [0, 0]


ad.primitive_jvps[sincos_p] = sincos_jvp
batching.axis_primitive_batchers[sincos_p] = sincos_batch
mlir.register_lowering(sincos_p, mlir.lower_fun(lambda x: [jnp.sin(x), jnp.cos(x)],
                                                multiple_results=True))


def f(x):
    s, c = sincos_p.bind(scale_p.bind(x, c=3.0))
    return jnp.sum(s * c)


X = jnp.array([0.1, 0.2, 0.3], jnp.float32)


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_extension_primitive_under_every_transformation():
    close(f(X), 1.2352646589279175)
    close(jax.jit(f)(X), 1.235264539718628)
    close(jax.grad(f)(X), [2.4760069847106934, 1.0870732069015503, -0.6816065311431885])
    close(jax.jit(jax.grad(f))(X), [2.4760069847106934, 1.0870733261108398, -0.6816065907478333])
    close(jax.vmap(f)(jnp.stack([X, 2 * X])), [1.2352646589279175, 0.5824908018112183])
    close(jax.linear_transpose(lambda v: scale_p.bind(v, c=3.0), X)(jnp.ones(3))[0], [3.0] * 3)
    vjp = jax.jit(lambda v: jax.vjp(lambda u: scale_p.bind(u, c=2.0), v)[1](jnp.ones(3))[0])
    close(vjp(X), [2.0] * 3)


def test_transpose_rule_sees_known_inputs_as_they_were_given():
    # mul_by(x, s) = x * s, linear in x. JAX 0.10.2 hands its transpose rule the known
    # input s as it was given: an Array (closed over or an argument) stays an Array, a
    # Python scalar stays a float (equinox's filter_primitive_transpose counts the Array
    # leaves of its inputs, and miscounted with a Python scalar for an Array).
    mul_by_p = Primitive("test_mul_by")
    mul_by_p.def_impl(lambda x, s: x * s)
    mul_by_p.def_abstract_eval(lambda x, s: x)
    seen = []

    def transpose(ct, x, s):
        seen.append((type(x), type(s)))
        return [mul_by_p.bind(ct, s), None]
    ad.primitive_jvps[mul_by_p] = lambda p, t: (mul_by_p.bind(*p), mul_by_p.bind(t[0], p[1]))
    ad.primitive_transposes[mul_by_p] = transpose
    s = jnp.array(5.0)
    assert float(jax.grad(lambda x: mul_by_p.bind(x, s))(2.0)) == 5.0
    assert float(jax.grad(lambda x, s: mul_by_p.bind(x, s))(2.0, jnp.array(5.0))) == 5.0
    assert float(jax.grad(lambda x: mul_by_p.bind(x, 4.0))(2.0)) == 4.0
    assert all(t is ad.UndefinedPrimal for t, _ in seen)
    assert [issubclass(t, jax.Array) for _, t in seen] == [True, True, False]
    assert seen[2][1] is float


def test_custom_jvp_call_rebinds_with_jax_bind_params():
    # JAX 0.10.2's get_bind_params of a custom_jvp_call equation gives `subfuns`, the
    # call's function and its JVP (equinox's finalise_jaxpr calls the function), in
    # place of call_jaxpr, jvp_jaxpr_fun and num_consts; binding with them re-creates
    # the call. (pyjax's equation also keeps its `name`.) Values are JAX's.
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), 10.0 * t[0]))
    closed = jax.make_jaxpr(f)(1.0)
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "custom_jvp_call"]
    keywords = eqn.primitive.get_bind_params(eqn.params)
    assert set(keywords) == {"subfuns", "symbolic_zeros", "name"}
    assert keywords["symbolic_zeros"] is False
    fun, jvp = keywords["subfuns"]
    x = jnp.float32(1.0)
    (out,) = fun.call_wrapped(x)
    close(out, 0.84147096)
    out, tangent = jvp.call_wrapped(x, jnp.float32(2.0))
    close(out, 0.84147096)
    assert float(tangent) == 20.0

    def rebind(x):
        return eqn.primitive.bind(x, **keywords)[0]
    close(rebind(x), 0.84147096)
    close(jax.jit(rebind)(x), 0.84147096)
    out, tangent = jax.jvp(rebind, (x,), (jnp.float32(2.0),))
    close(out, 0.84147096)
    assert float(tangent) == 20.0
    assert float(jax.grad(rebind)(x)) == 10.0
    assert str(jax.make_jaxpr(rebind)(x)) == str(closed)
    # other primitives' equations re-bind with their own params
    assert lax.sin_p.get_bind_params({"accuracy": None}) == {"accuracy": None}
    with pytest.raises(NotImplementedError, match="get_bind_params gave"):
        eqn.primitive.bind(x, subfuns=(f, f), symbolic_zeros=False)


def test_lowering_is_printed_from_lower_fun():
    text = jax.jit(f).lower(X).as_text()
    assert "stablehlo.sine" in text and "stablehlo.cosine" in text
    assert "test_sincos" in str(jax.make_jaxpr(f)(X))


def _host_square_plus_rule(ctx, x, y):
    """A lowering in JAX's MLIR form whose only operation is a host callback (as
    equinox's noinline lowers)."""
    def on_host(a, b):
        return np.asarray(a) * np.asarray(a) + np.asarray(b), np.asarray(b)
    results, _, keepalive = mlir.emit_python_callback(
        ctx, on_host, None, [x, y], ctx.avals_in, ctx.avals_out, has_side_effect=False,
        sharding=None)
    ctx.module_context.add_keepalive(keepalive)
    return results


def test_lowering_in_jax_mlir_form_emits_a_host_callback():
    p = Primitive("test_host_square_plus")
    p.multiple_results = True
    p.def_impl(lambda x, y: [x * x + y, y])
    p.def_abstract_eval(lambda x, y: [x, y])
    mlir.register_lowering(p, _host_square_plus_rule)
    x, y = jnp.array([1.0, 2.0, 3.0]), jnp.full(3, 0.5)
    close(p.bind(x, y)[0], [1.5, 4.5, 9.5])
    outs = jax.jit(lambda a, b: p.bind(a * 2, b))(x, y)
    close(outs[0], [4.5, 16.5, 36.5])
    close(outs[1], [0.5, 0.5, 0.5])


def test_every_primitive_is_an_extension_primitive_to_isinstance():
    assert isinstance(lax.add_p, Primitive) and isinstance(scale_p, Primitive)
    assert not isinstance(1, Primitive)
    eqn = jax.make_jaxpr(lambda a: a + 1.0)(X).jaxpr.eqns[0]
    assert eqn.primitive.get_bind_params(eqn.params) == eqn.params
    # jax.core.Atom: what an equation reads (JAX's typing.Union[Var, Literal])
    assert typing.get_args(jax.core.Atom) == (jax.extend.core.Var, jax.extend.core.Literal)
    assert isinstance(eqn.invars[0], jax.core.Atom) and isinstance(eqn.invars[1], jax.core.Atom)


def test_impl_called_under_a_transformation_is_traced():
    p = Primitive("test_impl_traced")
    p.def_impl(lambda a: jnp.sin(a) * 2)
    p.def_abstract_eval(lambda a: a)
    jaxpr = jax.make_jaxpr(lambda a: p.impl(a))(X)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["sin", "mul"]
    close(jax.jit(lambda a: p.impl(a))(X), [0.19966694, 0.39733866, 0.5910404])


def test_rule_tables_read_builtin_rules_and_refuse_to_overwrite_them():
    assert ad.primitive_jvps[scale_p] is scale_p.jvp and scale_p in ad.primitive_transposes
    assert callable(ad.primitive_jvps[lax.sin_p]) and lax.sin_p in batching.primitive_batchers
    with pytest.raises(TypeError, match="pyjax's own primitives"):
        ad.primitive_jvps[lax.sin_p] = lambda primals, tangents: None


def test_avals_and_trace_state():
    aval = jax.core.ShapedArray((4, 3), np.float32)
    assert mapped_aval(4, 0, aval).shape == (3,) and mapped_aval(4, None, aval) is aval
    assert unmapped_aval(5, 1, aval).shape == (4, 5, 3)
    assert trace_state_clean()
    states = []

    def g(x):
        states.append(get_opaque_trace_state())
        states.append(get_opaque_trace_state())
        assert not trace_state_clean()
        return x

    jax.jit(g)(1.0)
    assert states[0] == states[1] and states[0] != get_opaque_trace_state()


def test_linear_util_flattens_a_wrapped_function():
    from pyjax.api_util import flatten_fun_nokwargs
    args = ({"a": 1.0}, 2.0)
    leaves, tree = jax.tree_util.tree_flatten(args)
    flat, out_tree = flatten_fun_nokwargs(lu.wrap_init(lambda d, y: (d["a"] * y, y)), tree)
    assert flat.call_wrapped(*leaves) == [2.0, 2.0]
    assert jax.tree_util.tree_unflatten(out_tree(), [3, 4]) == (3, 4)


def test_partial_eval_known_and_unknown_inputs():
    from pyjax.interpreters.partial_eval import PartialVal, trace_to_jaxpr_nounits
    aval = jax.core.ShapedArray((2,), np.float32)
    fun = lu.wrap_init(lambda a, b: [a * 2.0, jnp.sin(a) + b])
    jaxpr, out_pvals, consts = trace_to_jaxpr_nounits(
        fun, [PartialVal.known(jnp.ones(2)), PartialVal.unknown(aval)])
    assert out_pvals[0].is_known() and not out_pvals[1].is_known()
    close(out_pvals[0].get_known(), [2.0, 2.0])
    assert out_pvals[1].get_aval() == aval
    staged = jax.core.eval_jaxpr(jaxpr, consts, jnp.array([1.0, 2.0]))
    close(staged[0], np.sin(1.0) + np.array([1.0, 2.0]))




def test_partial_eval_with_typed_key_avals():
    # flax's nn.scan builds ShapedArray avals of its carry, PRNG keys included, and
    # checks which outputs are known. Values printed by JAX 0.10.2 on this program.
    from pyjax.interpreters.partial_eval import PartialVal, trace_to_jaxpr_nounits
    key_aval = jax.core.ShapedArray((), jnp.result_type(jax.random.key(0)))
    assert str(key_aval) == "key<fry>[]" and isinstance(key_aval, jax.core.AbstractValue)
    x_aval = jax.core.ShapedArray((3,), np.float32)

    def body(key, x):
        k1, _ = jax.random.split(key)
        return 7.0, k1, x + 1

    jaxpr, out_pvals, consts = trace_to_jaxpr_nounits(
        lu.wrap_init(body), [PartialVal.unknown(key_aval), PartialVal.unknown(x_aval)])
    assert out_pvals[0].is_known() and out_pvals[0].get_known() == 7.0
    assert [str(pv.get_aval()) for pv in out_pvals[1:]] == ["key<fry>[]", "float32[3]"]
    assert len(jaxpr.invars) == 2 and len(jaxpr.outvars) == 2
def test_refs_hold_mutable_arrays():
    from pyjax._src.state.refs import AbstractRef
    ref = jax.new_ref(jnp.zeros(3))
    ref[1] = 5.0
    close(ref[...], [0.0, 5.0, 0.0])
    assert isinstance(jax.typeof(ref), AbstractRef) and str(jax.typeof(ref)) == "Ref{float32[3]}"
    ref[...] = jnp.ones(3)
    close(jax.freeze(ref), [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="shape"):
        ref[...] = jnp.ones(2)
    with pytest.raises(ValueError, match="mutable array references cannot be returned"):
        jax.jit(lambda x: jax.new_ref(x))(1.0)


def test_layout_format_and_bcoo():
    import scipy.sparse

    from pyjax.experimental.layout import Format, Layout
    from pyjax.experimental.sparse import BCOO
    assert Format() == Format(None, None) and Layout((1, 0)) != Layout((0, 1))
    with pytest.raises(ValueError, match="Sharding has to be concrete when layout"):
        Format(Layout((0, 1)))
    # JAX 0.10.2 checks a layout against a value only where it is used
    assert repr(Layout((0, 0))) == ("Layout(major_to_minor=(0, 0), tiling=None, "
                                    "sub_byte_element_size_in_bits=0)")
    dense = np.array([[0, 1.0, 0], [2, 0, 3], [0, 0, 4]], np.float32)
    m = BCOO.from_scipy_sparse(scipy.sparse.csr_matrix(dense))
    v = jnp.arange(3.0)
    close(m @ v, dense @ np.arange(3.0))
    close(jax.jit(lambda m, v: m @ v[:, None])(m, v)[:, 0], dense @ np.arange(3.0))
    close((m * 2.0).todense(), 2 * dense)
    close(m.T.todense(), dense.T)
    assert m.nse == 4 and BCOO.fromdense(dense).nse == 4


def test_hijax_primitive_without_its_lowering_names_it():
    from pyjax.experimental import hijax

    class Get(hijax.HiPrimitive):
        pass

    with pytest.raises(NotImplementedError, match="Get must define to_lojax"):
        Get("get").bind(jnp.ones(2))


def test_rules_get_tuples_and_trace_main_identifies_a_trace():
    # JAX's traces hand extension rules tuples (equinox's vprim passes its dims on as a
    # vmap out_axes, which must match its tuple output), and libraries tell a trace's own
    # tracers by `x._trace.main is find_top_trace(...).main`, as equinox's filter_jvp does.
    seen = []
    p = Primitive("test_tuple_operands")
    p.multiple_results = True
    p.def_impl(lambda x: [x * 2])
    p.def_abstract_eval(lambda x: [x])

    def jvp(primals, tangents):
        seen.append((type(primals), type(tangents)))
        top = find_top_trace(primals)
        assert not isinstance(primals[0], ad.JVPTracer) and top.main is not None
        return p.bind(*primals), [tangents[0] * 2]

    def batch(axis_size, axis_name, trace_type, args, dims):
        seen.append((type(args), type(dims)))
        out = jax.vmap(lambda x: (x * 2,), in_axes=dims, out_axes=dims)(*args)
        return list(out), list(dims)

    ad.primitive_jvps[p] = jvp
    batching.axis_primitive_batchers[p] = batch

    def fn(x):
        assert isinstance(x, ad.JVPTracer) and x._trace.main is find_top_trace([x]).main
        return p.bind(x)[0]

    assert jax.jvp(fn, (jnp.float32(1.5),), (jnp.float32(1.0),)) == (3.0, 2.0)
    close(jax.vmap(lambda x: p.bind(x)[0])(X), [0.2, 0.4, 0.6])
    assert seen == [(tuple, tuple)] * 2


def test_shaped_array_tangent_aval():
    weak = jax.core.ShapedArray((2,), np.float32, weak_type=True)
    assert weak.to_tangent_aval() is weak
    assert jax.core.ShapedArray((3,), np.int32).to_tangent_aval() == \
        jax.core.ShapedArray((3,), jax.dtypes.float0)


def test_missing_rules_raise_jax_not_implemented_errors():
    # JAX's "How JAX primitives work" page adds a primitive's rules one by one and
    # expects a plain NotImplementedError for each one not yet given (JAX 0.10.2's
    # messages). Bound outside transformations, a primitive is its impl on the arguments
    # as given: JAX needs no abstract evaluation for that.
    p = Primitive("multiply_add")
    with pytest.raises(NotImplementedError,
                       match="^Evaluation rule for 'multiply_add' not implemented"):
        p.bind(2.0, 2.0, 10.0)
    p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    out = p.bind(2.0, 2.0, 10.0)
    assert out == 14.0 and type(out) is np.float64      # the impl's own result, as JAX
    with pytest.raises(NotImplementedError,
                       match="^Abstract evaluation for 'multiply_add' not implemented"):
        jax.jit(lambda x: p.bind(x, x, 10.0))(2.0)
    p.def_abstract_eval(lambda x, y, z: jax.core.ShapedArray(x.shape, x.dtype))
    with pytest.raises(NotImplementedError) as raised:
        jax.jit(lambda x: p.bind(x, x, 10.0))(2.0)
    assert type(raised.value) is NotImplementedError     # the page checks the exact type
    assert "MLIR translation rule for primitive 'multiply_add' not found" in str(raised.value)
    for transform, x, rule in ((jax.grad, 2.0, "Differentiation"),
                               (jax.vmap, jnp.ones(2), "Batching")):
        with pytest.raises(NotImplementedError,
                           match=f"^{rule} rule for 'multiply_add' not implemented"):
            transform(lambda x: p.bind(x, x, 10.0))(x)
    ad.primitive_jvps[p] = lambda primals, tangents: (p.bind(*primals), p.bind(*tangents))
    with pytest.raises(NotImplementedError, match=r"^Transpose rule \(for reverse-mode "
                       r"differentiation\) for 'multiply_add' not implemented"):
        jax.linear_transpose(lambda x: p.bind(x, x, x), 2.0)(1.0)


def test_def_impl_on_a_builtin_primitive_replaces_its_eager_evaluation():
    # JAX's tests count a primitive's evaluations by wrapping its impl (api_test's remat
    # tests); compiled code never calls it. Counts and value recorded on JAX 0.10.2.
    @jax.remat
    def g(x):
        return lax.sin(lax.sin(x))
    _, f_lin = jax.linearize(g, 2.0)
    calls = []
    sin_impl, cos_impl = lax.sin_p.impl, lax.cos_p.impl
    try:
        lax.sin_p.def_impl(lambda x, **kw: calls.append("sin") or sin_impl(x, **kw))
        lax.cos_p.def_impl(lambda x, **kw: calls.append("cos") or cos_impl(x, **kw))
        out = f_lin(3.0)
        counted = sorted(calls)
        calls.clear()
        jax.jit(lax.sin)(1.0)
        under_jit = list(calls)
    finally:
        lax.sin_p.def_impl(sin_impl)
        lax.cos_p.def_impl(cos_impl)
    assert counted == ["cos", "cos", "sin"] and under_jit == []
    close(out, -0.7669174)
    assert lax.sin_p.impl is sin_impl


def test_register_lowering_refuses_an_unknown_platform():
    # JAX 0.10.2 checks the platform first (even before the primitive), naming its
    # known platforms; a known one pyjax does not lower for is accepted and unused
    with pytest.raises(NotImplementedError, match=re.escape(
            "Registering an MLIR lowering rule for primitive None for an unknown platform "
            "fake. Known platforms are: cpu, cuda, gpu, oneapi, rocm, tpu.")):
        mlir.register_lowering(None, None, platform="fake")
    p = Primitive("test_tpu_only_lowering")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)
    # it returns None, as JAX's (the page "How JAX primitives work" shows nothing)
    assert mlir.register_lowering(p, lambda ctx, x: [x], platform="tpu") is None
    with pytest.raises(NotImplementedError, match="MLIR translation rule for primitive "
                       "'test_tpu_only_lowering' not found"):
        jax.jit(p.bind)(jnp.ones(2))
    assert mlir.register_lowering(p, lambda ctx, x: [x], inline=False,
                                  cacheable=False) is None
    close(jax.jit(p.bind)(jnp.ones(2)), [1.0, 1.0])


def test_ad_helpers_fill_the_rule_tables_as_jax_does():
    # jax.interpreters.ad's defjvp / defjvp2 / deflinear / deflinear2 / defbilinear and
    # get_primitive_transpose (values from JAX 0.10.2 for the same programs)
    mul_p = Primitive("test_bilinear_mul")
    mul_p.def_impl(lambda x, y: x * y)
    mul_p.def_abstract_eval(lambda x, y: x)
    ad.defbilinear(mul_p, lambda ct, x, y: ct * y, lambda ct, x, y: x * ct)
    assert [float(g) for g in jax.grad(mul_p.bind, (0, 1))(3., 4.)] == [4.0, 3.0]
    assert [float(v) for v in jax.jvp(mul_p.bind, (3., 4.), (1., 2.))] == [12.0, 10.0]
    for define, rule in ((ad.deflinear, lambda ct: [-ct]),
                         (ad.deflinear2, lambda ct, x: [-ct])):
        neg_p = Primitive(f"test_{define.__name__}_neg")
        neg_p.def_impl(lambda x: -x)
        neg_p.def_abstract_eval(lambda x: x)
        define(neg_p, rule)
        assert float(jax.grad(lambda a, p=neg_p: p.bind(a) * 2.)(3.)) == -2.0
        assert [float(v) for v in jax.jvp(neg_p.bind, (3.,), (1.,))] == [-3.0, -1.0]
        assert ad.get_primitive_transpose(neg_p) is not None
    exp_p = Primitive("test_defjvp2_exp")
    exp_p.def_impl(jnp.exp)
    exp_p.def_abstract_eval(lambda x: x)
    ad.defjvp2(exp_p, lambda g, ans, x: g * ans)
    np.testing.assert_allclose(jax.jvp(exp_p.bind, (0.5,), (2.,)), [1.6487212, 3.2974424],
                               rtol=1e-6)
    with pytest.raises(NotImplementedError, match=r"^Transpose rule \(for reverse-mode "
                       r"differentiation\) for 'test_defjvp2_exp' not implemented"):
        ad.get_primitive_transpose(exp_p)
    # defjvp with a rule linear in the tangent: grad needs the transpose it lacks
    foo_p = Primitive("test_defjvp_foo")
    foo_p.def_impl(lambda x: x)
    foo_p.def_abstract_eval(lambda x: x)
    ad.defjvp(foo_p, lambda g, x: foo_p.bind(g))
    assert [float(v) for v in jax.jvp(foo_p.bind, (1.0,), (2.0,))] == [1.0, 2.0]
    with pytest.raises(NotImplementedError, match=r"^Transpose rule \(for reverse-mode "
                       r"differentiation\) for 'test_defjvp_foo' not implemented"):
        jax.grad(foo_p.bind)(1.0)


@pytest.mark.parametrize("multiple_results, abstract_eval", [
    (False, lambda x: [x]), (True, lambda x: x)])
def test_abstract_eval_of_the_wrong_form_names_the_primitive(multiple_results,
                                                             abstract_eval):
    p = Primitive("test_wrong_form")
    p.multiple_results = multiple_results
    p.def_abstract_eval(abstract_eval)
    p.def_impl(lambda x: [x] if multiple_results else x)
    with pytest.raises(ValueError, match=re.escape(   # JAX 0.10.2's words
            "test_wrong_form.abstract_eval() method should return a tuple or a list iff "
            "test_wrong_form.multiple_results.")):
        jax.jit(p.bind)(1.0)
