"""Reliability, bad input: every mistake raises an error of the builtin class JAX 0.10.2
raises (recorded from JAX as literals), with a message that names what is wrong and where.

The sweep below ran unchanged on JAX 0.10.2: OUTCOMES holds JAX's builtin base class for
each probe ("OK" where JAX accepts it; "MLIRError" where JAX fails inside its compiler with
no builtin class, and pyjax is better: a clear builtin error before compiling)."""
import builtins
import datetime

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

x = jnp.ones((2, 3))
v = jnp.ones(3)
key = jax.random.PRNGKey(0)

# (probe, JAX 0.10.2's outcome, the mistake)
SWEEP = [
    ('array_none', 'ValueError',
     lambda: jnp.array(None)),
    ('hypot_shapes', 'TypeError',
     lambda: jnp.hypot(jnp.ones(3), jnp.ones(4))),
    ('getitem_object', 'IndexError',
     lambda: x[object()]),
    ('getitem_float', 'TypeError',
     lambda: x[1.5]),
    ('getitem_str', 'TypeError',
     lambda: x['a']),
    ('getitem_oob_int', 'OK',
     lambda: x[5]),
    ('getitem_too_many', 'IndexError',
     lambda: x[0, 0, 0]),
    ('add_shapes', 'ValueError',
     lambda: x + jnp.ones(4)),
    ('matmul_shapes', 'TypeError',
     lambda: x @ x),
    ('reshape_bad', 'TypeError',
     lambda: x.reshape(4)),
    ('reshape_two_neg', 'TypeError',
     lambda: x.reshape(-1, -1)),
    ('transpose_bad_axes', 'TypeError',
     lambda: x.transpose((0, 0))),
    ('sum_bad_axis', 'ValueError',
     lambda: jnp.sum(x, axis=5)),
    ('concatenate_shapes', 'TypeError',
     lambda: jnp.concatenate([x, jnp.ones((2, 4))], axis=0)),
    ('concatenate_empty', 'ValueError',
     lambda: jnp.concatenate([])),
    ('stack_shapes', 'ValueError',
     lambda: jnp.stack([v, jnp.ones(4)])),
    ('zeros_neg', 'TypeError',
     lambda: jnp.zeros((-1,))),
    ('zeros_neg_int', 'TypeError',
     lambda: jnp.zeros(-1)),
    ('ones_neg', 'TypeError',
     lambda: jnp.ones((2, -3))),
    ('full_like_neg', 'TypeError',
     lambda: jnp.full_like(v, 1, shape=(-1,))),
    ('broadcast_to_neg', 'TypeError',
     lambda: jnp.broadcast_to(v, (-1, 3))),
    ('lax_broadcast_neg', 'TypeError',
     lambda: lax.broadcast(v, (-1,))),
    ('reshape_neg', 'TypeError',
     lambda: jnp.reshape(v, (-2, 3))),
    ('lax_reshape_neg', 'TypeError',
     lambda: lax.reshape(v, (-3,))),
    ('tri_neg', 'TypeError',
     lambda: jnp.tri(-1)),
    ('eye_neg', 'ValueError',
     lambda: jnp.eye(2, -1)),
    ('resize_neg', 'ValueError',
     lambda: jnp.resize(v, (-1,))),
    ('tile_neg', 'MLIRError',
     lambda: jnp.tile(v, -1)),
    ('random_uniform_neg', 'MLIRError',
     lambda: jax.random.uniform(key, (-1,))),
    ('zeros_float_shape', 'TypeError',
     lambda: jnp.zeros((2.5,))),
    ('arange_no_args', 'TypeError',
     lambda: jnp.arange()),
    ('astype_bad', 'TypeError',
     lambda: x.astype('foo')),
    ('array_bad_dtype', 'TypeError',
     lambda: jnp.array([1], dtype='foo')),
    ('jnp_list_arg', 'TypeError',
     lambda: jnp.sum([1, 2])),
    ('lax_add_dtypes', 'TypeError',
     lambda: lax.add(jnp.float32(1), jnp.int32(1))),
    ('lax_add_shapes', 'TypeError',
     lambda: lax.add(jnp.ones(2), jnp.ones(3))),
    ('lax_slice_oob', 'TypeError',
     lambda: lax.slice(v, (0,), (5,))),
    ('lax_dynamic_slice_rank', 'ValueError',
     lambda: lax.dynamic_slice(v, (0, 0), (1, 1))),
    ('lax_conv_rank', 'TypeError',
     lambda: lax.conv(jnp.ones((1, 1, 3)), jnp.ones((1, 1, 3, 3)), (1, 1), 'SAME')),
    ('lax_reduce_bad_axis', 'ValueError',
     lambda: lax.reduce_sum(v, (3,))),
    ('jit_noncallable', 'TypeError',
     lambda: jax.jit(3)),
    ('jit_bool_of_tracer', 'TypeError',
     lambda: jax.jit(lambda a: 1 if a > 0 else 0)(1.0)),
    ('jit_int_of_tracer', 'TypeError',
     lambda: jax.jit(lambda a: int(a))(1.0)),
    ('jit_static_unhashable', 'ValueError',
     lambda: jax.jit(lambda a, s: a, static_argnums=1)(1.0, [1])),
    ('jit_static_argnums_oob', 'ValueError',
     lambda: jax.jit(lambda a: a, static_argnums=3)(1.0)),
    ('jit_return_str', 'TypeError',
     lambda: jax.jit(lambda a: 'x')(1.0)),
    ('jit_shape_from_tracer', 'TypeError',
     lambda: jax.jit(lambda n: jnp.zeros(n))(3)),
    ('grad_int_input', 'TypeError',
     lambda: jax.grad(lambda a: a * 2)(1)),
    ('grad_nonscalar', 'TypeError',
     lambda: jax.grad(lambda a: a * 2)(v)),
    ('grad_complex_out', 'TypeError',
     lambda: jax.grad(lambda a: a * 1j)(1.0)),
    ('grad_argnums_oob', 'TypeError',
     lambda: jax.grad(lambda a: a, argnums=2)(1.0)),
    ('grad_str_output', 'TypeError',
     lambda: jax.grad(lambda a: 'x')(1.0)),
    ('vmap_axis_size_mismatch', 'ValueError',
     lambda: jax.vmap(lambda a, b: a + b)(jnp.ones(2), jnp.ones(3))),
    ('vmap_bad_in_axes', 'ValueError',
     lambda: jax.vmap(lambda a: a, in_axes=3)(v)),
    ('vmap_scalar', 'ValueError',
     lambda: jax.vmap(lambda a: a)(1.0)),
    ('vmap_in_axes_tree', 'ValueError',
     lambda: jax.vmap(lambda a, b: a, in_axes=(0, 0, 0))(v, v)),
    ('random_bad_key', 'TypeError',
     lambda: jax.random.normal(3, (2,))),
    ('random_float_key', 'TypeError',
     lambda: jax.random.normal(jnp.ones(2), (2,))),
    ('random_shape_neg', 'MLIRError',
     lambda: jax.random.normal(key, (-1,))),
    ('random_uniform_bad_dtype', 'ValueError',
     lambda: jax.random.uniform(key, (2,), dtype=jnp.int32)),
    ('random_randint_float', 'TypeError',
     lambda: jax.random.randint(key, (2,), 0, 5, dtype=jnp.float32)),
    ('random_choice_too_many', 'ValueError',
     lambda: jax.random.choice(key, 3, (5,), replace=False)),
    ('random_split_num_neg', 'MLIRError',
     lambda: jax.random.split(key, -1)),
    ('tree_unflatten_count', 'ValueError',
     lambda: jax.tree_util.tree_unflatten(jax.tree_util.tree_structure([1, 2]), [1])),
    ('tree_map_structure', 'ValueError',
     lambda: jax.tree_util.tree_map(lambda a, b: a, [1, 2], [1])),
    ('tree_map_noncallable', 'TypeError',
     lambda: jax.tree_util.tree_map(3, [1])),
    ('tree_register_twice', 'ValueError',
     lambda: [jax.tree_util.register_pytree_node(dict, lambda d: ((), None), lambda a, c: {})]),
    ('scan_carry_mismatch', 'OK',
     lambda: lax.scan(lambda c, a: (c + 1.0, a), 0, v)),
    ('cond_branch_mismatch', 'TypeError',
     lambda: lax.cond(True, lambda: 1.0, lambda: v)),
    ('while_body_type', 'OK',
     lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0)),
    ('switch_empty', 'ValueError',
     lambda: lax.switch(0, [])),
    ('linalg_inv_nonsquare', 'ValueError',
     lambda: jnp.linalg.inv(x)),
    ('linalg_solve_shapes', 'ValueError',
     lambda: jnp.linalg.solve(jnp.eye(3), jnp.ones(4))),
    ('einsum_bad', 'ValueError',
     lambda: jnp.einsum('ij,jk->ik', x, x)),
    ('einsum_bad_subscript', 'ValueError',
     lambda: jnp.einsum('i+j', x)),
    ('where_one_arg_jit', 'TypeError',
     lambda: jax.jit(lambda a: jnp.where(a))(v)),
    ('nonzero_jit', 'TypeError',
     lambda: jax.jit(lambda a: jnp.nonzero(a))(v)),
    ('setitem', 'TypeError',
     lambda: x.__setitem__(0, 1)),
    ('float_of_array', 'TypeError',
     lambda: float(x)),
    ('bool_of_array', 'ValueError',
     lambda: bool(x)),
    ('iter_scalar', 'TypeError',
     lambda: iter(jnp.float32(1))),
    ('len_scalar', 'TypeError',
     lambda: len(jnp.float32(1))),
    ('at_bad', 'AttributeError',
     lambda: x.at[0].foo(1)),
    ('one_hot_float', 'TypeError',
     lambda: jax.nn.one_hot(v, 2.5)),
    ('device_put_bad', 'ValueError',
     lambda: jax.device_put(v, 'cpu:7')),
    ('pad_bad_mode', 'NotImplementedError',
     lambda: jnp.pad(v, 1, mode='foo')),
    ('split_uneven', 'ValueError',
     lambda: jnp.split(v, 2)),
    ('take_bad_mode', 'ValueError',
     lambda: jnp.take(v, 0, mode='foo')),
    ('full_bad_fill', 'TypeError',
     lambda: jnp.full((2,), 'a')),
    ('clip_str', 'TypeError',
     lambda: jnp.clip(v, 'a', 2)),
    ('unique_jit', 'TypeError',
     lambda: jax.jit(lambda a: jnp.unique(a))(v)),
    # common functions with a wrong axis, dtype, shape or option
    ('mean_axis', 'IndexError',
     lambda: jnp.mean(x, axis=2)),
    ('max_axis', 'ValueError',
     lambda: jnp.max(x, axis=-3)),
    ('argmax_axis', 'IndexError',
     lambda: jnp.argmax(x, axis=4)),
    ('cumsum_axis', 'ValueError',
     lambda: jnp.cumsum(x, axis=2)),
    ('std_axis', 'IndexError',
     lambda: jnp.std(x, axis=(0, 5))),
    ('any_axis', 'ValueError',
     lambda: jnp.any(x, axis=3)),
    ('prod_axis_float', 'TypeError',
     lambda: jnp.prod(x, axis=1.0)),
    ('sum_axis_dup', 'ValueError',
     lambda: jnp.sum(x, axis=(0, 0))),
    ('sort_axis', 'ValueError',
     lambda: jnp.sort(x, axis=2)),
    ('argsort_axis', 'ValueError',
     lambda: jnp.argsort(x, axis=2)),
    ('take_axis', 'ValueError',
     lambda: jnp.take(x, 0, axis=2)),
    ('concatenate_axis', 'ValueError',
     lambda: jnp.concatenate([x, x], axis=2)),
    ('expand_dims_axis', 'ValueError',
     lambda: jnp.expand_dims(x, 4)),
    ('squeeze_nonunit', 'ValueError',
     lambda: jnp.squeeze(x, axis=0)),
    ('moveaxis_axis', 'ValueError',
     lambda: jnp.moveaxis(x, 0, 3)),
    ('flip_axis', 'ValueError',
     lambda: jnp.flip(x, axis=2)),
    ('roll_axis', 'ValueError',
     lambda: jnp.roll(x, 1, axis=2)),
    ('swapaxes_axis', 'IndexError',
     lambda: jnp.swapaxes(x, 0, 2)),
    ('stack_axis', 'ValueError',
     lambda: jnp.stack([v, v], axis=3)),
    ('tensordot_axes', 'TypeError',
     lambda: jnp.tensordot(x, x, axes=([1], [1, 0]))),
    ('dot_shapes', 'TypeError',
     lambda: jnp.dot(x, x)),
    ('where_shapes', 'ValueError',
     lambda: jnp.where(jnp.ones(4) > 0, x, 0)),
    ('split_axis', 'IndexError',
     lambda: jnp.split(x, 2, axis=2)),
    ('det_nonsquare', 'ValueError',
     lambda: jnp.linalg.det(x)),
    ('lax_mul_dtypes', 'TypeError',
     lambda: lax.mul(v, v.astype(jnp.int32))),
    ('lax_max_dtypes', 'TypeError',
     lambda: lax.max(v, v.astype(jnp.int32))),
    ('lax_select_dtypes', 'TypeError',
     lambda: lax.select(v > 0, v, v.astype(jnp.int32))),
    ('lax_concat_dtypes', 'TypeError',
     lambda: lax.concatenate([v, v.astype(jnp.int32)], 0)),
    ('lax_dot_general_shapes', 'TypeError',
     lambda: lax.dot_general(x, x, (((1,), (1,)), ((0,), ())))),
    ('lax_sub_shapes', 'TypeError',
     lambda: lax.sub(x, v)),
    ('lax_pow_int', 'TypeError',
     lambda: lax.pow(v.astype(jnp.int32), v.astype(jnp.int32))),
    ('lax_div_dtypes', 'TypeError',
     lambda: lax.div(v, v.astype(jnp.int32))),
    ('jit_static_argnums_str', 'TypeError',
     lambda: jax.jit(lambda a: a, static_argnums="a")),
    ('jit_static_argnums_float', 'TypeError',
     lambda: jax.jit(lambda a: a, static_argnums=1.5)),
    ('jit_static_argnums_neg', 'ValueError',
     lambda: jax.jit(lambda a: a, static_argnums=-3)(1.0)),
    ('jit_static_argnames_bad', 'ValueError',
     lambda: jax.jit(lambda a: a, static_argnames="b")(1.0)),
    ('jit_donate_static', 'ValueError',
     lambda: jax.jit(lambda a: a, static_argnums=0, donate_argnums=0)),
    ('vmap_in_axes_float', 'TypeError',
     lambda: jax.vmap(lambda a: a, in_axes=1.5)(x)),
    ('vmap_in_axes_str', 'TypeError',
     lambda: jax.vmap(lambda a: a, in_axes="a")(x)),
    ('vmap_in_axes_list', 'OK',
     lambda: jax.vmap(lambda a, b: a, in_axes=[0, 0])(x, x)),
    ('vmap_out_axes_bad', 'ValueError',
     lambda: jax.vmap(lambda a: a, out_axes=3)(x)),
    ('vmap_noncallable', 'TypeError',
     lambda: jax.vmap(3)),
    ('vmap_no_batched', 'ValueError',
     lambda: jax.vmap(lambda a: a, in_axes=None)(x)),
    ('value_and_grad_nonscalar', 'TypeError',
     lambda: jax.value_and_grad(lambda a: a)(v)),
    ('grad_noncallable', 'TypeError',
     lambda: jax.grad(3)),
    ('jacfwd_int', 'TypeError',
     lambda: jax.jacfwd(lambda a: a)(1)),
    ('grad_argnums_str', 'TypeError',
     lambda: jax.grad(lambda a: a, argnums="a")(1.0)),
    ('tree_map_dict_keys', 'ValueError',
     lambda: jax.tree_util.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})),
    ('tree_map_types', 'ValueError',
     lambda: jax.tree_util.tree_map(lambda a, b: a, [1], (1,))),
    ('scan_length_mismatch', 'ValueError',
     lambda: lax.scan(lambda c, a: (c, a), 0.0, (v, jnp.ones(4)))),
    ('scan_no_length', 'ValueError',
     lambda: lax.scan(lambda c, a: (c, a), 0.0, None)),
    ('fori_body_type', 'OK',
     lambda: lax.fori_loop(0, 3, lambda i, c: c + 1.0, 0)),
    ('cond_pred_shape', 'TypeError',
     lambda: lax.cond(v > 0, lambda: 1.0, lambda: 2.0)),
    ('while_cond_nonbool', 'TypeError',
     lambda: lax.while_loop(lambda c: c, lambda c: c - 1.0, 3.0)),
    ('switch_index_float', 'TypeError',
     lambda: lax.switch(1.5, [lambda: 1.0, lambda: 2.0])),
    ('take_along_axis_shape', 'ValueError',
     lambda: jnp.take_along_axis(x, jnp.zeros((3,), jnp.int32), axis=1)),
    ('reshape_order', 'ValueError',
     lambda: jnp.reshape(x, (3, 2), order="Z")),
    ('clip_both_none', 'OK',
     lambda: jnp.clip(x)),
    ('linspace_neg', 'ValueError',
     lambda: jnp.linspace(0, 1, -1)),]

def sweep_outcome(name, expected):
    """'same' or 'better' for one probe, as the issue's table counts them (a probe that
    raised another class than JAX's fails test_sweep_matches_jax_class instead)."""
    return "better" if expected == "MLIRError" else "same"


@pytest.mark.parametrize("name, expected, mistake", SWEEP, ids=[r[0] for r in SWEEP])
def test_sweep_matches_jax_class(name, expected, mistake):
    if expected == "OK":
        result = mistake()
        if hasattr(result, "block_until_ready"):
            result.block_until_ready()
        return
    with pytest.raises(Exception) as info:
        mistake()
    module = type(info.value).__module__
    assert module == "builtins" or module.startswith("pyjax"), type(info.value)
    if expected == "MLIRError":   # better than JAX: a builtin error, before compiling
        assert isinstance(info.value, (TypeError, ValueError)), (name, info.value)
    else:   # code that catches JAX's class catches pyjax's error
        assert isinstance(info.value, getattr(builtins, expected)), (name, info.value)


# --- Python ints out of range where values become arrays (JAX: OverflowError) ----------

@pytest.mark.parametrize("make", [
    lambda: jnp.array([2**31]),
    lambda: jnp.array([1, 2**40]),
    lambda: jnp.asarray([2**32 + 1, 5]),
    lambda: jnp.array((2**31, 1)),
    lambda: jnp.array([-2**31 - 1]),
    lambda: jnp.array([[1], [2**31]]),
    lambda: jnp.asarray([[1, 2], [3, 2**31]]),
    lambda: jnp.array([np.int64(2**40)]),
    lambda: jnp.array([True, 2**33]),
    lambda: jnp.array([2**63]),
    lambda: jnp.array([2**64]),
    lambda: jnp.array([2**32], dtype=jnp.uint32),
    lambda: jnp.array([-1], dtype=jnp.uint8),
    lambda: jnp.array([300], dtype=jnp.int8),
], ids=lambda f: "")
def test_out_of_range_ints_in_lists_overflow(make):
    with pytest.raises(OverflowError, match="out of bounds|too large"):
        make()


def test_in_range_ints_in_lists_convert():
    assert jnp.array([2**31], dtype=jnp.uint32).tolist() == [2147483648]
    assert jnp.array([2**31 - 1, -2**31]).tolist() == [2147483647, -2147483648]
    assert jnp.array([2**40, 1.0]).dtype == jnp.float32   # floats: no int range


# --- values that are not arrays --------------------------------------------------------

def test_none_is_a_value_error():
    for make in (lambda: jnp.array(None), lambda: jnp.array([1, None]),
                 lambda: jnp.asarray(None)):
        with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
            make()


def test_object_numpy_array_is_a_type_error():
    for obj in (np.array([1, 2], dtype=object), np.array([1.5, 2], dtype=object)):
        with pytest.raises(TypeError, match="dtype object"):
            jnp.array(obj)


@pytest.mark.parametrize("value, dtype_text", [
    (np.array([1, 2], dtype=object), "dtype object"),
    (np.array(["a"]), "dtype <U1"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "dtype datetime64"),
])
def test_jit_of_unsupported_numpy_dtype_names_the_argument(value, dtype_text):
    f = jax.jit(lambda a: a)
    with pytest.raises(TypeError, match=f"path a: a NumPy array of {dtype_text}"):
        f(value)


def test_jit_invalid_argument_path_inside_pytrees_and_keywords():
    bad = np.array([1], dtype=object)
    # JAX 0.10.2 names the path by the parameter: "at path d['a'][1]"
    with pytest.raises(TypeError, match=r"path d\['a'\]\[1\]"):
        jax.jit(lambda d: d["a"][1])({"a": [1, bad]})
    with pytest.raises(TypeError, match="path y:"):
        jax.jit(lambda a, y: a)(1, y=bad)
    with pytest.raises(TypeError, match="path a: 'abc'"):
        jax.jit(lambda a: a)("abc")


def test_datetime_scalar_is_not_a_jax_value():
    with pytest.raises(TypeError):
        jax.jit(lambda a: a)(datetime.date(2020, 1, 1))


# --- pytrees ---------------------------------------------------------------------------

class _NonTupleFlatten:
    def __init__(self, a):
        self.a = a


class _ListFlatten:
    def __init__(self, a):
        self.a = a


jax.tree_util.register_pytree_node(_NonTupleFlatten, lambda p: 1,
                                   lambda aux, kids: _NonTupleFlatten(*kids))
jax.tree_util.register_pytree_node(_ListFlatten, lambda p: [p.a],
                                   lambda aux, kids: _ListFlatten(*kids))


@pytest.mark.parametrize("cls", [_NonTupleFlatten, _ListFlatten])
def test_custom_flatten_returning_no_tuple_is_a_value_error(cls):
    pattern = f"should return a \\(children, aux_data\\) tuple.*{cls.__name__}"
    with pytest.raises(ValueError, match=pattern):
        jax.tree_util.tree_leaves(cls(1))
    with pytest.raises(ValueError, match=pattern):
        jax.jit(lambda t: 1)([cls(1)])


@pytest.mark.parametrize("tree", [{1: 1, "a": 2}, {None: 1, "a": 2}, {None: 1, 1: 2},
                                  [{"x": {2: 0, "b": 1}}]])
def test_dict_keys_that_do_not_sort_are_a_value_error(tree):
    with pytest.raises(ValueError, match="Comparator raised exception while sorting pytree "
                                         "dictionary keys"):
        jax.tree_util.tree_leaves(tree)
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        jax.jit(lambda t: t)(tree)


def test_dict_keys_of_one_type_or_a_lone_none_key_are_fine():
    assert jax.tree_util.tree_leaves({None: 1}) == [1]          # as JAX: nothing to compare
    assert jax.tree_util.tree_leaves({2: "b", 1: "a"}) == ["a", "b"]


class _EqRaises:
    def __hash__(self):
        return 1

    def __eq__(self, other):
        raise RuntimeError("boom eq")


def test_static_argument_whose_eq_raises_is_a_value_error_with_context():
    g = jax.jit(lambda a, s: a, static_argnums=1)
    g(1, _EqRaises())
    with pytest.raises(ValueError, match="static arguments should be comparable using "
                                         "__eq__.*RuntimeError: boom eq"):
        g(1, _EqRaises())


# --- the table the issue asks for ------------------------------------------------------

def test_sweep_table_counts():
    """The 'exception classes' row of the issue's table (category | cases | same |
    better | worse), from this module's sweep."""
    counts = {"same": 0, "better": 0, "worse": 0}
    for name, expected, _ in SWEEP:
        counts[sweep_outcome(name, expected)] += 1
    assert sum(counts.values()) == len(SWEEP) == 150
    assert counts == {"same": 146, "better": 4, "worse": 0}
