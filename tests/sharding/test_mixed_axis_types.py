"""Meshes mixing Explicit and Auto axes (JAX 0.10.2's sharding in types): types carry
only the Explicit axes, lowering leaves every dimension open to the Auto ones, and a
result's layout is what XLA's partitioner chose. Expected values are JAX 0.10.2's for
the same programs, run on eight CPU devices."""
from __future__ import annotations

import re

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P

from harness import checks_on_devices


def _mesh():
    return jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))


def check_types_lower_open_to_auto_axes():
    mesh = _mesh()
    with jax.set_mesh(mesh):
        whole = jax.device_put(np.arange(16).reshape(8, 2), P(None, None))
        split = jax.device_put(np.arange(16).reshape(8, 2), P("x", None))

        @jax.jit
        def f(x, y):
            return x * 2, y + 1

        text = f.lower(whole, split).as_text()
        # JAX: the type constraints are open, an unused Explicit axis stays replicated
        assert text.count('<@mesh, [{?}, {?}], replicated={"x"}>') == 2
        assert text.count('<@mesh, [{"x", ?}, {?}]>') == 2
        # and the results carry no sharding: XLA's partitioner lays them out
        signature = text[text.index("func.func public @main"):]
        assert "sdy.sharding" not in signature[signature.index("->"):].split("\n")[0]
        out = f(whole, split)
        assert [o.sharding.spec for o in out] == [P(None, None), P("x", None)]
        assert [o.aval.sharding.spec for o in out] == [P(None, None), P("x", None)]


def check_result_laid_out_as_xla_chose():
    mesh = _mesh()
    with jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(16).reshape(8, 2), P(("x", "y"), None))
        assert arr.aval.sharding.spec == P("x", None)

        @jax.jit
        def f(x):
            return x * 2

        out = f(arr)
        # the type says P('x', None); XLA kept the argument's split over y too
        assert out.aval.sharding.spec == P("x", None)
        assert out.sharding == NamedSharding(mesh, P(("x", "y")))
        assert out.sharding.spec == P(("x", "y"),)
        np.testing.assert_array_equal(np.asarray(out), np.arange(16).reshape(8, 2) * 2)
        compiled = f.lower(arr).compile()
        assert compiled.output_shardings.spec == P(("x", "y"),)


def check_operands_typed_over_another_mesh_are_refused():
    mesh = jax.make_mesh((2, 1), ("x", "y"))
    with jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(16.).reshape(8, 2), P("x", "y"))

        @jax.jit
        def f(x, y):
            with jax.sharding.use_abstract_mesh(
                    mesh.abstract_mesh.update_axis_types({"x": AxisType.Auto})):
                return x @ y

        with pytest.raises(ValueError, match="For primitive dot_general, context mesh"
                           ".*should match the aval mesh"):
            f(arr, arr.T)

        auto = jax.make_mesh((2, 1), ("x", "y"), axis_types=(AxisType.Auto,) * 2)

        @jax.jit
        def g(x, y):
            return jnp.einsum("ab,bc->ac", x, y,
                              out_sharding=NamedSharding(auto.abstract_mesh, P()))

        with pytest.raises(ValueError, match="Context mesh .* should match the mesh of "
                           "sharding .* passed to einsum"):
            g(arr, arr.T)


def check_auto_axes_inside_scan_differentiates():
    with jax.set_mesh(jax.make_mesh((2,), ("x",))):
        def f(params, x):
            @jax.sharding.auto_axes(out_sharding=P())
            def model(x):
                return params * x

            return jax.lax.scan(lambda c, _: (model(c), ()), x, None, length=3)[0]

        assert float(jax.jit(jax.grad(f))(1., 2.)) == 6.0   # JAX's value


def check_vmap_over_auto_axes_keeps_the_batch_split():
    mesh = jax.make_mesh((2, 2), ("x", "y"))
    with jax.set_mesh(mesh):
        xs = jax.device_put(jnp.ones((20, 2)), P(("x", "y"), None))

        @jax.sharding.auto_axes(out_sharding=P())
        def f(x):
            return jnp.where(x, jnp.ones(2), x)

        out = jax.jit(jax.vmap(f))(xs)
        assert out.sharding == NamedSharding(mesh, P(("x", "y"), None))


def check_operands_typed_otherwise_are_constrained_to_the_result():
    with jax.set_mesh(jax.make_mesh((2,), ("x",))):
        arr = jax.device_put(np.arange(16).reshape(8, 2), P("x"))

        @jax.jit
        def f(x):
            return x * jnp.broadcast_to(2, x.shape)

        # JAX: the unsplit operand is constrained to the product's split before mul
        text = f.lower(arr).as_text()
        assert len(re.findall(r'sdy.sharding_constraint.*\[\{"x"\}, \{\}\]', text)) == 2


def check_cond_results_keep_and_lower_their_types():
    mesh = jax.make_mesh((2,), ("x",))
    with jax.set_mesh(mesh):
        a = jax.device_put(np.arange(8), P("x"))

        @jax.jit
        def f(x, y):
            out = jax.lax.cond(True, lambda x, y: x, lambda x, y: y, x, y)
            assert out.aval.sharding.spec == P("x")
            return out * 2

        # JAX: the case's result, the broadcast 2 and the product are constrained
        assert f.lower(a, a).as_text().count("sdy.sharding_constraint") == 3
        assert f(a, a).sharding == NamedSharding(mesh, P("x"))


def check_constraint_over_auto_axes_keeps_the_typed_split():
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    with jax.set_mesh(mesh):
        arr = jax.device_put(np.arange(16).reshape(8, 2), P("x"))
        # (constraint, layout of the result) as JAX 0.10.2 gives them; the type stays P('x')
        for spec, laid_out in [(P("y"), P(("x", "y"))), (P(None, "y"), P("x", "y")),
                               (P(), P("x", None)), (P("y", None), P(("x", "y")))]:
            f = jax.jit(lambda x, spec=spec: jax.lax.with_sharding_constraint(x, spec))
            out = f(arr)
            assert out.sharding == NamedSharding(mesh, laid_out), (spec, out.sharding)
            assert f.trace(arr).jaxpr.out_avals[0].sharding.spec == P("x", None)
            np.testing.assert_array_equal(out, np.arange(16).reshape(8, 2))


test_on_eight_devices = checks_on_devices(globals(), 8)
