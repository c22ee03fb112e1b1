"""Bad input to lax's control flow (scan, cond, switch, while_loop, fori_loop, map,
associative_scan): mismatched carries, branches and lengths raise a named exception whose
message names the problem (see harness.assert_named_error)."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import assert_named_error, bad_input_case as case
from pyjax import lax

CASES = [
    case("scan_carry_shape", TypeError, "carry input and carry output must have equal types",
         lambda: lax.scan(lambda c, a: (jnp.ones(2), a), 0.0, jnp.ones(3))),
    case("scan_carry_dtype", TypeError, "equal types",
         lambda: lax.scan(lambda c, a: (c.astype(jnp.int32), None), 0.0, jnp.ones(3))),
    case("scan_carry_tree", TypeError, "same pytree structure",
         lambda: lax.scan(lambda c, a: ((c, c), a), 0.0, jnp.ones(3))),
    case("scan_lengths", ValueError, "different leading axis sizes",
         lambda: lax.scan(lambda c, a: (c, a), 0.0, (jnp.ones(3), jnp.ones(4)))),
    case("scan_length_disagrees", ValueError, "disagrees",
         lambda: lax.scan(lambda c, a: (c, a), 0.0, jnp.ones(3), length=5)),
    case("scan_float_length", TypeError, "`length` argument to `scan` expects",
         lambda: lax.scan(lambda c, a: (c, a), 0.0, None, length=2.5)),
    case("scan_negative_length", ValueError, "non-negative",
         lambda: lax.scan(lambda c, a: (c, a), 0.0, None, length=-1)),
    case("scan_scalar_xs", ValueError, "no leading axis",
         lambda: lax.scan(lambda c, a: (c, a), 0.0, 1.0)),
    case("scan_body_not_pair", TypeError, "must be a pair",
         lambda: lax.scan(lambda c, a: c, 0.0, jnp.ones(3))),
    case("scan_returns_string", TypeError, "not a valid JAX type",
         lambda: lax.scan(lambda c, a: (c, "s"), 0.0, jnp.ones(3))),
    case("cond_branch_types", TypeError, "equal output types",
         lambda: lax.cond(True, lambda: 1.0, lambda: 1)),
    case("cond_branch_shapes", TypeError, "equal output types",
         lambda: lax.cond(True, lambda: jnp.ones(2), lambda: jnp.ones(3))),
    case("cond_branch_trees", TypeError, "same pytree structure",
         lambda: lax.cond(True, lambda: (1.0, 1.0), lambda: 1.0)),
    case("cond_array_predicate", TypeError, "Pred must be a scalar",
         lambda: lax.cond(jnp.array([True, False]), lambda: 1.0, lambda: 2.0)),
    case("cond_string_predicate", TypeError, "Pred must be a scalar",
         lambda: lax.cond("a", lambda: 1.0, lambda: 2.0)),
    case("cond_not_callable", TypeError, "should be callable", lambda: lax.cond(True, 1.0, 2.0)),
    case("switch_branch_types", TypeError, "equal output types",
         lambda: lax.switch(0, [lambda: 1.0, lambda: jnp.ones(2)])),
    case("switch_no_branches", ValueError, "Empty branch sequence", lambda: lax.switch(0, [])),
    case("switch_float_index", TypeError, "must be an integer",
         lambda: lax.switch(0.5, [lambda: 1.0, lambda: 2.0])),
    case("while_carry_shape", TypeError, "equal types",
         lambda: lax.while_loop(lambda c: c.sum() < 3, lambda c: jnp.ones(2), 0.0)),
    case("while_carry_tree", TypeError, "same pytree structure",
         lambda: lax.while_loop(lambda c: c < 3, lambda c: (c, c), 0)),
    case("while_cond_not_scalar", TypeError, "boolean scalar",
         lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1, jnp.zeros(2))),
    case("while_cond_float", TypeError, "boolean scalar",
         lambda: lax.while_loop(lambda c: c, lambda c: c + 1, 0.0)),
    case("fori_mixed_bounds", TypeError, "must have equal types",
         lambda: lax.fori_loop(0.0, 3, lambda i, c: c + i, 0.0)),
    case("fori_traced_float_bound", TypeError, "must have equal types",
         lambda: jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + 1, 0))(3.0)),
    case("fori_string_bound", TypeError, "not a valid JAX type",
         lambda: lax.fori_loop(0, "a", lambda i, c: c, 0.0)),
    case("map_scalar", ValueError, "no leading axis", lambda: lax.map(lambda a: a, 1.0)),
    case("map_negative_batch_size", TypeError, "batch_size", lambda: lax.map(
        lambda a: a, jnp.ones(4), batch_size=-1)),
    case("associative_scan_axis", ValueError, "out of bounds",
         lambda: lax.associative_scan(jnp.add, jnp.ones(3), axis=4)),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)
