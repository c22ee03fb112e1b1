"""jax.ds (dynamic slice indices), jax.Ref under jit, grad, vmap and control flow (as
arguments and closed over), the jax.ref module, jax.empty_ref / jax.free_ref, jax.ad
(the with_refs markers of a vjp pullback) and jax.memory.Space.
Expected values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


def test_ds_indexes_like_jax():
    x = jnp.arange(10)
    assert repr(jax.ds(4, 2)) == "Slice(start=4, size=2, stride=1)"
    assert jax.ds(None) == slice(None)
    assert repr(jax.ds(3)) == "Slice(start=0, size=3, stride=1)"
    assert x[jax.ds(4, 2)].tolist() == [4, 5]
    assert jax.jit(lambda a, i: a[jax.ds(i, 3)])(x, 5).tolist() == [5, 6, 7]
    assert jax.jit(lambda a, i: a[jax.ds(i, 3)])(x, 9).tolist() == [7, 8, 9]   # clamped
    assert jax.jit(lambda a, i: a[jax.ds(i, 3, 2)])(x, 1).tolist() == [1, 3, 5]
    assert x[jax.ds(1, 3, 2)].tolist() == [1, 3, 5]
    y = jnp.arange(12).reshape(3, 4)
    assert y[jax.ds(1, 2), jax.ds(0, 2)].tolist() == [[4, 5], [8, 9]]
    assert y[1:, jax.ds(2, 2)].tolist() == [[6, 7], [10, 11]]
    assert y[..., jax.ds(1, 2)].tolist() == [[1, 2], [5, 6], [9, 10]]
    assert jax.jit(lambda a, i: a.at[jax.ds(i, 3)].set(0))(x, 2).tolist() == [
        0, 1, 0, 0, 0, 5, 6, 7, 8, 9]
    # a traced start is a pytree child, a static one aux data
    assert len(jax.tree_util.tree_leaves(jax.ds(jnp.int32(2), 3))) == 1
    assert jax.tree_util.tree_leaves(jax.ds(2, 3)) == []
    with pytest.raises(ValueError, match="stride"):
        jax.ds(0, 2, -1)


def test_empty_ref_and_free_ref():
    r = jax.empty_ref(jax.ShapeDtypeStruct((2, 3), jnp.float32))
    assert (r.shape, r.dtype) == ((2, 3), jnp.float32)
    r[...] = jnp.ones((2, 3))
    assert r[...].tolist() == [[1.0] * 3] * 2
    assert jax.free_ref(r) == ()
    with pytest.raises(ValueError, match="freed"):
        r[...]
    with pytest.raises(ValueError, match="freed"):
        r[...] = jnp.ones((2, 3))
    assert jax.empty_ref(jnp.zeros(3, "int32")).dtype == jnp.int32


def test_vjp_with_refs():
    def f(x, y):
        return (x * y).sum()
    _, pullback = jax.vjp(f, jnp.ones(3), jnp.arange(3.0))
    skipped, grad = pullback.with_refs(jax.ad.DontWant(), jax.ad.GradValue())(1.0)
    assert repr(skipped) == "DidntWant()" and grad.tolist() == [1.0, 1.0, 1.0]
    ref = jax.new_ref(jnp.ones(3))
    grad, into_ref = pullback.with_refs(jax.ad.GradValue(), ref)(1.0)
    assert grad.tolist() == [0.0, 1.0, 2.0] and repr(into_ref) == "GradRef()"
    assert ref[...].tolist() == [2.0, 2.0, 2.0]        # accumulated into the ref
    assert jax.ad.DontWant() == jax.ad.DontWant()
    assert jax.tree_util.tree_leaves([jax.ad.DidntWant(), jax.ad.GradRef()]) == []
    assert str(jax.tree_util.tree_structure(jax.ad.DidntWant())) == (
        "PyTreeDef(CustomNode(DidntWant[()], []))")


def test_refs_passed_to_jit_are_read_and_written():
    r = jax.new_ref(jnp.arange(3.0))

    @jax.jit
    def f(r, x):
        assert isinstance(r, jax.Ref) and r.shape == (3,)
        r[1] += x
        return r[...].sum()

    assert (float(f(r, 1.0)), float(f(r, 2.0))) == (4.0, 6.0)   # the second from cache
    assert r[...].tolist() == [0.0, 4.0, 2.0]

    @jax.jit
    def outer(r, x):          # a Ref handed on to a nested jit
        y = f(r, x)
        r[0] = y
        return y

    assert float(outer(r, 1.0)) == 7.0 and r[...].tolist() == [7.0, 5.0, 2.0]
    counter = jax.new_ref(jnp.int32(0))
    step = jax.jit(lambda c, x: c.__setitem__(..., c[...] + 1) or x)
    for _ in range(3):
        step(counter, jnp.ones(2))
    assert int(counter[...]) == 3 and str(jax.typeof(counter)) == "Ref{int32[]}"


def test_refs_made_inside_transformations():
    def loss(x):
        q = jax.new_ref(jnp.zeros(3))
        q[...] += x * 2
        q[1] += x[0]
        return q[...].sum()

    assert jax.grad(loss)(jnp.ones(3)).tolist() == [3.0, 2.0, 2.0]
    assert jax.jit(jax.grad(loss))(jnp.ones(3)).tolist() == [3.0, 2.0, 2.0]
    assert jax.vmap(loss)(jnp.ones((2, 3))).tolist() == [7.0, 7.0]


def test_refs_in_jit_refuse_what_jax_refuses():
    r = jax.new_ref(jnp.ones(3))
    with pytest.raises(ValueError, match="Ref{float32\\[3\\]}, but mutable array references "
                       "cannot be returned"):
        jax.jit(lambda r: r)(r)
    with pytest.raises(ValueError, match="only one reference to a mutable array"):
        jax.jit(lambda a, b: 0)(r, r)
    # JAX's words, naming the arguments and where a returned ref came from
    with pytest.raises(ValueError, match="for jit the mutable array reference of type "
                       "Ref{float32\\[3\\]} appeared at both x_ref and y_ref."):
        jax.jit(lambda x_ref, y_ref: x_ref[...] + y_ref[...])(r, r)
    with pytest.raises(ValueError, match="for jit, a mutable array reference of type "
                       "Ref{float32\\[3\\]} was both closed over and passed as the "
                       "argument y_ref"):
        jax.jit(lambda y_ref: r[...] + y_ref[...])(r)
    with pytest.raises(ValueError, match="returned.\n\nThe returned mutable array was "
                       "passed in as the argument x."):
        jax.jit(lambda x: x)(r)
    with pytest.raises(ValueError, match="traced for jit returned a mutable array "
                       "reference of type Ref{float32\\[\\]}, but mutable array references "
                       "cannot be returned.\n\nThe returned mutable array was created on "
                       "line .*test_ds_and_refs.py"):
        jax.jit(lambda: jax.new_ref(1.))()
    with pytest.raises(ValueError, match="traced for scan returned a mutable array "
                       "reference of type Ref{int32\\[\\]}"):
        jax.lax.scan(lambda c, x: (jax.new_ref(c), x), 0, jnp.arange(3))
    with pytest.raises(ValueError, match="traced for cond returned a mutable array"):
        jax.lax.cond(True, lambda: jax.new_ref(1.0), lambda: jax.new_ref(2.0))
    with pytest.raises(ValueError, match="for cond the mutable array reference of type "
                       "Ref{float32\\[3\\]} appeared at both x1 and x2."):
        jax.lax.cond(True, lambda x1, x2: 1., lambda x1, x2: 1., r, r)


def test_closed_over_refs_are_read_and_written_by_jit():
    # JAX makes a Ref the function closes over an implicit argument: the cached trace
    # reads its value on every call and stores what the function leaves in it.
    x = jax.new_ref(jnp.zeros(3))

    @jax.jit
    def f():
        x[...] += 1.
        x[0] += 1

    f()
    f()
    assert x[...].tolist() == [4.0, 2.0, 2.0]
    y = jax.new_ref(jnp.zeros(3))

    @jax.jit
    def g(r, z):          # a Ref argument and a closed-over one, under a nested jit
        x[1] += z
        r[2] += 7
        return z + 9

    assert float(jax.jit(g)(y, 1.0)) == 10.0
    assert x[...].tolist() == [4.0, 3.0, 2.0] and y[...].tolist() == [0.0, 0.0, 7.0]
    assert int(jax.jit(lambda: jnp.int32(len(x)))()) == 3


def test_compiled_ahead_of_time_reads_and_writes_refs():
    @jax.jit
    def f(x_mut):
        x_mut[...] += 1.
        x_mut[1] += 5
    x_mut = jax.new_ref(jnp.zeros(3))
    f.lower(x_mut).compile()(x_mut)
    assert x_mut[...].tolist() == [1.0, 6.0, 1.0]
    y = jax.new_ref(jnp.zeros(3))

    @jax.jit
    def g():
        y[...] += 1.
        y[0] += 1
        return y[...].sum()
    lowered = g.lower()
    assert lowered.out_info.shape == () and lowered.args_info == ((), {})
    compiled = lowered.compile()
    assert [float(compiled()) for _ in range(2)] == [4.0, 8.0]
    assert y[...].tolist() == [4.0, 2.0, 2.0]


def test_closed_over_refs_in_control_flow():
    c = jax.new_ref(0)

    def body(_, v):
        c[...] += 2
        return (), c[...] + v
    assert jax.lax.scan(body, (), np.arange(3))[1].tolist() == [2, 5, 8]
    assert int(c[...]) == 6
    assert jax.jit(lambda: jax.lax.scan(body, (), np.arange(3)))()[1].tolist() == [8, 11, 14]
    assert int(c[...]) == 12
    w = jax.new_ref(0)

    def loop():
        def step(i):
            w[...] += i
            return i + 1
        return jax.lax.while_loop(lambda i: i < 4, step, 0)
    assert int(jax.jit(loop)()) == 4 and int(w[...]) == 6
    k = jax.new_ref(jnp.zeros(2))

    def branch(p):
        def yes():
            k[0] += 1.
            return 1.

        def no():
            k[1] += 2.
            return 2.
        return jax.lax.cond(p, yes, no)
    assert (float(jax.jit(branch)(True)), float(branch(False))) == (1.0, 2.0)
    assert k[...].tolist() == [1.0, 2.0]


@pytest.mark.parametrize("transform", ["jit", "cond", "remat"])
def test_ref_views_are_read_and_written_through_transformations(transform):
    wrap = {"jit": jax.jit, "remat": jax.remat,
            "cond": lambda fn: lambda *a: jax.lax.cond(jnp.array(True), fn, fn, *a)}
    @jax.jit
    def f():
        x_ref = jax.new_ref(jnp.ones(6))
        view = x_ref.at[1:5].at[::2]          # a view of a view
        def body(v):
            v[...] += jnp.arange(2.)
        wrap[transform](body)(view)
        return x_ref[...], view[...], jnp.zeros_like(view)
    whole, part, zeros = f()
    assert whole.tolist() == [1.0, 1.0, 1.0, 2.0, 1.0, 1.0] and part.tolist() == [1.0, 2.0]
    assert zeros.tolist() == [0.0, 0.0]


def test_vmap_maps_ref_arguments():
    x = jnp.arange(12.).reshape(3, 4)
    for in_axes, idx in [(0, 1), (1, slice(0, 2)), (0, ...)]:
        def f(r, idx=idx):
            return r[idx]
        assert jax.vmap(f, in_axes=in_axes)(jax.new_ref(x)).tolist() == \
            jax.vmap(f, in_axes=in_axes)(x).tolist()
    r = jax.new_ref(jnp.zeros((3, 2)))

    def g(r, v):
        r[...] += v
        return v * 2
    assert jax.vmap(g)(r, jnp.arange(3.)).tolist() == [0.0, 2.0, 4.0]
    assert r[...].tolist() == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]
    assert jax.jit(lambda: jax.vmap(g)(r, jnp.ones(3)))().tolist() == [2.0, 2.0, 2.0]
    assert r[...].tolist() == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    with pytest.raises(ValueError, match="only one reference to a mutable array may be "
                       "passed as an argument to a function"):
        jax.vmap(lambda a, b: 0)(r, r)


def test_vmap_refuses_ref_views_as_jax_does():
    @jax.jit
    def f():
        x_ref = jax.new_ref(jnp.zeros(7))
        jax.vmap(lambda r: r.__setitem__(..., r[...] + 1))(x_ref.at[1:6])
    with pytest.raises(TypeError, match="for vmap, TransformedRefs are not allowed, but "
                       "got a TransformedRef with name r.ref."):
        f()


def test_remat_writes_refs_it_closes_over():
    c = jax.new_ref(0.)

    def h(x):
        c[...] += x
        return x * 2
    assert float(jax.remat(h)(2.)) == 4.0 and float(c[...]) == 2.0


def test_scan_over_a_ref_sees_views_of_its_rows():
    def body(_, index_x):
        index, x = index_x
        x[...] += index
        return (), x[...]
    for scan in (jax.lax.scan, jax.jit(jax.lax.scan, static_argnums=0,
                                       static_argnames="reverse")):
        for reverse in (False, True):
            x_mut = jax.new_ref(np.arange(5))
            ys = scan(body, (), (np.arange(5), x_mut), reverse=reverse)[1]
            assert ys.tolist() == [0, 2, 4, 6, 8] == x_mut[...].tolist()

    def f(xs):
        xs_ref = jax.new_ref(xs)
        return jax.lax.scan(lambda c, x_ref: (c + x_ref[...], None), 0., xs_ref)[0]
    assert jax.grad(f)(jnp.arange(3.)).tolist() == [1.0, 1.0, 1.0]


def test_scan_refuses_ref_carries_as_jax_does():
    # JAX 0.10.2's errors: a carry must come back out and a Ref cannot, so every Ref
    # carry is refused, naming a ref passed twice or also closed over
    x_ref = jax.new_ref(0.)
    with pytest.raises(ValueError, match=r"appeared at both c\[0\] and c\[1\]"):
        jax.lax.scan(lambda c, _: (None, None), (x_ref, x_ref), None, length=1)
    with pytest.raises(ValueError, match="for scan, a mutable array reference of type "
                       "Ref{float32\\[\\]} was both closed over and passed as the argument "
                       "y_ref"):
        jax.lax.scan(lambda y_ref, _: (x_ref[...] + y_ref[...], None), x_ref, None,
                     length=1)

    def returns_it(r, _):
        r[...] += 1.
        return r, None
    with pytest.raises(ValueError, match="traced for scan returned a mutable array "
                       "reference of type Ref{float32\\[\\]}"):
        jax.lax.scan(returns_it, x_ref, None, length=3)
    with pytest.raises(ValueError, match="Attempting to pass a Ref Ref{float32\\[\\]} to a "
                       "primitive: convert_element_type -- did you forget to unpack"):
        jax.lax.scan(lambda r, _: (r[...], None), x_ref, None, length=3)
    assert float(x_ref[...]) == 0.0


def test_make_jaxpr_shows_closed_over_refs_as_constants():
    m = jax.new_ref(jnp.ones(2))

    def f():
        m[...] += 1.
        return m[...]
    closed = jax.make_jaxpr(f)()
    assert len(closed.consts) == 1 and len(closed.jaxpr.outvars) == 1
    assert m[...].tolist() == [1.0, 1.0]     # nothing ran


def test_closed_over_ref_written_under_vmap_or_jvp_is_refused_as_jax_does():
    r = jax.new_ref(jnp.ones(3))

    def closes_over(x):
        r[...] += x
        return x
    with pytest.raises(TypeError, match="set/swap operation with vmapped value on an "
                       "unbatched array reference of type Ref{float32\\[3\\]}. Move the "
                       "array reference to be an argument to the vmapped function"):
        jax.vmap(closes_over)(jnp.ones((2, 3)))
    with pytest.raises(TypeError, match="with a differentiated value on a non-"
                       "differentiated array reference"):
        jax.jvp(closes_over, (jnp.ones(3),), (jnp.ones(3),))
    assert r[...].tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("remat", [False, True])
@pytest.mark.parametrize("jit", [False, True])
def test_no_grad_refs_store_the_primal_of_a_differentiated_value(remat, jit):
    # jax.new_ref(kind='no_grad_no_remat'): a differentiated value written into it keeps
    # no tangent (JAX 0.10.2: the gradient 4.0, the ref 5.0, under remat and jit too);
    # a plain ref refuses it
    def f(y, x_ref):
        out = y * y
        x_ref[...] += out
        return out
    f = jax.remat(f) if remat else f
    f = jax.jit(f) if jit else f
    x_ref = jax.new_ref(1., kind="no_grad_no_remat")
    assert float(jax.grad(f)(2., x_ref)) == 4.0 and float(x_ref[...]) == 5.0
    assert jax.typeof(x_ref).kind == "no_grad_no_remat"
    with pytest.raises(TypeError, match="with a differentiated value on a non-"
                       "differentiated array reference"):
        jax.grad(f)(2., jax.new_ref(1.))


def test_ref_attributes_are_those_of_its_array():
    # JAX 0.10.2's Ref: sharding, size, committed, addupdate(x, idx=()); its type's
    # sharding is the array type's
    mesh = jax.make_mesh((1,), ("i",))
    x = jax.device_put(jnp.arange(2), jax.sharding.NamedSharding(mesh, jax.P("i")))
    a = jax.new_ref(x)
    assert a.sharding == x.sharding == jax.jit(lambda: a[...])().sharding
    assert a.size == 2 and a.committed
    assert jax.typeof(a).sharding == jax.typeof(x).sharding
    r = jax.new_ref(jnp.zeros(4))
    r.addupdate(jnp.ones(4))
    r.addupdate(2.0, 3)
    assert r[...].tolist() == [1.0, 1.0, 1.0, 3.0]
    jax.vmap(lambda row: row.addupdate(1.0))(r)   # (jax-ml/jax#32479)
    assert r[...].tolist() == [2.0, 2.0, 2.0, 4.0]


def test_ref_module():
    r = jax.ref.new_ref(jnp.zeros(3))
    assert repr(r) == "Ref([0., 0., 0.], dtype=float32)"
    jax.ref.addupdate(r, 0, 2.0)
    jax.ref.addupdate(r, None, jnp.ones(3))
    assert r[...].tolist() == [3.0, 1.0, 1.0]
    assert jax.ref.swap(r, None, jnp.arange(3.0)).tolist() == [3.0, 1.0, 1.0]
    assert jax.ref.get(r, 1).tolist() == 1.0 and jax.ref.get(r).tolist() == [0.0, 1.0, 2.0]
    assert jax.ref.set(r, 0, 5.0) is None and r[...].tolist() == [5.0, 1.0, 2.0]
    # as JAX's: a stored value must have the indexed shape exactly
    with pytest.raises(ValueError, match="Invalid shape for `swap`. Ref shape: \\(3,\\). "
                       "Expected shape: \\(3,\\). Value shape: \\(\\)"):
        r[...] = 1.0
    with pytest.raises(ValueError, match="Invalid shape for `addupdate`"):
        jax.ref.addupdate(r, ..., 2.0)
    # as JAX's: integers and weakly typed floats are cast to the ref's dtype, no others
    v = jax.new_ref(jnp.array([0, 0, 0]))
    v[...] = jnp.ones(3, jnp.int16)
    assert repr(v) == "Ref([1, 1, 1], dtype=int32)"
    with pytest.raises(ValueError, match="Invalid dtype for `swap`. Ref dtype: int32. "
                       "Value dtype: float32."):
        v[...] += 1.0
    with pytest.raises(ValueError, match="Ref dtype: float32. Value dtype: float16."):
        r[...] = jnp.ones(3, "float16")
    b = jax.new_ref(jnp.array(0, dtype="bfloat16"))
    b[...] += 1.0
    assert repr(b) == "Ref(1, dtype=bfloat16)"
    c = jax.new_ref(0)
    assert repr(c) == "Ref(0, dtype=int32, weak_type=True)"
    c[...] += 2
    assert repr(c) == "Ref(2, dtype=int32)"
    assert jax.ref.Ref is jax.Ref and jax.ref.AbstractRef is type(jax.typeof(c))


def test_memory_spaces():
    assert [repr(s) for s in jax.memory.Space] == [
        "MemorySpace.Device", "MemorySpace.Host", "MemorySpace.Any"]
    assert jax.device_put(jnp.ones(2), jax.memory.Space.Device).tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError, match="device memory"):
        jax.device_put(jnp.ones(2), jax.memory.Space.Host)


def test_shard_and_reshard_are_the_sharding_api():
    x = jnp.arange(4.0)
    shard, = x.addressable_shards
    assert isinstance(shard, jax.Shard) and shard.data.tolist() == x.tolist()
    assert jax.reshard is jax.sharding.reshard


def test_avals_are_abstract_values():
    # flax's linen scan asserts isinstance(aval, jax.core.AbstractValue)
    assert isinstance(jax.typeof(jnp.ones(2)), jax.core.AbstractValue)
    assert isinstance(jax.typeof(jax.new_ref(jnp.ones(2))), jax.core.AbstractValue)
    assert not isinstance(1, jax.core.AbstractValue)


def test_custom_vjp_refuses_refs_it_cannot_differentiate_through():
    # JAX 0.10.2's messages (it names the function as 'functools.partial(<function f
    # at 0x...>)'): a Ref passed twice, returned by the primal, or made and returned by fwd
    @jax.custom_vjp
    def f(x_ref, y_ref):
        return None
    f.defvjp(lambda x_ref, y_ref: (None, None), lambda _, g: (None, None))
    x_ref = jax.new_ref(0.0)
    with pytest.raises(ValueError, match=(
            "only one reference to a mutable array may be passed as an argument to a "
            "function, but custom_vjp function f got the same mutable array reference of "
            r"type Ref\{float32\[\]\} at x_ref and y_ref.")):
        f(x_ref, x_ref)

    @jax.custom_vjp
    def g(ref):
        return ref
    g.defvjp(lambda ref: (ref, None), lambda _, ct: (None,))
    for call in (g, jax.jit(g)):   # staged under jit too, as JAX checks it
        with pytest.raises(ValueError, match=(
                r"custom_vjp primal function g returned a mutable array reference of type "
                r"Ref\{float32\[\]\} that was not an argument.")):
            call(x_ref)

    @jax.custom_vjp
    def h(x, ref):
        return x
    h.defvjp(lambda x, ref: (x, ref), lambda ref, ct: (ct, None))
    assert float(jax.vjp(h, 3.0, x_ref)[0]) == 3.0   # returning an argument is fine

    def h_fwd(x, _):
        return x, jax.new_ref(0)
    h.defvjp(h_fwd, lambda ref, ct: (ct, None))
    with pytest.raises(ValueError, match=(
            r"custom_vjp fwd function h_fwd returned a mutable array reference of type "
            r"Ref\{int32\[\]\} at output tree path \[1\] that was not an argument.")):
        jax.vjp(h, 3.0, x_ref)


def test_custom_vjp_bwd_writes_into_a_ref_argument():
    # a jax.Ref argument of a custom_vjp has no tangent; its bwd may write a cotangent
    # into it (JAX's "grad stats plumbing"); value recorded on JAX 0.10.2
    @jax.custom_vjp
    def stash_grads(grads_ref, x):
        return x

    def stash_bwd(grads_ref, g):
        grads_ref[...] = g
        return None, g
    stash_grads.defvjp(lambda grads_ref, x: (x, grads_ref), stash_bwd)

    def primal(grads_ref, x):
        x = stash_grads(grads_ref, jnp.sin(x))
        return stash_grads(grads_ref, jnp.sin(x))   # the backward pass ends at the first

    grads_ref = jax.new_ref(jnp.float32(0.0))
    assert float(jax.grad(primal, 1)(grads_ref, jnp.float32(1.0))) == pytest.approx(
        0.36003947)
    assert float(grads_ref[...]) == pytest.approx(0.6663667)
