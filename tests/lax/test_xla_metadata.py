"""jax.experimental.xla_metadata.set_xla_metadata: metadata attached to the staged
equations (eqn.ctx.xla_metadata) and printed on the lowered ops as
mhlo.frontend_attributes (HLO frontend_attributes), as in JAX 0.10.2."""
import threading

import pyjax as jax
import pyjax.numpy as jnp
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
