"""jax.experimental.xla_metadata.set_xla_metadata: metadata attached to the staged
equations (eqn.ctx.xla_metadata) and printed on the lowered ops as
mhlo.frontend_attributes (HLO frontend_attributes), as in JAX 0.10.2; and
jax.experimental.scheduling_groups.xla_metadata_call, which puts it on one call op."""
import threading

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.experimental.scheduling_groups import scheduling_group, xla_metadata_call
from pyjax.experimental.xla_metadata import set_xla_metadata


def test_context_manager_tags_equations_and_ops():
    @jax.jit
    def f(a, b):
        with set_xla_metadata(a=True, c=3):
            return a + b

    eqn, = f.trace(1.0, 2.0).jaxpr.eqns
    assert eqn.ctx.xla_metadata == {"a": True, "c": 3}
    # JAX 0.10.2 prints: stablehlo.add %arg0, %arg1 {mhlo.frontend_attributes = ...}
    assert 'mhlo.frontend_attributes = {a = "true", c = "3"}' in f.lower(1.0, 2.0).as_text()
    # and in HLO: add.1 = f32[] add(a.1, b.1), frontend_attributes={a="true",c="3"}
    assert 'frontend_attributes={a="true",c="3"}' in f.lower(1.0, 2.0).as_text("hlo")
    assert float(f(1.0, 2.0)) == 3.0


def test_metadata_is_part_of_the_trace_cache_key():
    @jax.jit
    def f(a, b):
        return a + b

    with set_xla_metadata(b="c"):
        tagged = f.lower(2.0, 3.0).as_text()
    plain = f.lower(1.0, 2.0).as_text()
    assert 'mhlo.frontend_attributes = {b = "c"}' in tagged
    assert "mhlo.frontend_attributes" not in plain
    with set_xla_metadata(b="c"):
        assert float(f(1.0, 2.0)) == 3.0   # an eager call inside the context still runs


def test_nesting_merges_and_none_removes():
    @set_xla_metadata(a="b")
    @jax.jit
    def f(x, y):
        with set_xla_metadata(c="d"):
            return x * y

    assert 'mhlo.frontend_attributes = {a = "b", c = "d"}' in f.lower(1.0, 2.0).as_text()

    @jax.jit
    def g(x):
        with set_xla_metadata(a="b"):
            with set_xla_metadata(a=None):
                return jnp.cos(x)

    assert "frontend_attributes" not in g.lower(1.0).as_text()


def test_grad_keeps_the_forward_metadata():
    @jax.jit
    def f(x):
        with set_xla_metadata(a="b"):
            return jnp.sin(x)

    text = jax.jit(jax.grad(f)).lower(1.0).as_text()
    cosine, = [line for line in text.splitlines() if "stablehlo.cosine" in line]
    assert 'mhlo.frontend_attributes = {a = "b"}' in cosine


def test_value_tagging_tags_the_defining_op():
    def f(x):
        return set_xla_metadata(jnp.sin(x), t="v")

    # JAX: c:f32[] = xla_metadata_value[xla_metadata_kvs=(('t', 'v'),)] b
    assert "xla_metadata_value[xla_metadata_kvs=(('t', 'v'),)]" in str(jax.make_jaxpr(f)(0.7))
    hlo = jax.jit(f).lower(jnp.array(0.7)).as_text("hlo")
    sine, = [line for line in hlo.splitlines() if "sine(" in line]
    assert 'frontend_attributes={t="v"}' in sine
    assert float(f(0.0)) == 0.0
    assert float(jax.grad(f)(0.0)) == 1.0
    assert jax.vmap(f)(jnp.zeros(3)).shape == (3,)


def test_context_is_per_thread():
    seen = {}
    entered, release = threading.Event(), threading.Event()

    def inside():
        with set_xla_metadata(a="b"):
            entered.set()
            release.wait(10)

    worker = threading.Thread(target=inside)
    worker.start()
    entered.wait(10)
    try:
        seen["text"] = jax.jit(lambda x: x + 1).lower(1.0).as_text()
    finally:
        release.set()
        worker.join()
    assert "frontend_attributes" not in seen["text"]


def test_xla_metadata_call_tags_the_call_op():
    @jax.jit
    def f(x):
        y = x + 2
        # closes over a tracer of the enclosing jit: it becomes an argument of the call
        return xla_metadata_call(lambda a: a * y, inlineable="false")(x)

    np.testing.assert_array_equal(f(jnp.arange(8)), [0, 3, 8, 15, 24, 35, 48, 63])
    inner, = [e for e in f.trace(jnp.arange(8)).jaxpr.eqns
              if e.primitive.name == "xla_metadata_call"]
    assert inner.params["inlineable"] == "false" and len(inner.invars) == 2
    # JAX 0.10.2: ROOT ... call(add.1, x.1), to_apply=..., frontend_attributes={inlineable="false"}
    hlo = f.lower(jnp.arange(8)).as_text("hlo")
    call_line, = [line for line in hlo.splitlines() if " call(" in line]
    assert 'frontend_attributes={inlineable="false"}' in call_line


def test_xla_metadata_call_under_grad_and_vmap():
    @xla_metadata_call(inlineable="false")
    @jax.jit
    def body(x):
        return jax.nn.gelu(x)

    g = jax.jit(jax.grad(lambda x: body(x).sum()))
    # JAX 0.10.2's values; its module calls the metadata call twice (forward, backward)
    np.testing.assert_allclose(g(jnp.array([2.3, 4.5])), [1.0550891, 1.0000291], rtol=1e-6)
    text = g.lower(jnp.array([2.3, 4.5])).as_text()
    assert text.count('mhlo.frontend_attributes = {inlineable = "false"}') == 2
    pair = jax.vmap(xla_metadata_call(lambda x, y: (x * y, x + 1), k="v"))
    out = pair(jnp.arange(3.0), jnp.full(3, 2.0))
    np.testing.assert_array_equal(out[0], [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(out[1], [1.0, 2.0, 3.0])
    transposed = jax.linear_transpose(xla_metadata_call(lambda x: 3.0 * x, k="v"), 1.0)
    assert float(transposed(1.0)[0]) == 3.0


def test_scheduling_group_and_non_string_metadata():
    g = scheduling_group("grp")(lambda x: x * 2)
    assert float(g(1.0)) == 2.0
    assert 'mhlo.frontend_attributes = {scheduling_group = "grp"}' in \
        jax.jit(g).lower(1.0).as_text()
    h = xla_metadata_call(lambda x: x * 2, c=3)
    jax.make_jaxpr(h)(1.0)     # traces, as in JAX; only lowering needs strings
    with pytest.raises(NotImplementedError, match="strings"):
        jax.jit(h).lower(1.0).as_text()


def test_calls_of_one_function_share_one_private_function():
    @xla_metadata_call(inlineable="false")
    @jax.jit
    def g(x):
        return x * 2

    def f(x):
        return g(g(x)).sum()

    def two_functions(lowered):
        return lowered.as_text().count("func.func private @xla_metadata_call")
    x = jnp.arange(8.)
    assert two_functions(jax.jit(f).lower(x)) == 1   # (JAX's counts)
    assert two_functions(jax.jit(jax.grad(f)).lower(x)) == 1
    np.testing.assert_array_equal(jax.jit(jax.grad(f))(x), np.full(8, 4.0))
    remat_g = jax.remat(g)
    h = jax.value_and_grad(lambda x: remat_g(remat_g(x)).sum())
    assert two_functions(jax.jit(h).lower(x)) == 2


def test_a_call_closing_over_a_tracer_is_traced_each_time():
    def f(x, y):
        return xla_metadata_call(lambda a: a * y, inlineable="false")(x)
    x = jnp.arange(3.)
    np.testing.assert_array_equal(jax.jit(f)(x, 2.0), [0., 2., 4.])
    np.testing.assert_array_equal(jax.jit(f)(x, 3.0), [0., 3., 6.])
