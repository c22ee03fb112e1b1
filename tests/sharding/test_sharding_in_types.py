"""Sharding in types (JAX 0.10.2's aval.sharding) on 8 CPU devices: arrays split over a
mesh's Explicit axes carry the split in their type, the main primitives propagate it
with JAX's rules, ambiguous results ask for out_sharding, and JAX's errors are raised.
The checks run in one subprocess with eight devices; each is its own test. Expected
types, specs and messages are JAX 0.10.2's for the same programs."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.core import ShardingTypeError, ShapedArray
from pyjax.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec as P

from harness import checks_in_process

N = 8


def _mesh():
    return jax.make_mesh((2, 4), ("x", "y"))   # Explicit axes, as make_mesh defaults


def _put(spec, mesh=None):
    return jax.device_put(np.arange(32.).reshape(8, 4), NamedSharding(mesh or _mesh(), spec))


# --- checks run with eight devices ------------------------------------------------------

def check_placed_arrays_are_typed():
    x = _put(P("x"))
    assert repr(jax.typeof(x)) == "ShapedArray(float32[8@x,4])"
    assert jax.typeof(x).sharding.spec == P("x", None)
    assert repr(jax.typeof(x).sharding) == (
        "NamedSharding(mesh=AbstractMesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit), "
        "device_kind=cpu, num_cores=None, platform=cpu), spec=P('x', None))")
    assert str(jax.typeof(_put(P(("x", "y"))))) == "float32[8@(x,y),4]"
    assert jax.typeof(x) != jax.typeof(np.zeros((8, 4), np.float32))
    # Auto axes are left to XLA: not part of the type
    auto = jax.make_mesh((2,), ("a",), axis_types=(AxisType.Auto,))
    placed = jax.device_put(np.arange(8.), NamedSharding(auto, P("a")))
    assert jax.typeof(placed).sharding.spec == P(None)


def check_jaxpr_shows_the_split():
    text = str(jax.make_jaxpr(lambda v: jnp.sin(v) * 2)(_put(P("x"))))
    assert text == ("{ lambda ; a:f32[8@x,4]. let\n    b:f32[8@x,4] = sin a\n"
                    "    c:f32[8@x,4] = mul b 2.0:f32[]\n  in (c,) }")


PROPAGATION = [   # (function, type of its result on float32[8@x,4]) as JAX gives them
    (lambda v: v.T, "float32[4,8@x]"),
    (lambda v: v.sum(0), "float32[4]"),
    (lambda v: v.sum(1), "float32[8@x]"),
    (lambda v: v[:, 1:3], "float32[8@x,2]"),
    (lambda v: v.reshape(2, 4, 4), "float32[2@x,4,4]"),
    (lambda v: v.reshape(32), "float32[32@x]"),
    (lambda v: jnp.broadcast_to(v, (3, 8, 4)), "float32[3,8@x,4]"),
    (lambda v: v.astype(jnp.int32), "int32[8@x,4]"),
    (lambda v: v + jnp.ones((8, 4)), "float32[8@x,4]"),
    (lambda v: v[None], "float32[1,8@x,4]"),
]


def check_primitives_propagate_the_split():
    x = _put(P("x"))
    for fn, expected in PROPAGATION:
        assert str(jax.typeof(fn(x))) == expected, (expected, jax.typeof(fn(x)))
        out = jax.jit(fn)(x)
        assert str(jax.typeof(out)) == expected
        assert out.sharding.spec == jax.typeof(out).sharding.spec   # laid out as typed
        np.testing.assert_allclose(np.asarray(out), fn(np.arange(32.).reshape(8, 4)))


def check_sharded_results_are_constrained_in_the_program():
    text = jax.jit(lambda v: v * 2).lower(_put(P("x"))).as_text()
    assert 'sdy.sharding_constraint' in text and '[{"x"}, {}]' in text


def check_type_errors_match_jax():
    mesh = _mesh()
    with pytest.raises(ShardingTypeError, match=r"mul got incompatible shardings for "
                       r"broadcasting: \('x', 'y'\), \('y', 'x'\)\."):
        jax.jit(lambda a, b: a * b)(_put(P("x", "y"), mesh), _put(P("y", "x"), mesh))
    x = _put(P("x"))
    with pytest.raises(ShardingTypeError, match=r"dot_general operation with inputs: "
                       r"f32\[8@x,4\], f32\[4,8@x\] produces an illegally sharded result: "
                       r"f32\[8@x,8@x\]"):
        x @ x.T
    # an elementwise result splitting two dimensions over one axis (JAX's parallel page)
    with pytest.raises(ShardingTypeError, match=r"add operation with inputs: "
                       r"f32\[8@x,4\], f32\[8,4@x\] produces an illegally sharded result: "
                       r"f32\[8@x,4@x\]"):
        x + _put(P(None, "x"))
    y = _put(P(None, "y"))
    with pytest.raises(ShardingTypeError, match=r"Got lhs_contracting_spec=\('y',\) and "
                       r"rhs_contracting_spec=\('y',\)"):
        jnp.matmul(y, y.T)
    with pytest.raises(ValueError, match=r"Sharding spec \('y',\) implies that array axis "
                       r"1 is partitioned 4 times, but does not evenly divide the dimension "
                       r"size 2"):
        with jax.set_mesh(mesh):
            jnp.reshape(x, (8, 2, 2), out_sharding=P("x", "y"))
    auto = jax.make_mesh((2,), ("a",), axis_types=(AxisType.Auto,))
    with pytest.raises(ValueError, match="PartitionSpec passed to reshard cannot contain "
                       "axis names that are of type Auto or Manual"):
        jax.reshard(np.arange(8), NamedSharding(auto, P("a")))


def check_out_sharding_resolves_and_places():
    mesh = _mesh()
    y = _put(P(None, "y"))
    with jax.set_mesh(mesh):
        out = jnp.matmul(y, y.T, out_sharding=P("x", None))
        assert str(jax.typeof(out)) == "float32[8@x,8]"
        assert out.sharding.spec == P("x", None)
        np.testing.assert_allclose(np.asarray(out), np.asarray(y) @ np.asarray(y).T)
        grad = jax.grad(lambda a: jnp.sum(jnp.matmul(a, a.T, out_sharding=P("x", None))))(y)
        assert grad.sharding.spec == P(None, "y")
        assert str(jax.typeof(grad)) == "float32[8,4@y]"
        einsum = jax.jit(lambda a: jnp.einsum("ij,kj->ik", a, a, out_sharding=P("x")))(y)
        assert str(jax.typeof(einsum)) == "float32[8@x,8]"
        reshaped = jnp.reshape(_put(P("x")), (2, 4, 4), out_sharding=P("x", None, "y"))
        assert str(jax.typeof(reshaped)) == "float32[2@x,4,4@y]"
        assert str(jax.typeof(jnp.zeros((8, 4), out_sharding=P(None, "y")))) == \
            "float32[8,4@y]"
        sample = jax.random.normal(jax.random.key(0), (8, 4), out_sharding=P("x", "y"))
        assert str(jax.typeof(sample)) == "float32[8@x,4@y]"
        assert str(jax.typeof(jax.reshard(_put(P("x")), P(None, "y")))) == "float32[8,4@y]"
        traced = jax.jit(lambda v: jax.reshard(v, P(None, "y")))(_put(P("x")))
        assert str(jax.typeof(traced)) == "float32[8,4@y]"


def check_reshape_grads_keep_the_split():
    mesh = jax.make_mesh((2,), ("x",))
    with jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(16.).reshape(8, 2, 1), NamedSharding(mesh, P("x")))
        f = jax.jit(lambda v: jax.lax.reshape(v, (1, 16, 1), out_sharding=P(None, "x")))
        out = f(arr)
        assert out.sharding == NamedSharding(mesh, P(None, "x", None))
        grad = jax.jit(jax.grad(lambda v: jnp.square(jnp.sum(f(v)))))(arr)
        assert grad.sharding == NamedSharding(mesh, P("x", None, None))   # as typed


def check_use_abstract_mesh():
    abstract = _mesh().abstract_mesh
    with jax.sharding.use_abstract_mesh(abstract):
        assert jax.sharding.get_abstract_mesh() == abstract
    assert jax.sharding.get_abstract_mesh().empty


CHECKS = [name for name in dict(globals()) if name.startswith("check_")]


@pytest.fixture(scope="module")
def eight_device_results():
    return checks_in_process("test_sharding_in_types", N)


@pytest.mark.parametrize("name", CHECKS)
def test_on_eight_devices(eight_device_results, name):
    result = eight_device_results[name]
    assert result == "ok", result


# --- in this process (whatever its device count) ----------------------------------------

def test_unsharded_types_as_jax_prints_them():
    aval = jax.typeof(jnp.ones((2, 3)))
    assert repr(aval.sharding) == ("NamedSharding(mesh=AbstractMesh((), axis_types=()), "
                                   "spec=P(None, None))")
    assert repr(jax.typeof(1.0).sharding) == ("NamedSharding(mesh=AbstractMesh((), "
                                              "axis_types=()), spec=P())")
    assert repr(aval.mat) == ("ManualAxisType(varying=frozenset(), unreduced=frozenset(), "
                              "reduced=frozenset())")
    assert aval.sharding is jax.typeof(jnp.zeros((4, 5))).sharding   # one shared object
    assert ShapedArray((2, 3), np.float32) is aval                    # still interned


def test_manual_axis_types_are_interned_and_immutable():
    import copy
    import pickle
    mat = jax.sharding.ManualAxisType(varying={"x"}, unreduced={"y"}, reduced={"z"})
    assert jax.sharding.ManualAxisType(varying=["x"], unreduced=("y",), reduced={"z"}) is mat
    assert pickle.loads(pickle.dumps(mat)) is mat and copy.deepcopy(mat) is mat
    with pytest.raises(AttributeError):
        mat.varying = frozenset()
    with pytest.raises(AttributeError):
        del mat.reduced
    assert jax.typeof(1.0).mat is jax.sharding.ManualAxisType()


def test_a_split_must_divide_its_dimension():
    mesh = AbstractMesh((2,), ("x",), axis_types=AxisType.Explicit)
    with pytest.raises(ValueError, match="does not evenly divide the dimension size 5"):
        ShapedArray((5, 2), np.int32, sharding=NamedSharding(mesh, P("x")))
    typed = ShapedArray((4, 2), np.int32, sharding=NamedSharding(mesh, P("x")))
    assert typed.sharding.spec == P("x", None) and str(typed) == "int32[4@x,2]"
