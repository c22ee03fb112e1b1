"""custom_jvp / custom_vjp call the user's functions exactly when JAX does: the programs
of JAX's "Custom derivative rules" notebook, with the output JAX 0.10.2 prints (recorded
from the real JAX), eagerly and under jit, vmap and nested differentiation; rules run on
concrete primals, so Python control flow on them works; results are Arrays."""
import functools

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import close
from pyjax import custom_jvp, custom_vjp, grad, jit, jvp, vjp, vmap
from pyjax.errors import TracerBoolConversionError, UnexpectedTracerError
from pyjax.extend.core import get_opaque_trace_state


def notebook_custom_jvp():
    @custom_jvp
    def f(x):
        print('called f!')  # a harmless side-effect
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        print('called f_jvp!')  # a harmless side-effect
        x, = primals
        t, = tangents
        return f(x), jnp.cos(x) * t

    return f


def notebook_custom_vjp():
    @custom_vjp
    def f(x):
        print("called f!")
        return jnp.sin(x)

    def f_fwd(x):
        print("called f_fwd!")
        return f(x), jnp.cos(x)

    def f_bwd(cos_x, y_bar):
        print("called f_bwd!")
        return (cos_x * y_bar,)

    f.defvjp(f_fwd, f_bwd)
    return f


def printed(capsys, thunk):
    capsys.readouterr()
    thunk()
    return capsys.readouterr().out


def test_custom_jvp_calls_only_the_rule_when_differentiating(capsys):
    f = notebook_custom_jvp()
    assert printed(capsys, lambda: print(f(3.))) == "called f!\n0.14112\n"
    assert printed(capsys, lambda: vmap(f)(jnp.arange(3.))) == "called f!\n"
    assert printed(capsys, lambda: print(jit(f)(3.))) == "called f!\n0.14112\n"

    def jvp_cell():
        y, y_dot = jvp(f, (3.,), (1.,))
        print(y_dot)
    assert printed(capsys, jvp_cell) == "called f_jvp!\ncalled f!\n-0.9899925\n"
    assert printed(capsys, lambda: print(grad(f)(3.))) == \
        "called f_jvp!\ncalled f!\n-0.9899925\n"
    assert printed(capsys, lambda: print(grad(grad(f))(3.))) == \
        "called f_jvp!\ncalled f_jvp!\ncalled f!\n-0.14112\n"
    assert printed(capsys, lambda: print(vjp(f, 3.)[1](1.))) == \
        "called f_jvp!\ncalled f!\n(Array(-0.9899925, dtype=float32, weak_type=True),)\n"
    # Nothing is differentiated here: f runs, the rule does not.
    assert printed(capsys, lambda: print(grad(lambda x, y: f(y) * x)(3., 2.))) == \
        "called f!\n0.9092974\n"


def test_custom_jvp_calls_under_jit_and_vmap(capsys):
    f = notebook_custom_jvp()
    grad_f = jit(grad(f))
    assert printed(capsys, lambda: print(grad_f(3.))) == \
        "called f_jvp!\ncalled f!\n-0.9899925\n"
    assert printed(capsys, lambda: print(grad_f(3.))) == "-0.9899925\n"   # cached trace
    out = []
    assert printed(capsys, lambda: out.append(vmap(grad(f))(jnp.arange(3.)))) == \
        "called f_jvp!\ncalled f!\n"
    np.testing.assert_allclose(out[0], np.cos(np.arange(3.)), rtol=1e-6)
    jitted = jit(f)
    assert printed(capsys, lambda: print(grad(jitted)(3.))) == \
        "called f!\ncalled f_jvp!\ncalled f!\n-0.9899925\n"
    assert printed(capsys, lambda: print(grad(jitted)(3.))) == "-0.9899925\n"


def test_custom_jvp_python_control_flow_on_concrete_primals(capsys):
    @custom_jvp
    def f(x):
        if x > 0:
            return jnp.sin(x)
        else:
            return jnp.cos(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        ans = f(x)
        if x > 0:
            return ans, 2 * x_dot
        else:
            return ans, 3 * x_dot

    assert printed(capsys, lambda: (print(grad(f)(1.)), print(grad(f)(-1.)))) == \
        "2.0\n3.0\n"
    assert printed(capsys, lambda: print(grad(grad(f))(1.))) == "0.0\n"
    assert printed(capsys, lambda: print(vjp(f, 1.)[1](1.))) == \
        "(Array(2., dtype=float32, weak_type=True),)\n"
    y, y_dot = jvp(f, (1.,), (1.,))
    assert isinstance(y, jax.Array) and y.dtype == jnp.float32 and y.weak_type
    np.testing.assert_allclose(y, np.sin(1.), rtol=1e-6)
    assert float(y_dot) == 2.0
    with pytest.raises(TracerBoolConversionError):   # abstract under jit, as in JAX
        jit(f)(1.)


def test_custom_vjp_calls_fwd_then_bwd(capsys):
    f = notebook_custom_vjp()
    assert printed(capsys, lambda: print(f(3.))) == "called f!\n0.14112\n"
    assert printed(capsys, lambda: print(grad(f)(3.))) == \
        "called f_fwd!\ncalled f!\ncalled f_bwd!\n-0.9899925\n"
    results = []

    def vjp_cell():
        y, f_vjp = vjp(f, 3.)
        print(y)
        results.append(f_vjp)
    assert printed(capsys, vjp_cell) == "called f_fwd!\ncalled f!\n0.14112\n"
    assert printed(capsys, lambda: print(results[0](1.))) == \
        "called f_bwd!\n(Array(-0.9899925, dtype=float32, weak_type=True),)\n"

    def jvp_cell():
        try:
            jvp(f, (3.,), (1.,))
        except TypeError as e:
            print('ERROR! {}'.format(e))
    assert printed(capsys, jvp_cell) == (
        "called f_fwd!\ncalled f!\n"
        "ERROR! can't apply forward-mode autodiff (jvp) to a custom_vjp function.\n")
    assert printed(capsys, lambda: print(grad(grad(f))(3.))) == \
        "called f_fwd!\ncalled f_fwd!\ncalled f!\ncalled f_bwd!\n-0.14112\n"


def test_custom_vjp_calls_under_jit_and_vmap(capsys):
    f = notebook_custom_vjp()
    assert printed(capsys, lambda: print(jit(f)(3.))) == "called f!\n0.14112\n"
    assert printed(capsys, lambda: vmap(f)(jnp.arange(3.))) == "called f!\n"
    grad_f = jit(grad(f))
    assert printed(capsys, lambda: print(grad_f(3.))) == \
        "called f_fwd!\ncalled f!\ncalled f_bwd!\n-0.9899925\n"
    assert printed(capsys, lambda: print(grad_f(3.))) == "-0.9899925\n"
    assert printed(capsys, lambda: vmap(grad(f))(jnp.arange(3.))) == \
        "called f_fwd!\ncalled f!\ncalled f_bwd!\n"


def test_custom_vjp_python_control_flow_and_array_results(capsys):
    @custom_vjp
    def f(x):
        if x > 0:
            return jnp.sin(x)
        return jnp.cos(x)

    def f_fwd(x):
        return f(x), x

    def f_bwd(x, g):
        return (2 * g if x > 0 else 3 * g,)

    f.defvjp(f_fwd, f_bwd)
    assert printed(capsys, lambda: (print(grad(f)(1.)), print(grad(f)(-1.)))) == \
        "2.0\n3.0\n"

    @custom_vjp
    def g(x, y):
        return jnp.sin(x) * y

    def g_fwd(x, y):
        return g(x, y), (jnp.cos(x), jnp.sin(x), y)

    def g_bwd(res, ct):
        cos_x, sin_x, y = res
        return (cos_x * ct * y, sin_x * ct)

    g.defvjp(g_fwd, g_bwd)
    out, g_vjp = vjp(g, 2., 3.)
    cts = g_vjp(1.)
    assert all(isinstance(c, jax.Array) for c in cts)
    assert repr(cts) == ("(Array(-1.2484405, dtype=float32, weak_type=True), "
                         "Array(0.9092974, dtype=float32, weak_type=True))")


def test_nondiff_argnums_are_not_differentiated_on_the_direct_path():
    import functools

    @functools.partial(custom_jvp, nondiff_argnums=(0,))
    def f(c, x):
        return c * x

    @f.defjvp
    def f_jvp(c, primals, tangents):
        return f(c, primals[0]), c * tangents[0]

    # JAX: 2.0 (c is never differentiated where it is a nondiff argument)
    assert float(grad(lambda c: f(c, 3.) + f(2., c))(2.)) == 2.0
    assert float(grad(lambda x: f(x, x))(2.)) == 2.0
    assert float(grad(grad(lambda c: f(c, c) * c))(2.)) == 4.0


def counted_rules(calls):
    @custom_jvp
    def f(x):
        calls.append("f")
        return jnp.sin(x) * x

    @f.defjvp
    def f_jvp(p, t):
        calls.append("jvp")
        x, = p
        tx, = t
        return f(x), (jnp.cos(x) * x + jnp.sin(x)) * tx

    @custom_vjp
    def g(x):
        calls.append("g")
        return jnp.exp(x)

    def g_fwd(x):
        calls.append("g_fwd")
        y = g(x)
        return y, y

    def g_bwd(y, ct):
        calls.append("g_bwd")
        return (y * ct * 2,)

    g.defvjp(g_fwd, g_bwd)
    return f, g


# (program, JAX 0.10.2's call sequence); f and g are fresh for each program.
_NESTED_PROGRAMS = [
    ("jacfwd", lambda f, g, x: jax.jacfwd(f)(x), ["jvp", "f"]),
    ("jacrev", lambda f, g, x: jax.jacrev(f)(x), ["jvp", "f"]),
    ("hessian", lambda f, g, x: jax.hessian(lambda x: f(x).sum())(x), ["jvp", "jvp", "f"]),
    ("linearize", lambda f, g, x: jax.linearize(f, 2.)[1](1.), ["jvp", "f"]),
    ("checkpoint", lambda f, g, x: grad(jax.checkpoint(lambda x: f(x).sum()))(x),
     ["f", "jvp", "f"]),
    ("checkpoint vjp", lambda f, g, x: grad(jax.checkpoint(lambda x: g(x).sum()))(x),
     ["g", "g_fwd", "g", "g_bwd"]),
    ("jacrev vjp", lambda f, g, x: jax.jacrev(g)(x), ["g_fwd", "g", "g_bwd"]),
    ("scan", lambda f, g, x: grad(
        lambda x: jax.lax.scan(lambda c, xi: (c + f(xi), None), 0., x)[0])(x),
     ["f", "jvp", "f"]),
    ("cond", lambda f, g, x: grad(lambda x: jax.lax.cond(True, f, jnp.cos, x))(2.),
     ["f", "jvp", "f"]),
    ("fori_loop vjp", lambda f, g, x: grad(
        lambda x: jax.lax.fori_loop(0, 2, lambda i, c: g(c), x))(0.1),
     ["g", "g_fwd", "g", "g_bwd"]),
    ("jit remat vjp", lambda f, g, x: jit(grad(jax.remat(lambda x: g(x).sum())))(x),
     ["g", "g_fwd", "g", "g_bwd"]),
    ("vmap", lambda f, g, x: vmap(f)(x), ["f"]),
    ("vmap vjp", lambda f, g, x: vmap(g)(x), ["g"]),
    ("vmap, unbatched", lambda f, g, x: vmap(lambda c: f(3.), out_axes=None)(x), ["f"]),
    ("grad of vmap", lambda f, g, x: grad(lambda x: vmap(f)(x).sum())(x), ["jvp", "f"]),
    ("jvp of vmap", lambda f, g, x: jvp(vmap(f), (x,), (jnp.ones(3),)), ["jvp", "f"]),
    ("vmap of grad", lambda f, g, x: vmap(grad(f))(x), ["jvp", "f"]),
    ("grad of vmap vjp", lambda f, g, x: grad(lambda x: vmap(g)(x).sum())(x),
     ["g_fwd", "g", "g_bwd"]),
    ("vmap of grad vjp", lambda f, g, x: vmap(grad(g))(x), ["g_fwd", "g", "g_bwd"]),
    ("grad of vmap of vmap", lambda f, g, x: grad(
        lambda x: vmap(vmap(f))(x.reshape(1, 3)).sum())(x), ["jvp", "f"]),
]


@pytest.mark.parametrize("name, program, expected", _NESTED_PROGRAMS,
                         ids=[p[0] for p in _NESTED_PROGRAMS])
def test_rules_are_called_as_in_jax_under_nested_transformations(name, program, expected):
    calls = []
    f, g = counted_rules(calls)
    program(f, g, jnp.arange(1., 4.))
    assert calls == expected


def test_rules_under_vmap_inside_differentiation_see_batch_tracers():
    seen = []

    @custom_vjp
    def v(x, y):
        seen.append(("v", type(x).__name__))
        return x * y

    def v_fwd(x, y):
        seen.append(("v_fwd", type(x).__name__))
        return v(x, y), (x, y)

    def v_bwd(res, g):
        seen.append(("v_bwd", type(g).__name__))
        x, y = res
        return (g * y, g * x)

    v.defvjp(v_fwd, v_bwd)
    out = grad(lambda x: vmap(v)(x, jnp.ones(3)).sum())(jnp.arange(3.))
    # JAX 0.10.2: each rule runs once, per example, on vmap's tracers
    assert seen == [("v_fwd", "BatchTracer"), ("v", "BatchTracer"), ("v_bwd", "BatchTracer")]
    np.testing.assert_array_equal(out, np.ones(3))


def test_staged_custom_vjp_fwd_gets_arrays_for_literal_inputs():
    # Differentiating a jitted call runs the staged custom_vjp's fwd on the jaxpr's
    # literals: JAX traces fwd at the input types, so fwd sees arrays (with .shape), as
    # equinox's checkpointed while_loop needs. Values from JAX 0.10.2.
    @custom_vjp
    def f(n, x):
        return x * n

    def fwd(n, x):
        return x * n, (n, jnp.zeros((2,) + n.shape, n.dtype))

    def bwd(res, g):
        n, buffer = res
        return None, g * n + buffer.sum()

    f.defvjp(fwd, bwd)
    staged = jit(lambda x: f(jnp.array(3), x))
    assert float(grad(staged)(2.0)) == 3.0
    assert float(jit(grad(staged))(2.0)) == 3.0
    value, slope = jax.value_and_grad(lambda x: jit(lambda y: f(jnp.array(3), y) ** 2)(x))(2.0)
    assert (float(value), float(slope)) == (36.0, 36.0)


def test_defaulted_parameters_fill_nondiff_argnums():
    # flax's fp8 dot_general_with_precision: nondiff_argnums name parameters the caller
    # leaves to their defaults. Values from JAX 0.10.2.
    @functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
    def scale(x, k=3.0, tag=None):
        return x * k

    @scale.defjvp
    def scale_jvp(k, tag, primals, tangents):
        (x,), (t,) = primals, tangents
        return scale(x, k, tag), t * k * 10

    assert float(scale(2.0)) == 6.0
    assert [float(v) for v in jax.jvp(scale, (2.0,), (1.0,))] == [6.0, 30.0]
    assert float(jax.jit(jax.grad(lambda x: scale(x, tag=1)))(2.0)) == 30.0

    @jax.custom_vjp
    def g(x, y=2.0):
        return x * y

    g.defvjp(lambda x, y: (x * y, (x, y)), lambda r, c: (c * r[1] * 100, c * r[0]))
    assert float(g(3.0)) == 6.0 and float(jax.grad(g)(3.0)) == 200.0


def test_keyword_only_defaults_are_left_to_the_function():
    # JAX 0.10.2: a keyword-only parameter left to its default is fine (0.84147096 and
    # the jvp (0.84147096, 0.5403023)); passing it raises TypeError
    def f(x, *, scale=1.0):
        return jnp.sin(x) * scale
    g = jax.custom_jvp(f)
    g.defjvps(lambda t, ans, x: t * jnp.cos(x))
    np.testing.assert_allclose(g(1.0), 0.84147096, rtol=1e-6)
    np.testing.assert_allclose(jax.jvp(g, (1.0,), (1.0,)), (0.84147096, 0.5403023), rtol=1e-6)
    with pytest.raises(TypeError, match="scale"):
        g(1.0, scale=2.0)


def test_nondiff_argnames_name_positional_parameters():
    # JAX 0.10.2: nondiff_argnames become the positions of those parameters (names of no
    # positional parameter are ignored); they join nondiff_argnums
    @functools.partial(custom_jvp, nondiff_argnames=("f",))
    def app(f, x):
        return f(x)
    app.defjvp(lambda f, primals, tangents: (app(f, *primals), 3 * tangents[0]))
    assert app.nondiff_argnums == (0,)
    assert float(app(lambda x: 2 * x, 1)) == 2.0
    assert float(app(f=lambda x: 2 * x, x=1.0)) == 2.0
    assert float(grad(lambda x: app(lambda y: 2 * y, x))(1.0)) == 3.0
    assert custom_jvp(lambda f, x, *, k=2: f(x), nondiff_argnames=("zz", "k")) \
        .nondiff_argnums == ()

    @functools.partial(custom_vjp, nondiff_argnums=(0,), nondiff_argnames=("g",))
    def app2(f, g, x):
        return f(x) + g(x)
    app2.defvjp(lambda f, g, x: (app2(f, g, x), jnp.cos(x)),
                lambda f, g, cos_x, v: (cos_x * v,))
    value, slope = jax.value_and_grad(lambda x: app2(lambda y: 2 * y, lambda y: 2 * y, x))(1.)
    close(value, 4.0)
    close(slope, 0.5403023)


def test_traced_nondiff_argument_of_custom_vjp_is_an_unexpected_tracer():
    # JAX 0.10.2 raises UnexpectedTracerError (a TypeError) naming custom_vjp
    @functools.partial(custom_vjp, nondiff_argnums=(0,))
    def f(x, y):
        return x * y
    f.defvjp(lambda x, y: (f(x, y), jnp.cos(y)), lambda x, cos_y, g: (cos_y * g,))
    with pytest.raises(UnexpectedTracerError, match="custom_vjp"):
        jit(f)(2, 3.0)


def test_def_methods_reach_the_wrapped_custom_function():
    # JAX 0.10.2: wrappers forward the def* methods they lack to the function they wrap
    @jax.custom_batching.custom_vmap
    @custom_jvp
    def f(x):
        return 2.0 * x
    f.def_vmap(lambda size, batched, xs: (2.0 * xs, batched[0]))
    f.defjvp(lambda primals, tangents: (2.0 * primals[0], 5.0 * tangents[0]))
    assert float(jvp(f.fun, (1.0,), (1.0,))[1]) == 5.0

    @custom_vjp
    @jax.custom_batching.custom_vmap
    def g(x, y):
        return jnp.sin(x) * y
    g.def_vmap(lambda size, batched, xs, ys: (jnp.cos(xs) * ys, True))
    g.defvjp(lambda x, y: (g(x, y), (jnp.cos(x), jnp.sin(x), y)),
             lambda res, ct: (res[0] * ct * res[2], res[1] * ct))
    xs, ys = jnp.linspace(0, 1, 5), jnp.linspace(-0.1, 0.1, 5)
    close(vmap(g)(xs, ys), jnp.cos(xs) * ys)
    close(grad(g)(0.5, 2.0), 1.7551651)
    with pytest.raises(AttributeError):
        assert g.other is None   # raises


def _sin_with_recorded_rules(seen, top):
    @custom_vjp
    def f(x):
        return jnp.sin(x)

    def f_fwd(x):
        seen.append(("fwd at the caller's trace", get_opaque_trace_state() == top))
        return f(x), (x, jnp.cos(x), jnp.float32(2.0))

    def f_bwd(res, g):
        seen.append([(isinstance(r, jax.Array), r.weak_type) for r in res])
        return (res[1] * g,)

    f.defvjp(f_fwd, f_bwd)
    return f


def test_bwd_gets_array_residuals_with_their_weak_types():
    # JAX 0.10.2: residuals reach bwd as the Arrays fwd made, weakly typed where they
    # were (not as Python scalars: flax's bwd rules write into them with x[...] = ...)
    seen = []
    f = _sin_with_recorded_rules(seen, get_opaque_trace_state())
    close(grad(f)(jnp.array(1.0)), 0.5403023)
    close(jax.value_and_grad(f)(jnp.array(1.0)), (0.84147096, 0.5403023))
    assert seen[1] == seen[3] == [(True, True), (True, True), (True, False)]


def test_fwd_runs_on_the_trace_grad_was_called_from():
    # JAX 0.10.2 linearizes on one trace and runs fwd on its parent: under a grad called
    # eagerly, fwd sees the caller's trace (flax's custom_vjp checks that the Variables
    # fwd returns belong to the trace it runs on)
    seen = []
    top = get_opaque_trace_state()
    f = _sin_with_recorded_rules(seen, top)
    grad(f)(jnp.array(1.0))
    assert seen[0] == ("fwd at the caller's trace", True)


def test_bwd_entries_are_prefixes_of_the_arguments():
    # JAX 0.10.2 maps bwd's output over the arguments' trees as a prefix: a cotangent
    # standing for a subtree goes to each of its leaves, a None zeroes the subtree
    @custom_vjp
    def h(d):
        return d['a'][0] * d['a'][1] + d['b']

    arg = {'a': (1.0, 2.0), 'b': 3.0}
    for rule, expected in [
            (lambda r, g: ({'a': g * 2.0, 'b': None},), {'a': (2.0, 2.0), 'b': 0.0}),
            (lambda r, g: ({'a': None, 'b': g},), {'a': (0.0, 0.0), 'b': 1.0}),
            (lambda r, g: (g,), {'a': (1.0, 1.0), 'b': 1.0})]:
        h.defvjp(lambda d: (h(d), None), rule)
        for out in grad(h)(arg), jit(grad(h))(arg):
            assert jax.tree.map(float, out) == expected
    h.defvjp(lambda d: (h(d), None), lambda r, g: ({'a': g},))
    with pytest.raises(TypeError, match=r"same container \(pytree\) structure"):
        grad(h)(arg)


def test_bwd_runs_for_zero_output_cotangents():
    # JAX 0.10.2 transposes every linear equation: a bwd whose output cotangent is zero
    # (the next custom_vjp's bwd gives None) still runs, and what it returns counts
    # (flax's fp8 layers pass their new amax history back this way): (0.0, 3.0)
    @custom_vjp
    def f(x, h):
        return x * 2.0

    f.defvjp(lambda x, h: (f(x, h), h + 1.0), lambda r, g: (g * 2.0, r))

    @custom_vjp
    def blocked(y):
        return y

    blocked.defvjp(lambda y: (y, None), lambda r, g: (None,))
    for fun in grad(lambda x, h: blocked(f(x, h)), argnums=(0, 1)), \
            jit(grad(lambda x, h: blocked(f(x, h)), argnums=(0, 1))):
        assert [float(g) for g in fun(1.0, 2.0)] == [0.0, 3.0]
    dx, dh = grad(lambda x, h: blocked(f(x, h)) + x, argnums=(0, 1))(1.0, 2.0)
    assert (float(dx), float(dh)) == (1.0, 3.0)


def test_zero_from_primal_and_primal_tree_values():
    # JAX 0.10.2's jax.custom_derivatives helpers for rules
    from pyjax.custom_derivatives import (SymbolicZero, custom_vjp_primal_tree_values,
                                          zero_from_primal)
    z = zero_from_primal({"a": 2.0, "b": jnp.arange(3)})
    assert z["a"].dtype == np.float32 and z["a"].weak_type and float(z["a"]) == 0.0
    assert z["b"].dtype == jax.dtypes.float0 and z["b"].shape == (3,)
    s, = zero_from_primal((jnp.ones((2, 3)),), symbolic_zeros=True)
    assert type(s) is SymbolicZero
    assert (s.shape, s.dtype, s.ndim, s.size) == ((2, 3), np.float32, 2, 6)
    assert SymbolicZero.from_primal_value(jnp.arange(3)).dtype == jax.dtypes.float0

    @custom_vjp
    def f(x, y):
        return x * y["a"]

    def fwd(x, y):
        x, y = custom_vjp_primal_tree_values((x, y))
        return x * y["a"], (x, y["a"])
    f.defvjp(fwd, lambda r, g: (g * r[1], {"a": g * r[0]}), symbolic_zeros=True)
    assert float(grad(f)(2.0, {"a": 5.0})) == 5.0
    with pytest.raises(TypeError, match="unexpected leaf type <class 'float'>"):
        custom_vjp_primal_tree_values([1.0])


def test_staged_custom_calls_under_vmap_with_only_collectives_stay_unbatched():
    # JAX 0.10.2: a psum over the vmap axis of an unbatched value is unbatched, so
    # out_axes=None accepts it, through the custom functions and their rules
    from pyjax import lax

    @custom_jvp
    def f(x):
        return lax.psum(x, "foo")
    f.defjvp(lambda xs, ts: (lax.psum(xs[0], "foo"), 3.0 * ts[0]))

    @custom_vjp
    def h(x):
        return lax.psum(x, "foo")
    h.defvjp(lambda x: (lax.psum(x, "foo"), None), lambda r, g: (5.0 * g,))

    def over_foo(fn):
        return vmap(lambda _, x: fn(x), axis_name="foo", in_axes=(0, None),
                    out_axes=None)(jnp.arange(4.0), 2.0)
    assert float(over_foo(jit(f))) == 8.0 and float(over_foo(jit(h))) == 8.0
    assert [float(v) for v in over_foo(lambda x: jvp(jit(f), (x,), (1.0,)))] == [8.0, 3.0]
    assert float(over_foo(grad(jit(h)))) == 5.0
    assert float(over_foo(grad(jit(f)))) == 3.0


def test_rules_may_close_over_the_values_of_an_enclosing_vmap():
    # JAX 0.10.2 (its issue 8783): a rule closing over a vmap's value, called with no
    # batched argument, runs under the same vmap
    def h(z):
        def f(x):
            @custom_jvp
            def g(y):
                return x * y

            @g.defjvp
            def g_jvp(primals, tangents):
                (y,), (ydot,) = primals, tangents
                return x * y, 10.0 * x * ydot
            return g(z)
        return vmap(f)(jnp.arange(3.0, dtype="float32"))
    primals, tangents = jvp(h, (jnp.float32(1.0),), (jnp.float32(2.0),))
    assert primals.tolist() == [0.0, 1.0, 2.0] and tangents.tolist() == [0.0, 20.0, 40.0]

    def h2(z):
        def f(x):
            @custom_vjp
            def g(y):
                return x * y
            g.defvjp(lambda y: (x * y, (x, y)), lambda res, w: (10.0 * res[0] * w,))
            return g(z)
        return vmap(f)(jnp.arange(3.0, dtype="float32")).sum()
    assert float(grad(h2)(jnp.float32(3.14))) == 30.0
    assert float(jit(grad(h2))(jnp.float32(3.14))) == 30.0
