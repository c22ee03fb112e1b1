"""jax.experimental.hijax: a mutable high-level type (a cell holding one array) with its
own primitives, eager, under jit (its contents traced, stored back after the call) and
under grad. Expected values recorded from JAX 0.10.2."""
from dataclasses import dataclass

import numpy as np
import pytest

import pyjax as jax
import pyjax.experimental
import pyjax.numpy as jnp
from pyjax.experimental import hijax as hjx


class Cell:
    def __init__(self, val):
        self.val = val

    def cur_qdd(self):
        return CellQDD(jax.typeof(self.val))


@dataclass(frozen=True)
class CellQDD:
    aval: object


class CellTy(hjx.MutableHiType):
    def __hash__(self):
        return hash(CellTy)

    def __eq__(self, other):
        return isinstance(other, CellTy)

    def str_short(self, short_dtypes=False, **_):
        return "CellTy"

    def lo_ty_qdd(self, qdd):
        return [qdd.aval]

    def new_from_loval(self, qdd, val):
        return Cell(val)

    def read_loval(self, qdd, cell):
        return [cell_get(cell)]

    def update_from_loval(self, qdd, cell, val):
        cell_set(cell, val)

    def to_tangent_aval(self):
        return self


hjx.register_hitype(Cell, lambda c: CellTy())


class CellGet(hjx.HiPrimitive):
    def abstract_eval(self, ty, *, aval):
        return aval, set()

    def to_lojax(self, cell, *, aval):
        return cell.val


class CellSet(hjx.HiPrimitive):
    multiple_results = True

    def abstract_eval(self, ty, val):
        return [], set()

    def to_lojax(self, cell, val):
        cell.val = val
        return []


cell_get_p, cell_set_p = CellGet("cell_get"), CellSet("cell_set")


def cell_get(c):
    return cell_get_p.bind(c, aval=jax.experimental.cur_qdd(c).aval)


def cell_set(c, v):
    cell_set_p.bind(c, v)


def test_typeof_and_eager_primitives():
    c = Cell(jnp.float32(1.0))
    assert isinstance(jax.typeof(c), CellTy)
    assert jax.experimental.cur_qdd(c) == CellQDD(jax.typeof(jnp.float32(1.0)))
    assert cell_get(c) == 1.0
    cell_set(c, jnp.float32(5.0))
    assert c.val == 5.0


def test_jit_traces_the_contents_and_stores_them_back():
    traces = []

    @jax.jit
    def f(c, x):
        traces.append(1)
        cell_set(c, cell_get(c) * x)
        return cell_get(c) + 1

    c = Cell(jnp.float32(1.0))
    assert f(c, 3.0) == 4.0 and c.val == 3.0
    assert f(c, 2.0) == 7.0 and c.val == 6.0
    assert len(traces) == 1
    c.val = jnp.arange(3.0)   # new contents' type: a new trace
    np.testing.assert_array_equal(f(c, 2.0), [1.0, 3.0, 5.0])
    np.testing.assert_array_equal(c.val, [0.0, 2.0, 4.0])
    assert len(traces) == 2


def test_jit_value_passed_twice_is_two_arguments():
    @jax.jit
    def g(a, b):
        cell_set(a, cell_get(a) + 1)
        return cell_get(b)

    c = Cell(jnp.arange(3.0))
    np.testing.assert_array_equal(g(c, c), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(c.val, [0.0, 1.0, 2.0])   # b's contents, stored last


def test_grad_with_an_undifferentiated_mutable_argument():
    def loss(x, c):
        cell_set(c, jax.lax.stop_gradient(x * 2))
        return x ** 2 + cell_get(c)

    c = Cell(jnp.float32(0.0))
    assert jax.grad(loss)(3.0, c) == 6.0
    assert c.val == 6.0


def test_undefined_rule_names_it():
    class Bare(hjx.HiPrimitive):
        pass

    with pytest.raises(NotImplementedError, match="Bare must define to_lojax"):
        Bare("bare").bind(Cell(jnp.float32(0.0)))


def test_eval_shape_traces_the_contents_and_leaves_them():
    def h(c):
        cell_set(c, cell_get(c) + 1)
        return cell_get(c) * 2

    c = Cell(jnp.arange(4.0))
    out = jax.eval_shape(h, c)
    assert out.shape == (4,) and out.dtype == np.float32
    np.testing.assert_array_equal(c.val, [0.0, 1.0, 2.0, 3.0])


def test_values_closed_over_by_loops_and_branches_are_carried_and_stored_back():
    c = Cell(jnp.float32(3.0))

    def body(carry, _):
        cell_set(c, cell_get(c) + 1.0)
        return carry, None

    jax.lax.scan(body, None, None, length=5)
    assert c.val == 8.0

    def wbody(i):
        cell_set(c, cell_get(c) * 2)
        return i + 1

    jax.lax.while_loop(lambda i: i < 3, wbody, 0)
    assert c.val == 64.0

    def branch(p):
        jax.lax.cond(p, lambda: cell_set(c, cell_get(c) + 10.0), lambda: None)

    branch(True)
    assert c.val == 74.0
    branch(False)
    assert c.val == 74.0


def test_jit_closing_over_a_value_and_a_loop_inside_jit():
    c = Cell(jnp.float32(1.0))

    @jax.jit
    def k(x):
        cell_set(c, cell_get(c) * x)
        return cell_get(c) + 1

    assert k(2.0) == 3.0 and c.val == 2.0
    assert k(3.0) == 7.0 and c.val == 6.0

    d = Cell(jnp.float32(1.0))

    @jax.jit
    def kk(x):
        def body(carry, _):
            cell_set(d, cell_get(d) + x)
            return carry, None
        jax.lax.scan(body, 0.0, None, length=3)
        return cell_get(d)

    assert kk(2.0) == 7.0 and d.val == 7.0


def test_jit_value_holding_a_key_array():
    c = Cell(jax.random.key(0))

    @jax.jit
    def draw(c):
        k1, k2 = jax.random.split(cell_get(c))
        cell_set(c, k1)
        return jax.random.uniform(k2)

    np.testing.assert_allclose([draw(c), draw(c)], [0.0072938204, 0.104290366], rtol=1e-6)
    np.testing.assert_array_equal(jax.random.key_data(c.val), [4165894930, 804218099])


def test_bind_types_a_shape_dtype_struct_as_typeof_does():
    seen = []

    class Probe(hjx.HiPrimitive):
        multiple_results = True

        def is_high(self, *avals):
            seen.extend(avals)
            return True

        def to_lojax(self, *args):
            return []

    Probe("probe").bind(Cell(jnp.float32(0.0)), jax.ShapeDtypeStruct((2,), jnp.float32))
    assert isinstance(seen[0], CellTy)
    assert seen[1] == jax.typeof(jnp.zeros(2, jnp.float32))


@dataclass(frozen=True)
class Pair:
    x0: object
    x1: object


@dataclass(frozen=True)
class PairTy(hjx.HiType):
    x0: object
    x1: object

    def lo_ty(self):
        return [self.x0, self.x1]

    def lower_val(self, hi_val):
        return [hi_val.x0, hi_val.x1]

    def raise_val(self, x0, x1):
        return Pair(x0, x1)


hjx.register_hitype(Pair, lambda p: PairTy(jax.typeof(p.x0), jax.typeof(p.x1)))


def test_immutable_values_in_and_out_of_jit_and_its_stages():
    p = Pair(jnp.zeros((4, 4), "int8"), jnp.ones(4, "float32"))
    out = jax.jit(lambda x: x)(p)
    assert type(out) is Pair
    np.testing.assert_array_equal(out.x1, np.ones(4, np.float32))
    lowered = jax.jit(lambda x: x).lower(p)
    assert lowered.as_text().startswith("module @jit__lambda")
    out = lowered.compile()(p)
    assert type(out) is Pair and out.x0.dtype == np.int8


def test_eval_shape_and_make_jaxpr_give_a_hijax_result_its_type():
    p = Pair(jnp.zeros((4, 4), "int8"), jnp.ones(4, "float32"))
    assert jax.eval_shape(jax.jit(lambda: p)) == PairTy(jax.typeof(p.x0), jax.typeof(p.x1))
    ty, s = jax.eval_shape(lambda x: (x, 1.0), p)
    assert ty == PairTy(jax.typeof(p.x0), jax.typeof(p.x1))
    assert s.shape == () and s.dtype == np.float32
    _, (ty, s) = jax.make_jaxpr(lambda x: (x, 1.0), return_shape=True)(p)
    assert ty == PairTy(jax.typeof(p.x0), jax.typeof(p.x1))
    assert s.shape == () and s.weak_type
