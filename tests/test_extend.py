"""Primitives a library defines through JAX's extension API (jax.extend.core.Primitive and
the rule tables of jax.interpreters.ad/batching/mlir, as equinox does) run eagerly, under
jit (lowered through pyjax's StableHLO printer), grad, vmap and transposition. Values are
JAX 0.10.2's for the same program."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.extend import linear_util as lu
from pyjax.extend.core import (Primitive, get_opaque_trace_state, mapped_aval,
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


def test_lowering_is_printed_from_lower_fun():
    text = jax.jit(f).lower(X).as_text()
    assert "stablehlo.sine" in text and "stablehlo.cosine" in text
    assert "test_sincos" in str(jax.make_jaxpr(f)(X))


def test_lowering_written_for_jax_mlir_bindings_is_refused_clearly():
    p = Primitive("test_mlir_only")
    p.def_impl(lambda x: x + 1)
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, lambda ctx, x: [x])      # JAX MLIR-bindings style rule
    close(p.bind(jnp.ones(2)), [2.0, 2.0])            # eager still runs the impl
    with pytest.raises(NotImplementedError, match="MLIR Python bindings"):
        jax.jit(lambda x: p.bind(x))(jnp.ones(2))


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
