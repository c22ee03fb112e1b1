"""vmap: JAX's in_axes/out_axes semantics, its errors, named axes with the collectives,
composition with grad/jit/jacfwd/jacrev, the FAQ's vmap(grad(f)) examples, and
per-example gradients of a small softmax model."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.nn  # noqa: F401  (jax.nn.sigmoid in the FAQ example)
import pyjax.numpy as jnp
from pyjax import errors, lax


def _arange(*shape, dtype=np.float32):
    return np.arange(np.prod(shape), dtype=dtype).reshape(shape)


# --- in_axes / out_axes -----------------------------------------------------------------

def test_maps_leading_axis_by_default():
    x = _arange(3, 4)
    out = jax.vmap(lambda r: jnp.sum(r * r))(x)
    assert isinstance(out, jax.Array)
    np.testing.assert_allclose(out, np.sum(x * x, axis=1))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_in_axes_int_and_negative(axis):
    x = _arange(2, 3, 4)
    out = jax.vmap(lambda v: jnp.sum(v, axis=0), in_axes=axis)(x)
    np.testing.assert_allclose(out, np.sum(np.moveaxis(x, axis, 0), axis=1))


def test_in_axes_none_broadcasts_an_argument():
    x, w = _arange(5, 3), _arange(3)
    out = jax.vmap(lambda a, b: a @ b, in_axes=(0, None))(x, w)
    np.testing.assert_allclose(out, x @ w)


def test_in_axes_list_is_a_tuple():
    x, w = _arange(5, 3), _arange(3)
    np.testing.assert_allclose(jax.vmap(jnp.dot, in_axes=[0, None])(x, w), x @ w)


@pytest.mark.parametrize("out_axes", [0, 1, -1, -2])
def test_out_axes(out_axes):
    x = _arange(4, 3)
    out = jax.vmap(lambda r: r * 2, out_axes=out_axes)(x)
    np.testing.assert_allclose(out, np.moveaxis(x * 2, 0, out_axes))


def test_unmapped_output_is_broadcast_or_returned_with_out_axes_none():
    x = _arange(4)
    out = jax.vmap(lambda v: (v + 1, jnp.float32(7)), out_axes=(0, None))(x)
    np.testing.assert_allclose(out[0], x + 1)
    assert out[1].shape == () and float(out[1]) == 7
    np.testing.assert_allclose(jax.vmap(lambda v: jnp.ones(2))(x), np.ones((4, 2)))


def test_spmd_axis_name_is_ignored_and_out_axes_none_returns_values_unchanged():
    out = jax.vmap(lambda v: (v * 2, 3.0), out_axes=(0, None), spmd_axis_name="d")(_arange(2))
    assert out[0].tolist() == [0.0, 2.0] and out[1] == 3.0 and type(out[1]) is float


def test_pytree_prefix_in_axes_and_out_axes():
    params = {"w": _arange(3, 2), "b": _arange(2)}
    xs = _arange(5, 3)

    def f(p, x):
        return {"y": x @ p["w"] + p["b"], "x": x}

    out = jax.vmap(f, in_axes=({"w": None, "b": None}, 0), out_axes={"y": 1, "x": 0})(
        params, xs)
    np.testing.assert_allclose(out["y"], (xs @ params["w"] + params["b"]).T)
    np.testing.assert_allclose(out["x"], xs)
    # A prefix: one entry for the whole dict, axis 1 for the second argument.
    out = jax.vmap(f, in_axes=(None, 1))(params, xs.T)
    np.testing.assert_allclose(out["y"], xs @ params["w"] + params["b"])


def test_keyword_arguments_are_mapped_on_axis_zero():
    x, y = _arange(3, 2), _arange(3, 2) + 10
    out = jax.vmap(lambda a, b: a - b, in_axes=(None,))(_arange(2), b=y)
    np.testing.assert_allclose(out, _arange(2) - y)
    np.testing.assert_allclose(jax.vmap(lambda a, b: a * b)(x, b=y), x * y)


def test_nested_vmap_is_an_outer_product():
    x, y = _arange(3), _arange(4) + 1
    out = jax.vmap(jax.vmap(lambda a, b: a * b, in_axes=(None, 0)), in_axes=(0, None))(x, y)
    np.testing.assert_allclose(out, np.outer(x, y))


def test_nested_vmap_with_different_axes():
    x = _arange(2, 3, 4)
    f = jax.vmap(jax.vmap(jnp.sum, in_axes=1), in_axes=2)
    np.testing.assert_allclose(f(x), np.sum(x, axis=0).T)


def test_axis_size_without_mapped_arguments():
    out = jax.vmap(lambda: jnp.arange(3), in_axes=(), axis_size=2)()
    np.testing.assert_allclose(out, np.tile(np.arange(3), (2, 1)))
    out = jax.vmap(lambda c: c * 2, in_axes=None, axis_size=3)(5.0)
    np.testing.assert_allclose(out, [10.0, 10.0, 10.0])


def test_batch_sizes_zero_and_one():
    for n in (0, 1):
        x = _arange(n, 3)
        out = jax.vmap(lambda r: jnp.dot(r, r) + jnp.max(r))(x)
        assert out.shape == (n,)
        np.testing.assert_allclose(out, np.sum(x * x, 1) + (x.max(1) if n else 0))


def test_python_control_flow_on_unmapped_values():
    def f(x, flag):
        return x * 2 if flag > 0 else x
    np.testing.assert_allclose(jax.vmap(f, in_axes=(0, None))(_arange(3), 1.0), [0, 2, 4])


def test_identity_of_numpy_input_returns_a_pyjax_array():
    out = jax.vmap(lambda v: v)(_arange(2, 2))
    assert isinstance(out, jax.Array)


def test_broadcasting_unmapped_operand_is_not_materialised():
    x, y = _arange(5, 3, 4), _arange(3, 4)
    jaxpr = str(jax.make_jaxpr(jax.vmap(lambda a, b: a + b, in_axes=(0, None)))(x, y))
    assert "broadcast_in_dim" not in jaxpr and "add" in jaxpr
    w = _arange(3, 2)
    jaxpr = str(jax.make_jaxpr(jax.vmap(lambda a: a @ w, in_axes=2, out_axes=1))(x))
    assert "transpose" not in jaxpr and "broadcast_in_dim" not in jaxpr


# --- errors -----------------------------------------------------------------------------

def test_inconsistent_sizes_name_the_arguments():
    def f(x, y):
        return x + y
    with pytest.raises(ValueError, match=r"inconsistent sizes(.|\n)*one axis had size 2: "
                       r"axis 0 of argument x of type float32\[2\](.|\n)*one axis had size 3: "
                       r"axis 0 of argument y of type float32\[3\]"):
        jax.vmap(f)(_arange(2), _arange(3))


def test_inconsistent_sizes_in_a_pytree_name_the_leaf():
    with pytest.raises(ValueError, match=r"argument p\['b'\] of type float32\[4,2\]"):
        jax.vmap(lambda p: p["a"] + p["b"][0])({"a": _arange(3), "b": _arange(4, 2)})


def test_axis_size_conflicting_with_an_argument():
    with pytest.raises(ValueError, match="the `axis_size` argument was 4(.|\n)*argument x"):
        jax.vmap(lambda x: x, axis_size=4)(_arange(3))


def test_axis_out_of_range_names_argument_and_shape():
    with pytest.raises(ValueError, match=r"along axis 2, which implies that its rank should "
                       r"be at least 3, but is only 2 \(its shape is \(3, 4\)\): argument "
                       r"x of type f32\[3,4\]"):
        jax.vmap(lambda x: x, in_axes=2)(_arange(3, 4))
    with pytest.raises(ValueError, match="rank should be at least 1, but is only 0"):
        jax.vmap(lambda x: x)(np.float32(1.0))


def test_in_axes_length_must_match_arguments():
    with pytest.raises(ValueError, match=r"len\(in_axes\)=2, len\(args\)=1"):
        jax.vmap(lambda x: x, in_axes=(0, 0))(_arange(3))


def test_in_axes_must_be_a_prefix():
    with pytest.raises(ValueError, match="vmap in_axes specification must be a tree prefix"):
        jax.vmap(lambda p: p, in_axes=({"a": 0, "c": 0},))({"a": _arange(2), "b": _arange(2)})


@pytest.mark.parametrize("bad", [1.0, "0", {"a": 0}])
def test_in_axes_of_the_wrong_type(bad):
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or"):
        jax.vmap(lambda x: x, in_axes=bad)


def test_out_axes_leaves_must_be_ints():
    with pytest.raises(TypeError, match="vmap out_axes must be an int, None, or"):
        jax.vmap(lambda x: x, out_axes=(0.5,))


@pytest.mark.parametrize("kwargs, fun, arg, message", [
    # JAX 0.10.2's messages: the output's path, or the axis name where there is one
    ({}, lambda x: x, _arange(3),
     "at vmap out_axes, got axis spec None but output was batched on axis 0"),
    ({"axis_name": "i"}, lambda x: x, _arange(3),
     "vmap has mapped output (axis_name=i) but out_axes is None"),
    ({"out_axes": ({"a": 0, "b": None},)}, lambda x: ({"a": x, "b": x * 2},), _arange(3),
     "at vmap out_axes[0]['b'], got axis spec None but output was batched on axis 0"),
    ({"in_axes": 1}, lambda x: {"a": [1.0, x]}, np.ones((2, 3), np.float32),
     "at vmap out_axes['a'][1], got axis spec None but output was batched on axis 1"),
])
def test_mapped_output_with_out_axes_none(kwargs, fun, arg, message):
    kwargs = {"out_axes": None, **kwargs}
    with pytest.raises(ValueError) as info:
        jax.vmap(fun, **kwargs)(arg)
    assert str(info.value) == message


def test_nothing_mapped_needs_axis_size():
    with pytest.raises(ValueError, match="non-None value in in_axes or axis_size must"):
        jax.vmap(lambda x: x, in_axes=None)(_arange(3))


def test_non_array_arguments_and_results():
    with pytest.raises(TypeError, match="argument x of type str is not a valid JAX type"):
        jax.vmap(lambda x: x)("abc")
    with pytest.raises(TypeError, match="not a valid JAX type"):
        jax.vmap(lambda x: "abc")(_arange(3))
    with pytest.raises(TypeError, match="Expected a callable value, got 3"):   # JAX 0.10.2
        jax.vmap(3)


def test_python_branch_on_a_batched_value():
    def f(x):
        return x if x > 0 else -x
    with pytest.raises(errors.TracerBoolConversionError, match="batched by vmap"):
        jax.vmap(f)(_arange(3))


# --- named axes -------------------------------------------------------------------------

def test_psum_normalizes_over_the_batch():
    x = _arange(4) + 1
    out = jax.vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(x)
    np.testing.assert_allclose(out, x / x.sum(), rtol=1e-6)


def test_collectives_in_axis():
    x = _arange(4, 2)
    f = jax.vmap(lambda v: (lax.pmean(v, "i"), lax.pmax(v, "i"), lax.pmin(v, "i"),
                            lax.axis_index("i")), axis_name="i")
    mean, hi, lo, index = f(x)
    np.testing.assert_allclose(mean, np.broadcast_to(x.mean(0), (4, 2)))
    np.testing.assert_allclose(hi, np.broadcast_to(x.max(0), (4, 2)))
    np.testing.assert_allclose(lo, np.broadcast_to(x.min(0), (4, 2)))
    np.testing.assert_array_equal(index, np.arange(4))
    assert index.dtype == np.int32


def test_pmean_of_integers_is_float_and_psum_of_python_scalar_is_the_size():
    out = jax.vmap(lambda v: lax.pmean(v, "i"), axis_name="i")(np.arange(4, dtype=np.int32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [1.5] * 4)
    np.testing.assert_array_equal(
        jax.vmap(lambda v: lax.psum(1, "i"), axis_name="i")(_arange(5)), [5] * 5)


def test_collectives_take_pytrees():
    x = {"a": _arange(3), "b": _arange(3, 2)}
    out = jax.vmap(lambda t: lax.psum(t, "i"), axis_name="i")(x)
    np.testing.assert_allclose(out["a"], [3.0] * 3)
    np.testing.assert_allclose(out["b"], np.broadcast_to(x["b"].sum(0), (3, 2)))


@pytest.mark.parametrize("axis,tiled", [(0, False), (1, False), (-1, False), (0, True),
                                        (1, True)])
def test_all_gather(axis, tiled):
    x = _arange(3, 2, 2)
    out = jax.vmap(lambda v: lax.all_gather(v, "i", axis=axis, tiled=tiled), axis_name="i")(x)
    gathered = np.concatenate(list(x), axis) if tiled else np.stack(list(x), axis)
    np.testing.assert_allclose(out, np.broadcast_to(gathered, (3,) + gathered.shape))


def test_nested_named_axes():
    x = _arange(2, 3)
    inner = jax.vmap(lambda v: (lax.psum(v, "i"), lax.psum(v, "j"), lax.psum(v, ("i", "j")),
                                lax.axis_index("i"), lax.axis_index("j")), axis_name="j")
    sum_i, sum_j, sum_ij, index_i, index_j = jax.vmap(inner, axis_name="i")(x)
    np.testing.assert_allclose(sum_i, np.broadcast_to(x.sum(0), (2, 3)))
    np.testing.assert_allclose(sum_j, np.broadcast_to(x.sum(1, keepdims=True), (2, 3)))
    np.testing.assert_allclose(sum_ij, np.full((2, 3), x.sum()))
    np.testing.assert_array_equal(index_i, [[0] * 3, [1] * 3])
    np.testing.assert_array_equal(index_j, [[0, 1, 2]] * 2)


def test_inner_axis_name_shadows_outer():
    x = _arange(2, 3)
    f = jax.vmap(jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i"), axis_name="i")
    np.testing.assert_allclose(f(x), np.broadcast_to(x.sum(1, keepdims=True), (2, 3)))


def test_collectives_inside_jit_inside_vmap():
    x = _arange(4)
    f = jax.vmap(jax.jit(lambda v: v - lax.pmean(v, "i")), axis_name="i")
    np.testing.assert_allclose(f(x), x - x.mean())
    g = jax.vmap(jax.jit(lambda v: lax.axis_index("i") + 0 * v.astype(jnp.int32)),
                 axis_name="i")
    np.testing.assert_array_equal(g(x), np.arange(4))


def test_unbound_axis_name():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(1.0, "i")
    with pytest.raises(NameError, match="unbound axis name: k"):
        jax.vmap(lambda v: lax.psum(v, "k"), axis_name="i")(_arange(3))
    with pytest.raises(NameError, match="unbound axis name: i"):
        jax.jit(lambda v: lax.all_gather(v, "i"))(_arange(3))


def test_differentiating_collectives_inside_vmap():
    x, t = _arange(3) + 1, _arange(3) * 0 + 1
    # psum is linear: its tangent is the psum of tangents.
    out, tangent = jax.vmap(lambda a, b: jax.jvp(lambda y: lax.psum(y, "i"), (a,), (b,)),
                            axis_name="i")(x, t)
    np.testing.assert_allclose(out, [6.0] * 3)
    np.testing.assert_allclose(tangent, [3.0] * 3)
    # As in JAX, transposing psum (and all_gather) sums the cotangents of every member:
    # each member gets the gradient of the sum of all members' outputs.
    grads = jax.vmap(jax.grad(lambda y: lax.psum(y, "i")), axis_name="i")(x)
    np.testing.assert_allclose(grads, [3.0] * 3)
    w = np.array([1.0, 2.0, 3.0], np.float32)
    grads = jax.vmap(jax.grad(lambda y: jnp.sum(lax.all_gather(y, "i") * w)),
                     axis_name="i")(x)
    np.testing.assert_allclose(grads, 3 * w)
    grads = jax.vmap(jax.grad(lambda y: y * lax.pmax(y, "i")), axis_name="i")(x)
    np.testing.assert_allclose(grads, [3.0, 3.0, 3.0 + 6.0])


# --- composition ------------------------------------------------------------------------

def test_vmap_of_grad_and_grad_of_vmap():
    x = _arange(4) / 4
    np.testing.assert_allclose(jax.vmap(jax.grad(jnp.sin))(x), np.cos(x), rtol=1e-6)
    g = jax.grad(lambda v: jnp.sum(jax.vmap(lambda s: s ** 3)(v)))(x)
    np.testing.assert_allclose(g, 3 * x ** 2, rtol=1e-6)


def test_jit_of_vmap_and_vmap_of_jit():
    x, y = _arange(3, 4), _arange(4, 2)
    f = jax.jit(jax.vmap(lambda r: jnp.tanh(r @ y)))
    np.testing.assert_allclose(f(x), np.tanh(x @ y), rtol=1e-5)
    g = jax.vmap(jax.jit(lambda r: jnp.tanh(r @ y)), in_axes=1, out_axes=1)
    np.testing.assert_allclose(g(x.T), np.tanh(x @ y).T, rtol=1e-5)
    h = jax.vmap(jax.jit(lambda r, s: r * s), in_axes=(0, None))
    np.testing.assert_allclose(h(x, y[:, 0]), x * y[:, 0], rtol=1e-6)


def test_jacfwd_jacrev_and_hessian():
    def f(v):
        return jnp.array([v[0] * v[1], jnp.sin(v[2]), v[0] ** 2])
    x = np.array([1.0, 2.0, 0.5], np.float32)
    expected = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, np.cos(0.5)], [2.0, 0.0, 0.0]])
    np.testing.assert_allclose(jax.jacfwd(f)(x), expected, rtol=1e-6)
    np.testing.assert_allclose(jax.jacrev(f)(x), expected, rtol=1e-6)
    hess = jax.hessian(lambda v: jnp.sum(v ** 3) + v[0] * v[1])(x)
    np.testing.assert_allclose(hess, np.diag(6 * x) + np.array([[0, 1, 0], [1, 0, 0],
                                                                 [0, 0, 0]]), rtol=1e-6)
    batched = jax.vmap(jax.jacrev(f))(np.stack([x, 2 * x]))
    np.testing.assert_allclose(batched[0], expected, rtol=1e-6)


def test_vmap_of_custom_derivatives_and_checkpoint():
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)
    f.defjvp(lambda primals, tangents: (f(primals[0]), 2.0 * tangents[0]))

    @jax.custom_vjp
    def g(x):
        return x * x
    g.defvjp(lambda x: (x * x, x), lambda x, ct: (10.0 * x * ct,))

    x = _arange(3)
    np.testing.assert_allclose(jax.vmap(f)(x), np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.grad(f))(x), [2.0] * 3)
    np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(jax.vmap(f)(v)))(x), [2.0] * 3)
    np.testing.assert_allclose(jax.vmap(jax.grad(g))(x), 10 * x)
    np.testing.assert_allclose(jax.grad(lambda v: jnp.sum(jax.vmap(g)(v)))(x), 10 * x)
    h = jax.checkpoint(lambda v: jnp.sin(jnp.sin(v)))
    np.testing.assert_allclose(jax.vmap(jax.grad(h))(x),
                               np.cos(np.sin(x)) * np.cos(x), rtol=1e-6)


# --- per-example gradients (the FAQ's step/sigmoid prints: test_faq_audit.py) ------------

def test_per_example_gradients_of_a_softmax_model():
    rng = np.random.default_rng(0)
    n, d, k = 128, 10, 5
    params = (rng.normal(size=(d, k)).astype(np.float32) * 0.5,
              rng.normal(size=k).astype(np.float32) * 0.1)
    xs = rng.normal(size=(n, d)).astype(np.float32)
    ys = np.eye(k, dtype=np.float32)[rng.integers(0, k, n)]

    def loss(params, x, y):
        w, b = params
        return -jnp.sum(jax.nn.log_softmax(x @ w + b) * y)

    per_example = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))(params, xs, ys)
    grad = jax.jit(jax.grad(loss))
    loop = [grad(params, x, y) for x, y in zip(xs, ys)]
    for i, leaf in enumerate(per_example):
        assert leaf.shape == (n,) + params[i].shape
        np.testing.assert_allclose(leaf, np.stack([g[i] for g in loop]), rtol=1e-6,
                                   atol=1e-6)


def test_pytree_arguments_are_rebuilt_under_the_batch_trace():
    # flax's Variables record the trace they are made in and refuse updates from another:
    # vmap rebuilds its arguments (mapped or not) inside its trace, as JAX does
    from pyjax.extend.core import get_opaque_trace_state

    @jax.tree_util.register_pytree_node_class
    class Recorder:
        def __init__(self, value):
            self.value, self.state = value, get_opaque_trace_state()

        def tree_flatten(self):
            return (self.value,), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    def f(x, unmapped):
        here = get_opaque_trace_state()
        return x.value * 2, (x.state == here, unmapped.state == here)

    x, same = jax.vmap(f, in_axes=(0, None), out_axes=(0, None))(
        Recorder(jnp.ones(3)), Recorder(jnp.ones(2)))
    assert same == (True, True)
