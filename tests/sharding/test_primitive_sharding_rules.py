"""Sharding rules of gather, dynamic_slice, top_k, reduce_window, bitcast_convert_type,
rng_bit_generator, scan and the cotangents of slices, broadcasts and reshards, einsum's Auto-mode
contractions, and out_sharding= on segment reductions and nn initializers, on eight
CPU devices. Expected specs, values and errors are JAX
0.10.2's for the same programs."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.core import ShardingTypeError
from pyjax.sharding import PartitionSpec as P

from harness import checks_on_devices


def _mesh():
    return jax.make_mesh((2, 4), ("x", "y"))   # Explicit axes


def check_gather_keeps_full_slices_split():
    with jax.set_mesh(_mesh()):
        embed = jax.device_put(jnp.arange(64 * 16.).reshape(64, 16), P("x", None))
        tok = jax.device_put(jnp.arange(8 * 4).reshape(8, 4) % 16, P())
        gather = jax.jit(lambda e, t: e.at[:, t].get())
        assert gather(embed, tok).sharding.spec == P("x", None, None)
        grad = jax.jit(jax.grad(lambda e, t: gather(e, t).sum()))(embed, tok)
        assert grad.sharding.spec == P("x", None)


def check_slice_and_broadcast_cotangents_take_their_operands_split():
    with jax.set_mesh(_mesh()):
        v = jax.device_put(np.arange(16.), P("x"))
        ds = jax.jit(lambda u: lax.dynamic_slice_in_dim(u, jnp.int32(2), 4))
        assert ds(v).sharding.spec == P("x")
        assert jax.jit(jax.grad(lambda u: ds(u).sum()))(v).sharding.spec == P("x")
        rep = jax.device_put(np.arange(16.), P())
        grads = jax.jit(jax.grad(lambda p, q: (p + q).sum(), argnums=(0, 1)))(rep, v)
        assert grads[0].sharding.spec == P(None)
        assert grads[1].sharding.spec == P("x")


def check_top_k_and_reduce_window():
    with jax.set_mesh(_mesh()):
        t = jax.device_put(np.arange(4 * 8 * 6.).reshape(4, 8, 6), P("x", "y", None))
        assert jax.jit(lambda u: lax.top_k(u, 3)[1])(t).sharding.spec == P("x", "y", None)
        with pytest.raises(ShardingTypeError, match="should be unsharded over the axis"):
            jax.jit(lambda u: lax.top_k(u, 3, axis=1))(t)
        window = jax.jit(lambda u: lax.reduce_window(u, 0., lax.add, (1, 1, 2), (1, 1, 2),
                                                     "VALID"))(t)
        assert window.sharding.spec == P("x", "y", None)


def check_bitcast_convert_type_of_sub_byte_types():
    with jax.set_mesh(_mesh()):
        i4 = jax.device_put(np.array([[1, -2, 3, 7]] * 2, np.dtype("int4")), P("x"))
        out = jax.jit(lambda u: lax.bitcast_convert_type(u, jnp.float16))(i4)
        assert out.sharding.spec == P("x")
        assert np.asarray(out).tolist() == [16136.0, 16136.0]
    assert np.asarray(lax.bitcast_convert_type(
        np.array([1, -2, 3, 7], np.dtype("int4")), np.dtype("uint4"))).tolist() == [1, 14, 3, 7]


def check_out_sharding_of_segment_ops_and_initializers():
    with jax.set_mesh(_mesh()):
        data = jax.device_put(jnp.arange(8.), P("x"))
        ids = jax.device_put(jnp.array([0, 0, 1, 1, 1, 2, 2, 3]), P("x"))
        out = jax.ops.segment_max(data, ids, num_segments=4, out_sharding=P("x"))
        assert out.sharding.spec == P("x")
        assert np.asarray(out).tolist() == [1.0, 4.0, 6.0, 7.0]
        with pytest.raises(NotImplementedError):
            jax.ops.segment_prod(data, ids, num_segments=4,
                                 out_sharding=P(unreduced={"x"}))
        init = jax.nn.initializers.glorot_uniform()(jax.random.key(0), (8, 4),
                                                     out_sharding=P("x", "y"))
        assert init.sharding.spec == P("x", "y")
        with pytest.raises(NotImplementedError):
            jax.nn.initializers.orthogonal()(jax.random.key(0), (8, 4), out_sharding=P("x"))


def check_scan_slices_and_stacks_keep_their_split():
    with jax.set_mesh(jax.make_mesh((2, 2), ("x", "y"))):
        carry = jax.device_put(np.arange(16.).reshape(2, 8), P(None, "x"))
        xs = jax.device_put(np.arange(128.).reshape(8, 8, 2), P(None, "x", "y"))

        def body(c, x):
            assert jax.typeof(x).sharding.spec == P("x", "y")
            y = jnp.einsum("ab,bc->ac", c, x, out_sharding=P(None, "y"))
            return jnp.einsum("ab,bc->ac", y, x.T, out_sharding=P(None, "x")), y

        f = jax.jit(lambda c, x: lax.scan(body, c, x))
        last, ys = f(carry, xs)
        assert last.sharding.spec == P(None, "x")
        assert ys.sharding.spec == P(None, None, "y")
        with pytest.raises(ValueError, match="0th dimension of all xs should be replicated"):
            f(carry, jax.device_put(xs, P("x", None, None)))
        with pytest.raises(TypeError, match="carry input and carry output must have equal "
                                            "types"):
            jax.jit(lambda v: lax.scan(lambda c, _: (jax.sharding.reshard(c, P()), None),
                                       v, None, length=1)[0])(
                jax.device_put(np.arange(4.), P("x")))


def check_reshard_and_auto_axes_cotangents():
    with jax.set_mesh(jax.make_mesh((2,), ("x",))):
        f = jax.jit(lambda v: lax.broadcast_in_dim(v, (4, 2), [0, 1], out_sharding=P("x")))
        arr = jnp.arange(8.).reshape(4, 2)
        assert f(arr).sharding.spec == P("x", None)
        assert jax.jit(jax.grad(lambda v: f(v).sum()))(arr).sharding.spec == P(None, None)
    with jax.set_mesh(jax.make_mesh((4,), ("data",))):
        a = jax.device_put(np.ones((8, 32, 1, 16)), P(None, None, None, "data"))
        b = jax.device_put(np.ones((8, 32, 1, 16)), P("data"))
        c = jax.device_put(np.ones((8, 32, 1, 8)), P("data"))
        out = jax.jit(lambda x, y, z: jnp.einsum("bthD, bthi, bthj->ijD", x, y, z,
                                                 out_sharding=P("data", None, None)))(a, b, c)
        assert out.sharding.spec == P("data", None, None)


def check_matmul_out_sharding_of_size_one_batch_axes():
    # JAX 0.10.2: P('x', None, None), eagerly and under jit (a size-1 batch axis both
    # operands have keeps the split out_sharding asks for)
    mesh = jax.make_mesh((1, 2), ("x", "y"))
    with jax.set_mesh(mesh):
        x = jax.reshard(jnp.ones((1, 1, 4)), P("x", None, "y"))
        y = jax.reshard(jnp.ones((1, 4, 2)), P("x", "y", None))

        def f(a, b):
            return jnp.matmul(a, b, out_sharding=P("x"))
        for z in (f(x, y), jax.jit(f)(x, y)):
            assert z.sharding == jax.sharding.NamedSharding(mesh, P("x", None, None))
            np.testing.assert_array_equal(z, np.full((1, 1, 2), 4.0))


def check_key_arrays_report_their_own_rank_of_spec():
    # JAX 0.10.2: a key's sharding spans the key array's dimensions, not its data's
    mesh = jax.make_mesh((2,), ("x",))
    with jax.set_mesh(mesh):
        key = jax.device_put(jax.random.key(72), jax.sharding.NamedSharding(mesh, P()))
        assert jax.jit(lambda k: jax.random.fold_in(k, 1))(key).sharding.spec == P()
        keys = jax.device_put(jax.random.split(jax.random.key(0), 8),
                              jax.sharding.NamedSharding(mesh, P("x")))
        assert keys.sharding.spec == jax.jit(lambda k: k)(keys).sharding.spec == P("x")


def check_rng_bit_generator_keeps_the_key_split_and_the_bits_whole():
    with jax.set_mesh(jax.make_mesh((2,), ("x",))):
        key = jnp.asarray(np.array((1, 2, 3, 4), np.uint32))
        new_key, bits = lax.rng_bit_generator(key, shape=(4, 8))
        assert (new_key.sharding.spec, bits.sharding.spec) == (P(None,), P(None, None))
        new_key, bits = jax.jit(lambda k: lax.rng_bit_generator(k, (4, 8)))(key)
        assert (new_key.aval.sharding.spec, bits.aval.sharding.spec) == \
            (P(None,), P(None, None))


def check_reduce_sum_cotangent_is_one_broadcast_of_the_operands_type():
    # JAX 0.10.2: grad's backward pass broadcasts the cotangent straight to the split
    # of the summed operand (no unsplit broadcast and constraint after it)
    mesh = jax.make_mesh((4,), ("x",))
    with jax.set_mesh(mesh):
        x = jax.device_put(np.arange(16.).reshape(8, 2), P("x", None))
        y = jax.device_put(np.arange(16.).reshape(8, 2).T, P(None, "x"))

        @jax.jit
        def f(a, b):
            return jnp.sum(jnp.einsum("xy,yz->xz", a, b, out_sharding=P("x", None)))

        grad = jax.jit(jax.grad(f, argnums=(0, 1)))
        gx, gy = grad(x, y)
        assert (gx.sharding.spec, gy.sharding.spec) == (P("x", None), P(None, "x"))
        np.testing.assert_array_equal(gx, np.tile([[56., 64.]], (8, 1)))
        backward = [e for e in grad.trace(x, y).jaxpr.eqns if "jaxpr" in e.params][-1]
        specs = {e.primitive.name: e.outvars[0].aval.sharding.spec
                 for e in backward.params["jaxpr"].eqns}
        assert specs["broadcast_in_dim"] == P("x", None)
        assert specs["dot_general"] == P("x", None)
        assert specs["transpose"] == P(None, "x")
        assert "sharding_constraint" not in specs


def check_ragged_dot_takes_out_sharding():
    mesh = jax.make_mesh((2,), ("x",))
    with jax.set_mesh(mesh):
        args = [jnp.ones((16, 4)), jnp.ones((2, 4, 3)), jnp.array([8, 8])]
        dnums = lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])

        def f(lhs, rhs, gs):
            return (lax.ragged_dot(lhs, rhs, gs, out_sharding=P("x", None)),
                    lax.ragged_dot_general(lhs, rhs, gs, dnums, out_sharding=P("x", None)))

        for out in (*f(*args), *jax.jit(f)(*args)):
            assert out.sharding == jax.sharding.NamedSharding(mesh, P("x", None))
            np.testing.assert_array_equal(out, np.full((16, 3), 4.))


def check_linalg_results_keep_the_batch_split():
    # JAX 0.10.2: every result split as the batch dimensions, matrix dimensions whole
    mesh = jax.make_mesh((2,), ("x",))
    with jax.set_mesh(mesh):
        a = np.random.RandomState(0).randn(8, 4, 4).astype(np.float32)
        split = jax.sharding.reshard(jnp.asarray(a), P("x"))
        specs = {
            lax.linalg.lu: [P("x", None, None), P("x", None), P("x", None)],
            lax.linalg.qr: [P("x", None, None), P("x", None, None)],
            lax.linalg.eigh: [P("x", None, None), P("x", None)],
            lax.linalg.svd: [P("x", None, None), P("x", None), P("x", None, None)],
            lax.linalg.eig: [P("x", None), P("x", None, None), P("x", None, None)],
            lax.linalg.schur: [P("x", None, None), P("x", None, None)],
            lax.linalg.tridiagonal: [P("x", None, None), P("x", None), P("x", None),
                                     P("x", None)],
        }
        for f, expected in specs.items():
            assert [o.sharding.spec for o in jax.jit(f).trace(split).jaxpr.out_avals] \
                == expected, f
        sign, logdet = jnp.linalg.slogdet(split)
        assert sign.sharding.spec == logdet.sharding.spec == P("x")
        rhs = jax.sharding.reshard(jnp.asarray(a[:, :, :1]), P("x"))
        x = jnp.linalg.solve(split, rhs)
        assert x.sharding.spec == P("x", None, None)
        np.testing.assert_allclose(x, np.linalg.solve(a, a[:, :, :1]), rtol=1e-4,
                                   atol=1e-4)
        x = jax.vmap(jnp.linalg.solve)(split, jax.sharding.reshard(jnp.asarray(a[:, 0]),
                                                                   P("x")))
        assert x.sharding.spec == P("x", None)
        with pytest.raises(ShardingTypeError, match=r"Input 0 to lu must be unsharded on "
                           r"non-batch dimensions, but got P\(None, 'x', None\)\."):
            jax.jit(lax.linalg.lu)(jax.sharding.reshard(split, P(None, "x")))
        with pytest.raises(ShardingTypeError, match=r"All inputs to triangular_solve must "
                           r"have the same batch sharding, but got \('x',\) and \(None,\)\."):
            lax.linalg.triangular_solve(split, jax.sharding.reshard(rhs, P()),
                                        left_side=True)


def check_conv_general_dilated_follows_lhs_and_types_its_cotangents():
    # JAX 0.10.2: the result split as lhs when the kernel is whole; grads typed as the
    # operands; a split kernel needs out_sharding
    dnums = lax.ConvDimensionNumbers((0, 2, 1), (2, 1, 0), (0, 2, 1))

    def model(kernel, inputs, out_sharding=None):
        padded = jnp.pad(inputs, ((0, 0), (2, 0), (0, 0)))
        return lax.conv_general_dilated(padded, kernel, (1,), "VALID",
                                        dimension_numbers=dnums, out_sharding=out_sharding)

    def loss(k, x):
        return model(k, x).sum()

    rng = np.random.RandomState(0)
    k_host = rng.randn(3, 1, 16).astype(np.float32)
    x_host = rng.randn(64, 32, 1).astype(np.float32)
    want_k, want_x = jax.grad(loss, argnums=(0, 1))(k_host, x_host)   # on one device
    with jax.set_mesh(jax.make_mesh((2,), ("x",))):
        kernel = jnp.asarray(k_host)
        inputs = jax.device_put(x_host, P("x", None, None))
        assert jax.jit(model)(kernel, inputs).sharding.spec == P("x", None, None)
        gk, gx = jax.jit(jax.grad(loss, argnums=(0, 1)))(kernel, inputs)
        assert (gk.sharding.spec, gx.sharding.spec) == (P(None, None, None),
                                                       P("x", None, None))
        np.testing.assert_allclose(gk, want_k, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(gx, want_x, rtol=1e-5, atol=1e-4)
        split_kernel = jax.device_put(k_host, P(None, None, "x"))
        with pytest.raises(ShardingTypeError, match="Please specify the output sharding via "
                           "`out_sharding` parameter of `conv_general_dilated`"):
            jax.jit(model)(split_kernel, inputs)
        out = jax.jit(model, static_argnums=2)(split_kernel, inputs, P("x", None, None))
        assert out.sharding.spec == P("x", None, None)

test_on_eight_devices = checks_on_devices(globals(), 8)
