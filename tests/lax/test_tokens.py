"""XLA tokens (lax.create_token, lax.after_all) and the token-ordered transfers psend/precv:
eager values, jaxprs, StableHLO, jit arguments and results, and JAX's errors (outputs and
texts from JAX 0.10.2)."""
import threading

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config
from pyjax.sharding import Mesh, PartitionSpec as P


def test_tokens_are_leaves_and_join_eagerly():
    t = lax.create_token()
    assert jax.tree_util.tree_leaves(t) == [t]
    assert type(lax.after_all(t, lax.create_token())) is type(t)
    assert type(lax.after_all()) is type(t)
    assert t.block_until_ready() is t
    assert str(jax.eval_shape(lax.create_token)) == "AbstractToken()"


def test_after_all_takes_only_tokens():
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        lax.after_all(1.0)
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        jax.jit(lambda x: lax.after_all(lax.create_token(), x))(1.0)


def test_token_jaxpr_and_stablehlo():
    jaxpr = jax.make_jaxpr(lambda x: lax.after_all(lax.create_token(x), lax.create_token()))
    lines = [line.rstrip() for line in str(jaxpr(1.0)).splitlines()]
    assert lines == ["{ lambda ; a:f32[]. let", "    b:Tok = create_token",
                     "    c:Tok = create_token", "    d:Tok = after_all b c", "  in (d,) }"]
    text = jax.jit(lambda t: lax.after_all(t, lax.create_token())).lower(
        lax.create_token()).as_text()
    # as JAX prints it
    assert "func.func public @main(%arg0: !stablehlo.token) -> " in text
    assert "%0 = stablehlo.create_token : !stablehlo.token" in text
    assert "%1 = stablehlo.after_all %arg0, %0 : !stablehlo.token" in text


def test_tokens_pass_through_jit_with_arrays():
    t = lax.create_token()
    f = jax.jit(lambda t, x: (lax.after_all(t), x * 2))
    for x in (2.0, 3.0):   # the second call reuses the compiled program
        tok, y = f(t, x)
        assert type(tok) is type(t)
        assert float(y) == 2 * x
    assert jax.grad(lambda x: (lax.create_token(x), x * 2)[1])(1.0) == 2.0


@pytest.mark.parametrize("executor", ["numpy", "xla"])
def test_jit_closing_over_a_token_and_taking_one(executor):
    # the closed-over token is a constant of the jaxpr, as JAX's: { lambda a:Tok; ... }
    t = lax.create_token()
    assert str(jax.make_jaxpr(lambda x: (x + 2, t))(7)) == (
        "{ lambda a:Tok; b:i32[]. let c:i32[] = add b 2:i32[] in (c, a) }")
    with config.executor(executor):
        y, tok = jax.jit(lambda x: (x + 2, t))(7)
        assert int(y) == 9 and type(tok) is type(t)
        _, tok = jax.jit(lambda x, t: (x + 2, lax.after_all(t, t)))(7, t)
        assert type(tok) is type(t)


def test_tokens_from_another_thread():
    out = []
    thread = threading.Thread(target=lambda: out.append(
        jax.jit(lambda t: lax.after_all(t, t))(lax.create_token())))
    thread.start()
    thread.join()
    assert type(out[0]) is type(lax.create_token())


def test_psend_precv_need_shard_map_and_a_gpu():
    with pytest.raises(NameError, match="unbound axis name"):
        lax.psend(jnp.ones(3), "i", [(0, 1)])
    mesh = Mesh(np.array(jax.devices()[:1]), ("i",))

    def body(x):
        token = lax.psend(x, "i", [(0, 0)])
        return lax.precv(token, jax.ShapeDtypeStruct(x.shape, x.dtype), "i", [(0, 0)])
    g = jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    with pytest.raises(NotImplementedError, match="psend is currently only implemented on GPU"):
        jax.jit(g)(jnp.ones(3))
    # (Eagerly each op runs as its own program: JAX 0.10.2 crashes on the token there.)
    with pytest.raises(NotImplementedError, match="psend gives a token, which eager "
                       "shard_map does not implement"):
        g(jnp.ones(3))
