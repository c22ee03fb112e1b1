"""shard_map's varying manual axes in types (check_vma): inside a body each value's type
records the manual mesh axes it varies along, computed while tracing; implicit pvary
casts, collectives' typing, out_specs, cond branches and loop carries checked against
them. Expected types, values and messages are JAX 0.10.2's for the same programs
(recorded in a scratch install). The checks run in one subprocess with eight devices;
each is reported as its own test."""
from __future__ import annotations

import re

import numpy as np
import pytest

import pyjax as jax
from pyjax import lax
from pyjax._src import config
from pyjax.sharding import AxisType, PartitionSpec as P

from harness import checks_in_process, close

N = 8


def _mesh():
    return jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def _typed_program(seen):
    def f(a, b):
        seen["a"], seen["b"] = str(jax.typeof(a)), str(jax.typeof(b))
        c = a * b
        seen["c"] = str(jax.typeof(c))
        s = lax.psum(c, "x")
        seen["s"] = str(jax.typeof(s))
        i = lax.axis_index("y")
        seen["i"] = str(jax.typeof(i))
        seen["g"] = str(jax.typeof(lax.all_gather(b, "y", tiled=True)))
        gi = lax.all_gather(a, "y", tiled=True, to="invarying")
        seen["gi"] = str(jax.typeof(gi))
        seen["pv"] = str(jax.typeof(lax.pcast(b, ("y", "x"), to="varying")))
        seen["inv"] = sorted(jax.typeof(b).mat.invarying(jax.sharding.get_abstract_mesh()))
        return s + i, gi
    return jax.shard_map(f, mesh=_mesh(), in_specs=(P("x", "y"), P()),
                         out_specs=(P(None, "y"), P("x")))


def check_types_values_and_grads_match_jax():
    seen = {}
    g = _typed_program(seen)
    x, y = np.arange(16.0).reshape(4, 4), np.arange(4.0)
    out = g(x, y)
    assert seen == JAX_TYPES, seen
    close(out[0], JAX_OUT0)
    close(out[1], np.array(JAX_OUT1).reshape(16, 1))
    with config.executor("numpy"):
        close(g(x, y)[0], JAX_OUT0)
    text = str(jax.make_jaxpr(g)(x, y))
    for line in ["e:f32[2,1]{V:(x,y)}", "h:f32[1,4]{V:(x,y)} = pvary[axes=('x', 'y')] g",
                 "j:f32[2,4]{V:y} = psum", "k:i32[]{V:y} = axis_index",
                 "m:f32[8,1]{V:x} = all_gather_invariant"]:
        assert line in text, text
    gx, gy = jax.grad(lambda a, b: g(a, b)[0].sum() + g(a, b)[1].sum(), (0, 1))(x, y)
    close(gx, np.full((4, 4), 7.0))
    close(gy, np.full((4,), 120.0))


def check_out_specs_are_checked_against_types():
    mesh = _mesh()
    x = np.arange(8.0)
    # An out_spec naming an axis the value does not vary along casts it (pvary).
    out = jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P(), out_specs=P("x"))(x)
    close(out, np.concatenate([2 * x] * 2))
    with pytest.raises(ValueError, match=re.escape(
            "out_specs is P() which implies that the corresponding output value is only "
            "varying across mesh axes {} and not {y}, but it was inferred to be possibly "
            "varying over {y}")):
        jax.shard_map(lambda a: a + lax.axis_index("y"), mesh=mesh, in_specs=P(),
                      out_specs=P())(x)
    # check_vma=False: no types, no check.
    f = jax.shard_map(lambda a: (str(jax.typeof(a)), a)[1], mesh=mesh, in_specs=P("x"),
                      out_specs=P(), check_vma=False)
    close(f(x), x[:4])


def check_cond_and_scan_refuse_mismatched_vma():
    mesh = _mesh()
    x = np.arange(8.0)

    def branches(a, b):
        return lax.cond(True, lambda a, b: a, lambda a, b: b, a, b)

    with pytest.raises(TypeError, match=re.escape(
            "This might be fixed by:\n  * applying `jax.lax.pcast(..., ('y',), "
            "to='varying')` to the output of true_fun;\n  * applying `jax.lax.pcast(..., "
            "('x',), to='varying')` to the output of false_fun.\nSee https://docs.jax.dev/"
            "en/latest/notebooks/shard_map.html#scan-vma for more information.")):
        jax.shard_map(branches, mesh=mesh, in_specs=(P("x"), P("y")),
                      out_specs=P(("x", "y")))(x, x)

    def loop(a, b):
        return lax.scan(lambda c, _: (c + a, None), b, None, length=2)[0]

    with pytest.raises(TypeError, match=re.escape(
            "This might be fixed by applying `jax.lax.pcast(..., ('x',), to='varying')`, "
            "to the initial carry value corresponding to the input carry c.")):
        jax.shard_map(loop, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))(
            x, np.arange(4.0))

    def fixed(a, b):
        return loop(a, lax.pcast(b, "x", to="varying"))

    close(jax.shard_map(fixed, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))(
        x, np.arange(4.0)), np.concatenate([2 * x[:4], 2 * x[4:]]) + np.tile(
            np.arange(4.0), 2))


def check_auto_pcast_off_refuses_mixed_operands():
    mesh = _mesh()
    with config.auto_pcast(False), pytest.raises(ValueError, match=re.escape(
            "Primitive mul requires varying manual axes to match, but got "
            "[frozenset({'x'}), frozenset()]")):
        jax.shard_map(lambda a, b: a * b, mesh=mesh, in_specs=(P("x"), P()),
                      out_specs=P("x"))(np.arange(8.0), np.arange(4.0))


def check_custom_vjp_bwd_must_keep_vma():
    mesh = jax.make_mesh((4,), ("i",), axis_types=(AxisType.Auto,))

    @jax.custom_vjp
    def f(x):
        return lax.psum(x, "i")

    f.defvjp(lambda x: (f(x), None), lambda _, g: (lax.psum(g, "i"),))
    g = jax.shard_map(lambda x: f(f(x)), mesh=mesh, in_specs=P("i"), out_specs=P())
    with pytest.raises(ValueError, match=re.escape(
            "but at output[0] the bwd rule produced an output of type float32[1] "
            "corresponding to an input of type float32[1]{V:i}, so the manual axis types "
            "do not match")):
        jax.value_and_grad(lambda x: g(x).sum())(np.ones(4, np.float32))


def check_nested_smap_types():
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    seen = []

    @jax.smap(axis_name="x", in_axes=0, out_axes=0)
    def f(a):
        @jax.smap(axis_name="y", in_axes=0, out_axes=None)
        def g(b):
            seen.append(jax.typeof(b).mat.varying)
            return lax.psum(b, "y")
        out = g(a)
        seen.append(jax.typeof(out).mat.varying)
        return out

    with jax.set_mesh(mesh):
        close(jax.jit(f)(np.arange(4.0)), [1.0, 5.0])
    assert seen == [{"x", "y"}, {"x"}], seen



def check_pmean_gradient_counts_each_member_once():
    # JAX's shard_map page, data parallelism: the gradient of a pmean'ed loss over
    # replicated weights equals the unsharded loss's (pmean's sum is psum_invariant,
    # whose transpose does not sum again). Values recorded from JAX 0.10.2.
    mesh = jax.make_mesh((4,), ("i",), axis_types=(AxisType.Explicit,))
    with jax.set_mesh(mesh):
        x = jax.device_put(np.arange(8.0, dtype=np.float32),
                           jax.sharding.NamedSharding(mesh, P("i")))
        w = np.float32(2.0)
        loss = jax.shard_map(lambda w, x: lax.pmean(x.sum() * w, "i"),
                             in_specs=(P(), P("i")), out_specs=P())
        close(jax.grad(loss)(w, x), 7.0)
        close(jax.jit(jax.grad(loss))(w, x), 7.0)
        close(jax.grad(loss, 1)(w, x), np.full(8, 0.5))

CHECKS = [name for name in dict(globals()) if name.startswith("check_")]


@pytest.fixture(scope="module")
def eight_device_results():
    return checks_in_process("test_shard_map_vma", N)


@pytest.mark.parametrize("name", CHECKS)
def test_on_eight_devices(eight_device_results, name):
    result = eight_device_results[name]
    assert result == "ok", result


def test_types_print_their_varying_axes():
    from pyjax._src.core.avals import ManualAxisType, ShapedArray
    aval = ShapedArray((2,), np.float32, manual_axis_type=ManualAxisType(varying=("x", "y")))
    assert str(aval) == "float32[2]{V:(x,y)}"
    assert aval.str_short(True) == "f32[2]{V:(x,y)}"
    assert str(aval.update(mat=aval.mat.update(varying=("y",)))) == "float32[2]{V:y}"
    assert str(ShapedArray((2,), np.float32)) == "float32[2]"


# JAX 0.10.2's types and outputs for _typed_program.
JAX_TYPES = {"a": "float32[2,1]{V:(x,y)}", "b": "float32[4]", "c": "float32[2,4]{V:(x,y)}",
             "s": "float32[2,4]{V:y}", "i": "int32[]{V:y}", "g": "float32[16]{V:y}",
             "gi": "float32[8,1]{V:x}", "pv": "float32[4]{V:(x,y)}", "inv": ["x", "y"]}
JAX_OUT0 = [[0.0, 8.0, 16.0, 24.0, 1.0, 11.0, 21.0, 31.0, 2.0, 14.0, 26.0, 38.0, 3.0, 17.0,
             31.0, 45.0], [0.0, 16.0, 32.0, 48.0, 1.0, 19.0, 37.0, 55.0, 2.0, 22.0, 42.0, 62.0,
                           3.0, 25.0, 47.0, 69.0]]
JAX_OUT1 = [0.0, 4.0, 1.0, 5.0, 2.0, 6.0, 3.0, 7.0, 8.0, 12.0, 9.0, 13.0, 10.0, 14.0, 11.0,
            15.0]
